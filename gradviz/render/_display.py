"""What the render layer gives the trace layer's objects: notebook displays and ``to_html``.

A ``Trace`` and a ``BackwardGraph`` are plain data; the trace layer never imports a renderer
(docs/architecture.md). Importing :mod:`gradviz.render` (which ``import gradviz`` does) installs
these methods on them, so that a notebook cell ending in ``tr`` shows the step player and
``tr.to_html("steps.html")`` writes it. The heavy modules load on first use.
"""

from __future__ import annotations

import os
from typing import Any

from gradviz.trace.model import BackwardGraph, Trace

__all__ = ["install"]


def _repr_mimebundle_(self: Trace, include: Any = None, exclude: Any = None,
                      **_: Any) -> dict[str, str]:
    from gradviz.render.jupyter import trace_mimebundle

    return trace_mimebundle(self, include, exclude)


def _repr_html_(self: Trace) -> str:
    """The HTML step player (or, without it, the backward graph's SVG)."""
    return self._repr_mimebundle_(include=["text/html"])["text/html"]


def _repr_svg_(self: Trace) -> str | None:
    """The SVG of the last backward run's graph (None for an empty trace)."""
    return self._repr_mimebundle_(include=["image/svg+xml"]).get("image/svg+xml")


def to_html(self: Trace, path: str | os.PathLike[str] | None = None,
            run: int | str | None = None) -> str:
    """The HTML step player: one self-contained page (see :mod:`gradviz.render.html`).

    Args:
        path: also write the page there (UTF-8, atomically).
        run: show only this backward run (index or id); default: every run, selectable.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> tr.to_html()[:15]
        '<!DOCTYPE html>'
    """
    from gradviz.render.html import player_html, write_player

    if path is not None:
        return write_player(self, path, run=run)
    return player_html(self, run=run)


def _graph_repr_svg_(self: BackwardGraph) -> str:
    """Jupyter shows a graph as the SVG of :func:`gradviz.render.graphviz.draw_backward`."""
    from gradviz.render.jupyter import graph_svg

    return graph_svg(self)


def install() -> None:
    """Give ``Trace`` and ``BackwardGraph`` their displays (done once, on import)."""
    Trace._repr_mimebundle_ = _repr_mimebundle_
    Trace._repr_html_ = _repr_html_
    Trace._repr_svg_ = _repr_svg_
    Trace.to_html = to_html
    BackwardGraph._repr_svg_ = _graph_repr_svg_
