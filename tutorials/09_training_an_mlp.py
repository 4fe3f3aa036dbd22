# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 9 · Training an MLP, and looking at one step
#
# Everything so far, put to work: a small network learns to separate two interleaving half moons.
# Then we look at one training step's graph (forward with module scopes, backward, the step
# player), and at how gradients flow through a deeper net.

# %%
import math

import gradviz
import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.data import make_moons

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. The data
#
# Two classes, 200 points in the plane. A little text plot (`0` and `1` are the classes):

# %%
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

# %% [markdown]
# ## 2. Model, loss, optimizer, loop
#
# Written exactly as with PyTorch. The loop is the one you know: `zero_grad`, forward, loss,
# `backward`, `step`.

# %%
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

# %% [markdown]
# ## 3. One step under the microscope
#
# Trace a few steps. A training loop's trace keeps, by default, every backward run listed
# (`tr.run_log`) and the last iteration in full: the earlier ones have the same structure and are
# folded, so memory stays bounded however long the loop (`keep_runs=N` keeps the last N runs
# instead).

# %%
with gradviz.trace(name="one training step") as tr:
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()
print(tr.summary())
print(tr.notes[-1])
print([run["id"] for run in tr.run_log])

# %% [markdown]
# The forward graph groups ops by module scope: each `Linear` is `t` (transpose the weight) then
# `addmm` (bias + input @ weightᵀ). `cross_entropy` is `log_softmax` then `nll_loss`, as PyTorch
# decomposes it. Parameters are green.

# %%
gradviz.draw_forward(tr)

# %% [markdown]
# The backward graph of that step, PyTorch's node names: `NllLossBackward0`,
# `LogSoftmaxBackward0`, `AddmmBackward0`, `TanhBackward0`, `TBackward0`, and an `AccumulateGrad`
# per parameter.

# %%
gradviz.draw_backward(tr)

# %% [markdown]
# And the engine running it, step by step (`gradviz.show(tr)` is the same player a trace shows as
# the last line of a cell):

# %%
gradviz.show(tr)


# %% [markdown]
# ## 4. Gradient flow through a deeper net
#
# In a deep stack of sigmoids the gradient shrinks layer after layer on its way back (each
# sigmoid multiplies it by at most 1/4): the *vanishing gradient*. Compare the weight-gradient
# norms of each layer after one backward pass, sigmoid against ReLU:

# %%
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


# %% [markdown]
# Read from the bottom (the last layer, closest to the loss) up: with sigmoid the norms fall by
# orders of magnitude towards the first layer, so the first layers barely learn. ReLU keeps them
# within a small range.
#
# ## Exercises
#
# **Exercise 1.** Return the model's accuracy on `(X, y)` as a float, without recording anything.

# %%
# Exercise 1
def accuracy_of(model, X, y):
    # Your code here. Stuck? solutions.hint("ex9_1"), then solutions.show("ex9_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex9_1", accuracy_of)


# %% [markdown]
# **Exercise 2.** After a backward pass, return `{parameter name: norm of its .grad}` for every
# parameter that has a gradient.

# %%
# Exercise 2
def grad_norms(model):
    # Your code here. Stuck? solutions.hint("ex9_2"), then solutions.show("ex9_2").
    raise NotImplementedError



# %%
solutions.check("ex9_2", grad_norms)


# %% [markdown]
# **Exercise 3.** Train `model` on `(X, y)` with Adam and cross-entropy, and return the last loss
# as a float. The check wants at least 95% training accuracy.

# %%
# Exercise 3
def train(model, X, y, steps=200, lr=0.05):
    # Your code here. Stuck? solutions.hint("ex9_3"), then solutions.show("ex9_3").
    raise NotImplementedError



# %%
solutions.check("ex9_3", train)
