"""``compare_engines``: run one program under the three engines and put the schedules side by side.

Each engine gets fresh copies of the inputs and is traced; the comparison reports, per engine,
the order in which backward nodes ran, the order in which each leaf's gradient became final, and
how far its gradients are from the PyTorch-style engine's.
"""

from __future__ import annotations

import html
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.engines import mxnet, singa
from gradviz.tensor import Tensor
from gradviz.trace.model import LeafGradStep, Trace
from gradviz.trace.recorder import Recorder

__all__ = ["compare_engines", "EngineComparison", "EngineReport", "ENGINES"]

ENGINES = ("pytorch", "singa", "mxnet")


@dataclass
class EngineReport:
    """What one engine did with the program.

    ``nodes``: the backward nodes it ran, in order (``AccumulateGrad`` left out: see ``leaves``),
    labelled by name, with ``#k`` for the k-th node of that name in forward order when a name
    repeats. ``leaves``: the inputs, in the order their gradients became final. ``grads``: each
    input's gradient (``None`` when it got none). ``max_abs_diff``: the largest absolute
    difference from the PyTorch-style engine's gradients (``inf`` if one has a gradient the
    other lacks).
    """

    engine: str
    run_id: str
    nodes: list[str] = field(default_factory=list)
    leaves: list[str] = field(default_factory=list)
    grads: dict[str, np.ndarray | None] = field(default_factory=dict)
    max_abs_diff: float = 0.0


@dataclass
class EngineComparison:
    """The three engines' schedules for one program, and the trace they were read from.

    ``str(c)`` is a plain-text table, ``c.table()`` a rich ``Table``, ``c.to_html()`` an HTML
    table; ``c.trace`` holds the three runs (engines ``pytorch``, ``singa``, ``mxnet``).
    """

    reports: list[EngineReport]
    trace: Trace
    inputs: list[str]

    def __getitem__(self, engine: str) -> EngineReport:
        for r in self.reports:
            if r.engine == engine:
                return r
        raise KeyError(f"no engine {engine!r}; engines are {[r.engine for r in self.reports]}")

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(engine, nodes, leaves, max |diff|)`` as text, one row per engine."""
        return [(r.engine, " → ".join(r.nodes), " → ".join(r.leaves), f"{r.max_abs_diff:.3g}")
                for r in self.reports]

    HEADERS = ("engine", "nodes, in execution order", "leaf gradients final, in order",
               "max |Δ| vs pytorch")

    def __str__(self) -> str:
        rows = [self.HEADERS, *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(self.HEADERS))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                 for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def table(self) -> Any:
        """A ``rich.table.Table`` of :meth:`rows` (print it with a rich console)."""
        from rich.table import Table

        table = Table(title="Three engines, one graph")
        for h in self.HEADERS:
            table.add_column(h, overflow="fold")
        for row in self.rows():
            table.add_row(*row)
        return table

    def to_html(self) -> str:
        """A small self-contained HTML ``<table>``; every string in it is escaped."""
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.HEADERS)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self.rows())
        return (f'<table class="gradviz-engines"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    def _repr_html_(self) -> str:
        return self.to_html()


def _input_names(fn: Callable[..., Any], inputs: tuple) -> list[str]:
    """Each input's name: its ``.name``, else ``fn``'s parameter name, else ``x<i>``."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, x in enumerate(inputs):
        given = x.name if isinstance(x, Tensor) else None
        names.append(given or (params[i] if i < len(params) else f"x{i}"))
    return names


def _fresh(inputs: tuple, names: list[str]) -> list[Any]:
    """New leaf copies of the tensor inputs (same values and requires_grad, no .grad)."""
    out = []
    for x, name in zip(inputs, names, strict=True):
        if isinstance(x, Tensor):
            x = Tensor._make(x._data.copy(), x.requires_grad)
            x.name = name
        out.append(x)
    return out


