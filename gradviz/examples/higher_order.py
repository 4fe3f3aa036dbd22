"""Higher-order gradients: create_graph=True records the backward pass itself.

d/dx x**3 = 3x**2 has its own graph, so differentiating it again gives 6x.
"""

import gradviz as torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
(dy_dx,) = torch.autograd.grad(y, x, create_graph=True)
print("dy/dx   =", dy_dx)  # 3x^2, with a grad_fn
(d2y_dx2,) = torch.autograd.grad(dy_dx.sum(), x)
print("d2y/dx2 =", d2y_dx2)  # 6x
