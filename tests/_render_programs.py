"""The programs the renderer tests draw (the seeds, a custom Function, a small MLP), and the
golden-file helper. Shared by tests/test_render_*.py."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import gradviz as torch
from gradviz.autograd.function import Function
from gradviz.examples.custom_function import MulConstant  # the custom Function of PyTorch's docs
from gradviz.trace.model import SourceLoc

GOLDEN = Path(__file__).parent / "golden"
UPDATE_ENV = "GRADVIZ_UPDATE_GOLDEN"


class Cube(Function):
    """A custom Function that saves its input (``ctx.saved_tensors[0]``)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x * x


def seed_pow():
    """``z = x ** 2 + y ** 3; z.backward(torch.ones_like(x))``, traced."""
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
        z = x ** 2 + y ** 3
        z.backward(torch.ones_like(x))
    return tr


def seed_sum():
    """``z = torch.sum(x + y)`` (not traced): the tensor, x and y."""
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.ones(5, 5, requires_grad=True)
    x.name, y.name = "x", "y"
    z = torch.sum(x + y)
    z.name = "z"
    return z, x, y


def custom_function():
    """``MulConstant.apply(a, 5)`` and ``Cube.apply(a)``, traced with a backward."""
    with torch.trace() as tr:
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        a.name = "a"  # else the tracer may name it after forward()'s parameter
        b = MulConstant.apply(a, 5)
        b.name = "b"
        c = Cube.apply(b)
        c.sum().backward()
    return tr


def mlp(layers: int = 2, width: int = 3):
    """A small MLP with tanh (``nn.Sequential`` of Linear/Tanh), one forward and backward."""
    from gradviz import nn

    torch.manual_seed(0)
    mods = []
    for i in range(layers):
        mods.append(nn.Linear(width, width if i < layers - 1 else 2))
        if i < layers - 1:
            mods.append(nn.Tanh())
    model = nn.Sequential(*mods)
    with torch.trace() as tr:
        x = torch.randn(4, width)
        loss = model(x).pow(2).mean()
        loss.backward()
    return tr


def loop_trace(steps: int):
    """``h = h * w + b`` ``steps`` times, then ``backward``: a ``2 * steps``-op trace whose
    ``w`` and ``b`` are shared by every step."""
    w = torch.full((2,), 0.5, requires_grad=True)
    b = torch.full((2,), 0.1, requires_grad=True)
    with torch.trace(values="none") as tr:
        h = torch.ones(2, requires_grad=True)
        for _ in range(steps):
            h = h * w + b
        h.sum().backward()
    return tr


def fixed_sources(tr):
    """Make a trace independent of where and when it was recorded, for golden files: fixed
    source lines (so editing this file changes nothing) and sequence numbers counted from 0
    (they come from a process-wide counter, so they depend on the tests run before)."""
    for i, op in enumerate(getattr(tr, "ops", ())):
        op.source = SourceLoc(file="/home/learner/seed.py", line=i + 1, code=f"step_{i}()")
    seqs = sorted({n.sequence_nr for n in tr.nodes.values() if n.kind != "accumulate_grad"})
    rank = {s: i for i, s in enumerate(seqs)}
    for n in tr.nodes.values():
        n.sequence_nr = rank.get(n.sequence_nr, n.sequence_nr)
    return tr


def assert_golden(name: str, text: str) -> None:
    """``text`` must equal ``tests/golden/<name>``. With ``GRADVIZ_UPDATE_GOLDEN=1`` the file is
    (re)written instead; a missing file is an error, never silently created."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), (f"golden file {path} is missing: run the tests with "
                           f"{UPDATE_ENV}=1 to create it, then review it")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), text.splitlines(keepends=True),
            fromfile=f"{path} (golden)", tofile="generated now", n=2))
        raise AssertionError(f"output differs from {path}; if the change is intended, "
                             f"regenerate with {UPDATE_ENV}=1 and review `git diff`:\n{diff}")
