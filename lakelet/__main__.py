"""``python -m lakelet ...``: the same CLI as the ``lakelet`` console script."""

from lakelet.cli import main

raise SystemExit(main())
