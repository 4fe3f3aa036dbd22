"""The tracer records saved-tensor hooks (NOTE [saved tensor hooks]): a pack in the forward
pass on the saved value of the op's node (``SavedInfo.pack_hook``/``packed``), an unpack during
backward as an ``unpack_hook`` step of the node that reads it, before that node's ``execute``
step, a pack during a ``create_graph`` backward as a ``pack_hook`` step. The programs are small
versions of the examples in PyTorch's autograd notes ("Hooks for saved tensors")."""

from __future__ import annotations

import json
import os
import uuid

import numpy as np
import pytest

import gradviz as torch
from gradviz.autograd.graph import save_on_cpu, saved_tensors_hooks
from gradviz.render.terminal import describe, step_table
from gradviz.trace.io import load_trace, trace_from_dict
from gradviz.trace.model import PackHookStep, UnpackHookStep, step_to_dict
from gradviz.trace.replay import replay, states

pytest_plugins = ("_browser",)  # the `driver` fixture (headless Chromium) for the last test


# -- hooks as the autograd notes write them (our own code) -----------------------------------------
class Disk:
    """pack to disk / unpack from disk: the packed value is only a file name."""

    def __init__(self, folder) -> None:
        self.folder = folder

    def pack_to_disk(self, tensor):
        name = os.path.join(self.folder, str(uuid.uuid4()))
        torch.save(tensor, name)
        return name

    def unpack_from_disk(self, name):
        return torch.load(name, weights_only=True)


def _ops_by_name(tr, name):
    return [op for op in tr.ops if op.name == name]


def _saved(tr, op, name):
    return next(s for s in tr.nodes[op.node].saved if s.name == name)


def _disk_trace(tmp_path):
    disk = Disk(tmp_path)
    with torch.trace() as tr:
        a = torch.ones(3, requires_grad=True)
        b = torch.ones(3, requires_grad=True) * 2
        with saved_tensors_hooks(disk.pack_to_disk, disk.unpack_from_disk):
            y = a * b
        y.sum().backward()
    return tr, a, b


def test_packs_are_on_the_op_whose_node_saved_them(tmp_path):
    tr, a, b = _disk_trace(tmp_path)
    scale, mul = _ops_by_name(tr, "mul")
    # ones * 2 ran before the hooks: its node keeps the number 2 as it was
    assert all(s.pack_hook is None and s.packed is None for s in tr.nodes[scale.node].saved)
    ids = {tr.tensors[t].name: t for t in mul.inputs}
    for name, tensor in (("self", "a"), ("other", "b")):
        s = _saved(tr, mul, name)
        assert s.pack_hook == "Disk.pack_to_disk"
        assert s.tensor == ids[tensor] and not s.is_output
        assert s.value == {"shape": [3], "dtype": "float32"}
        assert s.packed["type"] == "str" and str(tmp_path) in s.packed["repr"]
    # the two files are different: each saved value was packed on its own
    assert _saved(tr, mul, "self").packed != _saved(tr, mul, "other").packed


def test_unpacks_are_steps_of_the_reading_node_before_it_executes(tmp_path):
    tr, _, _ = _disk_trace(tmp_path)
    mul = _ops_by_name(tr, "mul")[1]
    steps = tr.run().steps
    unpacks = [s for s in steps if s.kind == "unpack_hook"]
    assert [type(s) for s in unpacks] == [UnpackHookStep, UnpackHookStep]
    assert {s.node for s in unpacks} == {mul.node}
    assert sorted(s.saved for s in unpacks) == ["other", "self"]
    assert all(s.fn == "Disk.unpack_from_disk" for s in unpacks)
    assert all(s.tensor["values"] == ([1.0] * 3 if s.saved == "self" else [2.0] * 3)
               for s in unpacks)
    # each unpack carries the file name its own pack returned
    assert {s.saved: s.packed for s in unpacks} == {
        n: _saved(tr, mul, n).packed for n in ("self", "other")}
    # the engine unpacks while the node runs: after it was queued, before its execute step
    kinds = [(s.kind, s.node) for s in steps]
    first = kinds.index(("unpack_hook", mul.node))
    assert kinds[first - 1] == ("enqueue", mul.node)
    assert kinds[first + 1] == ("unpack_hook", mul.node)
    assert kinds[first + 2] == ("execute", mul.node)
    # no other node (sum, AccumulateGrad) read a packed value
    assert sum(k == "unpack_hook" for k, _ in kinds) == 2


