"""``register_multi_grad_hook``: one hook about several tensors, called once per backward pass
(PyTorch's ``torch.autograd.graph.register_multi_grad_hook``), and what it asks the engine: which
pass is running in this thread and whether it will run a node (``will_engine_execute_node``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gradviz.autograd.node import Node, edge_pair

if TYPE_CHECKING:
    from gradviz.tensor import Tensor

__all__ = ["register_multi_grad_hook", "will_engine_execute_node", "RUNNING"]


# -- what the engine is running now, per thread ---------------------------------------------------
class _Running(threading.local):
    """This thread's engine at work: ``tasks``, the backward passes running (innermost last,
    each ``(task, graph_root)``), so that a hook can ask which nodes its pass will run; and
    ``node``, the node whose backward runs. Per thread, as PyTorch's: two threads may each be
    inside a backward pass, and a hook must see its own."""

    def __init__(self) -> None:
        self.tasks: list[tuple[Any, Node]] = []
        self.node: Node | None = None


RUNNING = _Running()


# -- register_multi_grad_hook ------------------------------------------------------------------


def will_engine_execute_node(node: Node) -> bool:
    """Whether the backward pass running now will run ``node`` (PyTorch's
    ``torch._C._will_engine_execute_node``): it is reachable from the root and, when only some
    gradients are wanted (``inputs=``), needed for them."""
    tasks = RUNNING.tasks
    if not tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the "
                           "backward pass")
    task, root = tasks[-1]
    if task.exec_info is None:
        return node is root or node in task.dependencies
    if node in task.captures and all(n is None for n, _ in node.next_functions):
        # A leaf's gradient that autograd.grad captures (PyTorch's topological_nr 0).
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    return bool(task.exec_info.get(node)) or node in task.captures


class _MultiHandle:
    """The handle of :func:`register_multi_grad_hook`: ``remove()`` removes every tensor hook."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` once per backward pass about several tensors (PyTorch's
    ``torch.autograd.graph.register_multi_grad_hook``).

    ``mode="all"``: after the gradients of every tensor the pass reaches were computed, call
    ``fn(grads)`` with one entry per tensor (None for those it did not reach or does not need).
    ``mode="any"``: call ``fn(grad)`` with the first of them to be computed.

    Example:
        >>> import gradviz
        >>> a = gradviz.ones(2, requires_grad=True); b = gradviz.ones(2, requires_grad=True)
        >>> c = a * b; d = a * b
        >>> h = register_multi_grad_hook((a, b, c, d), lambda g: print([x is not None for x in g]))
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
        >>> c.sum().backward(inputs=(a,))
        [True, False, True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        seen_tasks: set[int] = set()

        def first_grad(grad: Tensor) -> None:
            task = _current_task()
            if id(task) in seen_tasks:
                return
            seen_tasks.add(id(task))
            _forget_when_done(task, seen_tasks)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_grad) for t in tensors
                                  if t.requires_grad))

    nodes = []
    for t in tensors:  # each tensor's node first, before any hook is registered, as in torch
        if not t.requires_grad:
            raise AssertionError("Expected gradient function to be set")
        nodes.append(edge_pair(t)[0])
    pending: dict[int, list] = {}  # id(task) -> [gradients still to come, gradients so far]

    def make_hook(i: int) -> Callable:
        def hook(grad: Tensor) -> None:
            task = _current_task()
            state = pending.get(id(task))
            if state is None:
                expected = sum(will_engine_execute_node(n) for n in nodes)
                state = pending[id(task)] = [expected, [None] * len(tensors)]
                _forget_when_done(task, pending)
            state[1][i] = grad
            state[0] -= 1
            if state[0] == 0:
                del pending[id(task)]
                fn(tuple(state[1]))

        return hook

    return _MultiHandle(tuple(t.register_hook(make_hook(i)) for i, t in enumerate(tensors)))


def _current_task() -> Any:
    tasks = RUNNING.tasks
    if not tasks:
        raise AssertionError("expected this hook to be called inside a backward call")
    return tasks[-1][0]


def _forget_when_done(task: Any, table: set | dict) -> None:
    # A pass that stops early (an error) must not leave its entry behind for a later pass that
    # reuses the id: the engine calls these when the pass ends.
    key = id(task)
    task.on_done.append(lambda: table.discard(key) if isinstance(table, set)
                        else table.pop(key, None))
