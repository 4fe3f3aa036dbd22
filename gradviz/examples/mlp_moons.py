"""A two-layer MLP on the two-moons data set: a few training steps, then one step to look at.

The model, loss and optimiser are written exactly as they would be with PyTorch; only the import
differs. ``gradviz demo`` traces this script and keeps the last training step.
"""

import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.data import make_moons

torch.manual_seed(0)
X, y = make_moons(n_samples=64, noise=0.1, seed=0)

model = nn.Sequential(
    nn.Linear(2, 8),
    nn.ReLU(),
    nn.Linear(8, 2),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

for _step in range(20):
    optimizer.zero_grad()
    logits = model(X)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()

accuracy = (logits.argmax(dim=1) == y).float().mean().item()
print(f"after {_step + 1} steps: loss {loss.item():.4f}, training accuracy {accuracy:.2%}")
