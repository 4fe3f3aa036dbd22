"""Graphviz drawings of the trace model: backward graph, forward graph, both, one engine step.

Every function here takes plain data (a :class:`~gradviz.trace.model.BackwardGraph` or a
:class:`~gradviz.trace.recorder.Trace`; a live tensor is first turned into a model with
:func:`gradviz.graph_of`) and returns a ``graphviz.Digraph`` — the object torchviz returns, so it
displays inline in Jupyter — whose layout and rendering go through pygraphviz's bundled Graphviz
(:func:`to_svg`, :func:`render`): no ``dot`` binary is needed.

NOTE [drawing ids] The drawings are meant to be scripted (the HTML player highlights nodes and
edges by id), so their ids are stable and documented:

- a node's DOT name and SVG ``id`` is its model id: ``n3`` (backward node), ``t0`` (tensor),
  ``op2`` (forward op), ``n3.saved.0`` (a saved value); summary nodes are ``g0, g1, ...``
  (``fg``/``bg`` in :func:`draw_both`); a proxy (dashed copy of a shared node, see
  :mod:`gradviz.render.collapse`) is ``<id>~<k>``. Ids that are not plain identifiers (a hostile
  trace file) are replaced by ``x<hash>``.
- a backward edge's SVG ``id`` is ``<from>-><to>:<input_nr>`` (``#2`` appended for a repeated
  edge, as in ``x * x``); the others are ``<from>-><to>``.
- SVG classes: ``gv-op``, ``gv-custom``, ``gv-accumulate_grad``, ``gv-graph_root``, ``gv-leaf``,
  ``gv-param``, ``gv-output``, ``gv-tensor``, ``gv-saved``, ``gv-group``, ``gv-proxy`` on nodes;
  ``gv-next``, ``gv-variable``, ``gv-root``, ``gv-saved``, ``gv-input``, ``gv-output``,
  ``gv-link``, ``gv-merged`` on edges.
- :func:`draw_both` draws backward edges reversed (``dir=back``, so the backward side reads
  bottom-up next to the forward one): their SVG ``<title>`` is ``<to>-><from>``, their ``id``
  stays as above.
- the returned drawing has a ``plan`` attribute (:class:`~gradviz.render.collapse.Plan`):
  ``plan.drawn(model_id)`` is the id drawn for a model id after collapsing.

NOTE [escaping] Every user string (tensor names, op names, file paths, code) goes through
:func:`_text`: control characters become spaces, backslashes are doubled (DOT would read ``\\l``
as an escape) and ``&`` becomes ``&amp;`` (Graphviz decodes entities in labels), then the whole
label is wrapped in ``graphviz.nohtml`` so ``<...>`` is never read as an HTML-like label; the
graphviz package adds the quotes and escapes ``"``. Graphviz itself escapes the SVG text.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradviz.render import collapse
from gradviz.render._format import clip, grad_str, plain, shape_str, source_str, value_str
from gradviz.trace.io import atomic_write
from gradviz.trace.replay import StepState, replay

if TYPE_CHECKING:  # pragma: no cover
    import graphviz

    from gradviz.trace.model import BackwardGraph, BackwardRun, NodeInfo, OpRecord, TensorInfo
    from gradviz.trace.recorder import Trace

__all__ = ["draw_backward", "draw_forward", "draw_both", "draw_step", "to_svg", "render",
           "FORMATS"]

FORMATS = ("svg", "png", "pdf", "dot")

# Colours: torchviz's where it has one (grad_fn grey, leaves light blue, outputs olive green,
# saved tensors orange), so a drawing reads like the one learners see in tutorials.
_FILL = {
    "op": "lightgrey",
    "custom": "#e3d3f3",
    "accumulate_grad": "#dbe7f7",
    "graph_root": "white",
    "engine": "white",
    "leaf": "lightblue",
    "param": "#b9e3a9",
    "output": "darkolivegreen1",
    "tensor": "white",
    "input": "#f2f2f2",
    "saved": "orange",
    "group": "#fff2cc",
    "fop": "#fbe3c2",
}
_GRAPH_ATTR = {"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.35", "fontname": "Helvetica",
               "fontsize": "12"}
_NODE_ATTR = {"shape": "box", "style": "filled,rounded", "fontname": "Helvetica",
              "fontsize": "11", "height": "0.3", "margin": "0.08,0.04"}
_EDGE_ATTR = {"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.7", "labeldistance": "1.6",
              "labelangle": "-35"}

_SAFE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.~]*\Z")


# -- escaping -------------------------------------------------------------------------------------
def _text(s: Any) -> str:
    """One line of user text made literal for a DOT escString (see NOTE [escaping])."""
    return plain(s).replace("\\", "\\\\").replace("&", "&amp;")


def _label(*lines: Any) -> str:
    """A centred multi-line DOT label from user text lines (empty lines are skipped)."""
    from graphviz import nohtml

    return nohtml("\\n".join(_text(clip(line, 60)) for line in lines if line not in (None, "")))


def _attr(s: Any) -> str:
    """Any other attribute value holding user text (tooltips)."""
    from graphviz import nohtml

    return nohtml(_text(clip(s, 200)))


def _name(model_id: Any) -> str:
    """The DOT node name (and SVG id) for a model id (see NOTE [drawing ids])."""
    s = str(model_id)
    if _SAFE_ID.match(s):
        return s
    return "x" + hashlib.sha1(s.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _gc_paused(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with collapse.no_gc():
            return fn(*args, **kwargs)

    return wrapper


# -- the Digraph subclass and rendering -----------------------------------------------------------
@functools.cache
def _drawing_class() -> type:
    import graphviz

    class Drawing(graphviz.Digraph):
        """A ``graphviz.Digraph`` that lays out through pygraphviz (no ``dot`` binary needed):
        ``pipe``, ``render`` and the Jupyter reprs all work without system Graphviz."""

        plan: Any = None

        def pipe(self, format: str | None = None, renderer: str | None = None,
                 formatter: str | None = None, neato_no_op: Any = None, quiet: bool = False,
                 *, engine: str | None = None, encoding: str | None = None) -> Any:
            data = _layout(self.source, format or self.format or "svg", engine or self.engine)
            return data.decode(encoding) if encoding else data

        def render(self, filename: Any = None, directory: Any = None, view: bool = False,
                   cleanup: bool = False, format: str | None = None, *args: Any,
                   outfile: Any = None, **kwargs: Any) -> str:
            fmt = format or self.format or "svg"
            src = None
            if outfile is None:
                src = self.save(filename, directory=directory)
                outfile = f"{src}.{fmt}"
            out = render(self, outfile, fmt)
            if cleanup and src is not None:
                os.remove(src)
            return out

        def _repr_image_svg_xml(self) -> str:
            return to_svg(self)

        def _repr_svg_(self) -> str:
            return to_svg(self)

    Drawing.__module__ = __name__
    Drawing.__qualname__ = "Drawing"  # pickles as gradviz.render.graphviz.Drawing
    return Drawing


def __getattr__(name: str) -> Any:
    if name == "Drawing":  # built on first use: importing this module must not import graphviz
        return _drawing_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _new(name: str) -> Any:
    return _drawing_class()(name=name, graph_attr=dict(_GRAPH_ATTR), node_attr=dict(_NODE_ATTR),
                            edge_attr=dict(_EDGE_ATTR))


def _layout(source: str, fmt: str, prog: str | None = "dot") -> bytes:
    """Lay out and render with pygraphviz's bundled Graphviz libraries (no ``dot`` binary)."""
    import pygraphviz

    # A lone surrogate (an undecodable file name's bytes, kept by Python) cannot be encoded for
    # Graphviz: it is drawn as its escape instead of failing the whole picture.
    source = source.encode("utf-8", "backslashreplace").decode("utf-8")
    graph = pygraphviz.AGraph(string=source)
    # layout() then draw() is draw(prog=...) without its "may take a long time" stderr line.
    graph.layout(prog=prog or "dot")
    return graph.draw(format=fmt)


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)