def _run_engine(engine: str, fn: Callable[..., Tensor], xs: list[Any]) -> dict[int, Any]:
    """One backward pass of ``fn(*xs)`` under ``engine``; id(input) -> its gradient array."""
    leaves = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
    if engine == "pytorch":
        fn(*xs).backward()
        return {id(x): None if x.grad is None else x.grad._data for x in leaves}
    if engine == "singa":
        got = singa.gradients(fn(*xs))
        return {id(x): got[x]._data if x in got else None for x in leaves}
    with mxnet.record():
        loss = fn(*xs)
    mxnet.backward(loss)
    return {id(x): None if x.grad is None else x.grad._data for x in leaves}


def _diff(a: np.ndarray | None, b: np.ndarray | None) -> float:
    if a is None and b is None:
        return 0.0
    if a is None or b is None or np.shape(a) != np.shape(b):
        return float("inf")
    if np.size(a) == 0:
        return 0.0
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def compare_engines(fn: Callable[..., Tensor], *inputs: Any, values: str = "small"
                    ) -> EngineComparison:
    """Run ``fn(*inputs)`` (a single-value result) under the PyTorch, SINGA and MXNet engines.

    Each engine gets fresh copies of the tensor inputs (the originals are untouched); all three
    passes are recorded in one trace (``result.trace``), one run per engine.

    Args:
        fn: builds a loss from the inputs; called once per engine.
        *inputs: tensors (those with ``requires_grad`` are the leaves compared) or other values.
        values: how much of each tensor value the trace keeps (see :func:`gradviz.trace`).

    Example:
        >>> import gradviz
        >>> x = gradviz.rand(3, requires_grad=True)
        >>> y = gradviz.rand(3, requires_grad=True)
        >>> c = gradviz.compare_engines(lambda x, y: (x ** 2 + y ** 3).sum(), x, y)
        >>> [r.engine for r in c.reports], c["mxnet"].leaves, c["singa"].max_abs_diff
        (['pytorch', 'singa', 'mxnet'], ['x', 'y'], 0.0)
    """
    names = _input_names(fn, inputs)
    tr = Recorder(values=values, name=f"compare_engines({getattr(fn, '__name__', 'fn')})")
    reports: list[EngineReport] = []
    with tr:
        for engine in ENGINES:
            xs = _fresh(inputs, names)
            first_op, first_run = len(tr.ops), len(tr.runs)
            grads = _run_engine(engine, fn, xs)
            run = next(r for r in tr.runs[first_run:] if r.engine == engine)
            reports.append(_report(engine, run, tr, tr.ops[first_op:], xs, names, grads))
    base = reports[0].grads
    for r in reports[1:]:
        r.max_abs_diff = max((_diff(base[k], r.grads[k]) for k in base), default=0.0)
    return EngineComparison(reports=reports, trace=tr, inputs=names)


def _report(engine: str, run: Any, tr: Trace, ops: list, xs: list[Any], names: list[str],
            grads: dict[int, Any]) -> EngineReport:
    """Read one run's steps: the nodes it executed and the leaves it finalised, in order."""
    tensor_names = {}
    for x, name in zip(xs, names, strict=True):
        if isinstance(x, Tensor):
            tid = tr.known_tensor_id(x)
            if tid is not None:
                tensor_names[tid] = name
    # Label a node by name; a repeated name gets "#k": the k-th such node in forward order.
    op_order = {op.id: i for i, op in enumerate(ops)}
    by_name: dict[str, list[str]] = {}
    for nid in sorted((n for n in run.nodes if tr.nodes[n].forward_op in op_order),
                      key=lambda n: op_order[tr.nodes[n].forward_op]):
        by_name.setdefault(tr.nodes[nid].name, []).append(nid)
    label = {}
    for name, nids in by_name.items():
        for k, nid in enumerate(nids, 1):
            label[nid] = name if len(nids) == 1 else f"{name}#{k}"
    report = EngineReport(engine=engine, run_id=run.id)
    for step in run.steps:
        node = tr.nodes.get(step.node) if step.node else None
        if step.kind == "execute" and node is not None and node.kind != "accumulate_grad":
            report.nodes.append(label.get(step.node, node.name))
        elif isinstance(step, LeafGradStep):
            report.leaves.append(tensor_names.get(step.tensor, step.tensor))
    report.grads = {name: grads.get(id(x)) for x, name in zip(xs, names, strict=True)
                    if isinstance(x, Tensor) and x.requires_grad}
    return report
