"""Replay a backward run's steps into the engine's states, once, as plain data.

NOTE [one replay] Every step renderer (``draw_step``, the terminal, the HTML player) shows the
same engine state, and this module is the only place that derives it from the recorded steps.
It does so in one pass into a :class:`Timeline`: for each thing that changes, the steps at
which it changes. The state after step ``k`` is then a lookup (``at <= k``), which is what the
player's JavaScript does with the timeline handed to it (render/html.py): it displays, it never
re-derives the engine's rules. A timeline is linear in the run's steps (no state per step).

The rules, from the recorded events only:

* ``compute_dependencies`` sets every node's dependency count; ``accumulate`` sets the
  receiving node's count to ``remaining`` and puts its gradient on the edge
  ``(source, node, input_nr)``; the input buffer slot held, before the addition, what the last
  ``accumulate`` into that slot left there (nothing, for the first).
* ``enqueue`` pushes a node with its priority; the queue is ordered by ``(priority, arrival)``.
  The engine pops the first node; an ``execute`` step is the node it popped, and every queued
  node ahead of it was popped before it and skipped (``autograd.grad`` pops a node whose
  gradient it only captures, without running it). ``done`` and ``error`` empty the queue.
* ``execute`` makes its node the executing one; it is finished at the next ``execute``,
  ``done`` or ``error``.
* ``leaf_grad`` writes a leaf's ``.grad``; ``release_saved`` frees the node's saved tensors.
* An input buffer slot holds what the last ``accumulate`` into it left there until the engine
  pops its node (the node's ``execute``, or a pop that skips it): the node consumes its buffer.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any

from gradviz.trace.model import BackwardRun, NodeInfo, Step, TensorInfo, nbytes

__all__ = ["Timeline", "StepState", "timeline", "state_at", "states", "replay", "Memory",
           "memory"]


@dataclass
class Timeline:
    """When each part of the engine's state changed during one run (NOTE [one replay]).

    Step numbers are indices into ``run.steps``; ``end``/``leave`` is ``None`` for what lasts
    to the end of the run.

    Attributes:
        executed: ``[node, begin, end]`` per ``execute`` step, in order: ``node`` is the
            executing one at steps ``begin <= k < end`` and finished from ``end`` on.
        queue: ``[node, enter, leave]`` per push, in the queue's order (by priority, then
            arrival): at step ``k`` the ready queue is the entries with
            ``enter <= k < leave``, in this order.
        deps: node -> ``[[step, count], ...]``, the dependency count from each step on.
        edge_grads: ``[step, source, node, input_nr, grad]`` per gradient sent, in order.
        leaf_grads: tensor id -> ``{"before": .grad before the run, "at": [[step, .grad]]}``.
        buffer_before: accumulate step -> the input buffer slot before the addition (the step's
            ``buffer`` is the slot after it).
        buffers: ``[node, input_nr, grad, enter, leave]`` per ``accumulate``, in order: at step
            ``k`` the slot ``input_nr`` of ``node``'s input buffer holds ``grad`` if
            ``enter <= k < leave`` (until the next addition to the slot, or its node is popped).
        freed: release_saved step -> the names of the saved tensors it freed.
        finished: the ``done``/``error`` step, or None.
    """

    executed: list[list[Any]] = field(default_factory=list)
    queue: list[list[Any]] = field(default_factory=list)
    deps: dict[str, list[list[int]]] = field(default_factory=dict)
    edge_grads: list[list[Any]] = field(default_factory=list)
    leaf_grads: dict[str, dict[str, Any]] = field(default_factory=dict)
    buffer_before: dict[int, Any] = field(default_factory=dict)
    buffers: list[list[Any]] = field(default_factory=list)
    freed: dict[int, list[str]] = field(default_factory=dict)
    finished: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (step keys as strings), as the player reads it. ``edge_grads`` is left
        out: the page has the gradients in the steps themselves (``execute.grad_inputs``); so
        are the buffers' contents: ``buffers`` entries are ``[node, input_nr, enter, leave]``,
        the slot holding the ``buffer`` of the accumulate step ``enter``."""
        return {"executed": self.executed, "queue": self.queue, "deps": self.deps,
                "leafGrads": self.leaf_grads,
                "bufferBefore": {str(k): v for k, v in self.buffer_before.items()},
                "buffers": [[node, nr, enter, leave] for node, nr, _, enter, leave in self.buffers],
                "freed": {str(k): v for k, v in self.freed.items()},
                "finished": self.finished}


