"""The backward graph and the engine's steps in a terminal, with rich.

- :func:`print_graph` — the backward graph as a tree from the root along ``next_functions``.
- :func:`step_table` / :func:`print_steps` — every engine step of a run in one table.
- :func:`step_through` — the same, one step at a time (Enter / ``n`` next, ``p`` back, ``q`` quit).

Everything reads the plain-data model (a live tensor goes through :func:`gradviz.graph_of`);
user strings are put in rich ``Text`` objects, never parsed as markup, so a tensor named
``[bold]x`` prints as typed, and pass through :func:`visible` first, so a name holding an escape
sequence cannot recolour or rewrite the terminal. rich is imported inside the functions.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gradviz.render._format import clip, grad_str, shape_str
from gradviz.trace.replay import StepState, states

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
    from rich.table import Table

    from gradviz.trace.model import BackwardGraph, BackwardRun, NodeInfo, Step
    from gradviz.trace.recorder import Trace

__all__ = ["print_graph", "graph_tree", "step_table", "print_steps", "step_through", "visible"]

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


# -- steps -----------------------------------------------------------------------------------------
def _names(run: BackwardRun, trace: Trace) -> dict[str, str]:
    return {nid: trace.nodes[nid].name for nid in run.nodes if nid in trace.nodes}


def _cell(text: str, width: int | None = None) -> Any:
    """A table cell or line: made visible, clipped, never parsed as markup."""
    from rich.text import Text

    text = visible(text)
    return Text(clip(text, width) if width else text)


def _node_ref(nid: str | None, names: dict[str, str]) -> str:
    if nid is None:
        return ""
    return f"{names.get(nid, '?')} {nid}"


def _queue(ready: list[str], names: dict[str, str]) -> str:
    return "[" + ", ".join(names.get(r, r) for r in ready) + "]"


def _step_cells(step: Step, st: StepState, names: dict[str, str], trace: Trace
                ) -> tuple[str, str, str]:
    """(node, dependencies, gradient) of one step, as plain text."""
    d = step.data
    node = _node_ref(step.node, names)
    deps = grad = ""
    if step.kind == "compute_dependencies":
        counts = d.get("counts", {})
        deps = ", ".join(f"{names.get(k, k)} {k}={v}" for k, v in counts.items())
        node = f"{len(counts)} nodes"
    elif step.kind == "accumulate":
        src = d.get("source")
        node = f"{node} ← {_node_ref(src, names)}" if src else node
        deps = f"{d.get('remaining')} left"
        grad = (f"input_nr={d.get('input_nr')}: {grad_str(d.get('grad'))}; buffer "
                f"{grad_str(st.buffer_before)} → {grad_str(st.buffer_after)}")
    elif step.kind == "execute":
        gi = [grad_str(g) for g in d.get("grad_inputs") or []]
        go = [grad_str(g) for g in d.get("grad_outputs") or []]
        grad = f"in {'; '.join(go)}" + (f" → out {'; '.join(gi)}" if gi else "")
        if step.node in st.deps:
            deps = str(st.deps[step.node])
    elif step.kind == "enqueue":
        if step.node in st.deps:
            deps = str(st.deps[step.node])
    elif step.kind == "leaf_grad":
        t = trace.tensors.get(d.get("tensor", ""))
        tname = t.name if t is not None else d.get("tensor", "")
        grad = f"{tname}.grad = {grad_str(d.get('after'))}"
    elif step.kind == "hook":
        grad = f"{d.get('hook', '')} {d.get('fn') or ''}".strip()
    elif step.kind == "release_saved":
        grad = "freed " + (", ".join(st.freed) or "no saved tensor")
    elif step.kind == "error":
        grad = f"{d.get('type', '')}: {d.get('message', '')}"
    return clip(visible(node), 60), clip(visible(deps), 60), clip(visible(grad), 80)


def step_table(trace: Trace, run: int | str = -1, max_rows: int | None = None) -> Table:
    """Every engine step of a backward run in a ``rich.table.Table``.

    Columns: step, event, node, ready queue (after the step), dependency count(s), and the
    gradient involved (received/sent by ``execute``, added by ``accumulate``, written by
    ``leaf_grad``).

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
    names = _names(r, trace)
    title = f"{r.id}: {r.kind} ({r.engine} engine), {len(r.steps)} steps"
    table = Table(title=_cell(title, 100), show_lines=False, header_style="bold")
    for col, style in (("step", "dim"), ("event", "bold"), ("node", ""), ("ready queue", "green"),
                       ("deps", "cyan"), ("gradient", "")):
        table.add_column(col, style=style or None, overflow="fold")
    for i, st in enumerate(states(r)):
        if max_rows is not None and i >= max_rows:
            table.caption = f"… {len(r.steps) - max_rows} more steps not shown"
            break
        node, deps, grad = _step_cells(st.step, st, names, trace)
        table.add_row(str(st.step.index), _cell(st.step.kind), Text(node),
                      _cell(_queue(st.ready, names)), Text(deps), Text(grad))
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


