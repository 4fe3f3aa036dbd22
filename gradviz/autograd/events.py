"""Listeners: how the dispatch point and the engines report what they do.

The tracer (``gradviz.trace``) registers a listener; nothing here knows about it. A listener is a
callable ``listener(event: str, data: dict) -> None``. The event names and their fields are
documented in ``docs/engine.md``; in short:

=======================  ==========================================================================
``op``                   a forward op ran: ``name``, ``inputs``, ``outputs``, ``node``, ``inplace``;
                         a custom Function's op adds ``function`` (True)
``function_enter``       a custom Function's ``forward()`` begins: ``function`` (the class); the
                         ops it runs come before the Function's own ``op`` event
``function_exit``        that ``forward()`` ended (also when it raised): ``function``
``backward_begin``       ``engine`` (``pytorch``, ``singa``, ``mxnet``), ``roots``, ``grad_roots``,
                         ``retain_graph``, ``create_graph``, ``inputs``, ``accumulate_grad``,
                         ``graph_root``; MXNet adds ``gradient_graph`` (its explicit graph)
``dependencies``         ``counts`` (node -> number of incoming edges), ``graph_root``; SINGA adds
                         ``tensor_counts`` ((node, output index) -> edges carrying that output)
``enqueue``              a node became ready: ``node``, ``priority`` (the queue runs the lowest
                         first, equal ones first come first served; the queue itself is not
                         listed, so a wide queue costs the same per push as a narrow one)
``execute``              ``node``, ``grad_outputs`` (what it received), ``grad_inputs`` (what it
                         sent)
``accumulate``           a gradient sent along an edge into a node's input buffer: ``node``,
                         ``input_nr``, ``grad`` (None when nothing flowed), ``buffer`` (the slot
                         after adding), ``from`` (the sending node), ``remaining`` (the
                         receiving node's dependency count after this edge)
``leaf_grad``            ``AccumulateGrad`` wrote ``.grad``: ``node``, ``tensor``, ``before``,
                         ``after``
``hook``                 a hook ran: ``kind``, ``node``, ``fn``
``release_saved``        ``node`` freed its saved values
``saved_tensor_pack``    a saved-tensor pack hook ran: ``saved`` (the SavedVariable), ``tensor``,
                         ``packed`` (the hook's result), ``fn``, ``node`` (the owner when
                         ``register_hooks`` packed it, else None: the node is made after)
``saved_tensor_unpack``  an unpack hook ran: ``saved``, ``node`` (the reader or None),
                         ``packed``, ``tensor`` (the hook's result), ``fn``
``gradient_node``        MXNet ran a gradient-graph node that is not a backward node
                         (``_head_grad_ones``, ``_head_grad``, ``_aggregate_sum``, ``_zeros``,
                         ``_copy``): ``gnode`` (its id), ``op``, ``node`` and ``input_nr`` (the
                         backward-graph node and output it is about), ``inputs``, ``output``
``error``                ``error``, ``node`` (or None): then the exception propagates unchanged
``backward_end``         ``engine``
``module_enter``         an ``nn.Module`` call began (before its forward pre-hooks): ``module``,
                         ``name`` (qualified name from the outermost module being called, e.g.
                         ``0`` or ``encoder.fc1``; the class name for that outermost module),
                         ``args`` (its positional arguments, as a global forward pre-hook gets
                         them)
``module_exit``          that call ended (after its forward hooks, also when forward raised):
                         ``module``, ``name``, ``output`` (None if forward raised)
=======================  ==========================================================================

Any event may carry ``engine_data``: a dict of plain JSON values (strings, numbers, lists) that
an engine adds (SINGA: ``yielded``, ``tensor_remaining``; MXNet: ``gnode``, ``freed``,
``grad_req``); the tracer copies it into the step. SINGA's ``leaf_grad`` reports a *yielded*
gradient in ``after`` (``.grad`` is not written; ``before`` is None).

The PyTorch engine (:mod:`gradviz.autograd.engine`) reports through an :class:`Observer`, one
method per event, fetched once per backward with :func:`observer`: with no listener that is a
shared observer whose methods do nothing, so the engine calls them unconditionally; with
listeners it is one that turns each call into the ``(event, data)`` above, or, when the only
listener gave :func:`add_listener` an observer of its own (the tracer does), that observer.
The dispatch point reports each op with :func:`emit_op`, after checking ``if _listeners:`` (the
cost of an unwatched op is then one truthiness test of a list): that is the current observer's
:meth:`Observer.op`, which becomes the ``op`` event above unless the only listener gave its own
observer (NOTE [perf: direct observer]). ``Module.__call__`` reports module scopes the same way
(:func:`emit_module_enter`, :func:`emit_module_exit`). The other engines and the rarer events
call :func:`emit` directly, after the same check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["add_listener", "remove_listener", "listeners", "Listener", "Observer",
           "Forwarding", "observer", "emit_op", "emit_module_enter", "emit_module_exit"]

Listener = Callable[[str, dict[str, Any]], None]

# Shared mutable list: hot paths import this very object and test its truthiness.
_listeners: list[Listener] = []
# Listener -> the Observer it gave add_listener (NOTE [perf: direct observer]).
_observers: dict[Listener, Observer] = {}


def add_listener(fn: Listener, observer: Observer | None = None) -> Listener:
    """Register ``fn(event, data)`` to be told of every op and engine step; returns ``fn``.

    ``observer``: an :class:`Observer` (usually a :class:`Forwarding` whose frequent methods
    record directly) that the PyTorch engine calls instead of turning its calls into events for
    ``fn``, while ``fn`` is the only listener; the dispatch point's op reports go to its
    :meth:`Observer.op` then (see :func:`emit_op`). NOTE [perf: direct observer]: the engine
    reports several events per backward node; building a dict per event and dispatching it on
    its name cost about as much as the untraced backward pass itself. For the op event, the
    dict, its dispatch and the handler's look-ups in it cost about 1 us per op of the traced
    tiny-op chain (12.0 -> 11.0 us per op, medians of 25 interleaved rounds in one process).

    Example:
        >>> import gradviz
        >>> from gradviz.autograd import events
        >>> seen = []
        >>> _ = events.add_listener(lambda ev, data: seen.append(ev))
        >>> _ = gradviz.ones(2, requires_grad=True) * 2
        >>> events.remove_listener(events.listeners()[-1]); seen
        ['op']
    """
    _listeners.append(fn)
    if observer is not None:
        _observers[fn] = observer
    _current[0] = _choose()
    return fn


def remove_listener(fn: Listener) -> None:
    """Unregister a listener added with :func:`add_listener` (a no-op if it is not registered)."""
    try:
        _listeners.remove(fn)
    except ValueError:
        pass
    if fn not in _listeners:
        _observers.pop(fn, None)
    _current[0] = _choose()


def listeners() -> tuple[Listener, ...]:
    """The registered listeners, oldest first."""
    return tuple(_listeners)


def emit(event: str, data: dict[str, Any]) -> None:
    """Send one event to every listener. Callers check ``if _listeners:`` before building data."""
    for fn in tuple(_listeners):
        fn(event, data)


def emit_op(name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
            inplace: bool) -> None:
    """Report a forward op (the ``op`` event) to the current :func:`observer`'s ``op``.
    Callers check ``if _listeners:`` first.

    Example:
        >>> import gradviz
        >>> seen = []
        >>> _ = add_listener(lambda ev, data: seen.append((ev, data["name"])))
        >>> emit_op("mul", None, (), (gradviz.ones(1),), {}, False)
        >>> remove_listener(listeners()[-1]); seen
        [('op', 'mul')]
    """
    _current[0].op(name, node, inputs, outputs, kwargs, inplace)


def emit_module_enter(module: Any, name: str, args: tuple = ()) -> None:
    """Report that a module call began (the ``module_enter`` event) to the current
    :func:`observer`, as :func:`emit_op` reports an op. Callers check ``if _listeners:``."""
    _current[0].module_enter(module, name, args)


def emit_module_exit(module: Any, name: str, output: Any) -> None:
    """Report that a module call ended (the ``module_exit`` event); see
    :func:`emit_module_enter`."""
    _current[0].module_exit(module, name, output)


class Observer:
    """What the engine tells whoever watches a backward pass: one method per event, each doing
    nothing here. The payloads are those of the table above (``from`` is ``source`` here).

    Example:
        >>> import gradviz
        >>> class Order(Observer):
        ...     def execute(self, node, grad_outputs, grad_inputs):
        ...         print(node.name())
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = (x * 2).sum()
        >>> _ = gradviz.autograd.engine.run_backward([y], [gradviz.tensor(1.0)], False, False,
        ...                                          observer=Order())
        SumBackward0
        MulBackward0
        torch::autograd::AccumulateGrad
    """

    def op(self, name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool) -> None:
        """A forward op ran (the dispatch point's report, through :func:`emit_op`)."""

    def module_enter(self, module: Any, name: str, args: tuple = ()) -> None:
        """A module call began (through :func:`emit_module_enter`), with positional ``args``."""

    def module_exit(self, module: Any, name: str, output: Any) -> None:
        """A module call ended (through :func:`emit_module_exit`)."""

    def backward_begin(self, engine: str, roots: tuple, grad_roots: list, retain_graph: bool,
                       create_graph: bool, inputs: tuple, accumulate_grad: bool,
                       graph_root: Any) -> None:
        """A pass starts at ``graph_root`` (a root's node, or the ``GraphRoot`` of several)."""

    def dependencies(self, counts: dict, graph_root: Any) -> None:
        """``counts``: node -> how many edges point at it."""

    def enqueue(self, node: Any, ready: Any) -> None:
        """``node`` became ready; ``ready`` is the ready queue after the push (``ready.nodes()``
        lists it in the order it will run, ``ready.priority(node)`` is the node's place)."""

    def execute(self, node: Any, grad_outputs: list, grad_inputs: tuple) -> None:
        """``node`` ran: it received ``grad_outputs`` and sends ``grad_inputs``."""

    def accumulate(self, node: Any, input_nr: int, grad: Any, buffer: Any, source: Any,
                   remaining: int) -> None:
        """``source`` sent ``grad`` into slot ``input_nr`` of ``node``'s input buffer, which now
        holds ``buffer``; ``node`` waits for ``remaining`` more edges."""

    def leaf_grad(self, node: Any, tensor: Any, before: Any, after: Any) -> None:
        """``AccumulateGrad`` changed ``tensor.grad`` from ``before`` to ``after``."""

    def hook(self, kind: str, node: Any, **fields: Any) -> None:
        """A hook of ``kind`` ran at ``node``; ``fields`` are ``fn`` and ``input_nr`` or
        ``tensor`` as the table says."""

    def release_saved(self, node: Any) -> None:
        """``node`` freed its saved values."""

    def error(self, error: BaseException, node: Any) -> None:
        """``error`` was raised while ``node`` (or None) ran; it then propagates unchanged."""

    def backward_end(self, engine: str) -> None:
        """The pass finished."""

    def keep(self, value: Any) -> Any:
        """``value`` as it is now, for a later report (``leaf_grad``'s ``before``): a copy when
        someone watches, since an in-place add may change it; here, ``value`` itself."""
        return value


class Forwarding(Observer):
    """The observer when listeners exist: each call becomes ``emit(event, data)``. A listener's
    own observer (see :func:`add_listener`) subclasses it, so that what it does not record
    directly still reaches it as an event, and ``keep`` copies."""

    def op(self, name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool) -> None:
        emit("op", {"name": name, "node": node, "inputs": inputs, "outputs": outputs,
                    "kwargs": kwargs, "inplace": inplace})

    def module_enter(self, module: Any, name: str, args: tuple = ()) -> None:
        emit("module_enter", {"module": module, "name": name, "args": args})

    def module_exit(self, module: Any, name: str, output: Any) -> None:
        emit("module_exit", {"module": module, "name": name, "output": output})

    def backward_begin(self, engine: str, roots: tuple, grad_roots: list, retain_graph: bool,
                       create_graph: bool, inputs: tuple, accumulate_grad: bool,
                       graph_root: Any) -> None:
        emit("backward_begin", {"engine": engine, "roots": roots, "grad_roots": grad_roots,
                                "retain_graph": retain_graph, "create_graph": create_graph,
                                "inputs": inputs, "accumulate_grad": accumulate_grad,
                                "graph_root": graph_root})

    def dependencies(self, counts: dict, graph_root: Any) -> None:
        emit("dependencies", {"counts": dict(counts), "graph_root": graph_root})

    def enqueue(self, node: Any, ready: Any) -> None:
        emit("enqueue", {"node": node, "priority": ready.priority(node)})

    def execute(self, node: Any, grad_outputs: list, grad_inputs: tuple) -> None:
        emit("execute", {"node": node, "grad_outputs": list(grad_outputs),
                         "grad_inputs": list(grad_inputs)})

    def accumulate(self, node: Any, input_nr: int, grad: Any, buffer: Any, source: Any,
                   remaining: int) -> None:
        emit("accumulate", {"node": node, "input_nr": input_nr, "grad": grad, "buffer": buffer,
                            "from": source, "remaining": remaining})

    def leaf_grad(self, node: Any, tensor: Any, before: Any, after: Any) -> None:
        emit("leaf_grad", {"node": node, "tensor": tensor, "before": before, "after": after})

    def hook(self, kind: str, node: Any, **fields: Any) -> None:
        emit("hook", {"kind": kind, "node": node, **fields})

    def release_saved(self, node: Any) -> None:
        emit("release_saved", {"node": node})

    def error(self, error: BaseException, node: Any) -> None:
        emit("error", {"error": error, "node": node})

    def backward_end(self, engine: str) -> None:
        emit("backward_end", {"engine": engine})

    def keep(self, value: Any) -> Any:
        # A copy of the values only: clone() could record an op under create_graph.
        return value if value is None else type(value)._make(value._data.copy())


_NO_OBSERVER = Observer()
_FORWARDING = Forwarding()


def observer() -> Observer:
    """The observer for a pass starting now: one that does nothing while no listener is
    registered; the listener's own observer when there is one listener that gave one; else
    one that forwards every call to the listeners.

    Example:
        >>> type(observer()).__name__
        'Observer'
    """
    return _current[0]


def _choose() -> Observer:
    """What :func:`observer` returns, worked out when the listeners change."""
    if not _listeners:
        return _NO_OBSERVER
    if len(_listeners) == 1:
        own = _observers.get(_listeners[0])
        if own is not None:
            return own
    return _FORWARDING


# The observer for the listeners registered now (NOTE [perf]: kept up to date by add_listener and
# remove_listener, as emit_op reads it for every traced op).
_current: list[Observer] = [_NO_OBSERVER]
