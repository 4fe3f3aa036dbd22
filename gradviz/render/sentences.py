"""What the engine does in each step, in one sentence: the one place these words are written.

Every kind of engine step (:data:`gradviz.trace.model.STEP_KINDS`) has a sentence here, written
for a learner watching the backward pass. :func:`step_sentence` gives it as pieces: plain text,
and the backward nodes (:class:`NodeRef`) and program names in code type (:class:`Code`) it
mentions kept apart, so that each renderer names and styles them its own way while the words
stay the same:

- the terminal (:func:`gradviz.render.terminal.describe`: the step viewer and the TUI) joins the
  pieces into one line, a node as ``MulBackward0 n5``;
- the HTML step player (:mod:`gradviz.render.html`, also in Jupyter) is handed them as JSON
  (:func:`player_sentences`) and only displays them: a node as its name with its id, which
  outlines the node in the graph when hovered.

Text pieces hold the program's strings as recorded (a tensor's name, an exception's message);
each renderer makes them safe where it shows them (the terminal escapes control characters, the
player sets them as text, never as HTML).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gradviz.trace.model import Step

__all__ = ["NodeRef", "Code", "Piece", "SENTENCES", "step_sentence", "sentence_text",
           "player_sentences", "saved_attr", "shape_text", "packed_text"]


@dataclass(frozen=True, slots=True)
class NodeRef:
    """A backward node a sentence names, by its trace id (``n5``)."""

    id: str


@dataclass(frozen=True, slots=True)
class Code:
    """A name from the program that a sentence sets in code type (a hook's function)."""

    text: str


Piece = str | NodeRef | Code


# -- words for the values a step holds -----------------------------------------------------------
def saved_attr(name: str) -> str:
    """A saved value's name as PyTorch's attribute spells it (the player's ``savedName``).

    Example:
        >>> saved_attr("self"), saved_attr("saved_tensors[0]")
        ('_saved_self', 'saved_tensors[0]')
    """
    return name if name.startswith(("_", "saved_tensors")) else "_saved_" + name


def shape_text(summary: dict[str, Any] | None) -> str:
    """A summary's shape as Python prints a tuple: ``(3,)``, ``(2, 4)``; "" if unknown.

    Example:
        >>> shape_text({"shape": [3]}), shape_text({"shape": [2, 4]}), shape_text(None)
        ('(3,)', '(2, 4)', '')
    """
    if not summary or "shape" not in summary:
        return ""
    return str(tuple(summary["shape"]))


def packed_text(packed: dict[str, Any] | None) -> str:
    """What a saved-tensor pack hook returned: a tensor's shape, or a non-tensor's type and
    repr (NOTE [saved tensor hooks]).

    Example:
        >>> packed_text({"type": "str", "repr": "'/tmp/a.npy'"})
        "str '/tmp/a.npy'"
    """
    if not packed:
        return "nothing recorded"
    if "repr" in packed:
        return f"{packed['type']} {packed['repr']}"
    return f"a tensor {shape_text(packed)}".rstrip()


def _field(step: Step, name: str, default: Any = None) -> Any:
    """A step's own field, or a value its engine added (``engine_data``: MXNet's ``gnode``)."""
    if name in step.engine_data:
        return step.engine_data[name]
    return getattr(step, name, default)


def _tensor(trace: Any, tid: str | None) -> str:
    t = trace.tensors.get(tid) if tid is not None else None
    return t.name if t is not None else str(tid)


def _node(step: Step, unknown: str = "a node") -> Piece:
    """The step's node, or what to say when the trace does not know it."""
    return NodeRef(step.node) if step.node is not None else unknown


def _count(n: Any, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _shaped(summary: dict[str, Any] | None) -> str:
    """`` (3,)`` after a noun, or nothing when the shape is unknown."""
    shape = shape_text(summary)
    return f" {shape}" if shape else ""


# -- one sentence per step kind ------------------------------------------------------------------
def _compute_dependencies(trace: Any, step: Step) -> list[Piece]:
    return ["The engine walks the graph once and counts, for each node, how many edges bring it "
            "a gradient. A node runs only when all of them have delivered."]


def _enqueue(trace: Any, step: Step) -> list[Piece]:
    return [_node(step, "A node"), " has all its gradients: it joins the ready queue."]


def _execute(trace: Any, step: Step) -> list[Piece]:
    n = trace.nodes.get(step.node) if step.node is not None else None
    if n is not None and n.kind == "accumulate_grad":
        return [_node(step), " runs: it adds the gradient it received into "
                f"{_tensor(trace, n.variable)}.grad."]
    # A node with several outputs (unbind, split) gets one gradient for each of them.
    grads = ("the gradients of its outputs" if n is not None and n.num_outputs > 1
             else "the gradient of its output")
    return [_node(step, "A node"), f" runs: from {grads} it computes one gradient per input and "
            "sends each along its edge."]


def _accumulate(trace: Any, step: Step) -> list[Piece]:
    source, gnode = _field(step, "source"), _field(step, "gnode")
    # The sender: a backward node, MXNet's gradient-graph node, or the root's own gradient.
    sender: Piece = (NodeRef(source) if source else
                     f"gradient-graph node {gnode}" if gnode else "the root")
    return ["The gradient from ", sender, " arrives at ", _node(step),
            f" (input {_field(step, 'input_nr')}) and is added to its input buffer; "
            f"{_count(_field(step, 'remaining'), 'edge')} still to deliver."]


def _leaf_grad(trace: Any, step: Step) -> list[Piece]:
    return [_node(step, "A node"), f" writes {_tensor(trace, _field(step, 'tensor'))}.grad."]


def _hook(trace: Any, step: Step) -> list[Piece]:
    fn = _field(step, "fn")
    head = f"A {_field(step, 'hook', '')} hook" + (f" ({fn})" if fn else "") + " runs"
    return [head, " on ", NodeRef(step.node), "."] if step.node is not None else [head + "."]


def _pack_hook(trace: Any, step: Step) -> list[Piece]:
    # NOTE [saved tensor hooks]: a create_graph backward's formulas save tensors too.
    return ["pack hook ", Code(_field(step, "fn") or "?"),
            f" stores a tensor{_shaped(_field(step, 'tensor'))} saved while ",
            _node(step, "the engine"),
            f" runs: only what it returns ({packed_text(_field(step, 'packed'))}) is kept for "
            "backward."]


def _unpack_hook(trace: Any, step: Step) -> list[Piece]:
    saved = _field(step, "saved")
    return ["unpack hook ", Code(_field(step, "fn") or "?"),
            f" returns {saved_attr(saved) if saved else 'a saved tensor'} of ", _node(step),
            f"{_shaped(_field(step, 'tensor'))}, from {packed_text(_field(step, 'packed'))}: "
            "the node reads it as it runs, so this comes before its execute step."]


def _gradient_node(trace: Any, step: Step) -> list[Piece]:
    # MXNet's engine: a node of its explicit gradient graph that is no backward formula (the
    # head gradient, a sum of several gradients, zeros, a copy into .grad).
    head = f"Gradient-graph node {_field(step, 'gnode')} ({_field(step, 'op')}) runs"
    if step.node is None:
        return [head + "."]
    return [head + " for ", NodeRef(step.node), f" (input {_field(step, 'input_nr')})."]


def _release_saved(trace: Any, step: Step) -> list[Piece]:
    freed = [saved_attr(s) for s in _field(step, "saved") or []]
    # Name what it frees: a learner then sees which values a second backward would miss.
    what = f"its saved tensors {', '.join(freed)}" if freed else "its saved values"
    return [_node(step, "A node"), f" frees {what} (retain_graph=False)."]


def _error(trace: Any, step: Step) -> list[Piece]:
    where: list[Piece] = [" in ", NodeRef(step.node)] if step.node is not None else []
    return ["Backward failed", *where,
            f": {_field(step, 'type', '')}: {_field(step, 'message', '')}"]


def _done(trace: Any, step: Step) -> list[Piece]:
    return ["The ready queue is empty: the backward pass is finished."]


#: kind -> the function writing its sentence: one for every kind in ``STEP_KINDS``
#: (tests/test_sentences.py checks it).
SENTENCES: dict[str, Callable[[Any, Step], list[Piece]]] = {
    "compute_dependencies": _compute_dependencies, "enqueue": _enqueue, "execute": _execute,
    "accumulate": _accumulate, "leaf_grad": _leaf_grad, "hook": _hook, "pack_hook": _pack_hook,
    "unpack_hook": _unpack_hook, "gradient_node": _gradient_node,
    "release_saved": _release_saved, "error": _error, "done": _done}


def step_sentence(trace: Any, step: Step) -> list[Piece]:
    """One sentence saying what the engine does in ``step``, as pieces: text, the nodes it
    names (:class:`NodeRef`) and names in code type (:class:`Code`).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> step_sentence(tr, tr.run().steps[-2])
        [NodeRef(id='n1'), ' writes w.grad.']
    """
    write = SENTENCES.get(step.kind)
    if write is None:  # a kind this version does not know (the loader refuses them)
        return [step.kind, *([" ", NodeRef(step.node)] if step.node is not None else []), "."]
    return write(trace, step)


def sentence_text(pieces: list[Piece], node: Callable[[str], str],
                  text: Callable[[str], str] = str) -> str:
    """The pieces as one line: each node named by ``node(id)``, the rest passed through
    ``text`` (the terminal escapes control characters there).

    Example:
        >>> sentence_text([NodeRef("n1"), " writes w.grad."], lambda nid: f"Node {nid}")
        'Node n1 writes w.grad.'
    """
    return "".join(node(p.id) if isinstance(p, NodeRef) else text(p.text if isinstance(p, Code)
                                                                  else p)
                   for p in pieces)


def player_sentences(trace: Any, runs: list[Any]) -> dict[str, Any]:
    """Every step's sentence of ``runs`` as the HTML player reads them, in a compact form.

    ``pieces`` lists each distinct piece once (text as a string, a node as ``{"node": id}``,
    code as ``{"code": text}``); ``runs[r][k]`` is step ``k`` of run ``r``'s sentence as
    indices into it. A long run says the same few things of many nodes, so each step costs a
    few numbers, not its whole sentence.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     w = gradviz.ones(2, requires_grad=True)
        ...     (w * 2).sum().backward()
        >>> s = player_sentences(tr, tr.runs)
        >>> [s["pieces"][i] for i in s["runs"][0][-2]]
        [{'node': 'n1'}, ' writes w.grad.']
    """
    index: dict[Piece, int] = {}
    pieces: list[Any] = []
    out: list[list[list[int]]] = []
    for run in runs:
        rows = []
        for step in run.steps:
            row = []
            for p in step_sentence(trace, step):
                k = index.get(p)
                if k is None:
                    k = index[p] = len(pieces)
                    pieces.append({"node": p.id} if isinstance(p, NodeRef) else
                                  {"code": p.text} if isinstance(p, Code) else p)
                row.append(k)
            rows.append(row)
        out.append(rows)
    return {"pieces": pieces, "runs": out}
