"""``gradviz.optim.lr_scheduler``: learning-rate schedules, as ``torch.optim.lr_scheduler``.

A scheduler rewrites ``group["lr"]`` of its optimizer's parameter groups each time
``scheduler.step()`` is called (once per epoch, or per batch for OneCycleLR), after
``optimizer.step()``. Constructing one already takes a step (``last_epoch`` goes from -1 to 0)
and records each group's starting rate as ``group["initial_lr"]`` and in ``base_lrs``.

NOTE [chainable form] Like PyTorch's, most schedules here compute the next rate from the
*current* ``group["lr"]`` (e.g. ExponentialLR multiplies it by ``gamma``), not from a closed
formula of the epoch, so that two schedulers stepping the same optimizer compose (that is what
ChainedScheduler relies on). The closed formulas are kept too: ``step(epoch)`` (deprecated in
PyTorch) and SequentialLR's hand-over at a milestone use them. The floating point results are
therefore PyTorch's to the last bit, which the parity tests check.

Example:
    >>> import gradviz
    >>> from gradviz import optim
    >>> w = gradviz.zeros(1, requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.1)
    >>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for epoch in range(5):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.1, 0.05, 0.05, 0.025, 0.025]
"""

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import partial, wraps
from typing import Any, Literal, SupportsFloat

from gradviz.optim.optimizer import Optimizer, _scalar
from gradviz.tensor import Tensor

__all__ = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
    "ReduceLROnPlateau", "OneCycleLR", "LRScheduler", "PolynomialLR", "CyclicLR",
    "CosineAnnealingWarmRestarts",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_HOW_TO_ADJUST = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"

LrT = float | Tensor


