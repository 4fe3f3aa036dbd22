"""Step 0 of NOTE [collapse]: unrolled loops fold to ``N × [...]`` next to one drawn block."""

from __future__ import annotations

import math
import re
import runpy
import sys
from pathlib import Path
from unittest import mock

import gradviz as torch
import gradviz.nn as nn
from gradviz.render import collapse
from gradviz.render.collapse import Vertex, plan
from gradviz.render.graphviz import draw_backward, draw_forward, to_svg

CELL = ("AddmmBackward0", "SplitBackward0", "SigmoidBackward0", "TanhBackward0", "MulBackward0")


def unrolled(steps: int, listed_by_kind: bool = True) -> tuple[list[Vertex], list[tuple]]:
    """A recurrent cell unrolled ``steps`` times: addmm -> split -> (sigmoid, tanh) -> mul,
    whose output feeds the next step's addmm and split (a DAG, not a chain), plus one weight
    used by every step. Listed by kind (all addmms, then all splits ...) as a breadth-first
    walk interleaves the steps; ``order`` gives creation order."""
    vs: dict[str, Vertex] = {}
    es: list[tuple[str, str]] = []
    for t in range(steps):
        for k, kind in enumerate(CELL):
            vs[f"s{t}.{k}"] = Vertex(f"s{t}.{k}", kind, order=t * len(CELL) + k)
        es += [(f"s{t}.0", f"s{t}.1"), (f"s{t}.1", f"s{t}.2"), (f"s{t}.1", f"s{t}.3"),
               (f"s{t}.2", f"s{t}.4"), (f"s{t}.3", f"s{t}.4"), (f"s{t}.0", "acc")]
        if t:
            es += [(f"s{t - 1}.4", f"s{t}.0"), (f"s{t - 1}.4", f"s{t}.1")]
    ids = sorted(vs, key=lambda v: (int(v.split(".")[1]), v)) if listed_by_kind else list(vs)
    vertices = [vs[i] for i in ids] + [Vertex("acc", "AccumulateGrad", attach=True),
                                       Vertex("w", "param", attach=True, named=False)]
    return vertices, [*es, ("acc", "w")]


def test_an_unrolled_cell_folds_all_but_its_last_step_under_the_budget():
    vs, es = unrolled(30)
    assert len(vs) < collapse.DEFAULT_MAX_NODES
    p = plan(vs, es)
    (group,) = p.groups.values()
    assert group.kind == "repeat"
    assert group.title == "29 × [AddmmBackward0 → … → MulBackward0]"
    assert group.size == 29 * len(CELL)
    assert group.detail.startswith("29 more like the 5 nodes next to it: ")
    # the last step (created last) stays drawn, as do the shared weight and its AccumulateGrad
    drawn = {p.drawn(v.id) for v in vs}
    assert {f"s29.{k}" for k in range(len(CELL))} | {"acc", "w", group.id} == drawn
    assert all(p.drawn(f"s{t}.{k}") == group.id for t in range(29) for k in range(5))


