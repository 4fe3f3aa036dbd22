"""Replay a backward run's steps: the engine's state after step ``k``, as plain data.

Every step renderer (``draw_step``, the terminal table, the HTML player) shows the same state,
computed here from the recorded events only: ``compute_dependencies`` sets the dependency
counts, ``accumulate`` updates the receiving node's count (``remaining``) and puts a gradient on
an edge, ``enqueue``/``execute`` report the ready queue, ``leaf_grad`` writes a leaf's ``.grad``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gradviz.trace.model import BackwardRun, Step

__all__ = ["StepState", "replay", "states"]


@dataclass
class StepState:
    """The engine's state right after one step.

    ``edge_grads`` maps ``(from node, to node, input_nr)`` to the gradients sent along that edge
    so far (a list: the same edge can carry several, e.g. ``x * x``).
    """

    step: Step
    executing: str | None = None
    ready: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # executed before the current node, in order
    deps: dict[str, int] = field(default_factory=dict)
    edge_grads: dict[tuple[str, str, int], list[Any]] = field(default_factory=dict)
    leaf_grads: dict[str, Any] = field(default_factory=dict)  # tensor id -> .grad after
    finished: bool = False


def states(run: BackwardRun) -> Iterator[StepState]:
    """The state after each step of ``run``, in order, in one pass (O(steps) in all).

    The same :class:`StepState` object is updated in place and yielded again: copy what you
    keep (:func:`replay` returns a copy).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> [s.executing is not None for s in states(tr.run())][:3]
        [False, False, True]
    """
    if not run.steps:
        return
    st = StepState(step=run.steps[0])
    for step in run.steps:
        st.step = step
        d = step.data
        if step.kind == "compute_dependencies":
            st.deps = dict(d.get("counts", {}))
        elif step.kind == "enqueue":
            st.ready = list(d.get("ready", st.ready))
        elif step.kind == "execute":
            if st.executing is not None:
                st.done.append(st.executing)
            st.executing = step.node
            st.ready = list(d.get("ready", st.ready))
        elif step.kind == "accumulate":
            if step.node is not None and "remaining" in d:
                st.deps[step.node] = d["remaining"]
            key = (d.get("source"), step.node, d.get("input_nr", 0))
            st.edge_grads.setdefault(key, []).append(d.get("grad"))  # type: ignore[arg-type]
        elif step.kind == "leaf_grad":
            if d.get("tensor") is not None:
                st.leaf_grads[d["tensor"]] = d.get("after")
        elif step.kind in ("done", "error"):
            if st.executing is not None:
                st.done.append(st.executing)
            st.executing = None
            st.ready = []
            st.finished = True
        yield st


def replay(run: BackwardRun, k: int) -> StepState:
    """A copy of the state right after step ``k`` of ``run`` (negative ``k`` counts from the end).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> replay(tr.run(), -1).finished
        True
    """
    n = len(run.steps)
    if not n:
        raise IndexError(f"run {run.id} has no steps")
    if not -n <= k < n:
        raise IndexError(f"step {k} out of range: run {run.id} has {n} steps (0..{n - 1})")
    k %= n
    for i, st in enumerate(states(run)):
        if i == k:
            return StepState(step=st.step, executing=st.executing, ready=list(st.ready),
                             done=list(st.done), deps=dict(st.deps),
                             edge_grads={e: list(g) for e, g in st.edge_grads.items()},
                             leaf_grads=dict(st.leaf_grads), finished=st.finished)
    raise AssertionError("unreachable")
