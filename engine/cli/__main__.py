"""`python -m engine.cli`: the same as `ctxi`."""

import sys

from engine.cli.ctxi import main

sys.exit(main())
