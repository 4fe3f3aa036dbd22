"""The network of PyTorch's "Neural Networks" tutorial (a LeNet: two convolutions with max
pooling, three linear layers, an MSE loss and one SGD step), written once against a
``torch``-like module and run with ``gradviz`` in its place; under parity the same program runs
on torch with the same weights and every number is compared
(tests/parity/test_lenet_tutorial_parity.py)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

import gradviz


def lenet_program(torch: ModuleType, init: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """The tutorial's steps, spelled only with ``torch``'s API (``torch`` may be gradviz)."""
    nn = torch.nn
    F = torch.nn.functional

    class LeNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)  # 1 input plane, 6 feature maps, 5x5 kernels
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 16 maps of 5x5 after the second pooling
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x: Any) -> Any:
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # a square window: one number will do
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    net = LeNet()
    if init is not None:
        with torch.no_grad():
            for name, p in net.named_parameters():
                p.copy_(torch.tensor(init[name]))
    rng = np.random.default_rng(2024)
    image = torch.tensor(rng.standard_normal((1, 1, 32, 32)).astype(np.float32))
    target = torch.tensor(rng.standard_normal(10).astype(np.float32)).view(1, -1)

    out = net(image)
    criterion = nn.MSELoss()
    loss = criterion(out, target)
    chain = []
    node = loss.grad_fn
    while node is not None:
        chain.append(node.name())
        # Down the data path: the first input that is not a parameter.
        node = next((n for n, _ in node.next_functions
                     if n is not None and "AccumulateGrad" not in n.name()), None)

    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    optimizer.zero_grad()
    loss.backward()
    grads = {name: p.grad.numpy().copy() for name, p in net.named_parameters()}
    optimizer.step()
    new_loss = criterion(net(image), target)
    return {"params": [tuple(p.size()) for p in net.parameters()], "out": out.detach().numpy(),
            "loss": loss.item(), "new_loss": new_loss.item(), "chain": chain, "grads": grads,
            "weights": {n: p.detach().numpy().copy() for n, p in net.named_parameters()},
            "repr": repr(net)}


def test_lenet_runs_on_gradviz() -> None:
    gradviz.manual_seed(0)
    r = lenet_program(gradviz)
    assert len(r["params"]) == 10 and r["params"][0] == (6, 1, 5, 5)
    assert r["out"].shape == (1, 10)
    # The loss's graph from the top, as the tutorial prints it.
    assert r["chain"] == ["MseLossBackward0", "AddmmBackward0", "ReluBackward0",
                          "AddmmBackward0", "ReluBackward0", "AddmmBackward0", "ViewBackward0",
                          "MaxPool2DWithIndicesBackward0", "ReluBackward0",
                          "ConvolutionBackward0", "MaxPool2DWithIndicesBackward0",
                          "ReluBackward0", "ConvolutionBackward0"]
    assert all(np.abs(g).sum() > 0 for g in r["grads"].values())
    assert r["new_loss"] < r["loss"]  # one SGD step down the gradient
    assert "(conv1): Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))" in r["repr"]