def _step_view(trace: Trace, r: BackwardRun, st: StepState, names: dict[str, str]) -> Any:
    """One step as a panel: what happened, the ready queue, the state of every node."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    node, deps, grad = _step_cells(st.step, st, names, trace)
    head = Text()
    head.append(f"step {st.step.index}/{len(r.steps) - 1}  ", style="dim")
    head.append(visible(st.step.kind), style="bold magenta")
    if node:
        head.append("  " + node)
    body: list[Any] = [head]
    if grad:
        body.append(Text("gradient: " + grad))
    body.append(Text("ready queue: " + visible(_queue(st.ready, names)), style="green"))
    if len(r.nodes) <= 40:
        nodes = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
        for col in ("node", "state", "deps"):
            nodes.add_column(col)
        done = set(st.done)
        for nid in r.nodes:
            if nid == st.executing:
                state, style = "executing", "bold yellow"
            elif nid in st.ready:
                state, style = "ready", "green"
            elif nid in done:
                state, style = "done", "dim"
            else:
                state, style = "waiting", ""
            nodes.add_row(_cell(_node_ref(nid, names)), Text(state, style=style),
                          str(st.deps.get(nid, "")))
        body.append(nodes)
    return Panel(Group(*body), title=_cell(f"{r.id} ({r.engine})", 60), title_align="left",
                 subtitle="Enter/n: next  p: back  q: quit", subtitle_align="right")


# Commands are compared lower-cased: the arrow keys' escape sequences end in "c" / "d".
_NEXT = {"", "n", "next", "\x1b[c", "\x1boc", "l", "j"}
_PREV = {"p", "prev", "b", "back", "\x1b[d", "\x1bod", "h", "k"}
_QUIT = {"q", "quit", "exit"}


def step_through(trace: Trace, run: int | str = -1, console: Console | None = None,
                 input_fn: Callable[[str], str] | None = None) -> int:
    """Walk through a backward run one engine step at a time.

    Interactive when stdout is a terminal or ``input_fn`` is given: each step is shown as a
    panel (event, node, gradient, ready queue, every node's state and dependency count), then a
    line is read — Enter or ``n`` (or →) for the next step, ``p`` (or ←) for the previous one,
    ``q`` to quit. Otherwise (a pipe, a file) the whole :func:`step_table` is printed.

    Args:
        trace: a :class:`~gradviz.trace.Trace`.
        run: the backward run (index or id).
        console: where to print (default: a new ``rich.console.Console``).
        input_fn: reads one command line, given a prompt (default: :func:`input`).

    Returns:
        the index of the last step shown.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> keys = iter(["n", "p", "q"])
        >>> from rich.console import Console
        >>> step_through(tr, console=Console(file=open("/dev/null", "w")),
        ...              input_fn=lambda _: next(keys))
        0
    """
    con = _console(console)
    r = trace.run(run)
    if input_fn is None:
        if not (con.is_terminal and sys.stdin.isatty()):
            con.print(step_table(trace, run))
            return len(r.steps) - 1
        input_fn = input
    if not r.steps:
        con.print(_cell(f"{r.id} has no steps"))
        return -1
    names = _names(r, trace)
    snapshots: list[StepState] = []  # replayed lazily, kept so that going back is free
    it = states(r)
    k = 0
    while True:
        while len(snapshots) <= k:
            st = next(it)
            snapshots.append(StepState(step=st.step, executing=st.executing, ready=list(st.ready),
                                       done=list(st.done), deps=dict(st.deps),
                                       finished=st.finished, buffer_before=st.buffer_before,
                                       buffer_after=st.buffer_after, freed=list(st.freed)))
        con.print(_step_view(trace, r, snapshots[k], names))
        try:
            cmd = input_fn("> ").strip().lower()
        except (EOFError, KeyboardInterrupt):
            return k
        if cmd in _QUIT:
            return k
        if cmd in _PREV:
            k = max(0, k - 1)
        elif cmd in _NEXT:
            if k == len(r.steps) - 1:
                return k
            k += 1
        else:
            con.print(_cell(f"unknown command {cmd!r}: Enter/n next, p previous, q quit"))
