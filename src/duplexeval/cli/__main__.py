"""``python -m duplexeval.cli``: the command line."""

from . import main

raise SystemExit(main())
