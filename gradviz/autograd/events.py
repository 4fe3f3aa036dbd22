"""Observers: how the dispatch point, the three engines and custom Functions report what they do.

Everything that watches gradviz (the tracer in :mod:`gradviz.trace`, anomaly mode, MXNet's
recording marker, your own code) is an :class:`Observer`: one method per event, each doing
nothing in the base class, registered with :func:`add_observer`. Reporters fetch the observer
to tell with :func:`observer` (the engines once per backward pass) and call its methods: with
nothing registered that is a shared observer whose methods do nothing; with one, that very
observer; with several, one that calls each in the order they were registered.

A plain callable ``listener(event: str, data: dict) -> None`` registered with
:func:`add_listener` is wrapped in a :class:`Forwarding` observer, the adapter that turns each
method call into ``listener(event, data)``. The event names and their fields (the parameters
of the methods; ``source`` is ``from`` in the dict) are documented in ``docs/engine.md``; in
short:

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

The steps of a backward pass (``dependencies`` to ``backward_end``) may carry ``engine_data``:
a dict of plain JSON values (strings, numbers, lists) that an engine adds (SINGA: ``yielded``,
``tensor_remaining``, ``stopped_early``; MXNet: ``gnode``, ``freed``, ``grad_req``,
``buffer_id``); the tracer copies it into the step. An event dict has the key only when the
engine gave it. SINGA's ``leaf_grad`` reports a *yielded* gradient in ``after`` (``.grad`` is not
written; ``before`` is None).

Who calls what: the engines call the observer they fetched when the pass began,
unconditionally (a method that does nothing costs less than a test before each call). The
dispatch point reports each op with :func:`emit_op` after checking ``if watchers:`` (the cost of
an unwatched op is one truthiness test of a list); ``Module.__call__`` reports scopes the same
way (:func:`emit_module_enter`, :func:`emit_module_exit`), custom Functions their ``forward()``
and op, and saved-tensor hooks their packs and unpacks, through :func:`observer`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = ["add_listener", "remove_listener", "listeners", "add_observer", "remove_observer",
           "Listener", "Observer", "Forwarding", "observer", "watchers", "unwatched", "emit",
           "emit_op", "emit_module_enter", "emit_module_exit"]

Listener = Callable[[str, dict[str, Any]], None]
_O = TypeVar("_O", bound="Observer")

# The registered observers, oldest first. A shared list: hot paths import this very object and
# test its truthiness (``if watchers:``) before reporting.
watchers: list[Observer] = []
# What each was registered under, in the same order: the listener given to add_listener, or the
# observer itself (what listeners() lists and remove_listener looks for).
_keys: list[Any] = []


def add_observer(obs: _O) -> _O:
    """Register ``obs`` to be told of every op and engine step, from the next report (an engine
    already in a pass keeps the observer it fetched); returns ``obs``.

    Example:
        >>> import gradviz
        >>> class Ops(Observer):
        ...     def op(self, name, node, inputs, outputs, kwargs, inplace, function=False):
        ...         print(name)
        >>> ops = add_observer(Ops())
        >>> _ = gradviz.ones(2, requires_grad=True) * 2
        mul
        >>> remove_observer(ops)
    """
    _register(obs, obs)
    return obs


def remove_observer(obs: Observer) -> None:
    """Unregister an observer added with :func:`add_observer` (a no-op if it is not there)."""
    remove_listener(obs)


def add_listener(fn: Listener, observer: Observer | None = None) -> Listener:
    """Register ``fn(event, data)`` to be told of every op and engine step as an event dict (the
    :class:`Forwarding` adapter); returns ``fn``.

    ``observer``: an observer to register under the name ``fn`` instead of the adapter. A
    :class:`Forwarding` subclass without a listener of its own gets ``fn``, so that the methods
    it does not override still reach ``fn`` as events.

    Example:
        >>> import gradviz
        >>> from gradviz.autograd import events
        >>> seen = []
        >>> _ = events.add_listener(lambda ev, data: seen.append(ev))
        >>> _ = gradviz.ones(2, requires_grad=True) * 2
        >>> events.remove_listener(events.listeners()[-1]); seen
        ['op']
    """
    if observer is None:
        observer = Forwarding(fn)
    elif isinstance(observer, Forwarding) and getattr(observer, "listener", None) is None:
        observer.listener = fn
    _register(fn, observer)
    return fn


def _register(key: Any, obs: Observer) -> None:
    _keys.append(key)
    watchers.append(obs)
    _current[0] = _choose()


def remove_listener(fn: Listener | Observer) -> None:
    """Unregister a listener added with :func:`add_listener` (a no-op if it is not registered)."""
    for k, key in enumerate(_keys):
        if key == fn:
            del _keys[k], watchers[k]
            break
    _current[0] = _choose()


def listeners() -> tuple[Any, ...]:
    """The registered listeners and observers (as given to :func:`add_listener` or
    :func:`add_observer`), oldest first."""
    return tuple(_keys)


def emit(event: str, data: dict[str, Any]) -> None:
    """Send one event dict to every registered listener (not to observers, which take method
    calls). gradviz itself reports through :func:`observer`; this is for outside code that
    reports events of its own to the same listeners."""
    for obs in tuple(watchers):
        if isinstance(obs, Forwarding) and obs.listener is not None:
            obs.listener(event, data)


@contextlib.contextmanager
def unwatched() -> Iterator[None]:
    """Nothing inside is reported (the dispatch point runs a meta op on stand-in arrays this way,
    then reports it once).

    Example:
        >>> import gradviz
        >>> seen = []
        >>> _ = add_listener(lambda ev, data: seen.append(ev))
        >>> with unwatched():
        ...     _ = gradviz.ones(2, requires_grad=True) * 2
        >>> remove_listener(listeners()[-1]); seen
        []
    """
    saved, keys, current = watchers[:], _keys[:], _current[0]
    watchers.clear()
    _keys.clear()
    _current[0] = _NO_OBSERVER
    try:
        yield
    finally:
        watchers[:], _keys[:], _current[0] = saved, keys, current


def emit_op(name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
            inplace: bool) -> None:
    """Report a forward op (the ``op`` event) to the current :func:`observer`'s ``op``.
    Callers check ``if watchers:`` first.

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
    :func:`observer`, as :func:`emit_op` reports an op. Callers check ``if watchers:``."""
    _current[0].module_enter(module, name, args)


def emit_module_exit(module: Any, name: str, output: Any) -> None:
    """Report that a module call ended (the ``module_exit`` event); see
    :func:`emit_module_enter`."""
    _current[0].module_exit(module, name, output)


class Observer:
    """Whoever watches gradviz: one method per event of the table above, each doing nothing
    here; subclass it and override what you want to know (the parameters are the event's
    fields; ``from`` is ``source``). Register it with :func:`add_observer`, or give it to one
    pass as ``run_backward``'s ``observer``.

    Example:
        >>> import gradviz
        >>> class Order(Observer):
        ...     def execute(self, node, grad_outputs, grad_inputs, engine_data=None):
        ...         print(node.name())
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = (x * 2).sum()
        >>> _ = gradviz.autograd.engine.run_backward([y], [gradviz.tensor(1.0)], False, False,
        ...                                          observer=Order())
        SumBackward0
        MulBackward0
        torch::autograd::AccumulateGrad
    """

    # -- the forward pass ---------------------------------------------------------------------
    def op(self, name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool, function: bool = False) -> None:
        """A forward op ran (the dispatch point's report, through :func:`emit_op`; a custom
        Function's, with ``function`` True); ``node`` is the node it recorded, or None."""

    def function_enter(self, function: type) -> None:
        """A custom Function's ``forward()`` begins (its ops come before its own ``op``)."""

    def function_exit(self, function: type) -> None:
        """That ``forward()`` ended, also when it raised."""

    def module_enter(self, module: Any, name: str, args: tuple = ()) -> None:
        """A module call began (through :func:`emit_module_enter`), with positional ``args``."""

    def module_exit(self, module: Any, name: str, output: Any) -> None:
        """A module call ended (through :func:`emit_module_exit`); ``output`` None if it
        raised."""

    def saved_tensor_pack(self, saved: Any, tensor: Any, packed: Any, fn: Any,
                          node: Any) -> None:
        """A pack hook turned ``tensor`` into ``packed`` for the SavedVariable ``saved`` (of
        ``node`` when ``register_hooks`` packed it, else None)."""

    def saved_tensor_unpack(self, saved: Any, node: Any, packed: Any, tensor: Any,
                            fn: Any) -> None:
        """An unpack hook gave ``tensor`` back from ``packed`` for ``node`` (or None)."""

    # -- a backward pass ----------------------------------------------------------------------
    def backward_begin(self, engine: str, roots: tuple, grad_roots: list, retain_graph: bool,
                       create_graph: bool, inputs: tuple, accumulate_grad: bool,
                       graph_root: Any, gradient_graph: Any = None) -> None:
        """A pass of ``engine`` starts at ``graph_root`` (a root's node, or the ``GraphRoot``
        of several); MXNet gives its ``gradient_graph``."""

    def dependencies(self, counts: dict, graph_root: Any, tensor_counts: dict | None = None,
                     engine_data: dict | None = None) -> None:
        """``counts``: node -> how many edges point at it (SINGA: ``tensor_counts`` too)."""

    def enqueue(self, node: Any, priority: int, engine_data: dict | None = None) -> None:
        """``node`` became ready; ``priority`` is its place in the ready queue (the lowest
        runs first)."""

    def execute(self, node: Any, grad_outputs: list, grad_inputs: tuple,
                engine_data: dict | None = None) -> None:
        """``node`` ran: it received ``grad_outputs`` and sends ``grad_inputs``."""

    def accumulate(self, node: Any, input_nr: int, grad: Any, buffer: Any, source: Any,
                   remaining: int, engine_data: dict | None = None) -> None:
        """``source`` sent ``grad`` into slot ``input_nr`` of ``node``'s input buffer, which now
        holds ``buffer``; ``node`` waits for ``remaining`` more edges."""

    def leaf_grad(self, node: Any, tensor: Any, before: Any, after: Any,
                  engine_data: dict | None = None) -> None:
        """``AccumulateGrad`` changed ``tensor.grad`` from ``before`` to ``after``."""

    def hook(self, kind: str, node: Any, fn: Any = None, input_nr: int | None = None,
             tensor: Any = None, engine_data: dict | None = None) -> None:
        """A hook of ``kind`` ran at ``node``: ``fn`` (``input_nr`` for a tensor hook;
        ``tensor``, and no ``fn``, for ``retain_grad``)."""

    def release_saved(self, node: Any, engine_data: dict | None = None) -> None:
        """``node`` freed its saved values."""

    def gradient_node(self, gnode: str, op: str, node: Any, input_nr: int, inputs: list,
                      output: Any, engine_data: dict | None = None) -> None:
        """MXNet ran its gradient-graph node ``gnode`` (``op``), about output ``input_nr`` of
        ``node``: it read ``inputs`` and made ``output``."""

    def error(self, error: BaseException, node: Any, engine_data: dict | None = None) -> None:
        """``error`` was raised while ``node`` (or None) ran; it then propagates unchanged."""

    def backward_end(self, engine: str, engine_data: dict | None = None) -> None:
        """The pass finished."""

    def keep(self, value: Any) -> Any:
        """``value`` as it is now, for a later report (``leaf_grad``'s ``before``): a copy when
        someone records it, since an in-place add may change it; here, ``value`` itself."""
        return value


def _with(data: dict[str, Any], engine_data: dict | None) -> dict[str, Any]:
    """``data`` with the engine's extras, when it gave some."""
    if engine_data is not None:
        data["engine_data"] = engine_data
    return data


class Forwarding(Observer):
    """The adapter for outside listeners: each method call becomes ``listener(event, data)``,
    with the fields of the table above (``engine_data``, ``function``, ``tensor_counts`` and
    ``gradient_graph`` only when given).

    Example:
        >>> seen = []
        >>> Forwarding(lambda ev, data: seen.append((ev, data))).release_saved("node")
        >>> seen
        [('release_saved', {'node': 'node'})]
    """

    def __init__(self, listener: Listener | None = None) -> None:
        self.listener = listener

    def op(self, name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool, function: bool = False) -> None:
        data = {"name": name, "node": node, "inputs": inputs, "outputs": outputs,
                "kwargs": kwargs, "inplace": inplace}
        if function:
            data["function"] = True
        self.listener("op", data)

    def function_enter(self, function: type) -> None:
        self.listener("function_enter", {"function": function})

    def function_exit(self, function: type) -> None:
        self.listener("function_exit", {"function": function})

    def module_enter(self, module: Any, name: str, args: tuple = ()) -> None:
        self.listener("module_enter", {"module": module, "name": name, "args": args})

    def module_exit(self, module: Any, name: str, output: Any) -> None:
        self.listener("module_exit", {"module": module, "name": name, "output": output})

    def saved_tensor_pack(self, saved: Any, tensor: Any, packed: Any, fn: Any,
                          node: Any) -> None:
        self.listener("saved_tensor_pack", {"saved": saved, "tensor": tensor, "packed": packed,
                                            "fn": fn, "node": node})

    def saved_tensor_unpack(self, saved: Any, node: Any, packed: Any, tensor: Any,
                            fn: Any) -> None:
        self.listener("saved_tensor_unpack", {"saved": saved, "node": node, "packed": packed,
                                              "tensor": tensor, "fn": fn})

    def backward_begin(self, engine: str, roots: tuple, grad_roots: list, retain_graph: bool,
                       create_graph: bool, inputs: tuple, accumulate_grad: bool,
                       graph_root: Any, gradient_graph: Any = None) -> None:
        data = {"engine": engine, "roots": roots, "grad_roots": grad_roots,
                "retain_graph": retain_graph, "create_graph": create_graph, "inputs": inputs,
                "accumulate_grad": accumulate_grad, "graph_root": graph_root}
        if gradient_graph is not None:
            data["gradient_graph"] = gradient_graph
        self.listener("backward_begin", data)

    def dependencies(self, counts: dict, graph_root: Any, tensor_counts: dict | None = None,
                     engine_data: dict | None = None) -> None:
        data = {"counts": dict(counts), "graph_root": graph_root}
        if tensor_counts is not None:
            data["tensor_counts"] = dict(tensor_counts)
        self.listener("dependencies", _with(data, engine_data))

    def enqueue(self, node: Any, priority: int, engine_data: dict | None = None) -> None:
        self.listener("enqueue", _with({"node": node, "priority": priority}, engine_data))

    def execute(self, node: Any, grad_outputs: list, grad_inputs: tuple,
                engine_data: dict | None = None) -> None:
        self.listener("execute", _with({"node": node, "grad_outputs": list(grad_outputs),
                                        "grad_inputs": list(grad_inputs)}, engine_data))

    def accumulate(self, node: Any, input_nr: int, grad: Any, buffer: Any, source: Any,
                   remaining: int, engine_data: dict | None = None) -> None:
        self.listener("accumulate", _with({"node": node, "input_nr": input_nr, "grad": grad,
                                           "buffer": buffer, "from": source,
                                           "remaining": remaining}, engine_data))

    def leaf_grad(self, node: Any, tensor: Any, before: Any, after: Any,
                  engine_data: dict | None = None) -> None:
        self.listener("leaf_grad", _with({"node": node, "tensor": tensor, "before": before,
                                          "after": after}, engine_data))

    def hook(self, kind: str, node: Any, fn: Any = None, input_nr: int | None = None,
             tensor: Any = None, engine_data: dict | None = None) -> None:
        data = {"kind": kind, "node": node}
        if fn is not None:
            data["fn"] = fn
        if input_nr is not None:
            data["input_nr"] = input_nr
        if tensor is not None:
            data["tensor"] = tensor
        self.listener("hook", _with(data, engine_data))

    def release_saved(self, node: Any, engine_data: dict | None = None) -> None:
        self.listener("release_saved", _with({"node": node}, engine_data))

    def gradient_node(self, gnode: str, op: str, node: Any, input_nr: int, inputs: list,
                      output: Any, engine_data: dict | None = None) -> None:
        self.listener("gradient_node", _with({"gnode": gnode, "op": op, "node": node,
                                              "input_nr": input_nr, "inputs": inputs,
                                              "output": output}, engine_data))

    def error(self, error: BaseException, node: Any, engine_data: dict | None = None) -> None:
        self.listener("error", _with({"error": error, "node": node}, engine_data))

    def backward_end(self, engine: str, engine_data: dict | None = None) -> None:
        self.listener("backward_end", _with({"engine": engine}, engine_data))

    def keep(self, value: Any) -> Any:
        # A copy of the values only: clone() could record an op under create_graph.
        return value if value is None else type(value)._make(value._data.copy())


def _each(method: str) -> Callable[..., None]:
    """A method of :class:`_Several` that calls ``method`` of each observer in turn."""
    def tell(self: _Several, *args: Any, **kwargs: Any) -> None:
        for obs in self.observers:
            getattr(obs, method)(*args, **kwargs)
    tell.__name__ = tell.__qualname__ = method
    return tell


class _Several(Observer):
    """What :func:`observer` returns while several observers are registered: each call goes to
    each of them, in the order they were registered (not a third kind of observer: the
    registry's way of telling more than one)."""

    def __init__(self, observers: tuple[Observer, ...]) -> None:
        self.observers = observers

    def keep(self, value: Any) -> Any:
        kept = value
        for obs in self.observers:  # a copy if any of them copies
            mine = obs.keep(value)
            if mine is not value:
                kept = mine
        return kept


for _name in ("op", "function_enter", "function_exit", "module_enter", "module_exit",
              "saved_tensor_pack", "saved_tensor_unpack", "backward_begin", "dependencies",
              "enqueue", "execute", "accumulate", "leaf_grad", "hook", "release_saved",
              "gradient_node", "error", "backward_end"):
    setattr(_Several, _name, _each(_name))
del _name

_NO_OBSERVER = Observer()


def observer() -> Observer:
    """The observer to report to now: one that does nothing while nothing is registered; the
    registered observer when there is one; else one that tells each of them.

    Example:
        >>> type(observer()).__name__
        'Observer'
    """
    return _current[0]


# NOTE [perf: direct observer] A sole registered observer is called directly, and the tracer is
# an observer of its own, not a listener of event dicts: the engine reports several events per
# backward node, and building a dict per event and dispatching it on its name cost about as much
# as the untraced backward pass itself. For the op event, the dict, its dispatch and the
# handler's look-ups in it cost about 1 us per op of the traced tiny-op chain (12.0 -> 11.0 us
# per op, medians of 25 interleaved rounds in one process). Dicts are built only for the
# outside listeners that asked for them (Forwarding).
def _choose() -> Observer:
    """What :func:`observer` returns, worked out when the registrations change."""
    if not watchers:
        return _NO_OBSERVER
    if len(watchers) == 1:
        return watchers[0]
    return _Several(tuple(watchers))


# The observer for what is registered now (NOTE [perf]: kept up to date by add_listener and
# remove_listener, as emit_op reads it for every watched op).
_current: list[Observer] = [_NO_OBSERVER]
