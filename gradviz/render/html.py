"""The HTML step player: one self-contained page that replays a backward pass step by step.

The page holds everything it needs and asks the network for nothing: the forward and backward
graphs as inline SVG (drawn by :mod:`gradviz.render.graphviz`), the trace as JSON in a
``<script type="application/json">`` block, and a small vanilla-JS player
(``templates/player.js``) that steps through the engine's events, highlighting nodes and edges
and showing the ready queue, dependency counts, the gradient on each edge and every leaf's
``.grad``, with each step's sentence as :mod:`gradviz.render.sentences` writes it (the words
the terminal prints too). ``fragment=True`` gives the same player as a ``<div>`` for Jupyter.

NOTE [the SVG contract] The player finds graph elements by the ``<title>`` Graphviz writes into
every ``<g class="node">`` and ``<g class="edge">``: it is the DOT node name, which must be the
trace's id (backward nodes ``n0, n1, ...``; forward tensors ``t0, ...`` and ops ``op0, ...``),
and an edge's title is ``n4->n0`` (a ``:port`` suffix on either end is ignored). Elements with
other titles are simply never highlighted.

NOTE [escaping] Every user string (tensor names, op labels, file paths, code lines) reaches the
page in one of three ways, each safe on its own: inside the SVG, which is re-parsed as XML and
re-serialised here with text and attributes escaped and anything active removed
(``_sanitize_svg``); inside the JSON block, where ``<``, ``>`` and ``&`` are written as
``\\u003c`` etc. so no ``</script>`` can close it; or in the page title, escaped with
:func:`html.escape`. The JavaScript only ever sets data with ``textContent``. A standalone page
also carries a Content-Security-Policy that allows no network and only the player's own script
(by hash), so even an injected ``onerror=`` handler could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib import resources
from typing import Any

from gradviz.render._format import clip, op_call
from gradviz.render.sentences import player_sentences
from gradviz.trace.io import atomic_write, encode_json, trace_to_dict
from gradviz.trace.model import run_name, run_numbers
from gradviz.trace.replay import memory, timeline

__all__ = ["player_html", "write_player", "MAX_RUNS"]

#: A trace of a training loop can hold many runs; the player embeds the last ``MAX_RUNS`` of
#: them (one backward SVG each) unless ``run=`` picks one.
MAX_RUNS = 20

_BEGIN = "<!-- gradviz-player:begin -->"
_END = "<!-- gradviz-player:end -->"
_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


# -- templates ------------------------------------------------------------------------------------
def _template(name: str) -> str:
    return (resources.files("gradviz.render") / "templates" / name).read_text("utf-8")


def _fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{{NAME}}`` placeholders in one pass (inserted text is never scanned again)."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _json_for_script(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (and inside HTML at all)."""
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):  # NaN or deep nesting read from a file
        text = encode_json(data)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# -- SVG ------------------------------------------------------------------------------------------
_SVG_NS = "http://www.w3.org/2000/svg"
_NS_PREFIX = {"http://www.w3.org/1999/xlink": "xlink",
              "http://www.w3.org/XML/1998/namespace": "xml"}
# What Graphviz's SVG output uses; anything else (script, foreignObject, image, use, ...) is
# dropped so a drawing can neither run code nor load a file.
_SVG_TAGS = {"svg", "g", "title", "desc", "a", "polygon", "polyline", "ellipse", "circle", "path",
             "rect", "line", "text", "tspan", "defs", "linearGradient", "radialGradient", "stop"}
_URL_REF = re.compile(r"url\(\s*#([^)\s]+)\s*\)")


def _local(name: str) -> tuple[str | None, str]:
    if name.startswith("{"):
        ns, _, local = name[1:].partition("}")
        return ns, local
    return None, name


