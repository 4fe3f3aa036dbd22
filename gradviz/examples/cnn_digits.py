"""A small LeNet-style CNN learns the 8x8 handwritten digits (two convolutions, two poolings).

The network, the loss and the optimiser are written exactly as with PyTorch; only the import
differs. Run as it is (or traced: ``gradviz trace --example cnn_digits``) it takes three
training steps on batches of 8 images, so that the graphs stay readable: two
``Conv2d → ReLU → MaxPool2d`` blocks, then two linear layers. Give it a number of epochs to train
it for real: ``full`` means ``FULL_EPOCHS`` (20), which reach 97-98% test accuracy in a few
seconds::

    python -m gradviz.examples.cnn_digits full     # or a number of epochs: ... cnn_digits 5
"""

import sys
import time

import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.data import DataLoader, load_digits, train_test_split

FULL_EPOCHS = 20  # the full run: 97-98% test accuracy (seeds 0-4), a few seconds
# Imported (tutorial 10 reuses LeNet and the data), the script takes the short run.
ARG = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else ""
EPOCHS = FULL_EPOCHS if ARG == "full" else int(ARG or 0)  # 0: the short, traceable run
SHORT_STEPS, SHORT_BATCH = 3, 8
BATCH = 32


class LeNet(nn.Module):
    """8x8 → (conv 3x3, 8 maps) → 4x4 → (conv 3x3, 16 maps) → 2x2 → 64 → 64 → 10 classes."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


torch.manual_seed(0)
X, y = load_digits()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, seed=0)
model = LeNet()
optimizer = torch.optim.Adam(model.parameters(), lr=0.005)


def train_step(images, labels):
    """One training step: forward, cross-entropy, backward, the optimizer's update."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss


start = time.perf_counter()
if EPOCHS:
    loader = DataLoader((X_train, y_train), batch_size=BATCH, shuffle=True, seed=0)
    for epoch in range(EPOCHS):
        for images, labels in loader:
            loss = train_step(images, labels)
        print(f"epoch {epoch + 1:2d}: training loss {loss.item():.4f}")
    done = f"{EPOCHS} epochs"
else:
    for step in range(SHORT_STEPS):
        batch = slice(step * SHORT_BATCH, (step + 1) * SHORT_BATCH)
        loss = train_step(X_train[batch], y_train[batch])
        print(f"step {step}: training loss {loss.item():.4f}")
    done = f"{SHORT_STEPS} steps"
seconds = time.perf_counter() - start

model.eval()
with torch.no_grad():
    accuracy = (model(X_test).argmax(dim=1) == y_test).float().mean().item()
print(f"after {done}: test accuracy {accuracy:.2%} ({len(y_test)} images), "
      f"training took {seconds:.1f} s")
