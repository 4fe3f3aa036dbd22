"""What a static picture says: detail levels, the legend, ``input k`` labels, which run is
drawn, node ids, module class names, draw_step's title against its colours, and a CLI render
that prints no Fontconfig warning. Golden DOT files pin each detail level
(``GRADVIZ_UPDATE_GOLDEN=1`` rewrites them; review the diff before committing).
"""

from __future__ import annotations

import re

import pytest
from _cli import run as run_cli
from _cli import write
from _render_programs import assert_golden, fixed_sources, mlp, seed_pow
from test_render_graphviz import edges, groups, node_lines, svg_root, texts

import gradviz as torch
from gradviz.render.graphviz import (
    AUTO_VALUES_MAX,
    draw_backward,
    draw_both,
    draw_forward,
    draw_step,
    resolve_detail,
    run_label,
    run_position,
    to_svg,
)


def split_program():
    """``y = a * b; h, w = y.split(1); z = (h.exp() + w ** 2).sum()``: SplitBackward0 has
    two inputs (one per output of split), every other node one."""
    with torch.trace(name="split.py") as tr:
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        h, w = y.split(1)
        z = (h.exp() + w ** 2).sum()
        z.backward()
    return tr


def node_label(src: str, nid: str) -> str:
    m = re.search(rf'^\s*"?{re.escape(nid)}"? \[label="((?:[^"\\]|\\.)*)"', src, re.M)
    assert m, f"no node {nid} in the DOT source"
    return m.group(1)


def title_of(src: str) -> str:
    """The HTML-like graph label (title, notes and legend)."""
    m = re.search(r"^\s*label=<(.*)> labeljust", src, re.M)
    assert m, "no title/legend label"
    return m.group(1)


# -- detail levels ---------------------------------------------------------------------------------
def test_bare_values_saved_say_what_each_level_promises():
    tr = seed_pow()
    pow_x = next(n for n in tr.nodes.values() if n.name == "PowBackward0"
                 and any(s.name == "self" for s in n.saved))
    x = tr.tensors[next(s.tensor for s in pow_x.saved if s.name == "self")]
    bare = draw_backward(tr, detail="bare").source
    values = draw_backward(tr, detail="values").source
    saved = draw_backward(tr, detail="saved").source

    # bare: names only (the id only because two PowBackward0 share the name)
    assert node_label(bare, pow_x.id) == f"{pow_x.id} · PowBackward0"
    assert node_label(bare, x.id) == "x\\n(3,)"
    assert "data " not in bare and "_saved_" not in bare and ".saved." not in bare

    # values: id, the code line, data (x ** 2 = [1, 4, 9]) and the gradient it received
    assert node_label(values, pow_x.id).split("\\n") == [
        f"{pow_x.id} · PowBackward0", "z = x ** 2 + y ** 3", "data (3,) [1, 4, 9]",
        "grad (3,) [1, 1, 1]"]
    assert node_label(values, x.id).split("\\n") == [
        "x", "(3,)", "data (3,) [1, 2, 3]", ".grad (3,) [2, 4, 6]"]
    assert "_saved_" not in values and ".saved." not in values

    # saved: PyTorch's _saved_* attributes in the node, saved tensors as orange boxes linked
    # to what they hold, no numbers
    assert node_label(saved, pow_x.id).split("\\n") == [
        f"{pow_x.id} · PowBackward0", "z = x ** 2 + y ** 3", "_saved_exponent = 2"]
    box = next(k for k in re.findall(r'^\s*"([^"]+\.saved\.\d+)" \[', saved, re.M)
               if k.startswith(pow_x.id))
    assert node_label(saved, box) == "_saved_self\\n(3,)"
    assert re.search(rf'"{re.escape(box)}" -> {x.id} \[.*style=dashed', saved)
    assert "data " not in saved

    for src, level in ((bare, "bare"), (values, "values"), (saved, "saved")):
        assert f"detail: {level}" in title_of(src)