# -- reading and writing a value in every parameter group -----------------------------------------
def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """``group[key]`` of every group; a tensor value is cloned so that the list never aliases
    the optimizer's (a caller editing ``get_last_lr()`` in place must not change the rate)."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group: dict[str, Any], key: str, value: LrT) -> None:
    """Store ``value`` as ``group[key]``; a tensor there is filled in place, never replaced."""
    if isinstance(group[key], Tensor):
        group[key].fill_(_scalar(value))
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value per parameter group: a list/tuple must have one per group, a scalar is
    repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(value)} values, param_groups has {len(optimizer.param_groups)}.")
        values = list(value)
    else:
        values = [value] * len(optimizer.param_groups)
    return [v.clone() if isinstance(v, Tensor) else v for v in values]


def _track_optimizer_step(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` (once) so that it records ``optimizer._opt_called = True``: the
    first ``scheduler.step()`` uses it to warn when the two are called in the wrong order."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    func = optimizer.step.__func__  # type: ignore[attr-defined]
    # A weak reference: a closure over the optimizer itself, stored on the optimizer, would be
    # a reference cycle keeping it alive.
    opt_ref = weakref.ref(optimizer)

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opt = opt_ref()
        opt._opt_called = True  # type: ignore[union-attr]
        return func.__get__(opt, type(opt))(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    optimizer.step = wrapper  # type: ignore[method-assign]


def _warn_get_lr_called_within_step(scheduler: LRScheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)


def _check_schedulers(owner: str, optimizer: Optimizer, schedulers: Sequence[Any]) -> None:
    """SequentialLR's and ChainedScheduler's checks on the schedulers they drive."""
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has {scheduler.optimizer}, "
                f"which is different from {type(optimizer).__name__}.")


# -- the base class --------------------------------------------------------------------------------
class LRScheduler:
    """Base class of the learning-rate schedulers: subclasses implement :meth:`get_lr`.

    Args:
        optimizer: the optimizer whose ``group["lr"]`` values are scheduled.
        last_epoch: the index of the last epoch; -1 (default) starts the schedule. A resumed
            schedule (``last_epoch >= 0``) needs ``"initial_lr"`` in every group, which a fresh
            scheduler writes and ``optimizer.state_dict()`` keeps.

    Attributes: ``optimizer``, ``base_lrs`` (each group's ``initial_lr``), ``last_epoch``
    (the epoch of the current rates), ``_step_count`` (calls to ``step``, the constructor's
    included).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.zeros(1, requires_grad=True)
        >>> opt = optim.SGD([w], lr=0.5)
        >>> sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched.last_epoch, sched.base_lrs, opt.param_groups[0]["initial_lr"]
        (0, [0.5], 0.5)
        >>> opt.step(); sched.step(); sched.get_last_lr(), opt.param_groups[0]["lr"]
        ([0.25], 0.25)
    """

    # Class-level defaults; instances set their own (so they appear in state_dict(), as in
    # PyTorch) the first time a step runs.
    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)")
        self.base_lrs: list[LrT] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """The constructor's step: ``last_epoch`` -1 -> 0, the first rates into the groups."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer (PyTorch's layout).

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=0.1)
            >>> sorted(optim.lr_scheduler.StepLR(opt, 3).state_dict())
            ['_get_lr_called_within_step', '_is_initial', '_last_lr', '_step_count', 'base_lrs',
             'gamma', 'last_epoch', 'step_size']
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by :meth:`state_dict`.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=0.1)
            >>> a = optim.lr_scheduler.StepLR(opt, 3); b = optim.lr_scheduler.StepLR(opt, 7)
            >>> b.load_state_dict(a.state_dict()); b.step_size
            3
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[LrT]:
        """The rates the last step set, one per parameter group (copies, never the optimizer's
        own tensors).

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=0.1)
            >>> optim.lr_scheduler.ConstantLR(opt, factor=0.5).get_last_lr()
            [0.05]
        """
        return self._last_lr

    def get_lr(self) -> list[LrT]:
        """The next rates; called by :meth:`step` (calling it directly warns: use
        :meth:`get_last_lr`). Each scheduler defines its own."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr()")

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and write the new rates into the optimizer. Call it
        after ``optimizer.step()``; ``epoch`` (deprecated, warns) jumps to that epoch using the
        closed formula where the schedule has one.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
            >>> sched = optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
            >>> for _ in range(4):
            ...     opt.step(); sched.step()
            >>> sched.last_epoch, sched.get_last_lr()
            (4, [0.25])
        """
        # PyTorch >= 1.1 wants optimizer.step() first; the first scheduler step after the
        # constructor's is where the wrong order can still be noticed.
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    f"before `lr_scheduler.step()`. See more details at {_HOW_TO_ADJUST}",
                    UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. "
                    f"See more details at {_HOW_TO_ADJUST}", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr: list[LrT] = _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of :class:`LRScheduler`, kept as PyTorch keeps it."""


# -- schedules from a function of the epoch --------------------------------------------------------
def _lambdas(optimizer: Optimizer, lr_lambda: Any) -> list[Callable[[int], float]]:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaStateMixin:
    """state_dict/load_state_dict for schedulers holding ``lr_lambdas``: plain functions and
    lambdas are not saved (``None``); a callable object's ``__dict__`` is."""

    lr_lambdas: list[Callable[[int], float]]

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer; ``lr_lambdas`` as ``None`` for functions and
        ``__dict__`` copies for callable objects."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes, and the saved ``__dict__`` of callable-object lambdas."""
        saved = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = saved  # leave the caller's dict as it was
        for fn, fn_state in zip(self.lr_lambdas, saved, strict=False):
            if fn_state is not None:
                fn.__dict__.update(fn_state)


