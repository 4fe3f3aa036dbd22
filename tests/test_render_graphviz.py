"""Graphviz drawings: structure of the DOT source and of the SVG laid out by pygraphviz.

The SVG is parsed with xml.etree (it must be well-formed XML) and checked by its ``<title>``s
(the DOT node names, which are the trace's ids) and texts. Golden files pin the exact DOT of
the seed programs (``GRADVIZ_UPDATE_GOLDEN=1`` rewrites them).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _render_programs import (
    assert_golden,
    custom_function,
    fixed_sources,
    loop_trace,
    mlp,
    seed_pow,
    seed_sum,
)

import gradviz as torch
from gradviz.render import collapse
from gradviz.render.graphviz import (
    draw_backward,
    draw_both,
    draw_forward,
    draw_step,
    render,
    to_svg,
)
from gradviz.trace.model import BackwardGraph, NodeInfo, SourceLoc, TensorInfo
from gradviz.trace.replay import replay

SVG = "{http://www.w3.org/2000/svg}"


# -- helpers ---------------------------------------------------------------------------------------
def svg_root(dot) -> ET.Element:
    return ET.fromstring(to_svg(dot).encode("utf-8"))


def groups(root: ET.Element, cls: str) -> dict[str, ET.Element]:
    """``<g class="node ...">`` (or edge) elements by their ``<title>``."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        if cls in (g.get("class") or "").split():
            out[g.find(f"{SVG}title").text] = g
    return out


def texts(el: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in el.iter(f"{SVG}text")]


def node_lines(root: ET.Element) -> dict[str, list[str]]:
    return {title: texts(g) for title, g in groups(root, "node").items()}


def edges(source: str) -> list[tuple[str, str, str]]:
    """``(tail, head, attributes)`` of every edge statement in DOT source."""
    pat = re.compile(r'^\s*("?[^\s"]+"?) -> ("?[^\s"]+"?) \[(.*)\]$')
    out = []
    for line in source.splitlines():
        m = pat.match(line)
        if m:
            out.append((m.group(1).strip('"'), m.group(2).strip('"'), m.group(3)))
    return out


# -- the seed: z = x ** 2 + y ** 3 -----------------------------------------------------------------
def test_seed_backward_nodes_edges_and_leaves():
    tr = seed_pow()
    dot = draw_backward(tr, detail="bare")
    root = svg_root(dot)
    nodes = node_lines(root)
    ids = {n.name: [] for n in tr.nodes.values()}
    for n in tr.nodes.values():
        ids[n.name].append(n.id)
    # every backward node is drawn under its id, labelled with PyTorch's class name; at bare
    # detail the id is written only where two nodes share a name (n3 · PowBackward0)
    for n in tr.nodes.values():
        assert nodes[n.id][0] == (n.name if len(ids[n.name]) == 1 else f"{n.id} · {n.name}")
    assert sorted(len(v) for v in ids.values()) == [1, 2, 2]
    # leaves: name and shape, linked from their AccumulateGrad
    x = next(t for t in tr.tensors.values() if t.name == "x")
    y = next(t for t in tr.tensors.values() if t.name == "y")
    assert nodes[x.id] == ["x", "(3,)"] and nodes[y.id] == ["y", "(3,)"]
    es = edges(dot.source)
    acc_x = next(n.id for n in tr.nodes.values() if n.variable == x.id)
    assert (acc_x, x.id) in {(a, b) for a, b, attrs in es if "gv-variable" in attrs}
    # next_functions edges go from a node to its target; the id keeps the input_nr, but no
    # label is written: each PowBackward0 has one input (a bare "0" read as "gradient 0")
    add = ids["AddBackward0"][0]
    for nxt, nr in tr.nodes[add].next_functions:
        (attrs,) = [a for s, d, a in es if (s, d) == (add, nxt)]
        assert "label" not in attrs and f'id="{add}->{nxt}:{nr}"' in attrs
    svg_edges = groups(root, "edge")
    assert texts(svg_edges[f"{add}->{ids['PowBackward0'][0]}"]) == []
    z = next(t for t in tr.tensors.values() if t.name == "z")
    assert f"{z.id}->{add}" in svg_edges and nodes[z.id] == ["z", "(3,)"]


