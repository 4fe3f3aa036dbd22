"""The functional forms of the ops (``gradviz.add``, ``gradviz.sum`` ...), as torch spells them.

Each function checks its arguments the way PyTorch does (same error texts), normalises them, and
calls the dispatch point with its table entry. Nothing here computes a gradient.

The functions are grouped by category, one file each: ``arithmetic``, ``pointwise``,
``comparison``, ``indexing``, ``shape``, ``factories``, ``inplace``, ``reductions``, ``linalg``,
``conv_pool``, ``random``, and ``common`` for what they share. This module imports them in an
order in which each file only uses the ones before it, and re-exports every name (private ones
too: ``F._tensors_only``), so ``gradviz.ops.functional.<name>`` is where every function lives;
a function's ``__module__`` says so too (the Tensor methods and the doctests look for it). The
functions generated from the table's rows (gradviz/ops/api.py) and torch's linear algebra
(gradviz/ops/_linalg.py) are added to this module when :mod:`gradviz.ops` is imported.

The op library: each function checks its arguments as PyTorch does and calls one table entry (or
decomposes exactly as PyTorch does). Dims reach the kernels normalized (non-negative), and the
nodes read them back as written (NOTE [saved as given] in gradviz/tensor.py).

A row whose Python call is its schema plus argument handling generates its function instead
(NOTE [signature rows] in gradviz/ops/opinfo.py; its checks are the row's ``normalize=`` in
gradviz/ops/bindings.py), and its hand-written function is deleted. Why the functions still
here are not (yet) generated, by kind (each category file's docstring names its own):

* torch's overloads not migrated yet: one name, several rows chosen by the arguments' types
  (``add`` with a number or a tensor, ``clamp``, ``sum(dim=)``, ``max(dim)`` ...). Rows with
  one overload's schema each generate one function picking among them as torch's
  python_arg_parser does (NOTE [overloaded rows] in gradviz/ops/api.py; ``pow`` is); the
  others still wait for their rows' schemas and normalisers.
* composites, as in torch's Python or C++ (``square`` is ``pow``, ``matmul``, ``einsum``,
  ``diff``, ``atleast_2d``, the aliases ``arcsin``, ``fix`` ...): several rows per call.
* results that are not a row's output as it is: named tuples (``cummax``, ``topk``, ``sort``),
  a reshaped index (``argmax(keepdim=True)`` without ``dim``).
* methods whose tensor-only errors count positions without ``self`` (``TENSOR_ONLY_METHODS``),
  and torch's module-level in-place functions (``gradviz.logit_``), which the generator does
  not make yet.
* checks that read several tensors' shapes before a product (``mm``, ``dot``, ``mv``) and are
  also called by the composites (``matmul``): a candidate for a normaliser the composites call.
"""

from __future__ import annotations

# isort: off
from gradviz.ops.functional import common, arithmetic, pointwise, comparison, indexing, shape
from gradviz.ops.functional import factories, inplace, reductions, linalg, conv_pool, random
# isort: on

CATEGORIES = (common, arithmetic, pointwise, comparison, indexing, shape, factories, inplace,
              reductions, linalg, conv_pool, random)



def _publish(value: object) -> None:
    """Say that ``value`` (and what it wraps: ``_torch_raw``, ``__wrapped__``, a dict of Tensor
    methods) lives in this module, as it did before the category files: the Tensor methods made
    from these functions (gradviz/ops/methods.py), reprs and the doctests read ``__module__``."""
    todo = [value]
    while todo:
        obj = todo.pop()
        if isinstance(obj, dict):
            todo += obj.values()
            continue
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

# random sampling (gradviz/ops/sampling.py; NOTE [random rows])
from gradviz.ops.sampling import (  # noqa: E402 - after the functions sampling.py calls back
    bernoulli,
    dropout,
    dropout_,
    normal,
    poisson,
    randint_like,
)

__all__ += ["bernoulli", "normal", "poisson", "randint_like", "dropout", "dropout_"]
