"""``gradviz steps`` in a terminal: a keyboard-driven view of the engine's steps, on Textual.

The screen holds the step list of one backward run (left) and the current step (right): what
the engine does, the gradients involved, the ready queue, the input buffers, the dependency
counts and every leaf's ``.grad`` — the sections of the HTML player, named as the player names
nodes (``MulBackward0 n5``, ``AccumulateGrad (w) n3``). Single keys move (no Enter) and the
screen is redrawn in place:

=====================================  ==========================================
→ ``l`` ``j`` ↓ space ``n``            next step
← ``h`` ``k`` ↑ ``p`` backspace        previous step
PgDn / PgUp                            ten steps on / back
Shift+↓ / Shift+↑                      scroll the step's panel
Home ``g`` / End ``G``                 first / last step
``]`` Tab / ``[`` Shift+Tab            next / previous backward run
``?``                                  help
``q`` Esc                              quit
=====================================  ==========================================

NOTE [why Textual] A line-reading loop (``input()``) needs Enter after every key and can only
print a new panel per step; reading raw keys and redrawing in place by hand means terminal
modes, escape-sequence parsing and resize handling for every platform. Textual (by rich's
authors, so the panel is the same rich renderable the table uses) does that, and its
``App.run_test()`` pilot lets the tests press keys and read the screen.

The content comes from :mod:`gradviz.render.terminal` (``step_detail``, ``node_label``), which
replays the recorded steps (:class:`~gradviz.render.terminal.RunReplay`); this module only lays
it out and maps keys.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.events import Click, Resize
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from gradviz.render._format import clip
from gradviz.render.terminal import RunReplay, node_label, run_label, step_detail, visible
from gradviz.trace.model import run_name, runs_made

__all__ = ["StepsApp", "HELP", "fit_label"]

HELP = """\
gradviz steps: the engine's backward pass, one step at a time

  →  l  j  ↓  space  n      next step
  ←  h  k  ↑  p  backspace  previous step
  PgDn / PgUp               ten steps on / back
  Shift+↓ / Shift+↑         scroll the panel on the right
  Home  g  /  End  G        first / last step
  ]  Tab  /  [  Shift+Tab   next / previous backward run
  ?                         this help
  q  Esc                    quit

Left: every step of the run. Right: what the current step does, the gradients it
moves, the ready queue, each node's input buffer, the dependency counts (edges
still to deliver) and every leaf's .grad. Nodes are named as in the HTML player:
the PyTorch class name and the node's id (MulBackward0 n5); an AccumulateGrad
also names its leaf (AccumulateGrad (w) n3).

Press any key to close this help."""

# The step list takes at most this share of the screen's width; the panel gets the rest.
LIST_SHARE = 0.65


def fit_label(trace: Any, nid: str | None, width: int) -> str:
    """:func:`~gradviz.render.terminal.node_label` cut to ``width`` characters, never its id.

    An AccumulateGrad's leaf name is shortened first (``AccumulateGrad (weig…) n3``), then, on
    a very narrow screen, the class name (``LogSoftm… n2``): the id stays whole at the end, so
    a row never names the wrong node. The panel on the right shows every name whole.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     weights = gradviz.ones(2, requires_grad=True)
        ...     (weights * 2).sum().backward()
        >>> leaf = next(n for n in tr.nodes if tr.nodes[n].variable)
        >>> fit_label(tr, leaf, 24)
        'AccumulateGrad (wei…) n1'
    """
    label = node_label(trace, nid)
    if nid is None or len(label) <= width:
        return label
    tail = f" {visible(nid)}"
    n = trace.nodes.get(nid)
    if n is not None and n.kind == "accumulate_grad" and n.variable:
        frame = len(visible(n.name)) + len(" ()") + len(tail)
        if width - frame >= 2:
            return node_label(trace, nid, leaf_width=width - frame)
    head = label[: len(label) - len(tail)]
    return clip(head, max(2, width - len(tail))) + tail


# Step kinds in the list, coloured by kind.
_KIND_STYLE = {"compute_dependencies": "cyan", "enqueue": "green", "execute": "bold yellow",
               "accumulate": "magenta", "leaf_grad": "bold blue", "release_saved": "dim",
               "hook": "cyan", "pack_hook": "#b07cd8", "unpack_hook": "#b07cd8",
               "error": "bold red", "done": "bold green"}


class HelpScreen(ModalScreen[None]):
    """The list of keys; any key closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Static { width: auto; max-width: 90%; padding: 1 2; border: round $accent;
                          background: $surface; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text(HELP), id="help")

    def on_key(self, event: Any) -> None:
        event.stop()
        self.dismiss()


