"""What the tests that run SimGrid itself share: the system Python that has Debian's
``python3-simgrid``, and whether it is there (``MISSING``: why not, or None)."""

from __future__ import annotations

import subprocess
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"


def _simgrid_missing() -> str | None:
    if not Path(SYSTEM_PYTHON).exists():
        return f"{SYSTEM_PYTHON} is absent"
    done = subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True, timeout=60)
    if done.returncode != 0:
        return ("python3-simgrid is not installed for the system python3 "
                "(apt-get install python3-simgrid; `make test` does it where apt-get works)")  # fmt: skip
    return None


MISSING = _simgrid_missing()
