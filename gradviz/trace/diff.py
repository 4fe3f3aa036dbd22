"""``diff_traces``: where two traces of one program differ (real PyTorch against gradviz).

Works on two plain-data :class:`~gradviz.trace.model.Trace` objects, whoever recorded them,
so it is tested without torch. ``gradviz compare`` records a script on both engines and hands
the two traces here.

NOTE [what is compared]: the two engines run one script, but a script that makes random inputs
(``torch.randn``, ``nn.Linear``'s initial weights) gets different numbers from each engine's
random generator, even under the same seed. So:

- **always**, for each backward run (the k-th ``backward()`` / ``autograd.grad()`` call of one
  trace against the k-th of the other): the backward graph (node names and ``next_functions``,
  walked from the run's roots in a fixed order, so node ``i`` of one graph is node ``i`` of the
  other), the execution order (the executed nodes as a sequence of those labels), and the error
  (type and message) of a failed run; plus the number of runs and, when given, the script's own
  error. Error texts are compared with whitespace collapsed and ``gradviz`` read as ``torch``
  (gradviz's texts are PyTorch's, with its own name where PyTorch names itself).
- **values only where the inputs agree**: a run's backward pass is a function of its graph, the
  values its nodes saved (``_saved_self`` ...) and the gradient it starts from. When the graphs
  match and all saved values (those both engines save; a number may be kept as a 0-dim tensor
  by one) and starting gradients are equal in both traces, every gradient
  must be equal too, so then each node's outgoing gradients and each leaf's ``.grad`` are
  compared, and a difference is a real difference of the engines. When some input differs
  (random data), the run's values are not compared and the report says which input differed.

Values are compared as the traces keep them (NOTE [value summaries] in model.py): full values
up to 64 elements, else min/max/mean and the first elements, with a tolerance fit for float32
(``rtol=1e-4``, ``atol=1e-5``): the two engines round differently, never by more.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.trace.model import (
    BackwardRun,
    ErrorStep,
    ExecuteStep,
    LeafGradStep,
    NodeInfo,
    run_numbers,
)

__all__ = ["diff_traces", "TraceDiff", "Difference", "RunDiff", "values_equal"]

RTOL = 1e-4
ATOL = 1e-5
MAX_VALUE_DIFFERENCES = 20  # per run: the first ones say where; more would bury them
_SKIP_KINDS = ("graph_root", "engine")  # the engine's own nodes: not part of the user's graph


@dataclass
class Difference:
    """One place where the traces differ.

    ``what``: ``runs``, ``graph``, ``order``, ``gradient``, ``leaf_grad`` or ``error``; ``run``:
    the backward run's index in the comparison (None for the whole script); ``where``: the node
    or step; ``a`` and ``b``: what each trace has there, as text; ``run_name``: the run as the
    report names it (``"run 2"``, numbered as the pictures number runs).
    """

    what: str
    run: int | None
    where: str
    a: str
    b: str
    run_name: str = ""

    def describe(self, labels: tuple[str, str]) -> str:
        """One line: where, then what each side has.

        Example:
            >>> Difference("error", 0, "the backward pass", "no error", "ValueError: x",
            ...            run_name="run 2").describe(("torch", "gradviz"))
            'run 2: error differs at the backward pass: torch: no error; gradviz: ValueError: x'
        """
        run = "script" if self.run is None else self.run_name or f"the run at index {self.run}"
        return (f"{run}: {self.what} differs at {self.where}: {labels[0]}: {self.a}; "
                f"{labels[1]}: {self.b}")


@dataclass
class RunDiff:
    """One backward run of both traces, side by side.

    ``order``: each trace's execution order (node labels); ``grads``: ``(leaf label, a, b,
    equal)`` for each leaf's final ``.grad`` in the run (``equal`` is None when values were not
    compared); ``values_compared`` and ``values_note`` say whether the values were compared and
    why not; ``name``: the run as the report names it (``"run 2"``: the number the pictures'
    titles give it, NOTE [run numbers] in model.py; both traces' numbers when they differ).
    """

    index: int
    name: str = ""
    order: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    graph_same: bool = True
    values_compared: bool = False
    values_note: str = ""
    grads: list[tuple[str, str, str, bool | None]] = field(default_factory=list)
    errors: tuple[str, str] = ("", "")

    def __post_init__(self) -> None:
        if not self.name:  # made by hand: diff_traces names each run by its number
            self.name = f"the run at index {self.index}"


@dataclass
class TraceDiff:
    """Where two traces differ. ``same`` is True when nothing compared differs.

    ``str(d)`` is a plain-text report; ``d.differences`` the differences, first ones first;
    ``d.runs`` each run side by side; ``d.to_html()`` an HTML fragment.
    """

    labels: tuple[str, str]
    differences: list[Difference] = field(default_factory=list)
    runs: list[RunDiff] = field(default_factory=list)
    errors: tuple[str, str] = ("", "")
    notes: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.differences

    @property
    def not_compared(self) -> list[str]:
        """Why the values of a run were not compared, for each such run (``"run 1: inputs
        differ: ..."``): where any, "no difference" covers the structure only."""
        return [f"{r.name}: {r.values_note or 'values not compared'}" for r in self.runs
                if not r.values_compared]

    def verdict(self) -> str:
        """One line: the engines differ, agree, or agree on what could be compared only.

        Example:
            >>> TraceDiff(labels=("torch", "gradviz")).verdict()
            'torch and gradviz agree: no difference'
        """
        a, b = self.labels
        if not self.same:
            return f"{a} and {b} differ: {len(self.differences)} difference(s)"
        if self.not_compared:
            return (f"{a} and {b}: the structure agrees, values not compared ("
                    + "; ".join(self.not_compared) + ")")
        return f"{a} and {b} agree: no difference"

    def lines(self) -> list[str]:
        """The report, one line each."""
        a, b = self.labels
        out = [self.verdict()]
        for r in self.runs:
            out.append(f"{r.name}: graph {'same' if r.graph_same else 'DIFFERS'}; "
                       f"values {'compared' if r.values_compared else 'not compared'}"
                       + (f" ({r.values_note})" if r.values_note else ""))
            out.append(f"  {a} order: {' → '.join(r.order[0])}")
            out.append(f"  {b} order: {' → '.join(r.order[1])}")
        out.extend(f"  {d.describe(self.labels)}" for d in self.differences)
        out.extend(f"note: {n}" for n in self.notes)
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_html(self) -> str:
        """An HTML fragment (a list of differences and a table per run); every string escaped."""
        a, b = (html.escape(x) for x in self.labels)
        e = html.escape
        if not self.same:
            kind, verdict = "differ", f"{len(self.differences)} difference(s)."
        elif self.not_compared:
            kind, verdict = "unchecked", ("The structure agrees; values not compared ("
                                          + "; ".join(self.not_compared) + ").")
        else:
            kind, verdict = "same", "No difference."
        parts = [f'<p class="verdict {kind}">{e(verdict)}</p>']
        if self.differences:
            parts.append("<ul class='differences'>" + "".join(
                f"<li>{e(d.describe(self.labels))}</li>" for d in self.differences) + "</ul>")
        if any(self.errors):
            parts.append(f"<table><tr><th>script error</th><th>{a}</th><th>{b}</th></tr>"
                         f"<tr><td></td><td>{e(self.errors[0] or '(none)')}</td>"
                         f"<td>{e(self.errors[1] or '(none)')}</td></tr></table>")
        for r in self.runs:
            rows = [f"<h3>{e(r.name)}</h3><p>graph: {'same' if r.graph_same else 'differs'}; "
                    f"values: {'compared' if r.values_compared else 'not compared'}"
                    f"{e(' (' + r.values_note + ')') if r.values_note else ''}</p>",
                    f"<table><tr><th></th><th>{a}</th><th>{b}</th></tr>",
                    f"<tr><th>execution order</th><td>{e(' → '.join(r.order[0]))}</td>"
                    f"<td>{e(' → '.join(r.order[1]))}</td></tr>"]
            for label, ga, gb, eq in r.grads:
                cls = "" if eq is not False else ' class="differ"'
                rows.append(f"<tr{cls}><th>{e(label)}.grad</th><td>{e(ga)}</td>"
                            f"<td>{e(gb)}</td></tr>")
            if any(r.errors):
                rows.append(f"<tr><th>error</th><td>{e(r.errors[0])}</td>"
                            f"<td>{e(r.errors[1])}</td></tr>")
            parts.append("".join(rows) + "</table>")
        parts.extend(f"<p class='note'>{e(n)}</p>" for n in self.notes)
        return "\n".join(parts)


# -- values -----------------------------------------------------------------------------------
def _floats(x: Any) -> np.ndarray:
    """A summary's nested list as floats ("nan"/"inf" strings as the numbers they stand for)."""
    def conv(v: Any) -> float:
        return float(v) if not isinstance(v, bool) else float(int(v))
    arr = np.asarray(x, dtype=object)
    return np.vectorize(conv, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)


def values_equal(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool | None:
    """Whether two value summaries agree (within the tolerance), or None if they cannot tell
    (one of them keeps no values).

    Example:
        >>> values_equal({"shape": [2], "values": [1.0, 2.0]},
        ...              {"shape": [2], "values": [1.0, 2.00001]})
        True
    """
    if a is None or b is None:
        return (a is None) == (b is None) if (a is None and b is None) else None
    if "const" in a and "const" in b:
        return bool(a["const"] == b["const"])
    if "const" in a or "const" in b:  # a number one engine keeps as a 0-dim tensor
        const, other = (a, b) if "const" in a else (b, a)
        vals = other.get("values")
        if vals is None or isinstance(vals, list) or isinstance(const["const"], (list, str)):
            return None if vals is None else False
        return _close([const["const"]], [vals])
    if list(a.get("shape", [])) != list(b.get("shape", [])):
        return False
    if "values" in a and "values" in b:
        return _close(a["values"], b["values"])
    if "stats" in a and "stats" in b:
        sa, sb = a["stats"], b["stats"]
        return (_close([sa[k] for k in ("min", "max", "mean")],
                       [sb[k] for k in ("min", "max", "mean")])
                and _close(a.get("head", []), b.get("head", [])))
    return None


def _close(x: Any, y: Any) -> bool:
    try:
        fx, fy = _floats(x), _floats(y)
    except (TypeError, ValueError):
        return bool(x == y)
    if fx.shape != fy.shape:
        return False
    return bool(np.allclose(fx, fy, rtol=RTOL, atol=ATOL, equal_nan=True))


def value_text(v: dict[str, Any] | None) -> str:
    """A short text of a value summary, for the report."""
    if v is None:
        return "None"
    if "const" in v:
        return repr(v["const"])
    shape = "×".join(str(s) for s in v.get("shape", [])) or "scalar"
    if "values" in v:
        text = np.array2string(_floats(v["values"]), precision=5, separator=", ",
                               threshold=12, edgeitems=3).replace("\n", "")
        return text if len(v.get("shape", [])) <= 1 else f"{shape} {text}"
    if "stats" in v:
        s = v["stats"]
        return f"{shape} min {s['min']:.5g} max {s['max']:.5g} mean {s['mean']:.5g}"
    return f"{shape} (values not kept)"


# -- the graph, in a fixed order ---------------------------------------------------------------
@dataclass
class _Graph:
    """A run's backward graph walked from its roots: node i of one trace is node i of the
    other when the graphs are the same."""

    ids: list[str]  # node ids in walk order
    names: list[str]
    edges: list[list[tuple[int | None, int]]]  # per node: (child index or None, input_nr)
    paths: list[str]  # how the walk first reached each node, for the report
    labels: list[str]


def _walk(trace: Any, run: BackwardRun) -> _Graph:
    """Depth-first from the run's root edges, ``next_functions`` in order (an explicit stack)."""
    nodes: dict[str, NodeInfo] = trace.nodes
    roots = [e[0] for e in run.root_edges if e and e[0] is not None]
    if not roots:
        roots = [nid for tid in run.roots
                 if (nid := getattr(trace.tensors.get(tid), "grad_fn", None)) is not None]
    index: dict[str, int] = {}
    ids: list[str] = []
    paths: list[str] = []
    stack: list[tuple[str, str]] = [(nid, f"root {i}") for i, nid in reversed(list(
        enumerate(roots)))]
    while stack:
        nid, path = stack.pop()
        node = nodes.get(nid)
        if nid in index or node is None:
            continue
        if node.kind in _SKIP_KINDS:  # step through the engine's own root node
            stack.extend((nxt, path) for nxt, _ in reversed(node.next_functions)
                         if nxt is not None)
            continue
        index[nid] = len(ids)
        ids.append(nid)
        paths.append(path)
        here = f"{path} → {node.name}"
        stack.extend((nxt, f"{here}.next_functions[{k}]")
                     for k, (nxt, _) in reversed(list(enumerate(node.next_functions)))
                     if nxt is not None)
    names = [nodes[n].name for n in ids]
    edges = [[(index.get(nxt) if nxt is not None else None, nr)
              for nxt, nr in nodes[n].next_functions] for n in ids]
    count: dict[str, int] = {}
    for name in names:
        count[name] = count.get(name, 0) + 1
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if count[name] == 1 else f"{name}#{seen[name]}")
    return _Graph(ids, names, edges, paths, labels)


def _saved_values(trace: Any, node: NodeInfo) -> dict[str, dict[str, Any] | None]:
    """Each saved value of ``node``: its own summary, or the traced tensor's value."""
    out: dict[str, dict[str, Any] | None] = {}
    for s in node.saved:
        value = s.value
        if (value is None or ("values" not in value and "stats" not in value
                              and "const" not in value)) and s.tensor is not None:
            tensor = trace.tensors.get(s.tensor)
            value = tensor.value if tensor is not None else value
        out[s.name] = value
    return out


def _error_text(run: BackwardRun) -> str:
    for step in run.steps:
        if isinstance(step, ErrorStep):
            return f"{step.type}: {step.message}"
    if run.error:
        return f"{run.error.get('type', '')}: {run.error.get('message', '')}"
    return ""


# -- the comparison ---------------------------------------------------------------------------
def diff_traces(a: Any, b: Any, labels: tuple[str, str] = ("a", "b"),
                errors: tuple[str, str] = ("", "")) -> TraceDiff:
    """Compare two traces of one program, run by run (NOTE [what is compared] above).

    Args:
        a, b: the traces (from :func:`gradviz.trace`, a torch recording, or ``load_trace``).
        labels: how the report names them (``("torch", "gradviz")``).
        errors: the error each script run ended with, as ``"Type: message"`` ("" for none).

    Example:
        >>> import gradviz
        >>> def program():
        ...     x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        ...     (x * x).sum().backward()
        >>> with gradviz.trace() as t1:
        ...     program()
        >>> with gradviz.trace() as t2:
        ...     program()
        >>> diff_traces(t1, t2).same
        True
    """
    d = TraceDiff(labels=labels, errors=errors)
    if _norm_error(errors[0]) != _norm_error(errors[1]):
        d.differences.append(Difference("error", None, "the end of the script",
                                        errors[0] or "no error", errors[1] or "no error"))
    runs_a, runs_b = list(a.runs), list(b.runs)
    if len(runs_a) != len(runs_b):
        d.differences.append(Difference("runs", None, "the number of backward runs",
                                        str(len(runs_a)), str(len(runs_b))))
    if a.runs_total > len(runs_a) or b.runs_total > len(runs_b):
        d.notes.append("only the backward runs each trace kept were compared (--keep-runs)")
    numbers_a, numbers_b = run_numbers(a), run_numbers(b)
    for k, (ra, rb) in enumerate(zip(runs_a, runs_b, strict=False)):
        # Named by the number each trace's pictures give the run; both when they differ (the
        # two scripts made their runs differently, or kept different ones).
        na, nb = numbers_a[k], numbers_b[k]
        name = f"run {na}" if na == nb else f"run {na} ({labels[0]}) / {nb} ({labels[1]})"
        first = len(d.differences)
        d.runs.append(_diff_run(k, a, ra, b, rb, d.differences))
        d.runs[-1].name = name
        for diff in d.differences[first:]:
            diff.run_name = name
    return d


def _norm_error(text: str) -> str:
    """An error text as compared: whitespace collapsed, and gradviz's name for itself read as
    torch (gradviz's texts are PyTorch's with its own name: ``gradviz.FloatTensor``)."""
    return _GRADVIZ.sub("torch", " ".join(text.split()))


_GRADVIZ = re.compile(r"\bgradviz\b")


def _diff_run(k: int, a: Any, ra: BackwardRun, b: Any, rb: BackwardRun,
              out: list[Difference]) -> RunDiff:
    ga, gb = _walk(a, ra), _walk(b, rb)
    rd = RunDiff(index=k, errors=(_error_text(ra), _error_text(rb)))
    rd.order = (_order(a, ra, ga), _order(b, rb, gb))
    if _norm_error(rd.errors[0]) != _norm_error(rd.errors[1]):
        out.append(Difference("error", k, "the backward pass", rd.errors[0] or "no error",
                              rd.errors[1] or "no error"))
    mismatch = _graph_mismatch(ga, gb)
    if mismatch is not None:
        rd.graph_same = False
        rd.values_note = "the graphs differ"
        out.append(Difference("graph", k, *mismatch))
        return rd
    if rd.order[0] != rd.order[1]:
        i = next((i for i, (x, y) in enumerate(zip(*rd.order, strict=False)) if x != y),
                 min(len(rd.order[0]), len(rd.order[1])))
        out.append(Difference("order", k, f"execution step {i + 1}",
                              _around(rd.order[0], i), _around(rd.order[1], i)))
    _diff_values(k, a, ra, ga, b, rb, gb, rd, out)
    return rd


def _around(order: list[str], i: int) -> str:
    """The order from a little before step ``i``, the step itself marked."""
    start = max(0, i - 2)
    parts = order[start:i] + ([f"[{order[i]}]"] if i < len(order) else ["[end]"]) \
        + order[i + 1:i + 3]
    return ("… " if start else "") + " → ".join(parts) + (" …" if i + 3 < len(order) else "")


def _graph_mismatch(ga: _Graph, gb: _Graph) -> tuple[str, str, str] | None:
    """(where, a, b) of the first node where the walked graphs differ, or None."""
    for i in range(max(len(ga.ids), len(gb.ids))):
        if i >= len(ga.ids) or i >= len(gb.ids):
            where = gb.paths[i] if i >= len(ga.ids) else ga.paths[i]
            return (where, ga.names[i] if i < len(ga.ids) else "no node",
                    gb.names[i] if i < len(gb.ids) else "no node")
        if ga.names[i] != gb.names[i] or ga.edges[i] != gb.edges[i]:
            return (ga.paths[i], _node_text(ga, i), _node_text(gb, i))
    return None


def _node_text(g: _Graph, i: int) -> str:
    nxt = ", ".join("None" if c is None else f"({g.labels[c]}, {nr})" for c, nr in g.edges[i])
    return f"{g.names[i]} with next_functions ({nxt})"


def _order(trace: Any, run: BackwardRun, g: _Graph) -> list[str]:
    """The executed nodes' labels, in order. A node that failed ends the order whether or not
    its source recorded an execute step for it before the error (gradviz's engine does not;
    hooks on real PyTorch's may), so that both read alike."""
    label = dict(zip(g.ids, g.labels, strict=True))
    order: list[str] = []
    last: str | None = None
    for s in run.steps:
        if isinstance(s, ExecuteStep) and s.node in label:
            order.append(label[s.node])
            last = s.node
        elif isinstance(s, ErrorStep) and s.node in label and s.node != last:
            order.append(label[s.node])
            last = s.node
    return order


def _executes(run: BackwardRun) -> dict[str, list[ExecuteStep]]:
    out: dict[str, list[ExecuteStep]] = {}
    for s in run.steps:
        if isinstance(s, ExecuteStep) and s.node is not None:
            out.setdefault(s.node, []).append(s)
    return out


def _leaf_grads(run: BackwardRun) -> dict[str, dict[str, Any] | None]:
    out: dict[str, dict[str, Any] | None] = {}
    for s in run.steps:
        if isinstance(s, LeafGradStep) and s.node is not None:
            out[s.node] = s.after  # the last one: .grad when the run ended
    return out


def _diff_values(k: int, a: Any, ra: BackwardRun, ga: _Graph, b: Any, rb: BackwardRun,
                 gb: _Graph, rd: RunDiff, out: list[Difference]) -> None:
    """Compare gradients if every input of the backward pass agrees (NOTE above)."""
    ex_a, ex_b = _executes(ra), _executes(rb)
    # The inputs of the pass: every saved value, and the gradient each root starts from.
    for i, (na, nb) in enumerate(zip(ga.ids, gb.ids, strict=True)):
        sa, sb = _saved_values(a, a.nodes[na]), _saved_values(b, b.nodes[nb])
        # A value only one engine keeps is no input of the other's formula: not compared.
        for name in sorted(set(sa) & set(sb)):
            eq = values_equal(sa[name], sb[name])
            if not eq:
                why = "differs" if eq is False else "is not known in both traces"
                rd.values_note = (f"inputs differ: {ga.labels[i]}._saved_{name} {why}, so "
                                  "gradients were not compared")
                break
        if rd.values_note:
            break
    if not rd.values_note:
        for root in {0} if ga.ids else set():
            oa = ex_a.get(ga.ids[root], [])
            ob = ex_b.get(gb.ids[root], [])
            if oa and ob and not all(
                    values_equal(x, y) for x, y in zip(oa[0].grad_outputs, ob[0].grad_outputs,
                                                        strict=False)):
                rd.values_note = ("inputs differ: the gradient the pass starts from differs, so "
                                  "gradients were not compared")
    leaves_a, leaves_b = _leaf_grads(ra), _leaf_grads(rb)
    compare = not rd.values_note
    rd.values_compared = compare
    found = 0
    # Each node's outgoing gradients, in the first trace's execution order.
    pos = {nid: i for i, nid in enumerate(ga.ids)}
    for step in (s for s in ra.steps if isinstance(s, ExecuteStep) and s.node in pos):
        if not compare or found >= MAX_VALUE_DIFFERENCES:
            break
        i = pos[step.node]
        other = ex_b.get(gb.ids[i], [])
        if not other:
            continue
        for slot, (x, y) in enumerate(zip(step.grad_inputs, other[0].grad_inputs,
                                          strict=False)):
            if values_equal(x, y) is False:
                out.append(Difference("gradient", k, f"{ga.labels[i]} (step {step.index}), "
                                      f"gradient to next_functions[{slot}]",
                                      value_text(x), value_text(y)))
                found += 1
                break
    for i, (na, nb) in enumerate(zip(ga.ids, gb.ids, strict=True)):
        if a.nodes[na].kind != "accumulate_grad":
            continue
        if na not in leaves_a and nb not in leaves_b:
            continue
        va, vb = leaves_a.get(na), leaves_b.get(nb)
        label = _leaf_label(a, a.nodes[na], ga.labels[i])
        eq = values_equal(va, vb) if compare else None
        rd.grads.append((label, value_text(va), value_text(vb), eq))
        if eq is False and found < MAX_VALUE_DIFFERENCES:
            out.append(Difference("leaf_grad", k, f"{label}.grad (via {ga.labels[i]})",
                                  value_text(va), value_text(vb)))
            found += 1


def _leaf_label(trace: Any, node: NodeInfo, fallback: str) -> str:
    tensor = trace.tensors.get(node.variable) if node.variable else None
    name = getattr(tensor, "name", None)
    return name if name and not (name.startswith("t") and name[1:].isdigit()) else fallback
