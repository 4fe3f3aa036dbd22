"""The truth test on real PyTorch: a traced leaf shows the value each run used and the .grad
it left (tests/test_trace_truth.py holds the checks and the gradviz-engine programs)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

import gradviz
from tests.test_trace_truth import Record, leaf_truth


def manual_sgd(rec: Record) -> None:
    torch.manual_seed(0)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    weights = torch.randn(3, 1, requires_grad=True)
    bias = torch.zeros(1, requires_grad=True)
    for _ in range(3):
        loss = ((x @ weights + bias - y) ** 2).mean()
        rec.call({"weights": weights, "bias": bias}, loss)
        loss.backward()
        rec.take(rec.after, {"weights": weights.grad, "bias": bias.grad})
        with torch.no_grad():
            weights -= 0.1 * weights.grad
            bias -= 0.1 * bias.grad
        weights.grad = None
        bias.grad = None


def optimizer_step(rec: Record) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
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


def adam_step(rec: Record) -> None:
    w = torch.tensor([0.5, 1.5], requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = (w * 2).pow(2).sum()
        rec.call({"w": w}, loss)
        loss.backward()
        rec.take(rec.after, {"w": w.grad})
        opt.step()


PROGRAMS = {"manual_sgd": manual_sgd, "optimizer_step": optimizer_step, "adam_step": adam_step}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_leaves_show_the_value_each_run_used_on_torch(name: str) -> None:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all", torch=True) as tr:
        PROGRAMS[name](rec)
    leaf_truth(tr, rec)


def test_a_parameter_keeps_its_module_path_across_init_and_updates() -> None:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all", torch=True) as tr:
        optimizer_step(rec)
    names = {t.name for t in tr.tensors.values() if t.is_leaf and t.requires_grad
             and t.is_param}
    assert names == {"0.weight", "0.bias", "2.weight", "2.bias"}, names


def test_a_write_inside_the_graph_shows_its_version_on_torch() -> None:
    with gradviz.trace(torch=True) as tr:
        a = torch.ones(2, requires_grad=True)
        b = a * 2
        b.add_(1)
        b.sum().backward()
    written = [t for t in tr.tensors.values() if t.identity is not None]
    assert [t.name for t in written] == ["b (v1)"]
    assert written[0].version == b._version


def test_a_parameter_is_named_by_its_module_path_wherever_first_seen() -> None:
    """Not ``tensor`` (the argument of the init helper that first touched it), not ``weight``
    (of a Linear called on its own first): the outermost module's path."""

    def zero(tensor: torch.Tensor) -> None:
        nn.init.zeros_(tensor)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Linear(3, 4)
            self.head = nn.Linear(4, 1)
            self.pos = nn.Parameter(torch.empty(4))
            zero(self.pos)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(torch.tanh(self.body(x) + self.pos))

    with gradviz.trace(torch=True, keep_runs="all") as tr:
        net = Net()
        net.head(torch.randn(2, 4)).sum().backward()
        net(torch.randn(5, 3)).sum().backward()
    names = {t.name for t in tr.tensors.values() if t.is_param}
    assert names == {"body.weight", "body.bias", "head.weight", "head.bias", "pos"}, names
