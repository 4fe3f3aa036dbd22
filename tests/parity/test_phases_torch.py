"""NOTE [phases] on real PyTorch: nn.init, the optimizer and clipping are boxes, not graph ops,
and an op that returns its input draws no cycle (tests/test_phases.py is the gradviz twin)."""

from __future__ import annotations

import html
import re

import torch
from torch import nn

import gradviz
from gradviz.render.graphviz import draw_forward, to_svg
from gradviz.trace.phases import CONSTRUCTION, split_phases


def test_construction_and_updates_are_phases_on_torch() -> None:
    with gradviz.trace(torch=True, keep_runs="all") as tr:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = torch.randn(6, 3), torch.randn(6, 1)
        for _ in range(2):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    forward, phases = split_phases(tr)
    names = {op.name for op in tr.ops if op.id in forward}
    assert not names & {"kaiming_uniform_", "uniform_", "empty", "add_", "mul_"}, names
    assert {"linear", "tanh", "mse_loss"} <= names
    assert phases[0].label == CONSTRUCTION
    assert any("opt.step()" in p.statements for p in phases[1:])
    svg = html.unescape(to_svg(draw_forward(tr, detail="bare")))
    init = {op.id for op in tr.ops if op.name == "kaiming_uniform_"}
    assert init and not any(f'id="{i}"' in svg for i in init)
    # The parameters the last forward read are named by module path, without a version.
    last = [op for op in tr.ops if op.id in forward and op.name == "linear"][-2:]
    read = {tr.tensors[i].name for op in last for i in op.inputs if isinstance(i, str)}
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= read, read


def test_an_op_returning_its_input_draws_no_cycle_on_torch() -> None:
    with gradviz.trace(torch=True) as tr:
        x = torch.ones(2, 3, requires_grad=True)
        y = nn.Dropout(p=0.0)(x * 2).contiguous()
        y.sum().backward()
    svg = html.unescape(to_svg(draw_forward(tr, detail="bare")))
    edges = re.findall(r'<g id="([^"]+)->([^"]+)" class="edge', svg)
    assert edges
    pairs = set(edges)
    assert not [(a, b) for a, b in pairs if (b, a) in pairs], sorted(pairs)


def test_batchnorm_counters_and_inplace_relu_on_torch() -> None:
    """BatchNorm's num_batches_tracked += 1 runs mid-forward but is no graph op: one box for
    the forward it ran in, not a box per layer. F.relu(inplace=True) is a graph op (a new
    version of its input, with ReluBackward0), not an input returned as it is."""
    with gradviz.trace(torch=True) as tr:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(inplace=True),
                              nn.Conv2d(2, 2, 3), nn.BatchNorm2d(2), nn.ReLU(inplace=True))
        model(torch.randn(2, 1, 8, 8)).sum().backward()
    forward, phases = split_phases(tr)
    assert [p.title for p in phases] == [f"model construction: {len(phases[0].ops)} ops",
                                         "during the forward, not differentiated: 2 ops"]
    relus = [op for op in tr.ops if op.name == "relu"]
    assert len(relus) == 2 and all(op.id in forward and op.inplace for op in relus)
    assert {tr.nodes[op.node].name for op in relus} == {"ReluBackward0"}
    assert all(tr.tensors[op.outputs[0]].identity == op.inputs[0] for op in relus)
