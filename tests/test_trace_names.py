"""Issue #16: a tensor takes the name its creator's code binds it to (NOTE [tensor names]), then
a module parameter's name, then its id; custom Functions are one op with their forward()'s ops
inside; backward-time ops never join the forward graph."""

from __future__ import annotations

import gradviz
import gradviz.nn as nn
from gradviz.autograd.function import Function


def _names(tr):
    """{op name: [output names]} in order, and the names of every tensor by id."""
    return {t.id: t.name for t in tr.tensors.values()}


def _made_by(tr, op_name):
    return [tr.tensors[o].name for op in tr.ops if op.name == op_name for o in op.outputs]


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


def test_a_factory_and_an_unused_result_take_their_variables_names():
    with gradviz.trace() as tr:
        a = gradviz.randn(3, requires_grad=True)
        b = a * 3 + 1  # never used again
    assert tr.tensors[tr.known_tensor_id(a)].name == "a"
    assert tr.tensors[tr.known_tensor_id(b)].name == "b"
    # the intermediate a * 3 is bound to no name: it keeps its id
    mul = next(op for op in tr.ops if op.name == "mul")
    assert tr.tensors[mul.outputs[0]].name == mul.outputs[0]


def test_the_custom_function_leaf_is_a_not_its_forward_parameter():
    with gradviz.trace() as tr:
        a = gradviz.rand(3, 3, requires_grad=True)
        b = MulConstant.apply(a, 5)
        b.backward(gradviz.ones_like(a))
    names = set(_names(tr).values())
    assert {"a", "b"} <= names and "tensor" not in names and "grad_output" not in names


def scale(t):
    return t * 2


def test_a_tensor_passed_to_a_helper_keeps_its_name():
    with gradviz.trace() as tr:
        weights = gradviz.randn(3, requires_grad=True)
        y = scale(weights)  # the helper's result is bound here: y
    assert tr.tensors[tr.known_tensor_id(weights)].name == "weights"
    assert tr.tensors[tr.known_tensor_id(y)].name == "y"
    assert "t" not in _names(tr).values()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 2)

    def forward(self, inp):
        h = self.fc1(inp)
        return h.relu()


def test_data_passed_to_forward_is_data_and_parameters_keep_module_names():
    gradviz.manual_seed(0)
    net = Net()
    with gradviz.trace() as tr:
        data = gradviz.randn(4, 3)
        out = net(data)
    names = _names(tr)
    assert names[tr.known_tensor_id(data)] == "data"
    assert names[tr.known_tensor_id(out)] == "out"  # forward's return, bound by the caller
    assert "inp" not in names.values()
    assert {"fc1.weight", "fc1.bias", "h"} <= set(names.values())


def test_a_tensor_made_before_tracing_takes_the_with_blocks_name():
    data = gradviz.randn(4, 3)
    net = Net()
    with gradviz.trace() as tr:
        net(data)
    assert tr.tensors[tr.known_tensor_id(data)].name == "data"


def test_a_loop_names_every_new_tensor():
    with gradviz.trace() as tr:
        x = gradviz.ones(2, requires_grad=True)
        for _ in range(3):
            x = x * 2
    assert _made_by(tr, "mul") == ["x", "x", "x"]
    assert len({op.outputs[0] for op in tr.ops}) == 3  # told apart by their ids


def cell(x, h):
    c = x * h
    return x * c.tanh(), c


def test_tuple_unpacking_and_chained_attribute_subscript_targets():
    class Holder:
        pass

    with gradviz.trace() as tr:
        a = gradviz.randn(3, requires_grad=True)
        h, c = cell(a, a)  # the callee named c itself; h is the first element it returned
        first, second = a.chunk(2)
        o = Holder()
        o.state = a + 1
        outs = [None]
        outs[0] = a - 1
        p = q = a / 2
    names = _names(tr)
    assert names[tr.known_tensor_id(h)] == "h"
    assert names[tr.known_tensor_id(c)] == "c"
    assert names[tr.known_tensor_id(first)] == "first"
    assert names[tr.known_tensor_id(second)] == "second"
    assert names[tr.known_tensor_id(o.state)] == "state"
    assert names[tr.known_tensor_id(outs[0])] == "outs[0]"
    assert names[tr.known_tensor_id(p)] == "p" and q is p


