"""gradviz.Size: what ``.shape`` and ``.size()`` return, PyTorch's ``torch.Size``."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import gradviz
from gradviz import Size


def test_shape_and_size_return_size() -> None:
    x = gradviz.zeros(2, 3)
    assert type(x.shape) is Size and type(x.size()) is Size
    assert repr(x.shape) == str(x.size()) == "gradviz.Size([2, 3])"
    assert type(x.size(1)) is int and x.size(-1) == 3
    assert repr(gradviz.tensor(1.0).shape) == "gradviz.Size([])"


def test_a_tuple_in_every_other_way() -> None:
    s = gradviz.zeros(2, 3, 4).shape
    assert s == (2, 3, 4) and (2, 3, 4) == s and hash(s) == hash((2, 3, 4))
    assert {s: 1}[(2, 3, 4)] == 1
    assert s[1:] == (3, 4) and type(s[1:]) is Size and type(s[0]) is int
    assert type(s + (5,)) is Size and type((1,) + s) is Size and type(s * 2) is Size
    assert s.numel() == 24 and Size([]).numel() == 1
    n, c, w = s
    assert (n, c, w) == (2, 3, 4)
    assert np.zeros(s).shape == (2, 3, 4)
    assert gradviz.ones(s).shape == s and gradviz.zeros(2, 3).view(Size([3, 2])).shape == (3, 2)
    assert json.dumps({"shape": s}) == '{"shape": [2, 3, 4]}'
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is Size


def test_construction_checks_ints() -> None:
    assert Size([np.int64(2), 3]) == (2, 3)
    with pytest.raises(TypeError, match=r"^torch.Size\(\) takes an iterable of 'int' \(item 0 "
                       r"is 'float'\)$"):
        Size([2.5])


