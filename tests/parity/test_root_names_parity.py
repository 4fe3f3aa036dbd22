"""NOTE [root names] on real PyTorch: the root of ``outputs.loss.backward()`` is named
``outputs.loss``, as on gradviz (tests/test_trace_names.py)."""

from __future__ import annotations

import torch

import gradviz


class _Output:
    def __init__(self, loss: torch.Tensor) -> None:
        self.loss = loss


def _model(x: torch.Tensor) -> tuple[_Output, dict[str, torch.Tensor], list[torch.Tensor]]:
    h = (x * 2).tanh()
    return _Output((h ** 2).mean()), {"loss": h.sum()}, [h.max(), h.min()]


def test_torch_roots_are_named_by_the_expression_backward_was_called_on():
    with gradviz.trace(torch=True, keep_runs="all") as tr:
        x = torch.ones(3, requires_grad=True)
        outputs, out, losses = _model(x)
        i = 1
        outputs.loss.backward(retain_graph=True)
        out["loss"].backward(retain_graph=True)
        losses[i].backward(retain_graph=True)
        torch.autograd.backward(losses[0])  # a call on torch.autograd: no name from it
    names = [tr.tensors[r.roots[0]].name for r in tr.runs]
    assert names[:3] == ["outputs.loss", 'out["loss"]', "losses[i]"]
    assert names[3] == tr.runs[3].roots[0]
