# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 5 · Three engines, one graph
#
# PyTorch's is not the only way to run a backward pass. Over the *same* graph gradviz runs three
# algorithms, each modelled on real source code:
#
# | | PyTorch | SINGA | MXNet |
# | --- | --- | --- | --- |
# | the schedule is | found while running: a priority queue by `sequence_nr` | found while running: a `deque`, last in first out | fixed before anything runs: an explicit gradient graph |
# | the result | `.grad`, written by `AccumulateGrad` | `(param, grad)` pairs, **yielded** as soon as each is final | `.grad`, written by `_copy` nodes as `grad_req` says |
#
# They compute the same gradients in different orders. `docs/engines.md` compares them in detail.

# %%
from IPython.display import HTML

import gradviz
import gradviz as torch
from gradviz.engines import mxnet as mx
from gradviz.engines import singa
from gradviz.render.html import player_html

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Same gradients, different schedules
#
# `gradviz.compare_engines(fn, *inputs)` runs one program under all three engines:

# %%
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
cmp = gradviz.compare_engines(lambda x, y: (x ** 2 + y ** 3).sum(), x, y)
cmp

# %% [markdown]
# (`PowBackward0#1` is the first `PowBackward0` created, `x ** 2`.) PyTorch runs `y ** 3`'s node
# first because it was created last (higher `sequence_nr`). SINGA does too, for another reason:
# `AddBackward0` pushed it last onto the deque, and `ready.pop()` takes from the right. MXNet runs
# `x`'s chain first: its schedule is a depth-first walk from the variables, in graph order. The
# last column says the gradients agree.
#
# ## 2. SINGA: count, pop, yield
#
# SINGA's `backward(y, dy=None)` (`python/singa/autograd.py`) in four moves:
#
# 1. `op_dep, tensor_dep = infer_dependency(y.creator)`: how many edges point at each op, and
#    at each output tensor of each op;
# 2. `y` must hold a single value; `dy` is `1.0` unless given (a number or a tensor);
# 3. `ready = deque([(y.creator, (dy,))])`; loop: `op, dys = ready.pop()`, run the op's backward,
#    add each result into `not_ready[src_op][y_idx]`, decrement both counts;
# 4. when a parameter's `tensor_dep` reaches 0 its gradient is final: **`yield (param, grad)`
#    right away**; when an op's `op_dep` reaches 0 it is appended to `ready`.
#
# In gradviz's terms: `y.creator` is `y.grad_fn`, `op.src` is `next_functions`, a `Dummy` op is an
# `AccumulateGrad` (it never runs backward), and a tensor with `stores_grad` is a leaf that
# requires grad.

# %%
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

# %% [markdown]
# `UnbindBackward0` has two edges into it (`op_dep` 2), but each of its two outputs has one
# (`tensor_dep` 1 each): `y_idx` is which output. Counting both lets SINGA know when *one
# output's* gradient is complete while the op still waits for another.
#
# `singa.backward` is a generator. Each pair comes out the moment it is final, while other ops
# still wait. The tracer shows the interleaving:

# %% [markdown]
# In the program below `h` is used twice, so its `MulBackward0` receives two gradients, summed in
# `not_ready` (SINGA's input buffer). Each `accumulate` step shows both counters going down:

# %%
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

# %% [markdown]
# Three things to see. `w`'s gradient is yielded as soon as its last contribution arrives, before
# `UnbindBackward0` has run. `UnbindBackward0`'s output 1 is complete (`tensor_dep` 0) while the op
# still waits for output 0 (`op_dep` 1). And a leaf's `AccumulateGrad`, SINGA's `Dummy`, never
# runs: SINGA hands the gradient out instead.
#
# A training loop can therefore update each parameter during the pass: all of its consumers have
# run, so nothing needs its old value any more.

# %%
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

# %% [markdown]
# `y` must hold a single value, and `dy` scales everything (`singa.gradients` runs the generator to
# the end and returns a dict):

# %%
try:
    next(singa.backward(w * 2))
except AssertionError as e:
    print("AssertionError:", e)

v = torch.tensor([1.0, 2.0], requires_grad=True)
print(singa.gradients((v * v).sum())[v])  # dy = 1.0
print(singa.gradients((v * v).sum(), dy=3.0)[v])  # 3 · 2v

# %% [markdown]
# ## 3. MXNet: record, build the gradient graph, run it
#
# MXNet records only inside `autograd.record()`, and a variable is declared with
# `attach_grad(grad_req=...)`. `NDArray.backward(out_grad=None, retain_graph=False,
# train_mode=True)` goes through `MXAutogradBackwardEx` to `Imperative::Backward`, which does
# everything up front:
#
# 1. **head gradients**: for each output the given `out_grad`, or by default *ones in the
#    output's shape* (MXNet does not insist on a scalar);
# 2. **the gradient graph** (`pass::Gradient`): the backward nodes, plus an `_aggregate_sum` node
#    where a value was used several times, a `_zeros` node where an output received no gradient,
#    and a `_copy` node into each variable's gradient buffer;
# 3. a reference count per gradient buffer, to free it as soon as its last reader has run;
# 4. run the graph (`RunGraph`) in its fixed order, with recording set to `create_graph` and
#    training to `train_mode`;
# 5. clear the history, unless `retain_graph`.

