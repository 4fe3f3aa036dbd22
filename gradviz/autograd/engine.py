"""The backward engine: PyTorch's ``Engine::execute`` in a few hundred lines of Python.

Read it top to bottom; ``docs/engine.md`` walks through it with pictures. The algorithm:

1. **Roots.** Each output tensor gives its :func:`gradient_edge` (``grad_fn`` at ``output_nr``,
   or a leaf's ``AccumulateGrad``). With one root the engine starts at that node; with several it
   starts at a ``GraphRoot`` node whose outputs are the root gradients.
2. **Dependencies.** An iterative walk over ``next_functions`` counts, for every reachable node,
   how many edges point at it: a node may run only when all of them have delivered.
3. **What to execute.** With ``inputs=`` (or ``autograd.grad``) only the nodes on a path to those
   inputs run; ``autograd.grad`` *captures* gradients instead of writing ``.grad``.
4. **The ready queue.** A priority queue ordered by ``sequence_nr``, highest first: the node
   created last runs first, and ``AccumulateGrad`` (sequence number 2**64-1) runs as soon as it is
   ready. Each node that has received some but not all gradients keeps an **input buffer**, one
   slot per forward output, where incoming gradients are summed.
5. **Executing a node:** tensor hooks and ``retain_grad``, then node pre-hooks, then the node
   itself (its backward formulas), then its post-hooks; saved values are freed unless
   ``retain_graph``. Each result goes to the input buffer of ``next_functions[i]`` at its
   ``input_nr``; a node whose dependency count reaches zero joins the ready queue.

Gradients travel as NumPy arrays in a plain backward. With ``create_graph=True`` the pass runs
with recording on and gradients are tensors, so the backward computation is itself a graph.
Every step is reported to the listeners in :mod:`gradviz.autograd.events` when any exist.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from heapq import heappop, heappush, heappushpop
from typing import Any

import numpy as np

from gradviz.autograd.events import _listeners, emit
from gradviz.autograd.grad_mode import set_grad_enabled
from gradviz.autograd.graph import AccumulateGrad, Edge, GraphRoot, Node, gradient_edge
from gradviz.tensor import Tensor, _unwrap_grad, _wrap_grad

__all__ = ["run_backward", "compute_dependencies"]


def compute_dependencies(root: Node) -> dict[Node, int]:
    """For every node reachable from ``root``: how many edges point at it (iteratively)."""
    deps: dict[Node, int] = {}
    stack = [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            # The graph is acyclic, so the root is never reached again: a node seen for the
            # first time is exactly one not yet in deps (no separate visited set).
            count = deps.get(nxt)
            if count is None:
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = count + 1
    return deps


def _init_to_execute(root: Node, targets: set[Node], captures: dict[Node, list]) -> set[Node]:
    """The nodes that must run to reach ``targets`` or ``captures``: those with a path to one.

    An iterative post-order walk: a node is needed once any of its children is needed, a target
    or a capture point (PyTorch's ``GraphTask::init_to_execute``)."""
    needed = set(targets)
    reach = needed | set(captures)
    visited = {root}
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, i = stack[-1]
        nexts = node.next_functions
        if i < len(nexts):
            stack[-1] = (node, i + 1)
            child = nexts[i][0]
            if child is not None and child not in visited:
                visited.add(child)
                stack.append((child, 0))
            continue
        stack.pop()
        if node not in needed and any(c in reach for c, _ in nexts if c is not None):
            needed.add(node)
            reach.add(node)
    return needed


def run_backward(roots: Sequence[Tensor], grad_roots: Sequence[Any], keep_graph: bool,
                 create_graph: bool, inputs: Sequence[Tensor] = (),
                 allow_unused: bool = True, accumulate_grad: bool = True) -> tuple[Any, ...]:
    """Run one backward pass (what ``Tensor.backward`` and ``autograd.grad`` both call).

    Args:
        roots: the tensors to differentiate; each must require grad.
        grad_roots: their gradients, already checked for shape (tensors or arrays).
        keep_graph: keep saved values (``retain_graph``).
        create_graph: record the pass so that its results can be differentiated.
        inputs: with ``accumulate_grad``, the only tensors whose ``.grad`` is written;
            without it, the tensors whose gradients are captured and returned.
        allow_unused: without it, an input that received no gradient is an error.
        accumulate_grad: write ``.grad`` (``backward``) or capture (``autograd.grad``).

    Returns:
        The captured gradients, one per input, for ``accumulate_grad=False``; else ``()``.
    """
    root_edges: list[Edge] = []
    for i, t in enumerate(roots):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        root_edges.append(gradient_edge(t))
    grads = [_as_value(g, create_graph) for g in grad_roots]

    # Where the wanted gradients arrive (PyTorch's output_edges).
    targets: set[Node] = set()
    captures: dict[Node, list[tuple[int, int]]] = {}
    for idx, t in enumerate(inputs):
        edge = gradient_edge(t)
        if accumulate_grad:
            # As PyTorch: a non-leaf input gets its .grad through retain_grad (a no-op on a
            # leaf), and an input that does not require grad fails with retain_grad's error.
            t.retain_grad()
            targets.add(edge.function)
        else:
            captures.setdefault(edge.function, []).append((edge.input_nr, idx))
    captured: list[Any] = [None] * len(inputs)

    if len(root_edges) == 1:
        graph_root, nr = root_edges[0]
        buffer = [None] * graph_root.num_outputs
        buffer[nr] = grads[0]
    else:
        graph_root, buffer = GraphRoot(tuple(root_edges), grads), []
    deps = compute_dependencies(graph_root)
    needed = _init_to_execute(graph_root, targets, captures) if inputs else None
    if _listeners:
        emit("backward_begin", {"engine": "pytorch", "roots": tuple(roots), "grad_roots": grads,
                                "retain_graph": keep_graph, "create_graph": create_graph,
                                "inputs": tuple(inputs), "accumulate_grad": accumulate_grad,
                                "graph_root": graph_root})
        emit("dependencies", {"counts": dict(deps), "graph_root": graph_root})

    # The ready queue: (-sequence_nr, arrival, node, input buffer). Arrival breaks ties FIFO.
    ready: list[tuple[int, int, Node, list]] = []
    not_ready: dict[Node, list] = {}
    arrivals = 1
    task: tuple[int, int, Node, list] | None = (-graph_root._seq, 0, graph_root, buffer)
    if _listeners:
        emit("enqueue", {"node": graph_root, "ready": [graph_root]})
    node: Node | None = None
    # NOTE [perf]: the pass frees what it no longer needs by reference counting and makes no
    # cycles of its own, so the cyclic collector is paused: otherwise the many short-lived
    # buffers it allocates trigger collections that each walk the whole (large) graph.
    pause_gc = gc.isenabled()
    if pause_gc:
        gc.disable()
    try:
        # PyTorch computes 1/0 = inf silently; so do the formulas here (no NumPy warnings).
        with set_grad_enabled(create_graph), np.errstate(all="ignore"):
            while task is not None:
                _, _, node, buf = task
                is_leaf = type(node) is AccumulateGrad
                # NOTE [perf]: most nodes have no hooks; test before calling.
                if is_leaf or node._extra is not None:
                    buf = _call_pre_hooks(node, buf, create_graph)
                if needed is not None:
                    for input_nr, idx in captures.get(node, ()):
                        captured[idx] = buf[input_nr]
                    if node not in needed:
                        task = heappop(ready) if ready else None
                        continue
                outputs: tuple = () if is_leaf else node.apply(buf, create_graph)
                if _listeners:
                    emit("execute", {"node": node, "grad_outputs": list(buf),
                                     "grad_inputs": list(outputs)})
                if is_leaf:
                    _accumulate_grad(node, buf, create_graph)
                if node._extra is not None and node._extra.post_hooks:
                    outputs = _call_post_hooks(node, outputs, buf, create_graph)
                # After the post-hooks, which may still read saved values (as in PyTorch).
                if not keep_graph and node.release_variables() and _listeners:
                    emit("release_saved", {"node": node})
                newly = None  # the last node made ready by this one, not yet in the queue
                for (nxt, input_nr), grad in zip(node.next_functions, outputs):
                    if nxt is None:
                        continue
                    left = deps[nxt] - 1
                    deps[nxt] = left
                    if needed is not None and nxt not in needed and nxt not in captures:
                        continue
                    # NOTE [perf]: a node with one incoming edge (most of them) gets its input
                    # buffer when it becomes ready and never enters not_ready.
                    nbuf = None
                    if not_ready:  # NOTE [perf]: empty along a chain: no lookups then
                        nbuf = not_ready.pop(nxt, None) if left == 0 else not_ready.get(nxt)
                    if nbuf is None:
                        if len(nxt._out_meta) == 1:
                            nbuf = [grad]
                        else:
                            nbuf = [None] * len(nxt._out_meta)
                            nbuf[input_nr] = grad
                        if left:
                            not_ready[nxt] = nbuf
                    elif grad is not None:
                        old = nbuf[input_nr]
                        nbuf[input_nr] = grad if old is None else old + grad
                    if _listeners:
                        emit("accumulate", {"node": nxt, "input_nr": input_nr, "grad": grad,
                                            "buffer": nbuf[input_nr], "from": node,
                                            "remaining": left})
                    if left == 0:
                        if newly is not None:
                            heappush(ready, newly)
                        newly = (-nxt._seq, arrivals, nxt, nbuf)
                        arrivals += 1
                        if _listeners:
                            emit("enqueue", {"node": nxt, "ready": [
                                e[2] for e in sorted([*ready, newly])]})
                grad = None  # the loop variable must not keep a gradient alive: see _owned
                # NOTE [perf]: in a chain the newly ready node is the only one: heappushpop
                # hands it straight back without touching the heap.
                if newly is not None:
                    task = heappushpop(ready, newly)
                else:
                    task = heappop(ready) if ready else None
            node = None
    except BaseException as exc:
        if _listeners:
            emit("error", {"error": exc, "node": node})
        raise
    finally:
        if pause_gc:
            gc.enable()
    if _listeners:
        emit("backward_end", {"engine": "pytorch"})

    if accumulate_grad:
        return ()
    for i, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been "
                               "used in the graph. Set allow_unused=True if this is the desired "
                               "behavior.")
    return tuple(None if g is None else (g if create_graph else Tensor._make(np.array(g)))
                 for g in captured)


