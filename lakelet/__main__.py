"""``python -m lakelet ...``: the same CLI as the ``lakelet`` console script."""

from lakelet.commands.main import main

raise SystemExit(main())
