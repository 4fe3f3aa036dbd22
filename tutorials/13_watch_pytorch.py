# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 13 · Watch PyTorch's own engine
#
# Every notebook so far ran gradviz's engine, written to mirror PyTorch's. This one runs
# **real PyTorch** (it needs `pip install gradviz[torch]`) and lets gradviz watch it:
# `gradviz.trace(torch=True)` records the forward ops you call, the `grad_fn` graph PyTorch
# builds, and what PyTorch's engine actually does during `backward()`, into the same trace
# every gradviz picture and the player draw.
#
# In this notebook:
#
# 1. a training step of a small MLP, traced;
# 2. the backward graph PyTorch built: its node names and `_saved_*` attributes;
# 3. the step player;
# 4. the order PyTorch's engine ran the nodes in, and the order `_sequence_nr()` predicts;
# 5. your own hooks behave exactly as without the trace;
# 6. the same program on gradviz's engine: the same nodes, run in the same order.

# %%
import torch
import torch.nn.functional as F

import gradviz

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. A training step, traced
#
# An ordinary PyTorch step: nothing in it knows about gradviz. The `with` block records it;
# the trace's backward run says which engine ran it: `"torch"` is PyTorch's own (gradviz's
# engine would say `"pytorch"`, the engine it imitates).

# %%
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 4)
target = torch.tensor([0, 2, 1, 1, 0])

with gradviz.trace(torch=True) as tr:
    loss = F.cross_entropy(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()

run = tr.run()
print("engine:", run.engine)
print("ops:", [op.name for op in tr.ops])
print("loss:", round(loss.item(), 4))

# %% [markdown]
# The ops are the calls you wrote (`linear`, `tanh`, `cross_entropy`, and the optimizer's
# in-place `add_` updates), not the smaller ATen operations PyTorch splits them into.
#
# ## 2. The graph PyTorch built
#
# `gradviz.draw_backward` takes a torch tensor as it takes a gradviz one. We build a fresh
# forward pass (backward frees what the nodes saved) and draw it with the saved tensors.

# %%
out = F.cross_entropy(model(x), target)
gradviz.draw_backward(out, show_saved=True)

# %% [markdown]
# Those names are PyTorch's own (`node.name()`), and so are the saved attributes: every
# `_saved_<argument>` a node keeps for its derivative. `AddmmBackward0` keeps the input
# (`_saved_mat1`) and the transposed weight (`_saved_mat2`), `TanhBackward0` its *result*.
# PyTorch saves only what a needed gradient uses: the first layer's `_saved_mat2` is `None`,
# because `x` does not require a gradient.

# %%
stack, seen = [out.grad_fn], set()
while stack:
    node = stack.pop()
    saved = {a: (tuple(v.shape) if isinstance(v, torch.Tensor) else v)
             for a in dir(node) if a.startswith("_saved_") for v in [getattr(node, a)]}
    print(f"{node.name():24s} {saved}")
    for nxt, _ in node.next_functions:
        # AccumulateGrad (a leaf's node) saves nothing: it holds the leaf as .variable.
        if nxt is not None and nxt not in seen and not hasattr(nxt, "variable"):
            seen.add(nxt)
            stack.append(nxt)

# %% [markdown]
# ## 3. The player
#
# `gradviz.show(tr)` embeds the step player: the forward ops, then PyTorch's engine one step
# at a time (which node runs, what gradient arrives, what reaches each `.grad`).

# %%
gradviz.show(tr)

# %% [markdown]
# ## 4. The order PyTorch's engine ran
#
# The trace's `execute` steps are the nodes in the order PyTorch's engine really called them
# (hooks observed it; nothing was simulated). Next to each: its `_sequence_nr()`, the number a
# node gets when the forward op creates it. PyTorch's CPU ready queue always runs the ready
# node with the **highest** sequence number first, so later ops are differentiated first;
# `AccumulateGrad` (a leaf's node) has the largest possible number, so a leaf's `.grad` is
# written as soon as its gradient is complete.

# %%
executed = [tr.nodes[s.node] for s in run.steps if s.kind == "execute"]
for info in executed:
    print(f"{info.name:24s} sequence_nr {info.sequence_nr}")

# %% [markdown]
# While recording, gradviz also *derives* that order from the graph (dependency counts and
# a ready queue ordered by `_sequence_nr()`) and compares: when the two differ,
# `tr.notes` says so. It is empty: the rule explains what the engine did.

# %%
print("notes:", tr.notes)
assert tr.notes == []


# %% [markdown]
# ## 5. Your hooks behave the same
#
# Recording attaches hooks of its own to every node for the duration of each `backward()`
# and removes them afterwards. They run after yours and only copy values, so a hook you
# register sees and changes exactly what it would without the trace.

# %%
def hooked_grads(traced):
    torch.manual_seed(1)
    w = torch.randn(3, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.clone()) or g * 2)  # doubles w's gradient
    y = (w.exp() * w).sum()
    if traced:
        with gradviz.trace(torch=True):
            y.backward()
    else:
        y.backward()
    return w.grad, seen[0]


plain_grad, plain_seen = hooked_grads(traced=False)
traced_grad, traced_seen = hooked_grads(traced=True)
print("same .grad:", torch.equal(plain_grad, traced_grad))
print("the hook saw the same gradient:", torch.equal(plain_seen, traced_seen))
assert torch.equal(plain_grad, traced_grad) and torch.equal(plain_seen, traced_seen)


# %% [markdown]
# ## 6. The same program on gradviz's engine
#
# The step below takes the library as an argument: `step(torch)` is PyTorch, `step(gradviz)`
# is the same code after `import gradviz as torch`. The numbers differ (each library has its
# own random generator), but the graph's node names and the order the engine runs them
# do not.

# %%
def step(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    x = torch.randn(5, 4)
    target = torch.tensor([0, 2, 1, 1, 0])
    with gradviz.trace(torch=torch.__name__ == "torch") as tr:
        torch.nn.functional.cross_entropy(model(x), target).backward()
    run = tr.run()
    return run.engine, [tr.nodes[s.node].name for s in run.steps if s.kind == "execute"]


real_engine, real_order = step(torch)
our_engine, our_order = step(gradviz)
for a, b in zip(real_order, our_order):
    print(f"{a:24s} {b}")
print(real_engine, "vs", our_engine, "- same order:", real_order == our_order)
assert (real_engine, our_engine) == ("torch", "pytorch") and real_order == our_order


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex13_1")` prints a hint, then `solutions.show("ex13_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Given a trace `tr` of real PyTorch code, return the names of the nodes
# PyTorch's engine executed in the trace's *last* backward run, in the order it ran them.

# %%
# Exercise 1
def engine_order(tr):
    # Your code here. Stuck? solutions.hint("ex13_1"), then solutions.show("ex13_1").
    raise NotImplementedError


# %%
import solutions

solutions.check("ex13_1", engine_order)


# %% [markdown]
# **Exercise 2.** Predict PyTorch's order without running backward: given a torch `loss`,
# return the node names (`type(node).__name__`) in the order the engine will run them, using
# only `next_functions` and `_sequence_nr()` (count each node's incoming edges; a node is ready
# when all of them have delivered; run the ready node with the highest sequence number first).

# %%
# Exercise 2
def predicted_order(loss):
    # Your code here. Stuck? solutions.hint("ex13_2"), then solutions.show("ex13_2").
    raise NotImplementedError


# %%
solutions.check("ex13_2", predicted_order)
