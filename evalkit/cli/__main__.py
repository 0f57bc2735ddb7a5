"""`python -m evalkit.cli`."""

import sys

from evalkit.cli import main

sys.exit(main())
