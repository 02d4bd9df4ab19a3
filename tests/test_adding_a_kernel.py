"""docs/adding-a-kernel.md stays true: its module registers a kernel the registry and the harness take, and its
test passes (the page's Python blocks, run as they stand)."""

import importlib
import re
import sys

import pytest

from support import REPOSITORY

from graph500 import harness, kernels

PAGE = REPOSITORY / "docs" / "adding-a-kernel.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


@pytest.fixture
def example_kernel(tmp_path, monkeypatch):
    """The page's module, written to a file and imported (the warm-up's workers import it by name); its kernel
    is taken out of the registry afterwards."""
    module, _ = python_blocks()
    (tmp_path / "bfs_queue_example.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("bfs_queue_example")
    kernels._REGISTRY[("bfs", "cpu")].pop("queue")
    sys.modules.pop("bfs_queue_example")


def test_the_page_has_a_module_and_a_test():
    assert len(python_blocks()) == 2


def test_the_example_kernel_is_registered_and_validates(example_kernel, monkeypatch):
    assert kernels.get("bfs", "cpu", "queue") is example_kernel.QueueBFS
    monkeypatch.chdir(REPOSITORY)
    _, test = python_blocks()
    exec(compile(test, str(PAGE), "exec"), {"QueueBFS": example_kernel.QueueBFS})


def test_the_harness_runs_the_example_kernel(example_kernel, capsys):
    config = harness.RunConfig(scale=10, bfs="queue", run_sssp=False, num_roots=4, progress=False, energy="off")
    assert harness.run(config) == 0
    assert "bfs_kernel:" in capsys.readouterr().out
