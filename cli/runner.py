"""Run a user's script as ``python SCRIPT ARGS`` would, under the tracer, and write the outputs.

Shared by ``gradviz trace``, ``gradviz demo`` and ``gradviz render``. The script runs in this
process as ``__main__`` with its own ``sys.argv``, its folder first on ``sys.path`` and an
absolute ``__file__``; whatever it raises is caught so that the trace recorded up to that point
is still written. What is guaranteed (atomic files, signals, concurrent runs) is documented in
``docs/guarantees.md``.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import signal
import stat
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

LOCK_NAME = ".gradviz.lock"

FORMATS = ("svg", "png", "pdf", "dot")


@dataclass
class ScriptResult:
    """How the script ended."""

    exit_code: int = 0
    error: BaseException | None = None
    traceback_text: str = ""
    signal: int | None = None  # the signal that stopped the script (SIGINT, SIGTERM)


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread to stop the script the way Ctrl-C does.

    A BaseException, like KeyboardInterrupt, so that the script's ``except Exception`` does not
    swallow it.
    """

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside, SIGINT raises KeyboardInterrupt and SIGTERM raises :class:`Terminated`.

    NOTE [signals]: SIGTERM's default action ends the process at once, so nothing recorded
    would be written. Raising instead unwinds the script like Ctrl-C does; the caller writes the
    trace and exits with 128 + the signal number (130, 143), as a shell reports. A signal while
    the outputs are being written stops the writing too (every file is atomic: those written
    stay whole, the rest are not written), so a second Ctrl-C or a supervisor's SIGTERM is
    obeyed at once. Only the main thread can set handlers; elsewhere this does nothing.

    Example:
        >>> with stop_on_signals():
        ...     pass
    """
    if not _main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def _main_thread() -> bool:
    """Whether this is the main thread (the only one that may set signal handlers)."""
    import threading

    return threading.current_thread() is threading.main_thread()


@dataclass
class Outputs:
    """What was written, in the order it was written."""

    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _exit_code(code: Any) -> int:
    """``sys.exit(x)`` semantics: None is 0, an int is itself, anything else is 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_traceback(exc: BaseException) -> str:
    """The traceback without this runner's own frames."""
    tb = exc.__traceback__
    here = os.path.abspath(__file__)
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == here:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def compile_script(path: Path) -> CodeType:
    """The script's code object, compiled as ``python SCRIPT`` compiles it.

    Raises what ``compile`` raises (``SyntaxError`` and its subclasses, ``ValueError`` on some
    Pythons for a NUL byte): a script that does not compile never runs, so the caller reports
    it before tracing anything (see :func:`syntax_error_text`).

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "ok.py"
        >>> _ = p.write_text("x = 1")
        >>> compile_script(p).co_filename == os.path.abspath(p)
        True
    """
    import io

    with io.open_code(os.path.abspath(path)) as fh:  # bytes: compile() honours the coding cookie
        return compile(fh.read(), os.path.abspath(path), "exec", dont_inherit=True)


def syntax_error_text(exc: BaseException) -> str:
    """A compile error as Python prints it for ``python SCRIPT``: file, line, the code and a
    caret, then ``SyntaxError: message`` (no traceback: nothing ran).

    Example:
        >>> try:
        ...     compile("x = (1 +", "a.py", "exec")
        ... except SyntaxError as e:
        ...     print(syntax_error_text(e).splitlines()[0])
          File "a.py", line 1
    """
    return "".join(traceback.format_exception_only(type(exc), exc))


