"""``python -m recur.tune``: the same command as ``recur tune``."""

import sys

from .cli import main

sys.exit(main())
