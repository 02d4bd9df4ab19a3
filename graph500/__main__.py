"""`python -m graph500` runs the command-line interface."""

from graph500.cli import main

raise SystemExit(main())
