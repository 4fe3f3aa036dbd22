"""A listener of event dicts that replays each event as the observer call it came from.

``tests/test_trace_direct_observer.py`` feeds a trace's observer through the dict adapter
(``events.Forwarding``) and this replay: if the dicts an outside listener gets carry every fact
the observer was told, the trace records the same rows either way. The test marks this file as
gradviz's own code, so that the tracer's walk to the user's line passes over it as over the
adapter.
"""

from __future__ import annotations

from typing import Any

from gradviz.autograd import events

# The event dicts' keys are the observer methods' parameter names, except this one.
_RENAMED = {"from": "source"}


class Replay:
    """``listener(event, data)`` that calls ``observer.<event>(**data)``."""

    def __init__(self, observer: events.Observer) -> None:
        self.observer = observer

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        getattr(self.observer, event)(**{_RENAMED.get(k, k): v for k, v in data.items()})
