# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 1 · Tensors, `requires_grad` and `backward()`
#
# This series takes PyTorch's autograd apart with **gradviz**, a small autograd engine on NumPy
# whose internals mirror PyTorch's. Code written for `torch` (within gradviz's op set) runs
# unchanged after `import gradviz as torch`, so what you see here is what PyTorch does.
#
# In this notebook:
#
# 1. tensors that remember how they were made, and `backward()`;
# 2. the implicit gradient of a scalar: `z.backward()` is `z.backward(torch.tensor(1.))`;
# 3. non-scalar outputs and the `gradient` argument: `z.backward(torch.ones_like(x))`;
# 4. gradients accumulate;
# 5. leaves and results (`is_leaf`);
# 6. switching recording off with `no_grad`.

# %%
import gradviz
import gradviz as torch  # read `torch.` as "PyTorch does the same"

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% [markdown]
# ## 1. Tensors that remember how they were made
#
# A tensor created with `requires_grad=True` asks autograd to watch it. Every operation on it
# records a *backward node* on the result, its `grad_fn`. `backward()` walks those nodes from the
# result back to the inputs and leaves the gradient in each input's `.grad`.

# %%
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = torch.sum(x + y)
z

# %% [markdown]
# `grad_fn=<SumBackward0>`: `z` knows it came out of a sum. `gradviz.draw_backward` draws what
# `backward()` will walk through. Read it from the top (the output `z`) down to the leaves `x` and
# `y`.

# %%
gradviz.draw_backward(z)

# %%
z.backward()
print(x.grad)
print(y.grad)


# %% [markdown]
# Each entry of `x` appears once in the sum, so ∂z/∂x is all ones, and the same for `y`.
#
# ## 2. The implicit gradient of a scalar
#
# `backward()` computes a *vector–Jacobian product*: it starts from a gradient for the output and
# pushes it back through the graph. For a scalar output the natural start is dz/dz = 1, so you may
# leave it out: `z.backward()` is shorthand for `z.backward(torch.tensor(1.))`.

# %%
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

# %% [markdown]
# ## 3. Non-scalar outputs need a `gradient`
#
# Now `z = x ** 2 + y ** 3` is a 5×5 tensor. There is no single starting gradient to assume, so
# `backward()` refuses to guess:

# %%
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = x ** 2 + y ** 3
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# Pass a `gradient` of the same shape as `z`: one weight per output element. With all ones, each
# `x.grad[i, j]` is ∂z[i, j]/∂x[i, j] = 2·x[i, j], as if `z` had been summed first.

# %%
z.backward(torch.ones_like(x))
print(torch.allclose(x.grad, 2 * x), torch.allclose(y.grad, 3 * y ** 2))

# %% [markdown]
# Other weights give a weighted sum: `z.backward(v)` leaves the same gradients as
# `(z * v).sum().backward()`. A gradient of the wrong shape is an error.

# %%
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

# %% [markdown]
# ## 4. Gradients accumulate
#
# `backward()` *adds* into `.grad`; it never overwrites. Two backward passes (over two fresh
# graphs) double the gradient. That is why a training loop calls `optimizer.zero_grad()` (or sets
# `.grad = None`) before each backward.

# %%
w = torch.tensor([1.0, 2.0], requires_grad=True)
for _ in range(2):
    (w * 3).sum().backward()
    print(w.grad)
w.grad = None  # start afresh

# %% [markdown]
# ## 5. Leaves and results
#
# Tensors you create yourself are **leaves** (`is_leaf=True`). Tensors computed from something
# that requires grad are **results**: they have a `grad_fn` and are not leaves. Only leaves get
# their `.grad` filled in; a result is an intermediate value (notebook 8 shows `retain_grad()`,
# which keeps its gradient too).

# %%
x = torch.rand(3, requires_grad=True)
c = torch.rand(3)  # no requires_grad: autograd ignores it
z = x * c
rows = [("x", x), ("c", c), ("z = x * c", z), ("z.detach()", z.detach()), ("c * 2", c * 2)]
print(f"{'tensor':12} {'is_leaf':8} {'requires_grad':14} grad_fn")
for name, t in rows:
    print(f"{name:12} {t.is_leaf!s:8} {t.requires_grad!s:14} {t.grad_fn}")

# %%
z.sum().backward()
print("x.grad:", x.grad)
print("z.grad:", z.grad, "(a result: its gradient is not kept)")
print("c.grad:", c.grad, "(does not require grad)")

# %% [markdown]
# `c * 2` is a leaf although it was computed: nothing in it requires grad, so nothing was
# recorded. `detach()` cuts a result loose from its history: a leaf sharing the same data.
#
# ## 6. Switching recording off: `no_grad`
#
# Inside `with torch.no_grad():` operations run but are not recorded: no `grad_fn`, nothing saved
# for backward, less memory and a little less time. Use it for evaluation and for updating
# parameters. `torch.no_grad()` also works as a decorator, and `torch.is_grad_enabled()` tells
# you the current mode.

# %%
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

# %% [markdown]
# The tracer shows the difference. `gradviz.trace()` records every operation run inside it, and
# `gradviz.draw_both` puts the forward graph (left) next to the backward graph (right). The
# multiplication under `no_grad` is in the forward graph but made no backward node: `backward()`
# never reaches it, so `a.grad` counts only the `a * 3` path.

# %%
with gradviz.trace(name="a * 4 under no_grad") as tr:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    with torch.no_grad():
        c = a * 4  # computed, not recorded
    loss = (b + c).sum()
    loss.backward()
print(a.grad)
gradviz.draw_both(tr)


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex1_1")` prints a hint, then `solutions.show("ex1_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Return the gradient of `sum(x**3 - 2*x)` at the given points, computed with
# `backward()`. (It should be 3x² − 2.)

# %%
# Exercise 1
def cubic_grad(values):
    # Your code here. Stuck? solutions.hint("ex1_1"), then solutions.show("ex1_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex1_1", cubic_grad)


# %% [markdown]
# **Exercise 2.** `z = x ** 2` is not a scalar. Call `z.backward` with the weights `v` and return
# `x.grad`. (It should be 2·x·v.)

# %%
# Exercise 2
def weighted_grad(x, v):
    # Your code here. Stuck? solutions.hint("ex1_2"), then solutions.show("ex1_2").
    raise NotImplementedError



# %%
solutions.check("ex1_2", weighted_grad)


# %% [markdown]
# **Exercise 3.** One step of gradient descent: update the leaf `w` *in place*,
# `w -= lr * w.grad`, without recording it, then clear its gradient.

# %%
# Exercise 3
def sgd_step(w, lr):
    # Your code here. Stuck? solutions.hint("ex1_3"), then solutions.show("ex1_3").
    raise NotImplementedError



# %%
solutions.check("ex1_3", sgd_step)
