"""The op library: the derivative table, its dispatch point, and the functional API."""

from gradviz.ops.derivatives import OPS, OpInfo

__all__ = ["OPS", "OpInfo"]
