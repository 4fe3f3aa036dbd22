"""Issue #20, the command line: inputs never touched, paths resolved before the script runs,
terminal-safe output, signals and concurrent runs. The installed `gradviz` command, in real
subprocesses, on scripts and files built in ``tmp_path``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from _cli import GRADVIZ, cli_env, write
from _cli import run as _run

from gradviz.trace import load_trace

ENV = cli_env(columns=200)


def run(*args: str, cwd: Path, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return _run(*args, cwd=cwd, timeout=timeout, columns=200)


SEED = """
    import gradviz as torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
"""

# Prints "started" once it has recorded a backward pass, then loops until stopped.
LOOP = """
    import gradviz as torch
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    print("started", flush=True)
    while True:
        (x * 2).sum().backward()
"""


def _files(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def _outputs_complete(folder: Path) -> None:
    assert _files(folder) == ["backward.svg", "forward.svg", "steps.html", "trace.json"]
    for name in _files(folder):
        assert (folder / name).stat().st_size > 0, name


def test_render_without_out_never_touches_its_input(tmp_path: Path) -> None:
    assert run("trace", "-q", "--out", "o", str(write(tmp_path / "s.py", SEED)),
               cwd=tmp_path).returncode == 0
    # A trace that loads but that the old code could not save again: a lone surrogate (as a
    # JSON escape), as another tool may write it.
    data = json.loads((tmp_path / "o" / "trace.json").read_text())
    data["tensors"][0]["name"] = "x\udcff"
    trace = tmp_path / "o" / "trace.json"
    trace.write_text(json.dumps(data), encoding="utf-8")
    before, mtime = trace.read_bytes(), trace.stat().st_mtime_ns
    proc = run("render", str(trace), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert trace.read_bytes() == before and trace.stat().st_mtime_ns == mtime
    assert "left as it was" in proc.stdout
    _outputs_complete(tmp_path / "o")
    # Into another folder, the copy is written, and it reads back.
    proc = run("render", "-q", str(trace), "--out", "copy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert load_trace(tmp_path / "copy" / "trace.json").tensors["t0"].name == "x\udcff"
    assert trace.read_bytes() == before


def test_a_script_that_changes_directory_keeps_its_trace_and_sees_an_absolute_file(
        tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(proj / "data.txt", "3")
    write(proj / "cd.py", f"""
        import os, sys
        import gradviz as torch
        print("file", __file__, os.path.isabs(__file__), "argv0", sys.argv[0])
        os.chdir(os.path.dirname(__file__))
        n = int(open("data.txt").read())
        os.chdir({str(elsewhere)!r})
        x = torch.ones(n, requires_grad=True)
        (x * 2).sum().backward()
    """)
    proc = run("trace", "-q", "--out", "out", "proj/cd.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"file {proj / 'cd.py'} True argv0 proj/cd.py" in proc.stdout
    _outputs_complete(tmp_path / "out")
    assert not (elsewhere / "out").exists()
    assert load_trace(tmp_path / "out" / "trace.json").tensors["t0"].shape == [3]


def test_escape_sequences_in_names_are_shown_not_obeyed(tmp_path: Path) -> None:
    assert run("trace", "-q", "--out", "o", str(write(tmp_path / "s.py", SEED)),
               cwd=tmp_path).returncode == 0
    trace = tmp_path / "o" / "trace.json"
    data = json.loads(trace.read_text())
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m"
    for node in data["nodes"]:
        node["name"] = node["name"] + evil  # shown in the node and ready-queue columns
    data["tensors"][0]["name"] = "x" + evil
    trace.write_text(json.dumps(data), encoding="utf-8")
    proc = run("steps", str(trace), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for raw in ("\x1b", "\x07", "\x9b"):
        assert raw not in proc.stdout
    assert "\\x1b]0;pwned\\x07" in proc.stdout
    ready_rows = [line for line in proc.stdout.splitlines() if "enqueue" in line]
    assert ready_rows and all("\\x1b" in line for line in ready_rows)


def test_markup_in_an_output_path_does_not_crash_the_summary(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", SEED)
    proc = run("trace", "--out", "o[/]x[bold]", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "o[/]x[bold]" in proc.stdout and "Traceback" not in proc.stderr
    _outputs_complete(tmp_path / "o[" / "]x[bold]")


def test_a_script_that_closes_stdout_still_gets_its_trace(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", SEED + "\n    import sys\n    sys.stdout.close()\n")
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    _outputs_complete(tmp_path / "o")


def _start_loop(tmp_path: Path, out: str) -> subprocess.Popen[str]:
    script = write(tmp_path / "loop.py", LOOP)
    proc = subprocess.Popen([str(GRADVIZ), "trace", "-q", "--out", out, str(script)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the script has recorded a run
    assert line.strip() == "started", (line, proc.poll())
    return proc


def _stop(proc: subprocess.Popen[str], sig: int, tmp_path: Path, out: str) -> float:
    start = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    elapsed = time.monotonic() - start
    assert proc.returncode == 128 + sig, (proc.returncode, proc.stderr and proc.stderr.read())
    _outputs_complete(tmp_path / out)
    tr = load_trace(tmp_path / out / "trace.json")
    assert tr.runs and tr.runs[0].steps[-1].kind == "done"
    return elapsed


def test_sigterm_writes_the_partial_trace_promptly_and_exits_143(tmp_path: Path) -> None:
    proc = _start_loop(tmp_path, "o")
    elapsed = _stop(proc, signal.SIGTERM, tmp_path, "o")
    assert elapsed < 10, elapsed


def test_sigint_writes_the_partial_trace_promptly_and_exits_130(tmp_path: Path) -> None:
    proc = _start_loop(tmp_path, "o")
    elapsed = _stop(proc, signal.SIGINT, tmp_path, "o")
    assert elapsed < 10, elapsed


def test_two_runs_into_one_folder_never_mix(tmp_path: Path) -> None:
    first = _start_loop(tmp_path, "shared")
    # The second command finds the folder locked: it fails at once and writes nothing.
    second = run("trace", "--out", "shared", str(write(tmp_path / "s.py", SEED)), cwd=tmp_path)
    assert second.returncode == 75, (second.stdout, second.stderr)
    assert "another gradviz command" in second.stderr and f"pid {first.pid}" in second.stderr
    assert _files(tmp_path / "shared") == [".gradviz.lock"]
    _stop(first, signal.SIGTERM, tmp_path, "shared")  # no lock file and no temporary left
    assert load_trace(tmp_path / "shared" / "trace.json").name == "loop.py"
    # Once the folder is free, the next command writes there as usual, even over a lock file
    # left by a killed process (the lock is the OS's flock, not the file's existence).
    (tmp_path / "shared" / ".gradviz.lock").write_text("99999")
    again = run("trace", "-q", "--out", "shared", str(tmp_path / "s.py"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    _outputs_complete(tmp_path / "shared")
    assert load_trace(tmp_path / "shared" / "trace.json").name == "s.py"


def _lock_refused(tmp_path: Path, what: str) -> None:
    """`gradviz trace --out d` where d's lock path is not ours: exit 2, d left unchanged."""
    before = sorted(p.name for p in (tmp_path / "d").iterdir())
    proc = run("trace", "--out", "d", str(write(tmp_path / "s.py", SEED)), cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f".gradviz.lock is {what}, not a lock file of gradviz's" in " ".join(
        proc.stderr.split()), proc.stderr
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == before


def test_a_lock_path_that_links_elsewhere_is_never_written_through(tmp_path: Path) -> None:
    # A folder from someone's archive: its lock path is a link to a file of the user's, or to
    # a file that does not exist yet. Neither is opened, truncated or created.
    (tmp_path / "d").mkdir()
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=...\n")
    (tmp_path / "d" / ".gradviz.lock").symlink_to(victim)
    _lock_refused(tmp_path, "a symbolic link")
    assert victim.read_text() == "export PATH=...\n"

    (tmp_path / "d" / ".gradviz.lock").unlink()
    (tmp_path / "d" / ".gradviz.lock").symlink_to(tmp_path / "created")
    _lock_refused(tmp_path, "a symbolic link")
    assert not (tmp_path / "created").exists()


def test_an_output_name_that_links_elsewhere_is_replaced_not_written_through(
        tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=...\n")
    for name in ("trace.json", "backward.svg", "steps.html"):
        (tmp_path / "d" / name).symlink_to(victim)
    proc = run("trace", "-q", "--out", "d", str(write(tmp_path / "s.py", SEED)), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "export PATH=...\n"
    for name in ("trace.json", "backward.svg", "steps.html"):
        assert not (tmp_path / "d" / name).is_symlink()
    assert load_trace(tmp_path / "d" / "trace.json").name == "s.py"


def test_a_lock_path_holding_something_else_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    lock = tmp_path / "d" / ".gradviz.lock"
    victim = tmp_path / "notes.txt"
    victim.write_text("12")  # a hard link: the same file under another name
    os.link(victim, lock)
    _lock_refused(tmp_path, "a file with other names (hard links)")
    assert victim.read_text() == "12"
    lock.unlink()
    lock.write_text("my notes")
    _lock_refused(tmp_path, "a file that holds something else than a process id")
    assert lock.read_text() == "my notes"
    lock.unlink()
    os.mkfifo(lock)
    _lock_refused(tmp_path, "not a regular file")
