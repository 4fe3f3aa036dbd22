"""The tutorial notebooks (``tutorials/``): they run, are committed clean, and cover the seeds.

1. Every notebook executes top to bottom in a fresh kernel (cwd ``tutorials/``) without an
   error, and shows its pictures (SVG, the HTML player); its time is printed (the target is
   under 60 seconds each).
2. Each notebook is a jupytext pair (``NN_name.ipynb`` + percent-format ``NN_name.py``): the two
   forms hold the same cells, and the committed ``.ipynb`` carries no outputs, execution counts
   or metadata beyond the ``python3`` kernelspec.
3. Exercises: every reference answer in ``solutions.py`` passes its check, every stub in a
   notebook fails it, no notebook holds an answer, and every exercise has a check cell.
4. ``tutorials/CONCEPTS.md`` maps every concept of the seed documents to a notebook section, and
   that section's code contains the named snippet.

NOTE [which kernel] The kernel must be *this* interpreter (the project's ``.venv``, where gradviz
is installed), whatever kernelspecs the machine has: a user-level ``python3`` spec may point at
another Python. Asking ``jupyter_client``'s ``KernelSpecManager`` with no spec directories for
``python3`` resolves to ipykernel's built-in native spec, which ``jupyter_client`` fills in with
``sys.executable``. Nothing is installed or registered anywhere; a fresh clone where ``make test``
created ``.venv`` works as is.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import ipykernel  # noqa: F401 - the kernel the notebooks run in (the test extra installs it)
import jupytext
import nbclient
import nbformat
import pytest
from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "tutorials"
NOTEBOOKS = sorted(p.name for p in TUTORIALS.glob("[0-9][0-9]_*.ipynb"))
TEXTS = sorted(p.name for p in TUTORIALS.glob("[0-9][0-9]_*.py"))
# Notebooks that run real PyTorch: executed (and their exercises checked) by
# tests/parity/test_torch_notebook.py, where torch is installed; every other test here covers them.
TORCH_NOTEBOOKS = ["13_watch_pytorch.ipynb"]
GRADVIZ_NOTEBOOKS = [n for n in NOTEBOOKS if n not in TORCH_NOTEBOOKS]
# Each notebook must run in under 60 s on 2 cores, kernel start included (the issue's
# requirement): the time is printed and recorded (record_property), not asserted, so a busy
# machine cannot fail the suite; the per-cell timeout below still stops a hung notebook.
CELL_TIMEOUT = 60  # seconds per cell: a hung cell fails instead of stalling the suite


def _this_interpreter_specs() -> KernelSpecManager:
    # No spec directories: "python3" falls back to ipykernel's native spec for sys.executable.
    return KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)


class ThisInterpreterKernelManager(AsyncKernelManager):
    """A kernel manager whose ``python3`` is always the running interpreter."""

    @default("kernel_spec_manager")
    def _kernel_spec_manager_default(self) -> KernelSpecManager:
        return _this_interpreter_specs()


def test_kernel_resolves_to_this_interpreter():
    spec = _this_interpreter_specs().get_kernel_spec(NATIVE_KERNEL_NAME)
    assert os.path.realpath(spec.argv[0]) == os.path.realpath(sys.executable), spec.argv


def _run(path: Path, tmp_path: Path) -> tuple[object, float]:
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name=NATIVE_KERNEL_NAME,
        kernel_manager_class=ThisInterpreterKernelManager,
        timeout=CELL_TIMEOUT,
        startup_timeout=60,
        resources={"metadata": {"path": str(TUTORIALS)}},
    )
    env = dict(os.environ)
    env["IPYTHONDIR"] = str(tmp_path / "ipython")  # no user profile or startup scripts
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # silence a debugger notice on stderr
    start = time.perf_counter()
    client.execute(env=env)
    return nb, time.perf_counter() - start


def _outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


@pytest.mark.parametrize("name", GRADVIZ_NOTEBOOKS)
def test_notebook_runs_clean_and_fast(name, tmp_path, record_property):
    check_notebook_run(name, tmp_path, record_property)


def check_notebook_run(name: str, tmp_path: Path, record_property) -> None:
    """Run one notebook and check its outputs (shared with the torch notebooks' parity test)."""
    nb, elapsed = _run(TUTORIALS / name, tmp_path)
    record_property("seconds", round(elapsed, 2))
    print(f"{name}: {elapsed:.1f} s")
    outputs = _outputs(nb)
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    # The visualizer is used, and what it returns shows up as a picture or a player.
    if "gradviz.draw_" in sources:
        assert any("image/svg+xml" in o.get("data", {}) for o in outputs), "no SVG displayed"
    # The stubs are not answers: each check cell reports "not done yet", and nothing else fails.
    checks = len(re.findall(r"solutions\.check\(", sources))
    stdout = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    assert checks >= 2 and stdout.count("✗") == checks and "✓" not in stdout, stdout[-2000:]


def test_the_series_is_complete():
    assert [n[:2] for n in NOTEBOOKS] == [f"{i:02d}" for i in range(1, 14)], NOTEBOOKS
    assert all(n in NOTEBOOKS for n in TORCH_NOTEBOOKS)


# -- committed files ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_is_clean(name):
    data = json.loads((TUTORIALS / name).read_text(encoding="utf-8"))
    assert data["nbformat"] == 4
    assert data["metadata"] == {"kernelspec": {"display_name": "Python 3", "language": "python",
                                               "name": "python3"}}
    for i, cell in enumerate(data["cells"]):
        assert cell["metadata"] == {}, f"cell {i}: metadata {cell['metadata']}"
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {i} has outputs: run `make strip`"
            assert cell["execution_count"] is None, f"cell {i} has an execution count"
    nbformat.validate(nbformat.reads(json.dumps(data), as_version=4))


def test_every_notebook_has_its_text_pair():
    assert [n[:-6] for n in NOTEBOOKS] == [n[:-3] for n in TEXTS]


def _cells(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def _pairing_config():
    return jupytext.config.load_jupytext_configuration_file(str(TUTORIALS / "jupytext.toml"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_text_and_notebook_forms_agree(name):
    """The .py pair holds exactly the notebook's cells, and writing the notebook as text gives
    the committed .py (jupytext's round trip, under tutorials/jupytext.toml's settings)."""
    text_path = TUTORIALS / name.replace(".ipynb", ".py")
    text = text_path.read_text(encoding="utf-8")
    from_text = jupytext.reads(text, fmt="py:percent")
    from_ipynb = nbformat.read(TUTORIALS / name, as_version=4)
    assert _cells(from_text) == _cells(from_ipynb), (
        f"{name} and its .py differ: run `make strip` (jupytext --sync) after editing one")
    written = jupytext.writes(from_ipynb, fmt="py:percent", config=_pairing_config())
    assert written == text, f"{text_path.name} is not what jupytext writes from {name}"


def test_pairing_is_configured_for_jupyter():
    assert _pairing_config().formats in ("ipynb,py:percent", ["ipynb,py:percent"])


def _nbstripout(path: Path) -> None:
    """`make strip`'s nbstripout call, with the Makefile's keys."""
    keys = re.search(r"^NBSTRIP_KEYS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    subprocess.run([sys.executable, "-m", "nbstripout", "--extra-keys", keys, str(path)],
                   check=True)


def test_nbstripout_leaves_committed_notebooks_unchanged(tmp_path):
    for name in NOTEBOOKS:
        copy = tmp_path / name
        copy.write_bytes((TUTORIALS / name).read_bytes())
        _nbstripout(copy)
        assert json.loads(copy.read_text(encoding="utf-8")) == json.loads(
            (TUTORIALS / name).read_text(encoding="utf-8")), f"nbstripout changes {name}"


def test_nbstripout_removes_outputs(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"display_name": "Python 3",
                                                           "language": "python",
                                                           "name": "python3"},
                                            "language_info": {"name": "python"},
                                            "jupytext": {"formats": "ipynb,py:percent"}})
    cell = nbformat.v4.new_code_cell("print(1)", id="a")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    cell.execution_count = 3
    cell.metadata["execution"] = {"iopub.status.busy": "now"}
    nb.cells.append(cell)
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    _nbstripout(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["cells"][0]["outputs"] == [] and data["cells"][0]["execution_count"] is None
    assert data["cells"][0]["metadata"] == {} and list(data["metadata"]) == ["kernelspec"]


def test_no_generator_script_is_left():
    assert not (ROOT / "scripts" / "make_tutorials.py").exists()
    assert not (ROOT / "scripts" / "strip_notebooks.py").exists()


# -- exercises -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def solutions():
    sys.path.insert(0, str(TUTORIALS))
    try:
        yield importlib.import_module("solutions")
    finally:
        sys.path.remove(str(TUTORIALS))


_CHECK = re.compile(r'solutions\.check\("(?P<key>ex\d+_\d+)", (?P<name>\w+)\)')


def _exercise_cells() -> list[tuple[str, str, str, str]]:
    """(notebook, key, learner's name, the exercise cell's source) for every check cell."""
    found = []
    for name in NOTEBOOKS:
        nb = nbformat.read(TUTORIALS / name, as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        for i, source in enumerate(code):
            for m in _CHECK.finditer(source):
                stub = next(s for s in reversed(code[:i]) if s.startswith("# Exercise"))
                found.append((name, m["key"], m["name"], stub))
    return found


def test_every_exercise_has_a_check_cell_and_a_registry_entry(solutions):
    cells = _exercise_cells()
    keys = [key for _, key, _, _ in cells]
    assert len(keys) == len(set(keys)) and len(keys) >= 30, keys
    assert sorted(keys) == sorted(solutions.EXERCISES), set(keys) ^ set(solutions.EXERCISES)
    for name, key, learner, _ in cells:
        assert key.startswith(f"ex{int(name[:2])}_"), (name, key)
        assert solutions.EXERCISES[key].name == learner, (key, learner)


@pytest.mark.parametrize("key", sorted({k for n, k, _, _ in _exercise_cells()
                                         if n not in TORCH_NOTEBOOKS}))
def test_reference_answer_passes_and_stub_fails(key, solutions, capsys):
    """The check accepts the reference answer and rejects the notebook's stub (it can fail)."""
    check_exercise(key, solutions, capsys)


def check_exercise(key: str, solutions, capsys) -> None:
    """The reference answer of ``key`` passes its check and the notebook's stub fails it."""
    ex = solutions.EXERCISES[key]
    assert solutions.failure(key, ex.answer) is None
    assert "✓" in capsys.readouterr().out
    name, _, learner, stub = next(c for c in _exercise_cells() if c[1] == key)
    # The stub runs after the notebook's first cell (its imports), as in the notebook.
    nb = nbformat.read(TUTORIALS / name, as_version=4)
    setup = next(c.source for c in nb.cells if c.cell_type == "code")
    namespace: dict = {}
    exec(compile(setup + "\n" + stub, f"<{name} {key}>", "exec"), namespace)
    assert solutions.failure(key, namespace[learner]) == "NotImplementedError"
    solutions.check(key, namespace[learner])
    out = capsys.readouterr().out
    assert out.startswith(f"✗ {key} {learner}: not done yet"), out


@pytest.mark.parametrize("key", ["ex1_1", "ex4_2", "ex11_2"])
def test_a_wrong_answer_is_reported_not_raised(key, solutions, capsys):
    solutions.check(key, lambda *args: None)
    out = capsys.readouterr().out
    assert out.startswith(f"✗ {key} ") and "not yet" in out and f'solutions.show("{key}")' in out


def test_hint_and_show_only_when_asked(solutions, capsys):
    solutions.hint("ex4_2")
    hint = capsys.readouterr().out
    assert hint.startswith("hint for ex4_2 predict_order:") and "heappop" not in hint
    solutions.show("ex4_2")
    answer = capsys.readouterr().out
    assert "def predict_order(t" in answer and "heapq.heappop" in answer
    ast.parse(answer.split("\n", 1)[1])  # the shown answer is valid Python
    with pytest.raises(KeyError, match="no exercise 'ex99_1'"):
        solutions.hint("ex99_1")


def test_no_notebook_shows_an_answer(solutions):
    """No exercise cell holds more than its stub: no line of the reference answer's body."""
    for name, key, _, stub in _exercise_cells():
        assert "raise NotImplementedError" in stub, (name, key)
        body = solutions.answer_source(key).splitlines()[1:]
        answer_lines = {ln.strip() for ln in body if len(ln.strip()) > 12
                        and not ln.strip().startswith(("@staticmethod", "def "))}
        leaked = [ln for ln in stub.splitlines() if ln.strip() in answer_lines]
        assert not leaked, f"{name} {key} shows answer lines: {leaked}"


# -- the tutorials' README and the concept map ----------------------------------------------------
def test_readme_lists_every_notebook():
    readme = (TUTORIALS / "README.md").read_text(encoding="utf-8")
    for name in NOTEBOOKS:
        assert f"]({name})" in readme, f"tutorials/README.md does not link {name}"
    assert "tutorials/README.md" in (ROOT / "README.md").read_text(encoding="utf-8")


_ROW = re.compile(r"^\|\s*(?P<seed>[^|]+?)\s*\|\s*(?P<concept>[^|]+?)\s*\|\s*\[(?P<nb>\d\d)\]"
                  r"\((?P<file>[^)]+)\)\s*§(?P<section>\d+)\s*\|\s*`(?P<snippet>[^`]+)`\s*\|$")

# Concepts the issue names explicitly: each must have a row (matched on the concept text).
REQUIRED = [
    "infer_dependency", "op_dep", "tensor_dep", "yield", "head gradient", "aggregation",
    "zero node", "retain_graph error", "grad_req", "run_backward", "Edge(function, input_nr)",
    "gradient_edge", "is_leaf", ".variable", "MulConstant", "ctx",
    "z.backward() == z.backward(torch.tensor(1.))", "no_grad",
]


def _concept_rows() -> list[dict[str, str]]:
    rows = []
    for line in (TUTORIALS / "CONCEPTS.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and not re.match(r"^\|\s*(seed|-)", line):
            m = _ROW.match(line.strip())
            assert m, ("CONCEPTS.md: a row not of the form "
                       f"| seed | concept | [NN](file) §K | `code` |: {line}")
            rows.append(m.groupdict())
    return rows


def _sections(name: str) -> dict[int, str]:
    """Section number -> the code of the cells under the ``## <number>.`` heading."""
    nb = nbformat.read(TUTORIALS / name, as_version=4)
    sections: dict[int, list[str]] = {}
    current = None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                m = re.match(r"^## (\d+)\.", line)
                if m:
                    current = int(m.group(1))
                elif line.startswith("## "):
                    current = None  # e.g. "## Exercises"
        elif current is not None:
            sections.setdefault(current, []).append(cell.source)
    return {k: "\n".join(v) for k, v in sections.items()}


def test_concepts_map_rows_are_demonstrated():
    rows = _concept_rows()
    assert len(rows) >= 40
    for row in rows:
        assert row["file"] in NOTEBOOKS and row["file"].startswith(row["nb"]), row
        code = _sections(row["file"]).get(int(row["section"]))
        assert code is not None, f"{row['file']} has no section §{row['section']}"
        snippet = row["snippet"].replace("\\|", "|")
        assert snippet in code, (
            f"{row['concept']!r}: `{snippet}` is not in {row['file']} §{row['section']}")


def test_concepts_map_covers_the_four_seeds_and_the_issue():
    rows = _concept_rows()
    seeds = {row["seed"] for row in rows}
    assert {"MXNet", "PyTorch (autograd walkthrough)", "SINGA",
            "PyTorch (engine internals)"} <= seeds, seeds
    concepts = " ".join(row["concept"] for row in rows)
    missing = [c for c in REQUIRED if c not in concepts]
    assert not missing, f"CONCEPTS.md lacks rows for {missing}"
    assert {row["nb"] for row in rows} == {n[:2] for n in NOTEBOOKS}


def test_op_labels_in_a_notebook_name_the_cell(tmp_path):
    # Issue #16: ops recorded in a notebook say "In [2]:3", not ipykernel's temporary file.
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import gradviz"),
        nbformat.v4.new_code_cell(
            "with gradviz.trace() as tr:\n"
            "    a = gradviz.ones(2, requires_grad=True)\n"
            "    b = a * 3\n"
            "    b.sum().backward()\n"
            "print(sorted({str(op.source) for op in tr.ops}))\n"
            "print(tr.tensors[tr.ops[0].outputs[0]].name)"),
    ]
    path = tmp_path / "labels.ipynb"
    nbformat.write(nb, path)
    client = nbclient.NotebookClient(
        nb, kernel_name=NATIVE_KERNEL_NAME, kernel_manager_class=ThisInterpreterKernelManager,
        timeout=CELL_TIMEOUT, startup_timeout=60, resources={"metadata": {"path": str(tmp_path)}})
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    client.execute(env=env)
    text = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert "['In [2]:3', 'In [2]:4']" in text, text
    assert "ipykernel" not in text and text.strip().endswith("b"), text