def timeline(run: BackwardRun) -> Timeline:
    """The :class:`Timeline` of ``run``, in one pass over its steps (O(steps log width)).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> tl = timeline(tr.run())
        >>> [(tr.nodes[n].name, begin) for n, begin, _ in tl.executed]
        [('SumBackward0', 2), ('MulBackward0', 5), ('AccumulateGrad', 9)]
    """
    tl = Timeline()
    heap: list[tuple[int, int, list[Any]]] = []  # (priority, arrival, queue entry)
    pushed: list[tuple[int, int, list[Any]]] = []
    filled: dict[str | None, dict[int, list[Any]]] = {}  # node -> input_nr -> open buffers entry
    current: list[Any] | None = None
    queued: dict[str | None, int] = {}  # node -> how many of its pushes are still queued
    for step in run.steps:
        k, kind = step.index, step.kind
        if kind == "accumulate":
            tl.deps.setdefault(step.node, []).append([k, step.remaining])  # type: ignore
            tl.edge_grads.append([k, step.source, step.node, step.input_nr, step.grad])
            slots = filled.setdefault(step.node, {})
            last = slots.get(step.input_nr)
            tl.buffer_before[k] = None if last is None else last[2]
            if last is not None:
                last[4] = k
            slots[step.input_nr] = entry = [step.node, step.input_nr, step.buffer, k, None]
            tl.buffers.append(entry)
        elif kind == "enqueue":
            entry = [step.node, k, None]
            key = (step.priority, len(pushed), entry)
            pushed.append(key)
            heappush(heap, key)
            queued[step.node] = queued.get(step.node, 0) + 1
        elif kind == "execute":
            # The engine popped this node, and before it every node queued ahead of it (an
            # engine without a queue, MXNet's, executes nodes it never queued).
            while queued.get(step.node):
                entry = heappop(heap)[2]
                entry[2] = k
                queued[entry[0]] -= 1
                for slot in filled.pop(entry[0], {}).values():  # popped: its buffer is taken
                    slot[4] = k
                if entry[0] == step.node:
                    break
            for slot in filled.pop(step.node, {}).values():  # executed without a push (MXNet)
                slot[4] = k
            if current is not None:
                current[2] = k
            current = [step.node, k, None]
            tl.executed.append(current)
        elif kind == "compute_dependencies":
            for node, count in step.counts.items():
                tl.deps.setdefault(node, []).append([k, count])
        elif kind == "leaf_grad":
            entry_grads = tl.leaf_grads.setdefault(step.tensor, {"before": step.before, "at": []})
            entry_grads["at"].append([k, step.after])
        elif kind == "release_saved":
            tl.freed[k] = list(step.saved)
        elif kind in ("done", "error"):
            while heap:
                heappop(heap)[2][2] = k
            queued.clear()
            if current is not None:
                current[2] = k
                current = None
            tl.finished = k
    tl.queue = [key[2] for key in sorted(pushed, key=lambda key: key[:2])]
    return tl


@dataclass
class StepState:
    """The engine's state right after one step (what every step renderer shows).

    ``edge_grads`` maps ``(from node, to node, input_nr)`` to the gradients sent along that edge
    so far (a list: the same edge can carry several, e.g. ``x * x``). For an ``accumulate``
    step, ``buffer_before``/``buffer_after`` are the receiving input buffer slot before and
    after the addition; for a ``release_saved`` step, ``freed`` names the saved tensors freed.
    ``buffers`` maps each node with gradients waiting in its input buffer to ``{input_nr:
    grad}`` (what it received and has not consumed yet).
    """

    step: Step
    executing: str | None = None
    ready: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # executed before the current node, in order
    deps: dict[str, int] = field(default_factory=dict)
    edge_grads: dict[tuple[str, str, int], list[Any]] = field(default_factory=dict)
    leaf_grads: dict[str, Any] = field(default_factory=dict)  # tensor id -> .grad after
    finished: bool = False
    buffer_before: Any = None
    buffer_after: Any = None
    freed: list[str] = field(default_factory=list)
    buffers: dict[str, dict[int, Any]] = field(default_factory=dict)


