"""Listeners: how the dispatch point and the engines report what they do.

The tracer (``gradviz.trace``) registers a listener; nothing here knows about it. A listener is a
callable ``listener(event: str, data: dict) -> None``. The event names and their fields are
documented in ``docs/engine.md``; in short:

=====================  ==========================================================================
``op``                 a forward op ran: ``name``, ``inputs``, ``outputs``, ``node``, ``inplace``
``backward_begin``     ``engine`` (``pytorch``, ``singa``, ``mxnet``), ``roots``, ``grad_roots``,
                       ``retain_graph``, ``create_graph``, ``inputs``, ``accumulate_grad``,
                       ``graph_root``; MXNet adds ``gradient_graph`` (its explicit graph)
``dependencies``       ``counts`` (node -> number of incoming edges), ``graph_root``; SINGA adds
                       ``tensor_counts`` ((node, output index) -> edges carrying that output)
``enqueue``            a node became ready: ``node``, ``ready`` (the queue after the push)
``execute``            ``node``, ``grad_outputs`` (what it received), ``grad_inputs`` (what it sent)
``accumulate``         a gradient sent along an edge into a node's input buffer: ``node``,
                       ``input_nr``, ``grad`` (None when nothing flowed), ``buffer`` (the slot
                       after adding), ``from`` (the sending node), ``remaining`` (the
                       receiving node's dependency count after this edge)
``leaf_grad``          ``AccumulateGrad`` wrote ``.grad``: ``node``, ``tensor``, ``before``,
                       ``after``
``hook``               a hook ran: ``kind``, ``node``, ``fn``
``release_saved``      ``node`` freed its saved values
``gradient_node``      MXNet ran a gradient-graph node that is not a backward node
                       (``_head_grad_ones``, ``_head_grad``, ``_aggregate_sum``, ``_zeros``,
                       ``_copy``): ``gnode`` (its id), ``op``, ``node`` and ``input_nr`` (the
                       backward-graph node and output it is about), ``inputs``, ``output``
``error``              ``error``, ``node`` (or None): then the exception propagates unchanged
``backward_end``       ``engine``
``module_enter``       an ``nn.Module`` call began (before its forward pre-hooks): ``module``,
                       ``name`` (qualified name from the outermost module being called, e.g.
                       ``0`` or ``encoder.fc1``; the class name for that outermost module)
``module_exit``        that call ended (after its forward hooks, also when forward raised):
                       ``module``, ``name``, ``output`` (None if forward raised)
=====================  ==========================================================================

Any event may carry ``engine_data``: a dict of plain JSON values (strings, numbers, lists) that
an engine adds (SINGA: ``yielded``, ``tensor_remaining``; MXNet: ``gnode``, ``freed``,
``grad_req``); the tracer copies it into the step. SINGA's ``leaf_grad`` reports a *yielded*
gradient in ``after`` (``.grad`` is not written; ``before`` is None).

NOTE [perf]: every emitting site checks ``if _listeners:`` first, so with no listener the cost is
one truthiness test of a list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["add_listener", "remove_listener", "listeners", "Listener"]

Listener = Callable[[str, dict[str, Any]], None]

# Shared mutable list: hot paths import this very object and test its truthiness.
_listeners: list[Listener] = []


def add_listener(fn: Listener) -> Listener:
    """Register ``fn(event, data)`` to be told of every op and engine step; returns ``fn``.

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
    return fn


def remove_listener(fn: Listener) -> None:
    """Unregister a listener added with :func:`add_listener` (a no-op if it is not registered)."""
    try:
        _listeners.remove(fn)
    except ValueError:
        pass


def listeners() -> tuple[Listener, ...]:
    """The registered listeners, oldest first."""
    return tuple(_listeners)


def emit(event: str, data: dict[str, Any]) -> None:
    """Send one event to every listener. Callers check ``if _listeners:`` before building data."""
    for fn in tuple(_listeners):
        fn(event, data)