class LambdaLR(_LambdaStateMixin, LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``, one function for all groups or one per group.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda epoch: 1 / (epoch + 1))
        >>> for _ in range(3):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """``base_lr * lr_lambda(last_epoch)`` for each group."""
        _warn_get_lr_called_within_step(self)
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_LambdaStateMixin, LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` at every step after the first.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.5)
        >>> for _ in range(3):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.125]
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The current rates times ``lr_lambda(last_epoch)`` (unchanged at the initial step)."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


# -- decays ----------------------------------------------------------------------------------------
class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
        >>> lrs = []
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [1.0, 0.1, 0.1, 0.010000000000000002]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The current rates, times ``gamma`` at each non-zero multiple of ``step_size``."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each milestone epoch (by ``gamma**n`` for a milestone
    listed ``n`` times).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 2, 3], gamma=0.5)
        >>> lrs = []
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [1.0, 0.25, 0.125, 0.125]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The current rates, times ``gamma**count`` at a milestone."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma**passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> for _ in range(3):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The current rates times ``gamma`` (unchanged at the initial step, so a resumed
        scheduler does not decay twice)."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the rate by ``factor`` for the first ``total_iters`` epochs, then restore it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """``lr * factor`` at epoch 0, ``lr / factor`` at ``total_iters``, else unchanged."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        done = self.last_epoch >= self.total_iters
        return [base_lr * (self.factor + done * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rate by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs (a warm-up when ``start_factor < end_factor``).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """``lr * start_factor`` at epoch 0; then each step multiplies by the ratio of this
        epoch's factor to the previous one, until ``total_iters``."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        # factor(e) / factor(e - 1), with factor(e) = start + span * e / total_iters
        ratio = 1.0 + span / (self.total_iters * self.start_factor
                              + (self.last_epoch - 1) * span)
        return [g["lr"] * ratio for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        span = self.end_factor - self.start_factor
        return [base_lr * (self.start_factor
                           + span * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal the rate from ``base_lr`` to ``eta_min`` along half a cosine over ``T_max``
    epochs (and back up over the next ``T_max``, as PyTorch's does: there is no restart).

    The closed form is ``eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``;
    each step applies the ratio of consecutive values to the current rate (see NOTE
    [chainable form]).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
        >>> lrs
        [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The next rates of the cosine schedule, computed from the current ones."""
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            # a resumed scheduler's first step: the closed form at last_epoch
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # leaving the bottom of the cosine (rate eta_min): the ratio form would divide by 0
            return [g["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, g in zip(self.base_lrs, groups, strict=True)]
        ratio = ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                 / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)))
        return [ratio * (g["lr"] - self.eta_min) + self.eta_min for g in groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the rate to 0 over ``total_iters`` epochs along a polynomial of degree ``power``:
    ``base_lr * (1 - epoch / total_iters) ** power`` (linear with the default ``power=1``),
    then keep it at 0.

    Each step multiplies the current rate by the ratio of consecutive values (see NOTE
    [chainable form]).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(5):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The current rates times ``(remaining fraction / previous remaining fraction) **
        power``; unchanged at the initial step and after ``total_iters``."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * decay for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[LrT]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR): the rate falls from ``base_lr`` to
    ``eta_min`` along half a cosine over ``T_0`` epochs, jumps back to ``base_lr``, and falls
    again over ``T_0 * T_mult`` epochs, then ``T_0 * T_mult**2`` ...:

    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``

    where ``T_cur`` counts the epochs since the last restart and ``T_i`` is the current
    period. ``step(epoch)`` accepts a fractional epoch, to anneal within an epoch, batch by
    batch: ``sched.step(epoch + i / iters)`` (no deprecation warning here, unlike the other
    schedulers).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(6):
        ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
        >>> lrs  # restarts at epochs 2 and 6
        [1.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 1.0]
        >>> sched.step(6.5); round(sched.get_last_lr()[0], 4)  # a fractional epoch
        0.9904
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[LrT]:
        """The cosine's value at ``T_cur`` of the current period ``T_i``."""
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (may be fractional, e.g. ``epoch + i /
        iters`` after batch ``i``). Unlike :meth:`LRScheduler.step` it neither warns nor
        counts ``_step_count``, as in PyTorch.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
            >>> sched = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4)
            >>> sched.step(5.0); sched.T_cur, sched.T_i, sched.last_epoch
            (1.0, 4, 5)
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:  # a restart
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # the number n of completed periods: T_0 * (T_mult**n - 1) / (T_mult - 1)
                    # epochs lie before period n
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


# -- combining schedulers --------------------------------------------------------------------------
class SequentialLR(LRScheduler):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` (restarted at its
    epoch 0) until ``milestones[1]``, and so on; e.g. a linear warm-up, then a cosine decay.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> warmup = optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> decay = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The schedulers each took their constructor's step; start over from initial_lr and
        # take back those steps, then let only the first one take its initial step.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Take back one epoch from every scheduler nested in this one (an explicit stack walks
        nested SequentialLR/ChainedScheduler)."""
        stack = [self if sched is None else sched]
        while stack:
            s = stack.pop()
            if hasattr(s, "_schedulers"):
                stack.extend(reversed(s._schedulers))
            elif hasattr(s, "last_epoch"):
                s.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler of the current phase; at a milestone, restart the next one at
        its epoch 0 (with its closed form where it has one)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer, with each scheduler's own state dict."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and each scheduler's state."""
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved  # leave the caller's dict as it was
        for scheduler, scheduler_state in zip(self._schedulers, saved, strict=False):
            scheduler.load_state_dict(scheduler_state)


