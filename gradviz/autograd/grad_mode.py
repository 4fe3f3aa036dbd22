"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``is_grad_enabled``.

As in PyTorch the mode is thread-local: a ``no_grad`` block in one thread leaves others recording.
Each class works as a context manager and as a decorator.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


class _GradState(threading.local):
    # A class attribute is the default every new thread starts from: recording on, like PyTorch.
    enabled = True


_state = _GradState()


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for backward in this thread.

    Example:
        >>> import gradviz
        >>> with gradviz.no_grad():
        ...     gradviz.is_grad_enabled()
        False
    """
    return _state.enabled


class _GradModeBase:
    """Shared context-manager/decorator plumbing; subclasses pick the mode to enter."""

    _mode: bool

    def __enter__(self) -> None:
        self._prev = _state.enabled
        _state.enabled = self._mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _state.enabled
            _state.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state.enabled = prev

        return wrapper  # type: ignore[return-value]


class _NoParamDecorator(_GradModeBase):
    """Also usable as a bare decorator, ``@no_grad`` without parentheses, as in PyTorch 2.x."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):  # noqa: N801 - PyTorch's spelling
    """Context manager and decorator that turns recording off.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> with gradviz.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _mode = False


class enable_grad(_NoParamDecorator):  # noqa: N801
    """Context manager and decorator that turns recording back on (inside ``no_grad``).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> with gradviz.no_grad():
        ...     with gradviz.enable_grad():
        ...         y = x * 2
        >>> y.requires_grad
        True
    """

    _mode = True


class set_grad_enabled(_GradModeBase):  # noqa: N801
    """Set recording on or off: as a function call, a context manager or a decorator.

    Like PyTorch, calling it as a plain function changes the mode immediately.

    Example:
        >>> import gradviz
        >>> with gradviz.set_grad_enabled(False):
        ...     gradviz.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = _state.enabled
        _state.enabled = self._mode

    def __enter__(self) -> None:
        pass  # already switched in __init__, as torch.set_grad_enabled does

    def __call__(self, fn: F) -> F:
        # Used as a decorator: undo the switch made in __init__; the wrapper switches per call.
        _state.enabled = self._prev
        return super().__call__(fn)
