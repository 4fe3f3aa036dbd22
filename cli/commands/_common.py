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
    if tr.runs:
        table.add_row("memory", memory_text(tr))
    for i, f in enumerate(files):
        table.add_row("files written" if i == 0 else "", Text(visible(str(f))))
    console.print(table)
    for note in dict.fromkeys([*tr.notes, *notes]):  # each once, in order
        # One line each, as the warnings print (the terminal wraps it; a pipe or grep sees it).
        console.print(Text(f"note: {visible(note)}", style="yellow"), soft_wrap=True)


def size_text(n: int) -> str:
    """Bytes as people read them: ``512 B``, ``4.0 KiB``, ``1.5 MiB``, ``2.0 GiB``.

    Example:
        >>> size_text(512), size_text(4096), size_text(3 * 2**19)
        ('512 B', '4.0 KiB', '1.5 MiB')
    """
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            break
    return f"{n:.1f} {unit}"


def memory_text(tr: Any, run: int = -1) -> str:
    """The summary's memory line for one run (NOTE [memory] in gradviz/trace/replay.py): the
    saved activations it held at its start and end, the most its input buffers held.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.ones(1000, requires_grad=True)
        ...     (x.exp() * 2).sum().backward()
        >>> memory_text(tr)
        'run 1: saved activations 3.9 KiB at its start, 0 B at its end; input buffers up to 3.9 KiB'
    """
    from gradviz.trace.model import run_number
    from gradviz.trace.replay import memory

    r = tr.run(run)
    m = memory(r, tr.nodes, tr.tensors)
    start, end = (m.saved[0], m.saved[-1]) if m.saved else (0, 0)
    return (f"run {run_number(tr, run)}: saved activations {size_text(start)} at its start, "
            f"{size_text(end)} at its end; input buffers up to {size_text(m.peak_buffers)}")


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