def state_at(run: BackwardRun, tl: Timeline, k: int) -> StepState:
    """The state right after step ``k`` (``0 <= k < len(run.steps)``), looked up in ``tl``.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> run = tr.run()
        >>> [tr.nodes[n].name for n in state_at(run, timeline(run), 4).ready]
        ['MulBackward0']
    """
    step = run.steps[k]
    st = StepState(step=step, finished=tl.finished is not None and tl.finished <= k)
    for node, begin, end in tl.executed:
        if begin > k:
            break
        if end is not None and end <= k:
            st.done.append(node)
        else:
            st.executing = node
    st.ready = [e[0] for e in tl.queue if e[1] <= k and (e[2] is None or k < e[2])]
    for node, changes in tl.deps.items():
        last = None
        for at, count in changes:
            if at > k:
                break
            last = count
        if last is not None:
            st.deps[node] = last
    for at, source, node, input_nr, grad in tl.edge_grads:
        if at > k:
            break
        st.edge_grads.setdefault((source, node, input_nr), []).append(grad)
    for tensor, grads in tl.leaf_grads.items():
        seen = [g for at, g in grads["at"] if at <= k]
        if seen:
            st.leaf_grads[tensor] = seen[-1]
    for node, input_nr, grad, enter, leave in tl.buffers:
        if enter > k:
            break
        if leave is None or k < leave:
            st.buffers.setdefault(node, {})[input_nr] = grad
    if step.kind == "accumulate":
        st.buffer_before, st.buffer_after = tl.buffer_before.get(k), step.buffer
    elif step.kind == "release_saved":
        st.freed = list(tl.freed.get(k, ()))
    return st


def states(run: BackwardRun) -> Iterator[StepState]:
    """The state after each step of ``run``, in order, in one pass (O(steps) updates).

    The same :class:`StepState` object is updated and yielded again: copy what you keep
    (``ready`` is a new list whenever the queue changes; ``done``, ``deps``, ``edge_grads``,
    ``leaf_grads`` and ``buffers`` change in place). :func:`replay` and :func:`state_at` return
    one of their own.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> [s.executing is not None for s in states(tr.run())][:3]
        [False, False, True]
    """
    if not run.steps:
        return
    tl = timeline(run)
    # What changes at each step, from the timeline (NOTE [one replay]: no rule is re-derived).
    enter: dict[int, list[int]] = {}
    leave: dict[int, list[int]] = {}
    for rank, (_node, at, until) in enumerate(tl.queue):
        enter.setdefault(at, []).append(rank)
        if until is not None:
            leave.setdefault(until, []).append(rank)
    begins = {begin: node for node, begin, _ in tl.executed}
    ends = {end for _, _, end in tl.executed if end is not None}
    dep_changes: dict[int, list[tuple[str, int]]] = {}
    for node, changes in tl.deps.items():
        for at, count in changes:
            dep_changes.setdefault(at, []).append((node, count))
    leaf_changes = {at: (tensor, g) for tensor, grads in tl.leaf_grads.items()
                    for at, g in grads["at"]}
    fills: dict[int, list[list[Any]]] = {}
    takes: dict[int, list[list[Any]]] = {}
    for entry in tl.buffers:
        fills.setdefault(entry[3], []).append(entry)
        if entry[4] is not None:
            takes.setdefault(entry[4], []).append(entry)
    ranks: list[int] = []  # the queued entries' ranks, sorted, beside st.ready
    sent = iter(tl.edge_grads)
    pending = next(sent, None)
    st = StepState(step=run.steps[0])
    for step in run.steps:
        k = step.index
        st.step = step
        if k in leave or k in enter:
            # A new list when the queue changes (a copy of a state keeps its queue); the same
            # one otherwise: linear in the queue's width per change, never per step.
            ready = list(st.ready)
            for rank in leave.get(k, ()):
                i = bisect_left(ranks, rank)
                del ranks[i], ready[i]
            for rank in enter.get(k, ()):
                i = bisect_left(ranks, rank)
                ranks.insert(i, rank)
                ready.insert(i, tl.queue[rank][0])
            st.ready = ready
        if k in ends and st.executing is not None:
            st.done.append(st.executing)
            st.executing = None
        if k in begins:
            st.executing = begins[k]
        for node, count in dep_changes.get(k, ()):
            st.deps[node] = count
        while pending is not None and pending[0] == k:
            st.edge_grads.setdefault((pending[1], pending[2], pending[3]), []).append(pending[4])
            pending = next(sent, None)
        if k in leaf_changes:
            tensor, g = leaf_changes[k]
            st.leaf_grads[tensor] = g
        for node, input_nr, _grad, _enter, _leave in takes.get(k, ()):
            slots = st.buffers.get(node)
            if slots is not None:
                slots.pop(input_nr, None)
                if not slots:
                    del st.buffers[node]
        for node, input_nr, grad, _enter, _leave in fills.get(k, ()):
            st.buffers.setdefault(node, {})[input_nr] = grad
        st.finished = tl.finished is not None and tl.finished <= k
        st.buffer_before = tl.buffer_before.get(k) if step.kind == "accumulate" else None
        st.buffer_after = step.buffer if step.kind == "accumulate" else None  # type: ignore
        st.freed = list(tl.freed.get(k, ()))
        yield st