def test_show_saved_and_attrs():
    tr = seed_pow()
    dot = draw_backward(tr, show_saved=True, show_attrs=True)
    nodes = node_lines(svg_root(dot))
    x = next(t for t in tr.tensors.values() if t.name == "x")
    pow_x = next(n for n in tr.nodes.values()
                 if n.name == "PowBackward0" and any(s.tensor == x.id for s in n.saved))
    # id and code line, then the attributes in the label, PyTorch's names
    assert nodes[pow_x.id][0] == f"{pow_x.id} · PowBackward0"
    assert nodes[pow_x.id][-1] == "_saved_exponent = 2"
    assert nodes[pow_x.id][1] == "z = x ** 2 + y ** 3"
    # the saved tensor is its own node, and a dashed link says it is the leaf x
    saved = [k for k in nodes if k.startswith(f"{pow_x.id}.saved.")]
    assert len(saved) == 1 and nodes[saved[0]] == ["_saved_self", "(3,)"]
    links = {(a, b): attrs for a, b, attrs in edges(dot.source)}
    assert "style=dashed" in links[(saved[0], x.id)]
    assert "gv-saved" in links[(pow_x.id, saved[0])]
    # without show_saved there is no saved node
    assert not any(".saved." in k for k in node_lines(svg_root(draw_backward(tr))))
    # detail="saved" is the same picture as both flags
    assert draw_backward(tr, detail="saved").source == dot.source.replace(
        "detail: saved", "detail: saved")


def test_show_grads_labels_edges_with_the_gradients_that_flowed():
    tr = seed_pow()
    dot = draw_backward(tr, show_grads=True)
    root = svg_root(dot)
    x = next(t for t in tr.tensors.values() if t.name == "x")
    acc_x = next(n for n in tr.nodes.values() if n.variable == x.id)
    pow_x = next(n for n in tr.nodes.values() if n.next_functions == [[acc_x.id, 0]])
    # dz/dx = 2x = [2, 4, 6] flows along PowBackward0 -> AccumulateGrad
    label = texts(groups(root, "edge")[f"{pow_x.id}->{acc_x.id}"])
    assert label == ["(3,) [2, 4, 6]"]
    assert node_lines(root)[x.id] == ["x", "(3,)", "data (3,) [1, 2, 3]",
                                      ".grad (3,) [2, 4, 6]"]


def test_sum_seed_from_a_live_tensor():
    z, x, y = seed_sum()
    dot = draw_backward(z, detail="bare")
    nodes = node_lines(svg_root(dot))
    names = sorted(lines[0].split(" · ")[-1] for lines in nodes.values())
    assert names == ["AccumulateGrad", "AccumulateGrad", "AddBackward0", "SumBackward0",
                     "x", "y", "z"]
    es = edges(dot.source)
    by_label = {nodes[a][0] + "->" + nodes[b][0]: attrs for a, b, attrs in es}
    assert "label" not in by_label["SumBackward0->AddBackward0"]
    assert ["x", "(5, 5)"] in nodes.values() and ["y", "(5, 5)"] in nodes.values()
    # the same model drawn twice gives the same source
    assert draw_backward(torch.graph_of(z), detail="bare").source == dot.source


def test_repeated_edges_get_distinct_ids():
    x = torch.ones(2, requires_grad=True)
    dot = draw_backward((x * x).sum())
    ids = re.findall(r' id="([^"]+)"', dot.source)
    assert len(ids) == len(set(ids))
    assert any(i.endswith("#2") for i in ids)


