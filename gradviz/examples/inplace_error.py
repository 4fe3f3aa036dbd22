"""An in-place operation that breaks backward, and the error PyTorch gives for it.

``b * b`` saves ``b``; ``b.mul_(2)`` then bumps its version, so backward refuses to use it.
The trace still shows the graph and the step at which the engine failed.
"""

import gradviz as torch

a = torch.rand(5, 5, requires_grad=True)
b = a * 1
c = b * b  # MulBackward0 saves b at version 0
b.mul_(2)  # b is now at version 1
print("b._version =", b._version)
c.sum().backward()  # RuntimeError: one of the variables needed for gradient computation ...
