"""The code generated from the table's rows (NOTE [generated fast paths] in
gradviz/ops/fastpath.py): readable by a learner, and the same behaviour as the general path."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import gradviz
from gradviz.ops import OPS, defop, generated_source, remove_op
from gradviz.ops.dispatch import OpNode, dispatch


def test_generated_source_shows_the_forward_and_the_node_with_the_formula_in_line() -> None:
    src = generated_source("tanh")
    assert src.startswith("def tanh_fast(a, **kwargs):")
    assert "node = new(TanhBackward0)" in src
    assert "_g_0 = grad * (1 - result * result)" in src  # the row's lambda body
    assert "def tanh_release_variables(_g_node):" in src
    # the saved-value plan is resolved per set of inputs needing a gradient
    mul = generated_source("mul")
    assert "{'other': SavedVariable(b) if type(b) is Tensor else b}" in mul


def test_rows_without_generated_code_say_so() -> None:
    with pytest.raises(ValueError, match="'cat': no code is generated"):
        generated_source("cat")


def test_compiled_code_is_what_generated_source_shows() -> None:
    x = gradviz.tensor([0.5, 1.0], requires_grad=True)
    y = x.tanh()
    y.sum().backward()
    # the functions that run are the checked-in ones (gradviz/ops/generated/), whose text is
    # what generated_source writes
    assert inspect.getsource(OPS["tanh"].fast) in generated_source("tanh")
    assert inspect.getsource(OPS["tanh"].node_cls.apply) in generated_source("tanh")
    assert inspect.getsource(OPS["tanh"].node_cls.release_variables) in generated_source("tanh")
    np.testing.assert_allclose(x.grad.numpy(), 1 - np.tanh([0.5, 1.0]) ** 2)


def test_a_traceback_through_generated_code_shows_its_lines() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time") as info:
        y.grad_fn.apply([np.ones(2)], False)
    text = "".join(traceback.format_exception(info.value))
    assert re.search(r"gradviz/ops/generated/arithmetic(_\d+)?\.py", text)
    assert "other = _g_slow(_g_node, _g_v)" in text


def test_generated_backward_matches_the_general_backward_under_create_graph() -> None:
    # create_graph takes OpNode.apply (tensors); the plain backward takes the generated one
    x = gradviz.tensor([0.3, -0.2], requires_grad=True)
    (g,) = gradviz.autograd.grad((x * x).tanh().sum(), x, create_graph=True)
    (plain,) = gradviz.autograd.grad((x * x).tanh().sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), plain.numpy())
    assert g.grad_fn is not None


def scale(v: np.ndarray) -> np.ndarray:
    return np.abs(v)


def test_a_formula_reading_a_name_another_formula_saves_is_called_not_copied() -> None:
    # `scale` is this module's function in self's formula but a saved keyword argument in
    # other's: copied into one apply, self's formula would read the local; it is called.
    def forward(a: np.ndarray, b: np.ndarray, scale: float = 2.0) -> np.ndarray:
        return a * b * scale

    defop("clash_demo", "ClashDemoBackward0", forward, ("self", "other"),
          self=lambda grad, other: grad * scale(other),
          other=lambda grad, self, scale: grad * self * scale)
    try:
        src = generated_source("clash_demo")
        assert "_g_0 = clash_demo_f0(grad, other)" in src
        assert "_g_1 = grad * self * scale" in src
        x = gradviz.tensor([1.0, -2.0], requires_grad=True)
        w = gradviz.tensor([3.0, -4.0], requires_grad=True)
        dispatch(OPS["clash_demo"], x, w).sum().backward()  # a row added later: plain
        np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
        np.testing.assert_allclose(w.grad.numpy(), [2.0, -4.0])
    finally:
        remove_op("clash_demo")


ROOT = Path(__file__).resolve().parents[1]


def test_the_checked_in_generated_files_are_current() -> None:
    from gradviz.ops import fastpath

    folder = ROOT / "gradviz" / "ops" / "generated"
    sources = fastpath.sources()
    modules = list(sources)
    sources["_parts"] = fastpath.parts_source(modules)
    stale = [f"gradviz/ops/generated/{cat}.py" for cat, text in sources.items()
             if not (folder / f"{cat}.py").exists() or (folder / f"{cat}.py").read_text() != text]
    extra = [p.name for p in folder.glob("*.py")
             if p.name != "__init__.py" and p.stem not in sources]
    assert not stale and not extra, (
        f"stale generated files {stale}, unneeded {extra}: run `python scripts/gen_fastpath.py`")
    from gradviz.ops import generated

    assert [m.__name__.rpartition(".")[2] for m in generated.MODULES] == modules
    # each within the package's limit of 2,000 lines a file (issue #30), cut in parts if need be
    assert max(text.count("\n") for text in sources.values()) <= fastpath.MAX_LINES


def test_gradviz_fast_0_takes_the_plain_path() -> None:
    code = ("import gradviz\nfrom gradviz.ops import OPS, FAST\nfrom gradviz.ops.dispatch import "
            "OpNode\nx = gradviz.ones(2, requires_grad=True)\ny = (x * x).tanh().sum()\n"
            "y.backward()\nassert not FAST\nassert all(op.fast is None for op in OPS.values())\n"
            "assert type(y.grad_fn).apply is OpNode.apply\n"
            "assert type(y.grad_fn.next_functions[0][0]).apply is OpNode.apply\n"
            "assert 'gradviz.ops.generated' not in __import__('sys').modules\n"
            "print(x.grad.tolist())\n")
    env = {**os.environ, "GRADVIZ_FAST": "0", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    x = gradviz.ones(2, requires_grad=True)
    (x * x).tanh().sum().backward()
    assert out.stdout.strip() == str(x.grad.tolist())
    assert type((x * x).grad_fn).apply is not OpNode.apply  # this process: the fast paths
