"""``python -m portagather check``."""

import sys

from ._cli import main

sys.exit(main())
