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
import textwrap
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gradviz.render import collapse
from gradviz.render._format import clip, grad_str, op_call, plain, shape_str, source_str, value_str
from gradviz.trace.io import atomic_write
from gradviz.trace.model import ModuleSummary, Trace, run_name, run_numbers, runs_made, scope_key
from gradviz.trace.phases import Phase, split_phases
from gradviz.trace.replay import StepState, replay

if TYPE_CHECKING:  # pragma: no cover
    import graphviz

    from gradviz.trace.model import BackwardGraph, BackwardRun, NodeInfo, OpRecord, TensorInfo

__all__ = ["draw_backward", "draw_forward", "draw_both", "draw_step", "to_svg", "render",
           "FORMATS", "DETAILS", "AUTO_VALUES_MAX", "resolve_detail", "run_label",
           "run_position"]

FORMATS = ("svg", "png", "pdf", "dot")

# NOTE [detail levels] How much a picture says about each node:
# - "bare": names only (PyTorch's class names, tensor names): the shape of the graph, for big ones;
# - "values": micrograd's picture: each box also holds its id, the line of code that made it, and
#   its ``data`` and ``grad`` summaries (the value the op produced, the gradient it received);
# - "saved": torchviz's picture: the saved tensors (``_saved_self``...) as orange boxes linked to
#   the tensor they hold, the saved attributes (``_saved_exponent = 2``) in the node, leaves in
#   blue, AccumulateGrad linked to its leaf: what backward keeps in memory, at a glance.
# "auto" is "values" for a graph of at most AUTO_VALUES_MAX nodes (a micrograd-sized example,
# where every number still fits on a screen) and "bare" beyond: text in a 300-node picture is
# unreadable anyway, and short labels keep it narrow.
DETAILS = ("auto", "bare", "values", "saved")
AUTO_VALUES_MAX = 40

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
    "phase": "#eeeeee",
}
_GRAPH_ATTR = {"rankdir": "TB", "nodesep": "0.2", "ranksep": "0.3", "fontname": "Helvetica",
               "fontsize": "12"}
_NODE_ATTR = {"shape": "box", "style": "filled,rounded", "fontname": "Helvetica",
              "fontsize": "11", "height": "0.3", "margin": "0.08,0.04"}
_EDGE_ATTR = {"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.7",
              "fontcolor": "#555555"}

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


# -- detail levels, titles, the legend -------------------------------------------------------------
@dataclass(frozen=True)
class _Detail:
    """What one drawing shows (NOTE [detail levels]); ``level`` is the name it is known by."""

    level: str
    values: bool = False  # data and grad inside the boxes
    source: bool = False  # the node's id and the code that made it
    saved: bool = False  # saved tensors as their own (orange) boxes
    attrs: bool = False  # saved non-tensor attributes in the node label
    edge_grads: bool = False  # gradients written on the edges (show_grads=True)
    ids: bool = False  # every node's id, even without the code line (draw_step)


_LEVELS = {
    "bare": _Detail("bare"),
    "values": _Detail("values", values=True, source=True),
    "saved": _Detail("saved", source=True, saved=True, attrs=True),
}


def resolve_detail(detail: str | None, size: int) -> str:
    """The detail level drawn for ``detail`` (one of :data:`DETAILS`) on a graph of ``size``
    nodes: ``"auto"`` (or ``None``) is ``"values"`` up to :data:`AUTO_VALUES_MAX` nodes, else
    ``"bare"``.

    Example:
        >>> resolve_detail("auto", 5), resolve_detail(None, 500), resolve_detail("saved", 500)
        ('values', 'bare', 'saved')
    """
    if detail is None:
        detail = "auto"
    if detail not in DETAILS:
        raise ValueError(f"unknown detail level {detail!r}: use one of {', '.join(DETAILS)}")
    if detail == "auto":
        return "values" if size <= AUTO_VALUES_MAX else "bare"
    return detail


def _detail(detail: str | None, size: int, show_saved: bool = False, show_attrs: bool = False,
            show_grads: bool = False) -> _Detail:
    """The level to draw; the older flags map onto it (``show_saved``/``show_attrs``: ``saved``,
    ``show_grads``: ``values`` with the gradients on the edges too) and add to an explicit one."""
    if detail is None and (show_saved or show_attrs):
        # The flags alone say exactly what to add (show_attrs without the saved boxes lists the
        # saved tensors' shapes in the label, as it always did).
        return _Detail("saved", source=True, saved=show_saved, attrs=show_attrs,
                       values=show_grads, edge_grads=show_grads)
    if detail is None and show_grads:
        detail = "values"
    d = _LEVELS[resolve_detail(detail, size)]
    return _Detail(d.level, values=d.values or show_grads, source=d.source,
                   saved=d.saved or show_saved, attrs=d.attrs or show_attrs,
                   edge_grads=show_grads)


# One numbering of runs for every view (NOTE [run numbers] in gradviz/trace/model.py); the
# render name stays importable.
_run_numbers = run_numbers


def _kept_text(numbers: list[int], total: int) -> str:
    if len(numbers) == total:
        return ""
    if numbers == list(range(total - len(numbers) + 1, total + 1)):
        return f", last {len(numbers)} kept"
    return f", {len(numbers)} kept in full"


def run_label(trace: Trace, run: int | str = -1) -> str:
    """``"backward run 2 of 3"`` for a run of ``trace`` (by index or id), counting the runs
    dropped by ``keep_runs`` or folded as identical iterations (``"backward run 20 of 20, last
    3 kept"``).

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs="all") as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(2):
        ...         (x * 2).sum().backward()
        >>> run_label(tr, 0)
        'backward run 1 of 2'
    """
    r = trace.run(run)
    return (f"backward {run_name(trace, run)}" + (" (autograd.grad)" if r.kind == "grad" else "")
            + _kept_text(run_numbers(trace), runs_made(trace)))


def run_position(trace: Trace, number: int) -> int:
    """The index in ``trace.runs`` of the run numbered ``number`` as :func:`run_label` counts
    (1 is the first run the script made; negative counts from the end, -1 the last).

    Raises:
        ValueError: no such run, or it was not kept (``keep_runs``, or folded into the next
            identical iteration); the message says which numbers can be drawn.

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs="all") as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(3):
        ...         (x * 2).sum().backward()
        >>> run_position(tr, 1), run_position(tr, -1)
        (0, 2)
    """
    numbers = run_numbers(trace)
    kept = len(numbers)
    if not kept:
        raise ValueError("this trace has no backward runs: backward() was never called")
    total = runs_made(trace)
    have = ("run " if kept == 1 else "runs ") + ", ".join(map(str, numbers))
    if number < 0:
        if -number > kept:
            raise ValueError(f"no backward run {number}: the trace holds {kept} ({have})")
        return kept + number
    if number == 0 or number > total:
        raise ValueError(f"no backward run {number}: the script made {total}; choose one of "
                         f"1..{total} (or -1 for the last)")
    if number not in numbers:
        raise ValueError(f"backward run {number} was not kept: the trace holds {have}. Trace "
                         f"again with --run {number} (or keep_run={number - 1}), or with "
                         "--keep-runs all")
    return numbers.index(number)


def _html(s: Any, width: int = 80) -> str:
    """User text for an HTML-like label (the title)."""
    import html

    return html.escape(clip(s, width), quote=True)


