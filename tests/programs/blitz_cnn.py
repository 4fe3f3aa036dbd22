"""PyTorch's 60-minute blitz, "Neural Networks": LeNet-style net (conv, max_pool2d, linear),
MSE loss, backward, and one SGD step. Weights and input are fixed (the tutorial's are random)
so both libraries print the same numbers."""
import gradviz as torch

nn = torch.nn  # the tutorial imports torch.nn as nn: here the one import above must do
F = torch.nn.functional
optim = torch.optim


class Net(nn.Module):

    def __init__(self):
        super().__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b, 5*5 from the image dimension
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square, you can specify with a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)  # flatten all dimensions except the batch dimension
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
with torch.no_grad():  # fixed weights instead of random ones
    for k, p in enumerate(net.parameters()):
        n = p.nelement()
        p.copy_(torch.linspace(-1.0, 1.0, n).mul(7.0 + k).sin().mul(0.3 / (n / p.shape[0]) ** 0.5)
                .reshape(p.shape))
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = torch.linspace(-2.0, 2.0, 32 * 32).mul(5.0).cos().reshape(1, 1, 32, 32)
out = net(input)
print(out.shape, [round(v, 4) for v in out[0].tolist()])

net.zero_grad()
out.backward(torch.linspace(-1.0, 1.0, 10).reshape(1, 10))

output = net(input)
target = torch.linspace(-0.5, 0.5, 10)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(round(loss.item(), 5))

print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # fc3's bias

net.zero_grad()  # zeroes the gradient buffers of all parameters
print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)
loss.backward()
print('conv1.bias.grad after backward')
print([round(v, 5) for v in net.conv1.bias.grad.tolist()])

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)

# in your training loop:
for step in range(3):
    optimizer.zero_grad()  # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # Does the update
    print(step, round(loss.item(), 5))