def _as_value(g: Any, create_graph: bool) -> Any:
    """A root gradient in the engine's representation: a tensor or an array."""
    if create_graph:
        return _wrap_grad(g)
    return _unwrap_grad(g)


def _from_hook(result: Any, like: Any, create_graph: bool, what: str) -> Any:
    """Take a hook's returned gradient, checking it keeps the shape."""
    if not isinstance(result, Tensor):
        raise TypeError(f"{what} must return None or a Tensor, got {type(result).__name__}")
    if like is not None and result.shape != np.shape(like):
        raise RuntimeError(f"hook '{what}' has changed the size of value: expected "
                           f"{list(np.shape(like))}, got {list(result.shape)}")
    return result if create_graph else result._data


def _call_pre_hooks(node: Node, buf: list, create_graph: bool) -> list:
    """Tensor hooks, then retain_grad, then node pre-hooks: PyTorch's order."""
    for nr, fn in node._tensor_hooks():
        g = buf[nr]
        if g is None:
            continue
        res = fn(_wrap_grad(g))
        if _listeners:
            emit("hook", {"kind": "tensor", "node": node, "fn": fn, "input_nr": nr})
        if res is not None:
            buf[nr] = _from_hook(res, g, create_graph, getattr(fn, "__name__", "hook"))
    extra = node._extra
    if extra is not None and extra.retains_grad_hooks:
        for nr, ref in extra.retains_grad_hooks.items():
            t = ref()
            g = buf[nr]
            if t is not None and g is not None:
                _store_retained(t, g, create_graph)
                if _listeners:
                    emit("hook", {"kind": "retain_grad", "node": node, "tensor": t})
    if extra is not None and extra.pre_hooks:
        for fn in list(extra.pre_hooks.values()):
            res = fn(tuple(None if g is None else _wrap_grad(g) for g in buf))
            if _listeners:
                emit("hook", {"kind": "prehook", "node": node, "fn": fn})
            if res is not None:
                buf = [None if r is None else _from_hook(r, g, create_graph, "prehook")
                       for r, g in zip(res, buf)]
    return buf


