"""`gradviz trace`, `render`, `steps`, `examples` and `demo`, run as a user runs them: the
installed command in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import run, write

from gradviz.trace import load_trace

SEED = """
    import gradviz as torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
    z = x ** 2 + y ** 3
    z.backward(torch.ones_like(x))
    print("grad", x.grad.tolist())
"""


def _assert_outputs(out: Path) -> None:
    for name in ("forward.svg", "backward.svg", "steps.html", "trace.json"):
        assert (out / name).is_file(), name
        assert (out / name).stat().st_size > 0, name
    assert (out / "backward.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_trace_writes_every_file_and_the_trace_reloads(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "grad [2.0, 4.0, 6.0]" in proc.stdout  # the script's own output is untouched
    out = tmp_path / "o"
    _assert_outputs(out)
    tr = load_trace(out / "trace.json")
    assert [op.name for op in tr.ops] == ["pow", "pow", "add"]
    assert len(tr.runs) == 1
    assert "ops recorded" in proc.stdout and "steps.html" in proc.stdout
    assert "AddBackward0" in (out / "backward.svg").read_text()


def test_default_output_folder_is_named_after_the_script(tmp_path: Path) -> None:
    write(tmp_path / "my_model.py", SEED)
    proc = run("trace", "--quiet", "my_model.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _assert_outputs(tmp_path / "gradviz-out" / "my_model")
    assert "ops recorded" not in proc.stdout


def test_extra_formats(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    proc = run("trace", "-q", "--out", "o", "--format", "png", "--format", "dot", "--format",
               "pdf", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "o"
    assert (out / "backward.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "forward.pdf").read_bytes().startswith(b"%PDF")
    assert "digraph" in (out / "backward.dot").read_text()


def test_failing_script_still_writes_the_trace_and_exits_1(tmp_path: Path) -> None:
    script = write(tmp_path / "fails.py", """
        import gradviz as torch
        a = torch.rand(3, requires_grad=True)
        b = a * 1
        c = b * b
        b.mul_(2)
        c.sum().backward()
    """)
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr
    assert "modified by an inplace operation" in proc.stderr
    assert 'fails.py", line 7' in proc.stderr
    assert "runpy" not in proc.stderr  # the runner's own frames are hidden
    _assert_outputs(tmp_path / "o")
    tr = load_trace(tmp_path / "o" / "trace.json")
    assert tr.runs[-1].error["type"] == "RuntimeError"


def test_a_traceback_keeps_the_scripts_lines_whole_on_a_narrow_terminal(tmp_path: Path) -> None:
    """The script's source lines and its error message are printed as Python prints them,
    never re-wrapped at the terminal's width (a wrapped source line reads as two lines)."""
    long_line = ("total = torch.ones(2, requires_grad=True).sum() + torch.ones(3).sum() * "
                 "torch.tensor(2.0); total.backward(); raise ValueError('a message longer than "
                 "this terminal is wide, on one line')")
    write(tmp_path / "long.py", "import gradviz as torch\n" + long_line + "\n")
    proc = run("trace", "--out", "o", "long.py", cwd=tmp_path, columns=60)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert "    " + long_line in lines, proc.stderr
    assert ("ValueError: a message longer than this terminal is wide, on one line"
            in lines), proc.stderr

    write(tmp_path / "bad.py", "x = [" + ", ".join(str(i) for i in range(40)) + "\n")
    proc = run("trace", "--out", "o", "bad.py", cwd=tmp_path, columns=60)
    assert proc.returncode == 1
    assert any(line.strip().startswith("x = [0, 1, 2") and line.rstrip().endswith("38, 39")
               for line in proc.stderr.splitlines()), proc.stderr