def to_svg(dot: graphviz.Digraph | str, inline: bool = False) -> str:
    """Lay out a drawing (or DOT source) with pygraphviz's bundled Graphviz and return SVG text.

    Args:
        dot: a ``graphviz.Digraph`` (what the ``draw_*`` functions return) or DOT source.
        inline: drop the XML prolog, doctype and generator comment, to embed the ``<svg>``
            element in an HTML page.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> to_svg(draw_backward((x * 2).sum()), inline=True).startswith("<svg")
        True
    """
    source = dot if isinstance(dot, str) else dot.source
    svg = _layout(source, "svg").decode("utf-8")
    return _PROLOG.sub("", svg, count=1) if inline else svg


def render(dot: graphviz.Digraph | str, path: str | os.PathLike[str],
           format: str | None = None) -> str:
    """Write a drawing to ``path`` as svg, png, pdf (laid out by pygraphviz) or dot (source).

    Args:
        dot: a ``graphviz.Digraph`` or DOT source.
        path: the file to write.
        format: one of :data:`FORMATS`; by default taken from ``path``'s suffix.

    Returns:
        ``path`` as a string.

    Example:
        >>> import gradviz, tempfile, os
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> out = render(draw_backward((x * 2).sum()), os.path.join(tempfile.mkdtemp(), "g.dot"))
        >>> open(out).read().startswith("digraph")
        True
    """
    path = os.fspath(path)
    fmt = (format or os.path.splitext(path)[1].lstrip(".") or "svg").lower()
    if fmt == "gv":
        fmt = "dot"
    if fmt not in FORMATS:
        raise ValueError(f"unsupported format {fmt!r}: use one of {', '.join(FORMATS)}")
    source = dot if isinstance(dot, str) else dot.source
    # Atomic (NOTE [atomic outputs] in gradviz.trace.io): laid out first, then written whole.
    if fmt == "dot":
        with atomic_write(path) as f:
            f.write(source)
    else:
        data = _layout(source, fmt)
        with atomic_write(path, "wb") as f:
            f.write(data)
    return path


# -- what the backward drawings are made of -------------------------------------------------------
@dataclass
class _Backward:
    """A backward graph with everything known around it (normalised drawing input)."""

    graph: BackwardGraph
    tensors: dict[str, TensorInfo]
    root_tensors: list[str]
    run: BackwardRun | None = None
    ops: dict[str, OpRecord] = field(default_factory=dict)
    title: str | None = None
    classes: dict[str, str] = field(default_factory=dict)  # Trace.module_classes


def _is_trace(obj: Any) -> bool:
    from gradviz.trace.recorder import Trace

    return isinstance(obj, Trace)


