"""Forwards of the nodes only an in-place call records: zero_, fill_, copy_."""

from __future__ import annotations

import numpy as np


def zero(a):
    return np.zeros_like(a)


def fill(a, value):
    return np.full_like(a, value)


def copy(a, src):
    return np.broadcast_to(src, a.shape)


def fill_tensor(a, v):
    return np.full_like(a, v)
