"""The recorder's flat rows and shared tuples (NOTE [perf: flat records], [perf: shared records]
in gradviz/trace/recorder.py) record exactly what the tuples did.

Issue #16: tracing a chain of tiny ops kept about seven objects per op that the cyclic garbage
collector counts, so it ran three times as often as without tracing. These tests pin what the
cheaper records must keep: each constant its own type and sign, records read in the middle of
recording and then extended, saved values a hook packs after a read, and few counted objects.
"""

from __future__ import annotations

import gc
import json
import math

import gradviz as torch


def _consts(tr):
    return [[i["const"] for i in op.inputs if isinstance(i, dict)] for op in tr.ops]


def test_shared_constants_keep_their_type_and_sign():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(2):  # the second iteration reuses the shared tuples
            y = x * 1
            y = y * 1.0
            y = y * 0.0
            y = y * -0.0
            y = y + 2.5
            y = y * float("nan")
    consts = _consts(tr)
    assert [type(c[0]).__name__ for c in consts[:6]] == ["int", "float", "float", "float",
                                                        "float", "str"]
    assert consts[:6] == consts[6:]
    assert math.copysign(1.0, consts[2][0]) == 1.0 and math.copysign(1.0, consts[3][0]) == -1.0
    text = tr.to_json()
    assert '"const": -0.0' in text and '"const": 0.0' in text and '"const": 1}' in text
    # Saved numbers too: mul's saved ``other`` is 1 for ``x * 1``, 1.0 for ``* 1.0``.
    saved = [s.value["const"] for n in tr.nodes.values() if n.name == "MulBackward0"
             for s in n.saved if s.name == "other"]
    assert saved[:2] == [1, 1.0] and [type(v) for v in saved[:2]] == [int, float]


def test_each_record_gets_its_own_constant_dict():
    # One shared tuple per number while recording; separate dicts in the model, as before.
    with torch.trace() as tr:
        x = torch.tensor([1.0], requires_grad=True)
        a = x * 3.0
        b = a * 3.0
        b.sum().backward()
    first, second = (op.inputs[1] for op in tr.ops[:2])
    assert first == second == {"const": 3.0} and first is not second
    muls = [n for n in tr.nodes.values() if n.name == "MulBackward0"]
    assert muls[0].saved[0].value is not muls[1].saved[0].value


def test_saved_sizes_are_shared_while_recording_and_separate_lists_in_the_model():
    # NOTE [perf: shared sizes]: equal size tuples are one record while recording; the model
    # gives every saved entry a list of its own, and the JSON is what it always was.
    with torch.trace() as tr:
        x = torch.ones(2, 3, requires_grad=True)
        a, b = x.reshape(3, 2), x.reshape(3, 2)  # each ViewBackward0 saves self_sym_sizes
        (a.sum() + b.sum()).backward()
        raw = [e for rec in tr._raw_nodes.values() if rec[0] == "ViewBackward0" for e in rec[6]]
        assert [e[0] for e in raw] == ["self_sym_sizes"] * 2 and raw[0][3] is raw[1][3]
    sizes = [s.value for n in tr.nodes.values() if n.name == "ViewBackward0" for s in n.saved
             if s.name == "self_sym_sizes"]
    assert sizes == [{"const": [2, 3]}] * 2
    assert sizes[0]["const"] is not sizes[1]["const"]
    sizes[0]["const"].append(7)  # a reader editing one record leaves the other alone
    assert sizes[1] == {"const": [2, 3]}
    assert '"self_sym_sizes"' in tr.to_json()


def test_a_tuple_holding_bools_or_floats_never_takes_an_int_tuples_record():
    from gradviz.trace import recorder

    assert recorder._const((1, 2)) is recorder._const((1, 2))  # shared: ints only
    # (True, 2) == (1, 2) and (1.0, 2) == (1, 2), with equal hashes: each keeps its own types.
    flags, floats = recorder._const((True, 2))[0], recorder._const((1.0, 2))[0]
    assert [type(v) for v in flags] == [bool, int] and [type(v) for v in floats] == [float, int]
    assert recorder._const((-0.0, 1))[0] == [-0.0, 1]
    assert math.copysign(1.0, recorder._const((-0.0, 1))[0][0]) == -1.0


def test_reading_mid_recording_then_recording_more():
    with torch.trace() as tr, torch.trace() as untouched:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x.tanh()
        assert [op.name for op in tr.ops] == ["tanh"]  # rows unpacked and built here
        z = (y * 2).exp()
        assert len(tr.nodes) == 4 and [op.name for op in tr.ops] == ["tanh", "mul", "exp"]
        z.sum().backward()
    assert tr.tensors[tr.ops[2].outputs[0]].name == "z"
    assert tr.to_json() == untouched.to_json()
    assert json.loads(tr.to_json())["tensors"]


def test_a_hook_packing_after_a_read_updates_the_saved_entry():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        assert tr.ops  # y's node is now a built record, not a flat row
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 1, lambda t: t)
        z = x.exp()
        z.grad_fn._raw_saved_result.register_hooks(lambda t: t * 1, lambda t: t)
        (y + z).sum().backward()
    hooked = {(n.name, s.name): s.pack_hook is not None for n in tr.nodes.values()
              for s in n.saved if n.name in ("MulBackward0", "ExpBackward0")}
    assert hooked == {("MulBackward0", "self"): True, ("MulBackward0", "other"): False,
                      ("ExpBackward0", "result"): True}


