"""``gradviz.optim.LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search, as
``torch.optim.LBFGS`` computes it (itself after Mark Schmidt's minFunc).

NOTE [LBFGS scalars] PyTorch keeps the scalars of the algorithm (dot products, ``ro``,
``H_diag``, the step length ``t`` ...) as 0-dim tensors of the parameters' dtype, mixed with
Python floats (the loss, the learning rate). Here they are NumPy scalars of that dtype, which
mix with Python floats the same way (NumPy 2's promotion keeps ``float32 * 0.5`` in float32,
as torch does with a wrapped Python number), so float32 runs round where torch's round. The
state stores them as 0-dim tensors, as PyTorch's state does, and a value that torch keeps as a
Python number (``t = lr``, ``H_diag = 1``, ``prev_loss``) stays one.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from gradviz.autograd.grad_mode import enable_grad, no_grad
from gradviz.optim.optimizer import Optimizer, ParamsT, _scalar
from gradviz.tensor import Tensor

__all__ = ["LBFGS"]

Scalar = Any  # a Python number or a NumPy scalar of the parameters' dtype (NOTE [LBFGS scalars])


def _cubic_interpolate(x1: Scalar, f1: Scalar, g1: Scalar, x2: Scalar, f2: Scalar,
                       g2: Scalar, bounds: tuple[Scalar, Scalar] | None = None) -> Scalar:
    """The minimiser of the cubic through two points given by their position ``x``, value
    ``f`` and slope ``g``, clamped to ``bounds`` (default: between the two points); the
    middle of the bounds when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = np.sqrt(d2_square)
    # measured from the farther point of the two
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


# A point of the line search: (step length t, loss f, flat gradient g, slope g . d).
_Point = tuple[Scalar, float, np.ndarray, Scalar]


def _strong_wolfe(evaluate: Callable[[Scalar], tuple[float, np.ndarray]], t: Scalar,
                  d: np.ndarray, f: float, g: np.ndarray, gtd: Scalar, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, Scalar, int]:
    """A step length along ``d`` satisfying the strong Wolfe conditions (enough decrease:
    ``f(t) <= f + c1 * t * gtd``; a flat enough slope: ``|g(t) . d| <= -c2 * gtd``), found
    by PyTorch's two phases: grow ``t`` until an interval brackets such a point, then shrink the
    interval by cubic interpolation ("zoom"). ``evaluate(t)`` returns the loss and the flat
    gradient at ``x + t * d``. Returns the loss, gradient and ``t`` of the best point, and the
    number of evaluations."""
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d)
    prev: _Point = (0, f, g, gtd)
    bracket: list[_Point] = []
    done = False
    ls_iter = 0
    # -- phase 1: bracketing --------------------------------------------------------------------
    while ls_iter < max_ls:
        new: _Point = (t, f_new, g_new, gtd_new)
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= prev[1]):
            bracket = [prev, new]  # too far: the point lies between the last two
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [new], True  # this point already satisfies both conditions
            break
        if gtd_new >= 0:
            bracket = [prev, new]  # the slope turned upwards: a minimum lies in between
            break
        # still going down steeply: extrapolate, between 1.01 and 10 times the last step
        t_next = _cubic_interpolate(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev = new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter >= max_ls:  # out of evaluations: from 0 to the last point tried
        bracket = [(0, f, g, gtd), (t, f_new, g_new, gtd_new)]

    # -- phase 2: zoom ----------------------------------------------------------------------------
    def low_high() -> tuple[int, int]:
        return (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)

    low, high = low_high()
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        (t_a, f_a, _, gtd_a), (t_b, f_b, _, gtd_b) = bracket
        if abs(t_b - t_a) * d_norm < tolerance_change:
            break  # the interval is too small to matter
        t = _cubic_interpolate(t_a, f_a, gtd_a, t_b, f_b, gtd_b)
        # A trial point too close to an end of the interval makes little progress: the second
        # time in a row (or when it falls on or beyond an end), move it to a tenth of the
        # interval's length from the nearer end.
        t_max, t_min = max(t_a, t_b), min(t_a, t_b)
        eps = 0.1 * (t_max - t_min)
        if min(t_max - t, t - t_min) < eps:
            if insufficient_progress or t >= t_max or t <= t_min:
                t = t_max - eps if abs(t - t_max) < abs(t - t_min) else t_min + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        new = (t, f_new, g_new, gtd_new)
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = new  # not low enough: it closes the interval from above
            low, high = low_high()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]  # the minimum is on the other side of it
            bracket[low] = new
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


def _as_state(value: Any) -> Any:
    """An array or NumPy scalar as a tensor (a 0-dim one for a scalar); anything else as is."""
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._make(np.array(value))
    return value


def _from_state(value: Any) -> Any:
    """A state tensor as the NumPy value the algorithm works with (a scalar for 0-dim)."""
    if isinstance(value, Tensor):
        return value._data[()] if value._data.ndim == 0 else value._data
    return value


def _loss_value(loss: Any) -> float:
    """The closure's loss as a float (detached first: PyTorch's ``float(loss)`` under no_grad
    does not warn about a tensor that requires grad)."""
    return float(loss.detach() if isinstance(loss, Tensor) else loss)


def _list_as_state(values: list[Any] | None) -> list[Any] | None:
    return None if values is None else [_as_state(v) for v in values]


def _list_from_state(values: list[Any] | None) -> list[Any] | None:
    return None if values is None else [_from_state(v) for v in values]


