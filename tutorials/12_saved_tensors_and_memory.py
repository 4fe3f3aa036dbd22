# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 12 · Saved tensors and memory
#
# Backward needs values from the forward pass: `x * w` needs `x` to get `w`'s gradient and `w`
# to get `x`'s. Each backward node keeps what it needs, its *saved tensors*, from the forward
# pass until backward has run. That is where the memory of a training step goes.
#
# In this notebook:
#
# 1. what each node keeps;
# 2. `saved_tensors_hooks`: seeing (and changing) every tensor that is saved;
# 3. `retain_graph`: saved tensors are freed by backward;
# 4. the memory a training step holds, drawn.

# %%
import gradviz
import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.autograd.graph import saved_tensors_hooks

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. What each node keeps
#
# As in PyTorch, a node shows what it saved as attributes named `_saved_<argument>`. What is
# saved depends on the derivative: `MulBackward0` keeps both factors, `ExpBackward0` keeps its
# *result* (the derivative of eˣ is eˣ), `SumBackward0` keeps only a shape, and
# `AddBackward0` keeps nothing at all.

# %%
x = torch.randn(3, 4, requires_grad=True)
w = torch.randn(3, 4, requires_grad=True)
y = ((x * w).exp() + x).sum()


def saved_of(node):
    return {a: (tuple(v.shape) if isinstance(v, torch.Tensor) else v)
            for a in dir(node) if a.startswith("_saved_") for v in [getattr(node, a)]}


stack, seen = [y.grad_fn], set()
while stack:
    node = stack.pop()
    print(f"{node.name():16s} {saved_of(node)}")
    for nxt, _ in node.next_functions:
        # AccumulateGrad (a leaf's node) saves nothing: it holds the leaf as .variable.
        if nxt is not None and nxt not in seen and not hasattr(nxt, "variable"):
            seen.add(nxt)
            stack.append(nxt)

# %% [markdown]
# `show_saved=True` draws the saved tensors as orange nodes beside the node that keeps them;
# a saved tensor that is also a leaf or an output is linked to it.

# %%
gradviz.draw_backward(y, show_saved=True)

# %% [markdown]
# ## 2. `saved_tensors_hooks`
#
# Inside `with saved_tensors_hooks(pack, unpack):`, every tensor a node saves goes through
# `pack(tensor)`, and what `pack` returns is stored instead; backward gets the tensor back from
# `unpack(stored)`. PyTorch uses this for offloading saved tensors to the CPU
# (`save_on_cpu`), compressing them, or recomputing them. Here we only watch:

# %%
log = []


def pack(t):
    log.append(f"pack {tuple(t.shape)}")
    return t


def unpack(t):
    log.append(f"unpack {tuple(t.shape)}")
    return t


with saved_tensors_hooks(pack, unpack):
    z = (x * w).exp().sum()
print(log)
z.backward()
print(log)

# %% [markdown]
# Three packs at forward time (`x` and `w` for the multiplication, the result of `exp`), and
# three unpacks during backward, when the nodes need them. Storing something smaller in `pack`
# (a float16 copy, a file name) is how the memory of saved tensors is traded for time or
# precision.
#
# ## 3. Saved tensors are freed by backward: `retain_graph`
#
# Once a node has run in backward, it releases what it saved: the forward values are no longer
# needed, and keeping them would hold the whole step's memory. A second `backward()` through
# the same graph therefore fails, unless the first one was told `retain_graph=True`.

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x.exp() * x).sum()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print("RuntimeError:", str(e)[:110], "...")

y = (x.exp() * x).sum()
y.backward(retain_graph=True)  # keep the saved tensors
y.backward()  # fine; this one frees them
print(x.grad)


# %% [markdown]
# ## 4. The memory a training step holds
#
# Between the forward pass and `backward()`, every saved tensor of every node is alive. For an
# MLP that is mostly the activations, one `(batch, width)` matrix per layer, so it grows with
# the batch size while the parameters' memory does not. Count the bytes by walking the graph:

