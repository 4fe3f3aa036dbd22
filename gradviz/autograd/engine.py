"""The backward engine: PyTorch's ``Engine::execute`` (``torch/csrc/autograd/engine.cpp``).

Read it top to bottom (``docs/engine.md`` walks through it): the types a pass works with, then
:func:`run_backward` and one function per step in the order they run. Gradients travel as NumPy
arrays; under ``create_graph`` as tensors, with recording on, so that the pass is itself a graph.
Every step is told to an :class:`~gradviz.autograd.events.Observer`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from itertools import count
from typing import Any

import numpy as np

from gradviz.autograd import events
from gradviz.autograd.accumulate_grad import copied_grad, retain_grad
from gradviz.autograd.grad_mode import _state, set_grad_enabled
from gradviz.autograd.hooks import checked_hook_result, checked_hook_results
from gradviz.autograd.multi_grad_hook import RUNNING
from gradviz.autograd.node import Edge, GradientEdge, GraphRoot, Node, NodeHooks, input_edge
from gradviz.tensor import Tensor, unwrap_grad, wrap_grad

__all__ = ["run_backward", "compute_dependencies", "init_to_execute", "InputBuffer", "ReadyQueue",
           "GraphTask", "execute", "current_node", "queue_callback", "exec_post_processing",
           "evaluate_function", "call_function"]


class InputBuffer(list):
    """The gradients a node receives: one slot per forward output, summed as they arrive."""

    __slots__ = ()

    def add(self, input_nr: int, grad: Any) -> None:
        """Add ``grad`` (None: nothing flowed) into slot ``input_nr``.

        Example:
            >>> buf = InputBuffer([None, None]); buf.add(1, 2.0); buf.add(1, 3.0); buf
            [None, 5.0]
        """
        if grad is not None:
            old = self[input_nr]
            self[input_nr] = grad if old is None else old + grad


class ReadyQueue(list):
    """The nodes ready to run with their inputs: highest ``sequence_nr`` first (the node created
    last; ``AccumulateGrad`` reports 2**64-1), first come first served among equals."""

    __slots__ = ("_arrivals",)

    def __init__(self) -> None:
        super().__init__()
        self._arrivals = count()

    def push(self, node: Node, inputs: InputBuffer) -> int:
        """Queue ``node`` with its inputs; returns its :meth:`priority` (what observers are
        told)."""
        priority = self.priority(node)
        heappush(self, (priority, next(self._arrivals), node, inputs))
        return priority

    @staticmethod
    def priority(node: Node) -> int:
        """What the queue orders by, lowest first: ``-sequence_nr`` (ties: first come)."""
        return -node._seq

    def pop(self) -> tuple[Node, InputBuffer]:  # type: ignore[override]
        _, _, node, inputs = heappop(self)
        return node, inputs

    def nodes(self) -> list[Node]:
        """The queued nodes in the order they will run."""
        return [entry[2] for entry in sorted(self)]


class GraphTask:
    """What one backward pass knows (PyTorch's ``GraphTask``): its options, each node's
    remaining dependencies, the input buffers of nodes not ready yet, what to capture, and the
    callbacks to run when it has finished."""

    __slots__ = ("keep_graph", "create_graph", "observer", "dependencies", "not_ready", "ready",
                 "exec_info", "captures", "captured_vars", "final_callbacks", "on_done")

    def __init__(self, keep_graph: bool, create_graph: bool, observer: events.Observer) -> None:
        self.keep_graph, self.create_graph, self.observer = keep_graph, create_graph, observer
        self.dependencies: dict[Node, int] = {}
        self.not_ready: dict[Node, InputBuffer] = {}
        self.ready = ReadyQueue()
        self.exec_info: dict[Node, bool] | None = None  # node -> needed; None: all nodes run
        self.captures: dict[Node, list[tuple[int, int]]] = {}  # node -> (input_nr, index)
        self.captured_vars: list[Any] = []
        self.final_callbacks: list[Callable[[], Any]] = []  # queue_callback's, run at the end
        self.on_done: list = []  # called when the pass ends (register_multi_grad_hook's state)


def run_backward(roots: Sequence[Tensor | GradientEdge], grad_roots: Sequence[Any],
                 keep_graph: bool, create_graph: bool,
                 inputs: Sequence[Tensor | GradientEdge] = (), allow_unused: bool = True,
                 accumulate_grad: bool = True, observer: events.Observer | None = None
                 ) -> tuple[Any, ...]:
    """One backward pass, what ``Tensor.backward`` and ``autograd.grad`` call. ``roots`` and
    ``inputs``: tensors or GradientEdges. ``grad_roots``: the roots' gradients, already
    checked; ``keep_graph``: ``retain_graph``. With
    ``accumulate_grad`` it writes ``.grad`` (of ``inputs`` only, if given) and returns ``()``;
    else it returns the gradients of ``inputs`` (an unused one is an error unless
    ``allow_unused``). ``observer`` defaults to :func:`events.observer`.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        >>> run_backward([(x * x).sum()], [gradviz.tensor(1.0)], False, False, [x],
        ...              accumulate_grad=False)
        (tensor([2., 4.]),)
    """
    edges = []
    for i, t in enumerate(roots):
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        edges.append(input_edge(t))  # a GradientEdge root: its gradient starts there
    grads = [wrap_grad(g) if create_graph else unwrap_grad(g) for g in grad_roots]
    if len(edges) == 1:
        graph_root, input_nr = edges[0]
        root_inputs = InputBuffer((None,) * graph_root.num_outputs)
        root_inputs.add(input_nr, grads[0])
    else:
        graph_root, root_inputs = GraphRoot(tuple(edges), grads), InputBuffer()
    task = GraphTask(keep_graph, create_graph, observer or events.observer())
    task.dependencies = compute_dependencies(graph_root)
    if inputs:
        if accumulate_grad:
            # A non-leaf input gets its .grad through retain_grad, as in PyTorch (which also
            # gives retain_grad's error for an input that does not require grad).
            for t in inputs:
                if isinstance(t, Tensor):
                    t.retain_grad()
        task.exec_info = init_to_execute(graph_root, [input_edge(t) for t in inputs],
                                         accumulate_grad, task.captures)
        task.captured_vars = [None] * len(inputs)
    task.observer.backward_begin("pytorch", tuple(roots), grads, keep_graph, create_graph,
                                 tuple(inputs), accumulate_grad, graph_root)
    task.observer.dependencies(task.dependencies, graph_root)
    execute(task, graph_root, root_inputs)
    task.observer.backward_end("pytorch")
    if accumulate_grad:
        return ()
    for i, g in enumerate(task.captured_vars):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been "
                               "used in the graph. Set allow_unused=True if this is the desired "
                               "behavior.")
    return tuple(None if g is None else (g if create_graph else Tensor._make(copied_grad(g)))
                 for g in task.captured_vars)


def compute_dependencies(graph_root: Node) -> dict[Node, int]:
    """For every node reachable from ``graph_root``: how many edges point at it. A node runs
    only once all of them have delivered. Iterative (an explicit stack), as everywhere here.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = (x * x).sum()
        >>> sorted(compute_dependencies(y.grad_fn).values())
        [1, 2]
    """
    dependencies: dict[Node, int] = {}
    stack = [graph_root]
    while stack:
        for next_node, _ in stack.pop().next_functions:
            if next_node is None:
                continue
            count = dependencies.get(next_node)
            if count is None:  # the first edge to it (the graph is acyclic: no visited set)
                dependencies[next_node] = 1
                stack.append(next_node)
            else:
                dependencies[next_node] = count + 1
    return dependencies


def init_to_execute(graph_root: Node, output_edges: list[Edge], accumulate_grad: bool,
                    captures: dict[Node, list[tuple[int, int]]]) -> dict[Node, bool]:
    """When only some gradients are wanted, PyTorch's ``exec_info``: node -> whether it runs
    (absent: it receives nothing). With ``accumulate_grad`` each output edge's node runs (to
    write ``.grad``); else the gradient arriving there is put in ``captures``. A node runs when
    one of its ``next_functions`` is in the map (an iterative post-order walk)."""
    exec_info: dict[Node, bool] = {}
    for index, (fn, input_nr) in enumerate(output_edges):
        if accumulate_grad:
            exec_info[fn] = True
        else:
            exec_info.setdefault(fn, False)
            captures.setdefault(fn, []).append((input_nr, index))
    seen = {graph_root}
    stack = [(graph_root, 0)]
    while stack:
        node, i = stack[-1]
        edges = node.next_functions
        if i < len(edges):
            stack[-1] = (node, i + 1)
            child = edges[i][0]
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, 0))
            continue
        stack.pop()
        if not exec_info.get(node) and any(c in exec_info for c, _ in edges if c is not None):
            exec_info[node] = True
    return exec_info


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback()`` once the backward pass running in this thread has evaluated its last
    node (PyTorch's ``Variable._execution_engine.queue_callback``, what library code uses to
    act after a whole pass: :func:`exec_post_processing`).

    Example:
        >>> queue_callback(print)
        Traceback (most recent call last):
        ...
        RuntimeError: Final callbacks can only be installed during backward pass.
    """
    if not RUNNING.tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    RUNNING.tasks[-1][0].final_callbacks.append(callback)


