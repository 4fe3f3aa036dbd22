"""The op layer: the derivative table, its dispatch point, and the API generated from the table.

* :mod:`gradviz.ops.derivatives`: the table, one row per op (node name, formulas, saved values);
* :mod:`gradviz.ops._kernels`: the NumPy forwards the rows name;
* :mod:`gradviz.ops.dispatch`: the one dispatch point that runs a row and records its node;
* :mod:`gradviz.ops.functional` and :mod:`gradviz.ops.methods`: the functional forms and
  ``Tensor`` methods, hand-written where PyTorch's argument handling needs it and generated from
  the row (:mod:`gradviz.ops.api`) where it does not.

Importing this package installs the ``Tensor`` methods and operators: the core layer below
(``gradviz.tensor``) does not import the op layer.

Adding an op is one row and its samples, through :func:`defop` (docs/ops.md, "Add an op").
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from gradviz.ops import api, derivatives, dispatch, functional, methods
from gradviz.ops.opinfo import OPS, OpInfo
from gradviz.ops.opinfo import defop as _declare
from gradviz.tensor import Tensor

__all__ = ["OPS", "OpInfo", "defop", "remove_op", "derivatives", "functional", "generated_source",
           "FAST"]

#: Whether the rows run their generated fast paths (gradviz/ops/generated/). ``GRADVIZ_FAST=0``
#: in the environment, read once here, turns them off: every op then takes the plain path
#: (``dispatch`` and ``OpNode.apply``), the one a learner steps through (docs/ops.md).
FAST = os.environ.get("GRADVIZ_FAST", "1").strip() != "0"

# Node classes and fast paths first, then the generated API: the hand-written operators refer to
# it (``__neg__`` is ``neg``), and both read ``op.fast`` once.
for _op in OPS.values():
    dispatch.specialise(_op)
if FAST:
    from gradviz.ops import generated

    generated.install()
for _op in OPS.values():
    api.publish(_op)
# torch's linear algebra functions (gradviz/ops/_linalg.py builds on functional,
# so it is loaded after it and adds its functions to it here, before the methods refer to them).
from gradviz.ops import _linalg  # noqa: E402

for _name, _fn in _linalg.TORCH_NAMESPACE.items():
    _fn.__name__ = _fn.__qualname__ = _name  # torch.svd is _linalg.torch_svd
    setattr(functional, _name, _fn)
    functional.__all__.append(_name)
# torch.trace, the matrix op, is functional.trace but stays out of functional.__all__ (which
# gradviz/__init__.py exports): gradviz.trace is the tracer's entry point, and it hands a tensor
# first argument to this function (gradviz/trace/recorder.py).
functional.trace = _linalg.trace
methods.install(Tensor)


def defop(name: str, node: str | None, forward: Callable[..., Any], inputs: tuple[str, ...],
          **fields: Any) -> OpInfo:
    """Add a row to the derivative table and publish the API it asks for, all at once.

    Takes the arguments of :func:`gradviz.ops.opinfo.defop`. With ``function=``, the function
    is reachable as ``gradviz.<function>`` right away (and ``Tensor.<function>`` with
    ``method=True``); ``docs/ops.md`` lists the row once ``scripts/gen_ops_doc.py`` is rerun.

    Example:
        >>> import numpy as np, gradviz
        >>> from gradviz.ops import defop, OPS
        >>> _ = defop("cube_demo", "CubeDemoBackward0", lambda a: a ** 3, ("self",),
        ...           function="cube_demo", method=True,
        ...           self=lambda grad, self: grad * 3 * self * self)
        >>> x = gradviz.tensor([2.0], requires_grad=True)
        >>> y = x.cube_demo(); y.backward(); y.grad_fn.name(), x.grad
        ('CubeDemoBackward0', tensor([12.]))
        >>> remove_op("cube_demo")
    """
    op = _declare(name, node, forward, inputs, **fields)
    dispatch.specialise(op)
    api.publish(op)
    return op


def remove_op(name: str) -> None:
    """Remove a row added with :func:`defop`, and the API it published (for experiments and
    tests that add an op and want the table back as it was).

    Example:
        >>> import numpy as np
        >>> _ = defop("half_demo", "HalfDemoBackward0", lambda a: a / 2, ("self",),
        ...           self=lambda grad: grad / 2)
        >>> remove_op("half_demo"); "half_demo" in OPS
        False
    """
    api.unpublish(OPS.pop(name))


def generated_source(name: str) -> str:
    """The Python source generated from row ``name``: its fast path (the forward that records
    the node) and its node class's ``apply`` and ``release_variables``, with the formulas of
    the row copied in (NOTE [generated fast paths] in ``gradviz/ops/fastpath.py``).

    Example:
        >>> src = generated_source("mul")
        >>> src.splitlines()[0]
        'def mul_fast(a, b, **kwargs):'
        >>> "_g_0 = grad * other" in src
        True
    """
    from gradviz.ops import fastpath  # the code writer: not needed to run the generated code

    op = OPS[name]
    parts = []
    if fastpath.eligible(op):
        parts.append(fastpath.forward_source(op, f"{name}_op"))
    if fastpath.has_node_methods(op):
        parts.append(fastpath.node_source(op, f"{name}_")[0])
    if not parts:
        raise ValueError(f"{name!r}: no code is generated for this row (it takes the general "
                         "dispatch path: a list input, or inputs it cannot save)")
    return "\n\n".join(parts)
