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
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _dtype, _factories
from gradviz.autograd.grad_mode import no_grad
from gradviz.nn._attention import multi_head_attention_forward, scaled_dot_product_attention
from gradviz.ops import functional as _F
from gradviz.ops import sampling  # (opsrand) dropout's mask
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import broadcast_message, dispatch, dispatch_inplace, general_dispatch
from gradviz.tensor import Tensor, _is_number, _wrap_dim

__all__ = [
    "relu", "relu_", "sigmoid", "tanh", "gelu", "silu", "leaky_relu", "elu", "softplus",
    "softmax", "log_softmax", "linear", "nll_loss", "cross_entropy", "mse_loss", "l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "dropout", "one_hot",
    "layer_norm", "embedding",
]

__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]  # nn/_attention.py

sigmoid = _F.sigmoid
tanh = _F.tanh


# PyTorch's error for a floating-point-only kernel called on an integer tensor.
_no_int = _F._floating_kernel


# -- activations ---------------------------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` (``ReluBackward0``), in place with ``inplace=True``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.relu(gradviz.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    if inplace:
        return dispatch_inplace(OPS["relu"], input)
    return _F.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return dispatch_inplace(OPS["relu"], input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Φ(x)`` with the normal CDF Φ, or its ``tanh`` approximation (``GeluBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.gelu(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _no_int("gelu", input, "GeluKernelImpl")
    return dispatch(OPS["gelu"], input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (``SiluBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.silu(gradviz.tensor([0.0]))
        tensor([0.])
    """
    _no_int("silu", input, "silu_cpu")
    if inplace:
        return dispatch_inplace(OPS["silu"], input)
    return dispatch(OPS["silu"], input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for positive ``x``, else ``negative_slope * x`` (``LeakyReluBackward0``; in place,
    ``LeakyReluBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.leaky_relu(gradviz.tensor([-1.0, 2.0]), 0.1)
        tensor([-0.1000,  2.0000])
    """
    if not _is_number(negative_slope):
        raise TypeError("leaky_relu(): argument 'negative_slope' (position 2) must be Number, not "
                        f"{type(negative_slope).__name__}")
    _no_int("leaky_relu", input, "leaky_relu_cpu")
    if inplace:
        return dispatch_inplace(OPS["leaky_relu_"], input, negative_slope=negative_slope)
    return dispatch(OPS["leaky_relu"], input, negative_slope=negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)`` (``EluBackward0``; in place,
    ``EluBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.elu(gradviz.tensor([0.0, 2.0]))
        tensor([0., 2.])
    """
    _no_int("elu", input, "elu_cpu")
    op = OPS["elu_" if inplace else "elu"]
    run = dispatch_inplace if inplace else dispatch
    return run(op, input, alpha=alpha, scale=1, input_scale=1)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (``SoftplusBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softplus(gradviz.tensor([0.0]))
        tensor([0.6931])
    """
    _no_int("softplus", input, "softplus_cpu")
    return dispatch(OPS["softplus"], input, beta=beta, threshold=threshold)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: _dtype.dtype | None = None) -> Tensor:
    """Softmax along ``dim`` (``SoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softmax(gradviz.tensor([[0.0, 0.0]]), dim=1)
        tensor([[0.5000, 0.5000]])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return _F.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: _dtype.dtype | None = None) -> Tensor:
    """Log-softmax along ``dim`` (``LogSoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.log_softmax(gradviz.tensor([[0.0, 0.0]]), dim=1)
        tensor([[-0.6931, -0.6931]])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return _F.log_softmax(input, dim, dtype=dtype)


# -- linear ----------------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, decomposed as PyTorch decomposes it:

    * 2-D input with a bias: ``addmm(bias, input, weight.t())`` (``AddmmBackward0``, with
      ``TBackward0`` on the weight);
    * a contiguous N-D input with a bias that is one row (1-D, or 1-D once squeezed): the same
      on ``input`` flattened to 2-D (its ``reshape`` made before ``weight.t()``), viewed back;
    * otherwise ``matmul(input, weight.t())``, plus ``bias`` added in place.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> w = gradviz.ones(3, 2, requires_grad=True)
        >>> F.linear(gradviz.ones(4, 2), w, gradviz.zeros(3)).grad_fn.name()
        'AddmmBackward0'
    """
    # NOTE [linear's node order] The nodes are made in ATen's order (torch 2.13, checked with a
    # TorchDispatchMode log), which fixes their sequence numbers and so the order the engine
    # runs them in: on the flattened path the input's reshape comes before ``weight.t()`` (the
    # input's ``ViewBackward0`` numbered below ``TBackward0``, so ``TBackward0`` runs first);
    # on the matmul path ``weight.t()`` comes first.
    if bias is not None and input.ndim == 2:
        return _F.addmm(bias, input, _F.t(weight))
    if bias is not None:
        # ATen asks "is the bias one row?" as ``bias.dim() == 1 || bias.squeeze().dim() == 1``,
        # before looking at the input's layout. The squeeze is a real op: its node is in no
        # graph, but it takes a sequence number when the bias requires grad, as in PyTorch.
        one_row = bias.ndim == 1 or _F.squeeze(bias).ndim == 1
        if one_row and input._data.flags.c_contiguous:
            shape = input.shape
            flat = _F.reshape(input, (int(np.prod(shape[:-1])), shape[-1]))
            out = _F.addmm(bias, flat, _F.t(weight))
            return _F.view(out, shape[:-1] + (out.shape[1],))
    out = _F.matmul(input, _F.t(weight))
    if bias is not None:
        out = _F.add_(out, bias)
    return out


# -- losses --------------------------------------------------------------------------------------
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction: str, size_average: Any = None, reduce: Any = None) -> int:
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      "reduction='sum' instead.", stacklevel=3)
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _no_grad_arg(fn: str, name: str, t: Tensor | None) -> None:
    if t is not None and t.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{name}'. This input cannot have requires_grad True.")


def _size(shape: tuple) -> str:
    return f"gradviz.Size({list(shape)})"


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``
    of shape ``(C,)`` or ``(N, C)``, optionally class-weighted (``NllLossBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.nll_loss(gradviz.tensor([[-1.0, -2.0]]), gradviz.tensor([1]))
        tensor(2.)
    """
    return _nll_loss(input, target, weight, ignore_index,
                     _reduction(reduction, size_average, reduce))


def _nll_loss(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
              r: int) -> Tensor:
    """``nll_loss`` with its reduction as the number PyTorch saves (what ``cross_entropy``
    calls, its arguments already checked)."""
    if not isinstance(target, Tensor):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{type(target).__name__}")
    # (the arrays' shapes: called once per training step, this avoids building Size objects)
    shape, tshape = input._data.shape, target._data.shape
    nd, tnd = len(shape), len(tshape)
    if nd not in (1, 2):
        raise RuntimeError(
            f"nll_loss: gradviz supports inputs of shape (C,) or (N, C), got "
            f"{list(shape)}; move the class dimension last and flatten the rest, e.g. "
            "input.movedim(1, -1).reshape(-1, C) with target.reshape(-1)")
    if nd == 2 and tnd == 1 and shape[0] != tshape[0] or (nd == 2 and tnd != 1) or (
            nd == 1 and tnd != 0):
        if nd == 2 and tnd == 1:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                             f"batch_size ({tshape[0]}).")
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported "
                           f"(nll_loss: input {list(shape)}, target {list(tshape)})")
    # torch checks the batch size first, then the dtype (a float target of the right length).
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._legacy[:-6]}")
    n_classes = shape[-1]
    if weight is not None:
        _no_grad_arg("nll_loss_forward", "weight", weight)
        if weight.shape != (n_classes,):
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               f"classes or no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
    t = target._data
    # (the ufuncs' reduce: ndarray.min/max add a Python wrapper each, ~1 us on a training step)
    if t.size and (_MIN(t, None) < 0 or _MAX(t, None) >= n_classes):  # look closer (ignore_index)
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    output, _ = general_dispatch(OPS["nll_loss"], input, target=target, weight=weight,
                                 reduction=r, ignore_index=int(ignore_index))
    return output


_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (``(C,)`` or ``(N, C)``) with class indices or class
    probabilities ``target``, recorded as PyTorch decomposes it: ``log_softmax`` over the class
    dimension, then ``nll_loss`` (indices) or ``-(log_probs * target).sum()`` (probabilities);
    ``label_smoothing`` adds PyTorch's smoothing term (``(1 - ε) * nll + ε / C * smooth``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.cross_entropy(gradviz.tensor([[0.0, 0.0]]), gradviz.tensor([1]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    shape = input._data.shape
    class_dim = 0 if len(shape) == 1 else 1
    n_classes = shape[class_dim]
    lsm = _F.log_softmax(input, class_dim)
    # As torch: a target shaped like the input holds class probabilities; any other target
    # holds class indices, and nll_loss says what is wrong with it (a float one: its dtype).
    if isinstance(target, Tensor) and target._data.dtype.kind == "f" and \
            target.shape == input.shape:
        wshape = tuple(n_classes if d == class_dim else 1 for d in range(len(shape)))
        if label_smoothing > 0:  # C++ Scalar arithmetic: MulBackward1, AddBackward1
            target = dispatch(OPS["add_scalar"], dispatch(OPS["mul_scalar"], target,
                                                          other=1 - label_smoothing),
                              other=label_smoothing / n_classes)
        prod = lsm * target
        if weight is not None:
            prod = prod * _F.view(weight, wshape)
        if r == 1:
            return dispatch(OPS["div_scalar"], -_F.sum(prod), other=input.numel() // n_classes)
        if r == 2:
            return -_F.sum(prod)
        return -_F.sum(prod, class_dim)
    nll = _nll_loss(lsm, target, weight, ignore_index, r)
    if label_smoothing == 0:
        return nll
    wshape = tuple(n_classes if d == class_dim else 1 for d in range(len(shape)))
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -_F.sum(lsm * _F.view(weight, wshape), class_dim)
    else:
        smooth = -_F.sum(lsm, class_dim)
    _F.masked_fill_(smooth, ignore_mask, 0.0)
    if r == 1:
        keep = np.logical_not(ignore_mask._data)
        if weight is not None:
            denom = Tensor._make(np.asarray(weight._data[target._data[keep]].sum()))
        else:
            denom = Tensor._make(np.asarray(keep.sum()))
        ret = _F.sum(smooth) / denom
    elif r == 2:
        ret = _F.sum(smooth)
    else:
        ret = smooth
    return _F.add(dispatch(OPS["mul_scalar"], nll, other=1 - label_smoothing),
                  dispatch(OPS["mul_scalar"], ret, other=label_smoothing / n_classes))


def _broadcast_pair(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's losses broadcast ``input`` and ``target`` (with a warning), expanding only the
    tensors whose shape changes (``torch.broadcast_tensors``)."""
    if target.shape == input.shape:
        return input, target
    warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the input "
                  f"size ({_size(input.shape)}). This will likely lead to incorrect results due "
                  "to broadcasting. Please ensure they have the same size.", stacklevel=3)
    try:
        shape = tuple(np.broadcast_shapes(input.shape, target.shape))
    except ValueError:
        nd = max(input.ndim, target.ndim)
        for k in range(1, nd + 1):
            a = input.shape[-k] if k <= input.ndim else 1
            b = target.shape[-k] if k <= target.ndim else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {nd - k} ({name}: input {list(input.shape)}, "
                    f"target {list(target.shape)})") from None
        raise
    if input.shape != shape:
        input = _F.expand(input, shape)
    if target.shape != shape:
        target = _F.expand(target, shape)
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Mean (or summed) squared error (``MseLossBackward0``; both inputs differentiable).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.mse_loss(gradviz.tensor([1.0, 3.0]), gradviz.tensor([0.0, 0.0]))
        tensor(5.)
    """
    r = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("mse_loss", input, target)
    return dispatch(OPS["mse_loss"], input, target, reduction=r)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """Mean (or summed) absolute error, recorded as PyTorch decomposes it:
    ``(input - target).abs()`` then ``mean``/``sum``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.l1_loss(gradviz.tensor([1.0, -3.0]), gradviz.tensor([0.0, 0.0]))
        tensor(2.)
    """
    r = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("l1_loss", input, target)
    diff = _F.abs(_F.sub(input, target))
    return _F.mean(diff) if r == 1 else _F.sum(diff) if r == 2 else diff


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                         ) -> Tensor:
    """Binary cross entropy of probabilities ``input`` with ``target``, logs clamped at -100
    as in PyTorch (``BinaryCrossEntropyBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.binary_cross_entropy(gradviz.tensor([0.5]), gradviz.tensor([1.0]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the "
                         f"input size ({_size(input.shape)}) is deprecated. Please ensure they "
                         "have the same size.")
    x, y = input._data, target._data
    if x.size and ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if y.size and ((y < 0) | (y > 1)).any():
        raise RuntimeError("all elements of target should be between 0 and 1")
    if weight is not None:
        _no_grad_arg("binary_cross_entropy", "weight", weight)
        weight = _F.expand(weight, tuple(np.broadcast_shapes(target.shape, weight.shape)))
    return dispatch(OPS["binary_cross_entropy"], input, target, weight=weight, reduction=r)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of logits ``input`` (sigmoid folded in, computed stably), with
    optional ``weight`` and positive-class ``pos_weight``
    (``BinaryCrossEntropyWithLogitsBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.binary_cross_entropy_with_logits(gradviz.tensor([0.0]), gradviz.tensor([1.0]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size "
                         f"({_size(input.shape)})")
    _no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return dispatch(OPS["binary_cross_entropy_with_logits"], input, target, weight=weight,
                    pos_weight=pos_weight, reduction=r)


# -- dropout, one_hot, layer_norm, embedding -----------------------------------------------------
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``, recorded
    as PyTorch records it on the CPU: a multiplication by the scaled random mask
    (``MulBackward0``). Returns ``input`` itself when not ``training`` or ``p == 0``. The mask
    comes from gradviz's generator: :func:`gradviz.manual_seed` makes it repeatable.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> _ = gradviz.manual_seed(0)
        >>> F.dropout(gradviz.ones(4), 0.5)
        tensor([0., 2., 2., 2.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input._data.size == 0:
        return input
    # (opsrand) the mask as torch.dropout makes it: its dtype rules and division, one place
    mask = sampling.dropout_noise(input, p)
    return _F.mul_(input, mask) if inplace else _F.mul(input, mask)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices as one-hot rows of an int64 tensor (never differentiable).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.one_hot(gradviz.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    t = tensor._data
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((np.arange(num_classes) == t[..., None]).astype(np.int64))


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
               ) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dimensions, then scale by ``weight``
    and shift by ``bias`` (``NativeLayerNormBackward0``, which saves the mean and 1/std).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.layer_norm(gradviz.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    if not isinstance(normalized_shape, (tuple, list)):  # F.layer_norm takes no bare int
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    if not ns or input.shape[input.ndim - len(ns):] != ns or input.ndim < len(ns):
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(ns)}")
    out, _, _ = dispatch(OPS["layer_norm"], input, weight, bias, normalized_shape=ns,
                         eps=float(eps))
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of ``weight`` at the indices ``input`` (``EmbeddingBackward0``); the row
    ``padding_idx`` gets no gradient. With ``max_norm``, the looked-up rows are first renormed
    in place, as in PyTorch.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.embedding(gradviz.tensor([2, 0]), gradviz.arange(6.0).view(3, 2))
        tensor([[4., 5.],
                [0., 1.]])
    """
    if not isinstance(input, Tensor) or input._data.dtype not in (np.int64, np.int32):
        got = input.type() if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {got} instead (while "
                           "checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"index out of range in self (embedding: indices must be in [0, {n}), "
                         f"got {int(idx.min() if idx.min() < 0 else idx.max())})")
    if sparse:
        raise RuntimeError("embedding: gradviz has no sparse gradients; use sparse=False")
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=-1)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] *= scale[:, None].astype(weight._data.dtype)
            weight._version_counter.version += 1
    return dispatch(OPS["embedding"], weight, indices=input, padding_idx=int(padding_idx),
                    scale_grad_by_freq=bool(scale_grad_by_freq), sparse=bool(sparse))


# -- convolution, pooling, batch_norm, dropout2d, pad --------------------------------------------
__all__ += ["conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool2d",
            "adaptive_avg_pool2d", "batch_norm", "dropout2d", "pad"]

conv1d = _F.conv1d
conv2d = _F.conv2d
conv_transpose2d = _F.conv_transpose2d
max_pool1d = _F.max_pool1d
max_pool2d = _F.max_pool2d


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of the last two dimensions (``AvgPool2DBackward0``). Zero
    padding counts in the mean unless ``count_include_pad=False``; ``divisor_override``
    replaces the window size as the divisor.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.avg_pool2d(gradviz.arange(16.0).view(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _ = _F._pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    return dispatch(OPS["avg_pool2d"], input, kernel_size=k, stride=s, padding=p,
                    ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Average pooling to a fixed ``output_size`` (``None`` keeps that side): window ``i`` of
    a side ``n`` covers ``[floor(i * n / o), ceil((i + 1) * n / o))``. Recorded as
    ``AdaptiveAvgPool2DBackward0``, or, for output size 1, as PyTorch's
    ``mean((-1, -2), keepdim=True)`` (``MeanBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_avg_pool2d(gradviz.arange(6.0).view(1, 2, 3), (1, 2))
        tensor([[[2., 3.]]])
    """
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    sizes = (output_size, output_size) if isinstance(output_size, (int, np.integer)) else tuple(
        output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out = tuple(int(n if o is None else o) for o, n in zip(sizes, input.shape[-2:]))
    if out == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    return dispatch(OPS["_adaptive_avg_pool2d"], input, output_size=out)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dimension 1) by the batch's mean and biased variance in
    training, updating ``running_mean``/``running_var`` in place with ``momentum`` (the
    variance unbiased), or by the running statistics in evaluation; then scale by ``weight``
    and shift by ``bias`` (``NativeBatchNormBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> rm, rv = gradviz.zeros(1), gradviz.ones(1)
        >>> F.batch_norm(gradviz.tensor([[1.0], [3.0]]), rm, rv, training=True, eps=0.0)
        tensor([[-1.],
                [ 1.]])
        >>> rm, rv
        (tensor([0.2000]), tensor([1.1000]))
    """
    if training:
        # torch counts the batch times the spatial sizes: channels of size 0 are no error
        per_channel = input.shape[0] * math.prod(input.shape[2:]) if input.ndim else 1
        if per_channel == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size torch.Size({list(input.shape)})")
    return _F.batch_norm(input, weight, bias, running_mean, running_var, training,
                         0.0 if momentum is None else momentum, eps)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels: each (sample, channel) plane with probability ``p``, scaling the
    others by ``1 / (1 - p)``. Recorded as PyTorch records it on the CPU: a multiplication by
    a mask of shape (N, C, 1, 1) (``MulBackward0``); ``input`` itself when not ``training``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> _ = gradviz.manual_seed(0)
        >>> F.dropout2d(gradviz.ones(1, 2, 1, 2), 0.5)
        tensor([[[[0., 0.]],
        <BLANKLINE>
                 [[2., 2.]]]])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    if nd < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0 or input._data.size == 0:
        return input
    dt = input._data.dtype
    shape = tuple(input.shape[:2]) + (1,) * (nd - 2)
    if p == 1:
        noise = np.zeros(shape, dt)
    else:
        keep = _factories.rng().random(shape) < 1 - p
        noise = (keep / (1 - p)).astype(dt)
    mask = Tensor._make(noise)
    return _F.mul_(input, mask) if inplace else _F.mul(input, mask)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions; ``pad`` is ``(left, right, top, bottom,
    ...)`` from the last dimension backwards. ``mode='constant'`` fills with ``value``
    (negative amounts crop; ``ConstantPadNdBackward0``); ``'reflect'`` mirrors without the
    edge (``ReflectionPad1DBackward0``/``2D``), ``'replicate'`` repeats the edge
    (``ReplicationPad1DBackward0``/``2D``), ``'circular'`` wraps around (PyTorch's copies
    into slices of a new tensor: ``CopySlices``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.pad(gradviz.ones(1, 2), (1, 1), value=0.5)
        tensor([[0.5000, 1.0000, 1.0000, 0.5000]])
    """
    if mode != "constant":
        return _pad_nonconstant(input, pad, mode, value)  # (nnmore)
    return _F.constant_pad_nd(input, pad, 0 if value is None else value)



# -- more (nnact): activations -------------------------------------------------------------------
__all__ += ["hardtanh", "hardtanh_", "relu6", "selu", "selu_", "celu", "celu_", "mish", "prelu",
            "glu", "hardswish", "hardsigmoid", "logsigmoid", "softsign", "softshrink",
            "hardshrink", "tanhshrink", "threshold", "threshold_", "softmin"]

# SELU's constants (Klambauer et al. 2017), as PyTorch writes them into its elu call.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _run(op_name: str, input: Tensor, inplace: bool, **kwargs: Any) -> Tensor:
    """The row ``op_name`` on ``input``, written into it with ``inplace=True``."""
    if inplace:
        return dispatch_inplace(OPS[op_name], input, **kwargs)
    return dispatch(OPS[op_name], input, **kwargs)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
             ) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``: the gradient passes
    strictly inside the interval).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardtanh(gradviz.tensor([-2.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run("hardtanh", input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``: PyTorch records it as ``hardtanh(input, 0, 6)``
    (``HardtanhBackward0`` with ``min_val=0``, ``max_val=6``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.relu6(gradviz.tensor([-1.0, 3.0, 8.0]))
        tensor([0., 3., 6.])
    """
    return _run("hardtanh", input, inplace, min_val=0, max_val=6)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(input, alpha)`` with SELU's fixed constants, recorded as PyTorch records
    it: ``EluBackward0`` (in place ``EluBackward1``) with ``alpha``, ``scale`` and
    ``input_scale=1`` saved.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.selu(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 1.0507])
    """
    _no_int("selu", input, "elu_cpu")
    return _run("elu_" if inplace else "elu", input, inplace, alpha=_SELU_ALPHA,
                scale=_SELU_SCALE, input_scale=1)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``; in place,
    ``CeluBackward1``, which saves the result).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.celu(gradviz.tensor([-1.0, 2.0]), alpha=0.5)
        tensor([-0.4323,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _no_int("celu", input, "elu_cpu")
    return _run("celu_" if inplace else "celu", input, inplace, alpha=alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (``MishBackward0``, in place too).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.mish(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 0.8651])
    """
    _no_int("mish", input, "mish_cpu")
    return _run("mish", input, inplace)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` for positive ``x``, else ``weight * x`` with a learnt ``weight``: one value, or
    one per channel (dimension 1). As PyTorch: a 1-D ``weight`` is viewed to broadcast
    (``ViewBackward0``), then ``PreluKernelBackward0`` saves ``self`` and the viewed weight.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.prelu(gradviz.tensor([[-2.0, 3.0]]), gradviz.tensor([0.25]))
        tensor([[-0.5000,  3.0000]])
    """
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    n_weights = int(weight._data.size)
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n_weights != 1 and n_weights != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {n_weights} and channel size = {channels}.")
    _no_int("prelu", input, "prelu_cpu")
    if input.ndim != weight.ndim:
        shape = [1] * input.ndim
        if input.ndim >= 2:
            shape[1] = n_weights
        weight = _F.view(weight, tuple(shape))
    return dispatch(OPS["_prelu_kernel"], input, weight)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of
    ``input`` along ``dim`` (``GluBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.glu(gradviz.tensor([[1.0, 2.0, 0.0, 100.0]]))
        tensor([[0.5000, 2.0000]])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    _no_int("glu", input, "glu_cpu")
    # PyTorch keeps dim as given and shows it read as an unsigned 64-bit number.
    return dispatch(OPS["glu"], input, dim=dim % 2**64)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (``HardswishBackward0``, in place too).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardswish(gradviz.tensor([-1.0, 1.0, 4.0]))
        tensor([-0.3333,  0.6667,  4.0000])
    """
    _no_int("hardswish", input, "hardswish_cpu")
    return _run("hardswish", input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (``HardsigmoidBackward0``, in place too).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardsigmoid(gradviz.tensor([-4.0, 0.0, 4.0]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _no_int("hardsigmoid", input, "hardsigmoid_cpu")
    return _run("hardsigmoid", input, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``, which saves ``self`` and
    the kernel's ``buffer``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.logsigmoid(gradviz.tensor([0.0, -200.0]))
        tensor([  -0.6931, -200.0000])
    """
    _no_int("logsigmoid", input, "log_sigmoid_cpu")
    output, _ = general_dispatch(OPS["log_sigmoid_forward"], input)
    return output


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, recorded as PyTorch's Python writes it: ``input / (input.abs() + 1)``
    (``DivBackward0``, ``AddBackward0``, ``AbsBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softsign(gradviz.tensor([-1.0, 3.0]))
        tensor([-0.5000,  0.7500])
    """
    return _F.div(input, _F.add(_F.abs(input), 1))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0
    (``SoftshrinkBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softshrink(gradviz.tensor([-1.0, 0.2, 2.0]))
        tensor([-0.5000,  0.0000,  1.5000])
    """
    _no_int("softshrink", input, "softshrink_check")
    if lambd < 0:
        dt = input._data.dtype
        raise RuntimeError(f"lambda must be in range [0, {float(np.finfo(dt).max):g}] for input "
                           f"dtype {input.dtype._legacy[:-6]}, but found {lambd:g}")
    return dispatch(OPS["softshrink"], input, lambd=lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (``HardshrinkBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardshrink(gradviz.tensor([-1.0, 0.2, 2.0]))
        tensor([-1.,  0.,  2.])
    """
    _no_int("hardshrink", input, "hardshrink_cpu")
    return dispatch(OPS["hardshrink"], input, lambd=lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``, recorded as written (``SubBackward0`` over ``TanhBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.tanhshrink(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 0.2384])
    """
    return _F.sub(input, _F.tanh(input))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value`` (``ThresholdBackward0``; in place,
    ``ThresholdBackward1``; both save the input as it was).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.threshold(gradviz.tensor([0.5, 2.0]), 1.0, 20.0)
        tensor([20.,  2.])
    """
    return _run("threshold_" if inplace else "threshold", input, inplace, threshold=threshold,
                value=value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return dispatch_inplace(OPS["threshold_"], input, threshold=threshold, value=value)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: _dtype.dtype | None = None) -> Tensor:
    """``softmax(-input, dim)``, recorded so (``SoftmaxBackward0`` over ``NegBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softmin(gradviz.tensor([[0.0, 0.0]]), dim=1)
        tensor([[0.5000, 0.5000]])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return _F.softmax(_F.neg(input), dim, dtype=dtype)


# -- more (nnact): losses and distances ------------------------------------------------------------
__all__ += ["smooth_l1_loss", "huber_loss", "kl_div", "cosine_similarity", "normalize",
            "margin_ranking_loss", "soft_margin_loss"]


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared error ``0.5 * d**2 / beta`` below ``beta``, absolute error ``|d| - 0.5 * beta``
    above (``SmoothL1LossBackward0``). ``beta=0`` is :func:`l1_loss`, recorded as such.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.smooth_l1_loss(gradviz.tensor([0.5, 3.0]), gradviz.zeros(2))
        tensor(1.3125)
    """
    r = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("smooth_l1_loss", input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction={0: "none", 1: "mean", 2: "sum"}[r])
    _no_int("smooth_l1_loss", input, "smooth_l1_cpu")
    return dispatch(OPS["smooth_l1_loss"], input, target, reduction=r, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error ``0.5 * d**2`` below ``delta``, ``delta * (|d| - 0.5 * delta)`` above
    (``HuberLossBackward0``); with ``weight``, the unreduced loss times ``weight`` then
    reduced (``MulBackward0``, ``MeanBackward0``/``SumBackward0``), as PyTorch does.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.huber_loss(gradviz.tensor([0.5, 3.0]), gradviz.zeros(2), delta=2.0)
        tensor(2.0625)
    """
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    if weight is not None and reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    r = _reduction(reduction if weight is None else "none")
    input, target = _broadcast_pair("huber_loss", input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _no_int("huber_loss", input, "huber_cpu")
    loss = dispatch(OPS["huber_loss"], input, target, reduction=r, delta=delta)
    if weight is None:
        return loss
    loss = _F.mul(loss, weight)
    return loss if reduction == "none" else _F.sum(loss) if reduction == "sum" else _F.mean(loss)


_KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from log-probabilities ``input``,
    recorded as PyTorch composes it: ``xlogy(target, target) - target * input`` (with
    ``log_target``, ``exp(target) * (target - input)``), then the reduction;
    ``'batchmean'`` is the sum divided by the batch size (``DivBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> p = gradviz.tensor([[0.5, 0.5]])
        >>> F.kl_div(p.log(), p, reduction="batchmean")
        tensor(0.)
    """
    if size_average is not None or reduce is not None:
        r = _reduction("mean", size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, stacklevel=2)
        r = _reduction("sum" if reduction == "batchmean" else reduction)
    if log_target:
        out = _F.mul(_F.exp(target), _F.sub(target, input))
    else:
        # xlogy(target, target) records XlogyBackward0 only when the target needs a gradient
        out = _F.sub(_F.xlogy(target, target), _F.mul(target, input))
    if r == 1:
        out = _F.mean(out)
    elif r == 2:
        out = _F.sum(out)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input.shape[0]
    return out


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 * x2) / (|x1| |x2|)`` along ``dim``, recorded as PyTorch computes it: each
    input divided by its norm (``LinalgVectorNormBackward0``, cloned then clamped to ``eps``
    without recording), the product summed over ``dim`` (``SumBackward1``). Inputs of
    different shapes are both expanded first (``ExpandBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.cosine_similarity(gradviz.tensor([[1.0, 0.0]]), gradviz.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    if x1.shape != x2.shape:
        try:
            shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        except ValueError:
            raise RuntimeError(broadcast_message("cosine_similarity",
                                                 [x1.shape, x2.shape])) from None
        x1, x2 = _F.expand(x1, shape), _F.expand(x2, shape)
    d = dim  # as given: PyTorch's nodes save the dim unwrapped
    n1 = _F.clone(_F.norm(x1, 2, d, keepdim=True))
    n2 = _F.clone(_F.norm(x2, 2, d, keepdim=True))
    with no_grad():
        # the clamp only guards the division: PyTorch does it in place, unrecorded
        dispatch_inplace(OPS["clamp_min"], n1, min=eps)
        dispatch_inplace(OPS["clamp_min"], n2, min=eps)
    return _F.sum(_F.mul(_F.div(x1, n1), _F.div(x2, n2)), d)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``), recorded as
    PyTorch's Python writes it: ``input.norm(p, dim, keepdim=True).clamp_min(eps)
    .expand_as(input)`` then ``input / denom``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.normalize(gradviz.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    if out is not None:
        raise RuntimeError("normalize(out=...): gradviz returns a new tensor; assign the result "
                           "instead of passing out=")
    denom = _F.expand(_F.clamp_min(_F.norm(input, p, dim, keepdim=True), eps), input.shape)
    return _F.div(input, denom)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                        ) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced, recorded as PyTorch's C++
    composes it (``SubBackward0``, ``MulBackward0``, ``AddBackward1``, ``ClampMinBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.margin_ranking_loss(gradviz.tensor([1.0, 0.0]), gradviz.tensor([0.0, 1.0]),
        ...                       gradviz.tensor([1.0, 1.0]), margin=0.5)
        tensor(0.7500)
    """
    r = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, target: "
            f"{_size(target.shape)} ")
    out = _F.mul(_F.neg(target), _F.sub(input1, input2))
    out = dispatch(OPS["add_scalar"], out, other=margin)
    out = dispatch_inplace(OPS["clamp_min"], out, min=0)
    return _F.mean(out) if r == 1 else _F.sum(out) if r == 2 else out


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, reduced (``SoftMarginLossBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.soft_margin_loss(gradviz.tensor([0.0]), gradviz.tensor([1.0]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    _no_grad_arg("soft_margin_loss", "target", target)
    return dispatch(OPS["soft_margin_loss"], input, target=target, reduction=r)


# -- more (nnact): distances and embedding / likelihood losses ------------------------------------
__all__ += ["pairwise_distance", "hinge_embedding_loss", "cosine_embedding_loss",
            "poisson_nll_loss", "gaussian_nll_loss"]


def _constant(value: float, like: Tensor) -> Tensor:
    """A C++ Scalar on the left of ``-``: a 0-d constant of ``like``'s dtype (``SubBackward0``
    then has no edge for it, as in PyTorch)."""
    return Tensor._make(np.asarray(value, like._data.dtype))


def _reduce(loss: Tensor, r: int) -> Tensor:
    """PyTorch's ``apply_loss_reduction``: ``mean()``, ``sum()`` or the loss itself."""
    return _F.mean(loss) if r == 1 else _F.sum(loss) if r == 2 else loss


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension, recorded as PyTorch's C++
    computes it (``SubBackward0``, ``AddBackward1``, ``NormBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.pairwise_distance(gradviz.tensor([[3.0, 4.0]]), gradviz.zeros(1, 2), eps=0.0)
        tensor([5.])
    """
    nd = max(x1.ndim, x2.ndim)
    diff = dispatch(OPS["add_scalar"], _F.sub(x1, x2), other=eps)
    return dispatch(OPS["norm_dim"], diff, p=p, dim=(max(nd - 1, 0),), keepdim=bool(keepdim))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                         ) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1, reduced;
    recorded as PyTorch's C++ composes it (``SubBackward0``, ``ClampMinBackward0``, two
    ``WhereBackward0``, ``AddBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hinge_embedding_loss(gradviz.tensor([0.3, 2.0]), gradviz.tensor([-1.0, 1.0]))
        tensor(1.3500)
    """
    r = _reduction(reduction, size_average, reduce)
    zeros = _F.zeros_like(input)
    margin_clamp = dispatch_inplace(OPS["clamp_min"], _F.sub(_constant(margin, input), input),
                                    min=0)
    output_margin = _F.where(_F.ne(target, 1), margin_clamp, zeros)
    output_self = _F.where(_F.ne(target, -1), input, zeros)
    return _reduce(_F.add(output_margin, output_self), r)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                          ) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is
    -1, reduced; recorded as PyTorch's C++ composes it (the cosine from sums of products, the
    norms' product through ``sqrt_``, then ``WhereBackward0`` for each case).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> a, b = gradviz.tensor([[1.0, 0.0]]), gradviz.tensor([[1.0, 1.0]])
        >>> F.cosine_embedding_loss(a, b, gradviz.tensor([1.0]))
        tensor(0.2929)
    """
    r = _reduction(reduction, size_average, reduce)
    targ_dim = target.ndim
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if targ_dim == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12  # PyTorch's EPSILON in Loss.cpp
    prod_sum = _F.sum(_F.mul(input1, input2), targ_dim)
    mag_square1 = dispatch(OPS["add_scalar"], _F.sum(_F.mul(input1, input1), targ_dim), other=eps)
    mag_square2 = dispatch(OPS["add_scalar"], _F.sum(_F.mul(input2, input2), targ_dim), other=eps)
    denom = dispatch_inplace(OPS["sqrt"], _F.mul(mag_square1, mag_square2))
    cos = _F.div(prod_sum, denom)
    zeros = _F.zeros_like(cos)
    pos = _F.sub(_constant(1, cos), cos)
    neg = dispatch_inplace(OPS["clamp_min"], dispatch(OPS["sub_scalar"], cos, other=margin),
                           min=0)
    output_pos = _F.where(_F.eq(target, 1), pos, zeros)
    output_neg = _F.where(_F.eq(target, -1), neg, zeros)
    return _reduce(_F.add(output_pos, output_neg), r)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under a Poisson distribution: ``exp(input) -
    target * input`` for a log-rate ``input`` (else ``input - target * log(input + eps)``),
    plus Stirling's approximation of ``log(target!)`` with ``full``; recorded as PyTorch's
    C++ composes it.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.poisson_nll_loss(gradviz.tensor([0.0, 1.0]), gradviz.tensor([1.0, 2.0]))
        tensor(0.8591)
    """
    if size_average is not None or reduce is not None:
        reduction = {0: "none", 1: "mean", 2: "sum"}[_reduction("mean", size_average, reduce)]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _F.sub(_F.exp(input), _F.mul(target, input))
    else:
        loss = _F.sub(input, _F.mul(target, _F.log(dispatch(OPS["add_scalar"], input,
                                                              other=eps))))
    if full:  # Stirling's term of log(target!), recorded as torch's C++ writes it (a target
        # that requires grad gets its gradient through it), 0 where target <= 1
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = _F.add(_F.sub(_F.mul(target, _F.log(target)), target),
                              dispatch(OPS["mul_scalar"], _F.log(dispatch(
                                  OPS["mul_scalar"], target, other=2 * math.pi)), other=0.5))
        loss = _F.add_(loss, _F.masked_fill(stirling, target <= 1, 0))
    return _reduce(loss, _REDUCTIONS[reduction])


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under normal distributions of mean ``input`` and
    variance ``var`` (clamped to ``eps`` without recording), ``0.5 * (log(var) + (input -
    target)**2 / var)``, plus ``0.5 * log(2 pi)`` with ``full``; recorded as PyTorch's Python
    writes it. ``var`` may have one dimension fewer, or size 1 in the last one.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.gaussian_nll_loss(gradviz.tensor([1.0]), gradviz.tensor([3.0]), gradviz.ones(1))
        tensor(2.)
    """
    if isinstance(var, (int, float)):
        var = _F.full_like(input, float(var))
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = _F.unsqueeze(var, -1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.ndim and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if var._data.size and (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    var = _F.clone(var)
    with no_grad():
        dispatch_inplace(OPS["clamp_min"], var, min=eps)
    loss = _F.mul(_F.add(_F.log(var), _F.div(_F.pow(_F.sub(input, target), 2), var)), 0.5)
    if full:
        loss = _F.add_(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, _REDUCTIONS[reduction])


# -- more (nnmore): normalization ----------------------------------------------------------------
__all__ += ["group_norm", "instance_norm", "rms_norm"]


def _no_bool(name: str, input: Tensor, kernel: str) -> None:
    """PyTorch's error for a kernel that takes numbers but not bools."""
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\' ({name}: input of '
                                  f"shape {list(input.shape)}; convert it with .float() first)")


def _no_int_dropout(input: Tensor, alpha: bool) -> None:
    """PyTorch's error for a dropout of an integer tensor: the float mask cannot be written
    into it (alpha dropout's mask arithmetic turns a bool input into Long first)."""
    if input._data.dtype.kind != "f":
        shown = "Long" if alpha and input._data.dtype == np.bool_ else input.dtype._legacy[:-6]
        raise RuntimeError(f"result type Float can't be cast to the desired output type {shown}")


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize each sample's channels in ``num_groups`` groups (mean and biased variance
    over a group's channels and positions), then scale by ``weight`` and shift by ``bias`` per
    channel (``NativeGroupNormBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.group_norm(gradviz.tensor([[1.0, 3.0, 5.0, 7.0]]), 2, eps=0.0)
        tensor([[-1.,  1., -1.,  1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    _no_int("group_norm", input, "GroupNormKernelImpl")
    n, c = input.shape[0], input.shape[1]
    per_group = [n * c // num_groups, num_groups] + list(input.shape[2:])
    if per_group[0] * math.prod(per_group[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {per_group}")
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            # PyTorch's text for the bias shows the weight's shape ([0] when there is none).
            shown = list(weight.shape) if weight is not None else [0]
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{list(t.shape) if name == 'weight' else shown} and input of "
                               f"shape {list(input.shape)}")
    hxw = math.prod(input.shape[2:])
    out, _, _ = dispatch(OPS["native_group_norm"], input, weight, bias, N=int(n), C=int(c),
                         HxW=int(hxw), group=int(num_groups), eps=float(eps))
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) plane by its own statistics, recorded as PyTorch
    computes it: the input viewed as one sample of N * C channels (``ViewBackward0``),
    ``batch_norm`` in training mode (``NativeBatchNormBackward0``, with ``weight``/``bias``
    repeated N times: ``RepeatBackward0``), viewed back. Running statistics, if given, get the
    mean over the batch of the updated per-sample ones.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.instance_norm(gradviz.tensor([[[1.0, 3.0], [2.0, 6.0]]]), eps=0.0)
        tensor([[[-1.,  1.],
                 [-1.,  1.]]])
    """
    if use_input_stats:
        if math.prod(input.shape[2:]) == 1:  # (the empty product of a 2-D input too)
            raise ValueError("Expected more than 1 spatial element when training, got input "
                             f"size torch.Size({list(input.shape)})")
    _no_int("instance_norm", input, "batch_norm")
    b, c = input.shape[0], input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {b * c} elements not {t._data.size * b}")
    weight_, bias_ = (None if t is None else t.repeat(b) for t in (weight, bias))
    rm_, rv_ = (None if t is None else t.repeat(b) for t in (running_mean, running_var))
    reshaped = input.contiguous().view((1, b * c) + tuple(input.shape[2:]))
    out = _F.batch_norm(reshaped, weight_, bias_, rm_, rv_, use_input_stats, momentum, eps)
    with no_grad():  # PyTorch copies the batch's mean of the updated statistics back
        for t, t_ in ((running_mean, rm_), (running_var, rv_)):
            if t is not None:
                t.copy_(t_.view(b, c).mean(0))
    return out.view(input.shape)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Divide by the root mean square over the last ``len(normalized_shape)`` dimensions
    (plus ``eps``, by default the dtype's machine epsilon), then scale by ``weight``. Recorded
    as PyTorch's composite: ``pow``, ``mean``, ``+ eps`` (``AddBackward1``), ``rsqrt``, two
    ``mul``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.rms_norm(gradviz.tensor([[3.0, 4.0]]), (2,), eps=0.0)
        tensor([[0.8485, 1.1314]])
    """
    ns = (int(normalized_shape),) if _is_number(normalized_shape) else tuple(
        int(s) for s in normalized_shape)
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError("Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(ns)}")
    _no_int("rms_norm", input, "rms_norm")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - 1, input.ndim - len(ns) - 1, -1))  # last first, as torch
    ms = _F.mean(_F.pow(input, 2), dims, keepdim=True)
    out = _F.mul(input, _F.rsqrt(dispatch(OPS["add_scalar"], ms, other=eps)))
    return out if weight is None else _F.mul(out, weight)


# -- more (nnmore): pooling ----------------------------------------------------------------------
__all__ += ["avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d",
            "lp_pool1d", "lp_pool2d", "conv_transpose1d", "conv3d"]

conv_transpose1d = _F.conv_transpose1d
conv3d = _F.conv3d


def _check_1d(name: str, input: Tensor) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


def _one(name: str, v: Any) -> int:
    """An int or a 1-sequence, as 1-D pooling takes its sizes."""
    if _is_number(v):
        return int(v)
    v = tuple(v)
    if len(v) != 1:
        raise RuntimeError(f"{name} must be a single int, or a tuple of one int")
    return int(v[0])


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of each window of the last dimension, recorded as PyTorch records it:
    ``avg_pool2d`` over a height of 1 between ``unsqueeze(-2)`` and ``squeeze(-2)``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.avg_pool1d(gradviz.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    _check_1d("avg_pool1d", input)
    _no_bool("avg_pool1d", input, "avg_pool2d")
    k = _one("kernel_size", kernel_size)
    s = k if stride is None or (not _is_number(stride) and len(stride) == 0) else _one(
        "stride", stride)
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one("padding", padding)),
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of the last dimension to ``output_size``: ``adaptive_avg_pool2d`` over
    a height of 1, between ``unsqueeze(-2)`` and ``squeeze(-2)`` (as PyTorch).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_avg_pool1d(gradviz.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)
        tensor([[2., 4.]])
    """
    _check_1d("adaptive_avg_pool1d", input)
    _no_int("adaptive_avg_pool1d", input, "adaptive_avg_pool2d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one("output_size", output_size))
                               ).squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum of each adaptive window (window ``i`` of a side ``n`` covers
    ``[floor(i * n / o), ceil((i + 1) * n / o))``; ``None`` keeps that side). Records
    ``AdaptiveMaxPool2DBackward0``, which saves the indices (flat positions in each H*W plane)
    as ``_saved_result1``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_max_pool2d(gradviz.arange(6.0).view(1, 2, 3), (1, 2))
        tensor([[[4., 5.]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    sizes = (output_size, output_size) if _is_number(output_size) else tuple(output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    _no_int("adaptive_max_pool2d", input, "adaptive_max_pool2d")
    out_size = tuple(int(n if o is None else o) for o, n in zip(sizes, input.shape[-2:]))
    for d in (-2, -1):
        if input.shape[d] == 0:
            raise RuntimeError("adaptive_max_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {input.ndim + d} being empty")
    out, indices = dispatch(OPS["adaptive_max_pool2d"], input, output_size=out_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum of each adaptive window of the last dimension: ``adaptive_max_pool2d`` over
    a height of 1, between ``unsqueeze(-2)`` and ``squeeze(-2)`` (as PyTorch).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_max_pool1d(gradviz.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)
        tensor([[3., 6.]])
    """
    _check_1d("adaptive_max_pool1d", input)
    out, indices = adaptive_max_pool2d(input.unsqueeze(-2),
                                       (1, _one("output_size", output_size)), True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def _lp_tail(out: Tensor, norm_type: float, window: int) -> Tensor:
    # PyTorch's Python: (sign(out) * relu(abs(out))).mul(window).pow(1 / norm_type)
    return _F.pow(_F.mul(_F.mul(_F.sign(out), relu(_F.abs(out))), window), 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of the last dimension: ``avg_pool1d`` of
    ``input ** p``, times the window size, to the power ``1 / p`` (PyTorch's composite).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.lp_pool1d(gradviz.tensor([[[3.0, 4.0]]]), 2, 2)
        tensor([[[5.]]])
    """
    out = avg_pool1d(_F.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_tail(out, norm_type, _one("kernel_size", kernel_size))


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of the last two dimensions: ``avg_pool2d`` of
    ``input ** p``, times the window size, to the power ``1 / p`` (PyTorch's composite).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.lp_pool2d(gradviz.tensor([[[[1.0, 1.0], [1.0, 1.0]]]]), 1, 2)
        tensor([[[[4.]]]])
    """
    kh, kw = (kernel_size, kernel_size) if _is_number(kernel_size) else tuple(kernel_size)
    out = avg_pool2d(_F.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_tail(out, norm_type, int(kh) * int(kw))


# -- more (nnmore): padding modes, resampling, unfold / fold -------------------------------------
__all__ += ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
            "pixel_unshuffle", "unfold", "fold"]

pixel_shuffle = _F.pixel_shuffle
pixel_unshuffle = _F.pixel_unshuffle

_PAD_ROWS = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def _pad_nonconstant(input: Tensor, pad: Sequence[int], mode: str, value: float | None
                     ) -> Tensor:
    """F.pad's 'reflect', 'replicate' and 'circular' modes, with PyTorch's checks and texts."""
    pad = tuple(int(p) for p in pad)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    k = len(pad) // 2
    if mode == "circular" and k == 3 and input.ndim in (4, 5):
        return _pad_circular(input, pad)
    if k not in (1, 2) or input.ndim not in (k + 1, k + 2):
        if k == 3 and input.ndim in (4, 5):
            raise NotImplementedError(f"F.pad: 3-D padding with mode='{mode}' is not available "
                                      "in gradviz (1-D and 2-D are)")
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    _no_bool(f"F.pad(mode='{mode}')", input, f"{_PAD_ROWS[mode]}{k}d")
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = pad[2 * i], pad[2 * i + 1], input.shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError("Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{dim} of input {list(input.shape)}")
        if n + lo + hi < 1:
            raise RuntimeError(f"input (W: {n}) is too small. Calculated output W: {n + lo + hi}"
                               if k == 1 else f"input is too small at dimension {dim}: "
                               f"calculated output size {n + lo + hi}")
    return dispatch(OPS[f"{_PAD_ROWS[mode]}{k}d"], input, padding=pad)


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """PyTorch's ``_pad_circular``: a new tensor; the input copied into its middle; then, per
    padded dimension (the last first), its left border copied from the right end of the
    middle and its right border from the left end. Every copy is an in-place write into a
    slice (``CopySlices``), the corners written twice, as in PyTorch."""
    k = len(pad) // 2
    lead = input.ndim - k
    out_shape = list(input.shape)
    for i in range(k):
        lo, hi = pad[2 * (k - 1 - i)], pad[2 * (k - 1 - i) + 1]
        size = input.shape[lead + i]
        out_shape[lead + i] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
    out = input.new_empty(tuple(out_shape))
    out_slice, in_slice = out, input
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        start = max(lo, 0)
        out_slice = out_slice.narrow(dim, start, out_shape[dim] - max(hi, 0) - start)
        start = max(-lo, 0)
        in_slice = in_slice.narrow(dim, start, input.shape[dim] - max(-hi, 0) - start)
    out_slice.copy_(in_slice)
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = pad[2 * i], pad[2 * i + 1], out_shape[dim]
        if lo > 0:
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, n - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(dim, n - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample the spatial dimensions (after N and C) to ``size`` or by ``scale_factor``.
    ``mode='nearest'`` (3-D or 4-D input: ``UpsampleNearest1DBackward0``/``2D``),
    ``'nearest-exact'`` (3-D, 4-D or 5-D: ``UpsampleNearestExact1DBackward0``/``2D``/``3D``),
    ``'linear'`` (3-D), ``'bilinear'`` and ``'bicubic'`` (4-D) and ``'trilinear'`` (5-D)
    (``UpsampleLinear1DBackward0``, ``UpsampleBilinear2DBackward0``,
    ``UpsampleBicubic2DBackward0``, ``UpsampleTrilinear3DBackward0``, with ``align_corners``),
    ``'area'`` (``adaptive_avg_pool1d``/``2d``). Each node saves ``output_size`` and the scales
    as given (None when ``size`` was).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.interpolate(gradviz.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
        >>> F.interpolate(gradviz.tensor([[[1.0, 2.0]]]), size=3, mode="linear",
        ...               align_corners=True)
        tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    scale_factors: list | None = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(x, (int, np.integer)) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(x) for x in size]}")
            output_size: list | None = [int(x) for x in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(float(input.shape[i + 2]) * scale_factors[i])
                       for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    if antialias:
        raise NotImplementedError("F.interpolate: antialias=True is not available in gradviz")
    if output_size is None:  # PyTorch's C++: floor of each size times its factor
        output_size = [int(n * s) for n, s in zip(input.shape[2:], scale_factors)]
    if dim in (1, 2, 3) and min(list(input.shape[2:]) + list(output_size)) <= 0:
        names = ("D", "H", "W")[3 - dim:]
        ins, outs = (", ".join(f"{k}: {v}" for k, v in zip(names, sizes))
                     for sizes in (input.shape[2:], output_size))
        sep = " and" if dim == 1 else ""  # (PyTorch's two texts differ by this word)
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({ins}){sep} output ({outs})")
    out_size = tuple(output_size)
    scales = tuple(scale_factors) if scale_factors is not None else (None,) * dim
    kernels = {("nearest", 1): "compute_indices_weights_nearest",
               ("nearest", 2): "upsample_nearest2d_channels_last",
               ("linear", 1): "compute_indices_weights_linear",
               ("bilinear", 2): "upsample_bilinear2d_channels_last",
               ("nearest-exact", 1): "compute_indices_weights_nearest",
               ("nearest-exact", 2): "upsample_nearest2d_channels_last",
               ("nearest-exact", 3): "compute_indices_weights_nearest",
               ("bicubic", 2): "compute_indices_weights_cubic",
               ("trilinear", 3): "compute_indices_weights_linear"}
    if (mode, dim) in kernels:
        _no_int("interpolate", input, kernels[mode, dim])
    if mode == "nearest" and dim in (1, 2):
        if dim == 1:
            return dispatch(OPS["upsample_nearest1d"], input, output_size=out_size,
                            scales=scales[0])
        return dispatch(OPS["upsample_nearest2d"], input, output_size=out_size,
                        scales_h=scales[0], scales_w=scales[1])
    if mode == "area" and dim in (1, 2):
        pool = adaptive_avg_pool1d if dim == 1 else adaptive_avg_pool2d
        return pool(input, out_size)
    if mode == "linear" and dim == 1:
        return dispatch(OPS["upsample_linear1d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales=scales[0])
    if mode == "bilinear" and dim == 2:
        return dispatch(OPS["upsample_bilinear2d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales_h=scales[0],
                        scales_w=scales[1])
    if mode == "nearest-exact" and dim in (1, 2, 3):
        names = ("scales",) if dim == 1 else ("scales_h", "scales_w") if dim == 2 else (
            "scales_d", "scales_h", "scales_w")
        return dispatch(OPS[f"upsample_nearest_exact{dim}d"], input, output_size=out_size,
                        **dict(zip(names, scales)))
    if mode == "bicubic" and dim == 2:
        return dispatch(OPS["upsample_bicubic2d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales_h=scales[0],
                        scales_w=scales[1])
    if mode == "trilinear" and dim == 3:
        return dispatch(OPS["upsample_trilinear3d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales_d=scales[0],
                        scales_h=scales[1], scales_w=scales[2])
    needs = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
    if mode in needs and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{needs[mode]}D input")
    if input.ndim in (3, 4, 5) and mode in _INTERP_MODES.split(" | "):
        raise NotImplementedError(f"F.interpolate: mode '{mode}' on {input.ndim}D input is not "
                                  "available in gradviz (nearest and area on 3D/4D input, "
                                  "nearest-exact on 3D/4D/5D, linear, bilinear, bicubic and "
                                  "trilinear are)")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: {_INTERP_MODES} (got {mode})")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated in PyTorch in favour of :func:`interpolate`, which it calls (with its
    warning).

    Example:
        >>> import warnings, gradviz
        >>> import gradviz.nn.functional as F
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     F.upsample(gradviz.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated in PyTorch: ``interpolate(mode='nearest')`` (with its warning).

    Example:
        >>> import warnings, gradviz
        >>> import gradviz.nn.functional as F
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     F.upsample_nearest(gradviz.tensor([[[1.0, 2.0]]]), 3).shape
        gradviz.Size([1, 1, 3])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated in PyTorch: ``interpolate(mode='bilinear', align_corners=True)`` (with its
    warning).

    Example:
        >>> import warnings, gradviz
        >>> import gradviz.nn.functional as F
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     F.upsample_bilinear(gradviz.ones(1, 1, 2, 2), 3).shape
        gradviz.Size([1, 1, 3, 3])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if _is_number(v) else tuple(int(x) for x in v)


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Every sliding ``kernel_size`` block of a (N, C, H, W) or (C, H, W) input as a column:
    (N, C * kh * kw, L) (``Im2ColBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.unfold(gradviz.arange(4.0).view(1, 1, 2, 2), 1)
        tensor([[[0., 1., 2., 3.]]])
    """
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    if input._data.dtype.kind in "iu":  # (bools are unfolded, integers are not)
        _no_int("unfold", input, "im2col_out_cpu")
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    for name, v in (("kernel", k), ("stride", s), ("dilation", d)):
        if min(v) <= 0:
            raise RuntimeError(f"{name} should be greater than zero, but got {name}_height: "
                               f"{v[0]} {name}_width: {v[1]}")
    h, w = input.shape[-2:]
    oh, ow = ((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
              for n, kk, dd, pp, ss in zip((h, w), k, d, p, s))
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as ({oh}, {ow}), but its components must be at "
                           "least one.")
    return dispatch(OPS["im2col"], input, kernel_size=k, dilation=d, padding=p, stride=s)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """The inverse arrangement of :func:`unfold`: each column of (N, C * kh * kw, L) added back
    at its block of a (N, C, *output_size) tensor, overlaps summed (``Col2ImBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.fold(gradviz.ones(1, 4, 4), (3, 3), 2)
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    o, k, d = _pair(output_size), _pair(kernel_size), _pair(dilation)
    p, s = _pair(padding), _pair(stride)
    if input._data.dtype.kind in "iu":  # (bools are folded, integers are not)
        _no_int("fold", input, "col2im_out_cpu")
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    c_k, length = input.shape[-2:]
    if c_k % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c_k} and kernel_size={k}.")
    blocks = [(n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, pp, ss in zip(o, k, d, p,
                                                                                        s)]
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, "
                           f"stride={s}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
    return dispatch(OPS["col2im"], input, output_size=o, kernel_size=k, dilation=d, padding=p,
                    stride=s)


# -- more (nnmore): bilinear, dropout variants -----------------------------------------------------
__all__ += ["bilinear", "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] (+ bias[o])``,
    recorded as PyTorch's C++ computes it: both inputs flattened to 2-D (``ViewBackward0``),
    ``_trilinear`` (``TrilinearBackward0``), the result viewed back, then ``+ bias``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.bilinear(gradviz.ones(1, 2), gradviz.ones(1, 3), gradviz.ones(4, 2, 3))
        tensor([[6., 6., 6., 6.]])
    """
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    out_shape = tuple(input1.shape[:-1]) + (weight.shape[0],)
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    out = dispatch(OPS["_trilinear"], a, weight, b, expand1=(1, 3), expand2=(0,),
                   expand3=(1, 2), sumdim=(2, 3), unroll_dim=1).reshape(out_shape)
    return out if bias is None else _F.add(out, bias)


# SELU's alpha (the negative saturation value), which alpha dropout drops to.
_ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def _dropout_impl(input: Tensor, p: float, train: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:
    """PyTorch's ``_dropout_impl``: a random keep mask of the input's shape, or, for the
    feature forms, of (N, C, 1, ...); plain dropout scales the kept entries by 1 / (1 - p)
    (one ``mul``); alpha dropout keeps SELU's mean and variance: ``input * a * mask + b``
    (``mul`` then an in-place ``add``), dropped entries at ``-alpha * a + b``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input._data.size == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    dt = input._data.dtype
    if p == 1:
        zero = Tensor._make(np.zeros((), dt))
        return _F.mul_(input, zero) if inplace else _F.mul(input, zero)
    _no_int_dropout(input, alpha)
    shape = (tuple(input.shape[:2]) + (1,) * (input.ndim - 2)) if feature else tuple(
        input.shape)
    keep = (_factories.rng().random(shape) < 1 - p).astype(dt)
    if not alpha:
        mask = Tensor._make((keep / (1 - p)).astype(dt))
        return _F.mul_(input, mask) if inplace else _F.mul(input, mask)
    a = 1.0 / math.sqrt((_ALPHA_DROPOUT_ALPHA ** 2 * p + 1) * (1 - p))
    b = Tensor._make(((keep - 1) * (_ALPHA_DROPOUT_ALPHA * a)
                      + _ALPHA_DROPOUT_ALPHA * a * p).astype(dt))
    noise = Tensor._make((keep * a).astype(dt))
    out = _F.mul_(input, noise) if inplace else _F.mul(input, noise)
    return out.add_(b)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability ``p``, scaling the
    others by ``1 / (1 - p)``: a multiplication by a (N, C, 1) mask (``MulBackward0``), an
    unbatched input unsqueezed first and squeezed after (as PyTorch).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.dropout1d(gradviz.ones(2, 3), training=False)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs "
                           "with 1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs).")
    batched = nd == 3
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p``,
    scaling the others by ``1 / (1 - p)``: a multiplication by a (N, C, 1, 1, 1) mask
    (``MulBackward0``), an unbatched input unsqueezed first and squeezed after.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.dropout3d(gradviz.ones(1, 2, 1, 1, 1), training=False).flatten()
        tensor([1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    batched = nd == 5
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
                  ) -> Tensor:
    """Dropout for SELU networks: dropped entries go to SELU's saturation value and the
    result is rescaled so that mean and variance are kept; recorded as ``input * noise``
    (``MulBackward0``) then ``+ b`` in place (``AddBackward0``). Note ``training`` defaults
    to False here, as in PyTorch.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.alpha_dropout(gradviz.ones(3), 0.5)
        tensor([1., 1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """:func:`alpha_dropout` of whole channels: one random draw per (sample, channel).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.feature_alpha_dropout(gradviz.ones(1, 2, 2), 0.5).shape
        gradviz.Size([1, 2, 2])
    """
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


# -- more (nnmore): avg_pool3d, local_response_norm ----------------------------------------------
__all__ += ["avg_pool3d", "max_pool3d", "local_response_norm"]


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of the last three dimensions (``AvgPool3DBackward0``), with
    :func:`avg_pool2d`'s options.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.avg_pool3d(gradviz.arange(8.0).view(1, 1, 2, 2, 2), 2)
        tensor([[[[[3.5000]]]]])
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k = _F._ints("kernel_size", kernel_size, 3, "pooling")
    s = () if stride is None or (not _is_number(stride) and len(stride) == 0) else _F._ints(
        "stride", stride, 3, "pooling")
    p = _F._ints("padding", padding, 3, "pooling")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if 0 in input.shape[-4:]:  # only a batch (of a 5-D input) may be empty; torch's text
        raise RuntimeError("avg_pool3d(): Expected input's non-batch dimensions to have "
                           f"positive length, but input has a shape of {list(input.shape)} "
                           "and non-batch dimension 0 has length zero!")
    _no_bool("avg_pool3d", input, "avg_pool3d_out_frame")
    if min(k + (s or k)) <= 0:
        raise RuntimeError(f"avg_pool3d: kernel_size and stride must be greater than zero, got "
                           f"kernel_size={list(k)}, stride={list(s or k)}")
    for pp, kk in zip(p, k):
        if pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation=1")
    from gradviz.ops._kernels import pool_out_size

    sizes = tuple(input.shape[-3:])
    outs = tuple(pool_out_size(n, kk, ss, pp, 1, ceil_mode)
                 for n, kk, ss, pp in zip(sizes, k, s or k, p))
    if min(outs) < 1:
        c = input.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, sizes))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, outs))}). Output size is too "
                           "small")
    return dispatch(OPS["avg_pool3d"], input, kernel_size=k, stride=s, padding=p,
                    ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)


def _three(what: str, v: Any, verb: str = "must either be") -> tuple[int, ...]:
    """``v`` (an int, or one or three ints) as three ints, with max_pool3d's text."""
    t = (int(v),) if _is_number(v) else tuple(int(x) for x in v)
    if len(t) not in (1, 3):
        raise RuntimeError(f"max_pool3d: {what} {verb} a single int, or a tuple of three ints")
    return t * 3 if len(t) == 1 else t


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """The maximum of each (dilated) window of the last three dimensions
    (``MaxPool3DWithIndicesBackward0``, saving the indices as ``_saved_result1``); with
    ``return_indices`` also the flat position of each maximum in its D*H*W volume.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.max_pool3d(gradviz.arange(8.0).view(1, 1, 2, 2, 2), 2, return_indices=True)
        (tensor([[[[[7.]]]]]), tensor([[[[[7]]]]]))
    """
    k = _three("kernel_size", kernel_size)
    no_stride = stride is None or (not _is_number(stride) and len(stride) == 0)
    s = () if no_stride else _three("stride", stride, "must either be omitted,")
    p, d = _three("padding", padding), _three("dilation", dilation, "must be either")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    from gradviz.ops._kernels import pool_out_size

    sizes, outs = tuple(input.shape[-3:]), []
    for n, kk, ss, pp, dd in zip(sizes, k, s or k, p, d):  # PyTorch's pooling_output_shape
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
        outs.append(pool_out_size(n, kk, ss, pp, dd, ceil_mode))
    for name, short, v in (("kernel size", "k", k), ("stride", "d", s or k),
                           ("dilation", "dilation", d)):
        if min(v) <= 0:
            raise RuntimeError(f"{name} should be greater than zero, but got {short}T: {v[0]} "
                               f"{short}H: {v[1]} {short}W: {v[2]}")
    if 0 in input.shape[-4:]:  # only a batch (of a 5-D input) may be empty; torch's text
        raise RuntimeError("max_pool3d_with_indices_out_cpu_template(): Expected input's "
                           "non-batch dimensions to have positive length, but input has a "
                           f"shape of {list(input.shape)} and non-batch dimension 0 has length "
                           "zero!")
    if min(outs) < 1:
        c = input.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, sizes))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, outs))}). Output size is too "
                           "small")
    _no_bool("max_pool3d", input, "max_pool3d")
    out, indices = dispatch(OPS["max_pool3d_with_indices"], input, kernel_size=k, stride=s,
                            padding=p, dilation=d, ceil_mode=bool(ceil_mode))
    return (out, indices) if return_indices else out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divide each element by ``(k + alpha * mean of the squares of the ``size`` neighbouring
    channels) ** beta``, recorded as PyTorch's Python computes it: the squares padded along
    the channels (``ConstantPadNdBackward0``) and averaged by ``avg_pool2d`` (3-D input) or
    ``avg_pool3d`` over a view with one channel (4-D and up).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.local_response_norm(gradviz.ones(1, 2, 1), 2, alpha=1.0, beta=1.0, k=0.0)
        tensor([[[2.],
                 [1.]]])
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input._data.size == 0:
        return input
    div = _F.mul(input, input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return _F.div(input, div)