def _call_post_hooks(node: Node, outputs: tuple, buf: list, create_graph: bool) -> tuple:
    grad_outputs = tuple(None if g is None else _wrap_grad(g) for g in buf)
    for fn in list(node._extra.post_hooks.values()):
        grad_inputs = tuple(None if g is None else _wrap_grad(g) for g in outputs)
        res = fn(grad_inputs, grad_outputs)
        if _listeners:
            emit("hook", {"kind": "posthook", "node": node, "fn": fn})
        if res is not None:
            outputs = tuple(None if r is None else _from_hook(r, g, create_graph, "hook")
                            for r, g in zip(res, outputs))
    return outputs


def _store_retained(t: Tensor, g: Any, create_graph: bool) -> None:
    """retain_grad: the first gradient is copied into ``.grad``; later ones are added."""
    if create_graph:
        t.grad = g.clone() if t.grad is None else t.grad + g
    else:
        t.grad = Tensor._make(np.array(g)) if t.grad is None else Tensor._make(t.grad._data + g)


def _owned(grad: Any, like: np.ndarray) -> bool:
    """Whether ``grad`` may become ``.grad`` without a copy: nobody but the engine holds it.

    PyTorch's ``AccumulateGrad`` "steals" a new gradient whose use count shows that only the
    engine refers to it and whose layout matches the variable's; so does this. The engine holds
    ``grad`` twice (the node's input buffer and the caller's local variable); a view counts as
    owned when its base is held by the view alone. A gradient that a hook, a user's tensor,
    another branch's buffer or a tracer still holds has more references, and is copied.
    """
    if (sys.getrefcount(grad) > _HELD_ONCE + 1 or type(grad) is not np.ndarray
            or grad.dtype != like.dtype or grad.shape != like.shape
            or not grad.flags.writeable
            or grad.flags.c_contiguous != like.flags.c_contiguous):
        return False
    base = grad.base  # held by the view and by this local: the same count as above
    # A view must cover all of its base (a transpose, a reshape), or .grad would pin more memory.
    return base is None or (type(base) is np.ndarray and base.base is None
                            and base.size == grad.size and sys.getrefcount(base) <= _HELD_ONCE)


