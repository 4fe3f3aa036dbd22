"""Write the tutorial notebooks in ``tutorials/`` from the cell sources in this file.

    python scripts/make_tutorials.py           # (re)write every notebook
    python scripts/make_tutorials.py --check   # exit 1 if a notebook differs from its source

The notebooks are committed exactly as this script writes them: no outputs, no execution counts,
notebook metadata reduced to the ``python3`` kernelspec, stable cell ids (``nb01-c03``).
``tests/test_notebooks.py`` checks that, executes every notebook in a fresh kernel, and checks
``tutorials/CONCEPTS.md`` against the notebooks.

Each notebook's text below is a sequence of cells; a line ``%% md`` or ``%% code`` starts a cell.
Edit the text here, run the script, and commit both.
"""

# ruff: noqa: E501 - the notebook text below holds Markdown tables; the notebooks' own code is
# linted as notebooks (ruff checks tutorials/*.ipynb).
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "tutorials"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}

NOTEBOOKS: dict[str, str] = {}

# =================================================================================================
NOTEBOOKS["01_tensors_and_backward.ipynb"] = r'''
%% md
# 1 · Tensors, `requires_grad` and `backward()`

This series takes PyTorch's autograd apart with **gradviz**, a small autograd engine on NumPy
whose internals mirror PyTorch's. Code written for `torch` (within gradviz's op set) runs
unchanged after `import gradviz as torch`, so what you see here is what PyTorch does.

In this notebook:

1. tensors that remember how they were made, and `backward()`;
2. the implicit gradient of a scalar: `z.backward()` is `z.backward(torch.tensor(1.))`;
3. non-scalar outputs and the `gradient` argument: `z.backward(torch.ones_like(x))`;
4. gradients accumulate;
5. leaves and results (`is_leaf`);
6. switching recording off with `no_grad`.

%% code
import gradviz
import gradviz as torch  # read `torch.` as "PyTorch does the same"

_ = torch.manual_seed(0)  # the same random numbers on every run

%% md
## 1. Tensors that remember how they were made

A tensor created with `requires_grad=True` asks autograd to watch it. Every operation on it
records a *backward node* on the result, its `grad_fn`. `backward()` walks those nodes from the
result back to the inputs and leaves the gradient in each input's `.grad`.

%% code
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = torch.sum(x + y)
z

%% md
`grad_fn=<SumBackward0>`: `z` knows it came out of a sum. `gradviz.draw_backward` draws what
`backward()` will walk through. Read it from the top (the output `z`) down to the leaves `x` and
`y`.

%% code
gradviz.draw_backward(z)

%% code
z.backward()
print(x.grad)
print(y.grad)

%% md
Each entry of `x` appears once in the sum, so ∂z/∂x is all ones, and the same for `y`.

## 2. The implicit gradient of a scalar

`backward()` computes a *vector–Jacobian product*: it starts from a gradient for the output and
pushes it back through the graph. For a scalar output the natural start is dz/dz = 1, so you may
leave it out: `z.backward()` is shorthand for `z.backward(torch.tensor(1.))`.

%% code
def grad_with(seed_gradient):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (x * x).sum()
    if seed_gradient is None:
        z.backward()
    else:
        z.backward(seed_gradient)
    return x.grad


print(grad_with(None))  # z.backward()
print(grad_with(torch.tensor(1.)))  # z.backward(torch.tensor(1.)): the same
print(grad_with(torch.tensor(10.)))  # the starting gradient scales every gradient

%% md
## 3. Non-scalar outputs need a `gradient`

Now `z = x ** 2 + y ** 3` is a 5×5 tensor. There is no single starting gradient to assume, so
`backward()` refuses to guess:

%% code
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = x ** 2 + y ** 3
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
Pass a `gradient` of the same shape as `z`: one weight per output element. With all ones, each
`x.grad[i, j]` is ∂z[i, j]/∂x[i, j] = 2·x[i, j], as if `z` had been summed first.

%% code
z.backward(torch.ones_like(x))
print(torch.allclose(x.grad, 2 * x), torch.allclose(y.grad, 3 * y ** 2))

%% md
Other weights give a weighted sum: `z.backward(v)` leaves the same gradients as
`(z * v).sum().backward()`. A gradient of the wrong shape is an error.

%% code
v = torch.rand(5, 5)
x.grad = None
(x ** 2).backward(v)
with_v = x.grad
x.grad = None
((x ** 2) * v).sum().backward()
print(torch.allclose(with_v, x.grad))

try:
    (x ** 2).backward(torch.ones(3))
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
## 4. Gradients accumulate

`backward()` *adds* into `.grad`; it never overwrites. Two backward passes (over two fresh
graphs) double the gradient. That is why a training loop calls `optimizer.zero_grad()` (or sets
`.grad = None`) before each backward.

%% code
w = torch.tensor([1.0, 2.0], requires_grad=True)
for _ in range(2):
    (w * 3).sum().backward()
    print(w.grad)
w.grad = None  # start afresh

%% md
## 5. Leaves and results

Tensors you create yourself are **leaves** (`is_leaf=True`). Tensors computed from something
that requires grad are **results**: they have a `grad_fn` and are not leaves. Only leaves get
their `.grad` filled in; a result is an intermediate value (notebook 8 shows `retain_grad()`,
which keeps its gradient too).

%% code
x = torch.rand(3, requires_grad=True)
c = torch.rand(3)  # no requires_grad: autograd ignores it
z = x * c
rows = [("x", x), ("c", c), ("z = x * c", z), ("z.detach()", z.detach()), ("c * 2", c * 2)]
print(f"{'tensor':12} {'is_leaf':8} {'requires_grad':14} grad_fn")
for name, t in rows:
    print(f"{name:12} {t.is_leaf!s:8} {t.requires_grad!s:14} {t.grad_fn}")

%% code
z.sum().backward()
print("x.grad:", x.grad)
print("z.grad:", z.grad, "(a result: its gradient is not kept)")
print("c.grad:", c.grad, "(does not require grad)")

%% md
`c * 2` is a leaf although it was computed: nothing in it requires grad, so nothing was
recorded. `detach()` cuts a result loose from its history: a leaf sharing the same data.

## 6. Switching recording off: `no_grad`

Inside `with torch.no_grad():` operations run but are not recorded: no `grad_fn`, nothing saved
for backward, less memory and a little less time. Use it for evaluation and for updating
parameters. `torch.no_grad()` also works as a decorator, and `torch.is_grad_enabled()` tells
you the current mode.

%% code
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with torch.no_grad():
    print("inside no_grad:", torch.is_grad_enabled())
    w = x * 2
print("outside:", torch.is_grad_enabled())
print(w, "requires_grad:", w.requires_grad, "grad_fn:", w.grad_fn, "is_leaf:", w.is_leaf)


@torch.no_grad()
def evaluate(t):
    return (t * t).sum()


print(evaluate(x).requires_grad)

%% md
The tracer shows the difference. `gradviz.trace()` records every operation run inside it, and
`gradviz.draw_both` puts the forward graph (left) next to the backward graph (right). The
multiplication under `no_grad` is in the forward graph but made no backward node: `backward()`
never reaches it, so `a.grad` counts only the `a * 3` path.

%% code
with gradviz.trace(name="a * 4 under no_grad") as tr:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    with torch.no_grad():
        c = a * 4  # computed, not recorded
    loss = (b + c).sum()
    loss.backward()
print(a.grad)
gradviz.draw_both(tr)

%% md
## Exercises

Each exercise cell holds a working answer under `# Solution (try it yourself first)`. Delete it,
write your own, and run the check cell after it. The checks and the reference answers are in
[`solutions.py`](solutions.py).

**Exercise 1.** Return the gradient of `sum(x**3 - 2*x)` at the given points, computed with
`backward()`. (It should be 3x² − 2.)

%% code
# Exercise 1
def cubic_grad(values):
    # Solution (try it yourself first)
    x = torch.tensor(values, requires_grad=True)
    (x ** 3 - 2 * x).sum().backward()
    return x.grad

%% code
import solutions

solutions.check_cubic_grad(cubic_grad)

%% md
**Exercise 2.** `z = x ** 2` is not a scalar. Call `z.backward` with the weights `v` and return
`x.grad`. (It should be 2·x·v.)

%% code
# Exercise 2
def weighted_grad(x, v):
    # Solution (try it yourself first)
    z = x ** 2
    z.backward(v)
    return x.grad

%% code
solutions.check_weighted_grad(weighted_grad)

%% md
**Exercise 3.** One step of gradient descent: update the leaf `w` *in place*,
`w -= lr * w.grad`, without recording it, then clear its gradient.

%% code
# Exercise 3
def sgd_step(w, lr):
    # Solution (try it yourself first)
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None

%% code
solutions.check_sgd_step(sgd_step)
'''

