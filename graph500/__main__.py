"""`python -m graph500` runs the command-line interface."""

from graph500.cli import main

if __name__ == "__main__":  # not when a spawned process imports this module
    raise SystemExit(main())
