"""The SINGA and MXNet engines: same gradients as the PyTorch-style engine, each with its own
character (SINGA's early yields and LIFO order; MXNet's record/grad_req/gradient graph), and all
three schedules traced in the shared vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
from gradviz.autograd import Function, events
from gradviz.autograd.graph import FREED_MESSAGE
from gradviz.engines import mxnet as mx
from gradviz.engines import singa
from gradviz.trace import compare_engines

TOL = 1e-12
rng = np.random.default_rng(0)


def leaf(*shape: int, requires_grad: bool = True, name: str | None = None) -> gradviz.Tensor:
    t = gradviz.tensor(rng.standard_normal(shape), dtype=gradviz.float64,
                       requires_grad=requires_grad)
    if name:
        t.name = name
    return t


# -- the battery ---------------------------------------------------------------------------------
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class TwoWays(Function):
    """Two outputs, x*2 and x*3: programs may use only one (MXNet then needs a zero node)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g2, g3):
        return g2 * 2 + g3 * 3


def shared(x, y):
    a = x * y
    b = a.tanh()
    return (a * b + b + a).sum()


def several_outputs(x, y):
    return (x * 2).sum() + (x * y).mean() + (y ** 2).sum()


def unused_input(x, y, z):
    return (x * y).sum()


def broadcasting(x, b, c):
    return ((x + b) * c).sum()


def mlp(x, w1, b1, w2, b2):
    h = (x @ w1 + b1).tanh()
    return ((h @ w2 + b2) ** 2).mean()


def custom(x, y):
    return (Cube.apply(x) * y).sum()


def multi_output_unused(x, y):
    two, _three = TwoWays.apply(x)
    return (two * y).sum()


def seed(x, y):
    return (x ** 2 + y ** 3).sum()


PROGRAMS = {
    "shared": (shared, lambda: (leaf(3), leaf(3))),
    "several_outputs": (several_outputs, lambda: (leaf(2, 3), leaf(2, 3))),
    "unused_input": (unused_input, lambda: (leaf(3), leaf(3), leaf(3))),
    "broadcasting": (broadcasting, lambda: (leaf(4, 3), leaf(3), leaf(4, 1))),
    "mlp": (mlp, lambda: (leaf(5, 4, requires_grad=False), leaf(4, 8), leaf(8), leaf(8, 2),
                          leaf(2))),
    "custom_function": (custom, lambda: (leaf(3), leaf(3))),
    "multi_output_unused": (multi_output_unused, lambda: (leaf(3), leaf(3))),
    "seed": (seed, lambda: (leaf(5, 5), leaf(5, 5))),
}


def copies(inputs: tuple) -> list[gradviz.Tensor]:
    return [gradviz.tensor(t._data.copy(), requires_grad=t.requires_grad) for t in inputs]


def pytorch_grads(fn, inputs) -> list:
    xs = copies(inputs)
    fn(*xs).backward()
    return [x.grad for x in xs]


def assert_same(expected: list, got: list) -> None:
    assert len(expected) == len(got)
    for e, g in zip(expected, got, strict=True):
        if e is None:
            assert g is None
        else:
            assert g is not None
            assert g.dtype == gradviz.float64
            np.testing.assert_allclose(g._data, e._data, rtol=0, atol=TOL)


@pytest.mark.parametrize("name", PROGRAMS)
def test_singa_gives_the_default_engines_gradients(name):
    fn, make = PROGRAMS[name]
    inputs = make()
    expected = pytorch_grads(fn, inputs)
    xs = copies(inputs)
    got = singa.gradients(fn(*xs))
    assert all(x.grad is None for x in xs)  # SINGA yields; it does not write .grad
    assert_same(expected, [got[x] if x in got else None for x in xs])


