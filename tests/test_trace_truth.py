"""What a trace shows of a leaf is the program's state at that moment (NOTE [versions]).

Each program below records, itself, the value of every parameter just before each backward
call and its ``.grad`` just after; the trace must hold exactly those numbers for the leaf each
run differentiated and for the leaf each forward op read, whatever updated the parameters in
between (a manual SGD step, an optimizer, clipping). The torch twin is
tests/parity/test_trace_truth_torch.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz import nn
from gradviz.trace.io import load_trace


class Record:
    """What the program itself saw: per backward call, each named leaf's value before and
    its ``.grad`` after; its ``.grad`` before (absent: None) and the tensor it called
    backward on (``made["loss"]``), for the drawings' checks (tests/test_trace_truth_drawn.py)."""

    def __init__(self) -> None:
        self.before: list[dict[str, np.ndarray]] = []
        self.after: list[dict[str, np.ndarray]] = []
        self.grad_before: list[dict[str, np.ndarray]] = []
        self.made: list[dict[str, np.ndarray]] = []
        self.made_grad: list[dict[str, np.ndarray]] = []

    def take(self, into: list[dict[str, np.ndarray]], tensors: dict[str, Any]) -> None:
        into.append({k: np.array(v.detach().numpy(), copy=True) for k, v in tensors.items()
                     if v is not None})

    def call(self, leaves: dict[str, Any], loss: Any, **made: Any) -> None:
        """Just before ``loss.backward()``: the leaves' values and ``.grad``, the loss and the
        other tensors ``made`` (by the op named so); a tensor hook on each records the
        gradient the call gives it into ``made_grad``."""
        self.take(self.before, leaves)
        self.take(self.grad_before, {k: v.grad for k, v in leaves.items()})
        made = {"loss": loss, **made}
        self.take(self.made, made)
        self.made_grad.append({})
        for name, t in made.items():
            t.register_hook(functools.partial(self._grad_hook, name))

    def _grad_hook(self, name: str, grad: Any) -> None:
        # The latest call's: a hook registered for an earlier call on the same tensor (two
        # backward runs through one graph) fires again in the later one.
        self.made_grad[-1][name] = np.array(grad.detach().numpy(), copy=True)


def manual_sgd(rec: Record) -> None:
    gradviz.manual_seed(0)
    x, y = gradviz.randn(8, 3), gradviz.randn(8, 1)
    weights = gradviz.randn(3, 1, requires_grad=True)
    bias = gradviz.zeros(1, requires_grad=True)
    for _ in range(3):
        loss = ((x @ weights + bias - y) ** 2).mean()
        rec.call({"weights": weights, "bias": bias}, loss)
        loss.backward()
        rec.take(rec.after, {"weights": weights.grad, "bias": bias.grad})
        with gradviz.no_grad():
            weights -= 0.1 * weights.grad
            bias -= 0.1 * bias.grad
        weights.grad = None
        bias.grad = None


def optimizer_step(rec: Record) -> None:
    gradviz.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = gradviz.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    x, y = gradviz.randn(8, 3), gradviz.randn(8, 1)
    params = dict(model.named_parameters())
    hidden: dict[str, Any] = {}
    model[1].register_forward_hook(lambda mod, args, out: hidden.update(tanh=out))
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        rec.call(params, loss, tanh=hidden["tanh"])
        loss.backward()
        rec.take(rec.after, {k: p.grad for k, p in params.items()})
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()


def accumulate_twice(rec: Record) -> None:
    """Two backward runs into the same .grad (retain_graph), then an update under no_grad."""
    w = gradviz.tensor([1.0, -2.0, 3.0], requires_grad=True)
    for _ in range(2):
        out = (w * w).sum()
        rec.call({"w": w}, out)
        out.backward(retain_graph=True)
        rec.take(rec.after, {"w": w.grad})
        rec.call({"w": w}, out)
        out.backward()
        rec.take(rec.after, {"w": w.grad})
        with gradviz.no_grad():
            w.mul_(0.5)


class Twice(gradviz.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (x,) = ctx.saved_tensors
        return grad * 2 + x * 0


def custom_function(rec: Record) -> None:
    w = gradviz.tensor([0.5, 1.5], requires_grad=True)
    opt = gradviz.optim.Adam([w], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = Twice.apply(w).pow(2).sum()
        rec.call({"w": w}, loss)
        loss.backward()
        rec.take(rec.after, {"w": w.grad})
        opt.step()


PROGRAMS: dict[str, Callable[[Record], None]] = {
    "manual_sgd": manual_sgd, "optimizer_step": optimizer_step,
    "accumulate_twice": accumulate_twice, "custom_function": custom_function}


def leaf_truth(tr: Any, rec: Record) -> None:
    """Every run's leaves (its AccumulateGrad variables) hold the value the program had
    before the call and the .grad it had after; every forward op of the run's iteration
    read the same value."""
    assert len(tr.runs) == len(rec.before)
    for k, run in enumerate(tr.runs):
        leaves = {tr.tensors[n.variable].name: tr.tensors[n.variable]
                  for n in (tr.nodes[i] for i in run.nodes)
                  if n.kind == "accumulate_grad" and n.variable is not None}
        assert set(leaves) == set(rec.before[k]), (k, sorted(leaves))
        for name, t in leaves.items():
            np.testing.assert_allclose(t.value["values"], rec.before[k][name], rtol=0,
                                       atol=0, err_msg=f"run {k + 1}: {name}")
        grads = {}
        for s in run.steps:
            if s.kind == "leaf_grad":
                grads[tr.tensors[s.tensor].name] = s.after["values"]
        for name, g in rec.after[k].items():
            np.testing.assert_allclose(grads[name], g, rtol=0, atol=0,
                                       err_msg=f"run {k + 1}: {name}.grad")
        # The forward ops that built this run read the leaves it differentiated.
        segment = int(run.id[3:])  # these programs run one backward at a time
        for op in tr.ops:
            if op.segment != segment:
                continue
            for i in op.inputs:
                t = tr.tensors.get(i) if isinstance(i, str) else None
                if t is not None and t.name in leaves and op.node is not None:
                    assert i == leaves[t.name].id, (k, op.name, t.name)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_leaves_show_the_value_each_run_used(name: str) -> None:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all") as tr:
        PROGRAMS[name](rec)
    leaf_truth(tr, rec)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_truth_survives_the_file(name: str, tmp_path: Any) -> None:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all") as tr:
        PROGRAMS[name](rec)
    tr.save(tmp_path / "trace.json")
    leaf_truth(load_trace(tmp_path / "trace.json"), rec)


def test_a_parameter_keeps_one_name_across_updates() -> None:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all") as tr:
        manual_sgd(rec)
    names = {t.name for t in tr.tensors.values() if t.is_leaf and t.requires_grad}
    assert {"weights", "bias"} <= names
    assert not any("(v" in n for n in names), names
    versions = [t for t in tr.tensors.values() if t.name == "weights"]
    first = versions[0]
    assert all(t.identity == first.id for t in versions[1:])
    assert [t.version for t in versions] == sorted(t.version for t in versions)


def test_a_write_inside_the_graph_shows_its_version() -> None:
    with gradviz.trace() as tr:
        a = gradviz.ones(2, requires_grad=True)
        b = a * 2
        b.add_(1)
        b.sum().backward()
    written = [t for t in tr.tensors.values() if t.identity is not None]
    assert [t.name for t in written] == ["b (v1)"]
    assert written[0].version == b._version