def test_custom_function_nodes():
    tr = custom_function()
    dot = draw_backward(tr, show_saved=True)
    nodes = node_lines(svg_root(dot))
    mc = next(n for n in tr.nodes.values() if n.name == "MulConstantBackward")
    cube = next(n for n in tr.nodes.values() if n.name == "CubeBackward")
    assert nodes[mc.id][0] == f"{mc.id} · MulConstantBackward" and mc.kind == "custom"
    assert 'class="gv-custom"' in dot.source
    saved = f"{cube.id}.saved.0"
    assert nodes[saved] == ["saved_tensors[0]", "(2,)"]
    # Cube saved b, a non-leaf: the dashed link goes to b's grad_fn (MulConstantBackward)
    links = {(a, b): attrs for a, b, attrs in edges(dot.source)}
    assert "style=dashed" in links[(saved, mc.id)]


def test_mlp_parameters_styled_apart_and_forward_sources():
    tr = mlp()
    bdot = draw_backward(tr, detail="bare")
    nodes = node_lines(svg_root(bdot))
    params = [t for t in tr.tensors.values() if t.is_param]
    assert len(params) == 4
    for p in params:
        assert nodes[p.id][0] == p.name
        assert re.search(rf'^\s*{p.id} \[.*class="gv-param"', bdot.source, re.M)
    assert {"TanhBackward0", "AddmmBackward0", "TBackward0", "MeanBackward0"} <= {
        lines[0].split(" · ")[-1] for lines in nodes.values()}
    fdot = draw_forward(tr, detail="saved")
    froot = svg_root(fdot)
    fnodes = node_lines(froot)
    tanh = next(op for op in tr.ops if op.name == "tanh")
    assert fnodes[tanh.id][0].startswith("tanh(")
    assert fnodes[tanh.id][1].startswith("_render_programs.py:")
    assert "model(x)" in fnodes[tanh.id][1]
    # module scopes become clusters, labelled with the module's class (the outermost one is
    # named by its class already)
    clusters = [texts(g)[0] for g in groups(froot, "cluster").values()]
    assert clusters == ["Sequential", "Sequential.0: Linear", "Sequential.1: Tanh",
                        "Sequential.2: Linear"]
    for p in params:
        assert re.search(rf'^\s*{p.id} \[.*class="gv-param"', fdot.source, re.M)


def test_forward_in_creation_order_with_op_calls():
    tr = seed_pow()
    dot = draw_forward(tr, detail="saved")
    order = re.findall(r"^\s*(t\d+|op\d+) \[", dot.source, re.M)
    ops = [o for o in order if o.startswith("op")]
    assert ops == [op.id for op in tr.ops]
    nodes = node_lines(svg_root(dot))
    assert nodes["op0"][0] == "pow(x, exponent=2)"
    assert nodes["op0"][1].startswith("_render_programs.py:")
    x = next(t for t in tr.tensors.values() if t.name == "x")
    assert nodes[x.id] == ["x", "(3,) float32"]
    assert f"{x.id} -> op0" in dot.source


def test_draw_both_links_ops_to_nodes_and_leaves_to_accumulate_grad():
    tr = seed_pow()
    dot = draw_both(tr, detail="bare")
    src = dot.source
    assert "subgraph cluster_forward" in src and "subgraph cluster_backward" in src
    links = {(a, b) for a, b, attrs in edges(src) if "gv-link" in attrs}
    for op in tr.ops:
        assert (op.id, op.node) in links
    for n in tr.nodes.values():
        if n.variable:
            assert (n.variable, n.id) in links
    root = svg_root(dot)
    nodes = node_lines(root)
    acc = next(n for n in tr.nodes.values() if n.variable)
    leaf = tr.tensors[acc.variable]
    assert nodes[acc.id] == [f"{acc.id} · AccumulateGrad", leaf.name, "(3,)"]
    # every DOT node is drawn once (no id shared by the two sides)
    titles = [g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g")
              if "node" in (g.get("class") or "").split()]
    assert len(titles) == len(set(titles))


