# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 6 · Graph lifetime: saved tensors, `retain_graph`, `create_graph`
#
# A backward node keeps what its formula needs: the *saved tensors*. They can be large (every
# activation of a network), so `backward()` frees them as it goes. This notebook looks at:
#
# 1. saved tensors, and how backward frees them (with PyTorch's error if you go back);
# 2. `retain_graph=True`;
# 3. `create_graph=True`: a backward pass that is itself recorded, for second derivatives.

# %%
import warnings

import gradviz
import gradviz as torch

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Saved tensors are freed by backward

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = (x ** 2).sum()
pow_node = z.grad_fn.next_functions[0][0]
print(pow_node._saved_self, pow_node._saved_exponent)  # what 2·x needs
z.backward()
try:
    print(pow_node._saved_self)
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# The graph itself is still there (`z.grad_fn`, `next_functions`); only the saved values are gone
# (numbers such as the exponent are kept). A second backward needs them, so it fails with the same
# message:

# %%
print(z.grad_fn, z.grad_fn.next_functions)
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# The tracer shows when: a `release_saved` step right after each node that saved something has
# run. Memory is given back during the pass, not at the end.

# %%
with gradviz.trace(name="release_saved") as tr:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (x.exp() * x).sum()
    z.backward()
names = {n.id: n.name for n in tr.nodes.values()}
print([(s.kind, names.get(s.node)) for s in tr.steps() if s.kind in ("execute", "release_saved")])
gradviz.draw_backward(tr, show_saved=True)

# %% [markdown]
# ## 2. `retain_graph=True`
#
# To go through the same graph twice, keep the saved values: `retain_graph=True`. The second
# backward (without it) frees them. Gradients accumulate, as always:

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = (x ** 2).sum()
z.backward(retain_graph=True)
print(x.grad)
z.backward()
print(x.grad)  # 2x + 2x

# %% [markdown]
# (SINGA frees an op's values after it ran too, with `del op`. MXNet goes further and clears the
# whole history, so a second `backward` fails even earlier, with "Cannot differentiate node
# because it is not in a computational graph": see notebook 5.)
#
# ## 3. `create_graph=True`: differentiating the backward pass
#
# Normally the backward pass computes plain numbers. With `create_graph=True` it runs *with
# recording on*, so the gradients it produces have a `grad_fn` and can be differentiated again.

# %%
x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
(dx,) = torch.autograd.grad(y, x, create_graph=True)
print(dx)  # 3x² = 27, with a grad_fn
(ddx,) = torch.autograd.grad(dx, x)
print(ddx)  # 6x = 18

# %% [markdown]
# `dx` is the output of the ops `PowBackward0`'s formula ran, `3 · x² · grad`, recorded like any
# forward computation:

# %%
gradviz.draw_backward(dx)

# %% [markdown]
# `create_graph` implies `retain_graph` (the first graph is needed again). With `backward()` it
# works as well, and `x.grad` gets a `grad_fn`. PyTorch (and gradviz) warn about it: `x.grad`
# would then hold a reference cycle through the graph; `autograd.grad` avoids that.

# %%
x = torch.tensor(3.0, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (x ** 3).backward(create_graph=True)
print(x.grad)
print("UserWarning:", caught[0].message)

# %% [markdown]
# Both passes in one trace: run 0 is the first derivative, run 1 differentiates it. The player's
# run selector switches between them.

# %%
with gradviz.trace(name="second derivative") as tr:
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 3
    (dx,) = torch.autograd.grad(y, x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx, x)
print(tr.summary())
tr

# %% [markdown]
# `gradgradcheck` checks second derivatives against finite differences, as `gradcheck` checks
# first ones:

# %%
xs = torch.rand(3, dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(), (xs,)))


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex6_1")` prints a hint, then `solutions.show("ex6_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Return f''(x₀) as a Python float: `autograd.grad` twice, the first time with
# `create_graph=True`.

# %%
# Exercise 1
def second_derivative(f, x0):
    # Your code here. Stuck? solutions.hint("ex6_1"), then solutions.show("ex6_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex6_1", second_derivative)


# %% [markdown]
# **Exercise 2.** A Hessian-vector product H·v without building H: take g = ∇f(x) with
# `create_graph=True`, then the gradient of the scalar `(g * v).sum()`.

# %%
# Exercise 2
def hvp(f, x, v):
    # Your code here. Stuck? solutions.hint("ex6_2"), then solutions.show("ex6_2").
    raise NotImplementedError



# %%
solutions.check("ex6_2", hvp)


# %% [markdown]
# **Exercise 3.** One step of Newton's method for minimising f: x₁ = x₀ − f'(x₀) / f''(x₀).

# %%
# Exercise 3
def newton_step(f, x0):
    # Your code here. Stuck? solutions.hint("ex6_3"), then solutions.show("ex6_3").
    raise NotImplementedError



# %%
solutions.check("ex6_3", newton_step)
