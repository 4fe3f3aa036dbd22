"""Terminal renderers: the graph tree, the step table, stepping through a run (rich)."""

from __future__ import annotations

import io

import pytest
from _render_programs import custom_function, seed_pow, seed_sum
from rich.console import Console

import gradviz as torch
from gradviz.render._format import grad_str
from gradviz.render.terminal import graph_tree, print_graph, print_steps, step_table, step_through


def console(width: int = 120) -> Console:
    return Console(record=True, width=width, file=io.StringIO(), color_system=None)


def text_of(con: Console) -> str:
    return con.export_text()


def test_print_graph_seed_tree():
    tr = seed_pow()
    con = console()
    print_graph(tr, console=con)
    lines = text_of(con).splitlines()
    add = next(n.id for n in tr.nodes.values() if n.name == "AddBackward0")
    assert lines[0] == f"z.grad_fn = AddBackward0 {add}"
    assert sum("[0] PowBackward0" in line and "input_nr=0" in line for line in lines) == 1
    assert sum("[1] PowBackward0" in line for line in lines) == 1
    leaves = [line for line in lines if "AccumulateGrad" in line]
    assert len(leaves) == 2
    assert any(line.rstrip().endswith("→ x (3,) leaf") for line in leaves)
    assert any(line.rstrip().endswith("→ y (3,) leaf") for line in leaves)
    # tree guides: AccumulateGrad is a grandchild of the root
    assert any(line.startswith("│   └── [0] AccumulateGrad") for line in lines)


def test_print_graph_of_a_live_tensor_with_none_edges():
    z, _, _ = seed_sum()
    con = console()
    print_graph(z, console=con)
    out = text_of(con)
    assert out.splitlines()[0].startswith("z.grad_fn = SumBackward0")
    assert "[0] AddBackward0" in out and "→ x (5, 5) leaf" in out and "→ y (5, 5) leaf" in out
    x = torch.ones(2, requires_grad=True)
    con = console()
    print_graph((x * 2).sum(), console=con)
    assert "[1] None" in text_of(con)  # the constant 2 has no gradient edge


def test_shared_nodes_are_shown_once_then_referenced():
    x = torch.ones(2, requires_grad=True)
    a = x * 2
    z = (a + a).sum()
    con = console()
    print_graph(z, console=con)
    lines = text_of(con).splitlines()
    muls = [line for line in lines if "MulBackward0" in line]
    assert len(muls) == 2
    assert "(see above)" not in muls[0] and "(see above)" in muls[1]
    assert sum("AccumulateGrad" in line for line in lines) == 1


def test_deep_chain_is_iterative_and_cut():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    con = console(width=400)  # 50 nested levels of 4-column indents
    print_graph(y, console=con, max_nodes=50)
    lines = text_of(con).splitlines()
    assert sum("… (cut: max_nodes reached)" in line for line in lines) == 1
    assert len(lines) <= 52
    tree = graph_tree(y, max_nodes=10_000)  # builds without recursion
    assert tree.label.plain.endswith("MulBackward0 n0")  # "y.grad_fn = MulBackward0 n0"


def test_names_are_printed_literally():
    x = torch.ones(2, requires_grad=True)
    x.name = "[bold red]x[/] <img src=x>"
    con = console()
    print_graph((x * 2).sum(), console=con)
    assert "→ [bold red]x[/] <img src=x> (2,) leaf" in text_of(con)


def test_multiple_roots():
    x = torch.ones(2, requires_grad=True)
    g = torch.graph_of((x * 2).sum(), (x * 3).sum())
    con = console()
    print_graph(g, console=con)
    lines = text_of(con).splitlines()
    assert lines[0] == "backward graph"
    assert sum("SumBackward0" in line for line in lines) == 2


def test_custom_function_tree():
    con = console()
    print_graph(custom_function(), console=con)
    out = text_of(con)
    assert "CubeBackward" in out and "MulConstantBackward" in out and "→ a (2,) leaf" in out


