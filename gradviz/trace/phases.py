"""The phases of a traced program: which ops are a forward pass, and what the others did.

NOTE [phases] A training script runs more ops than its forward passes: building the model
(``empty``, ``kaiming_uniform_``), the updates between backward runs (an optimizer's step,
``w -= lr * w.grad`` under ``no_grad``, ``clip_grad_norm_``), metrics nobody differentiates.
Drawn like graph ops they crowd out the forward pass, and a parameter looks as if its
initialisation fed the layer that uses it. So the ops are split here, once, for every renderer:

- **forward**: the ops that built what some backward run differentiated. Those whose node is
  in the run's graph, and, going up from their inputs, the ops that made those inputs with
  grad mode on and no write into a leaf (``x = data.view(-1, 784)`` is forward; ``w.uniform_()``
  is not). An op made before the run's first graph op, in an earlier iteration, is not
  followed (the data tensor of a loop is made once, before it).
- every other op falls into a **phase**: a run of consecutive ops that are not forward ops.
  Those before the first graph op are one, ``model construction`` (the data a forward reads
  may be made among them); those that ran in the middle of a forward pass (BatchNorm's
  ``num_batches_tracked += 1``, a metric computed on the way) are one box per forward,
  ``during the forward, not differentiated``; the others are named by the user's statements
  that ran them (``opt.step()``, ``clip_grad_norm_(...)``).

A phase is drawn as one box (render/graphviz.py) saying what ran and when; the parameters it
wrote go into the next forward with their new values (NOTE [versions] in model.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Phase", "split_phases", "CONSTRUCTION", "DURING"]

CONSTRUCTION = "model construction"
DURING = "during the forward, not differentiated"
_MAX_STATEMENTS = 2  # statements named in a phase's label; more are counted


@dataclass
class Phase:
    """Consecutive ops that are no forward pass.

    ``label`` names them (``model construction``, ``opt.step()``), ``statements`` are the
    distinct source lines that ran them, in order, and ``segment`` is how many backward runs
    had finished when the first ran."""

    id: str
    label: str
    ops: list[str] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    segment: int = 0

    @property
    def title(self) -> str:
        """The box's text: ``after backward run 2: opt.step(): 24 ops``."""
        n = len(self.ops)
        when = f"after backward run {self.segment}: " if self.segment else ""
        return f"{when}{self.label}: {n} op{'s' if n != 1 else ''}"


def _forward_ops(trace: Any) -> set[str]:
    """The ids of the ops that built what the trace's backward runs differentiated."""
    graph_nodes = {nid for r in trace.runs for nid in r.nodes}
    ops = [op for op in trace.ops if op.parent is None]
    forward = {op.id for op in ops if op.node is not None and op.node in graph_nodes}
    if not trace.runs:  # nothing differentiated yet: every op that recorded a node
        forward = {op.id for op in ops if op.node is not None}
    by_id = {op.id: op for op in ops}
    segments = {by_id[oid].segment for oid in forward}  # the iterations that hold a forward
    todo = list(forward)
    while todo:  # up from the graph ops' inputs, iteratively
        op = by_id[todo.pop()]
        for _, i in op.tensor_args():
            t = trace.tensors.get(i)
            maker = None if t is None or t.op is None else by_id.get(t.op)
            if maker is None or maker.id in forward or not _feeds(maker, trace, segments):
                continue
            forward.add(maker.id)
            todo.append(maker.id)
    return forward


def _feeds(op: Any, trace: Any, segments: set[int]) -> bool:
    """Whether ``op``, which made an input of a forward op, is part of that forward pass (an
    op of another iteration, ``segments`` holding the forward ones, is not)."""
    if op.no_grad or op.segment not in segments:
        return False
    for out in op.outputs:
        t = trace.tensors.get(out)
        if t is not None and t.is_leaf and (op.inplace or t.requires_grad):
            return False  # initialised or updated a leaf, or made a parameter
    return True


def _statement(op: Any) -> str:
    src = op.source
    if src is None:
        return op.name
    code = (src.code or "").strip()
    return code or f"{src.file}:{src.line}"


def split_phases(trace: Any) -> tuple[set[str], list[Phase]]:
    """The forward ops' ids and the phases the other ops make, in program order
    (NOTE [phases]).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.zeros(2, requires_grad=True)
        ...     for _ in range(2):
        ...         (w * 3).sum().backward()
        ...         with gradviz.no_grad():
        ...             w -= 0.1 * w.grad
        >>> forward, phases = split_phases(tr)
        >>> [op.name for op in tr.ops if op.id in forward]
        ['mul', 'sum']
        >>> phases[0].title
        'after backward run 1: w -= 0.1 * w.grad: 2 ops'
    """
    forward = _forward_ops(trace)
    top = [op for op in trace.ops if op.parent is None]
    # Where each segment's forward pass begins and ends: an op between them that is not part
    # of it (BatchNorm's num_batches_tracked += 1, a metric) ran during that forward.
    span: dict[int, tuple[int, int]] = {}
    for k, op in enumerate(top):
        if op.id in forward and op.node is not None:
            lo, _ = span.get(op.segment, (k, k))
            span[op.segment] = (lo, k)
    phases: list[Phase] = []
    during: dict[int, Phase] = {}
    current: Phase | None = None
    built = False  # a graph op ran: construction is over
    for k, op in enumerate(top):
        if op.id in forward:
            if op.node is not None:
                built = True
            if built:  # before, construction goes on around the data a forward reads
                current = None
            continue
        lo, hi = span.get(op.segment, (-1, -1))
        if built and lo < k < hi:
            phase = during.get(op.segment)
            if phase is None:
                phase = during[op.segment] = Phase(id=f"phase{len(phases)}", label=DURING,
                                                   segment=op.segment)
                phases.append(phase)
        else:
            if current is None or current.segment != op.segment:
                current = Phase(id=f"phase{len(phases)}", label="", segment=op.segment)
                if not built and not phases and op.segment == 0:  # the program's start
                    current.label = CONSTRUCTION
                phases.append(current)
            phase = current
        phase.ops.append(op.id)
        statement = _statement(op)
        if statement not in phase.statements:
            phase.statements.append(statement)
    for p in phases:
        if not p.label:
            shown = p.statements[:_MAX_STATEMENTS]
            more = len(p.statements) - len(shown)
            p.label = "; ".join(shown) + (f" (+{more} more)" if more else "")
    return forward, phases
