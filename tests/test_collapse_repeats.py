"""Step 0 of NOTE [collapse]: unrolled loops fold to ``N × [...]`` next to one drawn block."""

from __future__ import annotations

import math

import gradviz as torch
import gradviz.nn as nn
from gradviz.render import collapse
from gradviz.render.collapse import Vertex, plan
from gradviz.render.graphviz import draw_backward, draw_forward

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
    titles = [g.title for g in fwd.plan.groups.values()]
    assert titles and all(t.startswith("19 × [") for t in titles)
    assert any(t.endswith("→ mul]") for t in titles)  # the steps; the x_t may fold too