# =================================================================================================
NOTEBOOKS["02_looking_inside.ipynb"] = r'''
%% md
# 2 · Looking inside: `grad_fn`, `next_functions`, `AccumulateGrad`

What does `backward()` actually walk through? This notebook opens the graph by hand, as a
well-known PyTorch walkthrough does: start at `z.grad_fn`, follow `next_functions` down to the
leaves, and find the leaf tensor itself at the bottom. Apart from the drawings, everything here
runs the same on PyTorch.

%% code
import gradviz
import gradviz as torch

_ = torch.manual_seed(0)

%% md
## 1. What a result carries

%% code
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = x ** 2 + y ** 3
print([name for name in dir(z) if not name.startswith("_") and ("grad" in name or "leaf" in name)])
print("x.is_leaf=" + str(x.is_leaf))
print("z.is_leaf=" + str(z.is_leaf))

%% md
`x` is a leaf (you made it), `z` is a result. `z.grad_fn` is the node that will turn the gradient
of `z` into gradients for `z`'s inputs. Its class name says which op made `z`: an addition, so
`AddBackward0` (the digit tells overloads apart, as in PyTorch).

%% code
z.grad_fn

%% code
print([name for name in dir(z.grad_fn) if not name.startswith("_") or name.startswith("_saved")])

%% md
## 2. `next_functions`: the edges

`next_functions` is the essence of `grad_fn`: one `(node, input_nr)` pair per input of the
forward op. `x ** 2 + y ** 3` added two things, so there are two pairs, each pointing at the
`PowBackward0` node that made that operand. The integer says which input of that node the
gradient is for (always 0 here; notebook 4 has a case where it is not).

%% code
z.grad_fn.next_functions

%% code
xg = z.grad_fn.next_functions[0][0]  # the node of x ** 2
print(xg, xg.next_functions)
print("saved for backward:", xg._saved_self.shape, "exponent", xg._saved_exponent)

%% md
`PowBackward0` saved what its formula d(x²)/dx = 2·x needs: the base `x` (`_saved_self`) and the
exponent. Saved values are the subject of notebook 6.

## 3. `AccumulateGrad`: where the leaves are

%% code
x_leaf = xg.next_functions[0][0]
print(type(x_leaf))
print(x_leaf.variable)
print("x_leaf.variable id:", id(x_leaf.variable))
print("x id:              ", id(x))
assert id(x_leaf.variable) == id(x)

%% md
At the bottom of every path sits an `AccumulateGrad` node, one per leaf that requires grad. It
has no `next_functions` (the graph ends there), and its `.variable` *is* the leaf tensor: the
same object, the same `id`. Running it adds the gradient it receives into `variable.grad`.

So the whole process is:

1. `z.backward()` starts at `z.grad_fn`;
2. each node computes the gradients of its inputs and hands them along its `next_functions`;
3. each `AccumulateGrad` stores what it receives in its variable's `.grad`;
4. when nothing is left to run, every leaf's `.grad` has been updated.

## 4. Walk the graph by hand

A walker that prints every node once, indented by depth. It uses an explicit stack instead of
recursion: a graph built by a long loop can be deeper than Python's recursion limit (gradviz's
engine never recurses either).

%% code
def walk(t):
    seen, stack = {t.grad_fn}, [(t.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        line = "    " * depth + type(node).__name__
        if hasattr(node, "variable"):
            line += f"  -> .variable of shape {tuple(node.variable.shape)}"
        print(line)
        for nxt, _input_nr in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, depth + 1))


walk(z)

%% md
The same graph drawn by gradviz. `show_saved=True` adds the saved tensors (linked to the leaf
they are) and `show_attrs=True` the saved numbers such as the exponent:

%% code
gradviz.draw_backward(z, show_saved=True, show_attrs=True)

%% md
And as text, for a terminal:

%% code
gradviz.print_graph(z)

%% md
## 5. Run the nodes yourself

A node is callable, as in PyTorch: give it the gradient of its output, get back the gradients of
its inputs. Here is by hand what `backward()` does with the starting gradient `ones`:

%% code
g = torch.ones_like(z)
gx2, gy3 = z.grad_fn(g)  # AddBackward0 passes g on to both operands
gx = xg(gx2)  # PowBackward0: 2 * x * g
print(torch.allclose(gx, 2 * x))

z.backward(torch.ones_like(z))  # now let the engine do it
print(torch.allclose(x.grad, gx))

%% md
## 6. A tensor used more than once

A tensor used several times has one edge per use into its node. Below, `h` is used three times:
twice in `h * h` (both operands!) and once in `+ h`. So three edges lead into `h`'s
`MulBackward0`, and the engine must wait for all three gradients before running it.

%% code
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
h = a * b
out = (h * h + h).sum()
add = out.grad_fn.next_functions[0][0]
hh = add.next_functions[0][0]  # the node of h * h
print(hh.next_functions[0][0] is h.grad_fn, hh.next_functions[1][0] is h.grad_fn,
      add.next_functions[1][0] is h.grad_fn)
gradviz.draw_backward(out)

%% md
## Exercises

As before: the exercise cell holds a working answer (delete it and write your own), the check
cell after it compares with [`solutions.py`](solutions.py).

**Exercise 1.** Return the class names (`type(node).__name__`) of all nodes reachable from
`t.grad_fn`, each node once, in breadth-first order: a queue, children in `next_functions` order.

%% code
# Exercise 1
def node_names(t):
    # Solution (try it yourself first)
    order, seen, queue = [], {t.grad_fn}, [t.grad_fn]
    while queue:
        node = queue.pop(0)
        order.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order

%% code
import solutions

solutions.check_node_names(node_names)

%% md
**Exercise 2.** Return the leaf tensors of `t`'s graph, each once, found through
`AccumulateGrad.variable`.

%% code
# Exercise 2
def leaves_of(t):
    # Solution (try it yourself first)
    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return leaves

%% code
solutions.check_leaves_of(leaves_of)

%% md
**Exercise 3.** `z` was computed from `x` along a single chain of ops (each node has exactly one
input that needs a gradient; the others are `(None, 0)`). Starting from `torch.ones_like(z)`,
call each node by hand and return the gradient that reaches `x`'s `AccumulateGrad`.

%% code
# Exercise 3
def chain_grad(z, x):
    # Solution (try it yourself first)
    node, grad = z.grad_fn, torch.ones_like(z)
    while not hasattr(node, "variable"):
        grads = node(grad)
        if not isinstance(grads, tuple):
            grads = (grads,)
        for (nxt, _), g in zip(node.next_functions, grads):
            if nxt is not None:
                node, grad = nxt, g
    return grad

%% code
solutions.check_chain_grad(chain_grad)
'''