def replay(run: BackwardRun, k: int) -> StepState:
    """The state right after step ``k`` of ``run`` (negative ``k`` counts from the end).

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
    return state_at(run, timeline(run), k % n)


# -- memory ---------------------------------------------------------------------------------------
# NOTE [memory] What a run holds at each step, in bytes (elements x element size, as
# ``t.element_size() * t.numel()`` gives it), derived from the recorded steps as the rest of the
# engine's state is (NOTE [one replay]):
# * saved activations: the distinct non-leaf tensors the run's nodes save (a tensor saved by two
#   nodes counts once), held from the run's start until the last node saving it frees its saved
#   tensors (``release_saved``; with ``retain_graph=True`` no node frees them and the curve stays
#   flat). A leaf (a parameter, an input) is left out: the program holds it whatever the graph
#   does. A node's saved result is the output of it with that shape (a node saves its output
#   without naming it; one not recorded counts per node). A saved input that is no recorded
#   tensor is a constant (the 2 of ``x * 2``) or what a pack hook returned: not counted;
# * input buffers: the gradients waiting in input buffers (``Timeline.buffers``), each slot's
#   sum so far, until its node takes it.
@dataclass
class Memory:
    """Bytes a backward run holds, after each step (NOTE [memory]).

    Attributes:
        saved: bytes of saved activations right after each step.
        buffers: bytes of gradients waiting in input buffers right after each step.
        per_node: node id -> bytes of the activations it saves (a tensor two nodes save counts
            in both).
    """

    saved: list[int] = field(default_factory=list)
    buffers: list[int] = field(default_factory=list)
    per_node: dict[str, int] = field(default_factory=dict)

    @property
    def peak_saved(self) -> int:
        return max(self.saved, default=0)

    @property
    def peak_buffers(self) -> int:
        return max(self.buffers, default=0)


def memory(run: BackwardRun, nodes: dict[str, NodeInfo], tensors: dict[str, TensorInfo],
           tl: Timeline | None = None) -> Memory:
    """The bytes ``run`` holds after each of its steps (NOTE [memory]); ``nodes`` and
    ``tensors`` are the trace's (what the saved values are), ``tl`` its timeline if made.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.ones(1000, requires_grad=True)
        ...     (x.exp() * 2).sum().backward()   # exp saves its result: 4,000 bytes
        >>> m = memory(tr.run(), tr.nodes, tr.tensors)
        >>> m.saved[0], m.saved[-1], m.peak_buffers
        (4000, 0, 4000)
    """
    tl = timeline(run) if tl is None else tl
    made: dict[str, list[str]] = {}  # node -> the tensors it made (its outputs)
    for tid, t in tensors.items():
        if t.grad_fn is not None:
            made.setdefault(t.grad_fn, []).append(tid)
    holders: dict[Any, list[Any]] = {}  # saved value -> [its bytes, the nodes still saving it]
    per_node: dict[str, int] = {}
    for nid in run.nodes:
        info = nodes.get(nid)
        if info is None:
            continue
        own = 0
        for s in info.saved:
            tid = s.tensor
            if tid is None and s.is_output and isinstance(s.value, dict):
                shape = s.value.get("shape")
                tid = next((o for o in made.get(nid, ()) if tensors[o].shape == shape), None)
            t = tensors.get(tid) if tid is not None else None
            if t is not None:
                if t.is_leaf:
                    continue
                key, size = tid, nbytes(t.shape, t.dtype)
            elif s.is_output:
                key, size = (nid, s.name), nbytes(s.value)
            else:
                continue
            if size:
                own += size
                holders.setdefault(key, [size, set()])[1].add(nid)
        if own:
            per_node[nid] = own
    held = sum(size for size, _ in holders.values())
    freeing: dict[str, list[Any]] = {}  # node -> the saved values it holds
    for key, (_, who) in holders.items():
        for nid in who:
            freeing.setdefault(nid, []).append(key)
    delta = [0] * (len(run.steps) + 1)  # input buffer bytes: + when a slot fills, - when taken
    for _node, _nr, grad, enter, leave in tl.buffers:
        size = nbytes(grad)
        delta[enter] += size
        if leave is not None:
            delta[leave] -= size
    out = Memory(per_node=per_node)
    in_buffers = 0
    for step in run.steps:
        k = step.index
        if step.kind == "release_saved":
            for key in freeing.pop(step.node, ()):  # type: ignore[arg-type]
                size, who = holders[key]
                who.discard(step.node)
                if not who:
                    held -= size
        in_buffers += delta[k]
        out.saved.append(held)
        out.buffers.append(in_buffers)
    return out