class LBFGS(Optimizer):
    r"""L-BFGS: a quasi-Newton method that estimates the inverse Hessian from the last
    ``history_size`` steps and gradients. One :meth:`step` runs up to ``max_iter`` iterations
    and so calls ``closure`` several times: it must clear the gradients, compute the loss,
    call ``backward`` and return the loss.

    Each iteration (PyTorch's, over all parameters flattened into one vector ``x``):

    .. code-block:: text

        first iteration: d = -g,  t = min(1, 1 / sum|g|) * lr
        then: y = g - g_prev, s = t * d; keep (y, s, ro = 1 / y.s) if y.s > 1e-10, dropping the
              oldest pair beyond history_size, and H_diag = y.s / y.y;
              d = -H g by the two-loop recursion over the kept pairs;  t = lr
        x = x + t * d   (with line_search_fn="strong_wolfe": t from a strong-Wolfe search)

    It stops when the gradient is small (``max |g| <= tolerance_grad``), the step or the loss
    change is small (``tolerance_change``), ``d`` is not a descent direction, or after
    ``max_iter`` iterations or ``max_eval`` closure calls. The memory is kept across steps, in
    the state of the first parameter (``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``,
    ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``), as in PyTorch.
    Only one parameter group is supported.

    Args:
        params: the tensors to optimize (one group).
        lr: learning rate (default 1).
        max_iter: iterations per :meth:`step` (default 20).
        max_eval: closure calls per :meth:`step` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this (default 1e-7).
        tolerance_change: stop when the step or the loss changes by less (default 1e-9).
        history_size: the number of step/gradient pairs kept (default 100).
        line_search_fn: ``None`` (a fixed step ``lr``) or ``"strong_wolfe"``.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - gradviz.tensor([3.0, 4.0])) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> loss = opt.step(closure); w
        tensor([3., 4.], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        lr = _scalar(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self) -> list[Tensor]:
        return self.param_groups[0]["params"]

    # -- the parameters as one flat vector --------------------------------------------------------
    def _gather_flat_grad(self) -> np.ndarray:
        """Every parameter's gradient flattened and concatenated (zeros for a missing one)."""
        return np.concatenate([p._grad._data.reshape(-1) if p._grad is not None
                               else np.zeros(p._data.size, p._data.dtype)
                               for p in self._params])

    def _add_grad(self, step_size: Scalar, update: np.ndarray) -> None:
        """``x += step_size * update``, each parameter taking its slice, in place."""
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            p._version_counter.version += 1  # an in-place write, as p.add_()
            offset += n

    def _set_param(self, values: list[np.ndarray]) -> None:
        for p, value in zip(self._params, values, strict=True):
            p._data[...] = value
            p._version_counter.version += 1  # as p.copy_()

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[np.ndarray],
                              d: np.ndarray, t: Scalar) -> tuple[float, np.ndarray]:
        """The loss and flat gradient at ``x + t * d``; the parameters go back to ``x``."""
        self._add_grad(t, d)
        with enable_grad():
            loss = _loss_value(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` iterations of L-BFGS; ``closure`` (required) re-evaluates
        the model and returns the loss. Returns the loss of the first evaluation.

        Example:
            >>> import gradviz
            >>> from gradviz import optim
            >>> w = gradviz.tensor([0.0], requires_grad=True)
            >>> opt = optim.LBFGS([w], max_iter=5)
            >>> def closure():
            ...     opt.zero_grad(); loss = ((w - 1) ** 2).sum(); loss.backward()
            ...     return loss
            >>> opt.step(closure).item(), w.item(), opt.state[w]["n_iter"]  # one iteration
            (1.0, 1.0, 1)
        """
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = _scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # L-BFGS's state is global; PyTorch keeps it with the first parameter (so that
        # load_state_dict casts its tensors to that parameter's dtype).
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = _loss_value(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss  # already optimal

        # the memory of earlier steps (None before the first)
        d, t, prev_flat_grad, prev_loss, h_diag = (_from_state(state.get(k)) for k in (
            "d", "t", "prev_flat_grad", "prev_loss", "H_diag"))
        old_dirs, old_stps, ro, al = (_list_from_state(state.get(k))
                                      for k in ("old_dirs", "old_stps", "ro", "al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # -- the descent direction ----------------------------------------------------------
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # curvature condition: keep the pair
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)  # the scale of the initial inverse Hessian
                if al is None:
                    # PyTorch adds it to the state here (so it comes before "d" in the keys)
                    al = state["al"] = [None] * history_size
                # the two-loop recursion: d = -H g, newest pair first, then oldest first
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(d) * ro[i]
                    d += (al[i] - be_i) * old_stps[i]

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # -- the step length ----------------------------------------------------------------
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)  # the slope along d
            if gtd > -tolerance_change:
                break  # not a descent direction (any more)

            evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._params]
                evaluate = partial(self._directional_evaluate, closure, x_init, d)
                loss, flat_grad, t, evals = _strong_wolfe(evaluate, t, d, loss, flat_grad, gtd,
                                                          max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)  # a fixed step
                opt_cond = False
                if n_iter != max_iter:
                    # the last iteration does not re-evaluate: the next step() will
                    with enable_grad():
                        loss = _loss_value(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals

            # -- stopping conditions ------------------------------------------------------------
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break  # the step is too small
            if abs(loss - prev_loss) < tolerance_change:
                break  # the loss does not change

        if al is not None:
            state["al"] = _list_as_state(al)
        state["d"] = _as_state(d)
        state["t"] = _as_state(t)
        state["old_dirs"] = _list_as_state(old_dirs)
        state["old_stps"] = _list_as_state(old_stps)
        state["ro"] = _list_as_state(ro)
        state["H_diag"] = _as_state(h_diag)
        state["prev_flat_grad"] = _as_state(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
