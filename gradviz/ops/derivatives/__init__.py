"""The derivative table: every differentiable op, declared once.

Each :class:`OpInfo` gives an op's NumPy forward, the PyTorch node its backward is recorded as, and
one formula per differentiable input (PyTorch's ``tools/autograd/derivatives.yaml`` in Python).

How a formula asks for what it needs — by its parameter names, as derivatives.yaml does:

* the first parameter is the incoming gradient (``grad``); for an op with several outputs
  (``multi``) it is ``grads``, one gradient per differentiable output, zeros where none arrived;
* an input's name (``self``, ``other``, ``mat2``, ``exponent``) is that input as saved in forward;
* ``result`` is the op's output; a multi-output op's outputs go by the names in ``outputs``
  (``indices``, ``result1`` ...);
* ``<input>_sym_sizes`` / ``<input>_sym_numel`` / ``<input>_dtype`` / ``<input>_sym_argsize_<k>``
  are that input's shape / element count / dtype / size of dimension k; ``<input>_args_sizes``
  the shapes of a list input (``cat``'s ``tensors``);
* any other name is a forward keyword argument (``dim``, ``keepdim``, ``alpha`` ...); a tensor
  passed that way (``nll_loss``'s ``target``, ``masked_fill``'s ``mask``) is saved like an input.

The dispatch point saves exactly what the formulas of the inputs that need a gradient ask for, and
exposes it as PyTorch does (``grad_fn._saved_self``, ``grad_fn._saved_result`` ...). Formulas are
written with operators and :mod:`gradviz.ops._formula` helpers only, so the same formula runs on
NumPy arrays in a plain backward and on tensors under ``create_graph`` (see the NOTE there).
Broadcasting is undone once, by the dispatch point's node, for ops marked ``broadcasts`` (all
inputs, or the named ones).

This package holds the rows and the formulas they share, and nothing else: one file per
category, each group's helper formulas just above its rows:

=================  ====================================================================
``arithmetic``     ``+ - * / ** // %`` and their named forms
``pointwise``      elementwise functions (exp, log, trigonometry, rounding, clamp ...)
``activations``    torch.nn.functional's activations, softmax, attention
``reductions``     sums, means, extrema, norms, cumulative ops, sorting and selection
``shape``          views and shape ops (view, transpose, expand, select, cat, split ...)
``linalg``         matrix products, torch.linalg's decompositions and solvers, distances
``indexing``       embedding, gather and scatter, index_*, masks, unique, searchsorted
``inplace``        the nodes only an in-place call records (zero_, fill_, copy_)
``losses``         torch.nn.functional's losses
``normalization``  layer norm, group norm, batch norm
``conv_pool``      convolution, pooling, padding, upsampling, im2col
``random``         sampling and the in-place random fills
``nondiff``        recorded but never differentiable (comparisons, logical ops, argmax ...)
=================  ====================================================================

The files are imported below in that fixed order, which is the order of the rows in ``OPS``
(and in docs/ops.md). A row's formulas all live in one file: the generated fast path
(:mod:`gradviz.ops.fastpath`) copies their bodies and resolves their names in that file. What a
row is: :mod:`gradviz.ops.opinfo`. The forwards the rows name: :mod:`gradviz.ops._kernels`
(``K``). Node names and saved names are PyTorch 2.13's; docs/ops.md lists every row, generated
from these files.
"""

from __future__ import annotations

# Each import declares its category's rows (defop): the order of these imports is the table's.
# isort: off
from gradviz.ops.derivatives import arithmetic, pointwise, activations, reductions, shape
from gradviz.ops.derivatives import linalg, indexing, inplace, losses, normalization
from gradviz.ops.derivatives import conv_pool, random, nondiff
# isort: on
from gradviz.ops.derivatives.conv_pool import _correlate_for_weight  # noqa: F401 - tests use it
from gradviz.ops.opinfo import OPS

__all__ = ["OPS"]

#: The category files, in the order their rows were declared.
CATEGORIES = (arithmetic, pointwise, activations, reductions, shape, linalg, indexing, inplace,
              losses, normalization, conv_pool, random, nondiff)