def _sanitize_svg(svg: str | bytes, prefix: str) -> str:
    """Graphviz SVG made safe to inline in HTML.

    Parses the SVG as XML (dropping the prolog, doctype and comments), keeps only Graphviz's
    own elements, removes event handlers and links that leave the document, prefixes every
    ``id`` (and its ``url(#...)``/``#...`` references) with ``prefix`` so several drawings can
    share a page, and writes it back with all text and attributes escaped.
    """
    if isinstance(svg, bytes):
        svg = svg.decode("utf-8")
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        raise ValueError(f"the graph renderer returned SVG that is not well-formed XML: {e}"
                         ) from None
    if _local(root.tag)[1] != "svg":
        raise ValueError(f"expected an <svg> document, got <{_local(root.tag)[1]}>")
    out: list[str] = []
    _write_svg(root, prefix, out)
    return "".join(out)


def _clean_attrs(el: ET.Element, prefix: str) -> list[tuple[str, str]]:
    attrs: list[tuple[str, str]] = []
    for key, value in el.attrib.items():
        ns, local = _local(key)
        if ns is not None and ns not in _NS_PREFIX:
            continue
        name = local if ns is None else f"{_NS_PREFIX[ns]}:{local}"
        if local.lower().startswith("on"):
            continue  # event handlers
        if local == "href":
            if not value.startswith("#"):
                continue  # links out of the page (Graphviz URL= attributes) are dropped
            value = "#" + prefix + value[1:]
        elif local == "id":
            value = prefix + value
        if "url(" in value:
            if re.search(r"url\(\s*[^#\s]", value):
                continue  # a reference to anything but a local fragment
            value = _URL_REF.sub(lambda m: f"url(#{prefix}{m.group(1)})", value)
        attrs.append((name, value))
    return attrs


