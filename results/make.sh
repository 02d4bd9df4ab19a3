#!/bin/sh
# The published tables, plots and page of the run records in results/ (run from the repository's root; the
# plots need the plot extra: pip install -e '.[plot]').
set -e
python3 -m graph500 report results --plots results/plots --output results/README.md
python3 -m graph500 report results --format html --output results/index.html