def _backward_input(obj: Any, run: int | str = -1) -> _Backward:
    from gradviz.tensor import Tensor
    from gradviz.trace.graph import graph_of
    from gradviz.trace.model import BackwardGraph

    if isinstance(obj, Tensor):
        obj = graph_of(obj)
    if isinstance(obj, BackwardGraph):
        roots = {(e[0], e[1]) for e in obj.roots}
        outs = [t.id for t in obj.tensors.values()
                if not t.is_leaf and (t.grad_fn, t.output_nr) in roots]
        return _Backward(graph=obj, tensors=obj.tensors, root_tensors=outs)
    if _is_trace(obj):
        tr: Trace = obj
        ops = {op.id: op for op in tr.ops}
        if tr.runs:
            r = tr.run(run)
            return _Backward(graph=tr.backward_graph(run), tensors=tr.tensors,
                             root_tensors=list(r.roots), run=r, ops=ops, title=tr.name,
                             classes=tr.module_classes)
        # No backward yet: the whole recorded graph, rooted where nothing points.
        targets = {nxt for n in tr.nodes.values() for nxt, _ in n.next_functions if nxt}
        roots = [[nid, 0] for nid in tr.nodes if nid not in targets]
        leaves = {n.variable: tr.tensors[n.variable] for n in tr.nodes.values()
                  if n.variable in tr.tensors}
        graph = BackwardGraph(nodes=dict(tr.nodes), roots=roots, tensors=leaves)
        rootset = {r[0] for r in roots}
        outs = [t.id for t in tr.tensors.values() if t.grad_fn in rootset and not t.is_leaf]
        return _Backward(graph=graph, tensors=tr.tensors, root_tensors=outs, ops=ops,
                         title=tr.name, classes=tr.module_classes)
    raise TypeError("expected a Tensor, a BackwardGraph or a Trace; got "
                    f"{type(obj).__name__}")


def _node_order(g: BackwardGraph) -> list[str]:
    """Nodes breadth-first from the roots, following next_functions in order (deterministic)."""
    order: list[str] = []
    seen: set[str] = set()
    queue = [r[0] for r in g.roots if r[0] in g.nodes]
    head = 0
    for nid in queue:
        seen.add(nid)
    while head < len(queue):
        nid = queue[head]
        head += 1
        order.append(nid)
        for nxt, _ in g.nodes[nid].next_functions:
            if nxt is not None and nxt in g.nodes and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    order.extend(n for n in g.nodes if n not in seen)  # unreachable leftovers, if any
    return order


def _saved_attr_name(name: str) -> str:
    return name if name.startswith(("saved_tensors", "_")) else f"_saved_{name}"


def _tensor_lines(t: TensorInfo | None, fallback: str = "") -> list[str]:
    if t is None:
        return [fallback]
    return [t.name, shape_str(t.shape)]


def _node_tip(n: NodeInfo, ops: dict[str, OpRecord]) -> str:
    tip = f"{n.name} ({n.id})" + (
        f", sequence_nr {n.sequence_nr}" if n.kind != "accumulate_grad" else "")
    op = ops.get(n.forward_op) if n.forward_op else None
    if op is not None:
        tip += f"; from {op.name} ({op.id})"
        if op.source is not None:
            tip += f" at {source_str(op.source, width=150)}"
    return tip


def _leaf_class(t: TensorInfo | None) -> str:
    return "param" if t is not None and t.is_param else "leaf"


@dataclass
class _Item:
    """One node to draw: the model id, its label lines and style. ``lines`` and ``tooltip``
    may be callables, evaluated only if the node is drawn (most are folded in big graphs)."""

    id: str
    lines: list[str] | Callable[[], list[str]]
    cls: str
    fill: str
    tooltip: str | Callable[[], str] = ""
    extra: dict[str, str] = field(default_factory=dict)
    ref: str = ""  # what a proxy copy says it refers to (an AccumulateGrad's leaf name)
    short: str = ""  # a proxy copy's label when not the first line (a forward op's name)


@dataclass
class _Edge:
    """One edge. ``head`` is plain text for the head label (``input_nr``); ``reverse`` draws it
    from ``dst`` to ``src`` with the arrow still pointing at ``dst`` (:func:`draw_both`)."""

    src: str
    dst: str
    cls: str
    nr: int | None = None  # input_nr of a next_functions edge
    k: int = 0  # how many identical edges came before (x * x)
    attrs: dict[str, str] = field(default_factory=dict)
    head: str | None = None
    reverse: bool = False

    @property
    def id(self) -> str:
        """The SVG id (see NOTE [drawing ids])."""
        return (f"{_name(self.src)}->{_name(self.dst)}"
                + (f":{int(self.nr)}" if self.nr is not None else "")
                + (f"#{self.k + 1}" if self.k else ""))


def _edge(src: str, dst: str, cls: str, nr: int | None = None, k: int = 0,
          **attrs: str) -> _Edge:
    return _Edge(src, dst, cls, nr, k, attrs, head=None if nr is None else str(nr))


@dataclass
class _Parts:
    """A drawing before it becomes DOT: vertices for :func:`collapse.plan`, items, edges."""

    vertices: list[collapse.Vertex] = field(default_factory=list)
    items: dict[str, _Item] = field(default_factory=dict)
    edges: list[_Edge] = field(default_factory=list)

    def add(self, vertex: collapse.Vertex, item: _Item) -> None:
        self.vertices.append(vertex)
        self.items[vertex.id] = item


def _scope_of(b: _Backward) -> dict[str, tuple[str, ...]]:
    """Each node's module scope: its forward op's; for nodes without one (AccumulateGrad), the
    common scope of the nodes that send to it (so ``fc1.weight`` folds into ``fc1``)."""
    g = b.graph
    scope: dict[str, tuple[str, ...]] = {}
    for nid, n in g.nodes.items():
        op = b.ops.get(n.forward_op) if n.forward_op else None
        if op is not None:
            scope[nid] = tuple(op.scope)
    if not scope:
        return scope
    for nid in _node_order(g):  # parents come before children in BFS order for trees
        n = g.nodes[nid]
        s = scope.get(nid, ())
        for nxt, _ in n.next_functions:
            if nxt is None or nxt not in g.nodes or g.nodes[nxt].forward_op in b.ops:
                continue
            prev = scope.get(nxt)
            scope[nxt] = s if prev is None else collapse._common_prefix([prev, s])
    return scope