# What each class of box means, per picture (only the classes a drawing uses are listed).
_LEGEND_TEXT = {
    "op": "grad_fn node",
    "custom": "custom Function",
    "accumulate_grad": "AccumulateGrad",
    "leaf": "leaf (requires_grad)",
    "param": "parameter",
    "output": "output (backward() starts here)",
    "saved": "saved tensor",
    "fop": "op",
    "tensor": "tensor",
    "input": "input (no grad)",
    "group": "folded: N × block",
    "grad_fn": "grad_fn node",
    "executing": "running now",
    "receiver": "receives the gradient",
    "ready": "ready queue",
    "done": "finished",
    "failed": "raised the run's error",
    "phase": "ops outside the forward pass (construction, updates)",
}


# The lines a drawing may have, as the legend draws them: (colour, stroke, what it links).
_LINE_KEYS = {
    "variable": ("#4a78b5", "━━", "AccumulateGrad — its leaf (the .grad it writes)"),
    "saved": ("darkorange", "━━", "node — a tensor it saved for backward"),
    "saved-link": ("darkorange", "╍╍", "saved tensor — the tensor it is (leaf, or its grad_fn)"),
}
# What each written notation means (NOTE [legend marks]); "input-k" differs per picture.
_MARK_TEXT = {
    "input-k": "input k: the op's k-th tensor argument",
    "keyword": "a name on an edge (weight, bias): the keyword the op was given that tensor by",
    "input-nr": "input k: the edge feeds input k (input_nr) of a node that has several",
    "output-k": "output j: the op's j-th result (it returns several)",
    "range": "min a max b: the smallest and largest of a tensor's values (too many to list)",
    "range-mean": "min a max b mean m: the smallest, largest and mean of a tensor's values "
                  "(too many to list)",
    "edge-grad": "(shape) values on an edge: the gradient it carried",
    "cut": "…: left out (more values, text or nodes than fit)",
    "merged": "×N: N edges drawn as one (to or from a folded group)",
    "proxy": "↪ name (dashed box): another reference to a node drawn in full elsewhere",
    "module": "a module's box: (shapes its call took) → (shapes it returned) · its parameters",
}
_MARK_ORDER = ("input-k", "keyword", "input-nr", "output-k", "edge-grad", "range", "range-mean",
               "cut", "merged", "proxy", "module")


def _line_cell(colour: str, stroke: str, text: str) -> str:
    return (f'<td cellpadding="2"><font color="{colour}" point-size="11"><b>{stroke}</b></font>'
            f'<font point-size="9"> {_html(text)}</font></td>')


def _legend_cell(key: str, fill: str, text: str, rounded: bool = True) -> str:
    style = ' style="rounded"' if rounded else ""
    color = ' color="#c0392b"' if key in ("receiver", "failed") else ""
    return (f'<td border="1" bgcolor="{fill}" cellpadding="2"{style}{color}>'
            f'<font point-size="9">{text}</font></td>')


def _title_label(title: str | None, subtitle: str | None, keys: list[tuple[str, str]],
                 notes: list[str], texts: dict[str, str] | None = None,
                 lines: Iterable[str] = ()) -> str:
    """The title, a subtitle and the legend as one HTML-like graph label: a small row of
    swatches under the title (no nodes, so layout and node ids are untouched)."""
    rows = []
    if title:
        rows.append(f'<tr><td><font point-size="14">{_html(title)}</font></td></tr>')
    if subtitle:
        rows.append(f'<tr><td><font point-size="11">{_html(subtitle, 120)}</font></td></tr>')
    rows += [f'<tr><td><font point-size="10" color="#333333">{_html(n, 160)}</font></td></tr>'
             for n in notes if n]
    text = dict(_LEGEND_TEXT, **(texts or {}))
    cells = [_legend_cell(k, f, text[k], rounded=k not in ("fop", "group"))
             for k, f in keys]
    if cells:
        rows.append('<tr><td><table border="0" cellborder="0" cellspacing="3"><tr>'
                    + "".join(cells) + "</tr></table></td></tr>")
    strokes = [_line_cell(*_LINE_KEYS[k]) for k in lines]
    if strokes:
        rows.append('<tr><td><table border="0" cellborder="0" cellspacing="3"><tr>'
                    + "".join(strokes) + "</tr></table></td></tr>")
    return '<<table border="0" cellborder="0" cellspacing="0">' + "".join(rows) + "</table>>"


def _legend(dot: Any, title: str | None, subtitle: str | None, parts: Any, plan: Any,
            notes: list[str], order: tuple[str, ...], forward: bool = False,
            extra: Iterable[str] = (), texts: dict[str, str] | None = None,
            marks: Iterable[str] = (), at: int | None = None) -> None:
    """Put title and legend on ``dot``: a swatch for each kind of box the drawing has, a stroke
    for each kind of line, a sentence for each notation in its text (``marks``, what
    :func:`_emit` drew). ``at``: where in ``dot.body`` the title goes (before the nodes, where
    it always was, though it is made after them)."""
    used = {it.cls for vid, it in parts.items.items() if plan.drawn(vid) == vid}
    used.update(extra)
    if plan.groups:
        used.add("group")
        kinds = {g.kind for g in plan.groups.values()}
        if "scope" in kinds:  # a module's box is no "N × block"
            texts = {"group": "folded: a module" + (", or N × block" if kinds - {"scope"}
                                                    else ""), **(texts or {})}
    keys = []
    for k in order:
        if k in used:
            # a forward op is an "op" box in the forward colour (its SVG class stays gv-op)
            keys.append(("fop", _FILL["fop"]) if forward and k == "op" else (k, _STYLE_FILL.get(
                k, _FILL.get(k, "white"))))
    marks = set(marks)
    said = dict(_MARK_TEXT)
    if {"input-k", "input-nr"} <= marks:  # draw_both: the two sides' "input k" differ
        said["input-k"] = "input k on a forward edge: " + said["input-k"].split(": ", 1)[1]
        said["input-nr"] = "input k on a backward edge: " + said["input-nr"].split(": ", 1)[1]
    notes = [*notes, *(said[k] for k in _MARK_ORDER if k in marks)]
    dot.attr(label=_title_label(title, subtitle, keys, notes, texts,
                                [k for k in _LINE_KEYS if k in marks]),
             labelloc="t", labeljust="c")
    if at is not None:
        dot.body.insert(at, dot.body.pop())


_MODULE_NOTE = "dashed box: a module (path: class)"
_STYLE_FILL = {"executing": "gold", "ready": "palegreen", "done": "#a6a6a6",
               "grad_fn": "lightgrey", "receiver": "white", "failed": "white"}
_BACKWARD_KEYS = ("op", "custom", "accumulate_grad", "leaf", "param", "output", "saved", "group",
                  "failed")
# The node a failed run raised in: its own colour stays, with a thick red border.
_FAILED = {"color": "#c0392b", "penwidth": "3"}
_FORWARD_KEYS = ("op", "input", "leaf", "param", "tensor", "output", "group", "phase")
_STEP_KEYS = ("executing", "receiver", "ready", "done", "op", "accumulate_grad", "leaf",
              "param", "output", "group")


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