def test_step_table_rows_and_columns():
    tr = seed_pow()
    table = step_table(tr)
    run = tr.run()
    assert table.row_count == len(run.steps)
    assert [c.header for c in table.columns] == ["step", "event", "node", "ready queue", "deps",
                                                 "gradient"]
    con = console(width=200)
    con.print(table)
    out = text_of(con)
    for kind in ("compute_dependencies", "enqueue", "execute", "accumulate", "leaf_grad",
                 "release_saved", "done"):
        assert kind in out
    assert "x.grad = (3,) [2, 4, 6]" in out
    assert "input 0: (3,) [1, 1, 1]" in out
    assert "0 left" in out


def test_step_table_names_nodes_as_the_player_does():
    tr = seed_pow()
    con = console(width=400)  # wide enough for every cell on one line
    print_steps(tr, console=con)
    out = text_of(con)
    pows = sorted(n.id for n in tr.nodes.values() if n.name == "PowBackward0")
    add = next(n.id for n in tr.nodes.values() if n.name == "AddBackward0")
    leaf = {tr.tensors[n.variable].name: n.id for n in tr.nodes.values() if n.variable}
    # both pow nodes ready at once: told apart by their ids
    assert any(f"[PowBackward0 {a}, PowBackward0 {b}]" in out
               for a, b in (pows, pows[::-1]))
    # an accumulate row reads sender → receiver, both with ids
    assert f"AddBackward0 {add} → PowBackward0 {pows[0]}" in out
    # AccumulateGrad with its leaf's name, in the node column and in the dependency counts
    assert f"AccumulateGrad (x) {leaf['x']}" in out and f"AccumulateGrad (y) {leaf['y']}" in out
    assert f"AccumulateGrad (x) {leaf['x']}: 1" in out
    # no name is cut with an ellipsis
    assert "…" not in out
    assert "AccumulateGrad (" not in out.replace("AccumulateGrad (x)", "").replace(
        "AccumulateGrad (y)", "")


def test_print_steps_and_max_rows():
    tr = seed_pow()
    con = console(width=200)
    print_steps(tr, console=con, max_rows=3)
    out = text_of(con)
    assert "run 1 of 1: backward of z, 20 steps" in out
    assert f"… {len(tr.run().steps) - 3} more steps not shown" in out
    assert "leaf_grad" not in out


def test_the_step_table_numbers_runs_as_the_pictures_do():
    from gradviz.render.graphviz import run_label

    # Twenty backward calls, the last three kept: the table of the last one says "run 20 of 20",
    # the number its drawing's title gives it, not its id's "run19" nor its place among the kept.
    with torch.trace(keep_runs=3) as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(20):
            (x * 2).sum().backward()
    titles = []
    for i in range(3):
        con = console(width=200)
        print_steps(tr, run=i, console=con, max_rows=1)
        titles.append(text_of(con).strip().splitlines()[0].strip())
    assert [t.split(":")[0] for t in titles] == ["run 18 of 20", "run 19 of 20", "run 20 of 20"]
    assert run_label(tr, 0).startswith("backward run 18 of 20")
    assert all(": backward of " in t and "run19" not in t for t in titles)


def test_step_through_without_a_terminal_prints_the_table():
    tr = seed_pow()
    con = console(width=200)
    assert not con.is_terminal
    assert step_through(tr, console=con) == len(tr.run().steps) - 1
    out = text_of(con)
    assert "compute_dependencies" in out and "done" in out


def test_step_through_plain_prints_the_table_even_on_a_terminal():
    tr = seed_pow()
    con = Console(record=True, width=200, file=io.StringIO(), force_terminal=True,
                  color_system=None)
    assert con.is_terminal
    assert step_through(tr, console=con, plain=True) == len(tr.run().steps) - 1
    assert "compute_dependencies" in text_of(con)