def test_comprehension_elements_are_named_after_the_list():
    with gradviz.trace() as tr:
        a = gradviz.ones(2, requires_grad=True)
        ys = [a * i for i in range(3)]
        a.sum()
    names = _names(tr)
    assert [names[tr.known_tensor_id(y)] for y in ys] == ["ys[0]", "ys[1]", "ys[2]"]


def _comprehensions_in_a_function():
    with gradviz.trace() as tr:
        a = gradviz.ones(2, requires_grad=True)
        ys = [(a * i).exp() for i in range(2)]  # two ops per element: the last one is the list's
        zs = [a * i * j for i in range(3) if i for j in range(2)]
        a.sum()
    return tr, ys, zs


def test_comprehensions_with_several_ops_and_loops_name_each_element():
    # Python 3.12+ runs a comprehension inline (PEP 709): the elements are named after the list
    # there too, however many ops and `for`s it has, at module level and in a function.
    scope: dict = {"gradviz": gradviz}
    exec(compile("with gradviz.trace() as tr:\n"
                 "    a = gradviz.ones(2, requires_grad=True)\n"
                 "    ys = [(a * i).exp() for i in range(2)]\n"
                 "    zs = [a * i * j for i in range(3) if i for j in range(2)]\n"
                 "    a.sum()\n", "<module>", "exec"), scope)
    for tr, ys, zs in [_comprehensions_in_a_function(), (scope["tr"], scope["ys"], scope["zs"])]:
        names = _names(tr)
        assert [names[tr.known_tensor_id(y)] for y in ys] == ["ys[0]", "ys[1]"]
        assert [names[tr.known_tensor_id(z)] for z in zs] == [f"zs[{k}]" for k in range(4)]


def make():
    w = gradviz.ones(2, requires_grad=True)
    out = (w * 2).exp()
    return out


def test_a_functions_last_statement_is_named_after_it_returned():
    with gradviz.trace() as tr:
        result = make()
    # out was bound in make() (its frame had returned before the next event): the creator's
    # name wins over the caller's
    assert tr.tensors[tr.known_tensor_id(result)].name == "out"


def double(x):
    y = x * 2
    return y


def loss_of(logits, target):
    loss = gradviz.nn.functional.cross_entropy(logits, target)  # two ops, one instruction
    return loss


def test_calls_in_a_row_each_name_their_result_as_their_function_binds_it():
    # The second call is usually given the frame the first one left, at the same address: it
    # must not be taken for the first call still running (NOTE [tensor names]).
    with gradviz.trace() as tr:
        p = gradviz.ones(2, 3, requires_grad=True)
        first = double(p)
        second = double(p)
        third = double(p)
    for t in (first, second, third):
        assert tr.tensors[tr.known_tensor_id(t)].name == "y"


def test_a_helper_ending_in_a_multi_output_op_names_its_main_result():
    with gradviz.trace() as tr:
        logits = gradviz.ones(2, 3, requires_grad=True)
        target = gradviz.tensor([0, 2])
        a = loss_of(logits, target)
        b = loss_of(logits, target)
    for t in (a, b):
        assert tr.tensors[tr.known_tensor_id(t)].name == "loss"
    # nll_loss's second output (total_weight) is not what the helper bound
    weights = [tr.tensors[op.outputs[1]].name for op in tr.ops if op.name == "nll_loss"]
    assert len(weights) == 2 and "loss" not in weights


def test_a_name_given_once_is_not_overwritten_by_a_callee_parameter():
    def use(t):
        return (t * t).sum()

    with gradviz.trace() as tr:
        weights = gradviz.randn(3, requires_grad=True)
        for _ in range(2):
            use(weights)
    assert tr.tensors[tr.known_tensor_id(weights)].name == "weights"


def test_an_explicit_name_wins():
    with gradviz.trace() as tr:
        a = gradviz.ones(2, requires_grad=True)
        a.name = "alpha"
        b = a * 2
    assert tr.tensors[tr.known_tensor_id(a)].name == "alpha"
    assert tr.tensors[tr.known_tensor_id(b)].name == "b"


def test_the_function_is_one_op_with_its_forward_ops_inside():
    with gradviz.trace() as tr:
        a = gradviz.rand(3, requires_grad=True)
        b = MulConstant.apply(a, 5)
        b.sum().backward()
    fn = next(op for op in tr.ops if op.name == "MulConstant")
    assert tr.nodes[fn.node].name == "MulConstantBackward"
    inside = [op for op in tr.ops if op.parent == fn.id]
    assert [op.name for op in inside] == ["mul"]
    top = [op.name for op in tr.ops if op.parent is None]
    assert top == ["MulConstant", "sum"]  # no dangling mul beside it, no grad_output * 5
    assert tr.tensors[fn.outputs[0]].name == "b"


