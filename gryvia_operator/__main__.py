"""`python -m gryvia_operator`: the same as `gryvia-operator`."""

import sys

from gryvia_operator.main import main

sys.exit(main())
