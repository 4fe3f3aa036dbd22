"""``gradviz render``: draw a saved trace again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .._console import ExitCode, fail
from ._common import Detail, Format, formats_with_svg, print_summary


def load(path: Path):  # noqa: ANN201 - returns a gradviz Trace
    """Load a trace file, turning every problem into one clear line and exit code 2."""
    from gradviz.trace import TraceFormatError, load_trace

    if not path.exists():
        fail(f"no such trace file: {path}", ExitCode.USAGE)
    if path.is_dir():
        fail(f"{path} is a folder; give a trace.json", ExitCode.USAGE)
    try:
        # Every problem in the file (not UTF-8, not JSON, too deep, NaN, a wrong field, a
        # dangling id) is one TraceFormatError line naming where it is: no traceback.
        return load_trace(path)
    except TraceFormatError as e:
        fail(str(e), ExitCode.USAGE)
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror or e}", ExitCode.USAGE)


def render(
    trace_file: Annotated[Path, typer.Argument(help="A trace.json written by `gradviz trace`.",
                                                show_default=False)],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (default: the trace file's folder).",
        show_default=False)] = None,
    formats: Annotated[list[Format] | None, typer.Option(
        "--format", "-f", help="Also write the drawings in this format (repeatable).")] = None,
    collapse: Annotated[bool, typer.Option(
        help="Collapse large graphs before layout.")] = True,
    detail: Annotated[Detail, typer.Option(
        help="What the pictures show: bare (names), values (data and grad in each box), "
             "saved (saved tensors and attributes); auto: values up to 40 nodes, else bare.")
    ] = Detail.auto,
    run: Annotated[int | None, typer.Option(
        "--run", help="The backward run backward.svg draws: 1 is the first, -1 the last "
             "(default: the last).", show_default=False)] = None,
    all_ops: Annotated[bool, typer.Option(
        "--all-ops", help="Draw every op in forward.svg, model construction and the updates "
        "between backward runs too (default: those are one box per phase).")] = False,
    depth: Annotated[int | None, typer.Option(
        "--depth", min=0, help="Draw modules nested deeper than N as one box each, with the "
        "shapes they took and returned and their parameter count (0: the whole model one "
        "box; 1: one box per child module).", show_default=False)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")
                     ] = False,
) -> None:
    """Re-render a saved trace: forward.svg, backward.svg and steps.html (and more formats).

    The input trace is never written: rendered into its own folder, its trace.json is left as
    it was and only the drawings and the player are (re)written, each atomically.
    """
    from .trace import locked, obey_signals, write

    where = ["before anything was written"]
    with obey_signals(where):
        tr = load(trace_file)
        out_dir = Path(os.path.abspath(out if out is not None else trace_file.parent))
        with locked(out_dir):
            written = write(tr, out_dir, formats_with_svg(formats), collapse, keep=trace_file,
                            detail=detail.value, run=run, all_ops=all_ops, depth=depth)
        where[0] = "after its outputs were written: they are complete"
        if not quiet:
            print_summary(tr, written.files, written.notes, f"gradviz render {trace_file.name}")