def test_draw_step_replays_the_engine_state():
    tr = seed_pow()
    run = tr.run()
    k = next(s.index for s in run.steps if s.kind == "execute" and s.index > 3)
    executing = run.steps[k].node
    dot = draw_step(tr, -1, k)
    src = dot.source
    assert re.search(rf'^\s*{executing} \[.*class="gv-op gv-executing".*fillcolor=gold', src,
                     re.M)
    add = next(n.id for n in tr.nodes.values() if n.name == "AddBackward0")
    assert re.search(rf'^\s*{add} \[.*gv-done', src, re.M)
    ready = replay(run, k).ready
    assert ready
    for r in ready:
        assert re.search(rf'^\s*{r} \[.*gv-ready', src, re.M)
    nodes = node_lines(svg_root(dot))
    acc = next(n.id for n in tr.nodes.values() if n.name == "AccumulateGrad")
    assert "dependencies: 1" in nodes[acc]
    title = texts(svg_root(dot))[:2]
    assert title[0] == f"backward run 1 of 1 · step {k}/{len(run.steps) - 1}: execute"
    assert title[1] == f"running (gold): {executing} · PowBackward0"
    # the last step: everything done
    last = draw_step(tr, -1, -1).source
    assert "gv-executing" not in last and "gv-ready" not in last
    with pytest.raises(IndexError):
        draw_step(tr, -1, len(run.steps))


def test_accumulate_step_thickens_its_edge():
    tr = seed_pow()
    k = next(s.index for s in tr.run().steps if s.kind == "accumulate")
    s = tr.run().steps[k]
    line = next(line for line in draw_step(tr, 0, k).source.splitlines()
                if f'id="{s.source}->{s.node}:{s.input_nr}"' in line)
    assert "penwidth=3" in line and "color=" in line


# -- rendering -------------------------------------------------------------------------------------
def test_to_svg_inline_and_render_formats(tmp_path):
    tr = seed_pow()
    dot = draw_backward(tr)
    full = to_svg(dot)
    assert full.startswith("<?xml")
    inline = to_svg(dot, inline=True)
    assert inline.startswith("<svg") and "<!DOCTYPE" not in inline
    ET.fromstring(inline)
    magic = {"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF", "dot": b"digraph"}
    for fmt, head in magic.items():
        out = render(dot, tmp_path / f"g.{fmt}")
        assert open(out, "rb").read().startswith(head), fmt
    assert render(dot.source, tmp_path / "g.out", "svg").endswith("g.out")
    with pytest.raises(ValueError, match="unsupported format"):
        render(dot, tmp_path / "g.gif")


def test_digraph_renders_without_a_dot_binary(tmp_path):
    dot = draw_backward(seed_pow())
    assert dot.pipe(format="svg").startswith(b"<?xml")
    assert dot._repr_mimebundle_()["image/svg+xml"].startswith("<?xml")
    out = dot.render(tmp_path / "g", format="png")
    assert open(out, "rb").read(4) == b"\x89PNG"


def test_hostile_names_are_escaped():
    names = ["<img src=x onerror=alert(1)>", 'a"b', "back\\slash\\", "\\N\\G\\l",
             "&foo; &amp;", "-->x<!--", "nul\x00byte", "{a|b}", "<b>bold</b>", '\\"']
    with torch.trace() as tr:
        y = None
        for n in names:
            t = torch.ones(2, requires_grad=True)
            t.name = n
            y = t if y is None else y * t
        y.sum().backward()
    for op in tr.ops:
        op.source = SourceLoc(file='/tmp/<script>"q\\.py', line=3, code='x = "<b>" & \\n')
    tr.name = "</title><script>alert(1)</script>"
    drawings = [draw_backward(tr, show_saved=True, show_attrs=True, show_grads=True),
                draw_forward(tr), draw_both(tr), draw_step(tr, -1, 5)]
    for dot in drawings:
        svg = to_svg(dot)
        root = ET.fromstring(svg.encode("utf-8"))  # well-formed
        shown = [t for g in root.iter(f"{SVG}g") for t in texts(g)]
        for n in names:
            assert any(n.replace("\x00", " ") in t for t in shown), n
        assert not root.findall(f".//{SVG}img") and "<script" not in svg
    # (Graphviz writes a double space as space + no-break space)
    fwd = [t.replace("\xa0", " ") for g in svg_root(drawings[1]).iter(f"{SVG}g")
           for t in texts(g)]
    assert any('<script>"q\\.py:3  x = "<b>" & \\n' in t for t in fwd)


