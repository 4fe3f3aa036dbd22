# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 3 · Extending autograd: a custom `Function`
#
# When an operation is not in the library, or you want a different backward, write a `Function`
# with two static methods:
#
# - `forward(ctx, *inputs)` computes the result. `ctx` is where you leave what `backward` will
#   need: plain attributes, or tensors through `ctx.save_for_backward`.
# - `backward(ctx, *grad_outputs)` receives one gradient per output of `forward` and returns one
#   gradient per input of `forward`, `None` for an input that is not a tensor needing a gradient.
#
# You call it with `MyFunction.apply(...)`, never by making an instance.

# %%
import gradviz
import gradviz as torch
from gradviz.autograd import Function, GradcheckError, gradcheck

_ = torch.manual_seed(0)


# %% [markdown]
# ## 1. `MulConstant`, as the walkthrough writes it

# %%
# Multiply a tensor by a constant (a plain number)
class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx works like self: attributes set here can be read in backward
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # One gradient per forward input: the tensor, then the constant.
        # The constant is not a tensor, so its gradient must be None.
        return grad_output, None


a = torch.rand(3, 3, requires_grad=True)
b = MulConstant.apply(a, 5)
print("a:" + str(a))
print("b:" + str(b))  # b is a times 5
b.backward(torch.ones_like(a))  # b is not a scalar: backward needs a gradient
print(a.grad)

# %% [markdown]
# It runs, `b` shows `grad_fn=<MulConstantBackward>`, and `a.grad` is all ones. But `b = 5·a`,
# so ∂b/∂a is **5**, not 1: this backward forgot to multiply by the constant. Nothing complained,
# because autograd trusts your `backward`.
#
# ## 2. `gradcheck` catches it
#
# `gradcheck` builds the Jacobian twice, once with your backward and once numerically by nudging
# each input element by ±ε, and compares them. Use float64 inputs: finite differences in float32
# are too noisy.

# %%
a64 = torch.rand(2, 2, dtype=torch.float64, requires_grad=True)
try:
    gradcheck(lambda t: MulConstant.apply(t, 5), (a64,))
except GradcheckError as e:
    print("GradcheckError:", e)

# %% [markdown]
# "Jacobian mismatch": the numerical Jacobian has 5 on its diagonal, the analytical one (from
# your backward) has 1. The fix is one multiplication, `grad_output * ctx.constant`. The fixed class
# ships with gradviz as `gradviz.examples.custom_function.MulConstant`:

# %%
import inspect

# The fixed MulConstant is one of gradviz's bundled examples (`gradviz examples` lists them).
from gradviz.examples.custom_function import MulConstant

print(inspect.getsource(MulConstant))
print(gradcheck(lambda t: MulConstant.apply(t, 5), (a64,)))
a = torch.rand(3, 3, requires_grad=True)
b = MulConstant.apply(a, 5)
b.backward(torch.ones_like(a))
print(a.grad)

# %% [markdown]
# ## 3. `ctx` is the node
#
# The `ctx` your methods receive *is* the backward node, `b.grad_fn` (in PyTorch as in gradviz).
# What `forward` stored there is visible on the graph, together with `needs_input_grad` (which
# inputs want a gradient) and `next_functions`, where the constant gets `(None, 0)`:

# %%
ctx = b.grad_fn
print(ctx, ctx.constant, ctx.needs_input_grad)
print(ctx.next_functions)
gradviz.draw_backward(b.sum())


# %% [markdown]
# ## 4. Saving tensors: `ctx.save_for_backward`
#
# Tensors that backward needs go through `ctx.save_for_backward(...)` and come back as
# `ctx.saved_tensors`. Unlike a plain attribute, a saved tensor is checked for in-place changes
# (notebook 7) and freed after backward (notebook 6).

# %%
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad_output


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = Cube.apply(x)
print(y.grad_fn.saved_tensors)
y.sum().backward()
print(x.grad)  # 3x²
print(gradcheck(Cube.apply, (torch.rand(4, dtype=torch.float64, requires_grad=True),)))

# %% [markdown]
# `forward` ran without recording (`x ** 3` inside it made no `PowBackward0`): the whole function
# is one node, `CubeBackward`, with `x`'s `AccumulateGrad` below it. `gradviz.show` displays any
# gradviz object: a tensor as its backward graph (keyword arguments go to `draw_backward`), a trace
# as the step player.

# %%
gradviz.show(Cube.apply(x).sum(), show_saved=True)


# %% [markdown]
# ## 5. What the engine does check
#
# The engine cannot check your math, but it checks the *form* of what `backward` returns: one
# gradient per forward input, each of a shape the input can take.

# %%
class Forgetful(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output  # forgot the None for `constant`


try:
    Forgetful.apply(torch.rand(3, requires_grad=True), 2).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)


# %% [markdown]
# ## Exercises
#
# Each exercise states a task and gives a stub that raises `NotImplementedError`: replace
# the stub with your code and run the check cell after it, which prints ✓ or ✗ with what is
# wrong. Stuck? `solutions.hint("ex3_1")` prints a hint, then `solutions.show("ex3_1")` the
# reference answer, which lives only in [`solutions.py`](solutions.py): nothing is shown
# until you ask.
#
# **Exercise 1.** Write `Square` (`x ** 2`) as a `Function` that saves its input with
# `ctx.save_for_backward`. The check runs `gradcheck`.

# %%
# Exercise 1
class Square(Function):
    # Your code here. Stuck? solutions.hint("ex3_1"), then solutions.show("ex3_1").
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError



# %%
import solutions

solutions.check("ex3_1", Square)


# %% [markdown]
# **Exercise 2.** Write `Sigmoid`, y = 1 / (1 + e⁻ˣ). Its derivative is y·(1 − y), so save the
# *output* rather than the input.

# %%
# Exercise 2
class Sigmoid(Function):
    # Your code here. Stuck? solutions.hint("ex3_2"), then solutions.show("ex3_2").
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError



# %%
solutions.check("ex3_2", Sigmoid)


# %% [markdown]
# **Exercise 3.** A useful "wrong" backward. `ScaleGrad.apply(x, scale)` returns a copy of `x`
# (forward is the identity) but its backward multiplies the gradient by `scale`. With
# `scale=-1` this is the *gradient reversal layer* of domain-adversarial training. `gradcheck`
# must reject it, and the check makes sure it does.

# %%
# Exercise 3
class ScaleGrad(Function):
    # Your code here. Stuck? solutions.hint("ex3_3"), then solutions.show("ex3_3").
    @staticmethod
    def forward(ctx, x, scale):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError



# %%
solutions.check("ex3_3", ScaleGrad)
