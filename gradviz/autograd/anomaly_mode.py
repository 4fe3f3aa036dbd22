"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``, as in PyTorch.

When on, every recorded node keeps the traceback of the forward call that created it
(``node.metadata["traceback_"]``); if backward then fails in that node, a warning shows that
traceback, and with ``check_nan`` a node that produces NaN gradients raises an error naming it.

It is built as an ordinary event listener (:mod:`gradviz.autograd.events`), so it costs nothing
when it is off.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from typing import Any

import numpy as np

from gradviz.autograd import events

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

_state = {"enabled": False, "check_nan": True}
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_EXAMPLES = os.path.join(_PKG, "examples") + os.sep


def _user_stack() -> list[str]:
    """The current stack without gradviz's own frames (bundled examples count as user code)."""
    frames = [f for f in traceback.extract_stack()
              if not os.path.abspath(f.filename).startswith(_PKG)
              or os.path.abspath(f.filename).startswith(_EXAMPLES)]
    return traceback.format_list(frames)


def _user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the user's line."""
    level, f = 1, sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG):
        level += 1
        f = f.f_back
    return level


def _listener(event: str, data: dict[str, Any]) -> None:
    if event == "op":
        node = data.get("node")
        if node is not None:
            node.metadata["traceback_"] = _user_stack()
    elif event == "execute" and _state["check_nan"]:
        node = data["node"]
        for i, g in enumerate(data["grad_inputs"]):
            arr = getattr(g, "_data", g)
            if arr is not None and np.issubdtype(np.asarray(arr).dtype, np.floating) and \
                    np.isnan(arr).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                                   "output.")
    elif event == "error":
        node = data.get("node")
        meta = node._extra.metadata if node is not None and node._extra is not None else None
        if meta and "traceback_" in meta:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                "error:\n" + "".join(meta["traceback_"]),
                stacklevel=_user_stacklevel())


def _apply(enabled: bool, check_nan: bool) -> None:
    _state["enabled"] = enabled
    _state["check_nan"] = check_nan
    if enabled:
        if _listener not in events.listeners():
            events.add_listener(_listener)
    else:
        events.remove_listener(_listener)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks gradients for NaN."""
    return _state["check_nan"]


class detect_anomaly:  # noqa: N801 - PyTorch's spelling
    """Context manager (and decorator) that turns anomaly detection on inside it.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([0.0], requires_grad=True)
        >>> with detect_anomaly():
        ...     y = x / x
        ...     try:
        ...         y.sum().backward()
        ...     except RuntimeError as e:
        ...         print(str(e).split(" returned")[0])
        Function 'DivBackward0'
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = (_state["enabled"], _state["check_nan"])
        _apply(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _apply(*self._prev)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:  # noqa: N801
    """Turn anomaly detection on or off: immediately, or for a ``with`` block.

    Example:
        >>> import gradviz
        >>> _ = gradviz.autograd.set_detect_anomaly(True); gradviz.autograd.is_anomaly_enabled()
        True
        >>> _ = gradviz.autograd.set_detect_anomaly(False)
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (_state["enabled"], _state["check_nan"])
        _apply(bool(mode), check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _apply(*self._prev)
