# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 7 · In-place operations and version counters
#
# `y.add_(1)`, `y += 1`, `y[0] = 5` change a tensor in place. Cheap, but dangerous for autograd: a
# backward node may have saved that tensor, and its formula needs the value *as it was*. PyTorch
# detects this with **version counters**; this notebook shows how.

# %%
import warnings

import gradviz
import gradviz as torch

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Every tensor has a version
#
# `t._version` counts the in-place changes to `t`. A view shares its base's counter: changing one
# changes the version of both.

# %%
t = torch.zeros(4)
print(t._version)
t.add_(1)
t += 1
t[0] = 5
print(t._version)  # three in-place changes

view = t[1:3]
view.mul_(2)
print(t._version, view._version, t)

# %% [markdown]
# ## 2. Saved tensors remember their version
#
# When a node saves a tensor, it also notes the tensor's version at that moment. Before using it
# in backward, it compares: if the version moved, the value it would use is not the one it saw.

# %%
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

# %% [markdown]
# Reading the message: the saved tensor is a `[5, 5]` float tensor, `b`, which "is output 0 of
# Mul" (the node of `a * 1` made it); it "is at version 1; expected version 0": it was saved at
# version 0. gradviz lets you look at the saved version itself (PyTorch keeps it in C++): each
# saved value is a `SavedVariable` that remembers `version`.

# %%
saved = c.grad_fn._store["self"]  # gradviz internals: MulBackward0's saved `self`
print("saved at version", saved.version, "- b is now at version", b._version)

# %% [markdown]
# ## 3. On the graph
#
# Traced, the in-place op shows up in the forward graph as a new version of `b`, named `b (v1)`;
# the backward run ends in an error step, and the player shows where.

# %%
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

# %%
tr

# %% [markdown]
# ## 4. When in-place is fine
#
# Only saved tensors matter. `x * 2` needs only the constant 2 for its gradient, so changing its
# result in place is harmless. The in-place op becomes the result's new `grad_fn`, with the old
# one as its first edge: the history is *rebased*.

# %%
x = torch.rand(3, requires_grad=True)
y = x * 2
old = y.grad_fn
y.add_(1)
print(y.grad_fn, y.grad_fn.next_functions[0][0] is old)
y.sum().backward()
print(x.grad)
gradviz.draw_backward(y)

# %% [markdown]
# Some ops save their *output*. `exp` does (d eˣ/dx = eˣ), so changing `exp`'s result in place
# breaks backward, and the message names `Exp`:

# %%
x = torch.rand(3, requires_grad=True)
y = x.exp()
y.add_(1)
try:
    y.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# ## 5. Leaves that require grad
#
# Changing a leaf that requires grad in place is refused outright: its `AccumulateGrad` and every
# node that saved it would be confused. Under `no_grad` it is allowed; that is exactly how an
# optimizer updates parameters (and the version still goes up).

# %%
w = torch.rand(3, requires_grad=True)
try:
    w.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
with torch.no_grad():
    w.add_(1)
print(w._version, w.is_leaf, w.requires_grad)

# %% [markdown]
# ## 6. Finding the culprit: anomaly detection
#
# The error is raised in backward, far from the in-place op. With anomaly detection on, the engine
# also reports where the failing node was created in the forward pass:

# %%
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


# %% [markdown]
# The warning's traceback ends at the line that built the failing node: `c = b * b`, the
# multiplication whose saved `b` was modified afterwards.

# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex7_1")` prints a hint, then `solutions.show("ex7_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** `solutions.broken(x)` computes `x.sigmoid()`, doubles it in place and sums. Its
# backward fails because `sigmoid` saved its output. Write `fixed(x)`, the same function without
# the in-place op.

# %%
# Exercise 1
def fixed(x):
    # Your code here. Stuck? solutions.hint("ex7_1"), then solutions.show("ex7_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex7_1", fixed)


# %% [markdown]
# **Exercise 2.** Update each parameter in place, `p -= lr * p.grad`, with exactly one in-place op
# each and nothing recorded. The check looks at `_version`.

# %%
# Exercise 2
def sgd_update_(params, lr):
    # Your code here. Stuck? solutions.hint("ex7_2"), then solutions.show("ex7_2").
    raise NotImplementedError



# %%
solutions.check("ex7_2", sgd_update_)