# =================================================================================================
NOTEBOOKS["03_extending_autograd.ipynb"] = r'''
%% md
# 3 · Extending autograd: a custom `Function`

When an operation is not in the library, or you want a different backward, write a `Function`
with two static methods:

- `forward(ctx, *inputs)` computes the result. `ctx` is where you leave what `backward` will
  need: plain attributes, or tensors through `ctx.save_for_backward`.
- `backward(ctx, *grad_outputs)` receives one gradient per output of `forward` and returns one
  gradient per input of `forward`, `None` for an input that is not a tensor needing a gradient.

You call it with `MyFunction.apply(...)`, never by making an instance.

%% code
import gradviz
import gradviz as torch
from gradviz.autograd import Function, GradcheckError, gradcheck

_ = torch.manual_seed(0)

%% md
## 1. `MulConstant`, as the walkthrough writes it

%% code
# Multiply a tensor by a constant (a plain number)
class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx works like self: attributes set here can be read in backward
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # One gradient per forward input: the tensor, then the constant.
        # The constant is not a tensor, so its gradient must be None.
        return grad_output, None


a = torch.rand(3, 3, requires_grad=True)
b = MulConstant.apply(a, 5)
print("a:" + str(a))
print("b:" + str(b))  # b is a times 5
b.backward(torch.ones_like(a))  # b is not a scalar: backward needs a gradient
print(a.grad)

%% md
It runs, `b` shows `grad_fn=<MulConstantBackward>`, and `a.grad` is all ones. But `b = 5·a`,
so ∂b/∂a is **5**, not 1: this backward forgot to multiply by the constant. Nothing complained,
because autograd trusts your `backward`.

## 2. `gradcheck` catches it

`gradcheck` builds the Jacobian twice, once with your backward and once numerically by nudging
each input element by ±ε, and compares them. Use float64 inputs: finite differences in float32
are too noisy.

%% code
a64 = torch.rand(2, 2, dtype=torch.float64, requires_grad=True)
try:
    gradcheck(lambda t: MulConstant.apply(t, 5), (a64,))
except GradcheckError as e:
    print("GradcheckError:", e)

%% md
"Jacobian mismatch": the numerical Jacobian has 5 on its diagonal, the analytical one (from
your backward) has 1. The fix is one multiplication:

%% code
class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


print(gradcheck(lambda t: MulConstant.apply(t, 5), (a64,)))
a = torch.rand(3, 3, requires_grad=True)
b = MulConstant.apply(a, 5)
b.backward(torch.ones_like(a))
print(a.grad)

%% md
## 3. `ctx` is the node

The `ctx` your methods receive *is* the backward node, `b.grad_fn` (in PyTorch as in gradviz).
What `forward` stored there is visible on the graph, together with `needs_input_grad` (which
inputs want a gradient) and `next_functions`, where the constant gets `(None, 0)`:

%% code
ctx = b.grad_fn
print(ctx, ctx.constant, ctx.needs_input_grad)
print(ctx.next_functions)
gradviz.draw_backward(b.sum())

%% md
## 4. Saving tensors: `ctx.save_for_backward`

Tensors that backward needs go through `ctx.save_for_backward(...)` and come back as
`ctx.saved_tensors`. Unlike a plain attribute, a saved tensor is checked for in-place changes
(notebook 7) and freed after backward (notebook 6).

%% code
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad_output


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = Cube.apply(x)
print(y.grad_fn.saved_tensors)
y.sum().backward()
print(x.grad)  # 3x²
print(gradcheck(Cube.apply, (torch.rand(4, dtype=torch.float64, requires_grad=True),)))

%% md
`forward` ran without recording (`x ** 3` inside it made no `PowBackward0`): the whole function
is one node, `CubeBackward`, with `x`'s `AccumulateGrad` below it. `gradviz.show` displays any
gradviz object: a tensor as its backward graph (keyword arguments go to `draw_backward`), a trace
as the step player.

%% code
gradviz.show(Cube.apply(x).sum(), show_saved=True)

%% md
## 5. What the engine does check

The engine cannot check your math, but it checks the *form* of what `backward` returns: one
gradient per forward input, each of a shape the input can take.

%% code
class Forgetful(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output  # forgot the None for `constant`


try:
    Forgetful.apply(torch.rand(3, requires_grad=True), 2).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
## Exercises

**Exercise 1.** Write `Square` (`x ** 2`) as a `Function` that saves its input with
`ctx.save_for_backward`. The check runs `gradcheck`.

%% code
# Exercise 1
class Square(Function):
    # Solution (try it yourself first)
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output

%% code
import solutions

solutions.check_square(Square)

%% md
**Exercise 2.** Write `Sigmoid`, y = 1 / (1 + e⁻ˣ). Its derivative is y·(1 − y), so save the
*output* rather than the input.

%% code
# Exercise 2
class Sigmoid(Function):
    # Solution (try it yourself first)
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)

%% code
solutions.check_sigmoid(Sigmoid)

%% md
**Exercise 3.** A useful "wrong" backward. `ScaleGrad.apply(x, scale)` returns a copy of `x`
(forward is the identity) but its backward multiplies the gradient by `scale`. With
`scale=-1` this is the *gradient reversal layer* of domain-adversarial training. `gradcheck`
must reject it, and the check makes sure it does.

%% code
# Exercise 3
class ScaleGrad(Function):
    # Solution (try it yourself first)
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None

%% code
solutions.check_scale_grad(ScaleGrad)
'''