# %%
def saved_memory(loss):
    """{node name: bytes of the tensors it saved}, for every node of loss's graph."""
    sizes, stack, seen = {}, [loss.grad_fn], {loss.grad_fn}
    while stack:
        node = stack.pop()
        nbytes = sum(v.nelement() * v.dtype.itemsize for a in dir(node)
                     if a.startswith("_saved_") for v in [getattr(node, a)]
                     if isinstance(v, torch.Tensor))
        if nbytes:
            sizes[f"{node.name()} #{len(sizes)}"] = nbytes
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return sizes


model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 4))
params = sum(p.nelement() * p.dtype.itemsize for p in model.parameters())
for batch in (8, 64, 512):
    loss = F.cross_entropy(model(torch.randn(batch, 16)), torch.randint(0, 4, (batch,)))
    saved = sum(saved_memory(loss).values())
    print(f"batch {batch:4d}: saved tensors {saved / 1024:7.1f} KiB, "
          f"parameters {params / 1024:.1f} KiB")

# %% [markdown]
# Drawn per node for the batch of 512 (one `█` per 8 KiB): the `AddmmBackward0` nodes keep
# their input activations (`_saved_mat1`) and weights (`_saved_mat2`), the `ReluBackward0`
# nodes their results, `TBackward0` nothing.

# %%
for name, nbytes in saved_memory(loss).items():
    print(f"{name:26s} {nbytes / 1024:6.1f} KiB {'█' * max(1, round(nbytes / 8192))}")
gradviz.draw_backward(loss, show_saved=True)

# %% [markdown]
# ## 5. Memory, step by step
#
# `backward()` frees a node's saved tensors right after the node runs (its `release_saved`
# step), so the memory the graph holds falls as the engine walks down it. The tracer records
# it: `gradviz.trace.memory` gives the bytes held after each engine step, as *saved
# activations* (the non-leaf tensors still saved: the parameters and the input are held by the
# program anyway) and *input buffers* (gradients received by a node that has not run yet). The
# step player draws the same two curves in its **Memory** panel, a marker at the current step,
# and `gradviz trace` prints their ends in its summary.

# %%
from gradviz.trace import memory

with gradviz.trace() as tr:
    loss.backward()
run = tr.run()
held = memory(run, tr.nodes, tr.tensors)
print(f"before the first node runs: {held.saved[0] / 1024:.1f} KiB of saved activations")
for step in run.steps:
    if step.kind == "release_saved":
        print(f"step {step.index:3d}  {tr.nodes[step.node].name:16s} frees its saved tensors: "
              f"{held.saved[step.index] / 1024:6.1f} KiB still held")
print(f"input buffers held at most {held.peak_buffers / 1024:.1f} KiB at once")

# %% [markdown]
# The same run in the step player: step through it and watch the Memory panel's blue curve
# drop at each `release_saved` step, while the orange one rises and falls as gradients wait in
# input buffers.

# %%
tr


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex12_1")` prints a hint, then `solutions.show("ex12_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Return how many tensors are saved for backward while computing `fn(x)`
# (count them with `saved_tensors_hooks`; return the count as an int).

# %%
# Exercise 1
def count_saved(fn, x):
    # Your code here. Stuck? solutions.hint("ex12_1"), then solutions.show("ex12_1").
    raise NotImplementedError


# %%
import solutions

solutions.check("ex12_1", count_saved)


# %% [markdown]
# **Exercise 2.** Compute `fn(x)` so that every saved tensor is stored as a *float16* copy and
# turned back into float32 when backward needs it. Return the result of `fn(x)`; its gradient
# should then be close to (not exactly) the float32 one.

# %%
# Exercise 2
def run_with_half_precision_saves(fn, x):
    # Your code here. Stuck? solutions.hint("ex12_2"), then solutions.show("ex12_2").
    raise NotImplementedError


# %%
solutions.check("ex12_2", run_with_half_precision_saves)
