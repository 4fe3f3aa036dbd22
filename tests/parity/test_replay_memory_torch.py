"""The memory curve of a run traced on real PyTorch (NOTE [memory] in gradviz/trace/replay.py)
is what the program holds: tests/test_replay.py's check, on torch's own nodes, saved tensors
and hooks."""

from __future__ import annotations

import torch
from _parity import sibling

_replay = sibling("test_replay")


def test_the_memory_curve_is_what_torch_holds() -> None:
    torch.manual_seed(0)
    x = torch.randn(50, 20, requires_grad=True)
    w = torch.randn(20, 30, requires_grad=True)
    h = (x @ w).tanh()
    _replay.check_memory_curve(torch, (h.exp() * h.sigmoid()).sum())
    x = torch.randn(40, 10, requires_grad=True)
    _replay.check_memory_curve(torch, x.exp().tanh().sigmoid().sum(), chain=True)


def test_a_torch_module_step_holds_its_activations_until_each_node_frees_them() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4),
                                torch.nn.LogSoftmax(dim=1))
    loss = model(torch.randn(32, 8)).sum()
    _replay.check_memory_curve(torch, loss)
