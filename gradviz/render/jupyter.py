"""Inline display in Jupyter: ``gradviz.show(obj)`` and the reprs of traces and graphs.

Outside a notebook ``show`` opens the drawing or the player in the web browser instead
(NOTE [show outside Jupyter]).

No IPython import is needed: notebooks call ``_repr_svg_`` / ``_repr_html_`` /
``_repr_mimebundle_`` on whatever a cell returns. A tensor or a backward graph displays as the
SVG of :func:`~gradviz.render.graphviz.draw_backward`; a trace as the HTML step player
(:func:`gradviz.render.html.player_html`, when that module is installed), else as the SVG.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["show", "Player", "trace_mimebundle", "graph_svg", "in_notebook"]


def _player_available() -> bool:
    return importlib.util.find_spec("gradviz.render.html") is not None


def graph_svg(obj: Any, **kwargs: Any) -> str:
    """The SVG of ``draw_backward(obj, **kwargs)`` (a tensor, graph or trace).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> graph_svg((x * 2).sum()).lstrip().startswith("<?xml")
        True
    """
    from gradviz.render.graphviz import draw_backward, to_svg

    return to_svg(draw_backward(obj, **kwargs))


def _trace_html(trace: Any) -> str:
    if trace.runs and _player_available():
        from gradviz.render.html import player_html

        return player_html(trace, fragment=True)
    from gradviz.render.graphviz import draw_backward, draw_forward, to_svg

    drawing = draw_backward(trace) if trace.runs or trace.nodes else draw_forward(trace)
    return f'<div class="gradviz-trace">{to_svg(drawing, inline=True)}</div>'


def trace_mimebundle(trace: Any, include: Iterable[str] | None = None,
                     exclude: Iterable[str] | None = None) -> dict[str, str]:
    """What a notebook shows for a trace: the step player (``text/html``), the backward graph
    (``image/svg+xml``) and the summary (``text/plain``), each computed only if wanted.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> sorted(trace_mimebundle(tr, include=["text/plain"]))
        ['text/plain']
    """
    wanted = set(include) if include is not None else {"text/html", "image/svg+xml",
                                                        "text/plain"}
    wanted -= set(exclude or ())
    out: dict[str, str] = {}
    if "text/plain" in wanted:
        out["text/plain"] = repr(trace)
    if "text/html" in wanted:
        out["text/html"] = _trace_html(trace)
    if "image/svg+xml" in wanted and (trace.runs or trace.nodes):
        out["image/svg+xml"] = graph_svg(trace)
    return out


class Player:
    """A trace displayed as the HTML step player (what :func:`show` returns for a trace).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> Player(tr)                                   # doctest: +ELLIPSIS
        <gradviz player: ...>
    """

    def __init__(self, trace: Any, run: int | str | None = None) -> None:
        self.trace = trace
        self.run = run

    def _repr_html_(self) -> str:
        if self.trace.runs and _player_available():
            from gradviz.render.html import player_html

            return player_html(self.trace, run=self.run, fragment=True)
        return _trace_html(self.trace)

    def _repr_svg_(self) -> str | None:
        if not (self.trace.runs or self.trace.nodes):
            return None
        return graph_svg(self.trace, run=-1 if self.run is None else self.run)

    def _repr_mimebundle_(self, include: Iterable[str] | None = None,
                          exclude: Iterable[str] | None = None, **_: Any) -> dict[str, str]:
        wanted = set(include) if include is not None else {"text/html", "text/plain"}
        wanted -= set(exclude or ())
        out = {}
        if "text/plain" in wanted:
            out["text/plain"] = repr(self)
        if "text/html" in wanted:
            out["text/html"] = self._repr_html_()
        if "image/svg+xml" in wanted:
            svg = self._repr_svg_()
            if svg:
                out["image/svg+xml"] = svg
        return out

    def __repr__(self) -> str:
        return f"<gradviz player: {self.trace.summary()}>"

    def html(self) -> str:
        """The HTML fragment shown in a notebook."""
        return self._repr_html_()


def in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (a notebook, JupyterLab, VS Code, Colab),
    where a returned object is displayed inline. IPython is never imported here: a kernel has
    imported it already.

    Example:
        >>> in_notebook()
        False
    """
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    if get is None:
        return False
    try:
        shell = get()
    except Exception:  # noqa: BLE001 - a half-initialised IPython must not break show()
        return False
    return getattr(shell, "kernel", None) is not None


def _open_outside_notebook(shown: Any, open_browser: bool) -> Path:
    """Write what ``show`` displays to a new temporary folder, open it in the browser (unless
    ``open_browser`` is false) and say where it is on stderr; return the file's path."""
    import tempfile
    import webbrowser

    folder = Path(tempfile.mkdtemp(prefix="gradviz-show-"))
    if isinstance(shown, Player):
        from gradviz.render.html import write_player

        path = folder / "steps.html"
        write_player(shown.trace, path, run=shown.run)
    else:
        from gradviz.render.graphviz import to_svg

        path = folder / "backward.svg"
        path.write_text(to_svg(shown), encoding="utf-8")
    opened = False
    if open_browser:
        try:
            opened = webbrowser.open(path.as_uri())
        except Exception:  # noqa: BLE001 - webbrowser.Error, a broken $BROWSER: say so below
            opened = False
    if opened:
        message = f"gradviz.show: opened {path} in your browser"
    else:
        message = (f"gradviz.show: wrote {path}; open it in a browser (in Jupyter, show() "
                   "displays it in the notebook)")
    stream = sys.stderr
    if stream is not None and not getattr(stream, "closed", False):
        print(message, file=stream)
    return path


def show(obj: Any, open_browser: bool = True, **kwargs: Any) -> Any:
    """Display ``obj``: inline in Jupyter, in the web browser elsewhere.

    A tensor or :class:`~gradviz.trace.model.BackwardGraph` gives
    ``draw_backward(obj, **kwargs)`` (a ``graphviz.Digraph`` that renders its SVG through
    pygraphviz); a :class:`~gradviz.trace.Trace` gives a :class:`Player` (the HTML step player,
    ``kwargs`` may hold ``run``). In a notebook that object is returned and displayed inline.

    NOTE [show outside Jupyter] A plain ``python script.py`` has nowhere to display HTML or
    SVG, so ``show`` writes the drawing (``backward.svg``) or the player (``steps.html``) to a
    new temporary folder, opens it with :mod:`webbrowser` (as ``plt.show()`` opens a window),
    and prints the file's path on stderr — also when no browser can be opened (a server, CI),
    so the learner can open it elsewhere. The object is returned as in a notebook.

    Args:
        obj: a tensor, a backward graph, or a trace.
        open_browser: outside a notebook, open the file in the browser (``False``: only write
            it and print its path). Ignored in a notebook.
        **kwargs: passed to :func:`~gradviz.render.graphviz.draw_backward` (or ``run=`` for a
            trace).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> drawing = show((x * 2).sum(), open_browser=False)  # prints: gradviz.show: wrote ...
        >>> "<svg" in drawing._repr_svg_()
        True
    """
    from gradviz.render.graphviz import _is_trace, draw_backward

    shown = Player(obj, **kwargs) if _is_trace(obj) else draw_backward(obj, **kwargs)
    if not in_notebook():
        _open_outside_notebook(shown, open_browser)
    return shown
