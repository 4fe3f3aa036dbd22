"""``gradviz.nn.functional``: PyTorch's ``torch.nn.functional``, recorded as PyTorch records it.

Composite functions decompose exactly as PyTorch's do, so the graph is the one a PyTorch user
sees: ``cross_entropy`` is ``log_softmax`` then ``nll_loss`` (plus, with label smoothing, the
same extra terms PyTorch adds), ``linear`` is ``addmm`` over ``t()`` for a 2-D input with a bias,
``l1_loss`` is ``(input - target).abs().mean()``, ``dropout`` multiplies by a random mask.

Example:
    >>> import gradviz
    >>> import gradviz.nn.functional as F
    >>> x = gradviz.randn(4, 5, requires_grad=True)
    >>> loss = F.cross_entropy(x, gradviz.tensor([0, 2, 1, 4]))
    >>> loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()
    ('NllLossBackward0', 'LogSoftmaxBackward0')

The functions are grouped as PyTorch's documentation groups them, one file each:
``activations``, ``linear_functions``, ``dropout_functions``, ``sparse`` (embedding, one_hot),
``distance``, ``losses``, ``conv_pool``, ``vision`` (pad, interpolate, pixel shuffle, fold),
``normalization``, and ``common`` for the checks they share; attention is
gradviz/nn/_attention.py. This module imports them in an order in which each file only uses the
ones before it and re-exports every name, each function's ``__module__`` kept as
``gradviz.nn.functional``.
"""

from __future__ import annotations

# isort: off
from gradviz.nn.functional import common, activations, linear_functions, dropout_functions
from gradviz.nn.functional import sparse, distance, losses, conv_pool, vision, normalization
# isort: on
from gradviz.nn._attention import multi_head_attention_forward, scaled_dot_product_attention

CATEGORIES = (common, activations, linear_functions, dropout_functions, sparse, distance, losses,
              conv_pool, vision, normalization)


def _publish(value: object) -> None:
    """Say that ``value`` (and what it wraps) lives in this module, as it did before the
    category files: reprs and the doctests read ``__module__``."""
    todo = [value]
    while todo:
        obj = todo.pop()
        if (getattr(obj, "__module__", None) or "").startswith(__name__ + "."):
            obj.__module__ = __name__
            todo += [getattr(obj, a) for a in ("_torch_raw", "__wrapped__") if hasattr(obj, a)]


for _module in CATEGORIES:
    for _name, _value in vars(_module).items():
        if not _name.startswith("__"):
            _publish(_value)
            globals()[_name] = _value
del _module, _name, _value

__all__ = [_name for _module in CATEGORIES for _name in _module.__all__]
__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]  # nn/_attention.py
