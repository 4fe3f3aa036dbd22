"""Parity tests compare gradviz with PyTorch and need torch (the ``parity`` extra).

NOTE [parity marker] Without torch, tests marked ``parity`` are *deselected* (reported as such,
never silently passed) -- unless ``GRADVIZ_PARITY=1``, which demands them: then they are kept and
fail loudly on ``import torch``. The hook looks at every collected item, so it covers parity
tests anywhere in the suite.
"""

from __future__ import annotations

import importlib.util
import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if importlib.util.find_spec("torch") is not None:
        return
    if os.environ.get("GRADVIZ_PARITY", "") == "1":
        return  # required: let them run and fail on the missing torch
    parity = [item for item in items if item.get_closest_marker("parity") is not None]
    if parity:
        config.hook.pytest_deselected(items=parity)
        items[:] = [item for item in items if item.get_closest_marker("parity") is None]
