"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``, as in PyTorch.

When on, every recorded node keeps the traceback of the forward call that created it
(``node.metadata["traceback_"]``) and, if a node's backward recorded it, that node
(``node.metadata["parent_"]``); if backward then fails in a node, warnings show those
tracebacks, and with ``check_nan`` a node that produces NaN gradients raises an error naming it.

It is an ordinary :class:`~gradviz.autograd.events.Observer`, registered only while it is on, so
it costs nothing when it is off.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from typing import Any

import numpy as np

from gradviz.autograd import engine, events

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

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


class _AnomalyObserver(events.Observer):
    """What anomaly mode watches: each recorded node (its forward traceback), each node's
    results (NaN), and a failing node (its tracebacks)."""

    def op(self, name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool, function: bool = False) -> None:
        if node is not None:
            meta = node.metadata
            meta["traceback_"] = _user_stack()
            parent = engine.current_node()
            if parent is not None:  # recorded by a node's backward (create_graph): keep which
                meta["parent_"] = parent

    def execute(self, node: Any, grad_outputs: list, grad_inputs: tuple,
                engine_data: dict | None = None) -> None:
        if not _state["check_nan"]:
            return
        for i, g in enumerate(grad_inputs):
            arr = getattr(g, "_data", g)
            if arr is not None and np.issubdtype(np.asarray(arr).dtype, np.floating) and \
                    np.isnan(arr).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                                   "output.")

    def error(self, error: BaseException, node: Any, engine_data: dict | None = None) -> None:
        if node is not None:
            _print_stack(node)


_observer = _AnomalyObserver()


_NO_FORWARD_INFO = ("No forward pass information available. Enable detect anomaly during forward "
                    "pass for more information.")


def _print_stack(node: Any) -> None:
    """PyTorch's ``print_stack``: warn with the forward traceback of the node that failed, then
    with that of each node whose backward recorded it ("Previous calculation ...")."""
    meta = _metadata(node)
    if "traceback_" in meta:
        _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
              "error:\n" + "".join(meta["traceback_"]))
    else:
        _warn(f"Error detected in {node.name()}. {_NO_FORWARD_INFO}")
    parent = meta.get("parent_")
    while parent is not None:  # a chain, walked iteratively
        parent_meta = _metadata(parent)
        if "traceback_" in parent_meta:
            _warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                  "forward call that induced the previous calculation:\n"
                  + "".join(parent_meta["traceback_"]))
        else:
            _warn(f"Error detected in {parent.name()}. {_NO_FORWARD_INFO}")
        parent = parent_meta.get("parent_")


def _metadata(node: Any) -> dict:
    extra = node._extra
    return extra.metadata if extra is not None and extra.metadata is not None else {}


def _warn(message: str) -> None:
    """Warn while an error is on its way out of backward. If warnings are errors here, the
    warning is printed instead, so that the original error still propagates (what PyTorch's
    warning handler does when an exception is already set)."""
    try:
        warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())
    except Warning as w:
        sys.stderr.write(f"{type(w).__name__}: {w}\n")


def _apply(enabled: bool, check_nan: bool) -> None:
    _state["enabled"] = enabled
    _state["check_nan"] = check_nan
    if enabled:
        if _observer not in events.listeners():
            events.add_observer(_observer)
    else:
        events.remove_observer(_observer)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``), without a warning.

    Example:
        >>> import gradviz
        >>> gradviz.set_anomaly_enabled(True); gradviz.is_anomaly_enabled()
        True
        >>> gradviz.set_anomaly_enabled(False)
    """
    _apply(bool(enabled), bool(check_nan))


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on.

    Example:
        >>> import gradviz
        >>> gradviz.is_anomaly_enabled()
        False
    """
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks gradients for NaN (the default).

    Example:
        >>> import gradviz
        >>> gradviz.is_anomaly_check_nan_enabled()
        True
    """
    return _state["check_nan"]


class detect_anomaly:  # noqa: N801 - PyTorch's spelling
    """Context manager that turns anomaly detection on inside it (and warns that it is on).

    Every node recorded inside keeps the traceback of the forward call that made it. When
    backward fails in a node, warnings show that traceback ("Error detected in ...") and, for
    a node recorded by another node's backward (``create_graph``), that node's ("Previous
    calculation was induced by ..."). With ``check_nan`` a node that returns NaN gradients
    raises an error naming it.

    Example:
        >>> import gradviz, warnings
        >>> x = gradviz.tensor([0.0], requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     with detect_anomaly():
        ...         y = x / x
        ...         try:
        ...             y.sum().backward()
        ...         except RuntimeError as e:
        ...             print(e)
        Function 'DivBackward0' returned nan values in its 1th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._prev = (_state["enabled"], _state["check_nan"])
        _apply(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _apply(*self._prev)


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
