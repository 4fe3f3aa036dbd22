# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 11 · Backpropagation through time
#
# A recurrent network applies the same cell at every time step, feeding each step's hidden
# state to the next. Autograd does nothing special for it: the forward pass *unrolls* the
# loop into one long graph, and `backward()` walks it from the last step to the first.
# "Backpropagation through time" is just backpropagation on that unrolled graph.
#
# In this notebook:
#
# 1. an `RNNCell` unrolled by hand, and its graph;
# 2. the same weights, one gradient: contributions from every time step add up;
# 3. gradients shrinking along the time steps;
# 4. an LSTM learning a sum, from `gradviz.examples`;
# 5. clipping the gradient norm.

# %%
import math

import gradviz
import gradviz as torch
import gradviz.nn as nn

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. An RNN cell, unrolled
#
# `nn.RNNCell(input_size, hidden_size)` computes `h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)`.
# Four steps of a loop make four copies of that computation in the graph, all reading the same
# two weight matrices.

# %%
cell = nn.RNNCell(1, 3)
xs = torch.randn(4, 1, 1)  # 4 time steps, batch 1, one feature
h = torch.zeros(1, 3)
for x in xs:
    h = cell(x, h)
loss = h.sum()
gradviz.draw_backward(loss)

# %% [markdown]
# Read it from the top: the last `TanhBackward0` leads down through the fourth step to the
# third, and so on. Each weight's `AccumulateGrad` has four edges into it, one per step.
#
# ## 2. One weight, one gradient per step, summed
#
# Because the four steps share `weight_hh`, its gradient is the *sum* of what each step
# contributes: the engine's input buffer adds them before `AccumulateGrad` runs (notebook 4).
# `torch.autograd.grad` with respect to the weight gives the total.

# %%
(total,) = torch.autograd.grad(loss, cell.weight_hh, retain_graph=True)
print(total)

# %% [markdown]
# ## 3. Gradients shrink along the time steps
#
# Keep every hidden state with `retain_grad()` (notebook 8) and look at the gradient of the
# loss with respect to each of them. Going back one step multiplies the gradient by the
# step's Jacobian, `diag(1 - h²) · W_hh`; with small weights and saturating `tanh` that product
# shrinks the gradient at every step: the *vanishing gradient*.

# %%
cell = nn.RNNCell(1, 8)
h = torch.zeros(1, 8)
states = []
for x in torch.randn(30, 1, 1):
    h = cell(x, h)
    h.retain_grad()
    states.append(h)
states[-1].sum().backward()
norms = [s.grad.norm().item() for s in states]
for t in (29, 25, 20, 15, 10, 5, 0):
    bar = "#" * max(1, int(14 + math.log10(norms[t])))  # one # per factor of 10
    print(f"step {t:2d}: |dL/dh| = {norms[t]:.1e}  {bar}")

# %% [markdown]
# The first steps receive almost nothing: the loss barely tells the early inputs how to change.
# That is why plain RNNs struggle with long-range dependencies, and why the LSTM adds a cell
# state `c` whose update is additive (`c' = f·c + i·g`): its gradient passes through a
# multiplication by the forget gate, not through a `tanh` and a weight matrix.
#
# ## 4. An LSTM learning to add
#
# `gradviz.examples.rnn_sequence` is the bundled example: an LSTM reads 20 numbers and a
# linear layer predicts their (scaled) sum. Importing it runs its three short training steps.
# Traced, the player shows the engine walking the unrolled graph step by step.

# %%
from gradviz.examples import rnn_sequence

model = rnn_sequence.SumLSTM()
x, y = rnn_sequence.batch(2)
with gradviz.trace(name="LSTM, 20 steps") as tr:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
gradviz.show(tr)

# %% [markdown]
# ## 5. Clipping the gradient norm
#
# The opposite problem, *exploding* gradients, comes from Jacobians larger than one: the
# gradient grows step after step and one update throws the weights far away. The usual cure
# is to rescale all gradients together when their total norm is above a threshold
# (PyTorch's `torch.nn.utils.clip_grad_norm_`): the direction is kept, the step is bounded.
# With large recurrent weights, the gradient grows backwards instead of shrinking:

# %%
big = nn.RNNCell(1, 8)
with torch.no_grad():
    big.weight_hh.mul_(4.0)
h = torch.zeros(1, 8)
for x in torch.randn(30, 1, 1):
    h = big(x, h)
(h * torch.randn(1, 8)).sum().backward()
print({name: round(p.grad.norm().item(), 2) for name, p in big.named_parameters()})


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex11_1")` prints a hint, then `solutions.show("ex11_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Run `cell` over the inputs `xs` (shape `(T, 1, input_size)`) from a zero
# hidden state, take `loss = h_T.sum()` and return the list of `‖∂loss/∂h_t‖` for
# t = 1 … T (floats, first step first).

# %%
# Exercise 1
def grad_norms_through_time(cell, xs):
    # Your code here. Stuck? solutions.hint("ex11_1"), then solutions.show("ex11_1").
    raise NotImplementedError


# %%
import solutions

solutions.check("ex11_1", grad_norms_through_time)


# %% [markdown]
# **Exercise 2.** Write `clip_grad_norm_(params, max_norm)`: compute the total norm of all
# the parameters' gradients (the norm of their concatenation), and if it is above `max_norm`,
# scale every gradient in place by `max_norm / (total + 1e-6)`. Return the total norm before
# clipping, as a float. Parameters whose `.grad` is `None` are skipped.

# %%
# Exercise 2
def clip_grad_norm_(params, max_norm):
    # Your code here. Stuck? solutions.hint("ex11_2"), then solutions.show("ex11_2").
    raise NotImplementedError


# %%
solutions.check("ex11_2", clip_grad_norm_)