def _backward_parts(b: _Backward, show_saved: bool, show_attrs: bool, show_grads: bool,
                    leaf_boxes: bool = True, state: StepState | None = None) -> _Parts:
    """Vertices and edges of a backward drawing. ``leaf_boxes=False`` leaves out the tensor
    boxes (leaves, roots): :func:`draw_both` links to the forward side's instead."""
    g = b.graph
    parts = _Parts()
    scope = _scope_of(b)
    grads: dict[tuple[str, str, int], list[Any]] = {}
    leaf_grads: dict[str, Any] = {}
    root_grads: dict[tuple[str, int], Any] = {}
    flow = state  # the engine state whose gradients are shown: step k, or the end of the run
    if flow is None and show_grads and b.run is not None and b.run.steps:
        flow = replay(b.run, -1)
    if flow is not None and b.run is not None:
        grads, leaf_grads = flow.edge_grads, flow.leaf_grads
        # what each root's grad_fn received: the gradient on the root tensor -> grad_fn edge
        roots = {b.tensors[t].grad_fn for t in b.root_tensors if t in b.tensors}
        for s in b.run.steps[:flow.step.index + 1]:
            if s.kind == "execute" and s.node in roots:
                for nr, go in enumerate(s.grad_outputs):
                    root_grads.setdefault((s.node, nr), go)
    elif show_grads:
        leaf_grads = {t.id: t.grad for t in b.tensors.values() if t.grad is not None}
    with_grads = show_grads or state is not None
    leaf_ids = {n.variable for n in g.nodes.values() if n.variable}

    # root tensors (z) -> their grad_fn
    for tid in b.root_tensors if leaf_boxes else ():
        t = b.tensors.get(tid)
        if t is None or t.grad_fn not in g.nodes:
            continue
        parts.add(collapse.Vertex(tid, "output", scope.get(t.grad_fn, ()), attach=True,
                                  named=False),
                  _Item(tid, _tensor_lines(t), "output", _FILL["output"],
                        f"{t.name}: output {shape_str(t.shape)} {t.dtype}"))
        e = _edge(tid, t.grad_fn, "root", style="bold")
        go = root_grads.get((t.grad_fn, t.output_nr))
        if with_grads and go is not None:
            e.attrs["label"] = _label(grad_str(go))
        parts.edges.append(e)

    for nid in _node_order(g):
        n = g.nodes[nid]
        lines = [n.name]
        var = b.tensors.get(n.variable) if n.variable else None
        if n.kind == "accumulate_grad" and not leaf_boxes and var is not None:
            lines += [var.name, shape_str(var.shape)]
        if show_attrs:
            for s in n.saved:
                if s.value is not None and "const" in s.value:
                    lines.append(f"{_saved_attr_name(s.name)} = {value_str(s.value)}")
                elif not show_saved:
                    lines.append(f"{_saved_attr_name(s.name)}: "
                                 f"{shape_str((s.value or {}).get('shape'))}")
        if state is not None and nid in state.deps and n.kind != "graph_root":
            lines.append(f"dependencies: {state.deps[nid]}")
        kind = n.kind if n.kind in _FILL else "op"
        parts.add(collapse.Vertex(nid, n.name, scope.get(nid, ()),
                                  attach=n.kind == "accumulate_grad", order=n.sequence_nr),
                  _Item(nid, lines, kind, _FILL[kind], functools.partial(_node_tip, n, b.ops),
                        ref=var.name if var is not None else ""))
        # next_functions: node -> target, headlabel = input_nr (the target's input slot)
        seen_edge: dict[tuple[str, int], int] = {}
        for nxt, nr in n.next_functions:
            if nxt is None or nxt not in g.nodes:
                continue
            k = seen_edge.get((nxt, nr), 0)
            seen_edge[(nxt, nr)] = k + 1
            e = _edge(nid, nxt, "next", nr, k)
            sent = grads.get((nid, nxt, nr))
            if with_grads and sent is not None and k < len(sent):
                e.attrs["label"] = _label(grad_str(sent[k]))
                if state is not None:
                    e.attrs.update(color="#c0392b", fontcolor="#c0392b")
            parts.edges.append(e)
        # AccumulateGrad -> its leaf (AccumulateGrad.variable)
        if n.kind == "accumulate_grad" and n.variable and leaf_boxes:
            vid = n.variable
            if vid not in parts.items:
                lines = _tensor_lines(var, vid)
                if with_grads and vid in leaf_grads:
                    lines.append(f".grad {grad_str(leaf_grads[vid])}")
                cls = _leaf_class(var)
                parts.add(collapse.Vertex(vid, cls, scope.get(nid, ()), attach=True, named=False),
                          _Item(vid, lines, cls, _FILL[cls],
                                f"{var.name if var else vid}: "
                                f"{'parameter' if cls == 'param' else 'leaf'}"))
            parts.edges.append(_edge(nid, vid, "variable", arrowhead="none", style="bold",
                                     color="#4a78b5"))
        # saved values as their own nodes
        if show_saved:
            for i, s in enumerate(n.saved):
                if s.value is not None and "const" in s.value:
                    continue  # attributes, not tensors: shown with show_attrs
                sid = f"{nid}.saved.{i}"
                src = b.tensors.get(s.tensor) if s.tensor else None
                lines = [_saved_attr_name(s.name), shape_str((s.value or {}).get("shape"))]
                if s.is_output:
                    lines.append("(result)")
                parts.add(collapse.Vertex(sid, "saved", scope.get(nid, ()), attach=True,
                                          named=False),
                          _Item(sid, lines, "saved", _FILL["saved"],
                                f"{n.name}.{_saved_attr_name(s.name)}"
                                + (f" = {src.name}" if src else "")))
                parts.edges.append(_edge(nid, sid, "saved", arrowhead="none",
                                         color="darkorange"))
                # The saved tensor is also an input: say which one with a dashed link.
                target = None
                if src is not None and src.id in leaf_ids and leaf_boxes:
                    target = src.id
                elif src is not None and src.grad_fn in g.nodes:
                    target = src.grad_fn
                if target is not None:
                    parts.edges.append(_edge(sid, target, "saved-link", style="dashed",
                                             arrowhead="none", color="darkorange"))
    return parts


