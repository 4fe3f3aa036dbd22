"""Issue #33, the command line under stress: `gradviz compare`'s runs end with it, stream what the
script prints and report an internal error as one; a signal at any phase of `gradviz trace`; a
script that deletes its own output folder. The installed `gradviz` command in real
subprocesses, without PyTorch: a package named torch first on PYTHONPATH stands for a real one
that takes long to import (or prints, or leaves a broken trace). The runs of compare on real
PyTorch are in tests/parity/test_compare_parity.py."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from _cli import GRADVIZ, cli_env, write

from gradviz.trace import load_trace

TIMEOUT = 120

TORCH_SCRIPT = """
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
"""


def fake_torch(tmp_path: Path, code: str) -> dict[str, str]:
    """The environment of a run where `import torch` runs ``code`` (a stand-in for torch)."""
    fake = tmp_path / "fake_torch"
    (fake / "torch").mkdir(parents=True, exist_ok=True)
    write(fake / "torch" / "__init__.py", code)
    env = cli_env(columns=200)
    env["PYTHONPATH"] = os.pathsep.join([str(fake), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


# `import torch` writes the importing process's pid to $PID_FILE, then takes forever (a real
# torch takes seconds to import: the first phase of every torch run).
SLOW_TORCH = """
    import os, time
    with open(os.environ["PID_FILE"] + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.replace(os.environ["PID_FILE"] + ".tmp", os.environ["PID_FILE"])
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> int:
    """The pid written to ``path`` once it is there (the run got that far)."""
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never got to import torch"
        time.sleep(0.05)
    return int(path.read_text())


def _start(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([str(GRADVIZ), *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_compare_ends_its_run_too(tmp_path: Path, sig: int) -> None:
    write(tmp_path / "s.py", TORCH_SCRIPT)
    env = fake_torch(tmp_path, SLOW_TORCH)
    env["PID_FILE"] = str(tmp_path / "child.pid")
    proc = _start(["compare", "--out", "c", "s.py"], tmp_path, env)
    child = _wait_for(tmp_path / "child.pid", proc)
    assert child != proc.pid
    proc.send_signal(sig)
    _, err = _finish(proc)
    try:
        deadline = time.monotonic() + TIMEOUT
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the torch run outlived compare"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert "Traceback" not in err
    line = " ".join(err.split())
    assert f"error: stopped by {signal.Signals(sig).name} during the torch run" in line
    assert not (tmp_path / "c" / ".gradviz.lock").exists()


def test_a_second_signal_to_compare_is_obeyed_too(tmp_path: Path) -> None:
    write(tmp_path / "s.py", TORCH_SCRIPT)
    env = fake_torch(tmp_path, SLOW_TORCH)
    env["PID_FILE"] = str(tmp_path / "child.pid")
    proc = _start(["compare", "--out", "c", "s.py"], tmp_path, env)
    child = _wait_for(tmp_path / "child.pid", proc)
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    _, err = _finish(proc)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signal.SIGKILL)
    assert proc.returncode == 143, (proc.returncode, err)
    assert "Traceback" not in err


def test_compare_streams_what_the_script_prints_and_keeps_none_of_it(tmp_path: Path) -> None:
    # The torch run prints 96 MB (here while torch is imported, as a script would while it
    # runs). compare copies it to its stdout as it comes, and its own memory does not grow with
    # it (it used to keep all of it, four times over).
    size = 96 * 2**20
    write(tmp_path / "s.py", TORCH_SCRIPT)
    env = fake_torch(tmp_path, f"""
        import sys
        line = "x" * 1023 + "\\n"
        for _ in range({size // 1024}):
            sys.stdout.write(line)
        sys.stdout.flush()
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    """)
    proc = subprocess.Popen([str(GRADVIZ), "compare", "--out", "c", "s.py"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = [0]

    def sample() -> None:  # compare's peak resident memory (VmHWM), while it runs
        with contextlib.suppress(OSError):
            while proc.poll() is None:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]) * 1024)
                time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stdout is not None and proc.stderr is not None
    received = 0
    try:
        while chunk := proc.stdout.read1(2**20):
            received += len(chunk)
        err = proc.stderr.read().decode()
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    sampler.join(timeout=TIMEOUT)
    assert proc.returncode == 3, err
    assert received == size
    assert 0 < peak[0] < size, peak[0]


def test_an_internal_error_in_compare_is_one_line_and_its_own_exit_code(tmp_path: Path) -> None:
    # The torch run "succeeds" and leaves a trace.json that does not load: compare cannot go
    # on, which is gradviz's fault, not a difference between the engines (exit code 1).
    write(tmp_path / "s.py", TORCH_SCRIPT)
    env = fake_torch(tmp_path, """
        import os, sys
        out = sys.argv[sys.argv.index("--out") + 1]
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "trace.json"), "w") as fh:
            fh.write("{}")
        os._exit(0)
    """)
    proc = subprocess.run([str(GRADVIZ), "compare", "--out", "c", "s.py"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert proc.returncode == 70, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: internal error in gradviz compare ("), \
        proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_torch_is_imported_ends_trace_with_its_code(tmp_path: Path,
                                                                    sig: int) -> None:
    write(tmp_path / "s.py", TORCH_SCRIPT)
    env = fake_torch(tmp_path, SLOW_TORCH)
    env["PID_FILE"] = str(tmp_path / "trace.pid")
    proc = _start(["trace", "--out", "o", "s.py"], tmp_path, env)
    _wait_for(tmp_path / "trace.pid", proc)
    proc.send_signal(sig)
    _, err = _finish(proc)
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert "Traceback" not in err and "Aborted" not in err
    assert f"error: stopped by {signal.Signals(sig).name} before the script ran" in \
        " ".join(err.split())


# Records many backward passes, says so, then waits to be stopped: once stopped, the trace of
# them takes a while to build, and a second signal lands then.
MANY_RUNS = """
    import time
    import gradviz as torch
    x = torch.ones(3, requires_grad=True)
    for _ in range(6000):
        (x * 2 + 1).tanh().sum().backward()
    print("recorded", flush=True)
    while True:
        time.sleep(1)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_second_signal_while_the_trace_is_built_exits_at_once(tmp_path: Path,
                                                                 sig: int) -> None:
    script = write(tmp_path / "many.py", MANY_RUNS)
    proc = _start(["trace", "-q", "--keep-runs", "100000", "--out", "o", str(script)], tmp_path,
                  cli_env(columns=200))
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "recorded"
    proc.send_signal(sig)
    time.sleep(0.3)  # the first one has stopped the script
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    _, err = _finish(proc)
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert "Traceback" not in err
    assert f"error: stopped by {signal.Signals(sig).name}" in err
    assert not (tmp_path / "o" / ".gradviz.lock").exists()
    for name in os.listdir(tmp_path / "o"):
        assert not name.endswith(".tmp"), name


def test_a_script_that_deletes_its_output_folder_still_leaves_its_trace(tmp_path: Path) -> None:
    script = write(tmp_path / "clean.py", """
        import shutil
        import gradviz as torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        shutil.rmtree("out")  # "start from a clean folder"
    """)
    proc = subprocess.run([str(GRADVIZ), "trace", "-q", "--out", "out", str(script)],
                          cwd=tmp_path, capture_output=True, text=True, env=cli_env(200),
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert "removed the output folder" in proc.stderr and "made again" in proc.stderr
    assert sorted(os.listdir(tmp_path / "out")) == [
        "backward.svg", "forward.svg", "steps.html", "trace.json"]
    assert load_trace(tmp_path / "out" / "trace.json").runs