# NOTE [fonts] The Graphviz inside the pygraphviz wheel brings its own libfontconfig, older than
# many systems' fontconfig. When it starts it parses every template in the system's
# /usr/share/fontconfig/conf.avail (whatever FONTCONFIG_FILE says), and on a newer system one of
# them has an element it does not know: 'Fontconfig warning: ".../05-reset-dirs-sample.conf",
# line 6: unknown element "reset-dirs"' on stderr, on every run, about nothing in the picture.
# So fontconfig is started once, explicitly (FcInit through ctypes, on the very library the
# wheel loaded), with stderr captured: its "Fontconfig ..." lines are dropped, anything else
# is written back. Later layouts find it started and print nothing. No system package needed.
@functools.cache
def _start_fontconfig() -> None:
    import ctypes
    import glob
    import sys

    import pygraphviz

    here = os.path.dirname(os.path.abspath(pygraphviz.__file__))
    libs = sorted(glob.glob(os.path.join(here, os.pardir, "pygraphviz.libs", "libfontconfig*"))
                  + glob.glob(os.path.join(here, ".dylibs", "libfontconfig*")))
    if not libs:
        return  # a pygraphviz built against the system's Graphviz: its fontconfig is in tune
    try:
        lib = ctypes.CDLL(os.path.realpath(libs[0]))
    except OSError:
        return
    import tempfile

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        return  # no stderr to protect
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            lib.FcInit()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        text = captured.read().decode("utf-8", "replace")
    rest = "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith("Fontconfig"))
    if rest:
        sys.stderr.write(rest)


def _layout(source: str, fmt: str, prog: str | None = "dot") -> bytes:
    """Lay out and render with pygraphviz's bundled Graphviz libraries (no ``dot`` binary).

    The last few results are kept (:data:`_LAID_OUT`): ``gradviz trace`` draws a big trace's
    graphs for its SVG files and the very same DOT again for the step player's page (both at
    the ``bare`` detail level), and laying a graph out is most of what drawing it costs.
    Graphviz is deterministic, so the same source always gives the same bytes.
    """
    key = (source, fmt, prog)
    with _LAID_OUT_LOCK:
        done = _LAID_OUT.pop(key, None)
    if done is None:
        done = _lay_out(source, fmt, prog)
    with _LAID_OUT_LOCK:
        _LAID_OUT[key] = done  # (most recent last)
        while len(_LAID_OUT) > _LAID_OUT_MAX:
            del _LAID_OUT[next(iter(_LAID_OUT))]
    return done


_LAID_OUT: dict[tuple[str, str, str | None], bytes] = {}
_LAID_OUT_MAX = 4
_LAID_OUT_LOCK = threading.Lock()


def _lay_out(source: str, fmt: str, prog: str | None) -> bytes:
    import pygraphviz

    _start_fontconfig()

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
    run_label: str | None = None  # "backward run 2 of 3"
    modules: dict[str, ModuleSummary] = field(default_factory=dict)  # Trace.modules


def _is_trace(obj: Any) -> bool:
    return isinstance(obj, Trace)


def _backward_input(obj: Any, run: int | str = -1) -> _Backward:
    from gradviz.tensor import Tensor
    from gradviz.trace.graph import graph_of
    from gradviz.trace.model import BackwardGraph
    from gradviz.trace.torch_source import is_torch_tensor

    if isinstance(obj, Tensor) or is_torch_tensor(obj):  # a torch tensor: its grad_fn graph
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
                             classes=tr.module_classes, run_label=run_label(tr, run),
                             modules=tr.modules)
        # No backward yet: the whole recorded graph, rooted where nothing points.
        targets = {nxt for n in tr.nodes.values() for nxt, _ in n.next_functions if nxt}
        roots = [[nid, 0] for nid in tr.nodes if nid not in targets]
        leaves = {n.variable: tr.tensors[n.variable] for n in tr.nodes.values()
                  if n.variable in tr.tensors}
        graph = BackwardGraph(nodes=dict(tr.nodes), roots=roots, tensors=leaves)
        rootset = {r[0] for r in roots}
        outs = [t.id for t in tr.tensors.values() if t.grad_fn in rootset and not t.is_leaf]
        return _Backward(graph=graph, tensors=tr.tensors, root_tensors=outs, ops=ops,
                         title=tr.name, classes=tr.module_classes, modules=tr.modules,
                         run_label="the graph built so far (backward() not called yet)")
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
    """One edge. ``head`` says which input (``input 1``) or output it is, where that is worth
    saying; ``reverse`` draws it from ``dst`` to ``src`` with the arrow still pointing at
    ``dst`` (:func:`draw_both`)."""

    src: str
    dst: str
    cls: str
    nr: int | None = None  # input_nr of a next_functions edge
    k: int = 0  # how many identical edges came before (x * x)
    attrs: dict[str, str] = field(default_factory=dict)
    head: str | None = None
    reverse: bool = False
    text: str | None = None  # the gradient it carried, written on it (plain text)

    @property
    def id(self) -> str:
        """The SVG id (see NOTE [drawing ids])."""
        return (f"{_name(self.src)}->{_name(self.dst)}"
                + (f":{int(self.nr)}" if self.nr is not None else "")
                + (f"#{self.k + 1}" if self.k else ""))


def _edge(src: str, dst: str, cls: str, nr: int | None = None, k: int = 0,
          **attrs: str) -> _Edge:
    return _Edge(src, dst, cls, nr, k, attrs)


def _text_id(model_id: str) -> str:
    """A model id as shown in a label (a hostile id is shown clipped, not trusted)."""
    return clip(model_id, 16)


@dataclass
class _Parts:
    """A drawing before it becomes DOT: vertices for :func:`collapse.plan`, items, edges."""

    vertices: list[collapse.Vertex] = field(default_factory=list)
    items: dict[str, _Item] = field(default_factory=dict)
    edges: list[_Edge] = field(default_factory=list)
    failed: str | None = None  # the node the drawn run raised in, if it failed

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


def _node_inputs(b: _Backward) -> dict[str, int]:
    """How many inputs (gradient slots, ``input_nr``) each node has: one per output of the
    forward op that made it. Only a node with several gets its edges labelled ``input k``."""
    count: dict[str, int] = {}
    for n in b.graph.nodes.values():
        for nxt, nr in n.next_functions:
            if nxt is not None and isinstance(nr, int):
                count[nxt] = max(count.get(nxt, 1), nr + 1)
    for t in b.tensors.values():
        if t.grad_fn is not None and t.grad_fn in b.graph.nodes:
            count[t.grad_fn] = max(count.get(t.grad_fn, 1), t.output_nr + 1)
    return count


def _node_outputs(b: _Backward) -> dict[str, dict[int, TensorInfo]]:
    """The tensors each node is the ``grad_fn`` of, by ``output_nr``: the node's ``data``."""
    out: dict[str, dict[int, TensorInfo]] = {}
    for t in b.tensors.values():
        if t.grad_fn is not None and t.grad_fn in b.graph.nodes:
            out.setdefault(t.grad_fn, {}).setdefault(t.output_nr, t)
    return out


_MAX_SLOTS = 4  # data/grad lines per node with several inputs; the rest is "…"