@pytest.mark.parametrize("name", PROGRAMS)
def test_mxnet_gives_the_default_engines_gradients(name):
    fn, make = PROGRAMS[name]
    inputs = make()
    expected = pytorch_grads(fn, inputs)
    xs = copies(inputs)
    with mx.record():
        loss = fn(*xs)
    mx.backward(loss)
    assert_same(expected, [x.grad for x in xs])
    # and mx.grad, which leaves .grad alone and gives zeros for an unused variable
    ys = copies(inputs)
    wanted = [y for y in ys if y.requires_grad]
    with mx.record():
        loss = fn(*ys)
    got = mx.grad(loss, wanted)
    assert all(y.grad is None for y in ys)
    exp = [e if e is not None else gradviz.zeros(*y.shape, dtype=gradviz.float64)
           for e, y in zip(expected, ys, strict=True) if y.requires_grad]
    assert_same(exp, got)


@pytest.mark.parametrize("name", PROGRAMS)
def test_compare_engines_agrees(name):
    fn, make = PROGRAMS[name]
    c = compare_engines(fn, *make())
    assert [r.engine for r in c.reports] == ["pytorch", "singa", "mxnet"]
    assert c["singa"].max_abs_diff <= TOL
    assert c["mxnet"].max_abs_diff <= TOL


def test_mxnet_create_graph_gives_second_order_gradients():
    x0, w0 = leaf(3), leaf(3)
    # PyTorch-style: z = |d/dx sum(x^3 w)|^2, differentiated again.
    x, w = copies((x0, w0))
    (dx,) = gradviz.autograd.grad((x ** 3 * w).sum(), x, create_graph=True)
    (dx * dx).sum().backward()
    # MXNet: grad(create_graph=True) records the gradient graph's computation.
    mx_x, mx_w = copies((x0, w0))
    with mx.record():
        y = (mx_x ** 3 * mx_w).sum()
        (mdx,) = mx.grad(y, [mx_x], create_graph=True)
        z = (mdx * mdx).sum()
    assert mdx.grad_fn is not None
    np.testing.assert_allclose(mdx._data, dx._data, atol=TOL, rtol=0)
    mx.backward(z)
    assert_same([x.grad, w.grad], [mx_x.grad, mx_w.grad])