def exec_post_processing(task: GraphTask) -> None:
    """PyTorch's ``GraphTask::exec_post_processing``: after the last node, the callbacks
    queued during the pass, in order, with the pass's grad mode and no node running. A
    callback may queue another: it runs too. Not run when the pass failed."""
    i = 0
    while i < len(task.final_callbacks):  # the list may grow while it is run
        task.final_callbacks[i]()
        i += 1


def current_node() -> Node | None:
    """The node whose backward is running in this thread, or None (PyTorch's
    ``torch._C._current_autograd_node()``); anomaly mode notes it on nodes recorded then.

    Example:
        >>> current_node() is None
        True
    """
    return RUNNING.node


# NOTE [reentrant backward]
# A node's backward may run a backward pass of its own (a custom Function calling .backward()
# or autograd.grad, as checkpointing does): the inner pass runs to its end inside the outer
# node, on the same thread, as in PyTorch. Each nested pass costs about ten Python frames, so a
# few dozen levels would reach Python's recursion limit (RecursionError where PyTorch
# succeeds). PyTorch's engine runs a reentrant pass on the calling thread up to MAX_DEPTH
# nested passes, then on another thread, whose stack starts empty, while the caller waits
# (engine.cpp, `add_thread_pool_task`). gradviz does the same, and hops sooner when the
# thread's Python stack is half used; the new thread takes the caller's grad mode, as
# PyTorch's workers take the caller's thread-local state. Each thread holds a bounded number
# of levels, so the depth of nesting is limited by memory only (2,000 levels: ~40 threads).
MAX_DEPTH = 60  # nested backward passes on one thread (PyTorch's MAX_DEPTH)


