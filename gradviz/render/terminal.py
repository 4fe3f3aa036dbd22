"""The backward graph and the engine's steps in a terminal, with rich.

- :func:`print_graph` — the backward graph as a tree from the root along ``next_functions``.
- :func:`step_table` / :func:`print_steps` — every engine step of a run in one table.
- :func:`step_through` — the same, one step at a time with single keys (a full-screen view on
  Textual, :mod:`gradviz.render.tui`); the table when the output is not a terminal.
- :func:`node_label`, :func:`describe`, :class:`RunReplay`, :func:`step_detail` — names and the
  step panel as the HTML player shows them, shared by the table and the full-screen view (each
  step's sentence is written once, in :mod:`gradviz.render.sentences`, for both).

Everything reads the plain-data model (a live tensor goes through :func:`gradviz.graph_of`);
user strings are put in rich ``Text`` objects, never parsed as markup, so a tensor named
``[bold]x`` prints as typed, and pass through :func:`visible` first, so a name holding an escape
sequence cannot recolour or rewrite the terminal. rich is imported inside the functions.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from gradviz.render._format import clip, grad_str, op_call, shape_str, source_str
from gradviz.render.sentences import packed_text, saved_attr, sentence_text, step_sentence
from gradviz.trace.model import run_name
from gradviz.trace.replay import StepState, states

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
    from rich.table import Table

    from gradviz.trace.model import BackwardGraph, BackwardRun, NodeInfo, Step, Trace

__all__ = ["print_graph", "graph_tree", "step_table", "print_steps", "step_through", "visible",
           "node_label", "tensor_label", "run_label", "describe", "RunReplay", "run_leaves",
           "step_detail", "interactive"]

MAX_TREE_NODES = 500  # a tree of a million-node chain would be a million indented lines


# C0/C1 control characters and lone surrogates (undecodable bytes of a file name). The CLI keeps
# the same rule in gradviz_cli._console.visible, so that reporting an error never imports this.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return repr(m.group())[1:-1] if m.group() in "\n\t\r" else (
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: Any) -> str:
    r"""``str(text)`` safe for a terminal: control characters and lone surrogates as escapes.

    Example:
        >>> visible("x\x1b[2J")
        'x\\x1b[2J'
    """
    return _UNSAFE.sub(_escape, str(text))


def _console(console: Console | None) -> Console:
    if console is not None:
        return console
    from rich.console import Console

    return Console()


def _graph(obj: Any, run: int | str = -1) -> tuple[BackwardGraph, dict[str, Any]]:
    """The backward graph to print and the tensors around it (names of roots and leaves)."""
    from gradviz.render.graphviz import _backward_input

    b = _backward_input(obj, run)
    return b.graph, {"tensors": b.tensors, "roots": b.root_tensors}


def _leaf_text(node: NodeInfo, tensors: dict[str, Any]) -> str:
    t = tensors.get(node.variable) if node.variable else None
    if t is None:
        return ""
    kind = "parameter" if t.is_param else "leaf"
    return f" → {t.name} {shape_str(t.shape)} {kind}"


def graph_tree(obj: Any, run: int | str = -1, max_nodes: int = MAX_TREE_NODES) -> Any:
    """The backward graph as a ``rich.tree.Tree`` (what :func:`print_graph` prints).

    Each child line is ``[i] Name  input_nr=k`` for entry ``i`` of ``next_functions``;
    ``AccumulateGrad`` shows its leaf; a node reached again (shared) is shown once, then
    ``(see above)``. Built with an explicit stack (no recursion) and cut at ``max_nodes`` lines.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> graph_tree((x * 2).sum()).label.plain
        'SumBackward0 n0'
    """
    from rich.text import Text
    from rich.tree import Tree

    g, ctx = _graph(obj, run)
    tensors = ctx["tensors"]

    def node_text(n: NodeInfo, prefix: str = "", nr: int | None = None,
                  seen: bool = False) -> Text:
        text = Text(prefix)
        text.append(visible(n.name), style="bold" if n.kind != "accumulate_grad" else "bold blue")
        text.append(f" {visible(n.id)}", style="dim")
        if nr is not None:
            text.append(f"  input_nr={nr}", style="cyan")
        if n.kind == "accumulate_grad":
            text.append(visible(_leaf_text(n, tensors)), style="blue")
        if seen:
            text.append("  (see above)", style="dim italic")
        return text

    roots = [r for r in g.roots if r[0] in g.nodes]
    root_names = {tensors[t].grad_fn: tensors[t].name for t in ctx["roots"]
                  if t in tensors and tensors[t].name != t}  # not the t0, t1 of unnamed ones
    expanded: set[str] = set()
    # (node id or None, parent branch, next_functions index, input_nr), popped in display
    # order (depth-first, pre-order), so a shared node is expanded where it is first shown and
    # "(see above)" is true wherever it appears again.
    todo: list[tuple[str | None, Any, int | None, int | None]] = []
    if len(roots) == 1:
        rid = roots[0][0]
        tree = Tree(node_text(g.nodes[rid]))
        if rid in root_names:
            tree.label = Text(f"{clip(visible(root_names[rid]))}.grad_fn = ") + tree.label
        expanded.add(rid)
        todo = [(nxt, tree, i, nr)
                for i, (nxt, nr) in reversed(list(enumerate(g.nodes[rid].next_functions)))]
    else:
        tree = Tree(Text("backward graph", style="bold"))
        todo = [(rid, tree, None, nr) for rid, nr in reversed(roots)]
    lines = 1
    while todo:
        nid, parent, i, nr = todo.pop()
        if lines >= max_nodes:
            parent.add(Text("… (cut: max_nodes reached)", style="dim"))
            break
        lines += 1
        prefix = "" if i is None else f"[{i}] "
        if nid is None or nid not in g.nodes:
            parent.add(Text(f"{prefix}None", style="dim"))
            continue
        n = g.nodes[nid]
        seen = nid in expanded and bool(n.next_functions)
        branch = parent.add(node_text(n, prefix, nr, seen))
        if seen:
            continue
        expanded.add(nid)
        todo.extend((nxt, branch, j, k)
                    for j, (nxt, k) in reversed(list(enumerate(n.next_functions))))
    return tree


def print_graph(tensor_or_graph: Any, console: Console | None = None, run: int | str = -1,
                max_nodes: int = MAX_TREE_NODES) -> None:
    """Print the backward graph as a tree: node names, ``next_functions`` with ``input_nr``,
    each ``AccumulateGrad`` with its variable's name and shape.

    Args:
        tensor_or_graph: a tensor, a :class:`~gradviz.trace.model.BackwardGraph` or a trace.
        console: a ``rich.console.Console`` (default: a new one on stdout).
        run: the backward run, for a trace.
        max_nodes: stop after this many lines.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> x.name = "x"
        >>> print_graph((x * 2).sum())  # doctest: +SKIP
        SumBackward0 n0
        └── [0] MulBackward0 n1  input_nr=0
            ├── [0] AccumulateGrad n2  input_nr=0 → x (2,) leaf
            └── [1] None
    """
    _console(console).print(graph_tree(tensor_or_graph, run, max_nodes))


# -- names and step fields -------------------------------------------------------------------------
def _get(step: Any, name: str, default: Any = None) -> Any:
    """A field of a step (``step.data[name]``, or an attribute of a typed step)."""
    data = getattr(step, "data", None)
    if isinstance(data, dict) and name in data:
        return data[name]
    return getattr(step, name, default)


def tensor_label(trace: Any, tid: str | None) -> str:
    """A tensor's name as the player shows it (its id when the trace does not know it).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> tensor_label(tr, next(iter(tr.tensors)))
        'w'
    """
    if tid is None:
        return ""
    t = trace.tensors.get(tid)
    return visible(t.name if t is not None else tid)


def node_label(trace: Any, nid: str | None, leaf_width: int | None = None) -> str:
    """A backward node as the player names it: ``MulBackward0 n5``, ``AccumulateGrad (w) n3``.

    The id is always there, so two nodes of one class are never confused; an AccumulateGrad
    also names the leaf it writes (cut to ``leaf_width`` characters with ``…`` if given: the id
    still tells it apart). Control characters in a name are escaped (:func:`visible`).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> sorted(node_label(tr, n) for n in tr.nodes)
        ['AccumulateGrad (w) n1', 'MulBackward0 n0', 'SumBackward0 n2']
    """
    if nid is None:
        return ""
    n = trace.nodes.get(nid)
    if n is None:
        return visible(nid)
    name = visible(n.name)
    if n.kind == "accumulate_grad" and n.variable:
        leaf = tensor_label(trace, n.variable)
        name += f" ({clip(leaf, leaf_width) if leaf_width else leaf})"
    return f"{name} {visible(nid)}"


def run_label(trace: Any, r: BackwardRun) -> str:
    """``run 2 of 3: backward of z`` (and the engine when it is not PyTorch's), as the player's
    header says; the run numbered as every picture's title numbers it (NOTE [run numbers]).

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs="all") as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(3):
        ...         z = (x * 2).sum()
        ...         z.backward()
        >>> run_label(tr, tr.runs[1])
        'run 2 of 3: backward of z'
    """
    roots = ", ".join(tensor_label(trace, t) for t in r.roots) or "?"
    engine = f" ({visible(r.engine)} engine)" if r.engine != "pytorch" else ""
    return f"{run_name(trace, r.id)}: {visible(r.kind)} of {roots}{engine}"


def describe(trace: Any, step: Any) -> str:
    """One sentence saying what the engine does in ``step``: the player's words, written once
    in :mod:`gradviz.render.sentences`, with nodes named by :func:`node_label`.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> describe(tr, tr.run().steps[-2])
        'AccumulateGrad (w) n1 writes w.grad.'
    """
    return sentence_text(step_sentence(trace, step), lambda nid: node_label(trace, nid),
                         visible)


# -- replaying a run for a viewer ------------------------------------------------------------------
class RunReplay:
    """The engine's state after any step of a run, for a viewer that moves a step at a time.

    Built on :func:`~gradviz.trace.replay.states` (NOTE [one replay]: the input buffers, the
    queue and the rest come from there): stepping forward advances the replay by one step;
    going back replays from the start (linear in the step number, never quadratic over a walk).
    Besides the :class:`StepState` it keeps what only a viewer wants: the last ``execute`` step
    (whose gradients the panel lists) and every leaf's ``.grad`` before the run.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> rp = RunReplay(tr.run())
        >>> rp.at(3).step.kind, sorted(rp.at(3).buffers)
        ('accumulate', ['n0'])
    """

    def __init__(self, run: BackwardRun) -> None:
        self.run = run
        self.leaf_before: dict[str, Any] = {}
        for s in run.steps:  # a leaf's .grad before the run: the `before` of its first write
            tid = _get(s, "tensor") if s.kind == "leaf_grad" else None
            if tid is not None and tid not in self.leaf_before:
                self.leaf_before[tid] = _get(s, "before")
        self._leaves: list[str] | None = None
        self._ops: dict[str, Any] | None = None
        self._restart()

    def _restart(self) -> None:
        self._states = states(self.run)
        self.k = -1
        self.state: StepState | None = None
        self.last_execute: Any = None

    def at(self, k: int) -> StepState:
        """The state after step ``k`` (clamped to the run's steps)."""
        n = len(self.run.steps)
        if not n:
            raise IndexError(f"run {self.run.id} has no steps")
        k = max(0, min(n - 1, k))
        if k < self.k:
            self._restart()
        while self.k < k:
            st = next(self._states)
            self.k += 1
            if st.step.kind == "execute":
                self.last_execute = st.step
            self.state = st
        assert self.state is not None
        return self.state

    def leaves(self, trace: Any) -> list[str]:
        """:func:`run_leaves` of this run (computed once)."""
        if self._leaves is None:
            self._leaves = run_leaves(trace, self.run)
        return self._leaves

    def op(self, trace: Any, op_id: str) -> Any:
        """The forward op ``op_id`` of ``trace`` (looked up in a table built once), or None."""
        if self._ops is None:
            self._ops = {o.id: o for o in trace.ops}
        return self._ops.get(op_id)

    def leaf_grad(self, tid: str) -> Any:
        """``tid``'s ``.grad`` after the current step (its value before the run until written)."""
        assert self.state is not None
        if tid in self.state.leaf_grads:
            return self.state.leaf_grads[tid]
        return self.leaf_before.get(tid)


def run_leaves(trace: Any, r: BackwardRun) -> list[str]:
    """The tensors whose ``.grad`` a run reports (its AccumulateGrad leaves and every tensor a
    ``leaf_grad`` step names), in creation order, as the player lists them."""
    out: list[str] = []
    for nid in r.nodes:
        n = trace.nodes.get(nid)
        if n is not None and n.kind == "accumulate_grad" and n.variable and n.variable not in out:
            out.append(n.variable)
    for s in r.steps:
        tid = _get(s, "tensor") if s.kind == "leaf_grad" else None
        if tid and tid not in out:
            out.append(tid)
    order = {tid: i for i, tid in enumerate(trace.tensors)}
    return sorted(out, key=lambda t: order.get(t, len(order)))


MAX_LISTED = 40  # dependency counts and input buffers listed in the step panel


def _deps_shown(trace: Any, st: StepState, limit: int) -> list[str]:
    """The nodes whose dependency count the panel lists: all of them in a small graph; in a
    large one, those the current step is about first (its node, the nodes it sends to, the
    ready queue), then the rest in graph order, up to ``limit``."""
    if len(st.deps) <= limit:
        return list(st.deps)
    first: list[str] = []
    node = st.step.node
    n = trace.nodes.get(node) if node is not None else None
    for nid in [node, *(t for t, _ in (n.next_functions if n is not None else [])
                        if t is not None), *st.ready]:
        if nid in st.deps and nid not in first:
            first.append(nid)
    chosen = set(first[:limit])
    rest = [nid for nid in st.deps if nid not in chosen][: max(0, limit - len(chosen))]
    return first[:limit] + rest


def step_detail(trace: Any, replay: RunReplay, k: int) -> Any:
    """What a viewer shows for step ``k`` of ``replay.run``, as a rich renderable: what happens,
    the gradients involved, the ready queue, the input buffers, the dependency counts and every
    leaf's ``.grad``. The same sections as the HTML player's panel.

    Example:
        >>> import gradviz
        >>> from rich.console import Console
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> con = Console(width=100, record=True, file=open("/dev/null", "w"))
        >>> con.print(step_detail(tr, RunReplay(tr.run()), 3))
        >>> "arriving now: SumBackward0 n2 → MulBackward0 n0 (input 0)" in con.export_text()
        True
    """
    from rich.console import Group
    from rich.text import Text

    r = replay.run
    st = replay.at(k)
    step = st.step
    parts: list[Any] = []

    def heading(title: str) -> None:
        parts.append(Text(""))
        parts.append(Text(title, style="bold underline"))

    def kv(key: str, value: str, style: str = "") -> Text:
        t = Text(key, style="dim")
        t.append(visible(value), style=style)
        return t

    head = Text()
    head.append(f" {visible(step.kind)} ", style="bold reverse magenta")
    head.append(f"  step {step.index} of {len(r.steps) - 1}", style="dim")
    parts.append(head)
    parts.append(Text(describe(trace, step)))
    n = trace.nodes.get(step.node) if step.node is not None else None
    if n is not None and n.forward_op:
        op = replay.op(trace, n.forward_op)
        if op is not None:
            outs = ", ".join(tensor_label(trace, t) for t in op.outputs)
            call = clip(op_call(op, lambda tid: getattr(trace.tensors.get(tid), "name", tid)),
                        120)
            parts.append(kv("made by the forward op ", visible(call)
                            + (f" → {outs}" if outs else "")))
            if op.source is not None:
                parts.append(Text(visible(source_str(op.source, width=100)), style="dim"))

    kind = step.kind
    if kind == "accumulate":
        heading("gradient arriving")
        src = _get(step, "source")
        parts.append(kv("arriving now: ", f"{node_label(trace, src) if src else 'root'} → "
                        f"{node_label(trace, step.node)} (input {_get(step, 'input_nr')})"))
        parts.append(kv("gradient: ", grad_str(_get(step, "grad"))))
        before = st.buffer_before
        parts.append(kv("input buffer before: ",
                        "empty" if before is None else grad_str(before)))
        parts.append(kv("input buffer after: ", grad_str(_get(step, "buffer")), "bold"))
    elif kind == "leaf_grad":
        heading("leaf gradient")
        parts.append(kv("before: ", grad_str(_get(step, "before"))))
        parts.append(kv("after: ", grad_str(_get(step, "after")), "bold"))
    elif kind in ("pack_hook", "unpack_hook"):
        heading("saved-tensor hook")
        if kind == "pack_hook":
            parts.append(kv("given: ", grad_str(_get(step, "tensor"))))
        parts.append(kv("packed: ", packed_text(_get(step, "packed"))
                        if "repr" in (_get(step, "packed") or {})
                        else grad_str(_get(step, "packed"))))
        if kind == "unpack_hook":
            parts.append(kv("returned: ", grad_str(_get(step, "tensor")), "bold"))
    elif kind == "gradient_node":
        heading("gradient-graph node")
        for i, g in enumerate(_get(step, "inputs") or []):
            parts.append(kv(f"input {i}: ", grad_str(g)))
        parts.append(kv("output: ", grad_str(_get(step, "output"))))
    ex = replay.last_execute
    if ex is not None:
        heading("gradients sent" + ("" if ex is step else f" (by step {ex.index})"))
        parts.append(kv("node: ", node_label(trace, ex.node)))
        for i, g in enumerate(_get(ex, "grad_outputs") or []):
            parts.append(kv(f"received (output {i}): ", grad_str(g)))
        en = trace.nodes.get(ex.node)
        grads = _get(ex, "grad_inputs") or []
        for i, (target, nr) in enumerate(en.next_functions if en is not None else []):
            if target is None:
                parts.append(Text(f"input {i}: no edge (does not require grad)", style="dim"))
            else:
                g = grads[i] if i < len(grads) else None
                parts.append(kv(f"→ {node_label(trace, target)} (input {nr}): ", grad_str(g)))

    heading("ready queue")
    parts.append(Text(", ".join(node_label(trace, q) for q in st.ready) or "(empty)",
                      style="green"))

    heading("input buffers")
    waiting = [(nid, nr, g) for nid, buf in st.buffers.items()
               for nr, g in sorted(buf.items())]
    for nid, nr, g in waiting[:MAX_LISTED]:
        parts.append(kv(f"{node_label(trace, nid)} input {nr}: ", grad_str(g)))
    if len(waiting) > MAX_LISTED:
        parts.append(Text(f"… {len(waiting) - MAX_LISTED} more", style="dim"))
    if not waiting:
        parts.append(Text("(none waiting)", style="dim"))

    heading("dependencies (edges still to deliver)")
    if st.deps:
        shown = _deps_shown(trace, st, MAX_LISTED)
        width = max(len(node_label(trace, nid)) for nid in shown)
        lines = Text()
        for nid in shown:
            count = st.deps[nid]
            changed = kind == "accumulate" and step.node == nid
            lines.append(node_label(trace, nid).ljust(width + 2),
                         style="bold" if changed else "")
            lines.append(str(count), style="bold yellow" if changed else
                         ("green" if count == 0 else ""))
            lines.append("\n")
        lines.rstrip()
        parts.append(lines)
        if len(shown) < len(st.deps):
            zeros = sum(1 for nid, c in st.deps.items() if c == 0 and nid not in shown)
            rest = len(st.deps) - len(shown)
            parts.append(Text(f"… {rest} more nodes ({zeros} of them at 0); listed: the current "
                              "node, where it sends, the ready queue, then graph order",
                              style="dim"))
    else:
        parts.append(Text("not counted yet", style="dim"))

    heading("leaf .grad")
    leaves = replay.leaves(trace)
    if leaves:
        for tid in leaves:
            written = kind == "leaf_grad" and _get(step, "tensor") == tid
            parts.append(kv(f"{tensor_label(trace, tid)}.grad = ",
                            grad_str(replay.leaf_grad(tid)), "bold yellow" if written else ""))
    else:
        parts.append(Text("this run writes no leaf .grad", style="dim"))
    return Group(*parts)


# -- the step table --------------------------------------------------------------------------------
MAX_COUNTS = 8  # dependency counts listed in the compute_dependencies row before "… N more"


def _step_cells(step: Step, st: StepState, trace: Trace) -> tuple[str, str, str]:
    """(node, dependencies, gradient) of one step, as plain text. Names are never cut."""
    node = node_label(trace, step.node)
    deps = grad = ""
    if step.kind == "compute_dependencies":
        counts = _get(step, "counts", {}) or {}
        shown = [f"{node_label(trace, k)}: {v}" for k, v in list(counts.items())[:MAX_COUNTS]]
        if len(counts) > MAX_COUNTS:
            shown.append(f"… {len(counts) - MAX_COUNTS} more")
        deps = ", ".join(shown)
        node = f"{len(counts)} nodes"
    elif step.kind == "accumulate":
        src = _get(step, "source")
        node = f"{node_label(trace, src)} → {node}" if src else f"root → {node}"
        deps = f"{_get(step, 'remaining')} left"
        grad = (f"input {_get(step, 'input_nr')}: {grad_str(_get(step, 'grad'))}; buffer "
                f"{grad_str(st.buffer_before)} → {grad_str(st.buffer_after)}")
    elif step.kind == "execute":
        gi = [grad_str(g) for g in _get(step, "grad_inputs") or []]
        go = [grad_str(g) for g in _get(step, "grad_outputs") or []]
        grad = f"in {'; '.join(go)}" + (f" → out {'; '.join(gi)}" if gi else "")
        if step.node in st.deps:
            deps = str(st.deps[step.node])
    elif step.kind == "enqueue":
        if step.node in st.deps:
            deps = str(st.deps[step.node])
    elif step.kind == "leaf_grad":
        grad = f"{tensor_label(trace, _get(step, 'tensor'))}.grad = {grad_str(_get(step, 'after'))}"
    elif step.kind == "hook":
        grad = visible(f"{_get(step, 'hook', '')} {_get(step, 'fn') or ''}".strip())
    elif step.kind == "pack_hook":
        grad = visible(f"{_get(step, 'fn') or '?'} → {packed_text(_get(step, 'packed'))}")
    elif step.kind == "unpack_hook":
        saved = _get(step, "saved")
        grad = visible(f"{saved_attr(saved) if saved else '?'} = {_get(step, 'fn') or '?'}"
                       f"({packed_text(_get(step, 'packed'))}) → "
                       f"{grad_str(_get(step, 'tensor'))}")
    elif step.kind == "release_saved":
        grad = "freed " + (", ".join(st.freed) or "no saved tensor")
    elif step.kind == "error":
        grad = visible(f"{_get(step, 'type', '')}: {_get(step, 'message', '')}")
    return node, deps, clip(grad, 120)


def _queue(ready: list[str], trace: Any) -> str:
    return "[" + ", ".join(node_label(trace, r) for r in ready) + "]"


def step_table(trace: Trace, run: int | str = -1, max_rows: int | None = None) -> Table:
    """Every engine step of a backward run in a ``rich.table.Table``.

    Columns: step, event, node, ready queue (after the step), dependency count(s), and the
    gradient involved (received/sent by ``execute``, added by ``accumulate``, written by
    ``leaf_grad``). Nodes are named as in the player (``MulBackward0 n5``,
    ``AccumulateGrad (w) n3``); an ``accumulate`` row reads ``sender → receiver``.

    Args:
        trace: a :class:`~gradviz.trace.Trace`.
        run: the backward run (index or id).
        max_rows: show at most this many steps (a note says how many were left out).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> step_table(tr).row_count == len(tr.run().steps)
        True
    """
    from rich.table import Table
    from rich.text import Text

    r = trace.run(run)
    title = f"{run_label(trace, r)}, {len(r.steps)} steps"
    table = Table(title=Text(title), show_lines=False, header_style="bold")
    for col, style in (("step", "dim"), ("event", "bold"), ("node", ""), ("ready queue", "green"),
                       ("deps", "cyan"), ("gradient", "")):
        table.add_column(col, style=style or None, overflow="fold")
    for i, st in enumerate(states(r)):
        if max_rows is not None and i >= max_rows:
            table.caption = f"… {len(r.steps) - max_rows} more steps not shown"
            break
        node, deps, grad = _step_cells(st.step, st, trace)
        table.add_row(str(st.step.index), Text(visible(st.step.kind)), Text(node),
                      Text(_queue(st.ready, trace)), Text(deps), Text(grad))
    return table


def print_steps(trace: Trace, run: int | str = -1, console: Console | None = None,
                max_rows: int | None = None) -> None:
    """Print :func:`step_table` for a backward run.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> print_steps(tr)  # doctest: +SKIP
    """
    _console(console).print(step_table(trace, run, max_rows))


PLAIN_WIDTH = 200  # the step table's width when printed to a pipe or a file (no COLUMNS set)


def _console_of_width(width: int) -> Console:
    from rich.console import Console

    return Console(width=width)


def interactive(console: Console | None = None) -> bool:
    """Whether a keyboard-driven view can run: stdin and stdout are terminals (not a pipe, a
    file or CI) and the terminal is not ``TERM=dumb``.

    Example:
        >>> import io
        >>> from rich.console import Console
        >>> interactive(Console(file=io.StringIO()))
        False
    """
    con = _console(console)
    stdin = sys.stdin
    return (con.is_terminal and stdin is not None and stdin.isatty()
            and os.environ.get("TERM", "") != "dumb")


def step_through(trace: Trace, run: int | str = -1, console: Console | None = None,
                 plain: bool | None = None) -> int:
    """Walk through a backward run one engine step at a time, with single keys.

    In a terminal this opens a full-screen view (:class:`gradviz.render.tui.StepsApp`, on
    Textual): the step list on the left, the current step on the right (what happens, the ready
    queue, input buffers, dependency counts, every leaf's ``.grad``), redrawn in place. Keys:
    → / ``l`` / ``j`` / space next, ← / ``h`` / ``k`` back, Home / End, ``[`` ``]`` or Tab to
    switch runs, ``?`` help, ``q`` quit. Elsewhere (a pipe, a file, CI) or with ``plain=True``
    the whole :func:`step_table` is printed instead.

    Args:
        trace: a :class:`~gradviz.trace.Trace`.
        run: the backward run to start with (index or id).
        console: where the plain table is printed (default: a new ``rich.console.Console``).
        plain: ``True`` always prints the table; ``None`` (default) decides by the terminal.

    Returns:
        the index of the last step shown.

    Example:
        >>> import gradviz, io
        >>> from rich.console import Console
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> step_through(tr, console=Console(file=io.StringIO()))  # not a terminal: the table
        11
    """
    con = _console(console)
    r = trace.run(run)
    if plain or (plain is None and not interactive(con)):
        if console is None and not con.is_terminal and "COLUMNS" not in os.environ:
            # A pipe or a file has no width: 80 columns would cut every name in two.
            con = _console_of_width(PLAIN_WIDTH)
        con.print(step_table(trace, run))
        return len(r.steps) - 1
    from gradviz.render.tui import StepsApp

    index = next(i for i, x in enumerate(trace.runs) if x is r)
    app = StepsApp(trace, run=index)
    app.run()
    return app.step