def test_interactive_needs_a_terminal_on_both_ends(monkeypatch):
    from gradviz.render.terminal import interactive

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Console(file=io.StringIO(), force_terminal=True)
    monkeypatch.setattr("sys.stdin", Tty())
    monkeypatch.setenv("TERM", "xterm")
    assert interactive(term)
    assert not interactive(console())  # output to a file
    monkeypatch.setenv("TERM", "dumb")
    assert not interactive(term)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stdin", io.StringIO())  # input from a pipe
    assert not interactive(term)


def test_run_replay_keeps_buffers_and_goes_back():
    from gradviz.render.terminal import RunReplay

    tr = seed_pow()
    r = tr.run()
    rp = RunReplay(r)
    acc = [s.index for s in r.steps if s.kind == "accumulate"]
    st = rp.at(acc[0])
    assert st.step.kind == "accumulate" and st.buffer_before is None
    assert r.steps[acc[0]].node in st.buffers
    ex = next(s.index for s in r.steps if s.kind == "execute" and s.node == r.steps[acc[0]].node)
    assert r.steps[acc[0]].node not in rp.at(ex).buffers  # consumed when the node ran
    assert rp.last_execute.index == ex
    back = rp.at(acc[0])  # going back replays from the start
    assert back.step.index == acc[0] and r.steps[acc[0]].node in back.buffers
    assert rp.at(10**6).step.kind == "done"  # clamped


def test_buffer_before_an_accumulate_into_a_used_input():
    from gradviz.render.terminal import RunReplay, step_detail

    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 2 + x * 3).sum().backward()  # x's AccumulateGrad receives twice
    r = tr.run()
    rp = RunReplay(r)
    into_leaf = [s.index for s in r.steps if s.kind == "accumulate"
                 and tr.nodes[s.node].kind == "accumulate_grad"]
    assert len(into_leaf) == 2
    con = console(width=120)
    con.print(step_detail(tr, rp, into_leaf[1]))
    out = text_of(con)
    first = grad_str(r.steps[into_leaf[0]].data["buffer"])
    assert f"input buffer before: {first}" in out
    assert "input buffer after: (2,) [5, 5]" in out


def test_step_table_needs_a_run():
    with torch.trace() as tr:
        pass
    with pytest.raises(IndexError):
        step_table(tr)


def test_shared_node_is_expanded_where_it_first_appears():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    h = a * b
    con = console(width=200)
    print_graph((h * h + h).sum(), console=con)
    lines = text_of(con).splitlines()
    first = next(i for i, line in enumerate(lines) if "MulBackward0 n2" in line)
    assert "(see above)" not in lines[first]
    assert "AccumulateGrad" in lines[first + 1]  # its subtree follows it directly
    later = [line for line in lines[first + 1:] if "MulBackward0 n2" in line]
    assert len(later) == 2 and all("(see above)" in line for line in later)


def test_the_step_panel_of_a_large_graph_lists_the_steps_own_nodes_first():
    from gradviz.render.terminal import MAX_LISTED, RunReplay, node_label, step_detail

    with torch.trace() as tr:
        x = torch.ones(2, requires_grad=True)
        y = x
        for _ in range(100):
            y = y * 1.5
        y.sum().backward()
    r = tr.run()
    rp = RunReplay(r)
    k = next(s.index for s in r.steps if s.kind == "execute" and s.index > len(r.steps) // 2)
    con = console(width=120)
    con.print(step_detail(tr, rp, k))
    out = text_of(con)
    deps = out.split("dependencies (edges still to deliver)")[1].split("leaf .grad")[0]
    listed = [line for line in deps.splitlines() if line.strip() and "…" not in line]
    assert len(listed) == MAX_LISTED
    node = r.steps[k].node
    assert listed[0].startswith(node_label(tr, node) + " ")  # the step's own node first
    target = tr.nodes[node].next_functions[0][0]
    assert listed[1].startswith(node_label(tr, target) + " ")  # then where it sends
    n = len(rp.state.deps)
    assert f"… {n - MAX_LISTED} more nodes (" in deps