def test_unpack_steps_are_in_the_order_the_hook_ran():
    """Compared with the values the unpack hook returned, in the order it returned them."""
    seen = []

    def pack(t):
        return t.detach()

    def unpack(p):
        seen.append(p.tolist())
        return p

    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        with saved_tensors_hooks(pack, unpack):
            z = (x * w).exp()
        z.sum().backward()
    got = [s.tensor["values"] for s in tr.run().steps if s.kind == "unpack_hook"]
    assert got == seen and len(seen) == 3
    exp = _ops_by_name(tr, "exp")[0]
    out = _saved(tr, exp, "result")
    assert out.is_output and out.pack_hook.endswith("pack") and out.packed["shape"] == [2]
    exp_unpack = next(s for s in tr.run().steps if s.kind == "unpack_hook"
                      and s.node == exp.node)
    assert exp_unpack.saved == "result"


def test_a_counting_hook_and_save_on_cpu():
    counts = {"pack": 0, "unpack": 0}

    def count_pack(t):
        counts["pack"] += 1
        return t

    def count_unpack(t):
        counts["unpack"] += 1
        return t

    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with saved_tensors_hooks(count_pack, count_unpack):
            y = x.pow(2)
        with save_on_cpu():
            z = y.sin()
        z.sum().backward()
    assert counts == {"pack": 1, "unpack": 1}
    pow_, sin = _ops_by_name(tr, "pow")[0], _ops_by_name(tr, "sin")[0]
    s = _saved(tr, pow_, "self")
    assert s.pack_hook.endswith("count_pack")
    assert s.packed["values"] == [1.0, 2.0, 3.0]  # it returned the tensor itself
    on_cpu = _saved(tr, sin, "self")
    assert on_cpu.pack_hook.endswith("pack_to_cpu")
    assert on_cpu.packed["type"] == "tuple" and "device(type='cpu')" in on_cpu.packed["repr"]
    unpacks = [(tr.nodes[s.node].name, s.fn.rsplit(".", 1)[-1])
               for s in tr.run().steps if s.kind == "unpack_hook"]
    # sin's node runs first (it was made last), then pow's
    assert unpacks == [("SinBackward0", "unpack_from_cpu"), ("PowBackward0", "count_unpack")]


def test_register_hooks_on_one_saved_value():
    log = []
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.grad_fn._raw_saved_self.register_hooks(lambda t: log.append("p") or t * 10,
                                                 lambda p: log.append("u") or p / 10)
        y.sum().backward()
    assert log == ["p", "u"] and x.grad.tolist() == [2.0, 4.0]
    mul = tr.ops[0]
    s, other = _saved(tr, mul, "self"), _saved(tr, mul, "other")
    assert s.pack_hook.endswith("<lambda>") and s.packed["values"] == [10.0, 20.0]
    assert s.tensor == mul.inputs[0]  # still linked to x, as before the hook
    assert other.pack_hook is None
    unpack = next(st for st in tr.run().steps if st.kind == "unpack_hook")
    assert unpack.node == mul.node and unpack.saved == "self"
    assert unpack.tensor["values"] == [1.0, 2.0]


def test_packs_during_a_create_graph_backward_are_steps():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        with saved_tensors_hooks(lambda t: t, lambda p: p):
            (g,) = torch.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    first = tr.runs[0]
    packs = [s for s in first.steps if s.kind == "pack_hook"]
    assert packs and all(type(s) is PackHookStep for s in packs)
    pow_node = next(n for n in first.nodes if tr.nodes[n].name == "PowBackward0")
    # the formula of PowBackward0 saved them while it ran: before its execute step
    assert {s.node for s in packs} == {pow_node}
    execute = next(s.index for s in first.steps if s.kind == "execute" and s.node == pow_node)
    assert all(s.index < execute for s in packs)
    assert all(s.fn.endswith("<lambda>") and s.tensor["shape"] == [2] for s in packs)
    # the second backward reads what those packs kept: unpack steps of the new nodes
    assert any(s.kind == "unpack_hook" for s in tr.runs[1].steps)
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_nothing_recorded_without_hooks():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
    assert not any(s.kind in ("pack_hook", "unpack_hook") for s in tr.run().steps)
    assert all(s.pack_hook is None for n in tr.nodes.values() for s in n.saved)
    assert tr._packs == {}
    # and nothing new is written for a saved value without hooks
    d = json.loads(tr.to_json())
    assert all(s["pack_hook"] is None and s["packed"] is None
               for n in d["nodes"] for s in n["saved"])