def test_each_member_says_its_repetition_and_its_place_in_the_block():
    # NOTE [block slots]: step t of the cell is repetition t; its k-th node takes place k.
    vs, es = unrolled(30)
    (group,) = plan(vs, es).groups.values()
    assert group.repeats == 29
    assert group.slots == {f"s{t}.{k}": (t, k) for t in range(29) for k in range(len(CELL))}
    # a folded chain of blocks: repetitions in chain order, the same kinds at the same places
    chain = [Vertex(f"n{i}", "MulBackward0" if i % 2 else "AddBackward0") for i in range(10)]
    (g,) = plan(chain, [(f"n{i}", f"n{i + 1}") for i in range(9)], max_nodes=4).groups.values()
    assert g.repeats == 5
    assert g.slots == {f"n{i}": (i // 2, i % 2) for i in range(10)}
    # any other group is one repetition, its members' order as places
    rest = [Vertex(f"v{i}", f"Op{i}") for i in range(6)]
    (r,) = plan(rest, [], max_nodes=3).groups.values()
    assert r.repeats == 1 and sorted(r.slots.values()) == [(0, p) for p in range(len(r.slots))]


def test_a_real_model_block_has_the_same_kinds_at_each_place():
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(3, 4), nn.Linear(4, 3)

        def forward(self, x):
            return x + self.fc2(torch.relu(self.fc1(x)))

    model = nn.Sequential(*[Block() for _ in range(12)])
    with torch.trace() as tr:
        model(torch.randn(2, 3)).sum().backward()
    group = next(g for g in draw_backward(tr, detail="bare").plan.groups.values()
                 if g.kind == "repeat")
    kinds: dict[int, set[str]] = {}
    reps: dict[int, set[str]] = {}
    for vid, (rep, place) in group.slots.items():
        kind = tr.nodes[vid].name if vid in tr.nodes else "tensor"
        kinds.setdefault(place, set()).add(kind)
        if vid in tr.tensors:  # a parameter of module `rep`
            reps.setdefault(rep, set()).add(tr.tensors[vid].name.split(".")[0])
    assert all(len(k) == 1 for k in kinds.values())
    assert all(len(r) == 1 for r in reps.values()) and len(reps) == group.repeats


def test_small_graphs_plain_chains_and_full_detail_are_left_alone():
    vs, es = unrolled(collapse.MIN_REPEATS + 2)  # 52 vertices: at most SMALL
    assert not plan(vs, es).groups
    big, big_es = unrolled(30)
    assert not plan(big, big_es, max_nodes=math.inf).groups
    # a chain of 200 identical nodes under the budget: step 3's business, only over it
    chain = [Vertex(f"n{i}", "MulBackward0", order=i) for i in range(200)]
    links = [(f"n{i}", f"n{i + 1}") for i in range(199)]
    assert not plan(chain, links).groups
    assert [g.title for g in plan(chain, links, max_nodes=10).groups.values()] == [
        "200 × [MulBackward0]"]


def test_fewer_repeats_than_the_minimum_are_not_folded():
    vs, es = unrolled(collapse.MIN_REPEATS - 1)
    filler = [Vertex(f"f{i}", f"Op{i}Backward0", order=1000 + i) for i in range(100)]
    assert len(vs) + len(filler) > collapse.SMALL
    assert not plan(vs + filler, es).groups


def test_a_folded_loop_moves_into_its_scope_when_scopes_fold():
    vs, es = unrolled(30)
    for v in vs:
        v.scope = ("Net", "rnn")
    p = plan(vs, es, max_nodes=3)
    titles = {g.kind: g.title for g in p.groups.values()}
    assert titles == {"scope": "rnn"}
    (group,) = p.groups.values()
    assert group.size == len(vs)  # every vertex, the repeat group's included, exactly once


def lstm_trace(seq_len: int = 20):
    torch.manual_seed(0)
    lstm, head = nn.LSTM(1, 4, batch_first=True), nn.Linear(4, 1)
    x = torch.rand(3, seq_len, 1)
    with torch.trace() as tr:
        out, _ = lstm(x)
        head(out[:, -1]).sum().backward()
    return tr


def test_a_20_step_lstm_backward_graph_shows_one_step_and_19_folded():
    tr = lstm_trace()
    dot = draw_backward(tr)
    (group,) = dot.plan.groups.values()
    assert group.title.startswith("19 × [")
    assert group.scope == ("LSTM",)
    drawn = {dot.plan.drawn(n) for n in tr.nodes}
    assert len(drawn) < 40  # ~290 nodes unfolded
    assert sum(n.name == "SigmoidBackward0" and dot.plan.drawn(n.id) == n.id
               for n in tr.nodes.values()) == 3  # one step's three gates
    assert "19 × [" in dot.source
    fwd = draw_forward(tr)
    titles = {g.kind: g.title for g in fwd.plan.groups.values()}
    # the steps, and the inputs x_t of the folded ones (step 5)
    assert titles == {"repeat": "19 × [t → … → mul]", "outputs": "19 × tensor (3, 16) float32"}


# -- step 5: many sibling outputs of one op ------------------------------------------------------
def _unbind(n: int, consumers: dict[int, str]) -> tuple[list[Vertex], list[tuple[str, str]]]:
    """``unbind`` into ``n`` tensors; output ``i`` feeds the op ``consumers[i]`` (if any)."""
    vs = [Vertex("x", "tensor", attach=True, named=False), Vertex("u", "unbind")]
    es = [("x", "u")]
    for i in range(n):
        vs.append(Vertex(f"o{i}", "tensor", attach=True, named=False,
                         summary="tensor (16, 16) float32"))
        es.append(("u", f"o{i}"))
    for i, c in consumers.items():
        if c not in {v.id for v in vs}:
            vs.append(Vertex(c, "add"))
        es.append((f"o{i}", c))
    return vs, es


def test_many_unused_outputs_of_one_op_are_drawn_as_one_counted_node():
    vs, es = _unbind(20, {19: "last"})
    p = plan(vs, es)
    (group,) = p.groups.values()
    assert group.kind == "outputs"
    assert group.title == "19 × tensor (16, 16) float32"
    assert group.detail == "outputs 0–18 of unbind"
    # the output a drawn op reads stays on its own, as do the op and its input
    assert {p.drawn(v.id) for v in vs} == {"x", "u", "o19", "last", group.id}


def test_outputs_feeding_a_folded_node_fold_and_few_outputs_never_do():
    vs, es = _unbind(20, {i: f"a{i}" for i in range(19)} | {19: "last"})
    for v in vs:
        if v.id.startswith("a"):
            v.scope = ("rnn",)  # 19 ops that fold into one scope node over the budget
    p = plan(vs, es, max_nodes=30)
    scope, outputs = p.groups.values()
    assert (scope.kind, scope.title, outputs.kind) == ("scope", "rnn", "outputs")
    assert {p.drawn(f"o{i}") for i in range(19)} == {outputs.id}
    assert p.drawn("o19") == "o19"
    # as many outputs as MANY_OUTPUTS, or a budget of math.inf: all drawn
    few, few_es = _unbind(collapse.MANY_OUTPUTS, {})
    assert not plan(few, few_es).groups
    assert not plan(*_unbind(20, {}), max_nodes=math.inf).groups
    # outputs that each feed a drawn op are all needed
    assert not plan(*_unbind(12, {i: f"a{i}" for i in range(12)})).groups


def _example_trace(name: str):
    """The bundled example ``name`` traced as ``gradviz trace --keep-runs 1 --example`` does."""
    path = Path(__file__).resolve().parents[1] / "gradviz" / "examples" / f"{name}.py"
    with mock.patch.object(sys, "argv", [str(path)]), torch.trace(keep_runs=1) as tr:
        runpy.run_path(str(path), run_name="__main__")
    return tr


def test_the_lstm_forward_graph_folds_its_unbound_inputs_and_keeps_narrow():
    tr = _example_trace("rnn_sequence")
    fwd = draw_forward(tr)
    unbind = next(op for op in tr.ops if op.name == "unbind" and len(op.outputs) == 20)
    outs = {fwd.plan.drawn(t) for t in unbind.outputs}
    groups = [fwd.plan.groups[d] for d in outs if d in fwd.plan.groups]
    # the inputs of the 19 folded steps are one node; the last step's input is drawn
    assert [g.kind for g in groups] == ["outputs"]
    assert groups[0].title == "19 × tensor (16, 16) float32"
    assert len(outs) == 2
    # a copy (proxy) of a wide node is one short line
    assert all(not line.startswith("↪") or "\\n" not in line
               for line in fwd.source.splitlines())
    svg = to_svg(fwd)
    width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
    assert width < 2400, width  # 4,151 pt before step 5, one-line copies and results moved out
