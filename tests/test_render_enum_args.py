"""Enum arguments read by name (NOTE [enum arguments] in gradviz/render/_format.py).

gradviz's loss ops record ``reduction`` as the int PyTorch passes (at::Reduction); every place
that shows an op's call (the forward drawing, the step player, the terminal) says
``reduction='mean'``, while the backward node keeps the int PyTorch saves.
"""

from __future__ import annotations

import io
import json
import re

from rich.console import Console

import gradviz as torch
import gradviz.nn.functional as F
from gradviz.render._format import arg_str, enum_name, op_call
from gradviz.render.graphviz import draw_forward
from gradviz.render.html import player_html
from gradviz.render.terminal import RunReplay, step_detail
from gradviz.trace.model import OpRecord


def _losses() -> torch.trace:
    with torch.trace() as tr:
        x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.1, -0.3]], requires_grad=True)
        y = torch.tensor([2, 0])
        nll = F.nll_loss(F.log_softmax(x, 1), y)
        mse = F.mse_loss(x, torch.zeros(2, 3), reduction="sum")
        (nll + mse).backward()
    return tr


def test_the_trace_keeps_the_int_the_engine_passed():
    tr = _losses()
    kinds = {op.name: op.kwargs.get("reduction") for op in tr.ops}
    assert kinds["nll_loss"] == 1 and kinds["mse_loss"] == 2
    node = next(n for n in tr.nodes.values() if n.name == "NllLossBackward0")
    saved = {s.name: s.value for s in node.saved}
    assert saved["reduction"] == {"const": 1}  # what PyTorch's _saved_reduction returns


def test_forward_labels_name_the_reduction():
    src = draw_forward(_losses(), detail="saved").source
    assert "reduction='mean'" in src and "reduction='sum'" in src
    assert not re.search(r"reduction=\d", src)


def test_player_shows_the_call_with_the_name():
    tr = _losses()
    page = player_html(tr)
    data = json.loads(re.search(r'<script type="application/json"[^>]*>(.*?)</script>', page,
                                re.S).group(1))
    nll = next(op for op in tr.ops if op.name == "nll_loss")
    assert "reduction='mean'" in data["calls"][nll.id]
    assert data["calls"][nll.id].startswith("nll_loss(")


def test_terminal_step_detail_shows_the_call_with_the_name():
    tr = _losses()
    r = tr.run()
    k = next(s.index for s in r.steps if s.kind == "execute"
             and tr.nodes[s.node].name == "MseLossBackward0")
    con = Console(record=True, width=160, file=io.StringIO(), color_system=None)
    con.print(step_detail(tr, RunReplay(r), k))
    out = con.export_text()
    assert "made by the forward op mse_loss(" in out and "reduction='sum'" in out


def test_positional_enums_and_other_values():
    # an aten call on real PyTorch passes them by position: torch.ops.aten.mse_loss(x, y, 0)
    op = OpRecord(id="op0", name="mse_loss", inputs=["t0", "t1", {"const": 0}], outputs=["t2"])
    assert op_call(op, {"t0": "x", "t1": "y"}.get) == "mse_loss(x, y, 'none')"
    grid = OpRecord(id="op1", name="grid_sampler", outputs=["t3"],
                    inputs=["t0", "t1", {"const": 2}, {"const": 1}, {"const": False}])
    assert op_call(grid, lambda tid: tid) == "grid_sampler(t0, t1, 'bicubic', 'border', False)"
    assert enum_name("embedding_bag", "mode", 2) == "max"
    assert enum_name("mse_loss.default", 2, 1) == "mean"
    # not enums: an out-of-range int, a bool, another op's int, a non-choice string
    assert enum_name("mse_loss", "reduction", 7) is None
    assert enum_name("mse_loss", "reduction", True) is None
    assert arg_str(1, "add", "alpha") == "1"
    assert arg_str("float32", "to", "dtype") == "float32"
