"""Tutorial 13 ("Watch PyTorch's own engine") runs real PyTorch: it executes here, where torch is
installed, with the same checks every other notebook gets in tests/test_notebooks.py (no error,
its pictures and player shown, each exercise stub reported as not done), and its exercises'
reference answers pass their checks while the stubs fail them.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the notebook test helpers
import test_notebooks as nbt  # noqa: E402


@pytest.fixture(scope="module")
def solutions():
    sys.path.insert(0, str(nbt.TUTORIALS))
    try:
        yield importlib.import_module("solutions")
    finally:
        sys.path.remove(str(nbt.TUTORIALS))


@pytest.mark.parametrize("name", nbt.TORCH_NOTEBOOKS)
def test_torch_notebook_runs_clean_and_fast(name, tmp_path, record_property):
    nbt.check_notebook_run(name, tmp_path, record_property)


@pytest.mark.parametrize("key", sorted({k for n, k, _, _ in nbt._exercise_cells()
                                         if n in nbt.TORCH_NOTEBOOKS}))
def test_torch_exercise_answer_passes_and_stub_fails(key, solutions, capsys):
    nbt.check_exercise(key, solutions, capsys)


def test_the_torch_notebook_has_exercises():
    keys = {k for n, k, _, _ in nbt._exercise_cells() if n in nbt.TORCH_NOTEBOOKS}
    assert keys == {"ex13_1", "ex13_2"}
