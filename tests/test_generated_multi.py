"""Generated ``apply`` of multi-output rows (nll_loss, max(dim), split, layer_norm ...).

Each node is run by its generated ``apply`` and by the general ``_GeneralOpNode.apply`` on the
same gradients: the results must be the same arrays; a missing gradient or ``create_graph``
goes to the general apply (which fills zeros); ``generated_source`` shows the method.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as F
from gradviz.ops import OPS, generated_source
from gradviz.ops.dispatch import _GeneralOpNode


def _nodes():
    rng = np.random.default_rng(0)
    x = gradviz.tensor(rng.standard_normal((4, 6)), requires_grad=True)
    w = gradviz.tensor(rng.standard_normal(6), requires_grad=True)
    b = gradviz.tensor(rng.standard_normal(6), requires_grad=True)
    img = gradviz.tensor(rng.standard_normal((1, 2, 4, 4)), requires_grad=True)
    target = gradviz.tensor([0, 5, 2, 3])
    return {
        "nll_loss": F.nll_loss(x.log_softmax(1), target),
        "nll_loss_weighted": F.nll_loss(x.log_softmax(1), target,
                                        weight=gradviz.arange(1.0, 7.0, dtype=gradviz.float64)),
        "max_dim": x.max(1).values,
        "split": x.split(2, 1)[1],
        "layer_norm": F.layer_norm(x, (6,), w, b),
        "max_pool2d": F.max_pool2d(img, 2),
    }


@pytest.mark.parametrize("case", ["nll_loss", "nll_loss_weighted", "max_dim", "split",
                                  "layer_norm", "max_pool2d"])
def test_generated_apply_matches_general_apply(case):
    out = _nodes()[case]
    node = out.grad_fn
    assert type(node).apply is not _GeneralOpNode.apply
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(shape).astype(dt) for shape, dt in node._out_meta]
    generated = type(node).apply(node, list(grads), False)
    general = _GeneralOpNode.apply(node, list(grads), False)
    assert len(generated) == len(general) == len(node.next_functions)
    for a, b in zip(generated, general, strict=True):
        if b is None:
            assert a is None
        else:
            np.testing.assert_array_equal(a, b)


def test_missing_gradient_takes_the_general_apply():
    x = gradviz.arange(6.0, requires_grad=True)
    a, b, c = x.split(2)
    (b * 3).sum().backward()  # a and c get no gradient: SplitBackward0 fills zeros for them
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 3, 3, 0, 0])


def test_create_graph_through_a_multi_output_node():
    x = gradviz.tensor([[0.2, -0.4, 1.0]], dtype=gradviz.float64, requires_grad=True)
    loss = F.cross_entropy(x, gradviz.tensor([2]))
    (g,) = gradviz.autograd.grad(loss, x, create_graph=True)
    assert g.grad_fn is not None
    p = np.exp(x.detach().numpy()) / np.exp(x.detach().numpy()).sum()
    np.testing.assert_allclose(g.detach().numpy(), p - [[0, 0, 1]], rtol=1e-12)
    g.sum().backward()  # d/dx sum(softmax - onehot) = 0
    np.testing.assert_allclose(x.grad.numpy(), np.zeros((1, 3)), atol=1e-12)


def test_saved_values_are_checked_by_the_generated_apply():
    x = gradviz.randn(3, 4, requires_grad=True)
    lsm = x.log_softmax(1)
    target = gradviz.tensor([1, 2, 3])
    loss = F.nll_loss(lsm, target)
    target.add_(0)  # bumps the saved target's version: backward must refuse, as torch does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_generated_source_shows_the_multi_output_apply():
    src = generated_source("nll_loss")
    assert src.startswith("def nll_loss_apply(_g_node, grad_outputs, create_graph):")
    assert "NllLossBackward0.apply" in src
    assert "_GeneralOpNode.apply(_g_node, grad_outputs, create_graph)" in src
    assert "release_variables" not in src  # the node keeps OpNode.release_variables
    assert OPS["nll_loss"].fast is None  # its forward takes the general dispatch


def test_backward_frees_the_multi_output_node_saved_values():
    x = gradviz.randn(2, 3, requires_grad=True)
    loss = F.cross_entropy(x, gradviz.tensor([0, 2]))
    node = loss.grad_fn
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        node._saved_self  # noqa: B018
