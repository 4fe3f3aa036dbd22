"""``gradviz.nn``: neural-network building blocks, spelled as ``torch.nn``.

``gradviz.nn.functional`` holds the stateless functions (activations, losses, ``linear``,
``layer_norm``, ``embedding``, ``dropout`` ...), each recorded with the same graph PyTorch
records.

The layers (``Module``, ``Linear``, ``Sequential`` ...), ``Parameter`` and ``init`` mirror
``torch.nn``'s.
"""

from gradviz.nn import functional  # noqa: I001 - the layers below call into it
from gradviz.nn import init
from gradviz.nn.modules import *  # noqa: F403
from gradviz.nn.modules import __all__ as _modules_all
from gradviz.nn import parallel
from gradviz.nn.parallel import DataParallel
from gradviz.nn.parameter import Parameter
from gradviz.nn import utils  # noqa: E402 - after the modules it serves

__all__ = ["functional", "init", "utils", "parallel", "Parameter", "DataParallel",
           *_modules_all]