def _value_lines(nid: str, n_inputs: int, outputs: dict[int, TensorInfo],
                 received: dict[tuple[str, int], Any], flow: bool) -> list[str]:
    """``data``/``grad`` lines of a node; ``data[1]``, ``grad[1]`` per input where it has
    several (a split's outputs, each with its own gradient)."""
    lines = []
    for k in range(min(n_inputs, _MAX_SLOTS)):
        tag = f"[{k}]" if n_inputs > 1 else ""
        t = outputs.get(k)
        data = _data_line(t.value if t is not None else None)
        if data:
            lines.append(f"data{tag}" + data[4:])
        go = received.get((nid, k))
        if go is not None or flow:
            lines.append(f"grad{tag} {_short(go)}")
    if n_inputs > _MAX_SLOTS:
        lines.append(f"… {n_inputs - _MAX_SLOTS} more inputs")
    return lines


def _expression(n: NodeInfo, ops: dict[str, OpRecord], tensors: dict[str, TensorInfo]) -> str:
    """The code a node came from: the user's line (``y = a * b``); inside a module (where that
    line is only ``out = model(x)``, the same for every node) or without a line, the op's call
    (``addmm(fc1.bias, x, t3)``)."""
    op = ops.get(n.forward_op) if n.forward_op else None
    if op is None:
        return ""
    if op.source is not None and op.source.code and not op.scope:
        return op.source.code.strip()
    return clip(_op_call(op, tensors), 44)


def _short(summary: dict[str, Any] | None) -> str:
    """A value in a box: ``(2,) [1, 2]`` (at most 4 numbers), or ``(8, 10) min -2.39 max 0.15``
    (its range) for a big one: a box in a picture is narrower than a table cell."""
    if summary is None:
        return "None"

    def num(v: Any) -> str:
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    stats = summary.get("stats") if "values" not in summary else None
    shape = summary.get("shape") or []
    if not stats and len(shape) >= 2 and isinstance(summary.get("values"), list):
        # a matrix's first row or two are not worth a box twice as wide: its range is
        flat: list[Any] = []
        stack = [summary["values"]]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, (int, float)) and not isinstance(item, bool):
                flat.append(item)
        stats = {"min": min(flat), "max": max(flat)} if flat else None
    if stats and "min" in stats and "max" in stats:
        return f"{shape_str(shape)} min {num(stats['min'])} max {num(stats['max'])}"
    return grad_str(summary, numbers=4)


def _data_line(summary: dict[str, Any] | None) -> str:
    """``data (2,) [1, 2]``; nothing when the trace kept no numbers (``values="none"``)."""
    return f"data {_short(summary)}" if summary and value_str(summary) else ""


def _backward_parts(b: _Backward, d: _Detail, leaf_boxes: bool = True,
                    state: StepState | None = None) -> _Parts:
    """Vertices and edges of a backward drawing at detail ``d``. ``leaf_boxes=False`` leaves out
    the tensor boxes (leaves, roots): :func:`draw_both` links to the forward side's instead."""
    g = b.graph
    parts = _Parts()
    scope = _scope_of(b)
    grads: dict[tuple[str, str, int], list[Any]] = {}
    leaf_grads: dict[str, Any] = {}
    received: dict[tuple[str, int], Any] = {}  # (node, input_nr) -> the gradient it was given
    flow = state  # the engine state whose gradients are shown: step k, or the end of the run
    if flow is None and (d.edge_grads or d.values) and b.run is not None and b.run.steps:
        flow = replay(b.run, -1)
    if flow is not None and b.run is not None:
        grads, leaf_grads = flow.edge_grads, flow.leaf_grads
        for s in b.run.steps[:flow.step.index + 1]:
            if s.kind == "execute" and s.node is not None:
                for nr, go in enumerate(s.grad_outputs or []):
                    received.setdefault((s.node, nr), go)
    elif d.edge_grads or d.values:
        leaf_grads = {t.id: t.grad for t in b.tensors.values() if t.grad is not None}
    if state is None and b.run is not None and b.run.error:  # a step frame says it in words
        parts.failed = next((s.node for s in reversed(b.run.steps) if s.kind == "error"), None)
        if flow is not None and parts.failed is not None:
            # It raised while running, so no execute step recorded what it was given: the
            # gradients its input buffer held when the engine called it.
            for nr, go in flow.buffers.get(parts.failed, {}).items():
                received.setdefault((parts.failed, nr), go)
    with_grads = d.edge_grads or state is not None
    leaf_ids = {n.variable for n in g.nodes.values() if n.variable}
    inputs = _node_inputs(b)
    outputs = _node_outputs(b) if d.values else {}
    names = Counter(n.name for n in g.nodes.values())

    # root tensors (z) -> their grad_fn
    for tid in b.root_tensors if leaf_boxes else ():
        t = b.tensors.get(tid)
        if t is None or t.grad_fn not in g.nodes:
            continue
        go = received.get((t.grad_fn, t.output_nr))
        lines = _tensor_lines(t)
        if d.values:
            lines += [_data_line(t.value), f"grad {_short(go)}" if go is not None else ""]
        parts.add(collapse.Vertex(tid, "output", scope.get(t.grad_fn, ()), attach=True,
                                  named=False),
                  _Item(tid, lines, "output", _FILL["output"],
                        f"{t.name}: output {shape_str(t.shape)} {t.dtype}"))
        e = _edge(tid, t.grad_fn, "root", style="bold")
        if with_grads and go is not None:
            e.text = grad_str(go)
        parts.edges.append(e)

    for nid in _node_order(g):
        n = g.nodes[nid]
        # The id tells same-named nodes apart (n4 · MulBackward0); a bare picture names a node
        # by its id only when another node has the same name.
        lines = [f"{_text_id(nid)} · {n.name}" if d.source or d.ids or names[n.name] > 1
                 else n.name]
        var = b.tensors.get(n.variable) if n.variable else None
        if n.kind == "accumulate_grad" and not leaf_boxes and var is not None:
            lines += [var.name, shape_str(var.shape)]
        if d.source:
            lines.append(_expression(n, b.ops, b.tensors))
        if d.attrs:
            for s in n.saved:
                if s.value is not None and "const" in s.value:
                    lines.append(f"{_saved_attr_name(s.name)} = {value_str(s.value)}")
                elif not d.saved:
                    lines.append(f"{_saved_attr_name(s.name)}: "
                                 f"{shape_str((s.value or {}).get('shape'))}"
                                 + (f" packed by {s.pack_hook.rsplit('.', 1)[-1]}"
                                    if s.pack_hook else ""))
        if d.values and n.kind not in ("accumulate_grad", "graph_root"):
            lines += _value_lines(nid, inputs.get(nid, 1), outputs.get(nid, {}), received,
                                  flow is not None)
        if state is not None and nid in state.deps and n.kind != "graph_root":
            lines.append(f"dependencies: {state.deps[nid]}")
        kind = n.kind if n.kind in _FILL else "op"
        failed = nid == parts.failed
        if failed:
            lines.append(f"raised {b.run.error.get('type', 'an error')}")
        parts.add(collapse.Vertex(nid, n.name, scope.get(nid, ()),
                                  attach=n.kind == "accumulate_grad", order=n.sequence_nr),
                  _Item(nid, lines, kind, _FILL[kind], functools.partial(_node_tip, n, b.ops),
                        extra=dict(_FAILED) if failed else {},
                        ref=var.name if var is not None else "", short=n.name))
        # next_functions: node -> target; "input k" at the head only where the target has
        # several inputs (a bare "0" on every edge read as "gradient 0")
        seen_edge: dict[tuple[str, int], int] = {}
        for nxt, nr in n.next_functions:
            if nxt is None or nxt not in g.nodes:
                continue
            k = seen_edge.get((nxt, nr), 0)
            seen_edge[(nxt, nr)] = k + 1
            e = _edge(nid, nxt, "next", nr, k)
            if inputs.get(nxt, 1) > 1:
                e.head = f"input {nr}"
            sent = grads.get((nid, nxt, nr))
            if with_grads and sent is not None and k < len(sent):
                e.text = grad_str(sent[k])
                if state is not None:
                    e.attrs.update(color="#c0392b", fontcolor="#c0392b")
            parts.edges.append(e)
        # AccumulateGrad -> its leaf (AccumulateGrad.variable)
        if n.kind == "accumulate_grad" and n.variable and leaf_boxes:
            vid = n.variable
            if vid not in parts.items:
                lines = _tensor_lines(var, vid)
                if d.values and var is not None:
                    lines.append(_data_line(var.value))
                if (d.values or with_grads) and vid in leaf_grads:
                    lines.append(f".grad {_short(leaf_grads[vid])}")
                cls = _leaf_class(var)
                parts.add(collapse.Vertex(vid, cls, scope.get(nid, ()), attach=True, named=False),
                          _Item(vid, lines, cls, _FILL[cls],
                                f"{var.name if var else vid}: "
                                f"{'parameter' if cls == 'param' else 'leaf'}"))
            parts.edges.append(_edge(nid, vid, "variable", arrowhead="none", style="bold",
                                     color="#4a78b5"))
        # saved values as their own nodes
        if d.saved:
            for i, s in enumerate(n.saved):
                if s.value is not None and "const" in s.value:
                    continue  # attributes, not tensors: listed in the node
                sid = f"{nid}.saved.{i}"
                src = b.tensors.get(s.tensor) if s.tensor else None
                lines = [_saved_attr_name(s.name), shape_str((s.value or {}).get("shape"))]
                if s.is_output:
                    lines.append("(result)")
                tip = f"{n.name}.{_saved_attr_name(s.name)}" + (f" = {src.name}" if src else "")
                packed: dict[str, str] = {}
                if s.pack_hook:  # NOTE [saved tensor hooks]: only what the hook returned is kept
                    lines.append(f"packed by {s.pack_hook.rsplit('.', 1)[-1]}")
                    tip += f", packed by {s.pack_hook}"
                    packed = {"color": "#8e44ad", "penwidth": "2"}
                parts.add(collapse.Vertex(sid, "saved", scope.get(nid, ()), attach=True,
                                          named=False),
                          _Item(sid, lines, "saved", _FILL["saved"], tip, extra=packed))
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
def _emit_node(dot: Any, name: str, item: _Item, proxy_of: str | None = None,
               marks: set[str] | None = None) -> None:
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
    if marks is not None:
        _mark_text(marks, lines)
    dot.node(name, _label(*lines), **attrs)


