"""`python -m engine.cli`: the same as `ctxi`."""

import sys

from engine.cli.main import main

sys.exit(main())
