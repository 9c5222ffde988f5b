"""``python -m duplexeval.cli``: the command line."""

from duplexeval.cli import main

if __name__ == "__main__":  # not when a spawned worker process imports it
    raise SystemExit(main())
