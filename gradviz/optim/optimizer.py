"""``gradviz.optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``step``.

The bookkeeping is PyTorch's (``param_groups`` as a list of dicts holding ``params`` plus the
hyperparameters, ``state`` keyed by parameter, the same ``state_dict`` layout and error texts).
Subclasses implement ``_update_group``: the update formula for one group, written with NumPy on
the parameters' arrays, in place (no graph is recorded; each update bumps the parameter's
version as an in-place op does).
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz._device import META_SEEN, meta_array
from gradviz.autograd.grad_mode import enable_grad, no_grad
from gradviz.tensor import Tensor

__all__ = ["Optimizer", "required"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


class _RequiredParameter:
    """Marks a hyperparameter every parameter group must give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    from gradviz.nn.modules.module import typename

    return typename(obj)


def _scalar(value: Any) -> float:
    """A hyperparameter as a Python number (a one-element tensor is accepted)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        return value.item()
    return value


class Optimizer:
    """Base class of the optimizers.

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs (e.g.
            ``model.named_parameters()``), or of dicts (parameter groups with their own
            hyperparameters).
        defaults: the default hyperparameters of every group.

    Example:
        >>> import gradviz
        >>> from gradviz import nn, optim
        >>> model = nn.Linear(2, 1)
        >>> opt = optim.SGD([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.5}],
        ...                 lr=0.1)
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.5]
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key not in ("params", "param_names"):
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyperparameters (missing ones take the
        optimizer's defaults), e.g. to train a newly unfrozen layer.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> a, b = gradviz.ones(1, requires_grad=True), gradviz.ones(1, requires_grad=True)
            >>> opt = optim.SGD([a], lr=0.1); opt.add_param_group({"params": [b], "lr": 0.01})
            >>> len(opt.param_groups)
            2
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_typename(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors: to ``None`` (default) or to zeros.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> w = gradviz.ones(2, requires_grad=True); (w * 3).sum().backward()
            >>> opt = optim.SGD([w], lr=0.1); opt.zero_grad(); w.grad is None
            True
        """
        from gradviz.nn.modules.module import reset_grad

        for group in self.param_groups:
            for p in group["params"]:
                reset_grad(p, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place. ``closure`` (optional)
        re-evaluates the model and returns the loss; it runs with gradients enabled.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> w = gradviz.tensor([1.0], requires_grad=True)
            >>> opt = optim.SGD([w], lr=0.1)
            >>> (w * w).sum().backward(); opt.step(); w
            tensor([0.8000], requires_grad=True)
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                # ._grad: the parameters are leaves (add_param_group refuses others), whose
                # .grad is ._grad without the property's non-leaf check
                params = [p for p in group["params"] if p._grad is not None]
                if params:
                    # (one truth test until a meta tensor was ever made)
                    if META_SEEN[0] and any(p.is_meta for p in params):
                        self._update_on_meta(group, params)
                    else:
                        self._update_group(group, params)
                    for p in params:
                        p._version_counter.version += 1  # an in-place write, as param.add_()
        return loss

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """Apply the update formula to ``params`` (those of ``group`` that have a gradient)."""
        raise NotImplementedError

    def _update_on_meta(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """``_update_group`` where some parameters are meta (NOTE [meta device] in
        gradviz/_device.py): they, their gradients and their state show writable zeros while
        the formula runs, then they, and the state of their shape (momentum buffers,
        moments), are meta; a 0-dim ``step`` stays on the CPU, as in PyTorch."""
        shown = []
        for p in params:
            if p.is_meta:
                grad = p._grad
                shown.append((p, grad, grad.is_meta))
                for t in (p, grad, *self.state.get(p, {}).values()):
                    if isinstance(t, Tensor) and t.is_meta:
                        t._data = np.zeros(t._data.shape, t._data.dtype)
        try:
            with np.errstate(all="ignore"):
                self._update_group(group, params)
        finally:
            for p, grad, grad_meta in shown:
                p._data = meta_array(p._data.shape, p._data.dtype)
                if grad_meta:
                    grad._data = meta_array(grad._data.shape, grad._data.dtype)
                for v in self.state.get(p, {}).values():
                    if isinstance(v, Tensor) and v._data.shape == p._data.shape:
                        v._data = meta_array(v._data.shape, v._data.dtype)

    # -- state dict ------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: state}, "param_groups": [group with "params" as indices]}``: the
        optimizer's state with parameters replaced by their position (PyTorch's layout).

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> w = gradviz.ones(1, requires_grad=True)
            >>> optim.SGD([w], lr=0.1).state_dict()["param_groups"][0]["params"]
            [0]
        """
        mappings: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mappings.update({id(p): i for i, p in enumerate(group["params"], start)
                             if id(p) not in mappings})
            packed["params"] = [mappings[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mappings[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state saved with :meth:`state_dict` (values are deep-copied; floating point
        state is cast to its parameter's dtype, except ``step``).

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> w = gradviz.ones(1, requires_grad=True)
            >>> a = optim.Adam([w], lr=0.1); b = optim.Adam([w], lr=0.5)
            >>> b.load_state_dict(a.state_dict()); b.param_groups[0]["lr"]
            0.1
        """
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens, strict=True)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups), strict=True))

        def cast(param: Tensor, value: Any) -> Any:
            """A copy of one parameter's state with its float tensors in the parameter's dtype
            (``step`` excepted), as PyTorch loads it: a stack of what is still to copy, each
            with the container and slot it goes to and the dict key it sits under."""
            out: list[Any] = [None]
            stack: list[tuple[Any, Any, Any, Any]] = [(value, out, 0, None)]
            sequences: list[tuple[Any, Any, type]] = []  # made as lists, retyped at the end
            while stack:
                item, into, slot, key = stack.pop()
                if isinstance(item, Tensor):
                    arr = item._data.copy()
                    if key != "step" and arr.dtype.kind == "f":
                        arr = arr.astype(param._data.dtype)
                    into[slot] = Tensor._make(arr)
                elif isinstance(item, dict):
                    into[slot] = fields = dict.fromkeys(item)
                    stack.extend((v, fields, k, k) for k, v in item.items())
                elif isinstance(item, (list, tuple)):
                    into[slot] = parts = [None] * len(item)
                    sequences.append((into, slot, type(item)))
                    stack.extend((v, parts, i, None) for i, v in enumerate(item))
                else:
                    into[slot] = copy.deepcopy(item)
            for into, slot, kind in reversed(sequences):  # inner ones first
                into[slot] = kind(into[slot])
            return out[0]

        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [
            update_group(g, ng) for g, ng in zip(groups, saved_groups, strict=True)]})


def _scalar_step_dtype() -> np.dtype:
    """The dtype of ``state["step"]``: float64 when that is the default dtype, else float32
    (PyTorch's ``_get_scalar_dtype``)."""
    d = _dtype.get_default_dtype()
    return np.dtype(np.float64) if d is _dtype.float64 else np.dtype(np.float32)


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start.lerp_(end, weight)`` in place, evaluated as PyTorch's lerp kernel does (from the
    nearer end, so that the rounding matches torch's moving averages bit for bit)."""
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def _check_adam_args(lr: Any, eps: float, betas: tuple[Any, Any], weight_decay: float) -> float:
    """The checks Adam and its variants make of their arguments, in PyTorch's order and words;
    returns ``lr`` as a float."""
    lr = _scalar(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    return lr


def _fresh_state(state: dict[str, Any], like: np.ndarray, *names: str) -> None:
    """A parameter's first state, in PyTorch's key order: ``step`` (a zero scalar of
    PyTorch's dtype for it), then a zero array like the parameter for each of ``names``."""
    state["step"] = Tensor._make(np.zeros((), dtype=_scalar_step_dtype()))
    for name in names:
        state[name] = Tensor._make(np.zeros_like(like))
