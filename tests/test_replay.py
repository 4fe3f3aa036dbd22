"""The engine states replayed once, in the trace layer (gradviz/trace/replay.py).

The reference is the replay gradviz had before the ready queue was recorded as changes: every
``enqueue``/``execute`` step of a ``gradviz.trace/1`` file carries the whole queue, and the old
per-step replay (``_old_states`` below, as render/_steps.py had it) reads the state from there.
The new timeline must give the same states from the new steps, both for those files (converted
on loading) and for the same programs traced anew.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz.trace.replay import memory, replay, state_at, states, timeline
from tests import _replay_programs as programs

FIXTURES = Path(__file__).parent / "fixtures"
NAMES = [*programs.PROGRAMS, "engines"]


def _old_states(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The state after each step of a /1 run (its dict), as gradviz replayed it then."""
    out = []
    executing, ready, done, deps, edges, leaves = None, [], [], {}, {}, {}
    finished = False
    for s in run["steps"]:
        d, kind = s["data"], s["kind"]
        if kind == "compute_dependencies":
            deps = dict(d["counts"])
        elif kind == "enqueue":
            ready = list(d["ready"])
        elif kind == "execute":
            if executing is not None:
                done.append(executing)
            executing, ready = s["node"], list(d["ready"])
        elif kind == "accumulate":
            deps[s["node"]] = d["remaining"]
            edges.setdefault((d["source"], s["node"], d["input_nr"]), []).append(d["grad"])
        elif kind == "leaf_grad":
            leaves[d["tensor"]] = d["after"]
        elif kind in ("done", "error"):
            if executing is not None:
                done.append(executing)
            executing, ready, finished = None, [], True
        out.append({"executing": executing, "ready": list(ready), "done": list(done),
                    "deps": dict(deps), "edge_grads": {k: list(v) for k, v in edges.items()},
                    "leaf_grads": dict(leaves), "finished": finished})
    return out


def _new(st: Any) -> dict[str, Any]:
    return {"executing": st.executing, "ready": list(st.ready), "done": list(st.done),
            "deps": dict(st.deps), "edge_grads": {k: list(v) for k, v in st.edge_grads.items()},
            "leaf_grads": dict(st.leaf_grads), "finished": st.finished}


