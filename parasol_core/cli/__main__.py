"""``python -m parasol_core.cli``: the `parasol-model` command without its script (the
tests run it so under ``mpiexec``)."""

import sys

from parasol_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
