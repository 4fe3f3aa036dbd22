"""``make_dot``: torchviz's drawing, for gradviz and torch tensors alike.

torchviz users switch by changing one import: ``from gradviz import make_dot`` takes the same
arguments and returns the same kind of object (a ``graphviz.Digraph``) with torchviz's look:
the output tensor green, leaves (``AccumulateGrad``'s variables) light blue and named from
``params``, saved tensors orange (``show_saved``), the backward nodes as boxes named by their
class, with their saved values listed under a rule (``show_attrs``). Edges go the way the
forward pass went (from ``next_functions`` to the node), as in torchviz. For gradviz's own,
richer drawing use :func:`gradviz.render.draw_backward`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import graphviz

__all__ = ["make_dot"]

_NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
              "ranksep": "0.1", "height": "0.2", "fontname": "monospace"}


def _size(shape: list[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _const(value: Any, limit: int) -> str:
    text = str(value.get("const") if isinstance(value, dict) and "const" in value else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def make_dot(var: Any, params: dict[str, Any] | None = None, show_attrs: bool = False,
             show_saved: bool = False, max_attr_chars: int = 50) -> graphviz.Digraph:
    """The backward graph of ``var`` (a gradviz or torch tensor, or a tuple of them) drawn as
    torchviz draws it.

    Args:
        var: the output tensor(s) whose ``grad_fn`` graph is drawn.
        params: names for leaves, e.g. ``dict(model.named_parameters())``.
        show_attrs: list each node's saved non-tensor values (``dim: 1``).
        show_saved: draw saved tensors as orange boxes tied to their node.
        max_attr_chars: cut attribute values longer than this.

    Example:
        >>> import gradviz
        >>> w = gradviz.ones(2, requires_grad=True)
        >>> dot = make_dot((w * 3).sum(), params={"w": w})
        >>> "w\\n (2)" in dot.source, "AccumulateGrad" in dot.source
        (True, True)
    """
    import graphviz as gv

    from gradviz.trace.graph import graph_with_ids

    outputs = list(var) if isinstance(var, (tuple, list)) else [var]
    graph, id_of = graph_with_ids(outputs)
    names: dict[str, str] = {}
    for pname, p in (params or {}).items():
        tid = id_of(p)
        if tid is not None:
            names[tid] = pname
    dot = gv.Digraph(node_attr=dict(_NODE_ATTR), graph_attr={"size": "12,12"})
    tensors = graph.tensors

    def label(tid: str | None, name: str = "") -> str:
        t = tensors.get(tid) if tid is not None else None
        name = name or (names.get(tid, "") if tid is not None else "")
        size = _size(t.shape) if t is not None else ""
        # torchviz writes "\n (2)" for a nameless tensor; an empty first line crashes the
        # Graphviz that pygraphviz bundles (to_svg), and looks the same without it.
        return f"{name}\n {size}" if name else size

    # Nodes in a stable order: the roots' walk, parents before children.
    for n in graph.nodes.values():
        text = n.name
        if show_attrs:
            attrs = [f"{s.name}: {_const(s.value, max_attr_chars)}" for s in n.saved
                     if s.tensor is None and not s.is_output and s.value is not None
                     and "const" in s.value]
            if attrs:
                width = max(len(a) for a in [text, *attrs])
                text = "\n".join([text, "-" * width, *attrs])
        dot.node(f"fn_{n.id}", text)
        if show_saved:
            for s in n.saved:
                if s.tensor is None and (s.value is None or "const" in s.value):
                    continue
                shape = (tensors[s.tensor].shape if s.tensor in tensors
                         else (s.value or {}).get("shape", []))
                sid = f"saved_{n.id}_{s.name}"
                dot.node(sid, f"{s.name}\n {_size(shape)}", fillcolor="orange")
                dot.edge(sid, f"fn_{n.id}", dir="none")
        if n.variable is not None:
            dot.node(f"var_{n.variable}", label(n.variable), fillcolor="lightblue")
            dot.edge(f"var_{n.variable}", f"fn_{n.id}")
        for nxt, _ in n.next_functions:
            if nxt is not None:
                dot.edge(f"fn_{nxt}", f"fn_{n.id}")
    for t in outputs:
        tid = id_of(t)
        info = tensors.get(tid) if tid is not None else None
        if info is None:
            continue
        dot.node(f"out_{tid}", label(tid, names.get(tid, "")), fillcolor="darkolivegreen1")
        if info.grad_fn is not None:
            dot.edge(f"fn_{info.grad_fn}", f"out_{tid}")
    _resize(dot, len(dot.body))
    return dot


def _resize(dot: Any, n_lines: int, per_element: float = 0.15, min_size: float = 12) -> None:
    """Grow the drawing's size with its number of elements, as torchviz does."""
    size = max(min_size, per_element * n_lines)
    dot.graph_attr.update(size=f"{size},{size}")