def test_forward_levels():
    tr = seed_pow()
    x = next(t for t in tr.tensors.values() if t.name == "x")
    bare = node_lines(svg_root(draw_forward(tr, detail="bare")))
    values = node_lines(svg_root(draw_forward(tr, detail="values")))
    # bare: names only (the edges say which tensors go in)
    assert bare["op0"] == ["pow"] and bare[x.id] == ["x", "(3,)"]
    assert values["op0"][0] == "pow(x, exponent=2)"
    assert values["op0"][1].endswith("z = x ** 2 + y ** 3")
    assert values[x.id] == ["x", "(3,) float32", "data (3,) [1, 2, 3]", "grad (3,) [2, 4, 6]"]


def test_auto_is_values_for_small_graphs_and_bare_for_big_ones():
    assert resolve_detail("auto", AUTO_VALUES_MAX) == "values"
    assert resolve_detail("auto", AUTO_VALUES_MAX + 1) == "bare"
    assert resolve_detail(None, 3) == "values"
    with pytest.raises(ValueError, match="unknown detail level 'loud'"):
        resolve_detail("loud", 3)
    assert draw_backward(seed_pow()).detail == "values"
    w = torch.ones(2, requires_grad=True)
    y = torch.ones(2, requires_grad=True)
    for _ in range(AUTO_VALUES_MAX):
        y = y * w
    assert draw_backward(y).detail == "bare"


def test_the_older_flags_map_onto_the_levels():
    tr = seed_pow()
    assert draw_backward(tr, show_saved=True, show_attrs=True).detail == "saved"
    assert draw_backward(tr, show_saved=True, show_attrs=True).source \
        == draw_backward(tr, detail="saved").source
    assert draw_backward(tr, show_grads=True).detail == "values"
    # show_grads also writes the gradients on the edges, on top of any level
    src = draw_backward(tr, detail="bare", show_grads=True).source
    assert any('label="(3,) [2, 4, 6]"' in attrs for _, _, attrs in edges(src))


# -- legend ----------------------------------------------------------------------------------------
def test_every_picture_has_a_legend_of_what_it_uses():
    tr = seed_pow()
    back = title_of(draw_backward(tr, detail="saved").source)
    for words in ("grad_fn node", "AccumulateGrad", "leaf (requires_grad)", "saved tensor",
                  "output (backward() starts here)"):
        assert words in back
    assert "parameter" not in back  # no parameter in this graph: not in its legend
    assert "saved tensor" not in title_of(draw_backward(tr, detail="values").source)
    fwd = title_of(draw_forward(tr).source)
    assert ">op<" in fwd and "leaf (requires_grad)" in fwd
    both = title_of(draw_both(tr).source)
    assert "grad_fn node" in both and "dotted line" in both
    step = title_of(draw_step(tr, -1, 5).source)
    assert "running now" in step and "not run yet" in step
    # the legend is drawn (laid out as text in the SVG), not only written in the DOT
    assert "grad_fn node" in texts(svg_root(draw_backward(tr)))
    mlp_legend = title_of(draw_backward(mlp()).source)
    assert "parameter" in mlp_legend


# -- input_nr --------------------------------------------------------------------------------------
def test_input_k_only_on_edges_into_nodes_with_several_inputs():
    tr = split_program()
    src = draw_backward(tr, detail="bare").source
    split = next(n.id for n in tr.nodes.values() if n.name == "SplitBackward0")
    labelled = {}
    for a, b, attrs in edges(src):
        m = re.search(r'label="([^"]*)"', attrs)
        if m:
            labelled[(a, b)] = m.group(1)
    into_split = {k: v for k, v in labelled.items() if k[1] == split}
    assert sorted(into_split.values()) == ["input 0", "input 1"]
    assert labelled == into_split  # no other edge carries a label
    # the SVG edge text says "input 1", never a bare number
    svg_edges = groups(svg_root(draw_backward(tr, detail="bare")), "edge")
    for title, g in svg_edges.items():
        for t in texts(g):
            assert not t.strip().isdigit(), (title, t)
    # forward: the outputs of split are named; the inputs of a two-input op too, where its
    # call is written out (values, saved), not in a bare picture of names
    fsrc = draw_forward(tr, detail="values").source
    assert 'label="input 1"' in fsrc and 'label="output 1"' in fsrc
    fsrc = draw_forward(tr, detail="bare").source
    assert 'label="input 1"' not in fsrc and 'label="output 1"' in fsrc


