# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 4 · The engine, step by step
#
# `backward()` hands the graph to the **engine**. gradviz's engine
# (`gradviz/autograd/engine.py`, about 300 lines) models PyTorch's C++ `torch::autograd::Engine`
# in PyTorch's own words. This notebook follows one backward pass through it:
#
# 1. the call chain down to `run_backward`;
# 2. edges, `Edge(function, input_nr)`, and `gradient_edge`;
# 3. dependency counts;
# 4. the ready queue: priority by `sequence_nr`, `AccumulateGrad` first;
# 5. input buffers, where the gradients of a tensor used twice are summed;
# 6. `AccumulateGrad` writing `.grad`;
# 7. the whole pass in the step player.

# %%
import os
import traceback

import gradviz
import gradviz as torch
from gradviz.autograd.engine import compute_dependencies
from gradviz.autograd.graph import Edge, get_gradient_edge, gradient_edge
from gradviz.trace.replay import replay

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. From `loss.backward()` to `run_backward`
#
# In PyTorch, `Tensor.backward` checks its arguments and calls `torch.autograd.backward`, which
# calls `Variable._execution_engine.run_backward(tensors, grad_tensors, retain_graph,
# create_graph, inputs, allow_unreachable=True, accumulate_grad=True)`, a C++ function
# (`THPEngine_run_backward`). gradviz keeps the same chain, in Python. A hook runs *inside* the
# engine, so the call stack it sees shows the chain:

# %%
PACKAGE = os.path.dirname(gradviz.__file__)


def show_call_chain(grad):
    for frame in traceback.extract_stack()[:-1]:
        if frame.filename.startswith(PACKAGE):
            where = os.path.relpath(frame.filename, os.path.dirname(PACKAGE))
            print(f"{frame.name:18} {where}:{frame.lineno}")


x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(show_call_chain)
(x * x).sum().backward()

# %% [markdown]
# `Tensor.backward` → `gradviz.autograd.backward` → `run_backward`, which called the hook. The
# other entry point, `torch.autograd.grad`, ends in the same function with other arguments:
#
# | call | `accumulate_grad` | `inputs` | result |
# | --- | --- | --- | --- |
# | `z.backward()` | True | all leaves | `.grad` of every leaf written |
# | `z.backward(inputs=[w])` | True | `w` | only `w.grad` written |
# | `torch.autograd.grad(z, [w])` | False | `w` | gradient returned, `.grad` untouched |

# %%
w = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
z = (w * b).sum()
z.backward(inputs=[w], retain_graph=True)
print("backward(inputs=[w]):", w.grad, b.grad)
(gw,) = torch.autograd.grad(z, [w])
print("autograd.grad:", gw, "while w.grad is still", w.grad)

# %% [markdown]
# ## 2. Edges: `Edge(function, input_nr)` and `gradient_edge`
#
# `run_backward` first turns each root tensor into an **edge** with `gradient_edge(tensor)`. An
# `Edge` is a pair `(function, input_nr)`: the node the gradient goes to, and *which input* of that
# node it is. (A node's inputs are the gradients of its forward op's outputs.)
#
# `gradient_edge` has two cases, as in PyTorch's C++:
#
# - a result: `Edge(tensor.grad_fn, tensor.output_nr)`;
# - a leaf that requires grad: `Edge(<its AccumulateGrad>, 0)`, the *gradient accumulator* that
#   adds what it receives into the leaf's `.grad`.

# %%
x = torch.rand(2, 3, requires_grad=True)
y = x.exp()
print(gradient_edge(y), gradient_edge(y) == Edge(y.grad_fn, y.output_nr))
e = gradient_edge(x)
print(e, type(e.function).__name__, e.function.variable is x)

# %% [markdown]
# `next_functions` is a tuple of such edges. `input_nr` is 0 when the forward op has one output.
# With several outputs it is not: `unbind` splits `x` into rows `a` and `b`, outputs 0 and 1 of one
# `UnbindBackward0` node.

# %%
a, b = x.unbind(0)
print(a.grad_fn is b.grad_fn, a.output_nr, b.output_nr)
prod = a * b
print(prod.grad_fn.next_functions)  # (UnbindBackward0, 0) and (UnbindBackward0, 1)
print(gradient_edge(b))

# %% [markdown]
# So `MulBackward0` sends the gradient of `a` to input 0 of `UnbindBackward0` and that of `b` to
# its input 1. In the drawing the number at each arrow head is the `input_nr`:

# %%
gradviz.draw_backward(prod.sum())

# %% [markdown]
# Only tensors that require grad have a gradient edge (and an accumulator). An input that does not
# gets `(None, 0)` in `next_functions`:

# %%
c = torch.rand(3)
print((a * c).grad_fn.next_functions)
try:
    get_gradient_edge(c)
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# ## 3. Dependency counts
#
# Next the engine walks the graph once (iteratively, with a stack) and counts for every node how
# many edges point at it. A node may run only after that many gradients have arrived. The running
# example uses `h` three times:

# %%
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
h = a * b
loss = (h * h + h).sum()
for node, count in compute_dependencies(loss.grad_fn).items():
    print(f"{type(node).__name__:16} sequence_nr={node.sequence_nr:<22} dependencies={count}")

