"""Shared CLI plumbing: the stderr console and the exit codes every command uses."""

from __future__ import annotations

import os
import re
import sys
from enum import IntEnum
from functools import lru_cache
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from rich.console import Console


class ExitCode(IntEnum):
    """Process exit codes of the ``gradviz`` command."""

    OK = 0
    FAILURE = 1  # the command ran and failed (e.g. the example raised)
    USAGE = 2  # bad arguments; typer/click use this code themselves
    UNAVAILABLE = 3  # something the command needs could not be imported or found
    INTERNAL = 70  # a bug in gradviz itself, reported in one line (EX_SOFTWARE)
    BUSY = 75  # another gradviz command is writing into the same output folder (EX_TEMPFAIL)
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT (128 + 2)
    TERMINATED = 143  # SIGTERM (128 + 15)


@lru_cache(maxsize=1)
def err_console() -> Console:
    """Return the rich console that writes to stderr (rich is imported on first use)."""
    from rich.console import Console

    return Console(stderr=True)


# C0 and C1 control characters and lone surrogates (undecodable bytes of a file name): what must
# not reach a terminal raw. The same rule as gradviz.render.terminal.visible, kept here so that
# reporting an error never imports the engine (which may be what failed to import).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    if c in "\n\t\r":
        return repr(c)[1:-1]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep_newlines: bool = False) -> str:
    r"""``text`` safe for a terminal: control characters and lone surrogates as escapes.

    An escape sequence in a tensor name or a path would otherwise be obeyed by the terminal
    (colours, cursor moves, a changed window title), and a lone surrogate cannot be printed.

    Args:
        text: any string from the user, a script or a trace file.
        keep_newlines: keep line breaks and tabs (for tracebacks).

    Example:
        >>> visible("x\x1b[31m\udcff")
        'x\\x1b[31m\\udcff'
    """
    if keep_newlines:
        return _UNSAFE.sub(lambda m: m.group() if m.group() in "\n\t" else _escape_char(m), text)
    return _UNSAFE.sub(_escape_char, text)


def print_verbatim(text: str, end: str = "\n") -> None:
    """Print a program's own text on stderr line for line: a traceback, what a run printed.

    Control characters are escaped (``visible``) but line breaks kept; no markup, no
    highlighting, and no re-wrapping at the console's width, which would break the user's source
    lines in two. Nothing is printed if stderr is closed (the traced script may close it).

    Example:
        >>> print_verbatim("Traceback (most recent call last):\\n  ...")  # doctest: +SKIP
    """
    if sys.stderr is None or getattr(sys.stderr, "closed", False):
        return
    err_console().print(visible(text, keep_newlines=True), end=end, markup=False,
                        highlight=False, soft_wrap=True)


def fail(message: str, code: ExitCode = ExitCode.FAILURE) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with ``code``.

    Args:
        message: What went wrong, one line, plain text (rich markup is not interpreted).
        code: The exit code to leave with.

    Example:
        >>> fail("no such file: x.py", ExitCode.USAGE)  # doctest: +SKIP
    """
    from rich.text import Text

    if not getattr(sys.stderr, "closed", False):  # the traced script may have closed it
        # soft_wrap: one line however narrow the console (scripts match on it, issue #20).
        err_console().print(Text.assemble(("error: ", "bold red"), visible(message)),
                            soft_wrap=True)
    raise typer.Exit(code=int(code))


def stop_now(message: str, code: int) -> NoReturn:
    """Print ``error: <message>`` on stderr and end the process at once with ``code``.

    NOTE [prompt exit]: for a signal that must be obeyed now (a second Ctrl-C or SIGTERM, one
    during the phases around the script). Python's normal exit frees every object first, and a
    trace of a long loop is millions of them: seconds spent after the user asked to stop. So the
    streams are flushed and the process ends with ``os._exit``, once the caller has left the
    blocks that clean up (the lock file, a half-written temporary file). The operating system
    releases the lock itself.

    Example:
        >>> stop_now("stopped by SIGTERM", ExitCode.TERMINATED)  # doctest: +SKIP
    """
    import signal
    import threading

    from rich.text import Text

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):  # already stopping: one more changes nothing
            signal.signal(sig, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and not getattr(stream, "closed", False):
            try:
                if stream is sys.stderr:
                    err_console().print(Text.assemble(("error: ", "bold red"), visible(message)),
                                        soft_wrap=True)
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: the exit code still says it
                pass
    os._exit(int(code))