def test_hostile_ids_from_a_loaded_file_are_replaced():
    n = NodeInfo(id='n"0 <x>', name="MulBackward0", kind="op", sequence_nr=0,
                 next_functions=[["n1", 0]])
    acc = NodeInfo(id="n1", name="AccumulateGrad", kind="accumulate_grad", sequence_nr=0,
                   next_functions=[], variable="t0")
    t = TensorInfo(id="t0", name="x", shape=[2], dtype="float32", requires_grad=True,
                   is_leaf=True)
    g = BackwardGraph(nodes={n.id: n, acc.id: acc}, roots=[[n.id, 0]], tensors={"t0": t})
    root = svg_root(draw_backward(g))
    titles = set(node_lines(root))
    assert "n1" in titles and "t0" in titles
    assert any(re.fullmatch(r"x[0-9a-f]{12}", k) for k in titles)


def test_trace_without_backward_draws_the_recorded_graph():
    with torch.trace() as tr:
        x = torch.ones(2, requires_grad=True)
        s = (x * 2).sum()
    nodes = node_lines(svg_root(draw_backward(tr, detail="bare")))
    assert s.grad_fn is not None
    assert sorted(v[0] for v in nodes.values()) == ["AccumulateGrad", "MulBackward0",
                                                     "SumBackward0", "s", "x"]


def test_wrong_inputs():
    with pytest.raises(TypeError, match="Tensor, a BackwardGraph or a Trace"):
        draw_backward(42)
    with pytest.raises(TypeError, match="takes a Trace"):
        draw_forward(torch.ones(2))
    with pytest.raises(IndexError, match="no backward runs"):
        with torch.trace() as tr:
            pass
        draw_step(tr, -1, 0)


# -- large graphs ----------------------------------------------------------------------------------
def test_20000_op_trace_renders_collapsed():
    tr = loop_trace(10_000)
    assert len(tr.ops) == 20_001
    bwd, fwd = draw_backward(tr), draw_forward(tr)
    for drawing in (bwd, fwd, draw_both(tr), draw_step(tr, -1, 999)):
        assert len(groups(svg_root(drawing), "node")) < 40
    (group,) = bwd.plan.groups.values()
    assert group.title == "10000 × [AddBackward0 → MulBackward0]"
    # 20,000 op nodes and the AccumulateGrad of h's first value (w's and b's are shared)
    assert group.detail.startswith("20001 nodes: AddBackward0 ×10000, MulBackward0 ×10000")
    lines = node_lines(svg_root(bwd))
    assert lines[group.id][0] == group.title
    assert lines[group.id][1].startswith("20001 nodes: AddBackward0 ×10000")  # clipped
    # shared w and b stay real nodes; the folded chain points at them
    accs = [n for n in tr.nodes.values() if n.kind == "accumulate_grad"]
    drawn = {bwd.plan.drawn(n.id) for n in accs}
    assert len(drawn - {group.id}) == 2
    assert [g.title for g in fwd.plan.groups.values()] == ["10000 × [mul → add]"]


