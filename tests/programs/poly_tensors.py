"""Learning PyTorch with examples, "Tensors": a cubic fitted to sin(x) with hand-written
gradients (a small equivalent of the tutorial program, written for these tests)."""
import math

import gradviz as torch

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# The tutorial draws random weights; fixed ones make both libraries print the same numbers.
a = torch.full((), 0.1, device=device, dtype=dtype)
b = torch.full((), -0.2, device=device, dtype=dtype)
c = torch.full((), 0.3, device=device, dtype=dtype)
d = torch.full((), -0.1, device=device, dtype=dtype)

learning_rate = 1e-6
for t in range(200):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 50 == 49:
        print(t, loss)
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
print(x.shape, y.dtype, a.device)
