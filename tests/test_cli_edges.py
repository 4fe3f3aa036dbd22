"""The CLI's edges, run as a user runs them (the installed command in a subprocess): gradviz's
options after the script, a script that does not compile, a script that records nothing (or
uses real PyTorch), `gradviz steps --plain`, and `gradviz.show()` outside Jupyter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _cli import cli_env, run, write

from gradviz.trace import load_trace

SEED = """
    import sys
    import gradviz as torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
    z = (x * w).sum()
    z.backward()
    print("argv", sys.argv[1:])
"""


# -- gradviz's options after the script ------------------------------------------------------
def test_options_after_the_script_are_passed_on_with_a_warning(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    proc = run("trace", "-q", str(script), "--out", "d", "--epochs", "3", "--keep-runs=2",
               "--no-collapse", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # still the script's arguments, as documented ...
    assert "argv ['--out', 'd', '--epochs', '3', '--keep-runs=2', '--no-collapse']" in proc.stdout
    assert (tmp_path / "gradviz-out" / "seed" / "trace.json").is_file()
    assert not (tmp_path / "d").exists()
    # ... and one warning line naming each of gradviz's options, not the script's own --epochs
    warning = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1, proc.stderr
    line = warning[0]
    assert "--out, --keep-runs, --no-collapse come after the script" in line
    assert "--epochs" not in line
    assert "gradviz trace --out d --keep-runs=2 --no-collapse seed.py" in line


def test_short_and_flag_options_after_the_script(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    proc = run("trace", "--out", "o", str(script), "-q", "-f", "png", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "argv ['-q', '-f', 'png']" in proc.stdout
    assert "warning: -q, -f come after the script, so they are passed to seed.py" in proc.stderr
    assert not (tmp_path / "o" / "forward.png").exists()  # -f png went to the script


def test_no_warning_when_the_script_args_are_its_own(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    proc = run("trace", "-q", "--out", "o", str(script), "--epochs", "3", "output", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning:" not in proc.stderr.replace("Fontconfig warning:", "")
    # after "--" the options are the script's on purpose (it receives the "--", as from python)
    proc = run("trace", "-q", "--out", "o", str(script), "--", "--out", "d", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "argv ['--', '--out', 'd']" in proc.stdout
    assert "warning:" not in proc.stderr.replace("Fontconfig warning:", "")


# -- a script that does not compile ----------------------------------------------------------
def test_a_syntax_error_is_reported_as_python_does_and_writes_nothing(tmp_path: Path) -> None:
    script = write(tmp_path / "bad.py", """
        import gradviz as torch
        x = torch.ones(3, requires_grad=True)
        y = (x * 2
        y.sum().backward()
    """)
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 1
    python = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert python.returncode == 1
    # The same lines as Python prints (file, line, code, caret, message), then one line of ours.
    assert proc.stderr.startswith(python.stderr), (proc.stderr, python.stderr)
    assert f'File "{script}", line 4' in proc.stderr
    assert "^" in proc.stderr and "SyntaxError: '(' was never closed" in proc.stderr
    assert ("error: bad.py does not compile, so it never ran: nothing was traced and no file "
            "was written") in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "never called backward" not in proc.stdout + proc.stderr
    assert not (tmp_path / "o").exists()  # no empty pictures, no folder


def test_a_syntax_error_leaves_an_earlier_runs_files_alone(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", SEED)
    assert run("trace", "-q", "--out", "o", str(script), cwd=tmp_path).returncode == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir()}
    script.write_text("def f(:\n    pass\n")
    proc = run("trace", "-q", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 1 and "SyntaxError" in proc.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir()} == before


def test_an_indentation_error_and_a_nul_byte_are_reported_too(tmp_path: Path) -> None:
    write(tmp_path / "indent.py", "if True:\nprint(1)\n")
    proc = run("trace", "--out", "o", "indent.py", cwd=tmp_path)
    assert proc.returncode == 1 and "IndentationError" in proc.stderr
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    proc = run("trace", "--out", "o", "nul.py", cwd=tmp_path)
    assert proc.returncode == 1 and "null bytes" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


# -- a script that records nothing ------------------------------------------------------------
FAKE_TORCH = '''
"""Stands in for PyTorch: the script imports it and never touches gradviz."""
def ones(n):
    return [1.0] * n
'''


def test_torch_reached_through_another_module_gets_a_true_message(tmp_path: Path) -> None:
    # The script does not import torch itself (so it runs on gradviz), a module of the user's
    # does. A module named torch beside the script is what `import torch` finds (the script's
    # folder is first on sys.path), so this runs without PyTorch installed.
    write(tmp_path / "torch.py", FAKE_TORCH)
    write(tmp_path / "helper.py", "import torch\n\ndef total():\n    return sum(torch.ones(3))\n")
    script = write(tmp_path / "uses_torch.py", """
        import helper
        print(helper.total())
    """)
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "3.0" in proc.stdout
    assert ("warning: uses_torch.py used PyTorch (torch) through a module it imports, not "
            "gradviz: nothing was recorded and no file was written. Run it with --engine torch "
            "to trace real PyTorch, or with --engine gradviz to run it on gradviz.") in proc.stderr
    assert "never called backward" not in proc.stdout + proc.stderr
    assert not (tmp_path / "o").exists()


def test_the_nothing_recorded_warning_shows_even_with_quiet(tmp_path: Path) -> None:
    write(tmp_path / "t.py", "import torch\n")
    proc = run("trace", "-q", "--engine", "gradviz", "--out", "o", "t.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "t.py ran no gradviz op (no tensor op, no backward())" in proc.stderr


def test_a_script_without_gradviz_ops_writes_nothing_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()  # a folder the user made is kept (empty)
    write(tmp_path / "plain.py", "print('hello')\n")
    proc = run("trace", "--out", "o", "plain.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning: plain.py ran no gradviz op (no tensor op, no backward()): nothing was " \
           "recorded and no file was written." in proc.stderr
    assert "PyTorch" not in proc.stderr
    assert list((tmp_path / "o").iterdir()) == []


def test_a_script_failing_before_any_op_says_so(tmp_path: Path) -> None:
    write(tmp_path / "early.py", "import gradviz\nraise ValueError('bad config')\n")
    proc = run("trace", "--out", "o", "early.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "ValueError: bad config" in proc.stderr  # the traceback, as before
    assert "early.py raised ValueError before any gradviz op ran: nothing was recorded" \
        in proc.stderr
    assert not (tmp_path / "o").exists()


def test_a_failing_script_that_ran_ops_still_leaves_its_trace(tmp_path: Path) -> None:
    write(tmp_path / "late.py", """
        import gradviz as torch
        x = torch.ones(2, requires_grad=True)
        y = (x * 2).sum()
        raise RuntimeError('after the forward pass')
    """)
    proc = run("trace", "--out", "o", "late.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "warning:" not in proc.stderr.replace("Fontconfig warning:", "")
    assert load_trace(tmp_path / "o" / "trace.json").ops


# -- gradviz steps --plain ---------------------------------------------------------------------
def test_steps_plain_prints_the_table_with_player_names(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    assert run("trace", "-q", "--out", "o", str(script), cwd=tmp_path).returncode == 0
    tr = load_trace(tmp_path / "o" / "trace.json")
    proc = run("steps", "--plain", str(tmp_path / "o" / "trace.json"), cwd=tmp_path,
               columns=250)
    assert proc.returncode == 0, proc.stderr
    leaf = {tr.tensors[n.variable].name: n.id for n in tr.nodes.values() if n.variable}
    assert f"AccumulateGrad (x) {leaf['x']}" in proc.stdout
    assert f"AccumulateGrad (w) {leaf['w']}" in proc.stdout
    assert "x.grad = (3,) [0.5, 1, 1.5]" in proc.stdout
    assert len(proc.stdout.splitlines()) > len(tr.run().steps)  # one table, every step


def test_steps_piped_without_columns_is_wide_enough_for_names(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    assert run("trace", "-q", "--out", "o", str(script), cwd=tmp_path).returncode == 0
    env = {k: v for k, v in cli_env().items() if k != "COLUMNS"}
    proc = subprocess.run([str(Path(sys.executable).with_name("gradviz")), "steps",
                           str(tmp_path / "o" / "trace.json")], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # every node name on one line: nothing folded into "AccumulateGr" / "ad (x)"
    assert "AccumulateGr\n" not in proc.stdout and "MulBackwar" not in proc.stdout.replace(
        "MulBackward0", "")


# -- gradviz.show() outside Jupyter ------------------------------------------------------------
SHOW = """
    import gradviz as torch
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
    p = torch.show(tr)
    print("returned", type(p).__name__)
    d = torch.show((x * 3).sum())
    import graphviz
    print("returned a Digraph", isinstance(d, graphviz.Digraph))
"""


def _browser(tmp_path: Path) -> Path:
    """A stand-in browser (a $BROWSER command) that notes each address it is asked to open."""
    log = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\n')
    browser.chmod(0o755)
    return browser


def test_show_outside_jupyter_opens_the_player_in_the_browser(tmp_path: Path) -> None:
    script = write(tmp_path / "show.py", SHOW)
    browser = _browser(tmp_path)
    env = {**cli_env(), "BROWSER": str(browser), "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "returned Player" in proc.stdout and "returned a Digraph True" in proc.stdout
    opened = (tmp_path / "opened.txt").read_text().split()
    assert len(opened) == 2
    player, drawing = (Path(u.removeprefix("file://")) for u in opened)
    assert player.name == "steps.html" and drawing.name == "backward.svg"
    assert 'class="gv-player"' in player.read_text(encoding="utf-8")
    assert "MulBackward0" in drawing.read_text(encoding="utf-8")
    assert f"gradviz.show: opened {player} in your browser" in proc.stderr
    assert player.parent.parent == tmp_path  # a new temporary folder each time


def test_show_without_a_browser_prints_where_the_file_is(tmp_path: Path) -> None:
    script = write(tmp_path / "show.py", SHOW)
    failing = tmp_path / "nobrowser.sh"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o755)
    env = {**cli_env(), "BROWSER": str(failing), "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("gradviz.show:")]
    assert len(lines) == 2
    assert all("; open it in a browser" in line for line in lines)
    path = Path(lines[0].split("wrote ", 1)[1].split(";", 1)[0])
    assert path.is_file() and path.name == "steps.html"


def test_show_open_browser_false_only_writes(tmp_path: Path, monkeypatch, capsys) -> None:
    import webbrowser

    import gradviz as torch

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    x = torch.ones(2, requires_grad=True)
    d = torch.show((x * 2).sum(), open_browser=False)
    assert "<svg" in d._repr_svg_()
    assert opened == []
    err = capsys.readouterr().err
    assert err.startswith(f"gradviz.show: wrote {tmp_path}")
    assert os.path.isfile(err.split("wrote ", 1)[1].split(";", 1)[0])


def test_open_opens_the_player_only_when_one_was_written(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    env = {**cli_env(), "BROWSER": str(_browser(tmp_path))}
    gradviz = str(Path(sys.executable).with_name("gradviz"))
    proc = subprocess.run([gradviz, "trace", "-q", "--open", "--out", "o", str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "opened.txt").read_text().split() == [
        (tmp_path / "o" / "steps.html").as_uri()]
    write(tmp_path / "plain.py", "print('no gradviz here')\n")
    proc = subprocess.run([gradviz, "trace", "-q", "--open", "--out", "o2", "plain.py"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "opened.txt").read_text().split()) == 1  # nothing more opened
