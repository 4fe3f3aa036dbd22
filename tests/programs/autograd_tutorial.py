"""The "A Gentle Introduction to torch.autograd" tutorial: Q = 3a^3 - b^2 with an external
gradient, and which tensors the DAG leaves out."""
import gradviz as torch

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - b ** 2

external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)

# Check if collected gradients are correct
print(9 * a ** 2 == a.grad)
print(-2 * b == b.grad)
print(a.grad, b.grad)
print(Q.grad_fn, Q.grad_fn.next_functions[0][0], Q.grad_fn.next_functions[1][0])

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

# Freezing parameters: only the new classifier learns
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
for param in model.parameters():
    param.requires_grad = False
model[2] = torch.nn.Linear(3, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
print([p.requires_grad for p in model.parameters()])
out = model(torch.ones(1, 4))
print(out.shape, out.grad_fn.name(), out.grad_fn.next_functions[1][0])
