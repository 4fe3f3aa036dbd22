"""PyTorch's polynomial fit: y = a + b x + c x^2 + d x^3 to sin(x), 2,000 steps of manual SGD.

The training loop of PyTorch's "Learning PyTorch with Examples" (tensors and autograd), written
with gradviz: four scalar parameters, a forward pass, ``loss.backward()``, an update under
``no_grad()`` and zeroed gradients. Traced, it shows what a long run keeps by default: every
backward run listed, the last one in full, and one iteration of the forward graph.
"""

import math
import os

import gradviz as torch

# GRADVIZ_POLY_STEPS shortens the loop (tests trace a few hundred steps, not 2,000).
steps = int(os.environ.get("GRADVIZ_POLY_STEPS", "2000"))

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

a = torch.randn((), requires_grad=True)
b = torch.randn((), requires_grad=True)
c = torch.randn((), requires_grad=True)
d = torch.randn((), requires_grad=True)

learning_rate = 1e-6
for _step in range(steps):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"after {steps} steps: loss {loss.item():.2f}, "
      f"y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3")