# =================================================================================================
NOTEBOOKS["04_engine_step_by_step.ipynb"] = r'''
%% md
# 4 · The engine, step by step

`backward()` hands the graph to the **engine**. gradviz's engine
(`gradviz/autograd/engine.py`, about 300 lines) models PyTorch's C++ `torch::autograd::Engine`
in PyTorch's own words. This notebook follows one backward pass through it:

1. the call chain down to `run_backward`;
2. edges, `Edge(function, input_nr)`, and `gradient_edge`;
3. dependency counts;
4. the ready queue: priority by `sequence_nr`, `AccumulateGrad` first;
5. input buffers, where the gradients of a tensor used twice are summed;
6. `AccumulateGrad` writing `.grad`;
7. the whole pass in the step player.

%% code
import os
import traceback

import gradviz
import gradviz as torch
from gradviz.autograd.engine import compute_dependencies
from gradviz.autograd.graph import Edge, get_gradient_edge, gradient_edge
from gradviz.trace.replay import replay

_ = torch.manual_seed(0)

%% md
## 1. From `loss.backward()` to `run_backward`

In PyTorch, `Tensor.backward` checks its arguments and calls `torch.autograd.backward`, which
calls `Variable._execution_engine.run_backward(tensors, grad_tensors, retain_graph,
create_graph, inputs, allow_unreachable=True, accumulate_grad=True)`, a C++ function
(`THPEngine_run_backward`). gradviz keeps the same chain, in Python. A hook runs *inside* the
engine, so the call stack it sees shows the chain:

%% code
PACKAGE = os.path.dirname(gradviz.__file__)


def show_call_chain(grad):
    for frame in traceback.extract_stack()[:-1]:
        if frame.filename.startswith(PACKAGE):
            where = os.path.relpath(frame.filename, os.path.dirname(PACKAGE))
            print(f"{frame.name:18} {where}:{frame.lineno}")


x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(show_call_chain)
(x * x).sum().backward()

%% md
`Tensor.backward` → `gradviz.autograd.backward` → `run_backward`, which called the hook. The
other entry point, `torch.autograd.grad`, ends in the same function with other arguments:

| call | `accumulate_grad` | `inputs` | result |
| --- | --- | --- | --- |
| `z.backward()` | True | all leaves | `.grad` of every leaf written |
| `z.backward(inputs=[w])` | True | `w` | only `w.grad` written |
| `torch.autograd.grad(z, [w])` | False | `w` | gradient returned, `.grad` untouched |

%% code
w = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
z = (w * b).sum()
z.backward(inputs=[w], retain_graph=True)
print("backward(inputs=[w]):", w.grad, b.grad)
(gw,) = torch.autograd.grad(z, [w])
print("autograd.grad:", gw, "while w.grad is still", w.grad)

%% md
## 2. Edges: `Edge(function, input_nr)` and `gradient_edge`

`run_backward` first turns each root tensor into an **edge** with `gradient_edge(tensor)`. An
`Edge` is a pair `(function, input_nr)`: the node the gradient goes to, and *which input* of that
node it is. (A node's inputs are the gradients of its forward op's outputs.)

`gradient_edge` has two cases, as in PyTorch's C++:

- a result: `Edge(tensor.grad_fn, tensor.output_nr)`;
- a leaf that requires grad: `Edge(<its AccumulateGrad>, 0)`, the *gradient accumulator* that
  adds what it receives into the leaf's `.grad`.

%% code
x = torch.rand(2, 3, requires_grad=True)
y = x.exp()
print(gradient_edge(y), gradient_edge(y) == Edge(y.grad_fn, y.output_nr))
e = gradient_edge(x)
print(e, type(e.function).__name__, e.function.variable is x)

%% md
`next_functions` is a tuple of such edges. `input_nr` is 0 when the forward op has one output.
With several outputs it is not: `unbind` splits `x` into rows `a` and `b`, outputs 0 and 1 of one
`UnbindBackward0` node.

%% code
a, b = x.unbind(0)
print(a.grad_fn is b.grad_fn, a.output_nr, b.output_nr)
prod = a * b
print(prod.grad_fn.next_functions)  # (UnbindBackward0, 0) and (UnbindBackward0, 1)
print(gradient_edge(b))

%% md
So `MulBackward0` sends the gradient of `a` to input 0 of `UnbindBackward0` and that of `b` to
its input 1. In the drawing the number at each arrow head is the `input_nr`:

%% code
gradviz.draw_backward(prod.sum())

%% md
Only tensors that require grad have a gradient edge (and an accumulator). An input that does not
gets `(None, 0)` in `next_functions`:

%% code
c = torch.rand(3)
print((a * c).grad_fn.next_functions)
try:
    get_gradient_edge(c)
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
## 3. Dependency counts

Next the engine walks the graph once (iteratively, with a stack) and counts for every node how
many edges point at it. A node may run only after that many gradients have arrived. The running
example uses `h` three times:

%% code
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
h = a * b
loss = (h * h + h).sum()
for node, count in compute_dependencies(loss.grad_fn).items():
    print(f"{type(node).__name__:16} sequence_nr={node.sequence_nr:<22} dependencies={count}")

%% md
`h`'s `MulBackward0` has 3 dependencies: two from `h * h`, one from `+ h`. The root
(`SumBackward0`) is not counted: it receives the starting gradient directly.

## 4. The ready queue

A node whose count has reached zero is **ready**. The engine keeps ready nodes in a priority
queue ordered by `sequence_nr`, a counter stamped on each node when it is created, highest first:
of all ready nodes the one created *last* runs first. That approximates the reverse of the
forward pass and frees memory early. `AccumulateGrad` reports the largest possible number,
2⁶⁴ − 1, so a leaf's gradient is written as soon as it is final.

`gradviz.trace()` records every step of the pass:

%% code
with gradviz.trace(name="h = a * b, used three times") as tr:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    h = a * b
    loss = (h * h + h).sum()
    loss.backward()

names = {n.id: f"{n.name}[{n.id}]" for n in tr.nodes.values()}
run = tr.run()


def values(summary):
    return None if summary is None else summary.get("values")


def describe(step, state):
    if step.kind == "compute_dependencies":
        return ", ".join(f"{names[k]}={v}" for k, v in step.counts.items())
    if step.kind in ("enqueue", "execute"):
        return "ready queue: " + str([names[n] for n in state.ready])
    if step.kind == "accumulate":
        return (f"from {names[step.source]} into slot {step.input_nr}: buffer "
                f"{values(state.buffer_before)} + grad {values(step.grad)} -> "
                f"{values(step.buffer)}, remaining {step.remaining}")
    if step.kind == "leaf_grad":
        return f".grad {values(step.before)} -> {values(step.after)}"
    if step.kind == "release_saved":
        return "frees " + (", ".join(state.freed) or "no saved tensor")
    return ""


# A step records what the engine did; replay(run, k) gives the engine's state right after it
# (the ready queue, the input buffer before an addition), replayed from the recorded steps.
for s in run.steps:
    state = replay(run, s.index)
    print(f"{s.index:2} {s.kind:20} {names.get(s.node, ''):22} {describe(s, state)}")

%% md
Follow the queue: `SumBackward0` runs first (it is the root). `AddBackward0` sends one gradient
to `h * h`'s node and one to `h`'s node (`remaining 2`). `h * h`'s node runs next and sends two
gradients to `h`'s node, which becomes ready only when its count reaches 0. Then the two
`AccumulateGrad` nodes run and write `.grad`.

`gradviz.draw_step(trace, run, k)` draws the engine's state after step `k`: the running node in
gold, ready nodes green, finished nodes grey, dependency counts on the nodes, and the gradients
that have travelled along the edges. Here, just after `h`'s node has received its last gradient:

%% code
h_node = next(t.grad_fn for t in tr.tensors.values() if t.name == "h")
last_into_h = [s.index for s in tr.steps() if s.kind == "accumulate" and s.node == h_node][-1]
gradviz.draw_step(tr, -1, last_into_h)

%% md
## 5. Input buffers

Where do the three gradients for `h` wait while its node is not ready? In the node's **input
buffer**: one slot per output of the forward op (`num_outputs`), indexed by `input_nr`. Each
`accumulate` step adds into a slot. With h = [3, 8], ∂loss/∂h = 2h + 1 = [7, 17]:

%% code
for s in run.steps:
    if s.kind == "accumulate" and s.node == h_node:
        print(describe(s, replay(run, s.index)))

%% md
## 6. `AccumulateGrad`

Last, each leaf's `AccumulateGrad` runs (`leaf_grad` steps): the first gradient becomes `.grad`
(taken over without a copy when nothing else refers to it, as PyTorch does, else copied); later
ones, from another backward pass, are added in place.

%% code
for s in run.steps:
    if s.kind == "leaf_grad":
        print(tr.tensors[s.tensor].name, describe(s, replay(run, s.index)))
print(a.grad, b.grad)

%% md
## 7. The whole pass in the step player

The player replays every step. Click it, then use ← / →, or the buttons and the slider. Yellow:
the node the step is about; orange: an edge carrying a gradient; blue, dashed: the ready queue;
green: done. The side panel lists the dependency counts, the ready queue, the gradients and each
leaf's `.grad`.

%% code
tr

%% md
## 8. Several roots: `GraphRoot`

`torch.autograd.backward([l1, l2])` starts from two roots. The engine then starts at a dummy
`GraphRoot` node whose `next_functions` are the two root edges and whose outputs are the two
starting gradients:

%% code
with gradviz.trace(name="two roots") as tr2:
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    l1 = (p * 2).sum()
    l2 = (p * p).sum()
    torch.autograd.backward([l1, l2])
print(p.grad)  # 2 + 2p
print([n.name for n in tr2.nodes.values()])
gradviz.draw_backward(tr2)

%% md
## Exercises

**Exercise 1.** Count the dependencies yourself: return a dict `{node: number of edges into it}`
for every node reachable from `t.grad_fn` (not counting `t.grad_fn` itself, unless an edge
points at it). Walk iteratively.

%% code
# Exercise 1
def dependency_counts(t):
    # Solution (try it yourself first)
    deps, seen, stack = {}, {t.grad_fn}, [t.grad_fn]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps

%% code
import solutions

solutions.check_dependency_counts(dependency_counts)

%% md
**Exercise 2.** Predict the engine's execution order without running any backward formula:
simulate the ready queue with `heapq`, ordered by `-node.sequence_nr` (ties first come, first
served), decrementing dependency counts. Return the nodes in the order they would run,
`AccumulateGrad` included. The check compares with the trace's `execute` steps.

%% code
# Exercise 2
import heapq


def predict_order(t):
    # Solution (try it yourself first)
    deps = dependency_counts(t)
    ready, order, arrivals = [(-t.grad_fn.sequence_nr, 0, t.grad_fn)], [], 1
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.sequence_nr, arrivals, nxt))
                arrivals += 1
    return order

%% code
solutions.check_predict_order(predict_order)

%% md
**Exercise 3.** Your own engine. Extend `predict_order` with input buffers: start with
`[torch.ones_like(loss)]` in the root's buffer, run each node with `node(*buffer)` (a node
returns one gradient, or a tuple with one per `next_functions` entry), add each result into the
buffer slot `input_nr` of the next node, and when an `AccumulateGrad` becomes ready record
`grads[id(node.variable)] = buffer[0]` instead of running it. Return `grads`.

%% code
# Exercise 3
def my_backward(loss):
    # Solution (try it yourself first)
    deps = dependency_counts(loss)
    buffers = {loss.grad_fn: [torch.ones_like(loss)]}
    ready, grads, arrivals = [(-loss.grad_fn.sequence_nr, 0, loss.grad_fn)], {}, 1
    while ready:
        _, _, node = heapq.heappop(ready)
        buffer = buffers.pop(node)
        if hasattr(node, "variable"):  # AccumulateGrad
            grads[id(node.variable)] = buffer[0]
            continue
        outputs = node(*buffer)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        for (nxt, input_nr), g in zip(node.next_functions, outputs):
            if nxt is None:
                continue
            slots = buffers.setdefault(nxt, [None] * nxt.num_outputs)
            if g is not None:
                slots[input_nr] = g if slots[input_nr] is None else slots[input_nr] + g
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.sequence_nr, arrivals, nxt))
                arrivals += 1
    return grads

%% code
solutions.check_my_backward(my_backward)
'''