class StepList(DataTable[Any]):
    """The run's steps, one row each; the cursor row is the current step.

    Never focused: every key goes to the app, so the arrows step instead of moving a cursor
    of their own. A click on a row still selects that step.
    """

    can_focus = False

    class Picked(Message):
        """The user clicked the row of step ``row``."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    def on_click(self, event: Click) -> None:
        row = event.style.meta.get("row", -1)  # where DataTable drew the row (-1: the header)
        if isinstance(row, int) and row >= 0:
            self.post_message(self.Picked(row))


class StepsApp(App[int]):
    """Step through the backward runs of a trace with single keys (see the module docstring).

    Args:
        trace: a :class:`~gradviz.trace.Trace` with at least one backward run.
        run: the index of the run shown first (negative counts from the end).
        step: the step shown first.

    After the app ends, ``app.run_index`` and ``app.step`` tell where the user was.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> StepsApp(tr).run()  # doctest: +SKIP
    """

    TITLE = "gradviz steps"
    CSS = """
    Screen { layout: vertical; }
    #top { height: 1; background: $primary; color: $text; padding: 0 1; }
    #main { height: 1fr; }
    #steps { width: auto; height: 100%; max-width: 65%; scrollbar-gutter: stable;
             border-right: solid $primary; }
    #detail-box { width: 1fr; padding: 0 1; }
    #keys { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,l,j,down,space,n", "move(1)", "next", priority=True),
        Binding("left,h,k,up,p,backspace", "move(-1)", "back", priority=True),
        Binding("pagedown", "move(10)", "+10", priority=True),
        Binding("pageup", "move(-10)", "-10", priority=True),
        Binding("shift+down", "scroll_detail(3)", "scroll down", priority=True),
        Binding("shift+up", "scroll_detail(-3)", "scroll up", priority=True),
        Binding("home,g", "first", "first", priority=True),
        Binding("end,G", "last", "last", priority=True),
        Binding("right_square_bracket,tab", "switch_run(1)", "next run", priority=True),
        Binding("left_square_bracket,shift+tab", "switch_run(-1)", "previous run",
                priority=True),
        Binding("question_mark", "help", "help", priority=True),
        Binding("q,escape", "quit", "quit", priority=True),
    ]

    def __init__(self, trace: Any, run: int = -1, step: int = 0) -> None:
        super().__init__()
        self.trace = trace
        n = len(trace.runs)
        self.run_index = (run % n) if n else 0
        self.step = step
        self._replays: dict[int, RunReplay] = {}
        self._label_width = 0
        self._screen_width = 0
        self._mounted = False  # the step list has its columns (a Resize can come before)
        if trace.name:
            self.sub_title = visible(trace.name)

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="top")
        with Horizontal(id="main"):
            yield StepList(id="steps", cursor_type="row", zebra_stripes=False)
            with VerticalScroll(id="detail-box"):
                yield Static(id="detail")
        yield Static(Text("→/← step  Home/End first/last  [ ] or Tab: run  ?: help  q: quit"),
                      id="keys")

    def on_mount(self) -> None:
        self._mounted = True
        self._show_run(self.run_index, self.step)

    # -- what is shown -------------------------------------------------------------------------
    def _replay(self, index: int) -> RunReplay:
        if index not in self._replays:
            self._replays[index] = RunReplay(self.trace.runs[index])
        return self._replays[index]

    def _show_run(self, index: int, step: int = 0) -> None:
        """Fill the step list with run ``index``'s steps and show ``step``."""
        self.run_index = index
        table = self.query_one(StepList)
        table.clear(columns=True)  # columns too: their widths only ever grow
        if not self.trace.runs:
            table.add_columns("#", "event", "node")
            self._set_top("this trace has no backward runs")
            self.query_one("#detail", Static).update(Text("Nothing to step through."))
            return
        r = self.trace.runs[index]
        self._label_width = self._node_column_width(r, self._screen_width or self.size.width)
        rows = [(str(s.index), visible(s.kind), fit_label(self.trace, s.node, self._label_width))
                for s in r.steps]
        # Columns as wide as their widest cell, measured here on plain strings: DataTable would
        # measure every cell of a long run as a renderable (seconds for 10,000 steps).
        for i, name in enumerate(("#", "event", "node")):
            table.add_column(name, width=max([len(name), *(len(row[i]) for row in rows)]))
        table.add_rows((Text(n, style="dim"), Text(k, style=_KIND_STYLE.get(k, "")), Text(label))
                       for n, k, label in rows)
        self._go(step)

    def _node_column_width(self, r: Any, screen_width: int) -> int:
        """How wide a node's name may be in the step list on a screen this wide."""
        steps = r.steps
        # each column: its widest cell + 2 of padding; then the scrollbar (2), the border (1)
        # and one column of slack for rounding the share
        others = (len(str(len(steps) - 1)) + 2 + max((len(visible(s.kind)) for s in steps),
                                                    default=5) + 2 + 2 + 2 + 1 + 1)
        return max(8, int(screen_width * LIST_SHARE) - others)

    def _set_top(self, text: str) -> None:
        self.query_one("#top", Static).update(Text(text, no_wrap=True, overflow="ellipsis"))

    def _go(self, k: int) -> None:
        """Show step ``k`` (clamped) of the current run."""
        r = self.trace.runs[self.run_index]
        # The run label numbers the run as the pictures do ("run 20 of 20"); a second count of
        # the kept runs would number the same run twice, so only their count is said.
        kept, made = len(self.trace.runs), runs_made(self.trace)
        head = run_label(self.trace, r) + (f" · {kept} of {made} runs kept" if kept < made else "")
        if not r.steps:
            self.step = 0
            self._set_top(f"{head} · no steps")
            self.query_one("#detail", Static).update(
                Text(f"{run_name(self.trace, self.run_index)} has no steps."))
            return
        self.step = max(0, min(len(r.steps) - 1, k))
        step = r.steps[self.step]
        self._set_top(f"{head} · step {self.step} of "
                      f"{len(r.steps) - 1} · {visible(step.kind)}")
        self.query_one("#detail", Static).update(
            step_detail(self.trace, self._replay(self.run_index), self.step))
        table = self.query_one(StepList)
        if table.cursor_row != self.step:
            table.move_cursor(row=self.step, animate=False)

    def on_resize(self, event: Resize) -> None:
        """A wider or narrower screen: list the steps again with leaf names that fit."""
        self._screen_width = event.size.width
        if (self._mounted and self.trace.runs and self._node_column_width(
                self.trace.runs[self.run_index], event.size.width) != self._label_width):
            self._show_run(self.run_index, self.step)

    def on_step_list_picked(self, event: StepList.Picked) -> None:
        """A click on a row shows that step."""
        self._go(event.row)

    # -- actions (the keys) --------------------------------------------------------------------
    _OWN_ACTIONS = frozenset({"move", "scroll_detail", "first", "last", "switch_run", "help",
                              "quit"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the help is open, every key goes to it (and closes it), none moves a step."""
        if action in self._OWN_ACTIONS and isinstance(self.screen, HelpScreen):
            return False
        return True

    def action_move(self, delta: int) -> None:
        if self.trace.runs:
            self._go(self.step + delta)

    def action_scroll_detail(self, lines: int) -> None:
        self.query_one("#detail-box", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_first(self) -> None:
        self.action_move(-self.step)

    def action_last(self) -> None:
        if self.trace.runs:
            self._go(len(self.trace.runs[self.run_index].steps) - 1)

    def action_switch_run(self, delta: int) -> None:
        if len(self.trace.runs) > 1:
            self._show_run((self.run_index + delta) % len(self.trace.runs))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        self.exit(self.step)
