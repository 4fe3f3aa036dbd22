"""``gradviz.Size`` is ``torch.Size``: repr, equality, hash, ``numel`` and slicing agree."""

from __future__ import annotations

import torch

import gradviz


def test_matches_torch_size() -> None:
    for shape in [(), (2,), (2, 3, 4)]:
        g, t = gradviz.zeros(shape).shape, torch.zeros(shape).shape
        assert repr(g).replace("gradviz", "torch") == repr(t)
        assert g == t and hash(g) == hash(t) and g.numel() == t.numel()
        assert repr(g[1:]).replace("gradviz", "torch") == repr(t[1:])