def _too_deep(running: Any) -> bool:
    """Whether a reentrant pass starting now should run on a thread of its own."""
    if len(running.tasks) >= MAX_DEPTH:
        return True
    depth, frame = 0, sys._getframe()
    while frame is not None:  # this thread's Python stack, counted without recursion
        depth += 1
        frame = frame.f_back
    return depth > sys.getrecursionlimit() // 2


def _on_new_thread(loop: Any, task: GraphTask, graph_root: Node,
                   root_inputs: InputBuffer) -> None:
    """Run the pass's ``loop`` on a new thread with this thread's grad mode; wait for it, and
    raise what it raised (NOTE [reentrant backward])."""
    modes = (_state.enabled, _state.inference, _state.grad_mode)
    failure: list[BaseException] = []

    def work() -> None:
        _state.enabled, _state.inference, _state.grad_mode = modes
        try:
            loop(task, graph_root, root_inputs)
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            failure.append(exc)

    worker = threading.Thread(target=work, name="gradviz reentrant backward")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]


def execute(task: GraphTask, graph_root: Node, root_inputs: InputBuffer) -> None:
    """Run the pass (:func:`_loop`) here, or on a new thread when it started inside a node's
    backward too deep in this thread (NOTE [reentrant backward])."""
    if RUNNING.tasks and _too_deep(RUNNING):
        _on_new_thread(_loop, task, graph_root, root_inputs)
    else:
        _loop(task, graph_root, root_inputs)


