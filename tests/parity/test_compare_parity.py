"""``gradviz compare`` on real PyTorch: the tutorial programs agree with gradviz, and a
difference introduced on purpose is reported precisely (which run, which node, both values)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from _cli import GRADVIZ, cli_env, run, write

from gradviz.trace import load_trace

TUTORIAL = """
    import torch
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)
    Q = 3*a**3 - b**2
    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    print(9*a**2 == a.grad)
    print(-2*b == b.grad)
"""

# PyTorch's polynomial example (tensors and autograd), with weights made from data so that both
# engines start alike, for three steps.
POLYNOMIAL = """
    import math
    import torch
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    a = torch.tensor(0.1, requires_grad=True)
    b = torch.tensor(-0.2, requires_grad=True)
    c = torch.tensor(0.3, requires_grad=True)
    d = torch.tensor(-0.05, requires_grad=True)
    learning_rate = 1e-6
    for t in range(3):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
"""

MLP_STEP = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    with torch.no_grad():  # weights from data: both engines start alike
        for p in model.parameters():
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
    target = torch.tensor([1, 0])
    for _ in range(2):
        loss = F.cross_entropy(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def compare(tmp_path: Path, name: str, code: str) -> tuple[int, str, Path]:
    write(tmp_path / name, code)
    proc = run("compare", "--out", "c", name, cwd=tmp_path, columns=200)
    return proc.returncode, " ".join(proc.stdout.split()), tmp_path / "c" / "compare.html"


@pytest.mark.parametrize(("name", "code", "runs"), [
    ("tutorial.py", TUTORIAL, 1), ("polynomial.py", POLYNOMIAL, 3), ("mlp.py", MLP_STEP, 2)])
def test_the_tutorial_programs_agree(tmp_path: Path, name: str, code: str, runs: int) -> None:
    code_, out, page = compare(tmp_path, name, code)
    assert code_ == 0, out
    assert "torch and gradviz agree: no difference" in out
    assert out.count("values not compared") == 0, out  # inputs from data: values compared
    html = page.read_text(encoding="utf-8")
    assert "No difference." in html and html.count("<h3>run ") == runs
    assert (tmp_path / "c" / "torch" / "steps.html").is_file()
    assert (tmp_path / "c" / "gradviz" / "steps.html").is_file()


def test_random_inputs_compare_the_structure_only(tmp_path: Path) -> None:
    code_, out, _ = compare(tmp_path, "rand.py", """
        import torch
        w = torch.randn(3, requires_grad=True)
        (w * w).sum().backward()
    """)
    # Never "no difference" when a value was not compared: the verdict and exit code say so.
    assert code_ == 5, out
    assert ("torch and gradviz: the structure agrees, values not compared (run 1: inputs "
            "differ:") in out, out
    assert "no difference" not in out


def test_cross_entropy_is_compared_on_its_values(tmp_path: Path) -> None:
    # ignore_index=-100 is saved as PyTorch shows it by both engines' traces: the inputs agree,
    # so the gradients are compared (it was "not compared: _saved_ignore_index differs").
    code_, out, _ = compare(tmp_path, "ce.py", """
        import torch
        import torch.nn.functional as F
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
        F.cross_entropy(x, torch.tensor([2, 0])).backward()
    """)
    assert code_ == 0, out
    assert "torch and gradviz agree: no difference" in out and "not compared" not in out


def test_a_difference_on_purpose_is_reported(tmp_path: Path) -> None:
    code_, out, page = compare(tmp_path, "changed.py", TUTORIAL.replace(
        "Q.backward(", "if '+gradviz' not in torch.__version__:  # real PyTorch only\n"
        "        Q.grad_fn.next_functions[0][0].register_prehook(lambda g: (g[0] * 2,))\n"
        "    Q.backward("))
    assert code_ == 1, out
    assert "torch and gradviz differ" in out
    assert ("run 1: gradient differs at MulBackward0 (step" in out
            and "gradient to next_functions[0]: torch: [6., 6.]; gradviz: [3., 3.]" in out)
    assert "a.grad (via AccumulateGrad#1): torch: [ 72., 162.]; gradviz: [36., 81.]" in out
    assert "run 1: gradient differs at MulBackward0" in page.read_text(encoding="utf-8")


def test_the_same_error_on_both_engines_agrees(tmp_path: Path) -> None:
    code_, out, _ = compare(tmp_path, "inplace.py", """
        import torch
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
    """)
    assert code_ == 0, out
    assert "RuntimeError: one of the variables needed for gradient computation" in out


# Says which process runs it, once it has recorded a backward pass, then trains forever.
ENDLESS = """
    import os
    import torch
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    print("started", os.getpid(), flush=True)
    while True:
        (w * w).sum().backward()
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_compare_stops_its_run_and_frees_the_folder(tmp_path: Path,
                                                                 sig: int) -> None:
    write(tmp_path / "endless.py", ENDLESS)
    proc = subprocess.Popen([str(GRADVIZ), "compare", "--out", "c", "endless.py"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=cli_env(columns=200))
    assert proc.stdout is not None
    bound = threading.Timer(120, proc.kill)  # if "started" never comes
    bound.start()
    try:
        # What the script prints reaches compare's stdout while it runs.
        line = proc.stdout.readline()
        bound.cancel()
        assert line.startswith("started "), (line, proc.poll())
        word, pid = line.split()
        assert word == "started" and int(pid) != proc.pid
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert "Traceback" not in err
    assert f"stopped by {signal.Signals(sig).name} during the torch run" in " ".join(err.split())
    try:
        os.kill(int(pid), 0)
        alive = True
        os.kill(int(pid), signal.SIGKILL)
    except ProcessLookupError:
        alive = False
    assert not alive, "the torch run outlived compare"
    # Its run wrote what it recorded, and let go of the folder: the next compare runs.
    assert load_trace(tmp_path / "c" / "torch" / "trace.json").runs
    code, out, _ = compare(tmp_path, "tutorial.py", TUTORIAL)
    assert code == 0, out


def test_a_reader_that_goes_away_does_not_change_the_verdict(tmp_path: Path) -> None:
    # `gradviz compare s.py | head -1`: compare's stdout breaks after the first line.
    write(tmp_path / "chatty.py", TUTORIAL + "\n    for i in range(20000):\n        print(i)\n")
    proc = subprocess.Popen([str(GRADVIZ), "compare", "--out", "c", "chatty.py"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env(columns=200))
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert first.strip() == "tensor([True, True])"
    assert proc.returncode == 0, (proc.returncode, err)
    assert "Traceback" not in err
    assert "No difference." in (tmp_path / "c" / "compare.html").read_text(encoding="utf-8")


def test_a_script_that_deletes_the_output_folder_is_still_compared(tmp_path: Path) -> None:
    # It removes the whole of OUT each time it runs: the torch run's outputs too, while the
    # gradviz run runs. Each run's folder is made again, and the torch run's written again.
    code_, out, page = compare(tmp_path, "clean.py", TUTORIAL + """
    import shutil
    shutil.rmtree("c", ignore_errors=True)
""")
    assert code_ == 0, out
    assert "torch and gradviz agree: no difference" in out
    assert "No difference." in page.read_text(encoding="utf-8")
    for engine in ("torch", "gradviz"):
        assert sorted(os.listdir(tmp_path / "c" / engine)) == [
            "backward.svg", "forward.svg", "steps.html", "trace.json"]
        assert load_trace(tmp_path / "c" / engine / "trace.json").runs
