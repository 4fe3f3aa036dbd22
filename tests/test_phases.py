"""The forward graph is the forward pass: construction and updates are one box per phase
(NOTE [phases] in gradviz/trace/phases.py). The torch twin is tests/parity/test_phases_torch.py.
"""

from __future__ import annotations

import html
import re

import gradviz
from gradviz import nn
from gradviz.render.graphviz import draw_both, draw_forward, to_svg
from gradviz.trace.phases import CONSTRUCTION, split_phases


def manual_sgd() -> gradviz.trace:
    with gradviz.trace() as tr:
        x, y = gradviz.randn(8, 3), gradviz.randn(8, 1)
        weights = gradviz.randn(3, 1, requires_grad=True)
        for _ in range(3):
            loss = ((x @ weights - y) ** 2).mean()
            loss.backward()
            with gradviz.no_grad():
                weights -= 0.1 * weights.grad
            weights.grad = None
    return tr


def test_manual_sgd_draws_the_forward_pass_and_one_box_per_update() -> None:
    tr = manual_sgd()
    forward, phases = split_phases(tr)
    assert sorted(op.name for op in tr.ops if op.id in forward) == ["mean", "mm", "pow", "sub"]
    assert [p.title for p in phases] == [
        "after backward run 2: weights -= 0.1 * weights.grad: 2 ops",
        "after backward run 3: weights -= 0.1 * weights.grad: 2 ops"]
    svg = html.unescape(to_svg(draw_forward(tr, detail="saved")))
    assert "sub_" not in svg and "weights -= 0.1 * weights.grad: 2 ops" in svg
    # The next forward read the version of weights the update wrote, drawn as "weights".
    used = next(op for op in tr.ops if op.name == "mm").inputs[1]
    assert tr.tensors[used].name == "weights" and tr.tensors[used].op in phases[0].ops
    everything = to_svg(draw_forward(tr, detail="saved", all_ops=True))
    assert "sub_" in everything and "phase0" not in everything


def test_model_construction_is_one_box_and_no_init_op_is_drawn() -> None:
    with gradviz.trace() as tr:
        gradviz.manual_seed(0)
        w = gradviz.empty(4, 3)
        nn.init.kaiming_uniform_(w)
        w.requires_grad_()
        b = gradviz.zeros(4).uniform_(-1, 1).requires_grad_()
        x = gradviz.randn(2, 3)
        (x @ w.t() + b).sum().backward()
    forward, phases = split_phases(tr)
    drawn = {op.name for op in tr.ops if op.id in forward}
    # gradviz's factories and nn.init record no op; the in-place uniform_ does.
    assert drawn == {"t", "mm", "add", "sum"}, drawn
    assert [p.label for p in phases] == [CONSTRUCTION]
    assert [op.name for op in tr.ops if op.id in phases[0].ops] == ["uniform_"]
    svg = to_svg(draw_both(tr, detail="bare"))
    init = phases[0].ops[0]
    assert f'id="{init}"' not in svg and "model construction: 1 op" in svg


def test_an_optimizer_between_runs_leaves_the_forward_alone() -> None:
    gradviz.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = gradviz.optim.SGD(model.parameters(), lr=0.1)
    with gradviz.trace(keep_runs="all") as tr:
        x = gradviz.randn(5, 3)
        for _ in range(2):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    forward, phases = split_phases(tr)
    names = [op.name for op in tr.ops if op.id in forward]
    assert names.count("addmm") == 4 and "mul_" not in names
    assert all("clip_grad_norm_" in p.label for p in phases), [
        (p.label, [(op.name, str(op.source)) for op in tr.ops if op.id in p.ops])
        for p in phases]
    # Each run's graph reads the parameters as that run's forward had them.
    leaves = [{tr.nodes[n].variable for n in r.nodes if tr.nodes[n].variable} for r in tr.runs]
    assert leaves[0].isdisjoint(leaves[1])
    assert {tr.tensors[t].name for t in leaves[1]} == {"0.weight", "0.bias", "2.weight",
                                                        "2.bias"}


def test_an_op_returning_its_input_draws_no_cycle() -> None:
    with gradviz.trace() as tr:
        x = gradviz.ones(2, 3, requires_grad=True)
        y = nn.Dropout(p=0.0)(x * 2).contiguous()
        y.sum().backward()
    svg = html.unescape(to_svg(draw_forward(tr, detail="bare")))
    edges = re.findall(r'<g id="([^"]+)->([^"]+)" class="edge', svg)
    assert edges and all(a != b for a, b in edges)
    ids = {op.id for op in tr.ops}
    back = {(b, a) for a, b in edges}
    assert not [e for e in edges if e in back and e[0] in ids], edges