def test_reading_a_saved_value_by_hand_is_no_step():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with saved_tensors_hooks(lambda t: t, lambda p: p):
            y = x * x
        _ = y.grad_fn._saved_self  # runs unpack outside any backward pass
        y.sum().backward()
    assert [s.kind for s in tr.run().steps].count("unpack_hook") == 2


# -- the file: round trip, old files, replay ------------------------------------------------------
def test_save_and_load_round_trip(tmp_path):
    tr, _, _ = _disk_trace(tmp_path)
    path = tmp_path / "trace.json"
    tr.save(path)
    back = load_trace(path)
    assert [step_to_dict(s) for s in back.run().steps] == \
        [step_to_dict(s) for s in tr.run().steps]
    assert back.nodes == tr.nodes
    mul = _ops_by_name(back, "mul")[1]
    assert _saved(back, mul, "self").pack_hook == "Disk.pack_to_disk"


def test_a_create_graph_trace_round_trips(tmp_path):
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with saved_tensors_hooks(lambda t: (t.detach(), "kept"), lambda p: p[0]):
            y = (x ** 3).sum()
            (g,) = torch.autograd.grad(y, x, create_graph=True)
    path = tmp_path / "t.json"
    tr.save(path)
    back = load_trace(path)
    packs = [s for s in back.run().steps if s.kind == "pack_hook"]
    assert packs and packs[0].packed["type"] == "tuple" and "'kept'" in packs[0].packed["repr"]


def test_an_old_v2_file_without_the_new_fields_loads(tmp_path):
    tr, _, _ = _disk_trace(tmp_path)
    d = json.loads(tr.to_json())
    for n in d["nodes"]:
        for s in n["saved"]:
            del s["pack_hook"], s["packed"]
    for r in d["runs"]:
        r["steps"] = [s for s in r["steps"] if s["kind"] != "unpack_hook"]
        for i, s in enumerate(r["steps"]):
            s["index"] = i
    assert d["schema"] == "gradviz.trace/2"
    old = trace_from_dict(d)
    assert all(s.pack_hook is None for n in old.nodes.values() for s in n.saved)
    assert [s.kind for s in old.run().steps] == [s.kind for s in tr.run().steps
                                                 if s.kind != "unpack_hook"]


def test_bad_new_fields_are_refused(tmp_path):
    from gradviz.trace.io import TraceFormatError

    tr, _, _ = _disk_trace(tmp_path)
    d = json.loads(tr.to_json())
    step = next(s for s in d["runs"][0]["steps"] if s["kind"] == "unpack_hook")
    step["packed"] = {"type": "str"}  # a non-tensor needs its repr
    with pytest.raises(TraceFormatError, match="packed"):
        trace_from_dict(d)
    step["packed"] = None
    step["node"] = None  # an unpack always has its reader
    with pytest.raises(TraceFormatError, match="node"):
        trace_from_dict(d)


def test_replay_steps_over_unpacks_without_changing_the_engine_state(tmp_path):
    tr, _, _ = _disk_trace(tmp_path)
    run = tr.run()
    all_states = list(states(run))
    assert len(all_states) == len(run.steps)
    for s in run.steps:
        if s.kind != "unpack_hook":
            continue
        before, at = replay(run, s.index - 1), replay(run, s.index)
        assert at.step is s
        assert at.ready == before.ready and at.deps == before.deps
        assert at.done == before.done and at.executing == before.executing
        assert at.edge_grads == before.edge_grads and at.leaf_grads == before.leaf_grads
        assert at.freed == [] and at.buffer_after is None