def _v1(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"trace_v1_{name}.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_v1_files_load_and_replay_as_before(name: str) -> None:
    old = _v1(name)
    tr = gradviz.load_trace(FIXTURES / f"trace_v1_{name}.json")
    assert [r.id for r in tr.runs] == [r["id"] for r in old["runs"]]
    for run, old_run in zip(tr.runs, old["runs"]):
        want = _old_states(old_run)
        assert [_new(s) for s in states(run)] == want
        tl = timeline(run)
        assert [_new(state_at(run, tl, k)) for k in range(len(run.steps))] == want


@pytest.mark.parametrize("name", NAMES)
def test_programs_traced_now_replay_as_their_v1_files(name: str) -> None:
    """The same programs recorded by today's recorder: the same states step by step."""
    tr = programs.engines() if name == "engines" else programs.record(name)
    old = _v1(name)
    assert len(tr.runs) == len(old["runs"])
    for run, old_run in zip(tr.runs, old["runs"]):
        assert [s.kind for s in run.steps] == [s["kind"] for s in old_run["steps"]]
        assert [_new(s) for s in states(run)] == _old_states(old_run)


def test_v1_file_converts_steps_to_typed_steps() -> None:
    tr = gradviz.load_trace(FIXTURES / "trace_v1_intro.json")
    steps = tr.run().steps
    enq = [s for s in steps if s.kind == "enqueue"]
    assert all(type(s).__name__ == "EnqueueStep" for s in enq)
    # PyTorch's queue order: -sequence_nr (the newest node first)
    assert all(s.priority == -tr.nodes[s.node].sequence_nr for s in enq)
    rel = [s for s in steps if s.kind == "release_saved"]
    assert rel and all(s.saved == [sv.name for sv in tr.nodes[s.node].saved
                                   if sv.tensor is not None or sv.is_output] for s in rel)
    assert any(s.saved for s in rel)


def test_v1_file_saved_again_is_v2_and_round_trips(tmp_path: Path) -> None:
    tr = gradviz.load_trace(FIXTURES / "trace_v1_engines.json")
    tr.save(tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text())["schema"] == "gradviz.trace/2"
    again = gradviz.load_trace(tmp_path / "t.json")
    assert [r.steps for r in again.runs] == [r.steps for r in tr.runs]


def test_accumulate_shows_the_buffer_before_and_after() -> None:
    """x * x: the second gradient into MulBackward0's input... here x used twice: the
    AccumulateGrad slot holds the first gradient before the second is added."""
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        (x * 3 + x * 5).sum().backward()
    run = tr.run()
    acc = [s for s in run.steps if s.kind == "accumulate"
           and tr.nodes[s.node].kind == "accumulate_grad"]
    assert len(acc) == 2
    first, second = (replay(run, s.index) for s in acc)
    assert first.buffer_before is None
    assert np.allclose(first.buffer_after["values"], first.step.grad["values"])
    assert np.allclose(second.buffer_before["values"], first.buffer_after["values"])
    assert np.allclose(second.buffer_after["values"], [8.0, 8.0])


def test_release_saved_names_what_it_freed() -> None:
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        w = gradviz.tensor([3.0, 4.0], requires_grad=True)
        (x * w).exp().sum().backward()
    run = tr.run()
    freed = {tr.nodes[s.node].name: replay(run, s.index).freed
             for s in run.steps if s.kind == "release_saved"}
    assert freed == {"ExpBackward0": ["result"], "MulBackward0": ["other", "self"]}


def test_wide_ready_queue_is_recorded_as_changes_linear_in_its_width() -> None:
    """Each push records one node and its priority, never the queue: the recorded ids grow
    linearly with the queue's width (the whole queue per push grew as width**2)."""

    def recorded_ids(width: int) -> int:
        with gradviz.trace(values="none") as tr:
            x = gradviz.ones(3, requires_grad=True)
            gradviz.stack([x * i for i in range(width)]).sum().backward()
        text = json.dumps([step_dict for step_dict in json.loads(tr.to_json())["runs"][0]
                           ["steps"]])
        return text.count('"n')  # every node id mentioned by the steps

    small, large = recorded_ids(100), recorded_ids(400)
    assert large < 4.5 * small  # linear: about 4x; quadratic would be about 16x
    # and the queue the replay rebuilds really was that wide
    with gradviz.trace(values="none") as tr:
        x = gradviz.ones(3, requires_grad=True)
        gradviz.stack([x * i for i in range(50)]).sum().backward()
    assert max(len(s.ready) for s in states(tr.run())) == 50


def test_terminal_table_shows_buffers_and_what_was_freed() -> None:
    from rich.console import Console

    from gradviz.render.terminal import step_table

    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        w = gradviz.tensor([3.0, 4.0], requires_grad=True)
        (x * w + x * 5).sum().backward()
    con = Console(width=250, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    con.print(step_table(tr))
    text = con.export_text()
    assert "freed other, self" in text
    # x's AccumulateGrad: the second gradient finds the first in the buffer
    assert "buffer (2,) [5, 5] → (2,) [8, 9]" in text or "buffer (2,) [3, 4] → (2,) [8, 9]" in text
    assert "buffer None → " in text


@pytest.mark.parametrize("name", ["hooks", "error", "custom_function", "retain_graph"])
def test_typed_steps_round_trip_through_save_and_load(name: str, tmp_path: Path) -> None:
    tr = programs.record(name)
    tr.save(tmp_path / "t.json")
    again = gradviz.load_trace(tmp_path / "t.json")
    for run, back in zip(tr.runs, again.runs, strict=True):
        assert back.steps == run.steps  # the same classes, the same fields
        assert {type(s).__name__ for s in back.steps} >= {"ExecuteStep", "EnqueueStep"}
    kinds = {s.kind for r in again.runs for s in r.steps}
    assert {"hooks": "hook", "error": "error"}.get(name, "release_saved") in kinds


def test_a_shallow_copy_of_a_state_keeps_its_ready_queue() -> None:
    """states() yields one object updated step by step; copy.copy must keep each step's queue
    (the queue is replaced when it changes, never edited in place)."""
    import copy

    tr = programs.record("wide")
    kept = [copy.copy(s) for s in states(tr.run())]
    fresh = [list(s.ready) for s in states(tr.run())]
    assert [s.ready for s in kept] == fresh
    assert max(map(len, fresh)) == 6


def _waiting(st: Any) -> dict[str, dict[int, Any]]:
    return {node: dict(slots) for node, slots in st.buffers.items()}


def test_input_buffers_hold_what_arrived_until_their_node_is_popped() -> None:
    """x used twice: x's AccumulateGrad buffer holds the first gradient, then the sum, until
    the node runs; nothing is left waiting at the end."""
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        (x * 3 + x * 5).sum().backward()
    run = tr.run()
    by_name = {tr.nodes[s.node].name: s.node for s in run.steps if s.node is not None}
    acc_x = [s.index for s in run.steps if s.kind == "accumulate"
             and s.node == by_name["AccumulateGrad"]]
    first, second = (replay(run, k).buffers[by_name["AccumulateGrad"]] for k in acc_x)
    assert list(first) == list(second) == [0]
    # x * 5 was recorded last, so its MulBackward0 runs first and sends 5 first
    assert np.allclose(first[0]["values"], [5.0, 5.0])
    assert np.allclose(second[0]["values"], [8.0, 8.0])
    run_acc = next(s.index for s in run.steps if s.kind == "execute"
                   and s.node == by_name["AccumulateGrad"])
    assert by_name["AccumulateGrad"] not in replay(run, run_acc).buffers
    assert replay(run, -1).buffers == {}  # every buffer consumed by the end


@pytest.mark.parametrize("name", NAMES)
def test_waiting_buffers_agree_between_states_and_state_at(name: str) -> None:
    tr = programs.engines() if name == "engines" else programs.record(name)
    assert tr.runs
    for run in tr.runs:
        tl = timeline(run)
        walked = [(_waiting(st), list(st.ready)) for st in states(run)]
        looked_up = [_waiting(state_at(run, tl, k)) for k in range(len(run.steps))]
        assert [w for w, _ in walked] == looked_up
        # the rule, by hand: an accumulate sets its slot; a node's buffer is taken when the
        # node executes or leaves the ready queue (autograd.grad pops nodes it only captures)
        mine: dict[str, dict[int, Any]] = {}
        before: list[str] = []
        for step, (got, ready) in zip(run.steps, walked):
            if step.kind == "accumulate" and step.node is not None:
                mine.setdefault(step.node, {})[step.input_nr] = step.buffer
            for node in [*(n for n in before if n not in ready), step.node] * (
                    step.kind == "execute"):
                mine.pop(node, None)
            before = ready
            assert got == mine, (name, run.id, step.index)


# -- memory (NOTE [memory]) -----------------------------------------------------------------------
def saved_by(node: Any) -> dict[tuple, int]:
    """The non-leaf tensors ``node`` saves, read through its ``_saved_*`` attributes (PyTorch's
    API, on either engine), keyed by where their data lives: key -> bytes."""
    out = {}
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        values = getattr(node, attr)
        for t in values if isinstance(values, (tuple, list)) else [values]:
            if hasattr(t, "data_ptr") and hasattr(t, "is_leaf") and not t.is_leaf:
                key = (t.data_ptr(), tuple(t.shape), str(t.dtype))
                out[key] = t.element_size() * t.numel()
    return out


def check_memory_curve(lib: Any, loss: Any, chain: bool = False) -> None:
    """Run ``loss.backward()`` traced and compare the recorded memory curve with what the
    program itself sees: the saved activations of the nodes not yet run (read before the pass,
    node by node, with the nodes' own hooks telling which ran); for a ``chain`` (each node
    feeding one), the bytes of the one gradient sent, waiting in a buffer until its node runs."""
    nodes, todo = [], [loss.grad_fn]
    seen: set[int] = set()
    while todo:  # every node of the graph, without recursion
        n = todo.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        todo.extend(f for f, _ in n.next_functions)
    saves = {id(n): saved_by(n) for n in nodes}
    ran: list[int] = []
    for n in nodes:
        n.register_hook(lambda *_, n=n: ran.append(id(n)))
    with gradviz.trace(torch=lib is not gradviz) as tr:
        loss.backward()
    run = tr.run()
    m = memory(run, tr.nodes, tr.tensors)

    def held(done: int) -> int:
        gone = set(ran[:done])
        live: dict[tuple, int] = {}
        for n in nodes:
            if id(n) not in gone:
                live.update(saves[id(n)])
        return sum(live.values())

    assert m.saved[0] == held(0) > 0
    releases = [s.index for s in run.steps if s.kind == "release_saved"]
    executes = [s.index for s in run.steps if s.kind == "execute"
                and tr.nodes[s.node].kind != "graph_root"]
    assert len(executes) == len(ran)
    # After the j-th node ran and freed its saved tensors, the curve holds the others'.
    for rel in releases:
        j = sum(1 for e in executes if e < rel)
        assert m.saved[rel] == held(j), (rel, j)
    assert m.saved[-1] == 0
    if not chain:
        return
    # A chain's buffers: the gradient just sent waits until its node runs, then is taken.
    for s in run.steps:
        if s.kind == "execute":
            assert m.buffers[s.index] == 0
        elif s.kind == "accumulate":
            assert m.buffers[s.index] == np.prod(s.grad["shape"]) * 4  # float32


def test_the_memory_curve_is_what_the_program_holds() -> None:
    gradviz.manual_seed(0)
    x = gradviz.randn(50, 20, requires_grad=True)
    w = gradviz.randn(20, 30, requires_grad=True)
    h = (x @ w).tanh()  # tanh saves its result; mm saves its (leaf) inputs: not counted
    loss = (h.exp() * h.sigmoid()).sum()  # exp and sigmoid save results, mul both sides
    check_memory_curve(gradviz, loss)
    x = gradviz.randn(40, 10, requires_grad=True)
    check_memory_curve(gradviz, x.exp().tanh().sigmoid().sum(), chain=True)


def test_the_memory_curve_stays_flat_when_the_graph_is_retained() -> None:
    x = gradviz.ones(100, requires_grad=True)
    with gradviz.trace() as tr:
        x.exp().sum().backward(retain_graph=True)
    m = memory(tr.run(), tr.nodes, tr.tensors)
    assert m.saved == [400] * len(tr.run().steps)
    assert m.per_node == {tr.tensors[t].grad_fn: 400 for t in tr.tensors
                          if tr.tensors[t].grad_fn is not None
                          and tr.nodes[tr.tensors[t].grad_fn].name == "ExpBackward0"}
