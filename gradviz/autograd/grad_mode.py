"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

As in PyTorch the modes are thread-local: a ``no_grad`` block in one thread leaves others
recording. Each class works as a context manager and as a decorator, also of a generator
function (the mode then holds while the generator's own code runs, not while its caller runs
between two ``yield``).

NOTE [inference mode and grad mode]
PyTorch's ``InferenceMode`` turns grad mode off when it is entered (and ``inference_mode(False)``
turns it on). Inside it ``enable_grad`` still switches grad mode (``is_grad_enabled()`` says
True) but nothing is recorded: inference mode leaves out autograd altogether. The op layer reads
one flag on every op, ``state.enabled``: "record". It is the grad mode outside inference mode
and always False inside; there the grad mode the user sets is kept in ``state.grad_mode``.
Tensors made in inference mode are *inference tensors* (``Tensor.is_inference()``): they have no
version counter, cannot be saved for backward, and cannot be written in place outside inference
mode (``gradviz.tensor`` enforces that).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]

F = TypeVar("F", bound=Callable[..., Any])

_CLASS_DECORATED = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you "
    "can directly decorate the `__init__` method and nothing else.")


class _GradState(threading.local):
    # Class attributes are the defaults every new thread starts from: recording on, like PyTorch.
    enabled = True  # record ops: the grad mode, and not in inference mode
    inference = False  # inside inference_mode
    grad_mode = True  # the grad mode while in inference mode (see the NOTE above)


# This thread's modes. The op layer and the engine read `state.enabled` on every op and node, so
# they import this object itself (a function call would cost more than the op's bookkeeping).
state = _GradState()
_state = state  # its old name (gradviz.engines imports it)


def is_grad_enabled() -> bool:
    """Whether grad mode is on in this thread (operations are recorded for backward, unless
    inference mode is on too).

    Example:
        >>> import gradviz
        >>> with gradviz.no_grad():
        ...     gradviz.is_grad_enabled()
        False
    """
    return state.grad_mode if state.inference else state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread.

    Example:
        >>> import gradviz
        >>> with gradviz.inference_mode():
        ...     gradviz.is_inference_mode_enabled()
        True
    """
    return state.inference


def _set_grad_mode(mode: bool) -> None:
    if state.inference:
        state.grad_mode = mode
    else:
        state.enabled = mode


def _snapshot() -> tuple[bool, bool, bool]:
    return state.enabled, state.inference, state.grad_mode


def _restore(saved: tuple[bool, bool, bool]) -> None:
    state.enabled, state.inference, state.grad_mode = saved


def _outside_this_module() -> int:
    """The ``stacklevel`` of the first caller outside this file (a warning points there)."""
    level, frame = 1, sys._getframe(1)
    here = os.path.abspath(__file__)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) == here:
        level += 1
        frame = frame.f_back
    return level


def _in_mode(make_context: Callable[[], Any], fn: Callable) -> Callable:
    """``fn`` running inside a fresh context from ``make_context`` at every call. For a generator
    function, the context is entered each time the generator resumes and left each time it
    yields, so the caller's own mode holds in between."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def generator(*args: Any, **kwargs: Any) -> Any:
            gen = fn(*args, **kwargs)
            resume = functools.partial(gen.send, None)  # starting a generator sends None
            while True:
                try:
                    with make_context():
                        value = resume()
                except StopIteration as stop:
                    return stop.value
                try:
                    sent = yield value
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException as exc:  # thrown in by the caller: pass it on
                    resume = functools.partial(gen.throw, exc)
                else:
                    resume = functools.partial(gen.send, sent)

        return generator

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with make_context():
            return fn(*args, **kwargs)

    return wrapper


class _GradModeBase:
    """Context-manager and decorator plumbing; subclasses say what to enter and how to copy
    themselves (each decorated call gets a fresh copy, so calls can nest and recurse)."""

    def clone(self) -> _GradModeBase:
        return self.__class__()

    def __call__(self, fn: F) -> F:
        if inspect.isclass(fn):
            warnings.warn(_CLASS_DECORATED, FutureWarning, stacklevel=_outside_this_module())
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731 - as PyTorch does
        return _in_mode(self.clone, fn)  # type: ignore[return-value]


class _GradSwitch(_GradModeBase):
    """A context manager that sets grad mode to ``_mode`` and restores it on exit."""

    _mode: bool

    def __enter__(self) -> None:
        self._prev = _snapshot()
        _set_grad_mode(self._mode)

    def __exit__(self, *exc: object) -> None:
        _restore(self._prev)


class _NoParamDecorator(_GradSwitch):
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


class set_grad_enabled(_GradSwitch):  # noqa: N801
    """Set recording on or off: as a function call, a context manager or a decorator.

    Like PyTorch, calling it as a plain function changes the mode immediately.

    Example:
        >>> import gradviz
        >>> with gradviz.set_grad_enabled(False):
        ...     gradviz.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self._mode = mode
        self._prev = _snapshot()
        _set_grad_mode(mode)

    def __enter__(self) -> None:
        pass  # already switched in __init__, as torch.set_grad_enabled does

    def __call__(self, fn: F) -> F:
        # Used as a decorator: undo the switch made in __init__; the wrapper switches per call.
        _restore(self._prev)
        return super().__call__(fn)

    def clone(self) -> set_grad_enabled:
        return self.__class__(self._mode)


class inference_mode(_GradModeBase):  # noqa: N801
    """Context manager and decorator for code that will never be differentiated: like
    ``no_grad``, and the tensors it makes are *inference tensors* (``is_inference()``), which
    autograd refuses to save or to see modified in place later. ``mode=False`` turns it off
    (and grad mode on) inside an enclosing ``inference_mode``.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> with gradviz.inference_mode():
        ...     y = x * 2
        >>> y.requires_grad, y.is_inference()
        (False, True)
    """

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # the bare decorator: @inference_mode

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self._prev = _snapshot()
        # PyTorch's InferenceMode(enabled): grad mode becomes `not enabled`.
        state.inference = self.mode
        state.grad_mode = not self.mode
        state.enabled = not self.mode

    def __exit__(self, *exc: object) -> None:
        _restore(self._prev)

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)