# -- the words and pictures ---------------------------------------------------------------------
def test_terminal_describes_the_steps(tmp_path):
    tr, _, _ = _disk_trace(tmp_path)
    mul = _ops_by_name(tr, "mul")[1]
    unpack = next(s for s in tr.run().steps if s.kind == "unpack_hook" and s.saved == "self")
    text = describe(tr, unpack)
    assert text.startswith(f"unpack hook Disk.unpack_from_disk returns _saved_self of "
                           f"MulBackward0 {mul.node} (3,), from str '{tmp_path}")
    from rich.console import Console

    con = Console(width=250, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    con.print(step_table(tr))
    table = con.export_text()
    assert "unpack_hook" in table and "_saved_self = Disk.unpack_from_disk(str" in table
    # the step viewer (gradviz steps -i, the TUI) shows what was packed and what came back
    from gradviz.render.terminal import RunReplay, step_detail

    con = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    con.print(step_detail(tr, RunReplay(tr.run()), unpack.index))
    detail = con.export_text()
    assert "saved-tensor hook" in detail and f"packed: str '{tmp_path}" in detail
    assert "returned: (3,) [1, 1, 1]" in detail


def test_player_html_holds_the_description(tmp_path):
    tr, _, _ = _disk_trace(tmp_path)
    html = tr.to_html()
    assert '"kind": "unpack_hook"' in html or '"kind":"unpack_hook"' in html
    # the sentence is written in Python and handed over in the page's JSON
    assert "unpack hook " in html and " returns _saved_self of " in html


def test_saved_boxes_say_who_packed_them(tmp_path):
    from gradviz.render.graphviz import draw_backward

    tr, _, _ = _disk_trace(tmp_path)
    dot = draw_backward(tr, detail="saved").source
    assert dot.count("packed by pack_to_disk") == 2
    assert dot.count("#8e44ad") == 2  # the two packed boxes, outlined
    # without the saved boxes the node's label lists them, packed too
    attrs = draw_backward(tr, show_attrs=True).source
    assert "_saved_self: (3,) packed by pack_to_disk" in attrs
    # a saved value no hook packed looks as before
    with torch.trace() as plain:
        x = torch.ones(3, requires_grad=True)
        (x * x).sum().backward()
    assert "packed by" not in draw_backward(plain, detail="saved").source


@pytest.mark.browser
def test_the_player_describes_unpacks_in_a_browser(driver, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    tr, _, _ = _disk_trace(tmp_path)
    mul = _ops_by_name(tr, "mul")[1]
    page = tmp_path / "player.html"
    page.write_text(tr.to_html(), encoding="utf-8")
    driver.get(page.as_uri())
    steps = tr.run().steps
    k = next(s.index for s in steps if s.kind == "unpack_hook" and s.saved == "self")
    for _ in range(k):
        ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    event = driver.execute_script(
        "return document.querySelector('.gv-player [data-role=\"event\"]').textContent")
    assert "unpack_hook step " + str(k) in event
    assert (f"unpack hook Disk.unpack_from_disk returns _saved_self of MulBackward0 {mul.node} "
            "(3,), from str '") in event
    assert "returned: shape [3] float32[1, 1, 1]" in event.replace("  ", " ")
    assert "packed: str '" in event
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_a_pack_hook_that_runs_an_op_on_the_output_is_traced_without_error(tmp_path):
    """The hook sees tanh's output while TanhBackward0 is still being built: the trace must
    not fail (the program runs as it does untraced), must hold the node whole, and the hook's
    op must consume tanh's output (one tensor, one id)."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.trace() as tr:
        with saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = x.tanh()
        y.sum().backward()
    assert np.allclose(x.grad.numpy(), 1 - np.tanh([1.0, 2.0]) ** 2)
    tanh = next(op for op in tr.ops if op.name == "tanh")
    mul = next(op for op in tr.ops if op.name == "mul")
    assert mul.inputs[0] == tanh.outputs[0]  # the hook's op reads tanh's output
    node = tr.nodes[tanh.node]
    assert node.name == "TanhBackward0" and [s.name for s in node.saved] == ["result"]
    assert tr.tensors[tanh.outputs[0]].op == tanh.id
    tr.save(tmp_path / "t.json")  # the loader's checks hold
    again = load_trace(tmp_path / "t.json")
    assert [op.name for op in again.ops] == [op.name for op in tr.ops]