def _shapes_text(shapes: list[tuple[int, ...]]) -> str:
    text = ", ".join(shape_str(s) for s in shapes[:3]) or "nothing"
    return text + (", …" if len(shapes) > 3 else "")


def _module_lines(group: collapse.Group, modules: Mapping[str, ModuleSummary]) -> list[str]:
    """What a module folded into one box says of it: the shapes its last call took and gave,
    and its parameters (Trace.modules; none for a scope it never recorded)."""
    m = modules.get(scope_key(group.path)) if group.kind == "scope" else None
    if m is None:
        return []
    lines = [f"{_shapes_text(m.inputs)} → {_shapes_text(m.outputs)}"]
    if m.parameters:
        lines.append(f"{m.parameters:,} parameter{'s' if m.parameters != 1 else ''}")
    return lines


def _emit_group(dot: Any, name: str, group: collapse.Group, extra: dict[str, str],
                proxy: bool = False, marks: set[str] | None = None,
                modules: Mapping[str, ModuleSummary] | None = None) -> None:
    attrs = {"shape": "box3d", "style": "filled", "fillcolor": _FILL["group"],
             "class": "gv-group", "id": name, "tooltip": _attr(f"{group.title}: {group.detail}")}
    attrs.update(extra)
    # A copy (proxy) shows the title only, as a copied node shows its first line.
    # The detail ("19 more like the 29 ops next to it: sigmoid ×3, ...") is wrapped, not one
    # long line: a summary node as wide as that line widened a whole drawing.
    about = [] if proxy or modules is None else _module_lines(group, modules)
    lines = ("↪ " + group.title,) if proxy else (
        group.title, *about,
        *textwrap.wrap(plain(group.detail), 36, max_lines=3, placeholder=" …"))
    if marks is not None:
        _mark_text(marks, lines)
        if about:
            marks.add("module")
    dot.node(name, _label(*lines), **attrs)


# NOTE [legend marks] What a drawing's legend explains is what _emit drew, read off the very
# text and edges it wrote: a notation gets its key only in a drawing that uses it.
_RANGE = re.compile(r"\bmin \S+ max \S")


def _mark_text(marks: set[str], lines: Iterable[Any]) -> None:
    """Add the notations these label lines use to ``marks`` (NOTE [legend marks])."""
    for line in lines:
        if not isinstance(line, str):
            continue
        if "…" in line:
            marks.add("cut")
        if "↪" in line:
            marks.add("proxy")
        if "min " in line and _RANGE.search(line):
            marks.add("range-mean" if " mean " in line else "range")


def _mark_head(marks: set[str], head: str | None) -> None:
    if head is not None:
        marks.add("input-k" if head.startswith("input ") else
                  "output-k" if head.startswith("output ") else "keyword")


def _backward_marks(marks: set[str]) -> set[str]:
    """A backward drawing's "input k" is a node's input_nr, not an op's argument."""
    return {"input-nr" if m == "input-k" else m for m in marks}


