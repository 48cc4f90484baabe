"""`python -m core` runs the command line (see core/cli)."""

import sys

from core.cli import main

sys.exit(main())