# -- from parts to DOT -----------------------------------------------------------------------------
def _emit_node(dot: Any, name: str, item: _Item, proxy_of: str | None = None) -> None:
    attrs = {"fillcolor": item.fill, "class": f"gv-{item.cls}", "id": name}
    lines = list(item.lines() if callable(item.lines) else item.lines)
    tooltip = item.tooltip() if callable(item.tooltip) else item.tooltip
    if proxy_of is not None:
        attrs["style"] = "filled,rounded,dashed"
        attrs["class"] = f"gv-proxy gv-{item.cls}"
        # A copy only points at the node drawn in full elsewhere: one line keeps it small
        # (several copies of a wide node once made a drawing twice as wide).
        lines = ["↪ " + (item.short or lines[0]) + (f" ({item.ref})" if item.ref else "")]
    if tooltip:
        attrs["tooltip"] = _attr(tooltip if proxy_of is None else f"another reference to {tooltip}")
    attrs.update(item.extra)
    if proxy_of is not None and "dashed" not in attrs["style"]:
        attrs["style"] += ",dashed"  # a forward op's own style (square box) stays, dashed
    dot.node(name, _label(*lines), **attrs)


def _emit_group(dot: Any, name: str, group: collapse.Group, extra: dict[str, str],
                proxy: bool = False) -> None:
    attrs = {"shape": "box3d", "style": "filled", "fillcolor": _FILL["group"],
             "class": "gv-group", "id": name, "tooltip": _attr(f"{group.title}: {group.detail}")}
    attrs.update(extra)
    # A copy (proxy) shows the title only, as a copied node shows its first line.
    lines = ("↪ " + group.title,) if proxy else (group.title, group.detail)
    dot.node(name, _label(*lines), **attrs)


def _emit(parts: _Parts, plan: collapse.Plan, node_target: Any, edge_target: Any,
          cluster_of: Any = None, extra: dict[str, dict[str, str]] | None = None) -> None:
    """Write the planned nodes and edges. ``cluster_of(scope)`` picks the subgraph of a node."""
    extra = extra or {}

    def target(scope: tuple[str, ...]) -> Any:
        return node_target if cluster_of is None else cluster_of(scope)

    vinfo = {v.id: v for v in parts.vertices}
    drawn_groups: set[str] = set()
    for v in parts.vertices:
        d = plan.drawn(v.id)
        if d == v.id:
            _emit_node(target(v.scope), _name(v.id), parts.items[v.id])
        elif d not in drawn_groups:
            drawn_groups.add(d)
            group = plan.groups[d]
            _emit_group(target(group.scope), _name(d), group, extra.get(d, {}))
    for pid, of in plan.proxy_of.items():
        if of in plan.groups:
            group = plan.groups[of]
            _emit_group(target(group.scope), _name(pid), group,
                        {"style": "filled,dashed", "class": "gv-proxy gv-group"}, proxy=True)
        else:
            _emit_node(target(vinfo[of].scope), _name(pid), parts.items[of], proxy_of=of)
    merged: dict[tuple[str, str], list[_Edge]] = {}
    for i, e in enumerate(parts.edges):
        a, b = plan.drawn(e.src), plan.drawn(e.dst)
        if a == b:
            continue
        prox = plan.proxies.get(i)
        if prox is not None:
            if prox[0] == "head":
                b = prox[1]
            else:
                a = prox[1]
        if a in plan.groups or b in plan.groups or plan.proxy_of.get(a) in plan.groups \
                or plan.proxy_of.get(b) in plan.groups:
            merged.setdefault((a, b), []).append(e)
            continue
        attrs = {"class": f"gv-{e.cls}", "id": e.id if prox is None else f"{e.id}~"}
        if e.head is not None:
            attrs["taillabel" if e.reverse else "headlabel"] = _label(e.head)
        attrs.update(e.attrs)  # user text in attrs is already escaped by _label
        if e.reverse:
            a, b = b, a
            attrs["dir"] = "back"
        edge_target.edge(_name(a), _name(b), **attrs)
    for (a, b), es in merged.items():
        attrs = {"class": "gv-merged", "id": f"{_name(a)}->{_name(b)}"}
        if len(es) > 1:
            attrs["label"] = f"×{len(es)}"
        elif es[0].head is not None:
            attrs["taillabel" if es[0].reverse else "headlabel"] = _label(es[0].head)
        if {e.cls for e in es} <= {"variable", "saved", "saved-link"}:
            attrs["arrowhead"] = "none"
        if es[0].reverse:
            a, b = b, a
            attrs["dir"] = "back"
        edge_target.edge(_name(a), _name(b), **attrs)


