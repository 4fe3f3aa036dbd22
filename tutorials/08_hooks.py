# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 8 · Hooks: watching gradients flow
#
# Hooks are functions the engine calls during backward. They let you look at gradients, and even
# replace them, without touching the model:
#
# 1. tensor hooks: `t.register_hook(fn)`;
# 2. `retain_grad()`: keep a result's gradient;
# 3. node hooks: `grad_fn.register_prehook(fn)` and `grad_fn.register_hook(fn)`;
# 4. `register_post_accumulate_grad_hook` on leaves;
# 5. the order they run in, on the graph and step by step.

# %%
import gradviz
import gradviz as torch
import gradviz.nn as nn

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Tensor hooks
#
# `t.register_hook(fn)` calls `fn(grad)` with the gradient of `t` when it is computed. If `fn`
# returns a tensor, that replaces the gradient. The returned handle removes the hook.

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
handle = x.register_hook(lambda grad: print("x receives", grad))
(x * 2).sum().backward()
handle.remove()

x.grad = None
handle = x.register_hook(lambda grad: grad * 10)  # replace the gradient
(x * 2).sum().backward()
print(x.grad)
handle.remove()

# %% [markdown]
# ## 2. Results: `retain_grad`
#
# A result's gradient passes through and is gone: `.grad` stays `None`. `retain_grad()` keeps it.
# (It is a hook, too: the engine stores the gradient in `.grad` when it passes.)

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
z = (y * y).sum()
y.retain_grad()
z.backward()
print(y.grad, y.retains_grad)  # dz/dy = 2y

# %% [markdown]
# ## 3. Node hooks
#
# A hook on a node sees all of its gradients at once. `register_prehook(fn)` calls
# `fn(grad_outputs)` before the node runs; `register_hook(fn)` calls `fn(grad_inputs,
# grad_outputs)` after it (`grad_inputs`: what it computed for each of its `next_functions`).
# Either may return a tuple to replace them.

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = (x * w).sum()
mul = y.grad_fn.next_functions[0][0]
mul.register_prehook(lambda grad_outputs: print("MulBackward0 will receive", grad_outputs))
mul.register_hook(lambda grad_inputs, grad_outputs: print("MulBackward0 sent", grad_inputs))
y.backward()

# %% [markdown]
# ## 4. The order
#
# All kinds together, each one appending to a log:

# %%
log = []
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.retain_grad()
z = (y * y).sum()
x.register_hook(lambda g: log.append(f"tensor hook on x: {g.tolist()}"))
y.register_hook(lambda g: log.append(f"tensor hook on y: {g.tolist()}"))
z.grad_fn.register_prehook(lambda go: log.append(f"prehook of SumBackward0: {go[0].tolist()}"))
y.grad_fn.register_hook(lambda gi, go: log.append(f"hook of y.grad_fn, sent {gi[0].tolist()}"))
x.register_post_accumulate_grad_hook(lambda t: log.append(f"x.grad is now {t.grad.tolist()}"))
z.backward()
print("\n".join(log))

# %% [markdown]
# Backward order, from the root down: `SumBackward0`'s prehook; then the hook on `y` runs just
# before `y`'s node (`y.grad_fn`, the `MulBackward0` of `x * 3`) and `retain_grad` stores `y.grad`;
# that node's post-hook sees what it sent to `x`; `x`'s tensor hook runs just before `x`'s
# `AccumulateGrad`; the post-accumulate hook runs once `x.grad` is written.
#
# The tracer records hooks as steps (`hook`). The step player shows each one at its place:

# %%
with gradviz.trace(name="hooks") as tr:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    x.register_hook(lambda g: g * 2)
    z.grad_fn.register_prehook(lambda go: None)
    z.backward()
names = {n.id: n.name for n in tr.nodes.values()}
for s in tr.steps():
    if s.kind in ("execute", "hook", "leaf_grad"):
        print(f"{s.index:2} {s.kind:8} {names[s.node]:16} {getattr(s, 'hook', '')}")
hook_step = next(s.index for s in tr.steps() if s.kind == "hook" and s.hook == "tensor")
gradviz.draw_step(tr, -1, hook_step)

# %%
tr

# %% [markdown]
# ## 5. Watching gradients flow through a network
#
# Hooks on the activations of a small network record the gradient norm arriving at each layer's
# output, in the order the engine produces them: the reverse of the forward pass.

# %%
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
inputs = torch.randn(16, 4)
flow = []


def watch(i, layer):
    def hook(grad):
        flow.append(f"layer {i} ({type(layer).__name__:6}) output gradient norm {grad.norm():.4f}")

    return hook


h = inputs
for i, layer in enumerate(model):
    h = layer(h)
    h.register_hook(watch(i, layer))
h.pow(2).mean().backward()
print("\n".join(flow))


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex8_1")` prints a hint, then `solutions.show("ex8_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Return a tensor hook that rescales a gradient whose norm is above `max_norm` to
# norm `max_norm` (same direction), and leaves other gradients alone.

# %%
# Exercise 1
def make_clip_hook(max_norm):
    # Your code here. Stuck? solutions.hint("ex8_1"), then solutions.show("ex8_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex8_1", make_clip_hook)


# %% [markdown]
# **Exercise 2.** `named` maps names to tensors of `loss`'s graph. Register a hook on each, run
# `loss.backward()`, remove the hooks, and return the names in the order the hooks ran.

# %%
# Exercise 2
def gradient_order(loss, named):
    # Your code here. Stuck? solutions.hint("ex8_2"), then solutions.show("ex8_2").
    raise NotImplementedError



# %%
solutions.check("ex8_2", gradient_order)


# %% [markdown]
# **Exercise 3.** With `y = x.exp()` and `loss = (y * y).sum()`, return dloss/dy using
# `retain_grad`.

# %%
# Exercise 3
def intermediate_grad(x):
    # Your code here. Stuck? solutions.hint("ex8_3"), then solutions.show("ex8_3").
    raise NotImplementedError



# %%
solutions.check("ex8_3", intermediate_grad)