def _refcount_in_callee(obj: Any) -> int:
    return sys.getrefcount(obj)


def _held_once() -> int:
    """What ``sys.getrefcount`` reports inside a function for an object that exactly one
    other variable holds (measured, as the number differs between Python versions)."""
    probe = np.empty(1)
    return _refcount_in_callee(probe)


_HELD_ONCE = _held_once()


def _accumulate_grad(node: AccumulateGrad, buf: list, create_graph: bool) -> None:
    """What running ``AccumulateGrad`` means: add the gradient in ``buf`` into ``.grad``.

    The first gradient becomes ``.grad`` as it is when nobody else holds it (see
    :func:`_owned`), else as a copy; later ones are added in place, or out of place under
    ``create_graph`` so that ``.grad`` stays differentiable.
    """
    grad = buf[0]
    if grad is None:
        return
    var = node.variable
    before = var.grad
    # Listeners need the value before an in-place add overwrites it.
    shown_before = before if before is None or not _listeners else Tensor._make(
        before._data.copy())
    if create_graph:
        # PyTorch copies into a fresh tensor (clone_obey_contract): .grad shows CopyBackwards.
        var.grad = (Tensor._make(np.empty_like(grad._data)).copy_(grad) if before is None
                    else before + grad)
    elif before is None:
        # NOTE [perf]: no copy of a gradient nobody else holds (a weight's gradient in a
        # training step): PyTorch's "steal" rule.
        var.grad = Tensor._make(grad if _owned(grad, var._data)
                                else np.array(grad, dtype=var._data.dtype))
    elif before.requires_grad:
        var.grad = Tensor._make(before._data + grad)
    else:
        np.add(before._data, grad, out=before._data, casting="unsafe")
        before._version_counter.version += 1
    if _listeners:
        emit("leaf_grad", {"node": node, "tensor": var, "before": shown_before,
                           "after": var.grad})
    extra = var._extra
    if extra is not None and extra.post_acc_hooks:
        for fn in list(extra.post_acc_hooks.values()):
            fn(var)
            if _listeners:
                emit("hook", {"kind": "post_accumulate_grad", "node": node, "fn": fn})
