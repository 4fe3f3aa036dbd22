"""An LSTM learns to add up a sequence: 20 numbers in, their (scaled) sum out.

The model reads the sequence one step at a time and a linear layer maps its last hidden state
to the answer, written exactly as with PyTorch. Each step of the recurrence appears in the graph
(``gradviz trace --example rnn_sequence``): the same LSTM cell, unrolled 20 times.

Run as it is, it takes only a few training steps, so that its trace stays small enough to draw
and to step through. Give it a number of steps to see it learn (a second or two for 200)::

    python -m gradviz.examples.rnn_sequence 200
"""

import sys

import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F

SEQ_LEN, HIDDEN, BATCH = 20, 4, 16
# Imported (tutorial 11 reuses SumLSTM and batch), the script takes the short run.
STEPS = int(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 3


class SumLSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(1, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1]).squeeze(1)


def batch(n):
    """Sequences of numbers in [-1, 1] and their sum divided by sqrt(length) (unit scale)."""
    x = torch.rand(n, SEQ_LEN, 1) * 2 - 1
    return x, x.sum(dim=(1, 2)) / SEQ_LEN ** 0.5


torch.manual_seed(0)
model = SumLSTM()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x_test, y_test = batch(256)

for step in range(STEPS):
    x, y = batch(BATCH)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 25 == 0 or step == STEPS - 1:
        print(f"step {step:4d}: training loss {loss.item():.4f}")

with torch.no_grad():
    test_loss = F.mse_loss(model(x_test), y_test).item()
# The targets have variance 1/3: a model that always answers 0 scores about that.
baseline = y_test.var().item()
print(f"after {STEPS} steps: test MSE {test_loss:.4f} (always answering 0 gives {baseline:.4f})")
