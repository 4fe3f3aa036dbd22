"""The fast paths generated from the derivative table, checked in (NOTE [generated fast paths]
in gradviz/ops/fastpath.py).

One module per file of ``gradviz/ops/derivatives/`` (cut in parts ``<category>_1``, ``_2`` ...
where one would pass 2,000 lines), written by ``scripts/gen_fastpath.py``
(never by hand; ``tests/test_generated.py`` fails while one is stale). Each holds, row by row,
the row's fast forward (``<op>_fast``) and its node's ``apply`` and ``release_variables``, and
ends with ``FAST`` and ``NODE_METHODS``: what :func:`install` hands to the rows and their node
classes. ``gradviz.ops`` calls it when imported, unless ``GRADVIZ_FAST=0`` is set: then every
op takes the plain path (``dispatch`` and ``OpNode.apply``), for a learner to step through.
"""

from __future__ import annotations

import importlib

from gradviz.ops.dispatch import install_generated
from gradviz.ops.generated._parts import PARTS

__all__ = ["MODULES", "install"]

#: The generated modules, in the table's order (their names: ``_parts.PARTS``, written with them).
MODULES = tuple(importlib.import_module(f"{__name__}.{name}") for name in PARTS)


def install() -> None:
    """Make the generated functions the rows' fast paths (``op.fast``) and their node classes'
    ``apply`` and ``release_variables``."""
    for module in MODULES:
        install_generated(module.FAST, module.NODE_METHODS)
