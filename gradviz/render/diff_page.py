"""One self-contained HTML page for ``gradviz compare``: two traces of one script, side by side.

The page holds the verdict, every difference (which run, which node or step, both values), each
run's execution orders and leaf gradients side by side, the script errors, and both backward
graphs as inline SVG. Every string from a trace or a script is escaped.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["diff_page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: .5em 0; width: 100%; table-layout: fixed; }
th, td { border: 1px solid #ccc; padding: .3em .5em; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; font-size: .9em; }
tr.differ td { background: #fde2e1; }
.verdict { font-weight: bold; padding: .4em .6em; display: inline-block; }
.verdict.same { background: #dff3e0; } .verdict.differ { background: #fde2e1; }
.verdict.unchecked { background: #fff4d6; }
ul.differences li { margin: .3em 0; font-family: monospace; }
.graphs { display: flex; gap: 1em; flex-wrap: wrap; }
.graphs > div { flex: 1 1 420px; min-width: 0; border: 1px solid #ddd; padding: .5em; }
.graphs svg { max-width: 100%; height: auto; }
.note { color: #666; }
"""


def diff_page(diff: Any, title: str, graphs: tuple[str | None, str | None] = (None, None),
              links: tuple[str | None, str | None] = (None, None)) -> str:
    """The HTML page of a :class:`~gradviz.trace.diff.TraceDiff`.

    Args:
        diff: the comparison (``diff.labels`` name the two sides).
        title: the page's heading (the script's name), escaped here.
        graphs: each side's backward graph as SVG text (None: not drawn).
        links: each side's step player, a relative URL (None: no link).

    Example:
        >>> from gradviz.trace.diff import TraceDiff
        >>> "No difference" in diff_page(TraceDiff(labels=("torch", "gradviz")), "s.py")
        True
    """
    e = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>gradviz compare: "
             f"{e(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>gradviz compare: {e(title)}</h1>",
             f"<p>{e(diff.labels[0])} vs {e(diff.labels[1])}: the backward graphs, the "
             "execution orders, the gradients (where the inputs agree) and the error texts.</p>",
             diff.to_html()]
    if any(g is not None for g in graphs):
        parts.append("<h2>backward graphs</h2><div class='graphs'>")
        for label, svg, link in zip(diff.labels, graphs, links, strict=True):
            head = e(label) + (f" — <a href='{e(link)}'>step player</a>" if link else "")
            body = _svg_body(svg) if svg is not None else "<p class='note'>not drawn</p>"
            parts.append(f"<div><h3>{head}</h3>{body}</div>")
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _svg_body(svg: str) -> str:
    """The ``<svg>`` element of an SVG file (its XML prolog and doctype dropped)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
