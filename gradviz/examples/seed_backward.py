"""The PyTorch walkthrough's first program: sum(x + y), then x ** 2 + y ** 3 with a gradient.

Run it with ``gradviz trace --example seed_backward`` to see both backward passes step by step.
"""

import gradviz as torch

x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = torch.sum(x + y)
z.backward()
print(x.grad)
print(y.grad)

x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = x ** 2 + y ** 3
z.backward(torch.ones_like(x))
print(x.grad)

# Looking inside, as the walkthrough does: z.grad_fn, next_functions, AccumulateGrad.variable.
print("x.is_leaf=" + str(x.is_leaf))
print("z.is_leaf=" + str(z.is_leaf))
print(z.grad_fn.next_functions)
xg = z.grad_fn.next_functions[0][0]
x_leaf = xg.next_functions[0][0]
print(type(x_leaf))
print(x_leaf.variable)
assert id(x_leaf.variable) == id(x)