def _speed_attrs(dot: Any, plan: collapse.Plan, n_vertices: int) -> None:
    """Cheaper layout settings for big drawings (crossing minimisation dominates)."""
    drawn = n_vertices - len(plan.rep) + len(plan.groups)
    if drawn > 400:
        dot.attr(mclimit="0.3", nslimit="5", nslimit1="5", remincross="false")


def _title(dot: Any, text: str | None) -> None:
    if text:
        dot.attr(label=_label(text), labelloc="t", fontsize="14")


@_gc_paused
def draw_backward(obj: Any, show_saved: bool = False, show_attrs: bool = False,
                  show_grads: bool = False, run: int | str = -1, max_nodes: float | None = None,
                  expand: Iterable[str] = ()) -> graphviz.Digraph:
    """Draw a backward graph as PyTorch builds it: ``grad_fn`` nodes, ``next_functions`` edges.

    Nodes are labelled with PyTorch's class names (``MulBackward0``); an edge goes from a node to
    each of its ``next_functions`` and is labelled, at its head, with ``input_nr``. Each
    ``AccumulateGrad`` is linked to its leaf (name and shape; parameters in green), and a root
    tensor (olive) points at its ``grad_fn``.

    Args:
        obj: a tensor (drawn via :func:`gradviz.graph_of`), a
            :class:`~gradviz.trace.model.BackwardGraph`, or a :class:`~gradviz.trace.Trace`
            (the graph of backward run ``run``).
        show_saved: draw saved tensors (``_saved_self``, ...) as orange nodes; one that is also
            an input of the graph gets a dashed link to that leaf (or its ``grad_fn``).
        show_attrs: list saved non-tensor attributes (``_saved_exponent = 2``) in node labels.
        show_grads: label edges with the gradients they carried and leaves with their ``.grad``
            (edge gradients need a trace).
        run: which backward run of a trace (index or id).
        max_nodes: node budget before folding scopes and repeated blocks (default 300; pass
            ``math.inf`` for full detail). See :mod:`gradviz.render.collapse`.
        expand: scopes to keep unfolded, e.g. ``("fc1",)``.

    Returns:
        a ``graphviz.Digraph`` (displays inline in Jupyter; :func:`to_svg` / :func:`render`
        lay it out without a ``dot`` binary).

    Example:
        >>> import gradviz as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> dot = draw_backward((x * 2).sum())
        >>> "MulBackward0" in dot.source and "AccumulateGrad" in dot.source
        True
    """
    b = _backward_input(obj, run)
    parts = _backward_parts(b, show_saved, show_attrs, show_grads)
    plan = collapse.plan(parts.vertices, [(e.src, e.dst) for e in parts.edges], max_nodes,
                         expand, classes=b.classes)
    dot = _new("backward")
    _title(dot, b.title)
    _speed_attrs(dot, plan, len(parts.vertices))
    _emit(parts, plan, dot, dot)
    dot.plan = plan
    return dot


# -- forward --------------------------------------------------------------------------------------
def _op_call(op: OpRecord, tensors: dict[str, TensorInfo]) -> str:
    args = []
    for a in op.inputs:
        if isinstance(a, dict):
            args.append(value_str(a))
        else:
            t = tensors.get(a)
            args.append(t.name if t is not None else str(a))
    for k, v in op.kwargs.items():
        if isinstance(v, dict) and set(v) == {"tensor"}:  # a tensor passed by keyword
            t = tensors.get(v["tensor"])
            args.append(f"{k}={t.name if t is not None else v['tensor']}")
        else:
            args.append(f"{k}={value_str({'const': v})}")
    return f"{op.name}({', '.join(args)})"


def _op_lines(op: OpRecord, tensors: dict[str, TensorInfo]) -> list[str]:
    return [_op_call(op, tensors), source_str(op.source)]


def _op_tip(op: OpRecord) -> str:
    return f"{op.name} ({op.id})" + (f" at {source_str(op.source, width=150)}"
                                      if op.source else "")


def _ftensor_lines(t: TensorInfo | None, tid: str) -> list[str]:
    return [tid] if t is None else [t.name, f"{shape_str(t.shape)} {t.dtype}"]


def _ftensor_tip(t: TensorInfo | None, tid: str) -> str:
    if t is None:
        return tid
    return f"{t.name} ({tid}): {shape_str(t.shape)} {t.dtype}" + (
        ", requires_grad" if t.requires_grad else "")


