"""The "Extending PyTorch" note: LinearFunction (with needs_input_grad) checked by gradcheck
and wrapped in a Module, MulConstant (a non-tensor argument), and MyCube, whose backward is
itself differentiable (double backward), as its gradcheck and gradgradcheck show."""
import gradviz as torch

Function = torch.autograd.Function


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


linear = LinearFunction.apply


class Linear(torch.nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = torch.nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter("bias", None)
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"input_features={self.input_features}, "
                f"output_features={self.output_features}, bias={self.bias is not None}")


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x ** 3
        dx = 3 * x ** 2  # returned too, so that double backward can go through it
        ctx.save_for_backward(x, dx)
        return result, dx

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, dx = MyCube.apply(x)
    return result


gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, 20, dtype=torch.double, requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)

layer = Linear(3, 2)
print(layer)
out = layer(torch.ones(4, 3))
print(out.shape, out.grad_fn.name(), len(out.grad_fn.next_functions))

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = MulConstant.apply(a, 5)
b.sum().backward()
print(b, a.grad, b.grad_fn.next_functions)

x = torch.tensor([1.0, -2.0, 0.5], dtype=torch.double, requires_grad=True)
print(gradcheck(my_cube, (x,)), gradgradcheck(my_cube, (x,)))
(g,) = torch.autograd.grad(my_cube(x).sum(), x, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), x)
print(g, gg)
