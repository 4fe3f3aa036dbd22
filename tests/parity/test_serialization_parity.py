"""``gradviz.save``/``load`` beside ``torch.save``/``load``: a state_dict saved by each holds the
same keys and values, and a PyTorch checkpoint is refused by name."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

import gradviz
from gradviz import nn


def test_same_state_dict_as_torch_saves(tmp_path: Path) -> None:
    gradviz.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 2))
    sd = {k: v.numpy() for k, v in model.state_dict().items()}
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 2))
    tmodel.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
    torch.save(tmodel.state_dict(), tmp_path / "t.pt")
    with pytest.raises(pickle.UnpicklingError, match="PyTorch checkpoint"):
        gradviz.load(tmp_path / "t.pt")
    gradviz.save(model.state_dict(), tmp_path / "g.pt")
    back = gradviz.load(tmp_path / "g.pt")
    ref = torch.load(tmp_path / "t.pt", weights_only=True)
    assert list(back) == list(ref)
    for k in ref:
        np.testing.assert_array_equal(back[k].numpy(), ref[k].numpy())