def _loop(task: GraphTask, graph_root: Node, root_inputs: InputBuffer) -> None:
    """The loop: evaluate ready nodes until none is left, each as the :func:`current_node`,
    then run the callbacks queued meanwhile (:func:`exec_post_processing`). Recording is on
    only under ``create_graph``; like PyTorch, 1/0 gives inf without a warning."""
    task.observer.enqueue(graph_root, task.ready.push(graph_root, root_inputs))
    running = RUNNING  # this thread's: what current_node and the hooks ask about
    node, outer = None, running.node  # outer: a backward running inside a node's backward
    running.tasks.append((task, graph_root))
    try:
        with set_grad_enabled(bool(task.create_graph)), np.errstate(all="ignore"):
            while task.ready:
                node, inputs = task.ready.pop()
                running.node = node
                evaluate_function(task, node, inputs)
            node = None
            if task.not_ready:
                raise RuntimeError("could not compute gradients for some functions: "
                                   f"{', '.join(n.name() for n in task.not_ready)}")
            running.node = None
            exec_post_processing(task)
    except BaseException as exc:
        task.observer.error(exc, node)
        raise
    finally:
        running.node = outer
        running.tasks.pop()
        for done in task.on_done:
            done()


def evaluate_function(task: GraphTask, node: Node, inputs: InputBuffer) -> None:
    """Capture what ``autograd.grad`` wants, run the node if needed, free its saved values
    unless ``retain_graph``, and hand each result to the next node's input buffer."""
    if task.exec_info is not None:
        needed = task.exec_info.get(node, False)
        if not needed:  # a skipped node's tensor hooks still run: they see what is captured
            inputs = call_tensor_pre_hooks(task, node, node._hooks(), inputs)
        for input_nr, index in task.captures.get(node, ()):
            task.captured_vars[index] = inputs[input_nr]
        if not needed:
            return
    outputs = call_function(task, node, inputs)
    observer = task.observer
    if not task.keep_graph and node.release_variables():
        observer.release_saved(node)
    dependencies, exec_info, not_ready = task.dependencies, task.exec_info, task.not_ready
    for (next_node, input_nr), grad in zip(node.next_functions, outputs):
        if next_node is None:
            continue
        remaining = dependencies[next_node] = dependencies[next_node] - 1
        if exec_info is not None and next_node not in exec_info:
            continue
        buffer = not_ready.pop(next_node, None)
        if buffer is None:
            buffer = InputBuffer((None,) * next_node.num_outputs)
        buffer.add(input_nr, grad)
        observer.accumulate(next_node, input_nr, grad, buffer[input_nr], node, remaining)
        if remaining:
            not_ready[next_node] = buffer
        else:
            observer.enqueue(next_node, task.ready.push(next_node, buffer))


def call_function(task: GraphTask, node: Node, inputs: list) -> tuple:
    """Tensor hooks and ``retain_grad``, the node's pre-hooks, the node, its post-hooks. A hook
    that returns something replaces what it was given (checked as PyTorch checks it)."""
    hooks, create_graph = node._hooks(), task.create_graph
    inputs = call_tensor_pre_hooks(task, node, hooks, inputs)
    for fn in hooks.pre:
        result = fn(tuple(None if g is None else wrap_grad(g) for g in inputs))
        task.observer.hook("prehook", node, fn=fn)
        if result is not None:
            inputs = checked_hook_results(fn, result, inputs, create_graph)
    if not hooks.post:
        return node.run(inputs, create_graph, task.observer)
    # The post-hooks see the inputs as they came: the node gets a copy (it may move them out).
    outputs = node.run(list(inputs), create_graph, task.observer)
    grad_outputs = tuple(None if g is None else wrap_grad(g) for g in inputs)
    for fn in hooks.post:
        result = fn(tuple(None if g is None else wrap_grad(g) for g in outputs), grad_outputs)
        task.observer.hook("posthook", node, fn=fn)
        if result is not None:
            outputs = tuple(checked_hook_results(fn, result, outputs, create_graph))
    return outputs


def call_tensor_pre_hooks(task: GraphTask, node: Node, hooks: NodeHooks, inputs: list) -> list:
    """``Tensor.register_hook`` hooks, then ``retain_grad``. A hook is called with None when
    its output received no gradient (another output of the node did), as in PyTorch."""
    for nr, fn in hooks.tensor_pre:
        grad = inputs[nr]
        result = fn(None if grad is None else wrap_grad(grad))
        task.observer.hook("tensor", node, fn=fn, input_nr=nr)
        if result is not None:
            inputs[nr] = checked_hook_result(fn, result, grad, task.create_graph)
    for nr, ref in hooks.retains_grad:
        tensor, grad = ref(), inputs[nr]
        if tensor is not None and grad is not None:
            retain_grad(tensor, grad, task.create_graph)
            task.observer.hook("retain_grad", node, tensor=tensor)
    return inputs
