"""A custom autograd Function with ctx: the walkthrough's MulConstant.

``MulConstant.apply(a, 5)`` records one ``MulConstantBackward`` node whose backward returns one
gradient per forward argument (``None`` for the constant).
"""

import gradviz as torch
from gradviz.autograd.function import Function


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx keeps what backward needs, like self would.
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # One gradient per forward input: the constant gets None.
        return grad_output * ctx.constant, None


# Importable (the tutorials and tests use this one class); the demo runs as a script only.
if __name__ == "__main__":
    a = torch.rand(3, 3, requires_grad=True)
    b = MulConstant.apply(a, 5)
    print("a:" + str(a))
    print("b:" + str(b))  # grad_fn=<MulConstantBackward>
    b.backward(torch.ones_like(a))
    print(a.grad)