# =================================================================================================
NOTEBOOKS["05_three_engines.ipynb"] = r'''
%% md
# 5 · Three engines, one graph

PyTorch's is not the only way to run a backward pass. Over the *same* graph gradviz runs three
algorithms, each modelled on real source code:

| | PyTorch | SINGA | MXNet |
| --- | --- | --- | --- |
| the schedule is | found while running: a priority queue by `sequence_nr` | found while running: a `deque`, last in first out | fixed before anything runs: an explicit gradient graph |
| the result | `.grad`, written by `AccumulateGrad` | `(param, grad)` pairs, **yielded** as soon as each is final | `.grad`, written by `_copy` nodes as `grad_req` says |

They compute the same gradients in different orders. `docs/engines.md` compares them in detail.

%% code
from IPython.display import HTML

import gradviz
import gradviz as torch
from gradviz.engines import mxnet as mx
from gradviz.engines import singa
from gradviz.render.html import player_html

_ = torch.manual_seed(0)

%% md
## 1. Same gradients, different schedules

`gradviz.compare_engines(fn, *inputs)` runs one program under all three engines:

%% code
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
cmp = gradviz.compare_engines(lambda x, y: (x ** 2 + y ** 3).sum(), x, y)
cmp

%% md
(`PowBackward0#1` is the first `PowBackward0` created, `x ** 2`.) PyTorch runs `y ** 3`'s node
first because it was created last (higher `sequence_nr`). SINGA does too, for another reason:
`AddBackward0` pushed it last onto the deque, and `ready.pop()` takes from the right. MXNet runs
`x`'s chain first: its schedule is a depth-first walk from the variables, in graph order. The
last column says the gradients agree.

## 2. SINGA: count, pop, yield

SINGA's `backward(y, dy=None)` (`python/singa/autograd.py`) in four moves:

1. `op_dep, tensor_dep = infer_dependency(y.creator)`: how many edges point at each op, and
   at each output tensor of each op;
2. `y` must hold a single value; `dy` is `1.0` unless given (a number or a tensor);
3. `ready = deque([(y.creator, (dy,))])`; loop: `op, dys = ready.pop()`, run the op's backward,
   add each result into `not_ready[src_op][y_idx]`, decrement both counts;
4. when a parameter's `tensor_dep` reaches 0 its gradient is final: **`yield (param, grad)`
   right away**; when an op's `op_dep` reaches 0 it is appended to `ready`.

In gradviz's terms: `y.creator` is `y.grad_fn`, `op.src` is `next_functions`, a `Dummy` op is an
`AccumulateGrad` (it never runs backward), and a tensor with `stores_grad` is a leaf that
requires grad.

%% code
p = torch.rand(2, 3, requires_grad=True)
r0, r1 = p.unbind(0)
w = torch.rand(3, requires_grad=True)
loss = (r0 * r1 * w).sum()
op_dep, tensor_dep = singa.infer_dependency(loss.grad_fn)
print("op_dep")
for op, n in op_dep.items():
    print(f"  {type(op).__name__:16} {n}")
print("tensor_dep")
for (op, y_idx), n in tensor_dep.items():
    print(f"  {type(op).__name__:16} output {y_idx}: {n}")

%% md
`UnbindBackward0` has two edges into it (`op_dep` 2), but each of its two outputs has one
(`tensor_dep` 1 each): `y_idx` is which output. Counting both lets SINGA know when *one
output's* gradient is complete while the op still waits for another.

`singa.backward` is a generator. Each pair comes out the moment it is final, while other ops
still wait. The tracer shows the interleaving:

%% md
In the program below `h` is used twice, so its `MulBackward0` receives two gradients, summed in
`not_ready` (SINGA's input buffer). Each `accumulate` step shows both counters going down:

%% code
with gradviz.trace(name="SINGA") as tr:
    p = torch.rand(2, 3, requires_grad=True)
    r0, r1 = p.unbind(0)
    w = torch.rand(3, requires_grad=True)
    h = r0 * w
    loss = (h * r1 + h).sum()
    for param, grad in singa.backward(loss):
        print("got the gradient of", "w" if param is w else "p", tuple(grad.shape))

label = {n.id: f"{n.name}[{n.id}]" for n in tr.nodes.values()}
for s in tr.steps():
    if s.kind == "execute":
        print("execute", label[s.node])
    elif s.kind == "accumulate":
        print(f"    -> not_ready[{label[s.node]}][{s.input_nr}]   op_dep left {s.remaining},"
              f" tensor_dep left {s.engine_data['tensor_remaining']}")
    elif s.kind == "leaf_grad":
        print("  yield", tr.tensors[s.tensor].name)
executed = [tr.nodes[s.node].name for s in tr.steps() if s.kind == "execute"]
print("AccumulateGrad (SINGA's Dummy) ever executed:", "AccumulateGrad" in executed)
print("w.grad:", w.grad, "(SINGA yields gradients; it does not write .grad)")

%% md
Three things to see. `w`'s gradient is yielded as soon as its last contribution arrives, before
`UnbindBackward0` has run. `UnbindBackward0`'s output 1 is complete (`tensor_dep` 0) while the op
still waits for output 0 (`op_dep` 1). And a leaf's `AccumulateGrad`, SINGA's `Dummy`, never
runs: SINGA hands the gradient out instead.

A training loop can therefore update each parameter during the pass: all of its consumers have
run, so nothing needs its old value any more.

%% code
w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w * w).sum()
for param, grad in singa.backward(loss):
    with torch.no_grad():
        param -= 0.1 * grad
print(w)

again = singa.backward(loss)  # SINGA's `del op` freed each op's saved tensors
try:
    next(again)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:75], "...")

%% md
`y` must hold a single value, and `dy` scales everything (`singa.gradients` runs the generator to
the end and returns a dict):

%% code
try:
    next(singa.backward(w * 2))
except AssertionError as e:
    print("AssertionError:", e)

v = torch.tensor([1.0, 2.0], requires_grad=True)
print(singa.gradients((v * v).sum())[v])  # dy = 1.0
print(singa.gradients((v * v).sum(), dy=3.0)[v])  # 3 · 2v

%% md
## 3. MXNet: record, build the gradient graph, run it

MXNet records only inside `autograd.record()`, and a variable is declared with
`attach_grad(grad_req=...)`. `NDArray.backward(out_grad=None, retain_graph=False,
train_mode=True)` goes through `MXAutogradBackwardEx` to `Imperative::Backward`, which does
everything up front:

1. **head gradients**: for each output the given `out_grad`, or by default *ones in the
   output's shape* (MXNet does not insist on a scalar);
2. **the gradient graph** (`pass::Gradient`): the backward nodes, plus an `_aggregate_sum` node
   where a value was used several times, a `_zeros` node where an output received no gradient,
   and a `_copy` node into each variable's gradient buffer;
3. a reference count per gradient buffer, to free it as soon as its last reader has run;
4. run the graph (`RunGraph`) in its fixed order, with recording set to `create_graph` and
   training to `train_mode`;
5. clear the history, unless `retain_graph`.

%% code
x = mx.attach_grad(torch.tensor([1.0, 2.0, 3.0]))
with mx.record():
    print("inside record(): recording", mx.is_recording(), "training", mx.is_training())
    h = x * x
    y = h * 2 + h  # h used twice; y is not a scalar
print("outside: recording", mx.is_recording())
g = mx.gradient_graph(y)
for node in g.nodes.values():
    attrs = {saved.name: saved.value["const"] for saved in node.saved}
    feeds = [nxt for nxt, _ in node.next_functions if nxt is not None]
    print(f"{node.id:3} {node.name:16} feeds {feeds!s:12} ref_count {attrs['ref_count']}")
head = next(node for node in g.nodes.values() if node.name.startswith("_head_grad"))
shape = {saved.name: saved.value["const"] for saved in head.saved}["shape"]
print("head gradient:", head.name, "of shape", shape)

%% md
`mx.gradient_graph` returns the graph MXNet would run, without running it. Nodes are numbered in
execution order; each feeds the nodes listed, and `ref_count` says how many nodes read each of
its outputs (the buffer is freed when they all have). `_head_grad_ones` is the head gradient
(ones of shape [3]); the two `_aggregate_sum` nodes add the gradients of `h` (used twice) and of
`x` (used twice, in `x * x`); `_copy` writes `x.grad`.

%% code
gradviz.draw_backward(g)

%% code
mx.backward(y)  # no out_grad: ones, though y has 3 elements
print(x.grad)  # d(3x²)/dx = 6x

%% md
The history is gone after `backward`. A second call fails with MXNet's message; with
`retain_graph=True` the graph is kept:

%% code
try:
    mx.backward(y)
except mx.MXNetError as e:
    print("MXNetError:", e)

with mx.record():
    y = (x * x).sum()
mx.backward(y, retain_graph=True)
mx.backward(y)  # fine: the graph was kept
print(x.grad)  # grad_req "write": the second pass overwrote the first

%% md
### `grad_req`: write, add, null

`"write"` overwrites `.grad` (MXNet's `kWriteTo`), `"add"` adds to it (`kAddTo`), `"null"`
leaves the variable out of the gradient graph altogether (`kNullOp`). Two passes:

%% code
xs = {req: mx.attach_grad(torch.tensor([1.0, 2.0]), grad_req=req)
      for req in ("write", "add", "null")}
for _ in range(2):
    with mx.record():
        total = (xs["write"] ** 2).sum() + (xs["add"] ** 2).sum() + (xs["null"] ** 2).sum()
    mx.backward(total)
for req, t in xs.items():
    print(f"{req:5} {t.grad}")

%% md
### Zero nodes, and the errors

An output that nobody used gets a `_zeros` gradient. Below, `unbind` makes two rows and only the
first is used:

%% code
q = mx.attach_grad(torch.rand(2, 3))
with mx.record():
    first, second = q.unbind(0)
    y = (first * 2).sum()  # `second` is never used
print([n.name for n in mx.gradient_graph(y).nodes.values()])
mx.backward(y)
print(q.grad)

%% code
c = torch.ones(2)  # not a variable
with mx.record():
    y = (q * 2).sum()
try:
    mx.grad(y, [c])
except mx.MXNetError as e:
    print("MXNetError:", e)

n = mx.attach_grad(torch.ones(2), grad_req="null")
with mx.record():
    y = (n * 2).sum()
try:
    mx.backward(y)
except mx.MXNetError as e:
    print("MXNetError:", e)

%% md
### `grad` and `create_graph`

`mx.grad(heads, variables)` returns the gradients instead of writing `.grad`. With
`create_graph=True` the gradient graph's own computation is recorded, so it can be
differentiated again:

%% code
x = mx.attach_grad(torch.tensor(3.0))
with mx.record():
    (dx,) = mx.grad(x ** 3, [x], create_graph=True)  # 3x² = 27, recorded
mx.backward(dx)
print(dx, x.grad)  # 6x = 18

%% md
## 4. The three schedules, replayed

`cmp.trace` holds the three runs from section 1. Pick an engine with the run selector and step
through: the same graph, three orders.

%% code
HTML(player_html(cmp.trace, fragment=True))

%% md
## Exercises

**Exercise 1.** Return the names of the parameters in the order SINGA yields their gradients.
`params` maps names to tensors.

%% code
# Exercise 1
def yield_order(loss, params):
    # Solution (try it yourself first)
    name_of = {id(t): name for name, t in params.items()}
    return [name_of[id(p)] for p, _ in singa.backward(loss)]

%% code
import solutions

solutions.check_yield_order(yield_order)

%% md
**Exercise 2.** SGD during the pass: update every parameter by `p -= lr * g` as SINGA yields it.

%% code
# Exercise 2
def singa_sgd(loss, lr):
    # Solution (try it yourself first)
    for p, g in singa.backward(loss):
        with torch.no_grad():
            p -= lr * g

%% code
solutions.check_singa_sgd(singa_sgd)

%% md
**Exercise 3.** Make `x = [1, 2, 3]` a variable with the given `grad_req`, then twice: record
`y = (x * x).sum()` and run `mx.backward(y)`. Return `x.grad`.

%% code
# Exercise 3
def mx_grad_twice(grad_req):
    # Solution (try it yourself first)
    x = mx.attach_grad(torch.tensor([1.0, 2.0, 3.0]), grad_req=grad_req)
    for _ in range(2):
        with mx.record():
            y = (x * x).sum()
        mx.backward(y)
    return x.grad

%% code
solutions.check_mx_grad_twice(mx_grad_twice)
'''

