"""A learner's linear regression with hand-written SGD: the update runs under no_grad, and
the gradient is reset to None after each step (the gallery's manual-SGD program)."""

import gradviz as torch

torch.manual_seed(0)
x = torch.randn(16, 3)
true_w = torch.tensor([[2.0], [-1.0], [0.5]])
y = x @ true_w + 0.1 * torch.randn(16, 1)

weights = torch.randn(3, 1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
lr = 0.1
for _ in range(20):
    pred = x @ weights + bias
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        weights -= lr * weights.grad
        bias -= lr * bias.grad
    weights.grad = None
    bias.grad = None
print(f"loss {loss.item():.4f}, weights {weights.detach().flatten().tolist()}")
