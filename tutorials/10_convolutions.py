# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10 · Convolutions: the backward of a convolution is a convolution
#
# A convolution layer slides a small kernel over an image. Its backward node,
# `ConvolutionBackward0`, does two things with the incoming gradient: it slides it over the
# saved *input* to get the kernel's gradient, and it slides the flipped kernel over it to get
# the input's gradient. Both are convolutions again.
#
# In this notebook:
#
# 1. a LeNet-style CNN on the 8x8 digits, and its backward graph;
# 2. what the convolution node saves;
# 3. the gradient checked by hand on a tiny input;
# 4. the kernel gradient and the input gradient as convolutions.

# %%
import numpy as np

import gradviz
import gradviz as torch
import gradviz.nn.functional as F

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. A CNN on the digits
#
# `gradviz.examples.cnn_digits` is the bundled example (`gradviz trace --example cnn_digits`):
# importing it runs its short three-step training on batches of 8 images, which prints a few
# lines. We reuse its `LeNet` and data: two `Conv2d → ReLU → MaxPool2d` blocks, then two linear
# layers.

# %%
from gradviz.examples import cnn_digits

model = cnn_digits.LeNet()
images, labels = cnn_digits.X_train[:4], cnn_digits.y_train[:4]
print(model)
print("images:", tuple(images.shape))

# %% [markdown]
# One training step's backward graph. Each convolution is a single `ConvolutionBackward0` with
# three inputs (input, weight, bias); the first has no edge towards the images, which do not
# require grad.

# %%
loss = F.cross_entropy(model(images), labels)
gradviz.draw_backward(loss)

# %% [markdown]
# ## 2. What the convolution node saves
#
# As in PyTorch, the node's saved values are attributes named `_saved_<argument>`: the input
# and the weight (both needed by backward), and the convolution's settings.

# %%
conv_node = model.features[0](images).grad_fn
print(conv_node.name())
for attr in sorted(a for a in dir(conv_node) if a.startswith("_saved_")):
    value = getattr(conv_node, attr)
    shown = tuple(value.shape) if isinstance(value, torch.Tensor) else value
    print(f"{attr:28s} {shown}")

# %% [markdown]
# `_saved_input` is the batch of images itself, `(4, 1, 8, 8)`, and `_saved_weight` the 8
# kernels of 3x3. Drawn with `show_saved=True`, the saved tensors appear as orange nodes next
# to the node that keeps them.

# %%
tiny = torch.nn.Conv2d(1, 2, 2)
gradviz.draw_backward(tiny(torch.randn(1, 1, 3, 3)).sum(), show_saved=True)

# %% [markdown]
# ## 3. The gradient checked by hand on a tiny input
#
# A 3x3 input, a 2x2 kernel, no padding: the output is 2x2, and
# `y[p, q] = Σᵢⱼ x[p+i, q+j] · w[i, j]`. So `∂y[p, q]/∂w[i, j] = x[p+i, q+j]`, and with the
# incoming gradient `g`:
#
# `∂L/∂w[i, j] = Σ_pq g[p, q] · x[p+i, q+j]`
#
# Let us compute that with four nested loops and compare it with autograd.

# %%
x = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [2.0, 1.0, 1.0]]).reshape(1, 1, 3, 3)
x.requires_grad_(True)
w = torch.tensor([[1.0, -1.0], [2.0, 0.5]]).reshape(1, 1, 2, 2).requires_grad_(True)
g = torch.tensor([[1.0, 0.0], [-1.0, 2.0]]).reshape(1, 1, 2, 2)

y = F.conv2d(x, w)
y.backward(g)

xs, gs = x.detach().numpy()[0, 0], g.numpy()[0, 0]
by_hand = np.zeros((2, 2))
for i in range(2):
    for j in range(2):
        for p in range(2):
            for q in range(2):
                by_hand[i, j] += gs[p, q] * xs[p + i, q + j]
print("autograd:\n", w.grad[0, 0])
print("by hand:\n", by_hand)
print("equal:", np.allclose(w.grad.numpy()[0, 0], by_hand))

# %% [markdown]
# ## 4. Both gradients are convolutions
#
# The loop above *is* a convolution: slide `g` over `x`. So the kernel gradient is
# `conv2d(x, g)`. The input gradient spreads each `g[p, q]` back over the pixels the kernel
# touched: that is the transposed convolution of `g` with `w`, the same as a full convolution
# of `g` (padded by one) with the kernel flipped in both directions.

# %%
print(torch.allclose(F.conv2d(x.detach(), g), w.grad))
print(torch.allclose(F.conv_transpose2d(g, w.detach()), x.grad))
flipped = w.detach().flip(2, 3)
print(torch.allclose(F.conv2d(g, flipped, padding=1), x.grad))


# %% [markdown]
# This is why frameworks implement convolution backward with the same kernels as the forward:
# `ConvolutionBackward0` calls a convolution for the weight and a transposed convolution for
# the input.

# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex10_1")` prints a hint, then `solutions.show("ex10_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** For one image `x` of shape `(1, 1, H, W)` and the gradient `g` of a
# convolution's output (no padding, stride 1), return the kernel's gradient, shape
# `(1, 1, kH, kW)`, *without* calling `backward()`: one `F.conv2d` call.

# %%
# Exercise 1
def conv_weight_grad(x, g):
    # Your code here. Stuck? solutions.hint("ex10_1"), then solutions.show("ex10_1").
    raise NotImplementedError


# %%
import solutions

solutions.check("ex10_1", conv_weight_grad)


# %% [markdown]
# **Exercise 2.** Same setting: return the input's gradient, shape `(1, 1, H, W)`, from `g`
# and the kernel `w` only, without `backward()` and without `conv_transpose2d`.

# %%
# Exercise 2
def conv_input_grad(g, w):
    # Your code here. Stuck? solutions.hint("ex10_2"), then solutions.show("ex10_2").
    raise NotImplementedError


# %%
solutions.check("ex10_2", conv_input_grad)


# %% [markdown]
# **Exercise 3.** Return `{name: shape}` of every tensor a `ConvolutionBackward0` node keeps
# for backward (the `_saved_*` attributes that are tensors), for the node `t.grad_fn`.

# %%
# Exercise 3
def saved_tensor_shapes(node):
    # Your code here. Stuck? solutions.hint("ex10_3"), then solutions.show("ex10_3").
    raise NotImplementedError


# %%
solutions.check("ex10_3", saved_tensor_shapes)
