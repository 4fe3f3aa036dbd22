"""Renderers: functions from the trace's plain-data model to pictures and text.

They never walk ``grad_fn``: a live tensor is first turned into a model with
:func:`gradviz.graph_of`, a recording is a :class:`~gradviz.trace.Trace`.

- :mod:`gradviz.render.graphviz` — ``draw_backward``, ``draw_forward``, ``draw_both``,
  ``draw_step`` (``graphviz.Digraph``), ``to_svg`` and ``render`` (svg/png/pdf/dot through
  pygraphviz's bundled Graphviz: no ``dot`` binary).
- :mod:`gradviz.render.collapse` — folding large graphs to a node budget.
- :mod:`gradviz.render.terminal` — ``print_graph``, ``step_table``, ``print_steps``,
  ``step_through`` (rich), nodes named as in the player (``node_label``).
- :mod:`gradviz.render.tui` — the keyboard-driven step view behind ``step_through`` and
  ``gradviz steps`` (Textual).
- :mod:`gradviz.render.jupyter` — ``show`` and the notebook reprs.
- :mod:`gradviz.render.html` — the self-contained HTML step player.
- :mod:`gradviz.render.sentences` — each engine step kind's sentence, written once for the
  terminal and the player.
- :mod:`gradviz.render.dot` — ``make_dot``, torchviz's drawing for gradviz and torch tensors.

Importing this package is cheap: graphviz, pygraphviz and rich are imported by the functions
that need them, and the submodules on first attribute access.

Example:
    >>> import gradviz
    >>> from gradviz.render import draw_backward, to_svg
    >>> x = gradviz.ones(2, requires_grad=True)
    >>> "<svg" in to_svg(draw_backward((x * 2).sum()))
    True
"""

from __future__ import annotations

from gradviz._lazy import lazy_attributes
from gradviz.render import _display

_display.install()  # trace objects' notebook displays and to_html (docs/architecture.md)

__all__ = ["draw_backward", "draw_forward", "draw_both", "draw_step", "to_svg", "render",
           "print_graph", "step_table", "print_steps", "step_through", "show", "replay",
           "player_html", "make_dot"]

_WHERE = {
    "draw_backward": "graphviz", "draw_forward": "graphviz", "draw_both": "graphviz",
    "draw_step": "graphviz", "to_svg": "graphviz", "render": "graphviz",
    "print_graph": "terminal", "step_table": "terminal", "print_steps": "terminal",
    "step_through": "terminal", "show": "jupyter", "replay": "_steps", "player_html": "html",
    "make_dot": "dot",
}


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _WHERE)
