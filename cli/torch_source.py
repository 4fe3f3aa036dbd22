"""Recording real PyTorch into a gradviz ``Trace`` for the CLI.

The recording itself is the trace layer's torch source (``gradviz/trace/torch_source.py``:
forward ops through ``TorchFunctionMode``, the ``grad_fn`` graph, the real engine's steps through
node hooks attached for each backward call and removed after). The CLI reaches it through this
one function so that ``gradviz trace`` and ``gradviz compare`` record torch the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from gradviz.trace import Trace


@contextlib.contextmanager
def torch_recording(values: str = "small", keep_runs: int | str | None = None,
                    name: str | None = None, keep_run: int | None = None) -> Iterator[Trace]:
    """Record the real PyTorch code run inside into a :class:`~gradviz.trace.Trace`.

    ``torch=True``: the script imports torch inside the block, so the recorder must not wait
    for an import that happened before it (``gradviz.trace``'s default).

    Example:
        >>> import torch  # doctest: +SKIP
        >>> with torch_recording() as tr:  # doctest: +SKIP
        ...     x = torch.ones(2, requires_grad=True)
        ...     (x * 3).sum().backward()
        >>> [n.name for n in tr.nodes.values()]  # doctest: +SKIP
        ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    import gradviz

    with gradviz.trace(values=values, keep_runs=keep_runs, name=name, keep_run=keep_run,
                       torch=True) as tr:
        yield tr
