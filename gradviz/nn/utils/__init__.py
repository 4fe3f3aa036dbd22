"""``gradviz.nn.utils``: gradient clipping and flattening parameters, as ``torch.nn.utils``.

Example:
    >>> import gradviz
    >>> from gradviz import nn
    >>> p = nn.Parameter(gradviz.tensor([3.0, 4.0]))
    >>> p.grad = gradviz.tensor([3.0, 4.0])
    >>> nn.utils.clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6000, 0.8000])
"""

from gradviz.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from gradviz.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]