def _emit(parts: _Parts, plan: collapse.Plan, node_target: Any, edge_target: Any,
          cluster_of: Any = None, extra: dict[str, dict[str, str]] | None = None,
          modules: Mapping[str, ModuleSummary] | None = None) -> set[str]:
    """Write the planned nodes and edges. ``cluster_of(scope)`` picks the subgraph of a node;
    ``modules`` (Trace.modules) what a folded module's box says of it. Returns the notations
    drawn, for the legend (NOTE [legend marks])."""
    extra = extra or {}
    marks: set[str] = set()

    def target(scope: tuple[str, ...]) -> Any:
        return node_target if cluster_of is None else cluster_of(scope)

    vinfo = {v.id: v for v in parts.vertices}
    drawn_groups: set[str] = set()
    for v in parts.vertices:
        d = plan.drawn(v.id)
        if d == v.id:
            _emit_node(target(v.scope), _name(v.id), parts.items[v.id], marks=marks)
        elif d not in drawn_groups:
            drawn_groups.add(d)
            group = plan.groups[d]
            _emit_group(target(group.scope), _name(d), group, extra.get(d, {}), marks=marks,
                        modules=modules)
    for pid, of in plan.proxy_of.items():
        if of in plan.groups:
            group = plan.groups[of]
            _emit_group(target(group.scope), _name(pid), group,
                        {"style": "filled,dashed", "class": "gv-proxy gv-group"}, proxy=True,
                        marks=marks)
        else:
            _emit_node(target(vinfo[of].scope), _name(pid), parts.items[of], proxy_of=of,
                       marks=marks)
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
            if b in plan.groups and plan.groups[b].kind == "scope":
                e = replace(e, head=None)  # an inner op's "input k" is not the module's
            merged.setdefault((a, b), []).append(e)
            continue
        attrs = {"class": f"gv-{e.cls}", "id": e.id if prox is None else f"{e.id}~"}
        if e.head is not None or e.text is not None:
            # A mid-edge label: dot makes room for it, so it never covers a node or another
            # label (a head label did), and "input 1" sits above the gradient it carries.
            attrs["label"] = _label(e.head, e.text)
            _mark_head(marks, e.head)
            _mark_text(marks, [e.text])
            if e.text is not None:
                marks.add("edge-grad")
        if e.cls in _LINE_KEYS:
            marks.add(e.cls)
        attrs.update(e.attrs)  # user text in attrs is already escaped by _label
        if e.reverse:
            a, b = b, a
            attrs["dir"] = "back"
        edge_target.edge(_name(a), _name(b), **attrs)
    for (a, b), es in merged.items():
        attrs = {"class": "gv-merged", "id": f"{_name(a)}->{_name(b)}"}
        if len(es) > 1:
            attrs["label"] = f"×{len(es)}"
            marks.add("merged")
        elif es[0].head is not None:
            attrs["label"] = _label(es[0].head)
            _mark_head(marks, es[0].head)
        if {e.cls for e in es} <= {"variable", "saved", "saved-link"}:
            attrs["arrowhead"] = "none"
        if es[0].reverse:
            a, b = b, a
            attrs["dir"] = "back"
        edge_target.edge(_name(a), _name(b), **attrs)
    return marks


def _speed_attrs(dot: Any, plan: collapse.Plan, n_vertices: int) -> None:
    """Cheaper layout settings for big drawings (crossing minimisation dominates)."""
    drawn = n_vertices - len(plan.rep) + len(plan.groups)
    if drawn > 400:
        dot.attr(mclimit="0.3", nslimit="5", nslimit1="5", remincross="false")


def _title(dot: Any, text: str | None) -> None:
    if text:
        dot.attr(label=_label(text), labelloc="t", fontsize="14")


def _backward_notes(parts: _Parts, d: _Detail) -> list[str]:
    notes = []
    if d.values and any(line.startswith(("data ", "grad ", ".grad "))
                        for it in parts.items.values() if isinstance(it.lines, list)
                        for line in it.lines):
        notes.append("data: the value the op made · grad: the gradient it received")
    return notes


@_gc_paused
def draw_backward(obj: Any, show_saved: bool = False, show_attrs: bool = False,
                  show_grads: bool = False, run: int | str = -1, max_nodes: float | None = None,
                  expand: Iterable[str] = (), detail: str | None = None,
                  depth: int | None = None) -> graphviz.Digraph:
    """Draw a backward graph as PyTorch builds it: ``grad_fn`` nodes, ``next_functions`` edges.

    Nodes are labelled with PyTorch's class names (``MulBackward0``); an edge goes from a node to
    each of its ``next_functions``, labelled ``input k`` at its head where the receiving node
    has several inputs (``input_nr``). Each ``AccumulateGrad`` is linked to its leaf (name and
    shape; parameters in green), and a root tensor (olive) points at its ``grad_fn``. Drawn from
    a trace, each node sits in a dashed box per module whose forward made it (an
    ``AccumulateGrad`` in the module its gradients come from), as in the forward graph. The title
    says which run is drawn (``backward run 2 of 3``); a legend under it says what the colours
    mean.

    Args:
        obj: a tensor (drawn via :func:`gradviz.graph_of`), a
            :class:`~gradviz.trace.model.BackwardGraph`, or a :class:`~gradviz.trace.Trace`
            (the graph of backward run ``run``).
        show_saved: draw saved tensors (``_saved_self``, ...) as orange nodes; one that is also
            an input of the graph gets a dashed link to that leaf (or its ``grad_fn``).
        show_attrs: list saved non-tensor attributes (``_saved_exponent = 2``) in node labels.
        show_grads: label edges with the gradients they carried and boxes with their ``data``
            and ``grad`` (edge gradients need a trace).
        run: which backward run of a trace (index or id; ``-1`` the last).
        max_nodes: node budget before folding scopes and repeated blocks (default 300; pass
            ``math.inf`` for full detail). See :mod:`gradviz.render.collapse`.
        expand: scopes to keep unfolded, e.g. ``("fc1",)``.
        detail: ``"bare"`` (names), ``"values"`` (id, code line, ``data`` and ``grad`` in each
            box, as micrograd draws), ``"saved"`` (saved tensors and attributes, as torchviz
            draws) or ``"auto"`` (``values`` up to :data:`AUTO_VALUES_MAX` nodes, else
            ``bare``; the default). The ``show_*`` flags add to it (NOTE [detail levels]).
        depth: draw modules nested deeper than this as one box each, with the shapes their
            call took and returned and their parameter count (``0``: the whole model one box;
            ``1``: one box per child of the model); None (the default) folds only what the
            node budget needs.

    Returns:
        a ``graphviz.Digraph`` (displays inline in Jupyter; :func:`to_svg` / :func:`render`
        lay it out without a ``dot`` binary). ``dot.detail`` is the level drawn.

    Example:
        >>> import gradviz as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> dot = draw_backward((x * 2).sum())
        >>> "MulBackward0" in dot.source and "AccumulateGrad" in dot.source
        True
        >>> with torch.trace() as tr:
        ...     (x * 2).sum().backward()
        >>> ".grad (2,) [2, 2]" in draw_backward(tr, detail="values").source
        True
    """
    b = _backward_input(obj, run)
    d = _detail(detail, len(b.graph.nodes), show_saved, show_attrs, show_grads)
    parts = _backward_parts(b, d)
    plan = collapse.plan(parts.vertices, [(e.src, e.dst) for e in parts.edges], max_nodes,
                         expand, classes=b.classes, depth=depth)
    dot = _new("backward")
    at = len(dot.body)
    _speed_attrs(dot, plan, len(parts.vertices))
    clusters = _Clusters(dot, prefix="cluster_b", classes=b.classes)
    marks = _backward_marks(_emit(parts, plan, dot, dot, clusters, modules=b.modules))
    clusters.close()
    notes = _backward_notes(parts, d)
    if clusters.subs:
        notes.insert(0, _MODULE_NOTE)
    _legend(dot, b.title, _subtitle(b.run_label, d), parts, plan, notes,
            _BACKWARD_KEYS,
            extra=["failed"] if parts.failed and plan.drawn(parts.failed) == parts.failed else [],
            marks=marks, at=at)
    dot.plan = plan
    dot.detail = d.level
    return dot


def _subtitle(what: str | None, d: _Detail) -> str:
    return " · ".join(x for x in (what, f"detail: {d.level}") if x)


# -- forward --------------------------------------------------------------------------------------
def _op_call(op: OpRecord, tensors: dict[str, TensorInfo]) -> str:
    def name(tid: str) -> str | None:
        t = tensors.get(tid)
        return t.name if t is not None else None

    return op_call(op, name)


