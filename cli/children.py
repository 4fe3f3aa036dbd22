"""Running ``gradviz`` commands as child processes that end with their parent (``gradviz compare``).

NOTE [children]: ``gradviz compare`` runs the user's script twice, each time as a ``gradviz
trace`` child process. What it promises about them:

- Each child runs in a session (and so a process group) of its own, so that the group can be
  signalled as one: the child and whatever the script started (workers, subprocesses). A new
  session rather than only a new group: a background group of the terminal's session that reads
  the terminal would be stopped (SIGTTIN); a process outside it is not.
- Being outside the terminal's group, the children do not get the terminal's Ctrl-C: the parent
  passes SIGINT and SIGTERM on to the whole group, and waits for the child, which stops its
  script and writes what it recorded (NOTE [signals] in runner.py). A second signal is passed on
  too (the child then stops writing at once), and if the child is still there after
  ``GRACE`` seconds, or at a third signal, the group is killed. So a signal never leaves a child
  running (holding its output folder's lock) after the parent has gone.
- The child's stdout is copied to the parent's as it comes, a chunk at a time, and nothing of it
  is kept; of its stderr only the last ``STDERR_KEPT`` bytes are kept (shown if the run fails).
  A script that prints gigabytes costs the parent no memory.
- Outside a child's run, a signal raises :class:`gradviz_cli.runner.Terminated` (SIGTERM) or
  ``KeyboardInterrupt`` (SIGINT) in the parent, as in ``gradviz trace``.

POSIX only (sessions, process groups, ``select`` on pipes), like the rest of compare's handling of
signals.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

from .runner import Terminated

STDERR_KEPT = 64 * 1024  # bytes of a child's stderr kept, the last ones
CHUNK = 64 * 1024
GRACE = 5.0  # seconds a child has to end after a second signal before its group is killed
SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class ChildResult:
    """How a child run ended."""

    code: int  # its exit code (negative: killed by that signal)
    stderr: str  # the last STDERR_KEPT bytes of its stderr, decoded
    stderr_dropped: int  # bytes of stderr before those, not kept
    signal: int | None  # the signal the parent received while the child ran (None: none)


class Supervisor:
    """Holds SIGINT and SIGTERM while inside, and runs children that end with this process.

    Example:
        >>> with Supervisor() as sup:
        ...     r = sup.run([sys.executable, "-c", "print('hi')"], out=None)
        >>> r.code, r.signal
        (0, None)
    """

    def __init__(self) -> None:
        self.received: list[int] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._spawning = False
        self._kill_at: float | None = None
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> Supervisor:
        import threading

        if threading.current_thread() is threading.main_thread():
            self._saved = {sig: signal.getsignal(sig) for sig in SIGNALS}
            for sig in SIGNALS:
                signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._saved.items():
            if handler is not None:
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self._proc is not None:
            # A child runs: it is told (and its group with it); the parent waits for it.
            self._signal_group(signum)
            if len(self.received) == 2:
                self._kill_at = time.monotonic() + GRACE
            elif len(self.received) > 2:
                self._signal_group(signal.SIGKILL)
        elif not self._spawning:  # while spawning, the child is told once it exists
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(signum)

    def _signal_group(self, signum: int) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signum)

    def run(self, cmd: list[str], out: Any, env: dict[str, str] | None = None,
            cwd: str | None = None) -> ChildResult:
        """Run ``cmd`` to its end, copying its stdout to ``out`` (a binary stream, or None).

        Raises what ``subprocess.Popen`` raises if the program cannot be started.
        """
        self._spawning = True
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, cwd=cwd, start_new_session=True)
            self._proc = proc
        finally:
            self._spawning = False
        if self.received:  # arrived while it was being started
            self._signal_group(self.received[-1])
        tail = bytearray()
        dropped = 0
        ended = False
        try:
            with _reading(proc) as sel:
                while True:
                    ended = ended or _has_ended(proc.pid)
                    events = sel.select(timeout=0 if ended else 0.1) if sel.get_map() else []
                    for key, _ in events:
                        chunk = os.read(key.fd, CHUNK)
                        if not chunk:
                            sel.unregister(key.fileobj)
                        elif key.fileobj is proc.stdout:
                            out = _copy(chunk, out)
                        else:
                            tail += chunk
                            if len(tail) > STDERR_KEPT:
                                dropped += len(tail) - STDERR_KEPT
                                del tail[:-STDERR_KEPT]
                    if ended and not events:
                        break  # what it wrote is read (a process it started may hold the pipes)
                    if not sel.get_map() and not ended:
                        time.sleep(0.05)
                    if self._kill_at is not None and time.monotonic() > self._kill_at:
                        self._signal_group(signal.SIGKILL)
                        self._kill_at = None
        finally:
            if not ended:  # an error here: the child must not outlive this process
                self._signal_group(signal.SIGKILL)
            elif self.received:
                # Stopped by a signal: what the script started goes too. Done before the child
                # is reaped, so that its group id cannot be another process's yet.
                self._signal_group(signal.SIGKILL)
            proc.wait()
            self._proc = None
            self._kill_at = None
        stopped = self.received[-1] if self.received else None
        return ChildResult(code=proc.returncode, stderr=tail.decode("utf-8", "replace"),
                           stderr_dropped=dropped, signal=stopped)


@contextlib.contextmanager
def _reading(proc: subprocess.Popen[bytes]) -> Iterator[selectors.BaseSelector]:
    """A selector over the child's stdout and stderr, closed (with the pipes) on the way out."""
    sel = selectors.DefaultSelector()
    try:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                sel.register(stream, selectors.EVENT_READ)
        yield sel
    finally:
        sel.close()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _has_ended(pid: int) -> bool:
    """Whether the child has exited, without reaping it (its pid stays its own)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _copy(chunk: bytes, out: Any) -> Any:
    """Write ``chunk`` to ``out`` and flush; the stream to write to next time (None: none).

    A closed or broken stdout (``| head``) stops the copying, not the run: the script runs the
    same whether or not anyone reads what it prints.
    """
    if out is None:
        return None
    try:
        out.write(chunk)
        out.flush()
    except (OSError, ValueError):
        return None
    return out


def stdout_binary() -> Any:
    """This process's stdout as a binary stream, or None if there is none (closed)."""
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        return None
    with contextlib.suppress(OSError, ValueError):
        stream.flush()
    return getattr(stream, "buffer", None)
