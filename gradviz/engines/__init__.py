"""Three backward engines over one graph: PyTorch's, SINGA's and MXNet's.

The graph is gradviz's own (``grad_fn``, ``next_functions``, ``AccumulateGrad``); the engines
differ only in *how they schedule* the backward nodes, and they report what they do with the same
events (:mod:`gradviz.autograd.events`), so the tracer and every renderer show each schedule.

* PyTorch: :func:`gradviz.autograd.engine.run_backward` — a ready queue by ``sequence_nr``,
  discovered while running (``Tensor.backward``, ``autograd.grad``).
* SINGA: :func:`gradviz.engines.singa.backward` — dependency counts and a LIFO deque; a
  generator that yields each parameter's gradient the moment it is final.
* MXNet: :mod:`gradviz.engines.mxnet` — ``record()``, then an explicit gradient graph (head
  gradients, backward nodes, aggregation and zero nodes, copies into ``.grad`` by ``grad_req``),
  reference-counted and run in a fixed order.

:func:`gradviz.compare_engines` (in the trace layer: it records) runs one program under all
three. ``docs/engines.md`` compares the
algorithms side by side.

Example:
    >>> import gradviz
    >>> from gradviz.engines import mxnet as mx, singa
    >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    >>> singa.gradients((x * x).sum())[x]
    tensor([2., 4.])
"""

from gradviz.engines import mxnet, singa

__all__ = ["singa", "mxnet"]