def test_sys_exit_is_honoured(tmp_path: Path) -> None:
    script = write(tmp_path / "exits.py", """
        import sys
        import gradviz as torch
        x = torch.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        sys.exit(3)
    """)
    proc = run("trace", "-q", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 3
    _assert_outputs(tmp_path / "o")


def test_script_reads_its_own_arguments_after_script(tmp_path: Path) -> None:
    script = write(tmp_path / "args.py", """
        import sys
        import gradviz as torch
        print("argv", sys.argv[1:], "file", __file__.endswith("args.py"), "name", __name__)
        n = int(sys.argv[2])
        x = torch.ones(n, requires_grad=True)
        (x * 2).sum().backward()
    """)
    # --out after SCRIPT belongs to the script, not to gradviz.
    proc = run("trace", "-q", "--out", "o", str(script), "--n", "4", "--out", "theirs",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "argv ['--n', '4', '--out', 'theirs'] file True name __main__" in proc.stdout
    tr = load_trace(tmp_path / "o" / "trace.json")
    assert tr.tensors[tr.ops[0].inputs[0]].shape == [4]
    assert not (tmp_path / "theirs").exists()


def test_script_imports_a_module_beside_it(tmp_path: Path) -> None:
    pkg = tmp_path / "proj"
    pkg.mkdir()
    write(pkg / "helpers.py", """
        def square(t):
            return t * t
    """)
    script = write(pkg / "main.py", """
        import gradviz as torch
        from helpers import square
        x = torch.ones(3, requires_grad=True)
        square(x).sum().backward()
    """)
    proc = run("trace", "-q", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tr = load_trace(tmp_path / "o" / "trace.json")
    assert tr.ops[0].source.file.endswith("helpers.py")


def test_script_without_backward_gets_forward_graph_and_a_note(tmp_path: Path) -> None:
    script = write(tmp_path / "fwd.py", """
        import gradviz as torch
        x = torch.ones(3, requires_grad=True)
        y = (x * 2).exp()
    """)
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _assert_outputs(tmp_path / "o")
    assert "never called backward" in proc.stdout
    assert "ExpBackward0" in (tmp_path / "o" / "backward.svg").read_text()


@pytest.mark.parametrize("args, message", [
    (["trace", "missing.py"], "no such script: missing.py"),
    (["trace"], "missing SCRIPT"),
    (["trace", "--values", "lots", "s.py"], "Invalid value for '--values'"),
    (["trace", "--keep-runs", "0", "s.py"], "Invalid value for '--keep-runs'"),
    (["trace", "--example", "nope"], "no bundled example named 'nope'"),
    (["render", "missing.json"], "no such trace file"),
    (["render", "notjson.json"], "not valid JSON"),
    (["steps", "other.json"], "schema: missing: not a gradviz trace"),
])
def test_bad_invocations_exit_2_with_one_clear_line(tmp_path: Path, args: list[str],
                                                    message: str) -> None:
    write(tmp_path / "s.py", SEED)
    (tmp_path / "notjson.json").write_text("{oops")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    proc = run(*args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unwritable_output_folder_exits_2(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", SEED)
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    proc = run("trace", "--out", str(blocker / "sub"), str(script), cwd=tmp_path)
    assert proc.returncode == 2
    assert "cannot write to the output folder" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_render_and_steps_reopen_a_saved_trace(tmp_path: Path) -> None:
    script = write(tmp_path / "seed.py", SEED)
    assert run("trace", "-q", "--out", "o", str(script), cwd=tmp_path).returncode == 0
    proc = run("render", str(tmp_path / "o" / "trace.json"), "--out", "again", "--format",
               "dot", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _assert_outputs(tmp_path / "again")
    assert (tmp_path / "again" / "backward.dot").exists()
    proc = run("steps", str(tmp_path / "o" / "trace.json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("AddBackward0", "PowBackward0", "AccumulateGrad", "execute"):
        assert name in proc.stdout
    proc = run("steps", str(tmp_path / "o" / "trace.json"), "--run", "5", cwd=tmp_path)
    assert proc.returncode == 2
    assert "error: --run 5: no backward run 5: the script made 1" in proc.stderr


def test_steps_and_render_number_runs_alike(tmp_path: Path) -> None:
    # --run 1 is the first run the script made for every command, as the pictures' titles say
    # ("backward run 1 of 2"); -1 the last.
    script = write(tmp_path / "two.py", """
        import gradviz as torch
        x = torch.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        (x * 3).exp().sum().backward()
    """)
    assert run("trace", "-q", "--keep-runs", "2", "--out", "o", str(script),
               cwd=tmp_path).returncode == 0
    trace = str(tmp_path / "o" / "trace.json")
    for number, exp in (("1", False), ("2", True), ("-1", True)):
        steps = run("steps", trace, "--plain", "--run", number, cwd=tmp_path)
        assert steps.returncode == 0, steps.stderr
        first = steps.stdout.strip().split("\n\n")[0]  # the run shown first
        assert "MulBackward0" in first and ("ExpBackward0" in first) == exp, first
        made = "ExpBackward0" if exp else "MulBackward0"
        proc = run("render", trace, "--out", f"r{number}", "--run", number, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        svg = (tmp_path / f"r{number}" / "backward.svg").read_text()
        assert made in svg and f"backward run {number if number != '-1' else 2} of 2" in svg


def test_the_summary_and_steps_name_runs_by_their_numbers(tmp_path: Path) -> None:
    # Five backward calls, the last two kept (ids run3 and run4 in trace.json): the summary,
    # its note and `gradviz steps` say runs 4 and 5, as the pictures' titles do.
    script = write(tmp_path / "loop.py", """
        import gradviz as torch
        x = torch.ones(2, requires_grad=True)
        for _ in range(5):
            (x * 2).sum().backward()
    """)
    proc = run("trace", "--steps", "--keep-runs", "2", "--out", "o", str(script), cwd=tmp_path,
               columns=200)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if "backward runs" in line)
    assert "2 (of 5: runs 4, 5 kept)" in row
    assert "note: keep_runs=2: forward ops and runs before backward run 4 were dropped" in (
        proc.stdout)
    # --steps prints each kept run's table, titled by its number.
    assert "run 4 of 5: backward of" in proc.stdout and "run 5 of 5: backward of" in proc.stdout
    assert "run3" not in proc.stdout and "run4" not in proc.stdout
    trace = str(tmp_path / "o" / "trace.json")
    assert [r.id for r in load_trace(trace).runs] == ["run3", "run4"]  # the data is unchanged
    for number in ("4", "5"):
        steps = run("steps", trace, "--plain", "--run", number, cwd=tmp_path)
        assert steps.returncode == 0, steps.stderr
        assert steps.stdout.lstrip().startswith(f"run {number} of 5: backward of"), steps.stdout


def test_examples_are_listed_and_each_one_traces(tmp_path: Path) -> None:
    proc = run("examples", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = ["seed_backward", "custom_function", "mlp_moons", "higher_order", "inplace_error"]
    for name in [*names, "rnn_sequence"]:
        assert name in proc.stdout
    for name in names:  # rnn_sequence is traced by tests/test_rnn_example.py
        proc = run("trace", "-q", "--out", name, "--example", name, cwd=tmp_path)
        assert proc.returncode == (1 if name == "inplace_error" else 0), (name, proc.stderr)
        _assert_outputs(tmp_path / name)


def test_demo_ends_with_the_player_path(tmp_path: Path) -> None:
    proc = run("demo", "--out", "d", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last == f"Step player: {(tmp_path / 'd' / 'steps.html').resolve()}"
    _assert_outputs(tmp_path / "d")
    tr = load_trace(tmp_path / "d" / "trace.json")
    assert len(tr.runs) == 1 and tr.runs_total == 20  # the last training step is kept


def test_python_dash_m_gradviz_runs_the_same_app(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "gradviz", "examples"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "mlp_moons" in proc.stdout