# %% [markdown]
# `h`'s `MulBackward0` has 3 dependencies: two from `h * h`, one from `+ h`. The root
# (`SumBackward0`) is not counted: it receives the starting gradient directly.
#
# ## 4. The ready queue
#
# A node whose count has reached zero is **ready**. The engine keeps ready nodes in a priority
# queue ordered by `sequence_nr`, a counter stamped on each node when it is created, highest first:
# of all ready nodes the one created *last* runs first. That approximates the reverse of the
# forward pass and frees memory early. `AccumulateGrad` reports the largest possible number,
# 2⁶⁴ − 1, so a leaf's gradient is written as soon as it is final.
#
# `gradviz.trace()` records every step of the pass:

# %%
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

# %% [markdown]
# Follow the queue: `SumBackward0` runs first (it is the root). `AddBackward0` sends one gradient
# to `h * h`'s node and one to `h`'s node (`remaining 2`). `h * h`'s node runs next and sends two
# gradients to `h`'s node, which becomes ready only when its count reaches 0. Then the two
# `AccumulateGrad` nodes run and write `.grad`.
#
# `gradviz.draw_step(trace, run, k)` draws the engine's state after step `k`: the running node in
# gold, ready nodes green, finished nodes grey, dependency counts on the nodes, and the gradients
# that have travelled along the edges. Here, just after `h`'s node has received its last gradient:

# %%
h_node = next(t.grad_fn for t in tr.tensors.values() if t.name == "h")
last_into_h = [s.index for s in tr.steps() if s.kind == "accumulate" and s.node == h_node][-1]
gradviz.draw_step(tr, -1, last_into_h)

# %% [markdown]
# ## 5. Input buffers
#
# Where do the three gradients for `h` wait while its node is not ready? In the node's **input
# buffer**: one slot per output of the forward op (`num_outputs`), indexed by `input_nr`. Each
# `accumulate` step adds into a slot. With h = [3, 8], ∂loss/∂h = 2h + 1 = [7, 17]:

# %%
for s in run.steps:
    if s.kind == "accumulate" and s.node == h_node:
        print(describe(s, replay(run, s.index)))

# %% [markdown]
# ## 6. `AccumulateGrad`
#
# Last, each leaf's `AccumulateGrad` runs (`leaf_grad` steps): the first gradient becomes `.grad`
# (taken over without a copy when nothing else refers to it, as PyTorch does, else copied); later
# ones, from another backward pass, are added in place.

# %%
for s in run.steps:
    if s.kind == "leaf_grad":
        print(tr.tensors[s.tensor].name, describe(s, replay(run, s.index)))
print(a.grad, b.grad)

# %% [markdown]
# ## 7. The whole pass in the step player
#
# The player replays every step. Click it, then use ← / →, or the buttons and the slider. Yellow:
# the node the step is about; orange: an edge carrying a gradient; blue, dashed: the ready queue;
# green: done. The side panel lists the dependency counts, the ready queue, the gradients and each
# leaf's `.grad`.

# %%
tr

# %% [markdown]
# ## 8. Several roots: `GraphRoot`
#
# `torch.autograd.backward([l1, l2])` starts from two roots. The engine then starts at a dummy
# `GraphRoot` node whose `next_functions` are the two root edges and whose outputs are the two
# starting gradients:

# %%
with gradviz.trace(name="two roots") as tr2:
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    l1 = (p * 2).sum()
    l2 = (p * p).sum()
    torch.autograd.backward([l1, l2])
print(p.grad)  # 2 + 2p
print([n.name for n in tr2.nodes.values()])
gradviz.draw_backward(tr2)


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex4_1")` prints a hint, then `solutions.show("ex4_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Count the dependencies yourself: return a dict `{node: number of edges into it}`
# for every node reachable from `t.grad_fn` (not counting `t.grad_fn` itself, unless an edge
# points at it). Walk iteratively.

# %%
# Exercise 1
def dependency_counts(t):
    # Your code here. Stuck? solutions.hint("ex4_1"), then solutions.show("ex4_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex4_1", dependency_counts)

# %% [markdown]
# **Exercise 2.** Predict the engine's execution order without running any backward formula:
# simulate the ready queue with `heapq`, ordered by `-node.sequence_nr` (ties first come, first
# served), decrementing dependency counts. Return the nodes in the order they would run,
# `AccumulateGrad` included. The check compares with the trace's `execute` steps.

# %%
# Exercise 2
import heapq  # noqa: F401 - the ready queue is a heap: use it in your answer


def predict_order(t):
    # Your code here. Stuck? solutions.hint("ex4_2"), then solutions.show("ex4_2").
    raise NotImplementedError



# %%
solutions.check("ex4_2", predict_order)


# %% [markdown]
# **Exercise 3.** Your own engine. Extend `predict_order` with input buffers: start with
# `[torch.ones_like(loss)]` in the root's buffer, run each node with `node(*buffer)` (a node
# returns one gradient, or a tuple with one per `next_functions` entry), add each result into the
# buffer slot `input_nr` of the next node, and when an `AccumulateGrad` becomes ready record
# `grads[id(node.variable)] = buffer[0]` instead of running it. Return `grads`.

# %%
# Exercise 3
def my_backward(loss):
    # Your code here. Stuck? solutions.hint("ex4_3"), then solutions.show("ex4_3").
    raise NotImplementedError



# %%
solutions.check("ex4_3", my_backward)
