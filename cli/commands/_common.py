"""Pieces shared by the commands that trace and render: option types and the summary."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any


class Values(str, Enum):
    """How much of each tensor's value a trace keeps."""

    small = "small"
    none = "none"
    all = "all"


class Format(str, Enum):
    """Extra drawing formats (SVG is always written)."""

    svg = "svg"
    png = "png"
    pdf = "pdf"
    dot = "dot"


class Detail(str, Enum):
    """How much each picture says (NOTE [detail levels] in gradviz/render/graphviz.py)."""

    auto = "auto"
    bare = "bare"
    values = "values"
    saved = "saved"


def formats_with_svg(formats: list[Format] | None) -> tuple[str, ...]:
    """SVG first (the step player and the README use it), then the extra formats once each."""
    out = ["svg"]
    for f in formats or ():
        if f.value not in out:
            out.append(f.value)
    return tuple(out)


def print_summary(tr: Any, files: list[Path], notes: list[str], title: str,
                  engine: str | None = None) -> None:
    """A short rich report: what was recorded and which files were written, then the notes.

    The notes are the trace's own (``tr.notes``, kept in trace.json: what could not be recorded
    faithfully, an engine order that differed, what ``keep_runs`` dropped, how the script
    ended), then ``notes`` (what the command did: a file left as it was), each text once.

    Every string from the user (title, paths, notes) is made visible (control characters
    escaped, see ``visible``) and given to rich as ``Text``, never parsed as markup, so a
    folder called ``o[/]x`` prints as it is. Nothing is printed if the script closed stdout.
    ``engine`` is the ``engine:`` row (who ran the script, and why), if any.
    """
    import sys

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from .._console import visible

    if sys.stdout is None or getattr(sys.stdout, "closed", False):
        return
    console = Console()
    steps = sum(len(r.steps) for r in tr.runs)
    table = Table(title=Text(visible(title), style="italic"), show_header=False,
                  title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    if engine is not None:
        table.add_row("engine", Text(visible(engine)))
    table.add_row("ops recorded", str(len(tr.ops)))
    table.add_row("tensors", str(len(tr.tensors)))
    table.add_row("backward nodes", str(len(tr.nodes)))
    table.add_row("backward runs", runs_kept_text(tr))
    table.add_row("engine steps", str(steps))
    for i, f in enumerate(files):
        table.add_row("files written" if i == 0 else "", Text(visible(str(f))))
    console.print(table)
    for note in dict.fromkeys([*tr.notes, *notes]):  # each once, in order
        # One line each, as the warnings print (the terminal wraps it; a pipe or grep sees it).
        console.print(Text(f"note: {visible(note)}", style="yellow"), soft_wrap=True)


def runs_kept_text(tr: Any) -> str:
    """The summary's count of backward runs; when some were not kept, which ones were, numbered
    as ``--run`` and every picture number them (NOTE [run numbers] in gradviz/trace/model.py).

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs=3) as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(5):
        ...         (x * 2).sum().backward()
        >>> runs_kept_text(tr)
        '3 (of 5: runs 3–5 kept)'
    """
    from gradviz.trace.model import run_numbers, runs_made

    numbers = run_numbers(tr)
    made = runs_made(tr)
    if len(numbers) == made:
        return str(made)
    # Consecutive numbers read as a range ("runs 3–5"), so a long keep_runs stays one line.
    spans: list[list[int]] = []
    for k in numbers:
        if spans and k == spans[-1][1] + 1:
            spans[-1][1] = k
        else:
            spans.append([k, k])
    parts = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}\u2013{b}"
             for a, b in spans]
    word = "run" if len(numbers) == 1 else "runs"
    return f"{len(numbers)} (of {made}: {word} {', '.join(parts)} kept)"