class ChainedScheduler(LRScheduler):
    """Step several schedulers of one optimizer together; their effects multiply (they all
    update the current rate, see NOTE [chainable form]).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> s1 = optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> s2 = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = optim.lr_scheduler.ChainedScheduler([s1, s2])
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.25, 0.25, 0.125]
    """

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer, with each scheduler's own state dict."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and each scheduler's state."""
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved
        for scheduler, scheduler_state in zip(self._schedulers, saved, strict=False):
            scheduler.load_state_dict(scheduler_state)


# -- driven by a metric ----------------------------------------------------------------------------
class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when a metric has not improved for more than
    ``patience`` epochs; ``step(metric)`` takes the metric.

    An epoch improves on the best so far when the metric beats it by more than ``threshold``
    (``rel``: a fraction of the best; ``abs``: an amount), downwards for ``mode="min"``,
    upwards for ``"max"``. After a reduction, ``cooldown`` epochs pass before bad epochs count
    again. Rates never go below ``min_lr``, and a reduction smaller than ``eps`` is skipped.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
        >>> lrs = []
        >>> for loss in [3.0, 2.0, 2.0, 2.0, 2.0, 1.0]:
        ...     opt.step(); sched.step(loss); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]
    """

    def __init__(self, optimizer: Optimizer, mode: Literal["min", "max"] = "min",
                 factor: float = 0.1, patience: int = 10, threshold: float = 1e-4,
                 threshold_mode: Literal["rel", "abs"] = "rel", cooldown: int = 0,
                 min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        """Forget the best value and the bad-epoch and cooldown counters."""
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric (a number or a one-element tensor); reduce the rates if
        it has not improved for more than ``patience`` epochs."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch: int) -> None:
        n_groups = len(self.optimizer.param_groups)
        if n_groups != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({n_groups}) differs from "
                    f"when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually "
                    "due to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * n_groups
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        """Whether epochs are still being ignored after the last reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes (and re-check mode and threshold mode)."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


# -- cycles ----------------------------------------------------------------------------------------
class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: the rate rises from ``max_lr / div_factor``
    to ``max_lr`` over the first ``pct_start`` of ``total_steps``, then falls to
    ``initial_lr / final_div_factor`` (``three_phase``: back to the initial rate, then down).
    With ``cycle_momentum`` the momentum (SGD's ``momentum`` or Adam's ``beta1``) moves the
    opposite way between ``max_momentum`` and ``base_momentum``.

    The groups receive ``initial_lr``, ``max_lr``, ``min_lr`` (and ``max_momentum``,
    ``base_momentum``) entries, as in PyTorch. Stepping past ``total_steps`` is an error.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
        ...                                       anneal_strategy="linear")
        >>> lrs, momenta = [sched.get_last_lr()[0]], [opt.param_groups[0]["momentum"]]
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
        ...     momenta.append(round(opt.param_groups[0]["momentum"], 6))
        >>> lrs, momenta
        ([0.04, 0.52, 1.0, 0.857143], [0.95, 0.9, 0.85, 0.864286])
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: Literal["cos", "linear"] = "cos",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        # Each phase: the step it ends at, and the group keys holding its start and end values.
        ramp_up = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(ramp_up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                       "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(ramp_up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                       "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(max_momentums, base_momentums,
                                                optimizer.param_groups, strict=True):
                    self._set_momentum(group, m_max)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        if self._anneal_func_type == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """From ``start`` (pct 0) to ``end`` (pct 1) along half a cosine."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        """From ``start`` (pct 0) to ``end`` (pct 1) along a straight line."""
        return (end - start) * pct + start

    def get_lr(self) -> list[LrT]:
        """The rates at step ``last_epoch``; also sets the momentum when cycling it."""
        _warn_get_lr_called_within_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]],
                                                 group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start_step = end_step
        return lrs


def _phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str,
           end_momentum: str) -> dict[str, Any]:
    """One phase of OneCycleLR, in PyTorch's dict layout (it is part of state_dict())."""
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
            "start_momentum": start_momentum, "end_momentum": end_momentum}


