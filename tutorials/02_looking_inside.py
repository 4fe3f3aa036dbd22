# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2 · Looking inside: `grad_fn`, `next_functions`, `AccumulateGrad`
#
# What does `backward()` actually walk through? This notebook opens the graph by hand, as a
# well-known PyTorch walkthrough does: start at `z.grad_fn`, follow `next_functions` down to the
# leaves, and find the leaf tensor itself at the bottom. Apart from the drawings, everything here
# runs the same on PyTorch.

# %%
import gradviz
import gradviz as torch

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. What a result carries

# %%
x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = x ** 2 + y ** 3
print([name for name in dir(z) if not name.startswith("_") and ("grad" in name or "leaf" in name)])
print("x.is_leaf=" + str(x.is_leaf))
print("z.is_leaf=" + str(z.is_leaf))

# %% [markdown]
# `x` is a leaf (you made it), `z` is a result. `z.grad_fn` is the node that will turn the gradient
# of `z` into gradients for `z`'s inputs. Its class name says which op made `z`: an addition, so
# `AddBackward0` (the digit tells overloads apart, as in PyTorch).

# %%
z.grad_fn

# %%
print([name for name in dir(z.grad_fn) if not name.startswith("_") or name.startswith("_saved")])

# %% [markdown]
# ## 2. `next_functions`: the edges
#
# `next_functions` is the essence of `grad_fn`: one `(node, input_nr)` pair per input of the
# forward op. `x ** 2 + y ** 3` added two things, so there are two pairs, each pointing at the
# `PowBackward0` node that made that operand. The integer says which input of that node the
# gradient is for (always 0 here; notebook 4 has a case where it is not).

# %%
z.grad_fn.next_functions

# %%
xg = z.grad_fn.next_functions[0][0]  # the node of x ** 2
print(xg, xg.next_functions)
print("saved for backward:", xg._saved_self.shape, "exponent", xg._saved_exponent)

# %% [markdown]
# `PowBackward0` saved what its formula d(x²)/dx = 2·x needs: the base `x` (`_saved_self`) and the
# exponent. Saved values are the subject of notebook 6.
#
# ## 3. `AccumulateGrad`: where the leaves are

# %%
x_leaf = xg.next_functions[0][0]
print(type(x_leaf))
print(x_leaf.variable)
print("x_leaf.variable id:", id(x_leaf.variable))
print("x id:              ", id(x))
assert id(x_leaf.variable) == id(x)


# %% [markdown]
# At the bottom of every path sits an `AccumulateGrad` node, one per leaf that requires grad. It
# has no `next_functions` (the graph ends there), and its `.variable` *is* the leaf tensor: the
# same object, the same `id`. Running it adds the gradient it receives into `variable.grad`.
#
# So the whole process is:
#
# 1. `z.backward()` starts at `z.grad_fn`;
# 2. each node computes the gradients of its inputs and hands them along its `next_functions`;
# 3. each `AccumulateGrad` stores what it receives in its variable's `.grad`;
# 4. when nothing is left to run, every leaf's `.grad` has been updated.
#
# ## 4. Walk the graph by hand
#
# A walker that prints every node once, indented by depth. It uses an explicit stack instead of
# recursion: a graph built by a long loop can be deeper than Python's recursion limit (gradviz's
# engine never recurses either).

# %%
def walk(t):
    seen, stack = {t.grad_fn}, [(t.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        line = "    " * depth + type(node).__name__
        if hasattr(node, "variable"):
            line += f"  -> .variable of shape {tuple(node.variable.shape)}"
        print(line)
        for nxt, _input_nr in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, depth + 1))


walk(z)

# %% [markdown]
# The same graph drawn by gradviz. `show_saved=True` adds the saved tensors (linked to the leaf
# they are) and `show_attrs=True` the saved numbers such as the exponent:

# %%
gradviz.draw_backward(z, show_saved=True, show_attrs=True)

# %% [markdown]
# And as text, for a terminal:

# %%
gradviz.print_graph(z)

# %% [markdown]
# ## 5. Run the nodes yourself
#
# A node is callable, as in PyTorch: give it the gradient of its output, get back the gradients of
# its inputs. Here is by hand what `backward()` does with the starting gradient `ones`:

# %%
g = torch.ones_like(z)
gx2, gy3 = z.grad_fn(g)  # AddBackward0 passes g on to both operands
gx = xg(gx2)  # PowBackward0: 2 * x * g
print(torch.allclose(gx, 2 * x))

z.backward(torch.ones_like(z))  # now let the engine do it
print(torch.allclose(x.grad, gx))

# %% [markdown]
# ## 6. A tensor used more than once
#
# A tensor used several times has one edge per use into its node. Below, `h` is used three times:
# twice in `h * h` (both operands!) and once in `+ h`. So three edges lead into `h`'s
# `MulBackward0`, and the engine must wait for all three gradients before running it.

# %%
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
h = a * b
out = (h * h + h).sum()
add = out.grad_fn.next_functions[0][0]
hh = add.next_functions[0][0]  # the node of h * h
print(hh.next_functions[0][0] is h.grad_fn, hh.next_functions[1][0] is h.grad_fn,
      add.next_functions[1][0] is h.grad_fn)
gradviz.draw_backward(out)


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex2_1")` prints a hint, then `solutions.show("ex2_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Return the class names (`type(node).__name__`) of all nodes reachable from
# `t.grad_fn`, each node once, in breadth-first order: a queue, children in `next_functions` order.

# %%
# Exercise 1
def node_names(t):
    # Your code here. Stuck? solutions.hint("ex2_1"), then solutions.show("ex2_1").
    raise NotImplementedError



# %%
import solutions

solutions.check("ex2_1", node_names)


# %% [markdown]
# **Exercise 2.** Return the leaf tensors of `t`'s graph, each once, found through
# `AccumulateGrad.variable`.

# %%
# Exercise 2
def leaves_of(t):
    # Your code here. Stuck? solutions.hint("ex2_2"), then solutions.show("ex2_2").
    raise NotImplementedError



# %%
solutions.check("ex2_2", leaves_of)


# %% [markdown]
# **Exercise 3.** `z` was computed from `x` along a single chain of ops (each node has exactly one
# input that needs a gradient; the others are `(None, 0)`). Starting from `torch.ones_like(z)`,
# call each node by hand and return the gradient that reaches `x`'s `AccumulateGrad`.

# %%
# Exercise 3
def chain_grad(z, x):
    # Your code here. Stuck? solutions.hint("ex2_3"), then solutions.show("ex2_3").
    raise NotImplementedError



# %%
solutions.check("ex2_3", chain_grad)