def _op_lines(op: OpRecord, tensors: dict[str, TensorInfo], d: _Detail) -> list[str]:
    if d.level == "bare":
        return [op.name]  # names only: the edges say which tensors go in
    # The call on up to three lines, broken between arguments: cut to one line, the argument a
    # learner looks for (reduction='mean', after torch's size_average=None, reduce=None) was lost.
    call = textwrap.wrap(_op_call(op, tensors), 48, max_lines=3, placeholder=" …")
    if not d.source:
        return call
    return [*call, source_str(op.source)]


def _op_tip(op: OpRecord) -> str:
    return f"{op.name} ({op.id})" + (f" at {source_str(op.source, width=150)}"
                                      if op.source else "")


def _ftensor_lines(t: TensorInfo | None, tid: str, d: _Detail, grad: Any = None) -> list[str]:
    if t is None:
        return [tid]
    if d.level == "bare":
        return [t.name, shape_str(t.shape)]
    lines = [t.name, f"{shape_str(t.shape)} {t.dtype}"]
    if d.values:
        lines.append(_data_line(t.value))
        if grad is not None:
            lines.append(f"grad {_short(grad)}")
    return lines


def _ftensor_tip(t: TensorInfo | None, tid: str) -> str:
    if t is None:
        return tid
    return f"{t.name} ({tid}): {shape_str(t.shape)} {t.dtype}" + (
        ", requires_grad" if t.requires_grad else "")


def _forward_grads(tr: Trace) -> dict[str, Any]:
    """Each tensor's gradient in the last backward run: a leaf's ``.grad``, else what its
    ``grad_fn`` received for it (the ``grad`` a micrograd picture writes in the box)."""
    out = {t.id: t.grad for t in tr.tensors.values() if t.is_leaf and t.grad is not None}
    if not tr.runs or not tr.runs[-1].steps:
        return out
    received: dict[tuple[str, int], Any] = {}
    for s in tr.runs[-1].steps:
        if s.kind == "execute" and s.node is not None:
            for nr, go in enumerate(s.grad_outputs or []):
                received.setdefault((s.node, nr), go)
    for t in tr.tensors.values():
        if t.grad_fn is not None and (t.grad_fn, t.output_nr) in received:
            out[t.id] = received[(t.grad_fn, t.output_nr)]
    return out


def _forward_parts(tr: Trace, roots: set[str], d: _Detail | None = None,
                   all_ops: bool = False) -> _Parts:
    d = d or _LEVELS["saved"]
    grads = _forward_grads(tr) if d.values else {}
    parts = _Parts()
    consumers: dict[str, list[tuple[str, ...]]] = {}
    # The ops a custom Function's forward() ran are folded inside its op (OpRecord.parent):
    # the graph shows the one op PyTorch records for it.
    ops = [op for op in tr.ops if op.parent is None]
    # Only the forward passes, unless all ops are asked for: construction and updates are one
    # box per phase (NOTE [phases] in gradviz/trace/phases.py).
    phases: list[Phase] = []
    if not all_ops:
        forward, phases = split_phases(tr)
        ops = [op for op in ops if op.id in forward]
    for op in ops:
        for _, a in op.tensor_args():
            consumers.setdefault(a, []).append(tuple(op.scope))
    made: set[str] = set()
    # An op's extra outputs that nothing reads (max_pool2d's indices, a split's unused part)
    # are left out: each was a box in the row below its module, and the next module's
    # parameters, needing that row too, pushed every block of a CNN to the right of the one
    # before (a staircase 3,800 pt wide). The outputs drawn keep their "output j" label.
    unused = {out for op in ops if len(op.outputs) > 1 for out in op.outputs
              if out not in consumers and out not in roots}

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
                  _Item(tid, functools.partial(_ftensor_lines, t, tid, d, grads.get(tid)), cls,
                        _FILL[cls], functools.partial(_ftensor_tip, t, tid)))

    for op in ops:
        scope = tuple(op.scope)
        args = op.tensor_args()  # a tensor passed by keyword too: batch_norm's weight
        for _, a in args:
            if a not in made:
                tensor(a, collapse._common_prefix(consumers.get(a, [scope])))
        parts.add(collapse.Vertex(op.id, op.name, scope),
                  _Item(op.id, functools.partial(_op_lines, op, tr.tensors, d), "op",
                        _FILL["fop"], functools.partial(_op_tip, op),
                        {"shape": "box", "style": "filled"}, short=f"{op.name}(…)"))
        # which argument an edge is: worth a label where the call is written out (not bare)
        several = len(args) > 1 and d.level != "bare"
        for i, (keyword, a) in enumerate(args):
            head = (keyword or f"input {i}") if several else None
            parts.edges.append(_Edge(a, op.id, "input", nr=i if several else None,
                                     head=head))
        for j, out in enumerate(op.outputs):
            if out in unused:
                continue
            # A result read outside its module is drawn in the scope it goes to (the common
            # one): a module's box then ends with its last op, and the next module's box, with
            # its parameters on top, fits below it instead of beside it (a staircase of boxes).
            tensor(out, collapse._common_prefix([scope, *consumers.get(out, [])]))
            if out in op.inputs:  # returned an input as it is (contiguous, Dropout(p=0))
                continue
            e = _Edge(op.id, out, "output")
            if len(op.outputs) > 1:
                e.head = f"output {j}"
            parts.edges.append(e)
    # One box per phase, unlinked: every parameter comes out of construction and an optimizer
    # writes them all (a ResNet's 62 edges would cross the whole drawing); the box says what
    # ran and when, and each parameter box shows the value its forward read.
    for p in phases:
        parts.add(collapse.Vertex(p.id, f"phase: {p.label}", (), named=False),
                  _Item(p.id, [p.title], "phase", _FILL["phase"],
                        "ran " + "; ".join(p.statements), {"shape": "note", "style": "filled"},
                        short=p.label))
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
                 expand: Iterable[str] = (), detail: str | None = None,
                 all_ops: bool = False, depth: int | None = None) -> graphviz.Digraph:
    """Draw the forward graph of a trace: tensors and ops in creation order, by module scope.

    Ops (orange) are labelled with their call (``mul(x, 2)``) and the user's source line
    (``train.py:12  y = x * 2``); tensors with name, shape and dtype. Leaves needing grad are
    light blue, parameters green, the tensors ``backward()`` started from olive. Ops run inside
    a module are boxed in a cluster per module scope.

    Args:
        trace: a :class:`~gradviz.trace.Trace`.
        max_nodes: node budget before folding (default 300; ``math.inf``: full detail).
        expand: scopes to keep unfolded, e.g. ``("fc1",)``.
        detail: ``"bare"`` (op calls, tensor names and shapes), ``"values"`` (also the source
            line, dtype, and each tensor's ``data`` and ``grad``), ``"saved"`` (source lines and
            dtypes, no numbers) or ``"auto"`` (``values`` up to :data:`AUTO_VALUES_MAX`
            ops and tensors, else ``bare``; the default).
        all_ops: draw every op recorded; by default only the forward passes are drawn op by
            op, and the ops that built the model or updated it between backward runs are one
            box per phase (NOTE [phases] in gradviz/trace/phases.py).
        depth: as in :func:`draw_backward`: modules deeper than this are one box each.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     y = (x * 2).sum()
        >>> "mul(x, 2)" in draw_forward(tr).source
        True
        >>> with gradviz.trace() as tr:
        ...     _ = gradviz.nn.Sequential(gradviz.nn.Linear(3, 4), gradviz.nn.ReLU())(
        ...         gradviz.ones(2, 3))
        >>> "(2, 3) → (2, 4)" in draw_forward(tr, depth=1).source
        True
    """
    if not _is_trace(trace):
        raise TypeError(f"draw_forward() takes a Trace; got {type(trace).__name__}")
    roots = {tid for r in trace.runs for tid in r.roots}
    d = _detail(detail, len(trace.ops) + len(trace.tensors))
    parts = _forward_parts(trace, roots, d, all_ops)
    plan = collapse.plan(parts.vertices, [(e.src, e.dst) for e in parts.edges], max_nodes,
                         expand, noun="ops", classes=trace.module_classes, depth=depth)
    dot = _new("forward")
    notes = [_MODULE_NOTE] if any(op.scope for op in trace.ops) else []
    if d.values:
        notes.append("data: the tensor's value · grad: its gradient in the last backward run")
    at = len(dot.body)
    _speed_attrs(dot, plan, len(parts.vertices))
    clusters = _Clusters(dot, classes=trace.module_classes)
    marks = _emit(parts, plan, dot, dot, clusters, modules=trace.modules)
    clusters.close()
    _legend(dot, trace.name, _subtitle("forward graph", d), parts, plan, notes, _FORWARD_KEYS,
            forward=True, marks=marks, at=at)
    dot.plan = plan
    dot.detail = d.level
    return dot