def _chain(x, n):
    y = x
    for _ in range(n):
        y = (y * 1.0001 + 0.001).tanh()
    return y


def _kept_per_op(traced: bool, n: int = 300) -> float:
    """Objects the collector counts that the forward chain leaves behind, per op.

    The trace's map of tensor ids drops dead tensors' entries lazily, when it has doubled
    (NOTE [perf] at _TensorIds): how many wait there depends on whether the allocator gives a
    dead tensor's address to the next one (Python 3.11 mostly does, 3.13 mostly not). They
    are swept before counting, so what is counted is what the trace keeps."""
    x = torch.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        tr = torch.trace(values="small", keep_runs=1)
        if traced:
            tr.__enter__()
        try:
            _chain(x, 3)  # warm: caches of code, shapes and constants
            tr._tids.sweep()
            start = gc.get_count()[0]
            y = _chain(x, n)
            tr._tids.sweep()
            kept = gc.get_count()[0] - start
        finally:
            if traced:
                tr.__exit__(None, None, None)
        del y
    finally:
        if was:
            gc.enable()
    return kept / (3 * n)


def test_tracing_keeps_few_counted_objects_per_op():
    # Untraced, the graph itself keeps about 4.7 per op (nodes, edges, saved values); the
    # records kept seven more before the flat rows, now under one (a weak reference per node).
    extra = _kept_per_op(True) - _kept_per_op(False)
    assert extra < 2.0, extra


# -- the steps of a run (NOTE [perf: flat steps]) ----------------------------------------------
def _steps_program():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    w = torch.tensor([[1.0, 0.5], [2.0, -1.0]], requires_grad=True)
    b = torch.tensor([0.25, -0.5], requires_grad=True)
    h, k = x.chunk(2)  # SplitBackward0: receives two gradients
    h.register_hook(lambda g: g * 2)  # a hook step, recorded by keyword
    m = torch.addmm(b, k.view(1, 2), w)  # AddmmBackward0: sends three gradients
    (h.sum() * 3 + m.sum()).backward()
    return x, w, b


def test_a_runs_steps_read_back_as_recorded():
    with torch.trace() as tr:
        x, w, b = _steps_program()
    run = tr.run()
    assert len(run.steps) == tr.run_log[-1]["steps"]
    kinds = [s.kind for s in run.steps]
    assert kinds[0] == "compute_dependencies" and kinds[-1] == "done"
    assert {"enqueue", "execute", "accumulate", "release_saved", "leaf_grad", "hook"} <= set(kinds)
    for s in run.steps:
        if s.kind == "execute":  # as many gradients as the node has outputs and edges
            node = tr.nodes[s.node]
            assert len(s.grad_outputs) == node.num_outputs
            assert len(s.grad_inputs) == (0 if node.kind == "accumulate_grad"
                                          else len(node.next_functions))
    split = next(s for s in run.steps if s.kind == "execute"
                 and tr.nodes[s.node].name == "SplitBackward0")
    # h's gradient: 3, doubled by the hook; k's: ones(1, 2) @ w.T
    assert [g["values"] for g in split.grad_outputs] == [[6.0, 6.0], [1.5, 1.0]]
    assert split.grad_inputs[0]["values"] == [6.0, 6.0, 1.5, 1.0]
    addmm = next(s for s in run.steps if s.kind == "execute"
                 and tr.nodes[s.node].name == "AddmmBackward0")
    assert [g["values"] for g in addmm.grad_inputs] == [[1.0, 1.0], [[1.5, 1.0]],
                                                        [[3.0, 3.0], [4.0, 4.0]]]
    hook = next(s for s in run.steps if s.kind == "hook")
    assert hook.hook == "tensor" and "lambda" in hook.fn
    leaf = {tr.tensors[s.tensor].name: s.after["values"] for s in run.steps
            if s.kind == "leaf_grad"}
    assert leaf == {"x": x.grad.tolist(), "w": w.grad.tolist(), "b": b.grad.tolist()}
    enqueued = [s.node for s in run.steps if s.kind == "enqueue"]
    assert sorted(enqueued) == sorted(run.nodes)  # every node became ready once


def test_a_step_cut_short_is_never_read():
    # An interrupt may come between a step's fields and the note of where it starts: such a
    # partial row is left in the flat list and must not shift the steps after it.
    class Cut(Exception):
        pass

    with torch.trace() as whole:
        _steps_program()
    with torch.trace() as tr:
        real = type(tr)._add_step

        def cut_once(self, row):
            if row[0] == "done" and not getattr(self, "_was_cut", False):
                self._was_cut = True
                self._steps += ("enqueue", "n0")  # the first fields of a step, never noted
            real(self, row)

        type(tr)._add_step = cut_once
        try:
            _steps_program()
        finally:
            type(tr)._add_step = real
    assert [s.kind for s in tr.run().steps] == [s.kind for s in whole.run().steps]
    assert json.loads(tr.to_json())["runs"][0]["steps"][-1]["kind"] == "done"
