"""``gradviz trace``: run a script under the tracer and write its graphs and step player."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .._console import ExitCode, err_console, fail, print_verbatim, stop_now, visible
from ..engines import Engine
from ._common import Detail, Format, Values, formats_with_svg, print_summary

if TYPE_CHECKING:
    from ..runner import Outputs

CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True}


def _resolve_script(script: str | None, example: str | None) -> Path:
    if example is not None:
        if script is not None:
            fail("give either SCRIPT or --example, not both", ExitCode.USAGE)
        from .examples import example_path

        path = example_path(example)
        if path is None:
            from .examples import example_names

            fail(f"no bundled example named {example!r}; choose one of: "
                 f"{', '.join(example_names())}", ExitCode.USAGE)
        return path
    if script is None:
        fail("missing SCRIPT (or --example NAME); see `gradviz trace --help`", ExitCode.USAGE)
    path = Path(script)
    if not path.exists():
        fail(f"no such script: {script}", ExitCode.USAGE)
    if path.is_dir():
        fail(f"{script} is a folder; give a Python script", ExitCode.USAGE)
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        fail(f"cannot read {script}: {e.strerror}", ExitCode.USAGE)
    return path


def trace(
    ctx: typer.Context,
    script: Annotated[str | None, typer.Argument(
        help="The Python script to run, as `python SCRIPT ARGS...` would.", show_default=False)
    ] = None,
    args: Annotated[list[str] | None, typer.Argument(
        help="Arguments for the script (everything after SCRIPT).", show_default=False)
    ] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (default: `gradviz-out/<script name>/`).",
        show_default=False)] = None,
    formats: Annotated[list[Format] | None, typer.Option(
        "--format", "-f", help="Also write the drawings in this format (repeatable).")] = None,
    values: Annotated[Values, typer.Option(
        help="Tensor values to keep: small (full up to 64 elements), none, all.")
    ] = Values.small,
    keep_runs: Annotated[int | None, typer.Option(
        "--keep-runs", min=1, help="Keep only the last N backward runs. Without it a training "
        "loop keeps its last iteration (identical ones folded) and lists every run.")
    ] = None,
    collapse: Annotated[bool, typer.Option(
        help="Collapse large graphs (module scopes, repeated blocks) before layout.")] = True,
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
    steps: Annotated[bool, typer.Option("--steps", help="Print the engine's step table.")
                     ] = False,
    open_player: Annotated[bool, typer.Option("--open", help="Open the step player in a browser.")
                           ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")
                     ] = False,
    example: Annotated[str | None, typer.Option(
        "--example", help="Trace a bundled example instead of SCRIPT (see `gradviz examples`).")
    ] = None,
    engine: Annotated[Engine, typer.Option(
        "--engine", help="Who runs the script: auto (real PyTorch if the script imports torch, "
        "else gradviz), torch, or gradviz (`import torch` then runs gradviz, for this run).")
    ] = Engine.auto,
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Call manual_seed(SEED) of the engine before the script runs.")
    ] = None,
) -> None:
    """Run SCRIPT under the tracer; write forward.svg, backward.svg, steps.html and trace.json.

    gradviz's options come before SCRIPT; everything after SCRIPT is passed to the script, as
    with `python -m cProfile` (a warning names any of gradviz's options found there). If the
    script fails, the trace up to the failure is still written, its traceback is shown, and the
    exit code is 1; `sys.exit(n)` in the script exits with n. A script that does not compile, or
    that runs no gradviz op, writes no file and says why.

    A script that imports torch is traced on real PyTorch (`--engine auto`, the default; needs
    `pip install gradviz[torch]`); `--engine gradviz` runs the same unmodified script on gradviz.
    The summary says which engine ran and why.
    """
    path = _resolve_script(script, example)
    warn_options_after_script(ctx, path.name, list(args or []))
    out_dir = out if out is not None else Path("gradviz-out") / path.stem
    # Resolved now: the script may change the working directory (NOTE [paths] in run_and_write).
    out_dir = Path(os.path.abspath(out_dir))
    written: list[Path] = []
    code = run_and_write(path, list(args or []), out_dir, formats_with_svg(formats),
                         values.value, keep_runs, collapse, steps, quiet,
                         argv0=script if script is not None else str(path), written=written,
                         detail=detail.value, run=run, engine=engine, seed=seed,
                         all_ops=all_ops, depth=depth)
    player = out_dir / "steps.html"
    if open_player and player in written:
        import webbrowser

        webbrowser.open(player.as_uri())
    if code:
        raise typer.Exit(code=code)


def warn_options_after_script(ctx: typer.Context, script: str, args: list[str]) -> None:
    """Warn on stderr about each of gradviz's own options among the script's arguments.

    Everything after SCRIPT belongs to the script (as with ``python -m cProfile``), so
    ``gradviz trace a.py --out d`` passes ``--out d`` to ``a.py`` and gradviz writes to its
    default folder: easy to miss. The options are still passed to the script (it may take an
    ``--out`` of its own); the warning says where to put them for gradviz. The option names are
    read from the command itself (``ctx``), so an option added to ``trace`` is covered too.
    """
    takes_value: dict[str, bool] = {}
    for param in ctx.command.params:
        if param.param_type_name == "option":
            flag = bool(getattr(param, "is_flag", False) or getattr(param, "count", False))
            for opt in (*param.opts, *param.secondary_opts):
                takes_value[opt] = not flag
    found: list[str] = []  # as the user typed them, with their value
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # what follows is the script's on purpose (it gets the "--" too)
            break
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if name in takes_value:
            if takes_value[name] and "=" not in arg and i + 1 < len(args):
                found.append(f"{arg} {args[i + 1]}")
                i += 1
            else:
                found.append(arg)
        i += 1
    if not found or getattr(sys.stderr, "closed", False):
        return
    from rich.text import Text

    moved = " ".join(found)
    names = ", ".join(f.split(" ", 1)[0].split("=", 1)[0] for f in found)
    one = len(found) == 1
    err_console().print(Text.assemble(
        ("warning: ", "bold yellow"),
        visible(f"{names} {'comes' if one else 'come'} after the script, so "
                f"{'it is' if one else 'they are'} passed to {script} and not used by gradviz. "
                f"gradviz's options go before the script: gradviz trace {moved} {script} ...")),
        soft_wrap=True)


def run_and_write(path: Path, args: list[str], out_dir: Path, formats: tuple[str, ...],
                  values: str, keep_runs: int | None, collapse: bool, show_steps: bool,
                  quiet: bool, title: str | None = None, argv0: str | None = None,
                  written: list[Path] | None = None, detail: str = "auto",
                  run: int | None = None, engine: Engine = Engine.auto,
                  seed: int | None = None, all_ops: bool = False,
                  depth: int | None = None) -> int:
    """Trace ``path``, write the outputs, print the summary; return the script's exit code.

    NOTE [paths]: the script runs in this process and may ``os.chdir``, so every path is made
    absolute before it starts: the output folder, the script (its ``__file__``, as ``python
    script.py`` gives it). ``argv0`` is ``sys.argv[0]`` as the user wrote it.

    The output folder is locked for the whole run (NOTE [concurrent runs] in runner.py), and
    SIGINT/SIGTERM stop the script, write what was recorded and exit 130/143 (NOTE [signals]);
    at any other phase they end the command at once (NOTE [signals at any phase]).
    The files written are appended to ``written``.

    NOTE [nothing to draw]: a script that does not compile never runs: its SyntaxError is
    printed as Python prints it, nothing is written (not even the output folder) and the exit
    code is 1. A script that ran but recorded nothing (no gradviz op: a plain script, or one
    that used real PyTorch) gets no empty pictures either, and a warning that says which.

    NOTE [engines]: ``engine`` picks who runs the script (cli/engines.py): real PyTorch,
    recorded by the torch source (cli/torch_source.py), or gradviz, with ``import torch``
    answered by gradviz when the script imports torch. ``seed`` is given to that engine's
    ``manual_seed`` first, so two runs of one script start alike (``gradviz compare``).
    """
    where = ["before the script ran: nothing was recorded or written"]
    with obey_signals(where):
        return _run_and_write(path, args, out_dir, formats, values, keep_runs, collapse,
                              show_steps, quiet, title, argv0, written, detail, run, engine,
                              seed, where, all_ops, depth)
    raise AssertionError("unreachable")  # obey_signals ends the process or re-raises


def _run_and_write(path: Path, args: list[str], out_dir: Path, formats: tuple[str, ...],
                   values: str, keep_runs: int | None, collapse: bool, show_steps: bool,
                   quiet: bool, title: str | None, argv0: str | None,
                   written: list[Path] | None, detail: str, run: int | None, engine: Engine,
                   seed: int | None, where: list[str], all_ops: bool = False,
                   depth: int | None = None) -> int:
    """:func:`run_and_write`'s work; ``where`` is told what a signal would leave behind."""
    from .. import runner

    out_dir = Path(os.path.abspath(out_dir))
    path = Path(os.path.abspath(path))
    name = title or path.name
    try:
        code = runner.compile_script(path)
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte, before Python 3.12
        print_verbatim(runner.syntax_error_text(e), end="")
        fail(f"{path.name} does not compile, so it never ran: nothing was traced and no file "
             "was written", ExitCode.FAILURE)
    from .. import engines

    chosen, why = engines.choose(engine, path)
    if chosen == "torch":
        try:
            engines.import_real_torch()
        except ImportError as e:
            fail(str(e), ExitCode.UNAVAILABLE)
    existed = out_dir.exists()
    with contextlib.ExitStack() as held:
        held.enter_context(locked(out_dir))
        held.enter_context(runner.settled_heap())
        folder = _identity(out_dir)
        where[0] = "before its outputs were written: no file was written"
        torch_before = "torch" in sys.modules
        # --run N asks for run N: the default long-run policy must not fold it away.
        keep_run = run - 1 if run is not None and run > 0 and keep_runs is None else None
        with recording(chosen, path, values, keep_runs, name, seed, keep_run) as tr:
            result = runner.run_script(path, args, argv0=argv0, code=code)
        if result.traceback_text:
            print_verbatim(result.traceback_text, end="")
        recorded = bool(tr.ops or tr.nodes or tr.runs)
        if recorded and result.error is not None and result.signal is None:
            # Kept in trace.json: how the script ended is part of what it did (gradviz compare
            # compares the two engines' errors from here).
            from gradviz.trace.model import clip_text

            tr.notes.append(clip_text(f"{SCRIPT_RAISED}{error_text(result.error)}"))
        remade = recorded and _identity(out_dir) != folder
        if remade:
            # NOTE [output folder removed]: the script deleted its own --out folder (or put
            # something else there). The trace is not lost: the folder is made again, locked
            # again (the first lock is on a file that no longer has a name), and written to.
            held.enter_context(locked(out_dir))
            _warn(f"{name} removed the output folder {out_dir} while it ran: the folder was "
                  "made again and the outputs are written there")
        outputs = (write(tr, out_dir, formats, collapse, detail=detail, run=run,
                         all_ops=all_ops, depth=depth) if recorded
                   else runner.Outputs())
        if remade:
            outputs.notes.append(f"the script removed {out_dir}; it was made again for these "
                                 "files")
    where[0] = "after its outputs were written: they are complete"
    if written is not None:
        written.extend(outputs.files)
    if not recorded:
        if not existed:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # made for the lock, left empty: leave no trace of it
        used_torch = chosen == "gradviz" and "torch" in sys.modules and not torch_before
        _warn_nothing_recorded(path.name, used_torch, result, chosen)
    elif result.signal is not None:
        outputs.notes.append(f"stopped by {signal.Signals(result.signal).name}; the trace up "
                             "to that point was written")
    elif result.error is not None:  # the trace's own note names the error (printed with it)
        outputs.notes.append("the trace up to that point was written")
    if runner.stream_usable(sys.stdout):
        if show_steps and tr.runs:
            from gradviz.render import print_steps

            for i in range(len(tr.runs)):
                print_steps(tr, run=i)
        if not quiet:
            print_summary(tr, outputs.files, outputs.notes, f"gradviz trace {name}",
                          engine=engines.engine_line(chosen, why))
    return result.exit_code


SCRIPT_RAISED = "the script raised "


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception, as the last line of its traceback shows it.

    Example:
        >>> error_text(ValueError("bad"))
        'ValueError: bad'
    """
    import traceback

    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


@contextlib.contextmanager
def recording(engine: str, path: Path, values: str, keep_runs: int | None, name: str,
              seed: int | None = None, keep_run: int | None = None) -> Iterator[Any]:
    """Record what runs inside on ``engine`` (``"torch"`` or ``"gradviz"``); yield the trace.

    On gradviz, a script that imports torch gets gradviz for ``import torch`` (NOTE [torch on
    gradviz] in cli/engines.py). ``seed`` goes to the engine's ``manual_seed`` first;
    ``keep_run`` is the run the default long-run policy must keep (``gradviz.trace``).
    """
    from .. import engines

    with contextlib.ExitStack() as stack:
        if engine == "torch":
            from ..torch_source import torch_recording

            torch = engines.import_real_torch()
            if seed is not None:
                torch.manual_seed(seed)
            tr = stack.enter_context(torch_recording(values=values, keep_runs=keep_runs,
                                                     name=name, keep_run=keep_run))
        else:
            import gradviz

            # The trace first, the mapping second: the trace must not take gradviz standing in
            # for torch as real PyTorch to record, and the mapping is gone when it closes.
            tr = stack.enter_context(gradviz.trace(values=values, keep_runs=keep_runs,
                                                   name=name, keep_run=keep_run,
                                                   torch=False))
            if engines.script_imports_torch(path):
                stack.enter_context(engines.torch_as_gradviz())
            if seed is not None:
                gradviz.manual_seed(seed)
        yield tr


def _warn_nothing_recorded(script: str, used_torch: bool, result: Any,
                           engine: str = "gradviz") -> None:
    """Say, on stderr, why a run wrote no file: it recorded nothing, and what was used instead.

    On stderr and even with ``--quiet``: an exit code of 0 with no file would otherwise look
    like success.
    """
    from .. import runner

    if not runner.stream_usable(sys.stderr):
        return
    op = "torch op" if engine == "torch" else "gradviz op"
    if used_torch:
        # Detected after the run: torch was imported (by a module the script imports: the
        # script itself does not, or it would have run on torch) and no gradviz op ran.
        text = (f"{script} used PyTorch (torch) through a module it imports, not gradviz: "
                "nothing was recorded and no file was written. Run it with --engine torch to "
                "trace real PyTorch, or with --engine gradviz to run it on gradviz.")
    elif result.signal is not None:
        text = (f"{script} was stopped by {signal.Signals(result.signal).name} before any "
                f"{op} ran: nothing was recorded and no file was written.")
    elif result.error is not None:
        text = (f"{script} raised {type(result.error).__name__} before any {op} ran: "
                "nothing was recorded and no file was written.")
    else:
        text = (f"{script} ran no {op} (no tensor op, no backward()): nothing was "
                "recorded and no file was written.")
    from rich.text import Text

    err_console().print(Text.assemble(("warning: ", "bold yellow"), visible(text)),
                        soft_wrap=True)


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock, or fail: busy (75) or not writable (2)."""
    from .. import runner

    stack = contextlib.ExitStack()
    try:
        stack.enter_context(runner.out_dir_lock(out_dir))
    except runner.OutputBusy as e:
        fail(str(e), ExitCode.BUSY)
    except OSError as e:
        fail(f"cannot write to the output folder {out_dir}: {e.strerror or e}", ExitCode.USAGE)
    with stack:
        yield


def write(tr: Any, out_dir: Path, formats: tuple[str, ...], collapse: bool,
          keep: Path | None = None, detail: str = "auto", run: int | None = None,
          all_ops: bool = False, depth: int | None = None) -> Outputs:
    """runner.write_outputs, with every failure turned into one line and an exit code."""
    from .. import runner

    written = runner.Outputs()
    try:
        return runner.write_outputs(tr, out_dir, formats, collapse, keep=keep, result=written,
                                    detail=detail, run=run, all_ops=all_ops, depth=depth)
    except ValueError as e:  # --run names a run the trace does not hold
        done = ", ".join(f.name for f in written.files)
        fail(f"--run {run}: {e}" + (f" (written: {done})" if done else ""), ExitCode.USAGE)
    except OSError as e:
        fail(f"cannot write to the output folder {out_dir}: {e.strerror or e}", ExitCode.USAGE)
    except (KeyboardInterrupt, runner.Terminated) as e:
        signum = e.signum if isinstance(e, runner.Terminated) else signal.SIGINT
        done = ", ".join(f.name for f in written.files) or "none"
        # Raised, not exited here: the lock is let go on the way out (see obey_signals).
        raise Stopped(signum, f"stopped by {signal.Signals(signum).name} while writing "
                      f"{out_dir}; complete files: {done} (no file is left half-written)"
                      ) from None
    except MemoryError:
        fail(f"out of memory while writing {out_dir}; files written before that are complete, "
             "none is half-written", ExitCode.FAILURE)


class Stopped(BaseException):
    """A signal stopped the command; the message says what it left behind."""

    def __init__(self, signum: int, message: str) -> None:
        super().__init__(message)
        self.signum = signum


@contextlib.contextmanager
def obey_signals(where: list[str]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM end the command: one ``error:`` line, exit 130 or 143.

    NOTE [signals at any phase]: the script itself handles the first signal (it is stopped and
    what it recorded is written: NOTE [signals] in runner.py). Any signal outside it (while
    torch is imported, while the recorded model is built, a second Ctrl-C while writing, while
    the summary prints) ends the command here, once the blocks it was in have cleaned up (the
    lock file, a temporary file), and at once (NOTE [prompt exit]): never a traceback. ``where``
    is kept up to date by the caller: ``where[-1]`` is what such a signal leaves behind.

    Example:
        >>> with obey_signals(["before anything ran"]):
        ...     pass
    """
    from .. import runner

    with runner.stop_on_signals():
        try:
            yield
        except Stopped as e:
            stop_now(str(e), 128 + e.signum)
        except (KeyboardInterrupt, runner.Terminated) as e:
            signum = e.signum if isinstance(e, runner.Terminated) else signal.SIGINT
            stop_now(f"stopped by {signal.Signals(signum).name} {where[-1]}", 128 + signum)


def _identity(folder: Path) -> tuple[int, int] | None:
    """Which folder stands at ``folder`` (device, inode), or None if none does."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _warn(text: str) -> None:
    """A ``warning:`` line on stderr, even with --quiet (nothing if the script closed it)."""
    from rich.text import Text

    if getattr(sys.stderr, "closed", False) or sys.stderr is None:
        return
    err_console().print(Text.assemble(("warning: ", "bold yellow"), visible(text)),
                        soft_wrap=True)