def _forward_parts(tr: Trace, roots: set[str]) -> _Parts:
    parts = _Parts()
    consumers: dict[str, list[tuple[str, ...]]] = {}
    # The ops a custom Function's forward() ran are folded inside its op (OpRecord.parent):
    # the graph shows the one op PyTorch records for it.
    ops = [op for op in tr.ops if op.parent is None]
    for op in ops:
        for a in op.inputs:
            if isinstance(a, str):
                consumers.setdefault(a, []).append(tuple(op.scope))
    made: set[str] = set()

    def tensor(tid: str, scope: tuple[str, ...]) -> None:
        if tid in made:
            return
        made.add(tid)
        t = tr.tensors.get(tid)
        if t is None:
            cls = "tensor"
        elif tid in roots:
            cls = "output"
        elif t.is_leaf:
            cls = "param" if t.is_param else ("leaf" if t.requires_grad else "input")
        else:
            cls = "tensor"
        summary = "tensor" if t is None else f"tensor {shape_str(t.shape)} {t.dtype}"
        parts.add(collapse.Vertex(tid, "tensor", scope, attach=True, named=False,
                                  summary=summary),
                  _Item(tid, functools.partial(_ftensor_lines, t, tid), cls, _FILL[cls],
                        functools.partial(_ftensor_tip, t, tid)))

    for op in ops:
        scope = tuple(op.scope)
        for a in op.inputs:
            if isinstance(a, str) and a not in made:
                tensor(a, collapse._common_prefix(consumers.get(a, [scope])))
        parts.add(collapse.Vertex(op.id, op.name, scope),
                  _Item(op.id, functools.partial(_op_lines, op, tr.tensors), "op", _FILL["fop"],
                        functools.partial(_op_tip, op), {"shape": "box", "style": "filled"},
                        short=f"{op.name}(…)"))
        tensor_inputs = [a for a in op.inputs if isinstance(a, str)]
        several = len(tensor_inputs) > 1
        for i, a in enumerate(tensor_inputs):
            parts.edges.append(_Edge(a, op.id, "input", nr=i if several else None,
                                     head=str(i) if several else None))
        for j, out in enumerate(op.outputs):
            # A result read outside its module is drawn in the scope it goes to (the common
            # one): a module's box then ends with its last op, and the next module's box, with
            # its parameters on top, fits below it instead of beside it (a staircase of boxes).
            tensor(out, collapse._common_prefix([scope, *consumers.get(out, [])]))
            e = _Edge(op.id, out, "output")
            if len(op.outputs) > 1:
                e.attrs["taillabel"] = str(j)
            parts.edges.append(e)
    return parts


class _Clusters:
    """Nested ``subgraph cluster_*`` per module scope, built bottom-up (no recursion), each
    labelled as :func:`collapse.scope_label` says (``features.0: Conv2d``)."""

    def __init__(self, root: Any, prefix: str = "cluster_",
                 classes: dict[str, str] | None = None) -> None:
        self.root = root
        self.prefix = prefix
        self.classes = classes or {}
        self.subs: dict[tuple[str, ...], Any] = {}

    def __call__(self, scope: tuple[str, ...]) -> Any:
        if not scope:
            return self.root
        for k in range(1, len(scope) + 1):
            key = scope[:k]
            if key not in self.subs:
                sub = _drawing_class()(name=f"{self.prefix}{len(self.subs)}")
                sub.attr(label=_label(collapse.scope_label(key, self.classes)),
                         style="rounded,dashed", color="#888888", fontname="Helvetica",
                         fontsize="11", labeljust="l")
                self.subs[key] = sub
        return self.subs[scope]

    def close(self) -> None:
        for key in sorted(self.subs, key=len, reverse=True):
            parent = self.subs[key[:-1]] if len(key) > 1 else self.root
            parent.subgraph(self.subs[key])


@_gc_paused
def draw_forward(trace: Trace, max_nodes: float | None = None,
                 expand: Iterable[str] = ()) -> graphviz.Digraph:
    """Draw the forward graph of a trace: tensors and ops in creation order, by module scope.

    Ops (orange) are labelled with their call (``mul(x, 2)``) and the user's source line
    (``train.py:12  y = x * 2``); tensors with name, shape and dtype. Leaves needing grad are
    light blue, parameters green, the tensors ``backward()`` started from olive. Ops run inside
    a module are boxed in a cluster per module scope.

    Args:
        trace: a :class:`~gradviz.trace.Trace`.
        max_nodes: node budget before folding (default 300; ``math.inf``: full detail).
        expand: scopes to keep unfolded, e.g. ``("fc1",)``.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     y = (x * 2).sum()
        >>> "mul(x, 2)" in draw_forward(tr).source
        True
    """
    if not _is_trace(trace):
        raise TypeError(f"draw_forward() takes a Trace; got {type(trace).__name__}")
    roots = {tid for r in trace.runs for tid in r.roots}
    parts = _forward_parts(trace, roots)
    plan = collapse.plan(parts.vertices, [(e.src, e.dst) for e in parts.edges], max_nodes,
                         expand, noun="ops", classes=trace.module_classes)
    dot = _new("forward")
    _title(dot, trace.name)
    _speed_attrs(dot, plan, len(parts.vertices))
    clusters = _Clusters(dot, classes=trace.module_classes)
    _emit(parts, plan, dot, dot, clusters)
    clusters.close()
    dot.plan = plan
    return dot


