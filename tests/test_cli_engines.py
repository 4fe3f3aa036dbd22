"""``--engine`` and ``gradviz compare`` as a user runs them (the installed command in a
subprocess). Everything here passes without PyTorch: a package named torch that fails to
import, put first on PYTHONPATH, stands for a machine without it. The runs on real PyTorch are
in tests/parity/test_compare_parity.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import GRADVIZ, cli_env, run, write

from gradviz.trace import load_trace

MLP = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    X = torch.tensor([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    y = torch.tensor([1, 1, 0, 0])
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for xb, yb in DataLoader(TensorDataset(X, y), batch_size=4):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("ran on", torch.tensor([1.0]).__class__.__module__)
"""


def no_torch_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine without PyTorch: `import torch` fails."""
    fake = tmp_path / "no_torch"
    (fake / "torch").mkdir(parents=True, exist_ok=True)
    (fake / "torch" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(fake), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_env(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GRADVIZ), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env=env)


# -- detection ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("source", "expected"), [
    ("import torch", True),
    ("import numpy, torch.nn as nn", True),
    ("from torch import nn", True),
    ("from torch.nn import functional as F", True),
    ("def f():\n    try:\n        import torch\n    except ImportError:\n        pass", True),
    ("import gradviz as torch", False),
    ("import torchvision", False),
    ("from .torch import x", False),  # a module of the user's own package
    ("x = 'import torch'", False),
    ("import torch(", False),  # does not parse: the runner reports it
])
def test_imports_torch_reads_the_imports_without_running(source: str, expected: bool) -> None:
    from gradviz_cli.engines import imports_torch

    assert imports_torch(source) is expected


def test_the_torch_mapping_is_removed_after_the_run() -> None:
    from gradviz_cli.engines import torch_as_gradviz

    before = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "torch"}
    with torch_as_gradviz():  # `import torch` answered by gradviz: no torch is needed
        import torch  # noqa: F401, TID251 - what the script would do
        import torch.nn.functional as F  # noqa: TID251

        assert F.__name__ == "gradviz.nn.functional"
        assert sys.modules["torch"].tensor([1.0]).__class__.__module__.startswith("gradviz")
    after = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "torch"}
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)


# -- --engine gradviz on an unmodified torch script --------------------------------------------
def test_engine_gradviz_runs_an_unmodified_torch_script_without_torch(tmp_path: Path) -> None:
    write(tmp_path / "mlp.py", MLP)
    proc = run_env(["trace", "--engine", "gradviz", "--out", "o", "mlp.py"], tmp_path,
                   no_torch_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "ran on gradviz" in proc.stdout
    assert "engine" in proc.stdout
    assert "--engine gradviz: `import torch` runs gradviz" in " ".join(proc.stdout.split())
    tr = load_trace(tmp_path / "o" / "trace.json")
    assert len(tr.runs) == 1
    names = {n.name for n in tr.nodes.values()}
    assert {"NllLossBackward0", "LogSoftmaxBackward0", "AddmmBackward0", "ReluBackward0",
            "AccumulateGrad"} <= names
    assert (tmp_path / "o" / "steps.html").is_file()


def test_a_torch_module_gradviz_lacks_fails_naming_it(tmp_path: Path) -> None:
    write(tmp_path / "dist.py", """
        import torch
        import torch.distributed as dist
    """)
    proc = run("trace", "--engine", "gradviz", "--out", "o", "dist.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert ("ModuleNotFoundError: No module named 'torch.distributed': gradviz has no "
            "equivalent of torch.distributed") in " ".join(proc.stderr.split())
    write(tmp_path / "attr.py", "import torch\ntorch.compile(len)\n")
    proc = run("trace", "--engine", "gradviz", "--out", "o", "attr.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "AttributeError: torch.compile: gradviz has no equivalent of it" in \
        " ".join(proc.stderr.split())


def test_a_gradviz_script_stays_on_gradviz_and_says_why(tmp_path: Path) -> None:
    write(tmp_path / "g.py", """
        import gradviz
        x = gradviz.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    """)
    proc = run("trace", "--out", "o", "g.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "(the script does not import torch)" in " ".join(proc.stdout.split())


# -- without PyTorch: the default and --engine torch say how to install it ----------------------
def test_a_torch_script_without_torch_says_how_to_install_it(tmp_path: Path) -> None:
    write(tmp_path / "mlp.py", MLP)
    env = no_torch_env(tmp_path)
    for args in (["trace", "--out", "o", "mlp.py"],
                 ["trace", "--engine", "torch", "--out", "o", "mlp.py"]):
        proc = run_env(args, tmp_path, env)
        assert proc.returncode == 3, proc.stderr
        line = " ".join(proc.stderr.split())
        assert "error: real PyTorch is not installed" in line
        assert "pip install gradviz[torch]" in line and "--engine gradviz" in line
        assert not (tmp_path / "o").exists()
    proc = run_env(["compare", "--out", "c", "mlp.py"], tmp_path, env)
    assert proc.returncode == 3
    assert "pip install gradviz[torch]" in " ".join(proc.stderr.split())
    assert "the torch run (exit code 3) recorded nothing to compare" in \
        " ".join(proc.stderr.split())
    assert not (tmp_path / "c" / "compare.html").exists()


def test_compare_refuses_values_none(tmp_path: Path) -> None:
    write(tmp_path / "s.py", "import torch\n")
    proc = run("compare", "--values", "none", "s.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--values none keeps no values" in proc.stderr


# -- libraries that look for torch before importing it (NOTE [the stand-in looks installed]) -----
# A library of the kind transformers is: before it imports torch it asks whether torch is
# installed and new enough, the way `transformers.utils.import_utils.is_torch_available()` does
# (find_spec, then the distribution's version, then a version comparison), and it imports an
# optional companion (torchvision) only when a probe finds it. Written for these tests.
LOADERLIB = """
    import importlib
    import importlib.metadata
    import importlib.util

    from packaging import version


    def installed_version(name):
        if importlib.util.find_spec(name) is None:
            return None
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            for dist in importlib.metadata.packages_distributions().get(name, []):
                try:
                    return importlib.metadata.version(dist)
                except importlib.metadata.PackageNotFoundError:
                    continue
            return getattr(importlib.import_module(name), "__version__", None)


    def is_torch_available():
        v = installed_version("torch")
        return v is not None and version.parse(v) >= version.parse("2.6.0")


    def train_step():
        import torch
        from torch import nn

        assert version.parse(torch.__version__) >= version.parse("2.6")
        assert torch.__version__ >= (2, 6) and torch.__version__ >= "2.6.0"
        model = nn.Linear(3, 2)
        loss = model(torch.ones(4, 3)).pow(2).mean()
        loss.backward()
        return model.weight.grad.shape


    def vision():
        if installed_version("torchvision") is not None:
            import torchvision  # noqa: F401
        return "no torchvision"