# =================================================================================================
NOTEBOOKS["06_graph_lifetime.ipynb"] = r'''
%% md
# 6 · Graph lifetime: saved tensors, `retain_graph`, `create_graph`

A backward node keeps what its formula needs: the *saved tensors*. They can be large (every
activation of a network), so `backward()` frees them as it goes. This notebook looks at:

1. saved tensors, and how backward frees them (with PyTorch's error if you go back);
2. `retain_graph=True`;
3. `create_graph=True`: a backward pass that is itself recorded, for second derivatives.

%% code
import warnings

import gradviz
import gradviz as torch

_ = torch.manual_seed(0)

%% md
## 1. Saved tensors are freed by backward

%% code
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = (x ** 2).sum()
pow_node = z.grad_fn.next_functions[0][0]
print(pow_node._saved_self, pow_node._saved_exponent)  # what 2·x needs
z.backward()
try:
    print(pow_node._saved_self)
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
The graph itself is still there (`z.grad_fn`, `next_functions`); only the saved values are gone
(numbers such as the exponent are kept). A second backward needs them, so it fails with the same
message:

%% code
print(z.grad_fn, z.grad_fn.next_functions)
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
The tracer shows when: a `release_saved` step right after each node that saved something has
run. Memory is given back during the pass, not at the end.

%% code
with gradviz.trace(name="release_saved") as tr:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (x.exp() * x).sum()
    z.backward()
names = {n.id: n.name for n in tr.nodes.values()}
print([(s.kind, names.get(s.node)) for s in tr.steps() if s.kind in ("execute", "release_saved")])
gradviz.draw_backward(tr, show_saved=True)

%% md
## 2. `retain_graph=True`

To go through the same graph twice, keep the saved values: `retain_graph=True`. The second
backward (without it) frees them. Gradients accumulate, as always:

%% code
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = (x ** 2).sum()
z.backward(retain_graph=True)
print(x.grad)
z.backward()
print(x.grad)  # 2x + 2x

%% md
(SINGA frees an op's values after it ran too, with `del op`. MXNet goes further and clears the
whole history, so a second `backward` fails even earlier, with "Cannot differentiate node
because it is not in a computational graph": see notebook 5.)

## 3. `create_graph=True`: differentiating the backward pass

Normally the backward pass computes plain numbers. With `create_graph=True` it runs *with
recording on*, so the gradients it produces have a `grad_fn` and can be differentiated again.

%% code
x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
(dx,) = torch.autograd.grad(y, x, create_graph=True)
print(dx)  # 3x² = 27, with a grad_fn
(ddx,) = torch.autograd.grad(dx, x)
print(ddx)  # 6x = 18

%% md
`dx` is the output of the ops `PowBackward0`'s formula ran, `3 · x² · grad`, recorded like any
forward computation:

%% code
gradviz.draw_backward(dx)

%% md
`create_graph` implies `retain_graph` (the first graph is needed again). With `backward()` it
works as well, and `x.grad` gets a `grad_fn`. PyTorch (and gradviz) warn about it: `x.grad`
would then hold a reference cycle through the graph; `autograd.grad` avoids that.

%% code
x = torch.tensor(3.0, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (x ** 3).backward(create_graph=True)
print(x.grad)
print("UserWarning:", caught[0].message)

%% md
Both passes in one trace: run 0 is the first derivative, run 1 differentiates it. The player's
run selector switches between them.

%% code
with gradviz.trace(name="second derivative") as tr:
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 3
    (dx,) = torch.autograd.grad(y, x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx, x)
print(tr.summary())
tr

%% md
`gradgradcheck` checks second derivatives against finite differences, as `gradcheck` checks
first ones:

%% code
xs = torch.rand(3, dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(), (xs,)))

%% md
## Exercises

**Exercise 1.** Return f''(x₀) as a Python float: `autograd.grad` twice, the first time with
`create_graph=True`.

%% code
# Exercise 1
def second_derivative(f, x0):
    # Solution (try it yourself first)
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (dx,) = torch.autograd.grad(f(x), x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx, x)
    return ddx.item()

%% code
import solutions

solutions.check_second_derivative(second_derivative)

%% md
**Exercise 2.** A Hessian-vector product H·v without building H: take g = ∇f(x) with
`create_graph=True`, then the gradient of the scalar `(g * v).sum()`.

%% code
# Exercise 2
def hvp(f, x, v):
    # Solution (try it yourself first)
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad((g * v).sum(), x)
    return hv

%% code
solutions.check_hvp(hvp)

%% md
**Exercise 3.** One step of Newton's method for minimising f: x₁ = x₀ − f'(x₀) / f''(x₀).

%% code
# Exercise 3
def newton_step(f, x0):
    # Solution (try it yourself first)
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (dx,) = torch.autograd.grad(f(x), x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx, x)
    return x0 - dx.item() / ddx.item()

%% code
solutions.check_newton_step(newton_step)
'''