class Cube(Function):
    """forward and backward both run other ops; backward is differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        sq = x * x
        return sq * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_backward_time_ops_never_join_the_forward_graph_even_with_create_graph():
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        y = Cube.apply(x).sum()
        (g,) = gradviz.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    fn = next(op for op in tr.ops if op.name == "Cube")
    assert [op.name for op in tr.ops if op.parent == fn.id] == ["mul", "mul"]
    top = [op.name for op in tr.ops if op.parent is None]
    assert top == ["Cube", "sum", "sum"]  # y's sum and g's sum; backward's muls are not here
    assert len(tr.runs) == 2 and x.grad.tolist() == [6.0, 12.0]


def test_the_custom_function_example_as_bundled():
    import runpy
    from pathlib import Path

    path = Path(gradviz.__file__).parent / "examples" / "custom_function.py"
    with gradviz.trace() as tr:
        runpy.run_path(str(path), run_name="__main__")
    assert [op.name for op in tr.ops if op.parent is None] == ["MulConstant"]
    names = set(_names(tr).values())
    assert "tensor" not in names and "grad_output" not in names and {"a", "b"} <= names
    # the parent link survives saving and loading
    from gradviz.trace.io import trace_from_dict, trace_to_dict

    again = trace_from_dict(trace_to_dict(tr))
    assert [op.parent for op in again.ops] == [op.parent for op in tr.ops]


def test_a_keyword_tensor_saved_by_the_node_keeps_its_name():
    import gradviz.nn.functional as F

    logits = gradviz.randn(4, 3, requires_grad=True)
    y = gradviz.tensor([0, 1, 2, 1])
    with gradviz.trace() as tr:
        loss = F.cross_entropy(logits, y)
    assert tr.tensors[tr.known_tensor_id(y)].name == "y"
    assert tr.tensors[tr.known_tensor_id(loss)].name == "loss"


class Double(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return Double.apply(g)  # a Function applied inside backward, differentiably


def test_a_function_applied_during_backward_records_nothing():
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        y = Double.apply(x).sum()
        (g,) = gradviz.autograd.grad(y, x, create_graph=True)
        z = x * 3
    assert [op.name for op in tr.ops if op.parent is None] == ["Double", "sum", "mul"]
    assert [op.id for op in tr.ops] == ["op1", "op0", "op2", "op3"]  # no id taken meanwhile
    assert g.tolist() == [2.0, 2.0] and tr.tensors[tr.known_tensor_id(z)].name == "z"


# -- NOTE [root names]: the expression .backward() was called on names the root -------------------
class _Output:
    """What a Hugging Face model returns: the loss as an attribute."""

    def __init__(self, loss):
        self.loss = loss

    @property
    def fresh(self):  # a new tensor on each read: it is not the root backward() ran from
        return self.loss * 1


def _model(x):
    h = (x * 2).tanh()
    return _Output((h ** 2).mean()), {"loss": h.sum()}, [h.max(), h.min(), h.std()]


def _root_name(tr, k):
    return tr.tensors[tr.runs[k].roots[0]].name


def test_a_root_is_named_by_the_attribute_or_subscript_backward_was_called_on():
    with gradviz.trace(keep_runs="all") as tr:
        x = gradviz.ones(3, requires_grad=True)
        outputs, out, losses = _model(x)
        i = 1
        outputs.loss.backward(retain_graph=True)
        out["loss"].backward(retain_graph=True)
        losses[0].backward(retain_graph=True)
        losses[i].backward(retain_graph=True)
        losses[-1].backward()
    assert [_root_name(tr, k) for k in range(5)] == [
        "outputs.loss", 'out["loss"]', "losses[0]", "losses[i]", "losses[-1]"]


def test_a_root_the_expression_does_not_hold_keeps_its_id():
    with gradviz.trace(keep_runs="all") as tr:
        x = gradviz.ones(3, requires_grad=True)
        outputs, _, _ = _model(x)
        outputs.fresh.backward(retain_graph=True)  # the property made a new tensor
        gradviz.autograd.backward(outputs.loss)  # a call on gradviz.autograd, not on a tensor
    assert [_root_name(tr, k) for k in range(2)] == list(tr.runs[k].roots[0] for k in range(2))
