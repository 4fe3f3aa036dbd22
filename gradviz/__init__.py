"""gradviz: see automatic differentiation.

An autograd engine on NumPy whose internals are PyTorch's, spelled the same way
(``grad_fn``, ``next_functions``, ``AccumulateGrad.variable``, custom ``Function`` with ``ctx``),
so that code written for ``torch`` (within gradviz's op set) runs with ``import gradviz as torch``.

Example:
    >>> import gradviz as torch
    >>> x = torch.rand(5, 5, requires_grad=True)
    >>> z = torch.sum(x + x)
    >>> z.grad_fn.name(), z.grad_fn.next_functions[0][0].name()
    ('SumBackward0', 'AddBackward0')
"""

from __future__ import annotations

from gradviz import autograd, functional, linalg, nn, optim, return_types, utils
from gradviz._device import accelerator, cuda, device, get_default_device, set_default_device
from gradviz._dtype import (
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    uint8,
)
from gradviz._factories import (
    Generator,
    arange,
    as_tensor,
    default_generator,
    empty,
    eye,
    from_numpy,
    full,
    initial_seed,
    linspace,
    manual_seed,
    ones,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    seed,
    tensor,
    zeros,
)
from gradviz._layout import layout, strided
from gradviz._size import Size
from gradviz._tensor_classes import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from gradviz._version import __version__
from gradviz.autograd import wrappers as _wrappers  # installs Tensor.backward
from gradviz.autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from gradviz.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from gradviz.ops import functional as _functional

# Renderers: cheap to import (graphviz, pygraphviz and rich load inside the functions).
from gradviz.render import (
    draw_backward,
    draw_both,
    draw_forward,
    draw_step,
    make_dot,
    print_graph,
    show,
)
from gradviz.serialization import load, save
from gradviz.tensor import Tensor, is_tensor, is_warn_always_enabled, set_warn_always
from gradviz.trace import compare_engines, graph_of, load_trace, trace, tracer

# Every public function of the op layer, hand-written or generated from a table row, is exported
# here: the list is functional.__all__, so a new row with `function=` needs no edit in this file.
globals().update({_name: getattr(_functional, _name) for _name in _functional.__all__})

# torch.* names that are the very functions of torch.nn.functional (same arguments, same graph:
# torch.selu(x) and F.selu(x) record one node); PyTorch's code uses both spellings.
_SAME_AS_F = ("selu", "celu", "prelu", "hardshrink", "threshold", "cosine_similarity",
              "pairwise_distance", "bilinear", "avg_pool1d", "adaptive_avg_pool1d", "rms_norm",
              "group_norm", "layer_norm")
globals().update({_name: getattr(nn.functional, _name) for _name in _SAME_AS_F})

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]


def __getattr__(name: str) -> object:
    # A row added after import (gradviz.ops.defop(..., function=name)) is exported too.
    if name in _functional.__all__:
        return getattr(_functional, name)
    raise AttributeError(f"module 'gradviz' has no attribute {name!r}")
