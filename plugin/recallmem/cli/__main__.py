"""``python -m recallmem.cli``."""

import sys

from recallmem.cli import main

sys.exit(main())
