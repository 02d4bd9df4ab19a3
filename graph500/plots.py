"""Plots of run records for ``graph500 report`` (matplotlib, the ``plot`` extra).

Each plot is a `Figure`: a file name, a title and its PNG bytes, so that the
report can write it to ``--plots DIR`` or embed it in an HTML page.

* ``teps_distribution.png``: the TEPS of every search of every run (one box
  per run, labelled with its table row ``#N``), BFS and SSSP side by side.
* ``teps_vs_scale.png``: harmonic-mean TEPS, with harmonic standard deviation
  bars, against SCALE; one line per configuration (backend, device, ranks,
  kernels, edgefactor: `graph500.publish.Run.configuration`), through the
  newest run at each SCALE.
* ``frontier_run<N>.png``, for each run whose record has a ``bfs.trace``: per
  BFS level, the frontier size and the edges examined by every search, each
  point coloured by the level's direction (top-down, bottom-up, ...).

matplotlib is imported only when a plot is drawn, with the ``Agg`` backend (no
screen needed); without it, drawing raises a Graph500Error that says how to
install it.
"""

import collections
import dataclasses
import importlib.util
import io

from graph500 import pages
from graph500.errors import Graph500Error

MISSING_MESSAGE = "plots need matplotlib: pip install 'graph500[plot]'"
PASS_TITLES = {"bfs": "BFS", "sssp": "SSSP"}


@dataclasses.dataclass
class Figure:
    """One plot: where it goes, what it shows, and its PNG bytes."""

    filename: str
    title: str
    png: bytes


def available():
    """Whether matplotlib can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


def _pyplot():
    """matplotlib.pyplot on the Agg backend, or a Graph500Error when matplotlib is absent."""
    try:
        import matplotlib
    except ImportError:
        raise Graph500Error(MISSING_MESSAGE) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def _png(pyplot, figure):
    """The figure as PNG bytes; the figure is closed."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    pyplot.close(figure)
    return buffer.getvalue()


def _measured_passes(runs):
    """The passes (``bfs``, ``sssp``) that at least one run has."""
    return [kind for kind in PASS_TITLES if any(run.passes[kind] for run in runs)]


def _pass_axes(pyplot, runs, width):
    """A figure with one axis per measured pass, and the (axis, pass) pairs."""
    kinds = _measured_passes(runs)
    figure, axes = pyplot.subplots(1, len(kinds), figsize=(width * len(kinds), 4.5), squeeze=False)
    return figure, list(zip(axes[0], kinds))


def teps_distribution(pyplot, runs):
    """Per-search TEPS, one box per run, a panel per pass."""
    figure, panels = _pass_axes(pyplot, runs, max(5.0, 1.5 + 0.5 * len(runs)))
    for axis, kind in panels:
        measured = [run for run in runs if run.passes[kind]]
        positions = range(1, len(measured) + 1)
        axis.boxplot([run.passes[kind].search_teps for run in measured], positions=positions)
        axis.set_xticks(positions, [run.label for run in measured])
        axis.set_yscale("log")
        axis.set_xlabel("run (table row)")
        axis.set_ylabel("TEPS of one search")
        axis.set_title(f"{PASS_TITLES[kind]}: TEPS per search")
    return Figure("teps_distribution.png", "TEPS of each search, per run", _png(pyplot, figure))


def _series(runs, kind):
    """The runs of pass ``kind`` grouped by configuration, each group the newest run at each SCALE, by SCALE."""
    groups = collections.defaultdict(list)
    measured = [run for run in runs if run.passes[kind]]
    for run in pages.newest_by(measured, lambda run: run.configuration + (run.scale,)).values():
        groups[run.configuration].append(run)
    return {key: sorted(members, key=lambda run: run.scale) for key, members in sorted(groups.items())}


def _line_label(run, kind):
    ranks = f", {run.ranks} ranks" if run.ranks > 1 else ""
    return f"{run.backend} {run.device_model}{ranks}: {run.kernel(kind)}"


def teps_vs_scale(pyplot, runs):
    """Harmonic-mean TEPS against SCALE, a line per configuration, a panel per pass."""
    figure, panels = _pass_axes(pyplot, runs, 6.5)
    for axis, kind in panels:
        for members in _series(runs, kind).values():
            axis.errorbar([run.scale for run in members],
                          [run.passes[kind].harmonic_mean for run in members],
                          yerr=[run.passes[kind].harmonic_stddev for run in members],
                          marker="o", capsize=3, label=_line_label(members[0], kind))
        axis.set_yscale("log")
        axis.xaxis.get_major_locator().set_params(integer=True)
        axis.set_xlabel("SCALE")
        axis.set_ylabel("harmonic-mean TEPS")
        axis.set_title(f"{PASS_TITLES[kind]}: TEPS against SCALE")
        axis.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15))  # below: labels are long
    return Figure("teps_vs_scale.png", "Harmonic-mean TEPS against SCALE", _png(pyplot, figure))


def _level_points(trace, key, direction):
    """(level, value) of every traced level that ran in ``direction``."""
    return [(depth, level[key]) for levels in trace for depth, level in enumerate(levels)
            if level["direction"] == direction]


def frontier(pyplot, run):
    """Frontier size and edges examined per BFS level of every traced search of ``run``."""
    trace = run.passes["bfs"].trace
    directions = sorted({level["direction"] for levels in trace for level in levels})
    figure, axes = pyplot.subplots(1, 2, figsize=(12, 4.5))
    for axis, key, label in zip(axes, ("frontier", "edges"), ("frontier size (vertices)", "edges examined")):
        for levels in trace:
            axis.plot([level[key] for level in levels], color="0.75", linewidth=0.8, zorder=1)
        for number, direction in enumerate(directions):
            depths, values = zip(*_level_points(trace, key, direction))
            axis.scatter(depths, values, s=16, color=f"C{number % 10}", label=direction, zorder=2)
        axis.set_yscale("log")
        axis.set_xlabel("BFS level")
        axis.set_ylabel(label)
    axes[0].legend(title="direction")
    title = (f"Run {run.label}: BFS levels of {len(trace)} searches "
             f"({run.backend} {run.bfs_kernel}, SCALE {run.scale})")
    figure.suptitle(title)
    return Figure(f"frontier_run{run.number}.png", title, _png(pyplot, figure))


def figures(runs):
    """Every plot of ``runs`` (`graph500.publish.Run` objects), in the order listed above."""
    pyplot = _pyplot()
    traced = [run for run in runs if run.passes["bfs"].trace]
    return ([teps_distribution(pyplot, runs), teps_vs_scale(pyplot, runs)]
            + [frontier(pyplot, run) for run in traced])
