"""The tracer records what really happened, as plain data, and never changes results."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import gradviz as torch
from gradviz.autograd import events
from gradviz.autograd.function import Function
from gradviz.trace import TraceFormatError, load_trace
from gradviz.trace.replay import states


def _seed_program():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
    z = x ** 2 + y ** 3
    z.backward(torch.ones_like(x))
    return x, y, z


def _node_names(t):
    names, stack, seen = [], [t.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(type(n).__name__)
        stack.extend(nxt for nxt, _ in n.next_functions)
    return names


def test_seed_steps_follow_pytorch_order_with_dependencies_and_edge_gradients():
    with torch.trace() as tr:
        x, y, z = _seed_program()
    run = tr.run()
    nodes = tr.nodes
    executed = [nodes[s.node].name for s in run.steps if s.kind == "execute"]
    # PyTorch: Add first; then the later PowBackward0 (y ** 3, higher sequence_nr); y's
    # AccumulateGrad as soon as it is ready; then x's branch.
    assert executed == ["AddBackward0", "PowBackward0", "AccumulateGrad", "PowBackward0",
                        "AccumulateGrad"]
    exec_steps = [s for s in run.steps if s.kind == "execute"]
    assert nodes[exec_steps[2].node].variable in tr.tensors
    assert tr.tensors[nodes[exec_steps[2].node].variable].name == "y"
    assert tr.tensors[nodes[exec_steps[4].node].variable].name == "x"
    # Dependencies: every non-root node has exactly one incoming edge in this graph.
    deps = run.steps[0]
    assert deps.kind == "compute_dependencies"
    assert sorted(deps.counts.values()) == [1, 1, 1, 1]
    assert run.graph_root not in deps.counts
    # The gradient sent along each edge: d(x**2)/dx = 2x into x's accumulator, 3y**2 into y's.
    sent = {(s.source, s.node): s.grad["values"]
            for s in run.steps if s.kind == "accumulate"}
    pow_x = tr.tensors[tr.ops[0].outputs[0]].grad_fn
    acc_x = nodes[pow_x].next_functions[0][0]
    assert np.allclose(sent[(pow_x, acc_x)], [2.0, 4.0, 6.0])
    pow_y = tr.tensors[tr.ops[1].outputs[0]].grad_fn
    acc_y = nodes[pow_y].next_functions[0][0]
    assert np.allclose(sent[(pow_y, acc_y)], [0.75, 3.0, 6.75])
    leaf_steps = [s for s in run.steps if s.kind == "leaf_grad"]
    assert [tr.tensors[s.tensor].name for s in leaf_steps] == ["y", "x"]
    assert leaf_steps[0].before is None
    assert np.allclose(leaf_steps[0].after["values"], [0.75, 3.0, 6.75])
    assert run.steps[-1].kind == "done"


def test_ready_queue_and_remaining_counts_are_recorded():
    with torch.trace() as tr:
        _seed_program()
    run = tr.run()
    enq = [s for s in run.steps if s.kind == "enqueue"]
    # An enqueue records the node and its priority, PyTorch's -sequence_nr (newest first).
    assert all(s.priority == -tr.nodes[s.node].sequence_nr for s in enq)
    # After both Pow nodes became ready the replayed queue holds both, the later one first.
    both = next(st.ready for st in states(run) if len(st.ready) == 2)
    assert [tr.nodes[n].name for n in both] == ["PowBackward0", "PowBackward0"]
    assert tr.nodes[both[0]].sequence_nr > tr.nodes[both[1]].sequence_nr
    assert all(s.remaining == 0 for s in run.steps if s.kind == "accumulate")


def test_traced_and_untraced_runs_give_identical_gradients_and_node_names():
    torch.manual_seed(0)
    x1, y1, z1 = _seed_program()
    with torch.trace(values="all"):
        x2, y2, z2 = _seed_program()
    assert np.array_equal(x1.grad.numpy(), x2.grad.numpy())
    assert np.array_equal(y1.grad.numpy(), y2.grad.numpy())
    assert _node_names(z1) == _node_names(z2)

    def mlp_step():
        torch.manual_seed(3)
        inp = torch.randn(8, 4)
        w1 = torch.randn(4, 6, requires_grad=True)
        b1 = torch.zeros(6, requires_grad=True)
        w2 = torch.randn(6, 1, requires_grad=True)
        loss = ((torch.tanh(inp @ w1 + b1) @ w2 - 1.0) ** 2).mean()
        loss.backward()
        return [p.grad.numpy().copy() for p in (w1, b1, w2)], _node_names(loss)

    plain = mlp_step()
    with torch.trace():
        traced = mlp_step()
    assert plain[1] == traced[1]
    for a, b in zip(plain[0], traced[0]):
        assert np.array_equal(a, b)


def test_forward_record_names_shapes_and_user_source_lines():
    with torch.trace() as tr:
        w = torch.ones(2, 3, requires_grad=True)
        v = torch.ones(3)
        out = (w @ v).sum()  # the line the ops must point at
    assert out.grad_fn.name() == "SumBackward0"
    line = next(i for i, s in enumerate(open(__file__).read().splitlines(), 1)
                if "the line the ops must point at" in s and "out = " in s)
    assert [op.name for op in tr.ops] == ["mv", "sum"]
    for op in tr.ops:
        assert op.source.file == __file__
        assert op.source.line == line
        assert "w @ v" in op.source.code
    names = {t.name for t in tr.tensors.values()}
    assert {"w", "v", "out"} <= names
    mv = tr.ops[0]
    assert [tr.tensors[i].shape for i in mv.inputs] == [[2, 3], [3]]
    assert tr.nodes[mv.node].name == "MvBackward0"
    assert tr.nodes[mv.node].forward_op == mv.id


def test_source_never_points_into_gradviz_internals():
    class Square(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    with torch.trace() as tr:
        a = torch.ones(2, requires_grad=True)
        Square.apply(a).sum().backward()
    pkg = os.path.dirname(torch.__file__)
    for op in tr.ops:
        assert not op.source.file.startswith(pkg), op
    assert "Square" in [op.name for op in tr.ops]


def test_explicit_names_win_over_variable_names():
    with torch.trace() as tr:
        x = torch.ones(2, requires_grad=True)
        x.name = "weights"
        _ = x * 2
    assert tr.tensors[tr.ops[0].inputs[0]].name == "weights"


def test_error_in_custom_backward_is_recorded_and_reraised_unchanged():
    class Boom(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    with torch.trace() as tr:
        a = torch.ones(2, requires_grad=True)
        y = Boom.apply(a).sum()
        with pytest.raises(ValueError, match="^boom in backward$") as info:
            y.backward()
    assert type(info.value) is ValueError
    run = tr.run()
    assert run.error == {"type": "ValueError", "message": "boom in backward"}
    assert run.steps[-1].kind == "error"
    assert tr.nodes[run.steps[-1].node].name == "BoomBackward"


def test_saved_values_are_recorded_with_pytorch_names():
    with torch.trace() as tr:
        x = torch.ones(3, requires_grad=True)
        y = x.exp()
        z = (x * y).sum()
        del z
    nodes = {n.name: n for n in tr.nodes.values()}
    assert [s.name for s in nodes["ExpBackward0"].saved] == ["result"]
    assert nodes["ExpBackward0"].saved[0].is_output
    mul_saved = {s.name: s for s in nodes["MulBackward0"].saved}
    assert set(mul_saved) == {"self", "other"}
    assert tr.tensors[mul_saved["self"].tensor].name == "x"


def test_keep_runs_bounds_a_training_loop():
    w = torch.ones(4, requires_grad=True)
    with torch.trace(keep_runs=2) as tr:
        for _ in range(10):
            loss = (w * w).sum()
            loss.backward()
    assert len(tr.runs) == 2
    assert tr.runs_total == 10
    assert [r.id for r in tr.runs] == ["run8", "run9"]
    assert len(tr.ops) == 4  # mul + sum of the last two iterations
    assert len(tr.nodes) <= 6
    assert "last 2 kept" in tr.summary()


def test_values_modes():
    big = torch.arange(100.0).requires_grad_()
    with torch.trace(values="small") as small:
        (big * 2).sum()
    with torch.trace(values="none") as none:
        (big * 2).sum()
    with torch.trace(values="all") as every:
        (big * 2).sum()
    leaf = lambda tr: tr.tensors[tr.ops[0].inputs[0]].value  # noqa: E731
    assert "values" not in leaf(small) and leaf(small)["stats"]["max"] == 99.0
    assert leaf(none) == {"shape": [100], "dtype": "float32"}
    assert len(leaf(every)["values"]) == 100
    with pytest.raises(ValueError, match="values must be one of"):
        torch.trace(values="some")
    with pytest.raises(ValueError, match="keep_runs"):
        torch.trace(keep_runs=0)


def test_no_listener_left_behind_and_no_cost_when_off():
    before = events.listeners()
    with torch.trace():
        assert len(events.listeners()) == len(before) + 1
    assert events.listeners() == before
    with pytest.raises(RuntimeError):
        with torch.trace():
            raise RuntimeError("user error")
    assert events.listeners() == before


def test_json_round_trip_is_stable(tmp_path):
    with torch.trace() as tr:
        _seed_program()
    p1, p2 = tmp_path / "a.json", tmp_path / "b.json"
    tr.save(p1)
    again = load_trace(p1)
    again.save(p2)
    assert p1.read_text() == p2.read_text()
    assert again.summary() == tr.summary()
    data = json.loads(p1.read_text())
    assert data["schema"] == "gradviz.trace/2"


@pytest.mark.parametrize("content, message", [
    ("not json at all", r"bad\.json: line 1, column 1: not valid JSON"),
    ('{"hello": 1}', "schema: missing: not a gradviz trace"),
    ('[1, 2]', "schema: missing: not a gradviz trace"),
    ('{"schema": "gradviz.trace/99", "tensors": [], "ops": [], "nodes": [], "runs": [],'
     ' "options": {}}', "newer than this gradviz understands"),
    ('{"schema": "other/1"}', "expected 'gradviz.trace/2'"),
    ('{"schema": "gradviz.trace/0"}', "unsupported schema version 'gradviz.trace/0'"),
    ('{"schema": "gradviz.trace/-1"}', "unsupported schema version 'gradviz.trace/-1'"),
    ('{"schema": "gradviz.trace/2", "gradviz_version": "0", "tensors": {}, "ops": [],'
     ' "nodes": [], "runs": [], "options": {}}', "tensors: expected a list, got an object"),
])
def test_malformed_files_give_one_clear_error(tmp_path, content, message):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(TraceFormatError, match=message):
        load_trace(p)


def test_malformed_field_names_its_path(tmp_path):
    with torch.trace() as tr:
        _seed_program()
    data = tr.to_dict()
    data["runs"][0]["steps"][3]["kind"] = 7
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(TraceFormatError,
                       match=r"runs\[0\]\.steps\[3\]\.kind: expected one of .*, got 7$"):
        load_trace(p)
    data = tr.to_dict()
    data["nodes"][0]["next_functions"] = [["n999", 0]]
    p.write_text(json.dumps(data))
    with pytest.raises(TraceFormatError,
                       match=r"nodes\[0\]\.next_functions\[0\]\[0\]: unknown node id 'n999'"):
        load_trace(p)


def test_graph_of_builds_the_backward_model_without_tracing():
    x = torch.ones(2, requires_grad=True)
    x.name = "x"
    z = (x * 2).sum()
    g = torch.graph_of(z)
    names = sorted(n.name for n in g.nodes.values())
    assert names == ["AccumulateGrad", "MulBackward0", "SumBackward0"]
    (root, nr), = g.roots
    assert g.nodes[root].name == "SumBackward0" and nr == 0
    acc = next(n for n in g.nodes.values() if n.kind == "accumulate_grad")
    assert g.tensors[acc.variable].name == "x"
    assert set(g.edges()) == {(root, g.nodes[root].next_functions[0][0], 0),
                              (g.nodes[root].next_functions[0][0], acc.id, 0)}


def test_graph_of_a_deep_chain_is_iterative():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0
    g = torch.graph_of(y)
    assert len(g.nodes) == 20_001


def test_inplace_versions_get_new_ids_and_keep_the_graph_acyclic():
    with torch.trace() as tr:
        a = torch.ones(2, requires_grad=True)
        b = a * 2
        b.add_(1)
        b.sum().backward()
    add = next(op for op in tr.ops if op.name == "add_")
    assert add.inplace
    assert add.inputs[0] != add.outputs[0]
    assert tr.tensors[add.outputs[0]].name == "b (v1)"


def test_summary_and_repr():
    with torch.trace() as tr:
        _seed_program()
    assert tr.summary() == ("gradviz trace: 3 ops, 5 tensors, 5 backward nodes, 1 backward run,"
                            f" {len(tr.run().steps)} steps")
    assert repr(tr).startswith("<Trace 3 ops")
    with torch.trace() as empty:
        pass
    with pytest.raises(IndexError, match="never called"):
        empty.run()
