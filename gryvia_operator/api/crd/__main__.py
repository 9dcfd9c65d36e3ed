"""`python -m gryvia_operator.api.crd`: the CRD generator (see `generate`)."""

from gryvia_operator.api.crd.generate import main

raise SystemExit(main())
