import sys

from piui.app import main

sys.exit(main())