def _write_svg(root: ET.Element, prefix: str, out: list[str]) -> None:
    """Write ``root`` and the SVG elements inside it, sanitised, to ``out``: a stack of what is
    still to be written (elements, and text ready to write: tails and closing tags)."""
    todo: list[ET.Element | str] = [root]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        tag = _local(item.tag)[1]
        attrs = _clean_attrs(item, prefix)
        if tag == "svg":
            attrs = [(k, v) for k, v in attrs if k not in ("xmlns", "class")]
            attrs += [("class", "gv-svg-graph"), ("focusable", "false")]
        out.append("<" + tag + "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in attrs))
        out.append(">")
        if item.text:
            out.append(html.escape(item.text, quote=False))
        then: list[ET.Element | str] = []
        for child in item:
            ns, child_tag = _local(child.tag)
            if ns in (None, _SVG_NS) and child_tag in _SVG_TAGS:
                then.append(child)
            if child.tail:
                then.append(html.escape(child.tail, quote=False))
        then.append(f"</{tag}>")
        todo.extend(reversed(then))


def _svgs(trace: Any, run_indices: list[int], uid: str
          ) -> tuple[str, list[str], dict[str, Any]]:
    """The forward SVG and one backward SVG per run, sanitised, ids prefixed per drawing, and
    what each drawing folded (:func:`_folded`)."""
    from gradviz.render.graphviz import draw_backward, draw_forward, resolve_detail, to_svg

    # The player shows each step's values and gradients in its panels and on its edges: its
    # pictures carry no numbers (the "values" detail level would print the run's end state in
    # every box, even at step 0). The forward graph keeps calls and source lines when small.
    small = resolve_detail("auto", len(trace.ops) + len(trace.tensors)) == "values"
    forward = ""
    folded: dict[str, Any] = {"forward": None, "backward": [], "svgs": {}}
    if trace.ops:
        dot = draw_forward(trace, detail="saved" if small else "bare")
        forward = _sanitize_svg(to_svg(dot, inline=True), f"{uid}-f-")
        svgs: list[tuple[str, str]] = []
        folded["forward"] = _folded(dot, lambda: _forward_edges(trace), trace, f"{uid}-fi-",
                                    svgs)
        folded["svgs"]["f"] = svgs
    backward = []
    cache: list[dict[str, list[str]]] = []

    def edges() -> dict[str, list[str]]:  # only when a drawing folds something
        if not cache:
            cache.append(_backward_edges(trace))
        return cache[0]

    for k, i in enumerate(run_indices):
        dot = draw_backward(trace, run=i, detail="bare")
        backward.append(_sanitize_svg(to_svg(dot, inline=True), f"{uid}-b{k}-"))
        svgs = []
        folded["backward"].append(_folded(dot, edges, trace, f"{uid}-b{k}i-", svgs))
        folded["svgs"][f"b{k}"] = svgs
    return forward, backward, folded


#: A folded group is drawn opened (one repetition) only up to this many places in its block;
#: a bigger one opens as a list. And at most this many groups per drawing get a drawing.
INSET_MAX_PLACES = 60
INSET_MAX_GROUPS = 40


def _backward_edges(trace: Any) -> dict[str, list[str]]:
    """The backward graph's edges as drawn, by their start: each node to its next functions,
    and a leaf's ``AccumulateGrad`` to the tensor it writes."""
    out: dict[str, list[str]] = {}
    for n in trace.nodes.values():
        out[n.id] = [t for t, _ in n.next_functions if t is not None]
        if n.variable:
            out[n.id].append(n.variable)
    return out


def _forward_edges(trace: Any) -> dict[str, list[str]]:
    """The forward graph's edges, by their start: each op's inputs into it, it into its
    outputs."""
    out: dict[str, list[str]] = {}
    for op in trace.ops:
        for t in op.inputs:
            if isinstance(t, str):  # (an input may be a constant, recorded as a dict)
                out.setdefault(t, []).append(op.id)
        out.setdefault(op.id, []).extend(t for t in op.outputs if isinstance(t, str))
    return out


def _label(trace: Any, vid: str, op_names: dict[str, str]) -> str:
    """What a place of an opened block is called: a node's or op's name, a tensor's name."""
    if vid in trace.nodes:
        return trace.nodes[vid].name
    if vid in trace.tensors:
        return trace.tensors[vid].name or vid
    return op_names.get(vid, vid)


def _folded(dot: Any, edges: Callable[[], dict[str, list[str]]], trace: Any, prefix: str,
            svgs: list[tuple[str, str]]) -> dict[str, Any] | None:
    """Which trace ids a drawing folded into a summary node, where in its block each sits, and
    one repetition of each block drawn open.

    ``{"of": {"n12": "g0", ...}, "titles": {"g0": "fc1: Linear", ...}, "blocks": {"g0": ...}}``
    (``None`` when nothing is folded). ``of`` lets the player highlight the group a step's node
    is hidden in: the group's SVG ``<title>`` is its id, as a node's is its trace id (NOTE [the
    SVG contract]). ``blocks[g]`` opens the group (NOTE [block slots] in collapse.py):
    ``reps``, how many repetitions it holds; ``grid[r][p]``, the id at place ``p`` of
    repetition ``r`` (or ``null``). One repetition drawn, each place's DOT name ``p0, p1, ...``,
    is appended to ``svgs`` as ``(group id, svg)`` (not for a block too big to draw: the player
    then lists its places).
    """
    plan = getattr(dot, "plan", None)
    if plan is None or not plan.groups:
        return None
    from gradviz.render.graphviz import to_svg

    blocks: dict[str, Any] = {}
    drawn = 0
    op_names = {op.id: op.name for op in trace.ops}
    for gid, group in plan.groups.items():
        places = 1 + max((p for _, p in group.slots.values()), default=-1)
        grid: list[list[str | None]] = [[None] * places for _ in range(max(1, group.repeats))]
        for vid, (r, p) in group.slots.items():
            if r < len(grid):
                grid[r][p] = vid
        if places <= INSET_MAX_PLACES and drawn < INSET_MAX_GROUPS:
            dot_text = _block_dot(group, grid, edges(), lambda v: _label(trace, v, op_names))
            svgs.append((gid, _sanitize_svg(to_svg(dot_text, inline=True), f"{prefix}{gid}-")))
            drawn += 1
        blocks[gid] = {"reps": len(grid), "grid": grid}
    return {"of": dict(plan.rep),
            "titles": {gid: group.title for gid, group in plan.groups.items()},
            "blocks": blocks}


def _block_dot(group: Any, grid: list[list[str | None]], edges: dict[str, list[str]],
               label: Any) -> Any:
    """One repetition of a folded block as DOT: a node ``p<k>`` per place (named after the
    first repetition that has it), an edge wherever members of one repetition are linked."""
    import graphviz

    dot = graphviz.Digraph(graph_attr={"rankdir": "TB", "nodesep": "0.2", "ranksep": "0.25",
                                       "bgcolor": "transparent", "margin": "0.05"},
                           node_attr={"shape": "box", "style": "rounded,filled",
                                      "fillcolor": "white", "fontsize": "11",
                                      "fontname": "Helvetica", "height": "0.3"},
                           edge_attr={"arrowsize": "0.6"})
    named: set[int] = set()
    for row in grid:
        for p, vid in enumerate(row):
            if vid is not None and p not in named:
                named.add(p)
                # nohtml: a name such as "<b>" is text, not an HTML-like label
                dot.node(f"p{p}", graphviz.nohtml(label(vid).replace("\\", "\\\\")))
    slot = group.slots
    seen: set[tuple[int, int]] = set()
    for a, sa in slot.items():
        for b in edges.get(a, ()):
            sb = slot.get(b)
            if sb is None or sa[0] != sb[0] or (sa[1], sb[1]) in seen:
                continue
            seen.add((sa[1], sb[1]))
            dot.edge(f"p{sa[1]}", f"p{sb[1]}")
    return dot


# -- the player -----------------------------------------------------------------------------------
def _memory_changes(trace: Any, run: Any, tl: Any) -> dict[str, list[list[int]]]:
    """A run's memory curve (replay.memory) as ``[[step, bytes], ...]`` where it changes."""
    m = memory(run, trace.nodes, trace.tensors, tl)

    def changes(values: list[int]) -> list[list[int]]:
        out: list[list[int]] = []
        for k, v in enumerate(values):
            if not out or out[-1][1] != v:
                out.append([k, v])
        return out

    return {"saved": changes(m.saved), "buffers": changes(m.buffers)}


def _run_indices(trace: Any, run: int | str | None, max_runs: int) -> tuple[list[int], list[str]]:
    if not trace.runs:
        return [], []
    if run is not None:
        chosen = trace.run(run)  # IndexError / KeyError with the list of runs
        return [next(i for i, r in enumerate(trace.runs) if r is chosen)], []
    indices = list(range(len(trace.runs)))
    if len(indices) > max_runs:
        dropped = len(indices) - max_runs
        indices = indices[-max_runs:]
        return indices, [f"the player shows the last {max_runs} backward runs; {dropped} earlier "
                         f"run(s) are in the trace but not drawn (pass run= to pick one)"]
    return indices, []


def player_html(trace: Any, run: int | str | None = None, title: str | None = None, *,
                fragment: bool = False, max_runs: int = MAX_RUNS) -> str:
    """The HTML step player for a trace: a self-contained page, or a fragment for Jupyter.

    Args:
        trace: a :class:`~gradviz.trace.Trace` (recorded, or reloaded with ``load_trace``).
        run: show only this backward run (index, ``-1`` for the last, or id ``"run0"``);
            ``None`` shows every run (the last ``max_runs``) with a run selector.
        title: the page heading; defaults to the trace's name.
        fragment: return a ``<div>`` (no ``<html>``/``<head>``) whose ids are unique to this
            call and whose script only touches its own container, so several players can sit
            in one notebook. Arrow keys then act only while the player has focus (click it).
        max_runs: how many runs to embed at most when ``run`` is ``None``.

    Returns:
        The HTML text. Open the page in any browser; it makes no network request.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        ...     (x ** 2).sum().backward()
        >>> page = player_html(tr)                    # doctest: +SKIP
        >>> open("steps.html", "w").write(page)       # doctest: +SKIP
    """
    if max_runs < 1:
        raise ValueError(f"max_runs must be at least 1; got {max_runs!r}")
    indices, notes = _run_indices(trace, run, max_runs)
    # Unique per call in a notebook; fixed for a page, so one trace always gives the same file.
    uid = f"gvp-{secrets.token_hex(6)}" if fragment else "gvp"
    forward_svg, backward_svgs, folded = _svgs(trace, indices, uid)

    # Only the runs shown are converted: a long training loop has thousands.
    data = trace_to_dict(trace, runs=indices, copy=False)  # only written out, below
    heading = title if title is not None else (trace.name or "gradviz: backward, step by step")
    # The engine's states, replayed once in the trace layer: the page only looks them up.
    tls = [timeline(trace.runs[i]) for i in indices]
    timelines = [tl.to_dict() for tl in tls]
    # Each shown run's number and name as the drawings' titles give them (NOTE [run numbers]):
    # the header, the run picker and the address (#run=N) use these, never a count of their own.
    numbers = run_numbers(trace)
    payload = {"trace": data, "timelines": timelines, "notes": notes,
               "hasForward": bool(forward_svg),
               "runNumbers": [numbers[i] for i in indices],
               "runNames": [run_name(trace, i) for i in indices]}
    # Which ids each drawing folded into a group, where in its block each sits (player.md);
    # one repetition of each block drawn open goes into the page as hidden SVG.
    block_svgs = "".join(f'<div class="gv-block-svg" data-drawing="{name}" data-group='
                         f'"{html.escape(gid, quote=True)}">{svg}</div>'
                         for name, items in folded.pop("svgs").items() for gid, svg in items)
    payload["folded"] = folded
    # The bytes each run holds after each step (NOTE [memory] in replay.py), as the steps at
    # which they change: the page's plot and numbers only look them up.
    payload["memory"] = [_memory_changes(trace, trace.runs[i], tl) for i, tl in zip(indices, tls)]
    # Each step's sentence, written once in Python (sentences.py): the page only displays it.
    payload["sentences"] = player_sentences(trace, [trace.runs[i] for i in indices])
    # Each op that made a backward node, as the call that ran (an enum by its name: NOTE [enum
    # arguments]); formatted here, once, so the page and the drawings read alike.
    names = {t.id: t.name for t in trace.tensors.values()}
    payload["calls"] = {op.id: clip(op_call(op, names.get), 200) for op in trace.ops
                        if op.node is not None}

    script = _fill("(function (ROOT_ID, KEYS_ON_DOCUMENT) {\n{{JS}}\n})({{UID}}, {{DOC}});\n", {
        "JS": _template("player.js"),
        "UID": json.dumps(uid),
        "DOC": "false" if fragment else "true",
    })
    backward = "\n".join(f'<div class="gv-svg" data-run="{k}" hidden>{svg}</div>'
                         for k, svg in enumerate(backward_svgs))
    page = _template("player.html")
    values = {
        "UID": uid,
        "TITLE": html.escape(heading),
        "CSS": _template("player.css"),
        "BACKWARD_SVGS": backward,
        "FORWARD_SVG": forward_svg,
        "BLOCK_SVGS": block_svgs,
        "DATA_JSON": _json_for_script(payload),
        "SCRIPT": script,
        "CSP": _csp(script),
    }
    if fragment:
        page = page[page.index(_BEGIN) + len(_BEGIN):page.index(_END)].strip() + "\n"
    return _fill(page, values)


def _csp(script: str) -> str:
    """A policy that allows no network at all and runs only the player's own script."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
            f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'")


def write_player(trace: Any, path: str | os.PathLike[str], run: int | str | None = None,
                 title: str | None = None) -> str:
    """Write :func:`player_html` to ``path`` (UTF-8, atomically) and return the HTML.

    A character UTF-8 cannot hold (a lone surrogate) is written as its escape.
    """
    text = player_html(trace, run=run, title=title)
    with atomic_write(path) as fh:
        fh.write(text)
    return text