def test_a_1000_node_chain_at_full_detail():
    w = torch.ones(2, requires_grad=True)
    y = torch.ones(2, requires_grad=True)
    for _ in range(1000):
        y = y * w
    dot = draw_backward(y, max_nodes=math.inf)
    assert not dot.plan.groups and dot.detail == "bare"  # "auto": 1,000 nodes are bare
    root = svg_root(dot)
    names = [lines[0].split(" · ")[-1] for lines in node_lines(root).values()]
    assert names.count("MulBackward0") == 1000
    # w's AccumulateGrad is wired to all 1000 nodes: long edges go to dashed proxies
    assert dot.plan.proxies and all(p.startswith("↪ AccumulateGrad") for p in names
                                    if p.startswith("↪"))


def test_scopes_fold_by_depth_and_expand_keeps_one_open():
    tr = mlp(layers=12)
    full = draw_backward(tr, max_nodes=math.inf)
    assert not full.plan.groups
    small = draw_backward(tr, max_nodes=30)
    titles = sorted(g.title for g in small.plan.groups.values())
    # 12 Linear, 11 Tanh: each titled with its class
    assert titles == sorted(f"Sequential.{i}: {'Tanh' if i % 2 else 'Linear'}" for i in range(23))
    g0 = next(g for g in small.plan.groups.values() if g.title == "Sequential.0: Linear")
    assert g0.detail == "4 nodes: AccumulateGrad ×2, AddmmBackward0, TBackward0"
    assert g0.size == 6  # the two parameter boxes fold in too
    kept = draw_backward(tr, max_nodes=30, expand=("Sequential.0", "0"))
    assert "Sequential.0: Linear" not in {g.title for g in kept.plan.groups.values()}
    # tighter: the repeated Linear/Tanh pairs fold into one block
    titles = [g.title for g in draw_backward(tr, max_nodes=20).plan.groups.values()]
    # (the classes tell the folded scopes apart: "*" stands for the index, not a digit of
    # the class name)
    assert titles == ["Sequential.0: Linear", "11 × [Sequential.*: Linear → Sequential.*: Tanh]"]
    titles = [g.title for g in draw_forward(tr, max_nodes=20).plan.groups.values()]
    assert titles == ["Sequential.22: Linear",
                      "11 × [Sequential.*: Linear → Sequential.*: Tanh]"]


def test_collapse_plan_unit():
    vs = [collapse.Vertex(f"n{i}", "MulBackward0" if i % 2 else "AddBackward0")
          for i in range(10)]
    es = [(f"n{i}", f"n{i + 1}") for i in range(9)]
    p = collapse.plan(vs, es, max_nodes=4)
    (g,) = p.groups.values()
    assert g.title == "5 × [AddBackward0 → MulBackward0]" and g.size == 10
    assert all(p.drawn(v.id) == g.id for v in vs)
    assert collapse.best_period([9, 1, 2, 1, 2, 1, 2, 7]) == (1, 2, 3)
    assert collapse.best_period([1, 2, 3]) == (0, 0, 0)
    # under budget nothing changes
    assert not collapse.plan(vs, es, max_nodes=10).groups
    # hard cap: no chains, no scopes -> the rest is one node
    star = [collapse.Vertex("hub", "SumBackward0")] + [
        collapse.Vertex(f"l{i}", f"Op{i}") for i in range(50)]
    p = collapse.plan(star, [("hub", f"l{i}") for i in range(50)], max_nodes=10)
    assert len({p.drawn(v.id) for v in star}) == 10
    assert any(g.kind == "rest" and g.title == "… 42 more" for g in p.groups.values())
    with pytest.raises(ValueError):
        collapse.plan(vs, es, max_nodes=0)


def test_collapse_is_iterative_on_a_huge_chain():
    n = 100_000
    vs = [collapse.Vertex(f"n{i}", "MulBackward0") for i in range(n)]
    es = [(f"n{i}", f"n{i + 1}") for i in range(n - 1)]
    p = collapse.plan(vs, es)
    (g,) = p.groups.values()
    assert g.title == f"{n} × [MulBackward0]"