# -- both -----------------------------------------------------------------------------------------
@_gc_paused
def draw_both(trace: Trace, run: int | str = -1, max_nodes: float | None = None,
              expand: Iterable[str] = (), detail: str | None = None,
              all_ops: bool = False, depth: int | None = None) -> graphviz.Digraph:
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
        detail: as in :func:`draw_forward` and :func:`draw_backward`, for both sides
            (``"auto"`` counts the nodes of both).
        all_ops: as in :func:`draw_forward`.
        depth: as in :func:`draw_backward`, for both sides.

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
    d = _detail(detail, len(trace.ops) + len(trace.tensors) + len(b.graph.nodes))
    fparts = _forward_parts(trace, roots, d, all_ops)
    fplan = collapse.plan(fparts.vertices, [(e.src, e.dst) for e in fparts.edges], max_nodes,
                          expand, prefix="fg", noun="ops", classes=trace.module_classes,
                          depth=depth)
    bparts = _backward_parts(b, d, leaf_boxes=False)
    bplan = collapse.plan(bparts.vertices, [(e.src, e.dst) for e in bparts.edges], max_nodes,
                          expand, prefix="bg", classes=b.classes, depth=depth)
    # Mirror the backward side: draw its edges reversed (dir=back), so next_functions sit
    # above their node, level with the forward ops that made them.
    for e in bparts.edges:
        e.reverse = True
    dot = _new("both")
    used = {"grad_fn" if it.cls == "op" else it.cls for it in bparts.items.values()}
    at = len(dot.body)
    _speed_attrs(dot, fplan, len(fparts.vertices) + len(bparts.vertices))
    fwd = _drawing_class()(name="cluster_forward")
    fwd.attr(label="forward", style="rounded", color="#999999", fontname="Helvetica")
    clusters = _Clusters(fwd, prefix="cluster_f", classes=trace.module_classes)
    marks = _emit(fparts, fplan, fwd, dot, clusters, modules=trace.modules)
    clusters.close()
    bwd = _drawing_class()(name="cluster_backward")
    bwd.attr(label=b.run_label if b.run else "backward", style="rounded",
             color="#999999", fontname="Helvetica")
    bclusters = _Clusters(bwd, prefix="cluster_b", classes=b.classes)
    marks |= _backward_marks(_emit(bparts, bplan, bwd, dot, bclusters, modules=b.modules))
    bclusters.close()
    notes = ["dotted line: an op and the grad_fn node it made"]
    if clusters.subs or bclusters.subs:
        notes.insert(0, _MODULE_NOTE)
    if d.values:
        notes.append("data: a tensor's (a node's output's) value · grad: the gradient it "
                     "received")
    _legend(dot, trace.name, _subtitle(b.run_label, d), fparts, fplan, notes, _FORWARD_KEYS
            + ("grad_fn", "accumulate_grad", "custom"), forward=True, extra=used, marks=marks,
            at=at)
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
    dot.detail = d.level
    return dot


# -- one step -------------------------------------------------------------------------------------
# "finished" is a darker grey than a node not run yet (light grey), so the two never look alike
_STEP_FILL = {"executing": "gold", "ready": "palegreen", "done": "#a6a6a6"}


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
    parts = _backward_parts(b, _Detail("step", edge_grads=True, ids=True), state=state)
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
            attrs["fontcolor"] = "#1a1a1a"
        extra[d] = attrs
    for nid, item in parts.items.items():
        if nid in extra:
            item.extra = dict(extra[nid], **{"class": f"gv-{item.cls} {extra[nid]['class']}"})
    step = state.step
    running = state.executing
    # The node a step is about (step.node) is not always the one running: an "accumulate" step
    # is the running node (gold) sending a gradient into another node's input buffer. That
    # receiver gets a red outline, and the title names both by role, so the words and the
    # colours agree.
    receiver = step.node if step.node is not None and step.node != running else None
    if receiver is not None and receiver in b.graph.nodes:
        d_recv = plan.drawn(receiver)
        attrs = extra.setdefault(d_recv, {})
        attrs.update(color="#c0392b", penwidth="2.5")
        attrs["class"] = (attrs.get("class", "") + " gv-receiver").strip()
        if d_recv in parts.items:
            item = parts.items[d_recv]
            item.extra = dict(attrs, **{"class": f"gv-{item.cls} {attrs['class']}"})
    if step.kind == "accumulate":
        key = (step.source, step.node, step.input_nr)
        for e in parts.edges:
            if e.cls == "next" and (e.src, e.dst, e.nr) == key:
                e.attrs["penwidth"] = "3"
                break
    dot = _new("step")

    def called(nid: str | None) -> str:
        n = b.graph.nodes.get(nid) if nid is not None else None
        return f"{nid} · {n.name}" if n is not None else str(nid)

    what = f"{b.run_label} · step {step.index}/{len(b.run.steps) - 1}: {step.kind}"
    roles = []
    if running is not None:
        roles.append(f"running (gold): {called(running)}")
    if receiver is not None:
        nr = getattr(step, "input_nr", None)
        roles.append(("sends a gradient to" if step.kind == "accumulate" else "about")
                     + f" (red outline): {called(receiver)}"
                     + (f", input {nr}" if step.kind == "accumulate" and nr is not None else ""))
    elif running is None and step.node is not None:
        roles.append(called(step.node))
    ready = ", ".join(called(r) for r in state.ready)
    keys = {"executing"} if running is not None else set()
    if receiver is not None:
        keys.add("receiver")
    keys |= {s for s in status.values()}
    at = len(dot.body)
    _speed_attrs(dot, plan, len(parts.vertices))
    marks = _backward_marks(_emit(parts, plan, dot, dot, extra=extra))
    _legend(dot, None, what, parts, plan, ["; ".join(roles), f"ready queue: [{ready}]"],
            _STEP_KEYS, extra=keys, texts={"op": "not run yet"}, marks=marks, at=at)
    dot.plan = plan
    return dot