def run_script(path: Path, args: list[str], argv0: str | None = None,
               code: CodeType | None = None) -> ScriptResult:
    """Execute ``path`` as ``__main__`` with ``args``; never raises what the script raises.

    As ``python SCRIPT`` does, ``__file__`` is absolute (so a script that changes directory can
    still find itself) while ``sys.argv[0]`` is ``argv0``, the path as the user wrote it.
    (``runpy.run_path`` would set both to one string, so the script is compiled and run here.)
    The script's ``sys.stdout``/``sys.stderr`` replacements and working directory end with
    it; a stream it closed stays closed (see :func:`stream_usable`). ``code`` is the script
    already compiled by :func:`compile_script` (compiled here otherwise).
    """
    import builtins
    import types

    script = os.path.abspath(path)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    saved_main = sys.modules.get("__main__")
    saved_streams = sys.stdout, sys.stderr
    saved_cwd = os.getcwd()
    sys.argv = [argv0 if argv0 is not None else str(path), *args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=script, __cached__=None, __builtins__=builtins,
                         __loader__=None, __spec__=None, __package__=None)
    try:
        if code is None:
            code = compile_script(path)
        sys.modules["__main__"] = main  # pickle and friends look the script's names up here
        exec(code, main.__dict__)
        return ScriptResult()
    except SystemExit as e:
        return ScriptResult(exit_code=_exit_code(e.code))
    except KeyboardInterrupt as e:
        return ScriptResult(exit_code=128 + signal.SIGINT, error=e,
                            traceback_text="KeyboardInterrupt\n", signal=signal.SIGINT)
    except Terminated as e:
        return ScriptResult(exit_code=128 + e.signum, error=e, signal=e.signum)
    except BaseException as e:  # noqa: BLE001 - the user's script may raise anything
        return ScriptResult(exit_code=1, error=e, traceback_text=_user_traceback(e))
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        sys.stdout, sys.stderr = saved_streams
        with contextlib.suppress(OSError):  # the script may have changed directory
            os.chdir(saved_cwd)
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


def stream_usable(stream: Any) -> bool:
    """Whether ``stream`` can be written to (the traced script may have closed it)."""
    return stream is not None and not getattr(stream, "closed", False)


class OutputBusy(OSError):
    """Another gradviz command is writing into the same output folder."""

    def __init__(self, folder: Path, holder: str) -> None:
        who = f" (pid {holder})" if holder else ""
        super().__init__(f"another gradviz command{who} is writing to {folder}; wait for it to "
                         "finish or choose another --out")