# -- golden DOT ------------------------------------------------------------------------------------
def test_golden_seed_drawings():
    tr = fixed_sources(seed_pow())
    assert_golden("seed_backward.dot",
                  draw_backward(tr, show_saved=True, show_attrs=True, show_grads=True).source)
    assert_golden("seed_forward.dot", draw_forward(tr).source)
    assert_golden("seed_both.dot", draw_both(tr).source)
    assert_golden("seed_step7.dot", draw_step(tr, -1, 7).source)


def test_golden_sum_custom_and_mlp():
    z, _, _ = seed_sum()
    assert_golden("sum_backward.dot", draw_backward(fixed_sources(torch.graph_of(z))).source)
    assert_golden("custom_function.dot",
                  draw_backward(fixed_sources(custom_function()), show_saved=True).source)
    assert_golden("mlp_collapsed.dot", draw_backward(fixed_sources(mlp()), max_nodes=6).source)


def test_importing_the_renderers_is_cheap():
    code = ("import sys, gradviz, gradviz.render; gradviz.draw_backward; "
            "print([m for m in ('graphviz', 'pygraphviz', 'rich', 'IPython') "
            "if m in sys.modules])")
    repo = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [repo] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=repo)
    assert out.stdout.strip() == "[]"


# -- a run that failed ----------------------------------------------------------------------------
def _inplace_error_trace():
    with torch.trace() as tr:
        a = torch.rand(3, requires_grad=True)
        b = a * 1
        c = b * b  # MulBackward0 saves b at version 0
        b.mul_(2)
        try:
            c.sum().backward()
        except RuntimeError:
            pass
    return tr


def test_the_node_a_failed_run_raised_in_is_marked():
    tr = _inplace_error_trace()
    (error,) = [s for s in tr.run().steps if s.kind == "error"]
    root = svg_root(draw_backward(tr, detail="bare"))
    nodes = groups(root, "node")
    marked = {title for title, g in nodes.items()
              if any(p.get("stroke") == "#c0392b" and p.get("stroke-width") == "3"
                     for p in g.iter(f"{SVG}path"))}
    assert marked == {error.node}  # the node the engine was running, and no other
    assert "raised RuntimeError" in texts(nodes[error.node])
    # What it was called with is shown as for any node: the gradient its buffer held.
    values = groups(svg_root(draw_backward(tr, detail="values")), "node")[error.node]
    assert "grad (3,) [1, 1, 1]" in texts(values), texts(values)
    assert "raised the run's error" in "".join(root.itertext())  # its legend
    # A run that succeeded, and a step of the failed one, mark nothing.
    with torch.trace() as ok:
        (torch.ones(2, requires_grad=True) * 2).sum().backward()
    for drawing in (draw_backward(ok), draw_step(tr, -1, 0)):
        assert "raised" not in "".join(svg_root(drawing).itertext())


def test_the_same_drawing_is_laid_out_once(monkeypatch):
    """gradviz trace draws a big trace's graphs for its files and again for the player: the
    second layout of the same DOT is the first one's bytes, and only the last few are kept."""
    from gradviz.render import graphviz as gv_render

    calls = []
    real = gv_render._lay_out
    monkeypatch.setattr(gv_render, "_lay_out",
                        lambda *a: calls.append(a[:2]) or real(*a))
    monkeypatch.setattr(gv_render, "_LAID_OUT", {})
    sources = [f'digraph {{ a{i} -> b{i} }}' for i in range(gv_render._LAID_OUT_MAX + 1)]
    first = gv_render.to_svg(sources[0])
    assert gv_render.to_svg(sources[0]) == first and len(calls) == 1
    for s in sources[1:]:
        gv_render.to_svg(s)
    assert len(gv_render._LAID_OUT) == gv_render._LAID_OUT_MAX
    gv_render.to_svg(sources[0])  # the oldest was let go: laid out again
    assert calls.count((sources[0], "svg")) == 2
