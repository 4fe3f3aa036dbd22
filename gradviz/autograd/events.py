"""Listeners: how the dispatch point and the engines report what they do.

The tracer (``gradviz.trace``) registers a listener; nothing here knows about it. A listener is a
callable ``listener(event: str, data: dict) -> None``. The event names and their fields are
documented in ``docs/engine.md``; in short:

=====================  ==========================================================================
``op``                 a forward op ran: ``name``, ``inputs``, ``outputs``, ``node``, ``inplace``
``backward_begin``     ``engine``, ``roots``, ``grad_roots``, ``retain_graph``, ``create_graph``,
                       ``inputs``, ``accumulate_grad``
``dependencies``       ``counts`` (node -> number of incoming edges), ``graph_root``
``enqueue``            a node became ready: ``node``, ``ready`` (the queue after the push)
``execute``            ``node``, ``grad_outputs`` (what it received), ``grad_inputs`` (what it sent)
``accumulate``         a gradient sent along an edge into a node's input buffer: ``node``,
                       ``input_nr``, ``grad`` (None when nothing flowed), ``buffer`` (the slot
                       after adding), ``from`` (the sending node), ``remaining`` (the
                       receiving node's dependency count after this edge)
``leaf_grad``          ``AccumulateGrad`` wrote ``.grad``: ``node``, ``tensor``, ``before``, ``after``
``hook``               a hook ran: ``kind``, ``node``, ``fn``
``release_saved``      ``node`` freed its saved values
``error``              ``error``, ``node`` (or None): then the exception propagates unchanged
``backward_end``       ``engine``
=====================  ==========================================================================

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