"""


def test_the_stand_in_answers_what_library_loaders_probe() -> None:
    import importlib.metadata
    import importlib.util

    from packaging import version

    from gradviz_cli.engines import stand_in_version, torch_as_gradviz

    with torch_as_gradviz() as torch:
        spec = importlib.util.find_spec("torch")  # was: ValueError: torch.__spec__ is None
        assert spec is not None and spec.name == "torch" and spec.submodule_search_locations == []
        assert importlib.util.find_spec("torch.utils") is not None
        assert importlib.util.find_spec("torch.nn").name == "gradviz.nn"
        assert importlib.metadata.version("torch") == torch.__version__ == stand_in_version()
        assert version.parse(torch.__version__) >= version.parse("2.6.0")
        assert version.parse(torch.__version__).public == "2.13.0"
        assert "torch" in importlib.metadata.packages_distributions()
        assert torch.__file__.endswith("__init__.py")
        importlib.reload(torch)  # a no-op, not an error
        # What gradviz lacks is found (a probe does not raise) and fails when imported.
        for name, text in (("torchvision", "torchvision needs real PyTorch"),
                           ("torch.fx", "gradviz has no equivalent of torch.fx")):
            assert importlib.util.find_spec(name) is not None
            with pytest.raises(ModuleNotFoundError, match=text):
                importlib.import_module(name)
    assert "torch" not in sys.modules or sys.modules["torch"].__spec__.origin != spec.origin


def test_a_library_that_probes_for_torch_runs_on_gradviz(tmp_path: Path) -> None:
    (tmp_path / "loaderlib").mkdir()
    write(tmp_path / "loaderlib" / "__init__.py", LOADERLIB)
    write(tmp_path / "uses_lib.py", """
        import torch
        import loaderlib

        print("available", loaderlib.is_torch_available(), loaderlib.installed_version("torch"))
        print("grad", tuple(loaderlib.train_step()))
    """)
    # Without real torch installed: the stand-in is what the metadata describes.
    proc = run_env(["trace", "--engine", "gradviz", "--out", "o", "uses_lib.py"], tmp_path,
                   no_torch_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "available True 2.13.0+gradviz." in proc.stdout
    assert "grad (2, 3)" in proc.stdout
    names = {n.name for n in load_trace(tmp_path / "o" / "trace.json").nodes.values()}
    assert {"AddmmBackward0", "PowBackward0", "MeanBackward0"} <= names


def test_a_library_that_needs_torchvision_stops_with_the_clean_message(tmp_path: Path) -> None:
    (tmp_path / "loaderlib").mkdir()
    write(tmp_path / "loaderlib" / "__init__.py", LOADERLIB)
    write(tmp_path / "vision.py", """
        import torch
        import loaderlib

        print(loaderlib.is_torch_available())
        loaderlib.vision()
    """)
    proc = run_env(["trace", "--engine", "gradviz", "--out", "o", "vision.py"], tmp_path,
                   no_torch_env(tmp_path))
    assert proc.returncode == 1
    line = " ".join(proc.stderr.split())
    assert ("ModuleNotFoundError: torchvision needs real PyTorch and gradviz has no equivalent "
            "of it, so this script cannot run with --engine gradviz") in line
    assert "__spec__" not in line
