"""NumPy forward kernels of the op library (the ``forward`` of table entries too long for a
lambda), and the NumPy halves of a few dual-mode formula helpers.

Everything here takes and returns NumPy arrays; nothing records a graph. Tensor arguments that
are not inputs of an op (an index, a mask, a target) arrive as tensors and are unwrapped with
:func:`arr`.

The kernels are grouped by category, as the rows in :mod:`gradviz.ops.derivatives` are:
``common`` (what every file uses: :func:`arr`, dtype names), ``arithmetic``, ``pointwise``,
``activations``, ``reductions``, ``shape``, ``linalg``, ``indexing``, ``inplace``, ``losses``,
``normalization``, ``conv_pool``, ``random``, ``nondiff``. This package re-exports every name of
those files, so a row names its forward as ``K.<name>`` whichever file holds it.
"""

from __future__ import annotations

from gradviz.ops._kernels import (
    activations,
    arithmetic,
    common,
    conv_pool,
    indexing,
    inplace,
    linalg,
    losses,
    nondiff,
    normalization,
    pointwise,
    random,
    reductions,
    shape,
)

CATEGORIES = (common, arithmetic, pointwise, activations, reductions, shape, linalg, indexing,
              inplace, losses, normalization, conv_pool, random, nondiff)

# Every name of every category file, private ones included (`K._SCALAR_TYPE`, `K._im2col_index`
# ...), as attributes of the package: callers keep writing `K.<name>`. A value a kernel reads as
# a global (`_INDEX_CACHE_BYTES`) is read in its own file: change it there, not here.
for _module in CATEGORIES:
    globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
del _module