# =================================================================================================
NOTEBOOKS["07_inplace_and_versions.ipynb"] = r'''
%% md
# 7 · In-place operations and version counters

`y.add_(1)`, `y += 1`, `y[0] = 5` change a tensor in place. Cheap, but dangerous for autograd: a
backward node may have saved that tensor, and its formula needs the value *as it was*. PyTorch
detects this with **version counters**; this notebook shows how.

%% code
import warnings

import gradviz
import gradviz as torch

_ = torch.manual_seed(0)

%% md
## 1. Every tensor has a version

`t._version` counts the in-place changes to `t`. A view shares its base's counter: changing one
changes the version of both.

%% code
t = torch.zeros(4)
print(t._version)
t.add_(1)
t += 1
t[0] = 5
print(t._version)  # three in-place changes

view = t[1:3]
view.mul_(2)
print(t._version, view._version, t)

%% md
## 2. Saved tensors remember their version

When a node saves a tensor, it also notes the tensor's version at that moment. Before using it
in backward, it compares: if the version moved, the value it would use is not the one it saw.

%% code
a = torch.rand(5, 5, requires_grad=True)
b = a * 1
c = b * b  # MulBackward0 saves b (as both operands) at version 0
print("b._version after c = b * b:", b._version)
b.mul_(2)
print("b._version after b.mul_(2):", b._version)
try:
    c.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
Reading the message: the saved tensor is a `[5, 5]` float tensor, `b`, which "is output 0 of
Mul" (the node of `a * 1` made it); it "is at version 1; expected version 0": it was saved at
version 0. gradviz lets you look at the saved version itself (PyTorch keeps it in C++): each
saved value is a `SavedVariable` that remembers `version`.

%% code
saved = c.grad_fn._store["self"]  # gradviz internals: MulBackward0's saved `self`
print("saved at version", saved.version, "- b is now at version", b._version)

%% md
## 3. On the graph

Traced, the in-place op shows up in the forward graph as a new version of `b`, named `b (v1)`;
the backward run ends in an error step, and the player shows where.

%% code
with gradviz.trace(name="in-place on a saved tensor") as tr:
    a = torch.rand(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.mul_(2)
    try:
        c.sum().backward()
    except RuntimeError:
        pass
print([t.name for t in tr.tensors.values()])
print(tr.run().error["message"][:120], "...")
gradviz.draw_forward(tr)

%% code
tr

%% md
## 4. When in-place is fine

Only saved tensors matter. `x * 2` needs only the constant 2 for its gradient, so changing its
result in place is harmless. The in-place op becomes the result's new `grad_fn`, with the old
one as its first edge: the history is *rebased*.

%% code
x = torch.rand(3, requires_grad=True)
y = x * 2
old = y.grad_fn
y.add_(1)
print(y.grad_fn, y.grad_fn.next_functions[0][0] is old)
y.sum().backward()
print(x.grad)
gradviz.draw_backward(y)

%% md
Some ops save their *output*. `exp` does (d eˣ/dx = eˣ), so changing `exp`'s result in place
breaks backward, and the message names `Exp`:

%% code
x = torch.rand(3, requires_grad=True)
y = x.exp()
y.add_(1)
try:
    y.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

%% md
## 5. Leaves that require grad

Changing a leaf that requires grad in place is refused outright: its `AccumulateGrad` and every
node that saved it would be confused. Under `no_grad` it is allowed; that is exactly how an
optimizer updates parameters (and the version still goes up).

%% code
w = torch.rand(3, requires_grad=True)
try:
    w.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
with torch.no_grad():
    w.add_(1)
print(w._version, w.is_leaf, w.requires_grad)

%% md
## 6. Finding the culprit: anomaly detection

The error is raised in backward, far from the in-place op. With anomaly detection on, the engine
also reports where the failing node was created in the forward pass:

%% code
with torch.autograd.detect_anomaly():
    a = torch.rand(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.mul_(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            c.sum().backward()
        except RuntimeError as e:
            print("RuntimeError:", str(e)[:70], "...")
lines = str(caught[0].message).splitlines()
print(lines[0], "  ...", *lines[-2:], sep="\n")

%% md
The warning's traceback ends at the line that built the failing node: `c = b * b`, the
multiplication whose saved `b` was modified afterwards.

%% md
## Exercises

**Exercise 1.** `solutions.broken(x)` computes `x.sigmoid()`, doubles it in place and sums. Its
backward fails because `sigmoid` saved its output. Write `fixed(x)`, the same function without
the in-place op.

%% code
# Exercise 1
def fixed(x):
    # Solution (try it yourself first)
    y = x.sigmoid()
    y = y * 2
    return y.sum()

%% code
import solutions

solutions.check_fixed(fixed)

%% md
**Exercise 2.** Update each parameter in place, `p -= lr * p.grad`, with exactly one in-place op
each and nothing recorded. The check looks at `_version`.

%% code
# Exercise 2
def sgd_update_(params, lr):
    # Solution (try it yourself first)
    with torch.no_grad():
        for p in params:
            p.sub_(lr * p.grad)

%% code
solutions.check_sgd_update_(sgd_update_)
'''

# =================================================================================================
NOTEBOOKS["08_hooks.ipynb"] = r'''
%% md
# 8 · Hooks: watching gradients flow

Hooks are functions the engine calls during backward. They let you look at gradients, and even
replace them, without touching the model:

1. tensor hooks: `t.register_hook(fn)`;
2. `retain_grad()`: keep a result's gradient;
3. node hooks: `grad_fn.register_prehook(fn)` and `grad_fn.register_hook(fn)`;
4. `register_post_accumulate_grad_hook` on leaves;
5. the order they run in, on the graph and step by step.

%% code
import gradviz
import gradviz as torch
import gradviz.nn as nn

_ = torch.manual_seed(0)

%% md
## 1. Tensor hooks

`t.register_hook(fn)` calls `fn(grad)` with the gradient of `t` when it is computed. If `fn`
returns a tensor, that replaces the gradient. The returned handle removes the hook.

%% code
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
handle = x.register_hook(lambda grad: print("x receives", grad))
(x * 2).sum().backward()
handle.remove()

x.grad = None
handle = x.register_hook(lambda grad: grad * 10)  # replace the gradient
(x * 2).sum().backward()
print(x.grad)
handle.remove()

%% md
## 2. Results: `retain_grad`

A result's gradient passes through and is gone: `.grad` stays `None`. `retain_grad()` keeps it.
(It is a hook, too: the engine stores the gradient in `.grad` when it passes.)

%% code
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
z = (y * y).sum()
y.retain_grad()
z.backward()
print(y.grad, y.retains_grad)  # dz/dy = 2y

%% md
## 3. Node hooks

A hook on a node sees all of its gradients at once. `register_prehook(fn)` calls
`fn(grad_outputs)` before the node runs; `register_hook(fn)` calls `fn(grad_inputs,
grad_outputs)` after it (`grad_inputs`: what it computed for each of its `next_functions`).
Either may return a tuple to replace them.

%% code
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = (x * w).sum()
mul = y.grad_fn.next_functions[0][0]
mul.register_prehook(lambda grad_outputs: print("MulBackward0 will receive", grad_outputs))
mul.register_hook(lambda grad_inputs, grad_outputs: print("MulBackward0 sent", grad_inputs))
y.backward()

%% md
## 4. The order

All kinds together, each one appending to a log:

%% code
log = []
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.retain_grad()
z = (y * y).sum()
x.register_hook(lambda g: log.append(f"tensor hook on x: {g.tolist()}"))
y.register_hook(lambda g: log.append(f"tensor hook on y: {g.tolist()}"))
z.grad_fn.register_prehook(lambda go: log.append(f"prehook of SumBackward0: {go[0].tolist()}"))
y.grad_fn.register_hook(lambda gi, go: log.append(f"hook of y.grad_fn, sent {gi[0].tolist()}"))
x.register_post_accumulate_grad_hook(lambda t: log.append(f"x.grad is now {t.grad.tolist()}"))
z.backward()
print("\n".join(log))

%% md
Backward order, from the root down: `SumBackward0`'s prehook; then the hook on `y` runs just
before `y`'s node (`y.grad_fn`, the `MulBackward0` of `x * 3`) and `retain_grad` stores `y.grad`;
that node's post-hook sees what it sent to `x`; `x`'s tensor hook runs just before `x`'s
`AccumulateGrad`; the post-accumulate hook runs once `x.grad` is written.

The tracer records hooks as steps (`hook`). The step player shows each one at its place:

%% code
with gradviz.trace(name="hooks") as tr:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    x.register_hook(lambda g: g * 2)
    z.grad_fn.register_prehook(lambda go: None)
    z.backward()
names = {n.id: n.name for n in tr.nodes.values()}
for s in tr.steps():
    if s.kind in ("execute", "hook", "leaf_grad"):
        print(f"{s.index:2} {s.kind:8} {names[s.node]:16} {getattr(s, 'hook', '')}")
hook_step = next(s.index for s in tr.steps() if s.kind == "hook" and s.hook == "tensor")
gradviz.draw_step(tr, -1, hook_step)

%% code
tr

%% md
## 5. Watching gradients flow through a network

Hooks on the activations of a small network record the gradient norm arriving at each layer's
output, in the order the engine produces them: the reverse of the forward pass.

%% code
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
inputs = torch.randn(16, 4)
flow = []


def watch(i, layer):
    def hook(grad):
        flow.append(f"layer {i} ({type(layer).__name__:6}) output gradient norm {grad.norm():.4f}")

    return hook


h = inputs
for i, layer in enumerate(model):
    h = layer(h)
    h.register_hook(watch(i, layer))
h.pow(2).mean().backward()
print("\n".join(flow))

%% md
## Exercises

**Exercise 1.** Return a tensor hook that rescales a gradient whose norm is above `max_norm` to
norm `max_norm` (same direction), and leaves other gradients alone.

%% code
# Exercise 1
def make_clip_hook(max_norm):
    # Solution (try it yourself first)
    def hook(grad):
        norm = grad.norm().item()
        if norm > max_norm:
            return grad * (max_norm / norm)
        return None

    return hook

%% code
import solutions

solutions.check_make_clip_hook(make_clip_hook)

%% md
**Exercise 2.** `named` maps names to tensors of `loss`'s graph. Register a hook on each, run
`loss.backward()`, remove the hooks, and return the names in the order the hooks ran.

%% code
# Exercise 2
def gradient_order(loss, named):
    # Solution (try it yourself first)
    order = []
    handles = [t.register_hook(lambda g, n=name: order.append(n)) for name, t in named.items()]
    loss.backward()
    for handle in handles:
        handle.remove()
    return order

%% code
solutions.check_gradient_order(gradient_order)

%% md
**Exercise 3.** With `y = x.exp()` and `loss = (y * y).sum()`, return dloss/dy using
`retain_grad`.

%% code
# Exercise 3
def intermediate_grad(x):
    # Solution (try it yourself first)
    y = x.exp()
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad

%% code
solutions.check_intermediate_grad(intermediate_grad)
'''