class CyclicLR(LRScheduler):
    """Cycle the rate between ``base_lr`` and ``max_lr`` (Smith's cyclical learning rates),
    stepped once per *batch*: up over ``step_size_up`` steps, down over ``step_size_down``
    (default: the same). ``mode`` scales each cycle's amplitude: ``"triangular"`` keeps it,
    ``"triangular2"`` halves it every cycle, ``"exp_range"`` multiplies it by
    ``gamma ** step``; or give your own ``scale_fn`` of the cycle number (``scale_mode="cycle"``)
    or of the step (``"iterations"``).

    With ``cycle_momentum`` (default) the momentum (SGD's ``momentum``, Adam's ``beta1``) moves
    the opposite way, from ``max_momentum`` at the bottom of the rate to ``base_momentum`` at
    its top; the groups receive ``max_momentum`` and ``base_momentum`` entries, as in PyTorch.
    The constructor sets every group's rate to ``base_lr``.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> opt = optim.SGD([gradviz.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> sched = optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2,
        ...                                     mode="triangular2")
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(8):
        ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
        >>> lrs
        [0.1, 0.3, 0.5, 0.3, 0.1, 0.2, 0.3, 0.2, 0.1]
        >>> round(opt.param_groups[0]["momentum"], 6)  # back at the bottom: max_momentum
        0.9
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None,
                 mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: Literal["cycle", "iterations"] = "cycle",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size  # the rising fraction of a cycle
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(self.max_momentums, self.base_momentums,
                                                optimizer.param_groups, strict=True):
                    self._set_momentum(group, m_max)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        # The constructor's step computes with base_lrs = the groups' initial_lr (as in
        # PyTorch); the cycle's own base_lr replaces them afterwards.
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _init_scale_fn(self) -> None:
        """The built-in scale function of ``mode`` (and its scale mode), unless a custom
        ``scale_fn`` was given. Not saved in state_dict(): load_state_dict() calls it again."""
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) ``x``: the custom ``scale_fn`` if given,
        else the one of ``mode``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def get_lr(self) -> list[LrT]:
        """The rates at step ``last_epoch`` (a closed formula, not chainable); also sets the
        momentum when cycling it."""
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # the position in the cycle, [0, 1)
        if x <= self.step_ratio:
            height = x / self.step_ratio  # rising
        else:
            height = (x - 1) / (self.step_ratio - 1)  # falling
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * height * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, m_base, m_max in zip(self.optimizer.param_groups, self.base_momentums,
                                            self.max_momentums, strict=True):
                self._set_momentum(group, m_max - (m_max - m_base) * height * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer and the built-in scale function; a custom
        ``scale_fn`` is saved as ``None`` (a function) or its ``__dict__`` (a callable
        object)."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_scale_fn_ref", "_scale_fn_custom")}
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else fn.__dict__.copy())
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes (and a callable object's saved ``__dict__``). As PyTorch's,
        it takes ``_scale_fn_custom`` out of ``state_dict``."""
        fn_state = state_dict.pop("_scale_fn_custom")
        self.__dict__.update(state_dict)
        if fn_state is not None:
            self._scale_fn_custom.__dict__.update(fn_state)  # type: ignore[union-attr]
        self._init_scale_fn()
