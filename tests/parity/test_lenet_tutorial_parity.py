"""PyTorch's "Neural Networks" tutorial LeNet (tests/test_lenet_tutorial.py) on torch and on
gradviz from the same weights: parameters, graph, repr, output, loss, gradients and the SGD step
agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

LENET = sibling("test_lenet_tutorial")


def _shared_weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    shapes = {"conv1.weight": (6, 1, 5, 5), "conv1.bias": (6,), "conv2.weight": (16, 6, 5, 5),
              "conv2.bias": (16,), "fc1.weight": (120, 400), "fc1.bias": (120,),
              "fc2.weight": (84, 120), "fc2.bias": (84,), "fc3.weight": (10, 84),
              "fc3.bias": (10,)}
    return {k: rng.uniform(-0.2, 0.2, s).astype(np.float32) for k, s in shapes.items()}


def test_lenet_matches_torch_with_the_same_weights() -> None:
    weights = _shared_weights()
    t, g = LENET.lenet_program(torch, weights), LENET.lenet_program(gradviz, weights)
    assert g["params"] == t["params"]
    assert g["chain"] == t["chain"]
    assert g["repr"] == t["repr"]
    np.testing.assert_allclose(g["out"], t["out"], rtol=1e-4, atol=1e-6)
    assert g["loss"] == pytest.approx(t["loss"], rel=1e-5)
    for name in weights:
        np.testing.assert_allclose(g["grads"][name], t["grads"][name], rtol=1e-3, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(g["weights"][name], t["weights"][name], rtol=1e-5,
                                   atol=1e-7, err_msg=name)
    assert g["new_loss"] == pytest.approx(t["new_loss"], rel=1e-5)
