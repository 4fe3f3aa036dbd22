"""The CNN-step benchmark workload runs on PyTorch and takes the same steps as on gradviz."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import gradviz as gv

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import workloads  # noqa: E402


def test_the_cnn_step_workload_runs_on_torch():
    import torch

    res = workloads.cnn_torch(1)
    assert set(res) == {"median", "min", "max"} and res["min"] > 0
    # Different initial weights (each library's generator), the same recipe: both fit the batch.
    for lib in (gv, torch):
        step = workloads._cnn_step(lib)
        losses = [float(step().item()) for _ in range(30)]
        assert np.isfinite(losses).all() and losses[-1] < losses[0] / 2, lib.__name__