# -- both -----------------------------------------------------------------------------------------
@_gc_paused
def draw_both(trace: Trace, run: int | str = -1, max_nodes: float | None = None,
              expand: Iterable[str] = ()) -> graphviz.Digraph:
    """Forward and backward graphs side by side, linked.

    Left, the forward graph (as :func:`draw_forward`); right, the backward graph of run ``run``
    drawn bottom-up so each node sits across from the op that created it. Dotted grey links join
    each op to its backward node (``OpRecord.node`` / ``NodeInfo.forward_op``), each leaf tensor
    to its ``AccumulateGrad``, and each root tensor to its ``grad_fn``.

    Args:
        trace: a :class:`~gradviz.trace.Trace` with at least one backward run (else only the
            graph recorded so far is drawn on the right).
        run: which backward run (index or id).
        max_nodes: node budget per side (default 300).
        expand: scopes to keep unfolded.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     (x * 2).sum().backward()
        >>> src = draw_both(tr).source
        >>> "cluster_forward" in src and "cluster_backward" in src
        True
    """
    if not _is_trace(trace):
        raise TypeError(f"draw_both() takes a Trace; got {type(trace).__name__}")
    b = _backward_input(trace, run)
    roots = set(b.root_tensors)
    fparts = _forward_parts(trace, roots)
    fplan = collapse.plan(fparts.vertices, [(e.src, e.dst) for e in fparts.edges], max_nodes,
                          expand, prefix="fg", noun="ops", classes=trace.module_classes)
    bparts = _backward_parts(b, False, False, False, leaf_boxes=False)
    bplan = collapse.plan(bparts.vertices, [(e.src, e.dst) for e in bparts.edges], max_nodes,
                          expand, prefix="bg", classes=b.classes)
    # Mirror the backward side: draw its edges reversed (dir=back), so next_functions sit
    # above their node, level with the forward ops that made them.
    for e in bparts.edges:
        e.reverse = True
    dot = _new("both")
    _title(dot, trace.name)
    _speed_attrs(dot, fplan, len(fparts.vertices) + len(bparts.vertices))
    fwd = _drawing_class()(name="cluster_forward")
    fwd.attr(label="forward", style="rounded", color="#999999", fontname="Helvetica")
    clusters = _Clusters(fwd, prefix="cluster_f", classes=trace.module_classes)
    _emit(fparts, fplan, fwd, dot, clusters)
    clusters.close()
    bwd = _drawing_class()(name="cluster_backward")
    bwd.attr(label=f"backward ({b.run.id})" if b.run else "backward", style="rounded",
             color="#999999", fontname="Helvetica")
    _emit(bparts, bplan, bwd, dot)
    dot.subgraph(fwd)
    dot.subgraph(bwd)
    links: list[tuple[str, str, str]] = []
    for op in trace.ops:
        if op.node and op.node in b.graph.nodes:
            links.append((op.id, op.node, "op → grad_fn"))
    for n in b.graph.nodes.values():
        if n.variable:
            links.append((n.variable, n.id, "leaf → AccumulateGrad"))
    for tid in b.root_tensors:
        t = trace.tensors.get(tid)
        if t is not None and t.grad_fn in b.graph.nodes:
            links.append((tid, t.grad_fn, "root → grad_fn"))
    done: set[tuple[str, str]] = set()
    for a, z, what in links:
        da, dz = fplan.drawn(a), bplan.drawn(z)
        if (da, dz) in done or a not in fparts.items:
            continue
        done.add((da, dz))
        dot.edge(_name(da), _name(dz), style="dotted", color="#7f7f7f", arrowhead="none",
                 constraint="false", id=f"{da}..{dz}", tooltip=what, **{"class": "gv-link"})
    dot.plan = bplan
    dot.plans = {"forward": fplan, "backward": bplan}
    return dot


# -- one step -------------------------------------------------------------------------------------
_STEP_FILL = {"executing": "gold", "ready": "palegreen", "done": "#d0d0d0"}


@_gc_paused
def draw_step(trace: Trace, run: int | str, k: int, max_nodes: float | None = None,
              expand: Iterable[str] = ()) -> graphviz.Digraph:
    """The backward graph of ``run`` as the engine saw it right after step ``k``.

    The executing node is gold (thick border), nodes in the ready queue green, nodes already
    executed grey; each node shows its dependency count, edges that carried a gradient show it
    in red (the edge of the current ``accumulate`` step thicker), leaves show their ``.grad``
    once written. The state is replayed from the recorded steps 0..k
    (:func:`gradviz.trace.replay.replay`).

    Args:
        trace: a :class:`~gradviz.trace.Trace`.
        run: the backward run (index or id).
        k: the step index (negative counts from the end).
        max_nodes: node budget before folding (default 300).
        expand: scopes to keep unfolded.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     (x * 2).sum().backward()
        >>> "gold" in draw_step(tr, -1, 2).source
        True
    """
    if not _is_trace(trace):
        raise TypeError(f"draw_step() takes a Trace; got {type(trace).__name__}")
    trace.run(run)  # IndexError / KeyError when there is no such run
    b = _backward_input(trace, run)
    assert b.run is not None
    state = replay(b.run, k)
    parts = _backward_parts(b, False, False, True, state=state)
    plan = collapse.plan(parts.vertices, [(e.src, e.dst) for e in parts.edges], max_nodes,
                         expand, classes=b.classes)
    status: dict[str, str] = {}
    for nid in state.done:
        status[plan.drawn(nid)] = "done"
    for nid in state.ready:
        status[plan.drawn(nid)] = "ready"
    if state.executing is not None:
        status[plan.drawn(state.executing)] = "executing"
    extra: dict[str, dict[str, str]] = {}
    for d, s in status.items():
        attrs = {"fillcolor": _STEP_FILL[s], "class": f"gv-{s}"}
        if s == "executing":
            attrs["penwidth"] = "3"
        elif s == "done":
            attrs["fontcolor"] = "#555555"
        extra[d] = attrs
    for nid, item in parts.items.items():
        if nid in extra:
            item.extra = dict(extra[nid], **{"class": f"gv-{item.cls} {extra[nid]['class']}"})
    step = state.step
    if step.kind == "accumulate":
        key = (step.source, step.node, step.input_nr)
        for e in parts.edges:
            if e.cls == "next" and (e.src, e.dst, e.nr) == key:
                e.attrs["penwidth"] = "3"
                break
    dot = _new("step")
    node_name = b.graph.nodes[step.node].name if step.node in b.graph.nodes else ""
    ready = ", ".join(b.graph.nodes[r].name if r in b.graph.nodes else r for r in state.ready)
    dot.attr(label=_label(f"{b.run.id} step {step.index}/{len(b.run.steps) - 1}: {step.kind}"
                          + (f" {node_name} ({step.node})" if step.node else ""),
                          f"ready queue: [{ready}]"),
             labelloc="t", fontsize="13")
    _speed_attrs(dot, plan, len(parts.vertices))
    _emit(parts, plan, dot, dot, extra=extra)
    dot.plan = plan
    return dot

