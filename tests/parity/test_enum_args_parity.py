"""Enum arguments on real PyTorch (NOTE [enum arguments] in gradviz/render/_format.py): the
positions gradviz names are those of torch's aten schemas, and a traced torch program that
passes an enum as an int shows it by name, while the node keeps torch's int."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import gradviz
from gradviz.render._format import ENUM_ARGS, enum_name
from gradviz.render.graphviz import draw_forward


def test_positions_match_the_aten_schemas():
    for op, args in ENUM_ARGS.items():
        packet = getattr(torch.ops.aten, op)
        for overload in packet.overloads():
            schema = getattr(packet, overload)._schema
            for pos, name, _ in args:
                assert schema.arguments[pos].name == name, (op, overload, pos)


def test_reduction_names_match_torch():
    from torch.nn import _reduction

    for name in ("none", "mean", "sum"):
        assert enum_name("nll_loss", "reduction", _reduction.get_enum(name)) == name


def test_traced_torch_program_shows_enum_names():
    torch.manual_seed(0)
    with gradviz.trace(torch=True) as tr:
        x = torch.randn(3, 4, requires_grad=True)
        t = torch.tensor([0, 2, 1])
        a = torch._C._nn.nll_loss_nd(torch.log_softmax(x, 1), t, None, 1, -100)
        b = torch.ops.aten.mse_loss(x, torch.zeros(3, 4), reduction=2)
        g = torch.grid_sampler(x.view(1, 1, 3, 4), torch.zeros(1, 2, 2, 2), 1, 2, False)
        c = F.l1_loss(x, torch.ones(3, 4), reduction="sum")
        (a + b + g.sum() + c).backward()
    src = draw_forward(tr, detail="saved").source
    assert "nll_loss_nd(t2, t, None, 'mean', -100)" in src
    assert "mse_loss(x, t4, reduction='sum')" in src
    assert "grid_sampler(t6, t7, 'nearest', 'reflection'," in src
    # F.l1_loss passes the str: shown the same way
    assert "l1_loss(x, t9, size_average=None, reduce=None,\\nreduction='sum')" in src
    node = next(n for n in tr.nodes.values() if n.name == "NllLossBackward0")
    saved = {s.name: s.value for s in node.saved}
    assert saved["reduction"] == {"const": 1}  # torch's _saved_reduction, unchanged
