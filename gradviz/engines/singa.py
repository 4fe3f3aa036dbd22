"""SINGA's backward: count dependencies, then *yield* each gradient as soon as it is final.

A model of ``singa.autograd.backward`` (``python/singa/autograd.py``) run over gradviz's graph.
Read it top to bottom; ``docs/engines.md`` puts it next to the PyTorch and MXNet engines.

SINGA's vocabulary, and what it is here:

==================  ============================================================================
SINGA               gradviz
==================  ============================================================================
``op``              a backward :class:`~gradviz.autograd.graph.Node` (``y.creator`` is
                    ``y.grad_fn``)
``op.src``          ``node.next_functions``: ``(src_op, y_idx)`` pairs
``x_id``            the tensor an edge carries, named here ``(src_op, y_idx)``: output
                    ``y_idx`` of ``src_op``
``Dummy``           ``AccumulateGrad``: a leaf; it never runs. A leaf that requires grad is SINGA's
                    ``stores_grad`` tensor, whose gradient is yielded
``op_dep``          how many edges point at each node (PyTorch's dependency count)
``tensor_dep``      how many edges carry each ``(src_op, y_idx)`` tensor
``ready``           a ``deque`` of ``(op, dys)``, popped from the right: last in, first out
``not_ready``       op -> one intermediate gradient per output, summed over the op's consumers
==================  ============================================================================

The algorithm:

1. ``infer_dependency(y.creator)``: one iterative walk counts ``op_dep`` and ``tensor_dep``.
2. ``ready = deque([(y.creator, (dy,))])``; then, while ``ready``: ``op, dys = ready.pop()``, run
   ``op``'s backward, and for every ``(src_op, y_idx)`` it feeds add the gradient into
   ``not_ready[src_op][y_idx]`` and decrement ``op_dep[src_op]`` and ``tensor_dep[x_id]``.
3. When a leaf's ``tensor_dep`` reaches zero its gradient is final: **yield** ``(leaf, grad)``
   right there, while other ops are still waiting. When ``op_dep[src_op]`` reaches zero,
   ``src_op`` joins ``ready``.

Differences from the source, on purpose: gradients are summed out of place (SINGA adds in place,
``dxs_[y_idx] += dx``, which can write into an array another op still holds); a yielded gradient
is a fresh copy; no gradient is yielded for a leaf that received none (a custom ``Function`` may
return ``None``); tensor hooks and ``retain_grad`` are PyTorch features and are not run. Like
SINGA's, the checks on ``y`` run when iteration starts (``backward`` is a generator).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from gradviz.autograd.events import observer
from gradviz.autograd.grad_mode import set_grad_enabled
from gradviz.autograd.graph import AccumulateGrad, Node, gradient_edge
from gradviz.tensor import Tensor

__all__ = ["backward", "gradients", "infer_dependency", "GradientDict"]

# SINGA's x_id: which output of which op a gradient belongs to.
TensorKey = tuple[Node, int]


def infer_dependency(op: Node) -> tuple[Counter[Node], Counter[TensorKey]]:
    """Count, for every op below ``op``, how many edges point at it and at each of its outputs.

    SINGA's ``infer_dependency``: an iterative walk (a deque used as a stack); ``op`` itself is
    not counted.

    Args:
        op: the last op, usually ``loss.grad_fn``.

    Returns:
        ``(op_dep, tensor_dep)``: node -> number of edges into it, and ``(node, output index)``
        -> number of edges carrying that output.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = (x * x).sum()
        >>> op_dep, tensor_dep = infer_dependency(y.grad_fn)
        >>> sorted(type(n).__name__ + f"={c}" for n, c in op_dep.items())
        ['AccumulateGrad=2', 'MulBackward0=1']
    """
    op_count: Counter[Node] = Counter()
    tensor_count: Counter[TensorKey] = Counter()
    queue = deque([op])
    while queue:
        cur_op = queue.pop()
        for src_op, y_idx in cur_op.next_functions:
            if src_op is None:
                continue  # an input that needs no gradient: SINGA's Dummy without stores_grad
            if src_op not in op_count:
                op_count[src_op] = 1
                queue.append(src_op)
            else:
                op_count[src_op] += 1
            tensor_count[(src_op, y_idx)] += 1
    return op_count, tensor_count


def backward(y: Tensor, dy: Any = None, *, retain_graph: bool = False
             ) -> Iterator[tuple[Tensor, Tensor]]:
    """Run backward from ``y``, yielding ``(leaf, gradient)`` as soon as each gradient is final.

    ``.grad`` is not written: the caller gets each pair while the pass is still running (SINGA's
    optimizers update a parameter right away). Leaves that require grad are SINGA's
    ``stores_grad`` tensors.

    Args:
        y: a tensor holding a single value, usually the loss.
        dy: the gradient of the objective with respect to ``y``: ``None`` (1.0), a number, or a
            single-value tensor.
        retain_graph: keep saved values, so that the graph can be run through again. By default
            each op frees them once it ran, as SINGA's ``del op`` does.

    Yields:
        ``(leaf, gradient)`` pairs, in the order the gradients became final.

    Raises:
        AssertionError: ``y`` is not a tensor, or holds more than one value (SINGA's messages).

    Example:
        >>> import gradviz
        >>> w = gradviz.tensor([1.0, 2.0], requires_grad=True)
        >>> loss = (w * w).sum()
        >>> for p, g in backward(loss):
        ...     with gradviz.no_grad():
        ...         p -= 0.1 * g      # an SGD step while the pass runs
        >>> w
        tensor([0.8000, 1.6000], requires_grad=True)
    """
    if not isinstance(y, Tensor):
        raise AssertionError("wrong input type.")
    creator, y_nr = gradient_edge(y) if y.requires_grad else (None, 0)
    op_dep, tensor_dep = infer_dependency(creator) if creator is not None else (Counter(),
                                                                                Counter())
    if y.numel() != 1:
        raise AssertionError(f"y must be a Tensor with a single value; size of y is {y.numel()}")

    # By default dy is 1.0, in y's dtype and shape.
    dt = y._data.dtype
    if dy is None:
        dy = np.ones(y.shape, dt)
    elif isinstance(dy, Tensor):
        if dy.numel() != 1:
            raise AssertionError(f"dy must hold a single value, like y; size of dy is "
                                 f"{dy.numel()}")
        dy = dy._data.reshape(y.shape).astype(dt)
    else:
        dy = np.full(y.shape, float(dy), dt)
    if creator is None:
        return  # y is no op's output and stores no gradient: nothing to do, as in SINGA

    obs = observer()  # who watches this pass (one that does nothing when nobody does)
    obs.backward_begin("singa", (y,), [dy], retain_graph, False, (), False, creator)
    obs.dependencies(op_dep, creator, tensor_counts=tensor_dep)

    if isinstance(creator, AccumulateGrad):  # y is itself a parameter: its gradient is dy
        obs.leaf_grad(creator, y, None, dy, {"yielded": True})
        obs.backward_end("singa")
        yield y, _grad_tensor(y, dy)
        return

    # ready is a queue of (op, dy list); not_ready maps op -> one intermediate dy per output.
    first = [None] * creator.num_outputs
    first[y_nr] = dy
    ready: deque[tuple[Node, list]] = deque([(creator, first)])
    not_ready: dict[Node, list] = {}
    pushed = 0  # pushes so far, for the enqueue event's priority
    obs.enqueue(creator, 0)

    op: Node | None = None
    try:
        while ready:
            op, dys = ready.pop()  # the right end: last in, first out
            with set_grad_enabled(False):
                dxs = op.apply(list(dys), False)
            obs.execute(op, dys, dxs)
            if not retain_graph and op.release_variables():
                obs.release_saved(op)
            if len(op.next_functions) != len(dxs):
                raise AssertionError(f"the number of src ops (={len(op.next_functions)}) and dx "
                                     f"(={len(dxs)}) not match")
            for (src_op, y_idx), dx in zip(op.next_functions, dxs, strict=True):
                if src_op is None:
                    continue
                # not_ready[src_op][y_idx]: the gradient of src_op's y_idx-th output, summed over
                # every op that used that output.
                dxs_ = not_ready.get(src_op)
                if dxs_ is None:
                    dxs_ = not_ready[src_op] = [None] * src_op.num_outputs
                if dx is not None:
                    dxs_[y_idx] = dx if dxs_[y_idx] is None else dxs_[y_idx] + dx
                op_dep[src_op] -= 1
                x_id = (src_op, y_idx)
                tensor_dep[x_id] -= 1
                obs.accumulate(src_op, y_idx, dx, dxs_[y_idx], op, op_dep[src_op],
                               {"tensor_remaining": tensor_dep[x_id]})
                if isinstance(src_op, AccumulateGrad) and tensor_dep[x_id] == 0:
                    # The parameter's gradient is final: hand it out now, mid-pass.
                    g = dxs_[y_idx]
                    if g is not None:
                        param = src_op.variable
                        obs.leaf_grad(src_op, param, None, g, {"yielded": True})
                        yield param, _grad_tensor(param, g)
                if op_dep[src_op] == 0:
                    if not isinstance(src_op, AccumulateGrad):  # a Dummy never runs backward
                        ready.append((src_op, dxs_))
                        # A stack: the newest runs first (lowest priority).
                        pushed += 1
                        obs.enqueue(src_op, -pushed)
                    del not_ready[src_op]
            del op, dys, dxs  # drop this op's gradients now, as SINGA's `del op`
            op = None
    except GeneratorExit:
        # The caller stopped iterating (a `break`): the pass ends here, unfinished.
        obs.backward_end("singa", {"stopped_early": True})
        raise
    except BaseException as exc:
        obs.error(exc, op)
        raise
    obs.backward_end("singa")


def _grad_tensor(param: Tensor, g: Any) -> Tensor:
    """A yielded gradient: a fresh copy in the parameter's dtype, named ``<name>_g`` as in SINGA."""
    out = Tensor._make(np.array(g, dtype=param._data.dtype))
    if param.name:
        out.name = f"{param.name}_g"
    return out


class GradientDict(Mapping):
    """``{parameter: gradient}`` keyed by tensor *identity*.

    ``Tensor.__eq__`` compares elementwise, so tensors are poor keys for code that compares keys;
    this mapping looks a key up by ``id`` only, and keeps the key alive (so the id stays valid).

    Example:
        >>> import gradviz
        >>> a, b = gradviz.ones(2, requires_grad=True), gradviz.ones(2, requires_grad=True)
        >>> d = GradientDict([(a, a * 2)])
        >>> a in d, b in d, len(d)
        (True, False, 1)
    """

    def __init__(self, pairs: Any = ()) -> None:
        self._items: dict[int, tuple[Tensor, Tensor]] = {}
        for key, value in pairs:
            self._items[id(key)] = (key, value)

    def __getitem__(self, key: Tensor) -> Tensor:
        try:
            return self._items[id(key)][1]
        except KeyError:
            raise KeyError(f"no gradient for this tensor (shape {list(np.shape(key))})") from None

    def __contains__(self, key: object) -> bool:
        return id(key) in self._items

    def __iter__(self) -> Iterator[Tensor]:
        return (k for k, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k.name or 'tensor'}{list(k.shape)}: {v!r}"
                          for k, v in self._items.values())
        return f"GradientDict({{{inner}}})"


def gradients(y: Tensor, dy: Any = None, *, retain_graph: bool = False) -> GradientDict:
    """Run :func:`backward` to the end and collect every yielded pair (SINGA's ``gradients``).

    Returns a :class:`GradientDict`, keyed by tensor identity (a plain dict would also look
    tensors up by identity, but would compare them elementwise in ``==`` between dicts).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        >>> gradients((x ** 2).sum())[x]
        tensor([2., 4.])
    """
    return GradientDict(backward(y, dy, retain_graph=retain_graph))