# -- which run -------------------------------------------------------------------------------------
def three_runs():
    with torch.trace(name="loop.py", keep_runs="all") as tr:
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        for k in range(3):
            (w * (k + 1)).sum().backward()
    return tr


def test_every_run_is_drawable_and_the_title_says_which():
    tr = three_runs()
    assert [run_label(tr, i) for i in range(3)] == [
        "backward run 1 of 3", "backward run 2 of 3", "backward run 3 of 3"]
    assert "backward run 2 of 3" in title_of(draw_backward(tr, run=1).source)
    assert "backward run 3 of 3" in title_of(draw_backward(tr).source)
    # each run's own values: run 2 computes w * 2, and w.grad holds 1 + 2 after it
    src = draw_backward(tr, run=1, detail="values").source
    assert "data (2,) [2, 4]" in src and ".grad (2,) [3, 3]" in src
    assert run_position(tr, 1) == 0 and run_position(tr, -1) == 2
    with pytest.raises(ValueError, match=r"no backward run 4: the script made 3; choose one "
                                         r"of 1\.\.3"):
        run_position(tr, 4)


def test_runs_dropped_by_keep_runs_are_counted():
    with torch.trace(keep_runs=2) as tr:
        w = torch.ones(2, requires_grad=True)
        for _ in range(5):
            (w * 2).sum().backward()
    assert run_label(tr, -1) == "backward run 5 of 5, last 2 kept"
    assert run_position(tr, 4) == 0
    with pytest.raises(ValueError, match="backward run 2 was not kept"):
        run_position(tr, 2)


