"""``python -m duplexeval``: the command line."""

from .cli import main

raise SystemExit(main())