class NotALockFile(OSError):
    """Something that gradviz did not make stands where the lock file goes: it is left alone."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path} is {what}, not a lock file of gradviz's: it is left as it is; "
                         "remove it or choose another --out")


def _open_lock_file(path: Path) -> int:
    """Open ``path`` for the lock, creating it, or raise :class:`NotALockFile`.

    NOTE [lock file] The folder may come from someone else (an unpacked archive), so nothing at
    the lock's path is trusted: it is created exclusively (``O_EXCL`` never follows a link); an
    existing one is opened without following a link (``O_NOFOLLOW``) and used only if it is a
    regular file of this user's, with no other name (a hard link to ``~/.bashrc`` would be), that
    holds a process id or nothing (what a killed command leaves). Anything else is refused, and
    nothing is created, truncated or written outside the folder.
    """
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        pass
    try:  # O_NONBLOCK: opening a FIFO must not wait for a writer
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotALockFile(path, "a symbolic link") from None
        raise
    st = os.fstat(fd)
    what = None
    if not stat.S_ISREG(st.st_mode):
        what = "not a regular file"
    elif st.st_nlink != 1:
        what = "a file with other names (hard links)"
    elif hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        what = "another user's file"
    elif st.st_size > 20 or not os.read(fd, 21).strip().isdigit() and st.st_size:
        what = "a file that holds something else than a process id"
    if what is not None:
        os.close(fd)
        raise NotALockFile(path, what)
    return fd


@contextlib.contextmanager
def out_dir_lock(out: Path) -> Iterator[None]:
    """Create ``out`` and hold its lock file while inside; raise :class:`OutputBusy` if held.

    NOTE [concurrent runs]: each file is replaced atomically, but two commands writing into one
    folder would still leave it holding some files of each. So a command takes the folder's
    lock (``.gradviz.lock``, an advisory ``flock``, released by the OS even if the process is
    killed) before running anything, and the second command fails at once with exit code 75
    instead of waiting. Creating the lock file also proves the folder is writable. Where
    ``fcntl`` does not exist (Windows) there is no lock; each file is still atomic. What may
    stand at the lock's path is NOTE [lock file]: anything else raises :class:`NotALockFile`.

    Example:
        >>> import tempfile
        >>> with out_dir_lock(Path(tempfile.mkdtemp()) / "out"):
        ...     pass
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # no advisory locks: only the per-file guarantee holds
        os.close(_open_lock_file(path))
        path.unlink()
        yield
        return
    while True:
        try:
            fd = _open_lock_file(path)
        except FileNotFoundError:  # removed by its holder between our two opens: try again
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.lseek(fd, 0, os.SEEK_SET)
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            raise OutputBusy(out, holder) from None
        except BaseException:
            os.close(fd)
            raise
        # The holder before us may have removed the file after we opened it: then our lock is
        # on a file nobody else will open, so start again with the file now at that path.
        try:
            same = os.path.samestat(os.fstat(fd), os.lstat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still holding the lock: see the samestat check above
        os.close(fd)


@contextlib.contextmanager
def settled_heap() -> Iterator[None]:
    """Leave the objects alive now out of the cyclic collector's passes until the block ends.

    NOTE [gc: a settled heap] A traced script runs after the command has imported torch (half
    a million objects) and gradviz. The trace adds long-lived records as it goes, so the
    collector's full passes come more often than in the plain run, and each walks everything
    the imports made, none of which can become garbage: measured on the GPT-2-shaped model,
    0.75-0.88 s of collection traced against 0.45-0.52 s with the imports set aside
    (``gc.freeze``). What the script makes is collected as usual. The block gives the objects
    back to the collector at its end (``gc.unfreeze``), so a process that traces many
    scripts (the tests) keeps nothing that became garbage meanwhile.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def write_outputs(tr: Any, out: Path, formats: tuple[str, ...] = ("svg",),
                  collapse: bool = True, keep: Path | None = None,
                  result: Outputs | None = None, detail: str = "auto",
                  run: int | None = None, all_ops: bool = False,
                  depth: int | None = None) -> Outputs:
    """Write ``trace.json``, the forward and backward drawings, and ``steps.html`` into ``out``.

    Every file is written atomically (NOTE [atomic outputs] in gradviz.trace.io), trace.json
    first. ``keep`` is a file never to overwrite (``gradviz render``'s input): if trace.json
    would be that file, it is left alone. Files are appended to ``result`` as they are written,
    so a caller that is interrupted still knows which ones are complete.

    A trace without backward runs still gets its forward graph and the backward graph that was
    built (the nodes recorded during the forward pass), with a note saying so.

    ``detail`` is the pictures' detail level (``auto``, ``bare``, ``values``, ``saved``);
    ``run`` the backward run backward.svg draws, numbered as its title says (1 = the first,
    -1 = the last, the default). A run that does not exist raises ``ValueError`` (its message
    names the runs there are) after trace.json is written. ``all_ops`` draws every op in
    forward.svg, not only the forward passes (NOTE [phases] in gradviz/trace/phases.py).
    ``depth`` draws the modules nested deeper than it as one box each, in both drawings.
    """
    from gradviz import render
    from gradviz.render.collapse import no_gc
    from gradviz.trace.model import BackwardGraph

    # Writing builds many small objects and no cycles: reference counting frees them, and a
    # collector pass would walk the whole trace again each time (NOTE [gc during backward]).
    with no_gc():
        result = result if result is not None else Outputs()
        trace_path = out / "trace.json"
        if keep is not None and _same_file(trace_path, keep):
            result.notes.append(f"{trace_path.name} is the input trace: left as it was")
        else:
            tr.save(trace_path)
            result.files.append(trace_path)

        max_nodes = None if collapse else 10**9
        index = -1
        if run is not None and (tr.runs or run != -1):
            from gradviz.render.graphviz import run_position

            index = run_position(tr, run)
        forward = render.draw_forward(tr, max_nodes=max_nodes, detail=detail, all_ops=all_ops,
                                      depth=depth)
        if tr.runs:
            backward = render.draw_backward(tr, max_nodes=max_nodes, run=index, detail=detail,
                                            depth=depth)
        else:
            result.notes.append("the script never called backward(): backward.svg shows the graph "
                                "it built, and the step player has no steps to play")
            leaves = {n.variable: tr.tensors[n.variable] for n in tr.nodes.values()
                      if n.variable in tr.tensors}
            backward = render.draw_backward(BackwardGraph(nodes=dict(tr.nodes), tensors=leaves),
                                            max_nodes=max_nodes, detail=detail)
        for stem, dot in (("forward", forward), ("backward", backward)):
            for fmt in formats:
                path = out / f"{stem}.{fmt}"
                render.render(dot, path, fmt)
                result.files.append(path)
        html_path = out / "steps.html"
        tr.to_html(html_path)
        result.files.append(html_path)
        return result


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return os.path.abspath(a) == os.path.abspath(b)