# =================================================================================================
NOTEBOOKS["09_training_an_mlp.ipynb"] = r'''
%% md
# 9 · Training an MLP, and looking at one step

Everything so far, put to work: a small network learns to separate two interleaving half moons.
Then we look at one training step's graph (forward with module scopes, backward, the step
player), and at how gradients flow through a deeper net.

%% code
import math

import gradviz
import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.data import make_moons

_ = torch.manual_seed(0)

%% md
## 1. The data

Two classes, 200 points in the plane. A little text plot (`0` and `1` are the classes):

%% code
X, y = make_moons(200, noise=0.1, seed=0)
print(X.shape, X.dtype, y.shape, y.dtype)


def text_plot(X, y, model=None, width=60, height=18):
    xs, ys = X[:, 0].numpy(), X[:, 1].numpy()
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    grid = [[" "] * width for _ in range(height)]
    if model is not None:  # shade the region the model assigns to class 1
        cols = torch.linspace(float(x0), float(x1), width)
        for r in range(height):
            row_y = float(y1 - (y1 - y0) * r / (height - 1))
            pts = torch.stack([cols, torch.full((width,), row_y)], dim=1)
            with torch.no_grad():
                cls = model(pts).argmax(dim=1).tolist()
            grid[r] = ["·" if c == 1 else " " for c in cls]
    for px, py, label in zip(xs, ys, y.tolist()):
        c = int((px - x0) / (x1 - x0) * (width - 1))
        r = int((y1 - py) / (y1 - y0) * (height - 1))
        grid[r][c] = str(label)
    print("\n".join("".join(row) for row in grid))


text_plot(X, y)

%% md
## 2. Model, loss, optimizer, loop

Written exactly as with PyTorch. The loop is the one you know: `zero_grad`, forward, loss,
`backward`, `step`.

%% code
model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
print(model)

for step in range(150):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()
    if step % 30 == 0:
        print(f"step {step:3}  loss {loss.item():.4f}")

with torch.no_grad():
    accuracy = (model(X).argmax(dim=1) == y).float().mean().item()
print(f"training accuracy {accuracy:.1%}")
text_plot(X, y, model)

%% md
## 3. One step under the microscope

Trace a few steps. A training loop's trace keeps, by default, every backward run listed
(`tr.run_log`) and the last iteration in full: the earlier ones have the same structure and are
folded, so memory stays bounded however long the loop (`keep_runs=N` keeps the last N runs
instead).

%% code
with gradviz.trace(name="one training step") as tr:
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()
print(tr.summary())
print(tr.notes[-1])
print([run["id"] for run in tr.run_log])

%% md
The forward graph groups ops by module scope: each `Linear` is `t` (transpose the weight) then
`addmm` (bias + input @ weightᵀ). `cross_entropy` is `log_softmax` then `nll_loss`, as PyTorch
decomposes it. Parameters are green.

%% code
gradviz.draw_forward(tr)

%% md
The backward graph of that step, PyTorch's node names: `NllLossBackward0`,
`LogSoftmaxBackward0`, `AddmmBackward0`, `TanhBackward0`, `TBackward0`, and an `AccumulateGrad`
per parameter.

%% code
gradviz.draw_backward(tr)

%% md
And the engine running it, step by step (`gradviz.show(tr)` is the same player a trace shows as
the last line of a cell):

%% code
gradviz.show(tr)

%% md
## 4. Gradient flow through a deeper net

In a deep stack of sigmoids the gradient shrinks layer after layer on its way back (each
sigmoid multiplies it by at most 1/4): the *vanishing gradient*. Compare the weight-gradient
norms of each layer after one backward pass, sigmoid against ReLU:

%% code
def deep_net(activation, depth=8, width=16):
    layers = [nn.Linear(2, width), activation()]
    for _ in range(depth - 2):
        layers += [nn.Linear(width, width), activation()]
    layers.append(nn.Linear(width, 2))
    return nn.Sequential(*layers)


def weight_grad_norms(net):
    net.zero_grad()
    F.cross_entropy(net(X), y).backward()
    return [(name, p.grad.norm().item()) for name, p in net.named_parameters()
            if name.endswith("weight")]


_ = torch.manual_seed(0)
for activation in (nn.Sigmoid, nn.ReLU):
    print(activation.__name__)
    for name, norm in weight_grad_norms(deep_net(activation)):
        bar = "#" * max(1, int(40 + 4 * math.log10(norm)))
        print(f"  {name:10} {norm:9.2e} {bar}")

%% md
Read from the bottom (the last layer, closest to the loss) up: with sigmoid the norms fall by
orders of magnitude towards the first layer, so the first layers barely learn. ReLU keeps them
within a small range.

## Exercises

**Exercise 1.** Return the model's accuracy on `(X, y)` as a float, without recording anything.

%% code
# Exercise 1
def accuracy_of(model, X, y):
    # Solution (try it yourself first)
    with torch.no_grad():
        return (model(X).argmax(dim=1) == y).float().mean().item()

%% code
import solutions

solutions.check_accuracy(accuracy_of)

%% md
**Exercise 2.** After a backward pass, return `{parameter name: norm of its .grad}` for every
parameter that has a gradient.

%% code
# Exercise 2
def grad_norms(model):
    # Solution (try it yourself first)
    return {name: p.grad.norm().item() for name, p in model.named_parameters()
            if p.grad is not None}

%% code
solutions.check_grad_norms(grad_norms)

%% md
**Exercise 3.** Train `model` on `(X, y)` with Adam and cross-entropy, and return the last loss
as a float. The check wants at least 95% training accuracy.

%% code
# Exercise 3
def train(model, X, y, steps=200, lr=0.05):
    # Solution (try it yourself first)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()
    return loss.item()

%% code
solutions.check_train(train)
'''


# =================================================================================================
def cells_of(text: str) -> list[tuple[str, str]]:
    """Split a notebook text into ``(kind, source)`` cells at ``%% md`` / ``%% code`` lines."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line in ("%% md", "%% code"):
            cells.append((line[3:], []))
        elif cells:
            cells[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"text before the first cell marker: {line!r}")
    return [(kind, "\n".join(lines).strip("\n")) for kind, lines in cells]


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name`` as committed: no outputs, minimal metadata, stable cell ids."""
    number = name[:2]
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": dict(KERNELSPEC)})
    for i, (kind, source) in enumerate(cells_of(NOTEBOOKS[name])):
        cell_id = f"nb{number}-c{i:02d}"
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(source, id=cell_id))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(source, id=cell_id))
    nbformat.validate(nb)
    return nb


def render(name: str) -> str:
    """The exact text of the committed notebook file."""
    text = nbformat.writes(build(name))
    return text if text.endswith("\n") else text + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a notebook differs from this script")
    args = parser.parse_args(argv)
    stale = []
    for name in NOTEBOOKS:
        path = TUTORIALS / name
        text = render(name)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if args.check and stale:
        print("out of date (run scripts/make_tutorials.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