# -- SINGA's character --------------------------------------------------------------------------
class Executed:
    """A listener collecting the nodes engines execute, by name."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.events: list[tuple[str, dict]] = []

    def __call__(self, event: str, data: dict) -> None:
        self.events.append((event, data))
        if event == "execute":
            self.names.append(type(data["node"]).__name__)

    def __enter__(self) -> Executed:
        events.add_listener(self)
        return self

    def __exit__(self, *exc: object) -> None:
        events.remove_listener(self)


def test_singa_yields_a_parameter_before_the_pass_ends():
    w1, w2 = leaf(3, name="w1"), leaf(3, name="w2")
    loss = (w1.exp() * 3).sum() + (w2 * 2).sum()  # LIFO: w2's branch runs first
    with Executed() as seen:
        gen = singa.backward(loss)
        p, g = next(gen)
        assert p is w2
        np.testing.assert_allclose(g._data, np.full(3, 2.0))
        assert "ExpBackward0" not in seen.names  # w1's branch is still pending
        assert seen.names == ["AddBackward0", "SumBackward0", "MulBackward0"]
        rest = list(gen)
    assert [p for p, _ in rest] == [w1]
    assert "ExpBackward0" in seen.names
    assert [e for e, _ in seen.events][-1] == "backward_end"


def test_singa_runs_the_ready_deque_last_in_first_out():
    w1, w2 = leaf(3), leaf(3)
    a = (w1 * 2).exp()  # created first
    b = (w2 * 3).tanh()
    loss = (b + a).sum()  # AddBackward0 sends to b's branch, then a's: a's is popped first
    with Executed() as seen:
        order = [p for p, _ in singa.backward(loss, retain_graph=True)]
    assert seen.names == ["SumBackward0", "AddBackward0", "ExpBackward0", "MulBackward0",
                          "TanhBackward0", "MulBackward0"]
    assert order[0] is w1 and order[1] is w2
    with Executed() as seen:  # PyTorch's priority queue: the newest node first
        loss.backward()
    assert seen.names == ["SumBackward0", "AddBackward0", "TanhBackward0", "MulBackward0",
                          "AccumulateGrad", "ExpBackward0", "MulBackward0", "AccumulateGrad"]


def test_singa_counts_ops_and_tensors():
    x = leaf(3)
    y = x * x
    op_dep, tensor_dep = singa.infer_dependency((y + y).sum().grad_fn)
    counts = {type(n).__name__: c for n, c in op_dep.items()}
    assert counts == {"AddBackward0": 1, "MulBackward0": 2, "AccumulateGrad": 2}
    assert sorted(tensor_dep.values()) == [1, 2, 2]


@pytest.mark.parametrize("dy", [2.5, gradviz.tensor(2.5, dtype=gradviz.float64),
                                gradviz.tensor([2.5], dtype=gradviz.float64)])
def test_singa_dy_as_number_or_tensor(dy):
    x = leaf(4)
    got = singa.gradients((x * x).sum(), dy)
    np.testing.assert_allclose(got[x]._data, 2.5 * 2 * x._data, atol=TOL, rtol=0)


def test_singa_y_must_hold_a_single_value():
    x = leaf(3)
    gen = singa.backward(x * 2)  # a generator: the check runs when iteration starts
    with pytest.raises(AssertionError, match=r"y must be a Tensor with a single value; size of "
                                             r"y is 3"):
        next(gen)
    with pytest.raises(AssertionError, match="wrong input type"):
        singa.gradients(3.0)


def test_singa_frees_saved_values_unless_retain_graph():
    x = leaf(3)
    loss = (x * x).sum()
    singa.gradients(loss, retain_graph=True)
    singa.gradients(loss)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        singa.gradients(loss)
    assert "second time" in FREED_MESSAGE


def test_singa_yields_a_leaf_y_itself_and_keys_by_identity():
    x = gradviz.tensor(3.0, dtype=gradviz.float64, requires_grad=True)
    got = singa.gradients(x, 4.0)
    assert list(got) == [x] and float(got[x]) == 4.0
    twin = gradviz.tensor(3.0, dtype=gradviz.float64, requires_grad=True)  # equal, not same
    assert twin not in got
    with pytest.raises(KeyError):
        got[twin]


def test_singa_stopping_early_closes_the_traced_run():
    w1, w2 = leaf(2), leaf(2)
    with gradviz.trace() as tr:
        loss = (w1 * w1).sum() + (w2 * 3).sum()
        for _p, _g in singa.backward(loss):
            break
    run = tr.run()
    assert run.engine == "singa" and run.steps[-1].kind == "done"
    assert run.steps[-1].engine_data == {"stopped_early": True}


# -- MXNet's character --------------------------------------------------------------------------
def test_mxnet_records_only_inside_record():
    x = mx.attach_grad(leaf(3))
    assert not mx.is_recording() and not mx.is_training()
    with mx.record():
        assert mx.is_recording() and mx.is_training() and gradviz.is_grad_enabled()
        y = (x * 2).sum()
        with mx.pause():
            assert not mx.is_recording() and not gradviz.is_grad_enabled()
            z = x * 2
    assert not z.requires_grad
    assert not mx.is_recording() and gradviz.is_grad_enabled()
    assert mx._mark_recorded not in events.listeners()  # no listener once nobody records
    outside = (x * 2).sum()  # plain gradviz code keeps PyTorch's semantics...
    assert outside.requires_grad
    with pytest.raises(mx.MXNetError) as e:  # ...but it is not in MXNet's graph
        mx.backward(outside)
    assert str(e.value) == mx.NOT_IN_GRAPH
    mx.backward(y)
    np.testing.assert_allclose(x.grad._data, np.full(3, 2.0))


def test_mxnet_recording_is_per_thread():
    import threading

    seen = []
    with mx.record():
        t = threading.Thread(target=lambda: seen.append((mx.is_recording(),
                                                         gradviz.is_grad_enabled())))
        t.start()
        t.join()
        assert mx.is_recording()
    assert seen == [(False, True)]  # another thread keeps PyTorch's defaults


def test_mxnet_values_recorded_outside_are_constants():
    x = mx.attach_grad(leaf(3))
    c = x * 2  # recorded by gradviz, not by MXNet
    with mx.record():
        y = (c * x).sum()
    mx.backward(y)
    np.testing.assert_allclose(x.grad._data, c._data, atol=TOL, rtol=0)  # not 4x


def test_mxnet_grad_req_write_add_null():
    w = mx.attach_grad(leaf(3), grad_req="add")
    v = mx.attach_grad(leaf(3), grad_req="write")
    n = mx.attach_grad(leaf(3), grad_req="null")
    for _ in range(2):
        with mx.record():
            loss = (w * v * n).sum()
        mx.backward(loss)
    np.testing.assert_allclose(w.grad._data, 2 * v._data * n._data, atol=TOL, rtol=0)
    np.testing.assert_allclose(v.grad._data, w._data * n._data, atol=TOL, rtol=0)
    assert np.all(n.grad._data == 0)  # "null": untouched
    with mx.record():
        only_null = (n * 3).sum()
    with pytest.raises(mx.MXNetError, match=f"^{mx.NO_INPUTS}$"):
        mx.backward(only_null)
    with pytest.raises(ValueError, match="grad_req"):
        mx.attach_grad(leaf(2), grad_req="sometimes")


def test_mxnet_head_gradients_default_to_ones():
    x = mx.attach_grad(leaf(2, 3))
    with mx.record():
        y = x * x  # not a scalar
    mx.backward(y, retain_graph=True)
    np.testing.assert_allclose(x.grad._data, 2 * x._data, atol=TOL, rtol=0)
    head = gradviz.full((2, 3), 0.5, dtype=gradviz.float64)
    mx.backward(y, head)
    np.testing.assert_allclose(x.grad._data, x._data, atol=TOL, rtol=0)


def test_mxnet_several_heads_and_a_variable_as_head():
    x0 = leaf(3)
    x, mxx = copies((x0, x0))
    y1, y2 = x * x, (x * 3).sum()
    gradviz.autograd.backward([y1, y2], [gradviz.ones_like(y1), None])
    with mx.record():
        h1, h2 = mxx * mxx, (mxx * 3).sum()
    mx.backward([h1, h2])
    assert_same([x.grad], [mxx.grad])
    v = mx.attach_grad(leaf(2))
    mx.backward(v, gradviz.full((2,), 7.0, dtype=gradviz.float64))  # d v / d v
    np.testing.assert_allclose(v.grad._data, np.full(2, 7.0))


def test_mxnet_second_backward_without_retain_graph_fails():
    x = mx.attach_grad(leaf(3))
    with mx.record():
        y = (x * x).sum()
    mx.backward(y, retain_graph=True)
    mx.backward(y)
    with pytest.raises(mx.MXNetError) as e:
        mx.backward(y)
    assert str(e.value) == (
        "Cannot differentiate node because it is not in a computational graph. You need to set "
        "is_recording to true or use autograd.record() to save computational graphs for "
        "backward. If you want to differentiate the same graph twice, you need to pass "
        "retain_graph=True to backward.")


def test_mxnet_variables_must_require_gradient():
    x = mx.attach_grad(leaf(3))
    const = leaf(3, requires_grad=False)
    with mx.record():
        h = x * 2
        y = (h * const).sum()
    with pytest.raises(mx.MXNetError, match="^Cannot differentiate with respect to the 1-th "
                                            "variable because it does not require gradient.$"):
        mx.grad(y, [h])
    with pytest.raises(mx.MXNetError, match="the 2-th variable"):
        mx.grad(y, [x, const])


def test_mxnet_gradient_graph_has_aggregation_and_zero_nodes():
    x = mx.attach_grad(leaf(3))
    with mx.record():
        y = (x * x).sum()
    g = mx.gradient_graph(y)
    assert [n.name for n in g.nodes.values()] == [
        "_head_grad_ones", "SumBackward0", "MulBackward0", "_aggregate_sum", "_copy"]
    agg = g.nodes["g3"]
    assert [e for e in g.edges() if e[1] == "g3"] == [("g2", "g3", 0), ("g2", "g3", 1)]
    assert {s.name: s.value["const"] for s in agg.saved}["num_args"] == 2
    copy = g.nodes["g4"]
    assert g.tensors[copy.variable].shape == [3]
    # An unused variable and an unused output both get zeros.
    unused = mx.attach_grad(leaf(3))
    with mx.record():
        two, _three = TwoWays.apply(x)
        z = (two * 5).sum()
    names = [n.name for n in mx.gradient_graph(z, [x, unused]).nodes.values()]
    assert names.count("_zeros") == 2
    assert names[-1] == "_copy" and names[-2] == "_zeros"  # unused's gradient: zeros
    gx, gu = mx.grad(z, [x, unused])
    np.testing.assert_allclose(gx._data, np.full(3, 10.0))
    np.testing.assert_allclose(gu._data, np.zeros(3))


def test_mxnet_schedule_is_depth_first_from_the_variables():
    x, y = mx.attach_grad(leaf(2)), mx.attach_grad(leaf(2))
    with mx.record():
        z = (x ** 2 + y ** 3).sum()
    with Executed() as seen:
        mx.backward(z)
    # x's whole chain, then y's: the order is fixed before anything runs.
    assert seen.names == ["SumBackward0", "AddBackward0", "PowBackward0", "PowBackward0"]
    leaves = [d["tensor"] for e, d in seen.events if e == "leaf_grad"]
    assert leaves[0] is x and leaves[1] is y


# -- tracing the three schedules ------------------------------------------------------------------
def test_the_seed_program_traced_under_three_engines(tmp_path):
    x, y = leaf(5, 5), leaf(5, 5)
    c = compare_engines(seed, x, y)
    assert x.grad is None and y.grad is None  # the inputs themselves are untouched
    tr = c.trace
    assert [r.engine for r in tr.runs] == ["pytorch", "singa", "mxnet"]
    assert [r.kind for r in tr.runs] == ["backward", "grad", "backward"]
    assert c["pytorch"].leaves == ["y", "x"] == c["singa"].leaves
    assert c["mxnet"].leaves == ["x", "y"]
    assert c["pytorch"].nodes == ["SumBackward0", "AddBackward0", "PowBackward0#2",
                                  "PowBackward0#1"]
    assert c["mxnet"].nodes == ["SumBackward0", "AddBackward0", "PowBackward0#1",
                                "PowBackward0#2"]
    singa_run, mx_run = tr.runs[1], tr.runs[2]
    assert {s.kind for s in singa_run.steps} >= {"compute_dependencies", "enqueue", "execute",
                                                 "accumulate", "leaf_grad", "done"}
    assert singa_run.steps[0].tensor_counts
    assert any(s.kind == "gradient_node" and s.op == "_head_grad_ones"
               for s in mx_run.steps)
    assert mx_run.gradient_graph is not None and tr.runs[0].gradient_graph is None
    path = tmp_path / "engines.json"
    tr.save(path)
    back = gradviz.load_trace(path)
    assert [r.engine for r in back.runs] == ["pytorch", "singa", "mxnet"]
    assert back.runs[2].gradient_graph == mx_run.gradient_graph
    assert back.to_json() == tr.to_json()


def test_compare_engines_prints_three_ways():
    x = leaf(2, name="<x&>")
    c = compare_engines(lambda x: (x * x).sum(), x)
    text = str(c)
    assert text.splitlines()[0].startswith("engine") and "mxnet" in text
    html = c.to_html()
    assert "<x&>" not in html and "&lt;x&amp;&gt;" in html
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(c.table())
    assert "singa" in console.export_text()
