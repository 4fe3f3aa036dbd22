"""Every notation a drawing uses is explained in its legend, and only those (NOTE [legend
marks] in gradviz/render/graphviz.py); a value's range reads ``min a max b``, never ``a … b``
("…" means "left out": a cut list, cut text)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import gradviz as torch
from gradviz.nn import functional as F
from gradviz.render._format import grad_str, value_str
from gradviz.render.graphviz import draw_backward, draw_both, draw_forward, draw_step, to_svg

SVG = "{http://www.w3.org/2000/svg}"
BLUE = "AccumulateGrad — its leaf (the .grad it writes)"
SAVED = "node — a tensor it saved for backward"
DASHED = "saved tensor — the tensor it is (leaf, or its grad_fn)"
OUTPUT_J = "output j: the op's j-th result (it returns several)"
RANGE = "min a max b: the smallest and largest of a tensor's values (too many to list)"
CUT = "…: left out (more values, text or nodes than fit)"


def legend(dot) -> str:
    """The text of the title and legend: the graph's own ``<text>``s, outside nodes and edges."""
    root = ET.fromstring(to_svg(dot).encode("utf-8"))
    graph = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    return "\n".join("".join(t.itertext()) for t in graph.findall(f"{SVG}text"))


def labels(dot) -> str:
    root = ET.fromstring(to_svg(dot).encode("utf-8"))
    return "\n".join("".join(t.itertext()) for g in root.iter(f"{SVG}g")
                     if {"node", "edge"} & set((g.get("class") or "").split())
                     for t in g.iter(f"{SVG}text"))


def _big_split_trace() -> torch.trace:
    torch.manual_seed(0)
    with torch.trace() as tr:
        w = torch.randn(8, 10, requires_grad=True)
        h = (w @ torch.randn(10, 6)).tanh()
        a, b = h.split(4)
        v = torch.randn(7, requires_grad=True)
        loss = (a * b).sum() + (v * v).sum()
        loss.backward()
    return tr


def _small_trace() -> torch.trace:
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
    return tr


def test_a_range_reads_min_max_and_the_legend_says_so():
    tr = _big_split_trace()
    for dot in (draw_backward(tr, detail="values"), draw_forward(tr, detail="values")):
        text = labels(dot)
        assert "data (8, 10) min " in text and " max " in text
        assert " … " not in text  # the old "a … b" range
        assert RANGE in legend(dot)
    assert RANGE not in legend(draw_backward(_small_trace(), detail="values"))


def test_value_str_range_has_min_max_mean():
    big = {"shape": [500], "dtype": "float32", "stats": {"min": -0.703, "max": 0.615,
                                                         "mean": 0.01}}
    assert value_str(big) == "min -0.703 max 0.615 mean 0.01"
    assert grad_str(big) == "(500,) min -0.703 max 0.615 mean 0.01"
    # a cut list keeps its "…"
    assert value_str({"shape": [9], "dtype": "float32", "values": list(range(9))}, 4) \
        == "[0, 1, 2, 3, …"


def test_a_cut_list_gets_its_key():
    tr = _big_split_trace()  # v has 7 values: a box shows 4, then "…"
    dot = draw_backward(tr, detail="values")
    assert "[0.3396, 0.4238, 0.3712, 0.3828, …" in labels(dot).replace("\n", " ")
    assert CUT in legend(dot)
    assert CUT not in legend(draw_backward(_small_trace(), detail="values"))


def test_line_keys_only_for_the_lines_drawn():
    tr = _big_split_trace()
    saved = legend(draw_backward(tr, detail="saved"))
    assert BLUE in saved and SAVED in saved and DASHED in saved
    bare = legend(draw_backward(tr, detail="bare"))
    assert BLUE in bare and SAVED not in bare and DASHED not in bare
    # draw_both links leaves by dotted lines: no blue AccumulateGrad line, no key for it
    assert BLUE not in legend(draw_both(tr))
    # draw_step draws the leaves as the backward drawing does
    assert BLUE in legend(draw_step(tr, -1, 0))


def test_output_j_is_explained_where_an_op_returns_several():
    tr = _big_split_trace()
    dot = draw_forward(tr, detail="saved")
    assert "output 1" in labels(dot)
    assert OUTPUT_J in legend(dot)
    assert OUTPUT_J not in legend(draw_forward(_small_trace(), detail="saved"))


def test_a_step_explains_the_gradients_on_its_edges_and_its_output_box():
    tr = _big_split_trace()
    first = legend(draw_step(tr, -1, 0))  # nothing has flowed yet
    later = legend(draw_step(tr, -1, 6))
    edge_grad = "(shape) values on an edge: the gradient it carried"
    assert edge_grad not in first and edge_grad in later
    assert "output (backward() starts here)" in later  # the olive root box has its key


def test_draw_both_tells_its_two_input_k_apart():
    text = legend(draw_both(_big_split_trace()))
    assert "input k on a forward edge: the op's k-th tensor argument" in text
    assert "input k on a backward edge: the edge feeds input k (input_nr)" in text


def test_a_dashed_copy_of_a_node_is_explained():
    w = torch.ones(2, requires_grad=True)
    y = torch.ones(2, requires_grad=True)
    for _ in range(20):
        y = y * w  # w's AccumulateGrad feeds every node: long edges go to dashed copies
    dot = draw_backward(y)
    assert dot.plan.proxies and "↪ AccumulateGrad" in labels(dot)
    proxy = "↪ name (dashed box): another reference to a node drawn in full elsewhere"
    assert proxy in legend(dot)
    assert proxy not in legend(draw_backward(_small_trace()))


def test_a_tensor_passed_by_keyword_is_drawn_with_its_keyword():
    """nll_loss's target is a keyword argument: the forward graph draws it, on an edge named
    ``target``, and the legend explains the name (it was left out before)."""
    with torch.trace() as tr:
        x = torch.randn(3, 4, requires_grad=True)
        target = torch.tensor([0, 2, 1])
        F.nll_loss(F.log_softmax(x, 1), target).backward()
    tid = tr.known_tensor_id(target)
    svg = to_svg(draw_forward(tr, detail="saved"))
    loss = next(op for op in tr.ops if op.name == "nll_loss")
    assert f'id="{tid}&#45;&gt;{loss.id}:1"' in svg and ">target</text>" in svg
    assert "the keyword the op was given that tensor by" in svg