# %%
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

# %% [markdown]
# `mx.gradient_graph` returns the graph MXNet would run, without running it. Nodes are numbered in
# execution order; each feeds the nodes listed, and `ref_count` says how many nodes read each of
# its outputs (the buffer is freed when they all have). `_head_grad_ones` is the head gradient
# (ones of shape [3]); the two `_aggregate_sum` nodes add the gradients of `h` (used twice) and of
# `x` (used twice, in `x * x`); `_copy` writes `x.grad`.

# %%
gradviz.draw_backward(g)

# %%
mx.backward(y)  # no out_grad: ones, though y has 3 elements
print(x.grad)  # d(3x²)/dx = 6x

# %% [markdown]
# The history is gone after `backward`. A second call fails with MXNet's message; with
# `retain_graph=True` the graph is kept:

# %%
try:
    mx.backward(y)
except mx.MXNetError as e:
    print("MXNetError:", e)

with mx.record():
    y = (x * x).sum()
mx.backward(y, retain_graph=True)
mx.backward(y)  # fine: the graph was kept
print(x.grad)  # grad_req "write": the second pass overwrote the first

# %% [markdown]
# ### `grad_req`: write, add, null
#
# `"write"` overwrites `.grad` (MXNet's `kWriteTo`), `"add"` adds to it (`kAddTo`), `"null"`
# leaves the variable out of the gradient graph altogether (`kNullOp`). Two passes:

# %%
xs = {req: mx.attach_grad(torch.tensor([1.0, 2.0]), grad_req=req)
      for req in ("write", "add", "null")}
for _ in range(2):
    with mx.record():
        total = (xs["write"] ** 2).sum() + (xs["add"] ** 2).sum() + (xs["null"] ** 2).sum()
    mx.backward(total)
for req, t in xs.items():
    print(f"{req:5} {t.grad}")

# %% [markdown]
# ### Zero nodes, and the errors
#
# An output that nobody used gets a `_zeros` gradient. Below, `unbind` makes two rows and only the
# first is used:

# %%
q = mx.attach_grad(torch.rand(2, 3))
with mx.record():
    first, second = q.unbind(0)
    y = (first * 2).sum()  # `second` is never used
print([n.name for n in mx.gradient_graph(y).nodes.values()])
mx.backward(y)
print(q.grad)

# %%
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

# %% [markdown]
# ### `grad` and `create_graph`
#
# `mx.grad(heads, variables)` returns the gradients instead of writing `.grad`. With
# `create_graph=True` the gradient graph's own computation is recorded, so it can be
# differentiated again:

# %%
x = mx.attach_grad(torch.tensor(3.0))
with mx.record():
    (dx,) = mx.grad(x ** 3, [x], create_graph=True)  # 3x² = 27, recorded
mx.backward(dx)
print(dx, x.grad)  # 6x = 18

# %% [markdown]
# ## 4. The three schedules, replayed
#
# `cmp.trace` holds the three runs from section 1. Pick an engine with the run selector and step
# through: the same graph, three orders.

# %%
HTML(player_html(cmp.trace, fragment=True))


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex5_1")` prints a hint, then `solutions.show("ex5_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Return the names of the parameters in the order SINGA yields their gradients.
# `params` maps names to tensors.

# %%
# Exercise 1
def yield_order(loss, params):
    # Your code here. Stuck? solutions.hint("ex5_1"), then solutions.show("ex5_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex5_1", yield_order)


# %% [markdown]
# **Exercise 2.** SGD during the pass: update every parameter by `p -= lr * g` as SINGA yields it.

# %%
# Exercise 2
def singa_sgd(loss, lr):
    # Your code here. Stuck? solutions.hint("ex5_2"), then solutions.show("ex5_2").
    raise NotImplementedError



# %%
solutions.check("ex5_2", singa_sgd)


# %% [markdown]
# **Exercise 3.** Make `x = [1, 2, 3]` a variable with the given `grad_req`, then twice: record
# `y = (x * x).sum()` and run `mx.backward(y)`. Return `x.grad`.

# %%
# Exercise 3
def mx_grad_twice(grad_req):
    # Your code here. Stuck? solutions.hint("ex5_3"), then solutions.show("ex5_3").
    raise NotImplementedError



# %%
solutions.check("ex5_3", mx_grad_twice)