def test_cli_run_and_detail(tmp_path):
    script = write(tmp_path / "loop.py", """\
        import gradviz as torch
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        for k in range(2):
            (w * (k + 1)).sum().backward()
        """)
    out = tmp_path / "out"
    r = run_cli("trace", "--run", "1", "--detail", "saved", "-o", str(out), "-q", str(script),
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    svg = (out / "backward.svg").read_text()
    assert "backward run 1 of 2 · detail: saved" in svg
    r = run_cli("render", str(out / "trace.json"), "--detail", "bare", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    svg = (out / "backward.svg").read_text()
    assert "backward run 2 of 2 · detail: bare" in svg
    assert "Fontconfig" not in r.stderr
    r = run_cli("render", str(out / "trace.json"), "--run", "3", cwd=tmp_path)
    assert r.returncode == 2
    assert "no backward run 3: the script made 2; choose one of 1..2" in r.stderr
    r = run_cli("render", str(out / "trace.json"), "--detail", "loud", cwd=tmp_path)
    assert r.returncode == 2 and "loud" in r.stderr


def test_a_cli_render_prints_no_fontconfig_warning(tmp_path):
    """The Graphviz in the pygraphviz wheel warns about the system's newer fontconfig files
    (NOTE [fonts] in gradviz/render/graphviz.py) unless gradviz starts fontconfig itself."""
    script = write(tmp_path / "s.py", """\
        import gradviz as torch
        x = torch.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        """)
    r = run_cli("trace", "-f", "png", "-o", str(tmp_path / "o"), "-q", str(script),
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Fontconfig" not in r.stderr and "fontconfig" not in r.stderr.lower()
    assert (tmp_path / "o" / "backward.png").stat().st_size > 1000


# -- ids and code lines ----------------------------------------------------------------------------
def test_same_named_nodes_are_told_apart_by_id_and_code():
    tr = seed_pow()
    nodes = node_lines(svg_root(draw_backward(tr, detail="values")))
    pows = [n for n in tr.nodes.values() if n.name == "PowBackward0"]
    firsts = {nodes[n.id][0] for n in pows}
    assert firsts == {f"{n.id} · PowBackward0" for n in pows} and len(firsts) == 2


# -- module classes --------------------------------------------------------------------------------
def test_module_boxes_and_folded_scopes_name_the_class():
    tr = mlp()
    fwd = [texts(g)[0] for g in groups(svg_root(draw_forward(tr)), "cluster").values()]
    assert "Sequential.0: Linear" in fwd and "Sequential.1: Tanh" in fwd
    both = [texts(g)[0] for g in groups(svg_root(draw_both(tr)), "cluster").values()]
    assert "Sequential.0: Linear" in both
    folded = draw_backward(tr, max_nodes=6)
    titles = sorted(g.title for g in folded.plan.groups.values())
    assert titles == ["Sequential.0: Linear", "Sequential.1: Tanh", "Sequential.2: Linear"]
    assert "Sequential.0: Linear" in [ls[0] for ls in node_lines(svg_root(folded)).values()]


# -- draw_step -------------------------------------------------------------------------------------
def test_draw_step_title_names_the_gold_node_and_the_receiver():
    tr = split_program()
    run = tr.run()
    seen = set()
    for step in run.steps:
        src = draw_step(tr, -1, step.index).source
        title = title_of(src)
        gold = re.findall(r'^\s*(\w+) \[.*fillcolor=gold', src, re.M)
        red = re.findall(r'^\s*(\w+) \[.*gv-receiver', src, re.M)
        m = re.search(r"running \(gold\): (\w+) · ", title)
        # the node the title calls running is the gold one, and only it
        assert gold == ([m.group(1)] if m else []), (step.index, step.kind, title)
        if step.kind == "accumulate":
            seen.add("accumulate")
            assert step.node != gold[0]  # the receiver is not the sender ...
            assert f"sends a gradient to (red outline): {step.node} · " in title
            assert red == [step.node]  # ... and it is drawn as the title says
        elif step.kind == "execute":
            seen.add("execute")
            assert gold == [step.node] and red == []
    assert seen == {"accumulate", "execute"}


# -- golden DOT per level --------------------------------------------------------------------------
@pytest.mark.parametrize("level", ["bare", "values", "saved"])
def test_golden_detail_levels(level):
    tr = fixed_sources(split_program())
    assert_golden(f"levels_backward_{level}.dot", draw_backward(tr, detail=level).source)
    assert_golden(f"levels_forward_{level}.dot", draw_forward(tr, detail=level).source)


# -- wide graphs -----------------------------------------------------------------------------------
def small_cnn():
    from gradviz import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
    with torch.trace(name="cnn.py") as tr:
        net(torch.randn(2, 1, 16, 16)).sum().backward()
    return tr


def test_unused_outputs_are_left_out_so_cnn_blocks_stack():
    tr = small_cnn()
    dot = draw_forward(tr, detail="bare")
    pools = [op for op in tr.ops if op.name == "max_pool2d_with_indices"]
    assert len(pools) == 3
    for op in pools:
        values, indices = op.outputs
        assert dot.plan.drawn(values) == values and f"{op.id} -> {values}" in dot.source
        # the indices nothing reads are not drawn
        assert not re.search(rf"^\s*{indices} \[", dot.source, re.M)
    # Three conv blocks stack under each other: the drawing is about one block wide (it was a
    # staircase, each block right of the one before, when the indices took a row).
    m = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', to_svg(dot))
    width, height = int(m.group(1)), int(m.group(2))
    assert width < 420 and height > 2 * width, (width, height)


def test_a_run_asked_for_by_number_survives_the_default_folding():
    # identical iterations fold into the last one, except the run asked for (--run 2)
    with torch.trace(keep_run=1) as tr:
        w = torch.ones(2, requires_grad=True)
        for _ in range(5):
            (w * 2).sum().backward()
    assert [r.id for r in tr.runs] == ["run1", "run4"]
    assert run_label(tr, 0) == "backward run 2 of 5, 2 kept in full"
    assert run_position(tr, 2) == 0 and run_position(tr, 5) == 1
    with pytest.raises(ValueError, match=r"backward run 3 was not kept: the trace holds runs "
                                         r"2, 5\. Trace again with --run 3"):
        run_position(tr, 3)
