"""The ``torch.*`` names that are the very functions of ``torch.nn.functional``: gradviz exports
them at the top level too, with the same arguments and graph (torch's expectations hard-coded;
tests/parity/test_top_level_functional_parity.py derives them again from torch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _graphs import sig

import gradviz
import gradviz.nn.functional as F


def env(lib: Any) -> dict[str, Any]:
    rng = np.random.default_rng(3)

    def t(*shape: int, rg: bool = True) -> Any:
        return lib.tensor(rng.normal(size=shape), requires_grad=rg)

    return {"lib": lib, "x": t(2, 4, 6), "y": t(2, 4, 6), "w4": t(4), "b4": t(4),
            "w6": t(6), "wb": t(3, 6, 6), "bb": t(3), "p4": lib.tensor(rng.random(4) + 0.1,
                                                                     requires_grad=True)}


# (call on torch or gradviz as lib, the graph torch 2.13 records)
CASES = [
    ("lib.selu(x)", "EluBackward0(Acc)"),
    ("lib.celu(x, 0.7)", "CeluBackward0(Acc)"),
    ("lib.prelu(x, p4)", "PreluKernelBackward0(Acc, ViewBackward0(Acc))"),
    ("lib.hardshrink(x, 0.3)", "HardshrinkBackward0(Acc)"),
    ("lib.threshold(x, 0.1, -2.0)", "ThresholdBackward0(Acc)"),
    ("lib.cosine_similarity(x, y, 1)",
     "SumBackward1(MulBackward0(DivBackward0(Acc, CloneBackward0(LinalgVectorNormBackward0(Acc)"
     ")), DivBackward0(Acc, CloneBackward0(LinalgVectorNormBackward0(Acc)))))"),
    ("lib.pairwise_distance(x[0], y[0])",
     "NormBackward1(AddBackward1(SubBackward0(SelectBackward0(Acc), SelectBackward0(Acc))))"),
    ("lib.bilinear(x[0], y[0], wb, bb)",
     "AddBackward0(ViewBackward0(TrilinearBackward0(ViewBackward0(SelectBackward0(Acc)), Acc, "
     "ViewBackward0(SelectBackward0(Acc)))), Acc)"),
    ("lib.avg_pool1d(x, 2)",
     "SqueezeBackward1(AvgPool2DBackward0(UnsqueezeBackward0(Acc)))"),
    ("lib.adaptive_avg_pool1d(x, 3)",
     "SqueezeBackward1(AdaptiveAvgPool2DBackward0(UnsqueezeBackward0(Acc)))"),
    ("lib.rms_norm(x, (6,), w6)",
     "MulBackward0(MulBackward0(Acc, RsqrtBackward0(AddBackward1(MeanBackward1(PowBackward0("
     "Acc))))), Acc)"),
    ("lib.group_norm(x, 2, w4, b4)", "NativeGroupNormBackward0(Acc, Acc, Acc)"),
    ("lib.layer_norm(x, (6,))", "NativeLayerNormBackward0(Acc, None, None)"),
]


@pytest.mark.parametrize(("src", "graph"), CASES, ids=[c[0] for c in CASES])
def test_the_top_level_name_records_pytorchs_graph(src: str, graph: str) -> None:
    assert sig(eval(src, env(gradviz))) == graph  # noqa: S307


@pytest.mark.parametrize("name", gradviz._SAME_AS_F)
def test_the_top_level_name_is_the_functional_one(name: str) -> None:
    assert getattr(gradviz, name) is getattr(F, name) and name in gradviz.__all__
