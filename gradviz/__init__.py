"""gradviz: see automatic differentiation.

An autograd engine on NumPy whose internals are PyTorch's, spelled the same way
(``grad_fn``, ``next_functions``, ``AccumulateGrad.variable``, custom ``Function`` with ``ctx``),
so that code written for ``torch`` (within gradviz's op set) runs with ``import gradviz as torch``.

Example:
    >>> import gradviz as torch
    >>> x = torch.rand(5, 5, requires_grad=True)
    >>> z = torch.sum(x + x)
    >>> z.grad_fn.name(), z.grad_fn.next_functions[0][0].name()
    ('SumBackward0', 'AddBackward0')
"""

from __future__ import annotations

# Import order matters: autograd pulls in the Tensor class, which then installs its methods.
from gradviz import autograd, return_types  # noqa: I001
from gradviz._dtype import (
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    uint8,
)
from gradviz._factories import (
    arange,
    as_tensor,
    empty,
    eye,
    from_numpy,
    full,
    initial_seed,
    linspace,
    manual_seed,
    ones,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    seed,
    tensor,
    zeros,
)
from gradviz.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from gradviz.engines import compare_engines
from gradviz.ops.functional import (
    abs,
    absolute,
    add,
    addmm,
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    bmm,
    cat,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    clone,
    concat,
    concatenate,
    cos,
    div,
    divide,
    dot,
    eq,
    equal,
    erf,
    exp,
    expand,
    expm1,
    flatten,
    full_like,
    gather,
    ge,
    ger,
    gt,
    index_put,
    index_select,
    isfinite,
    isinf,
    isnan,
    le,
    log,
    log1p,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logsumexp,
    lt,
    masked_fill,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    mul,
    multiply,
    mv,
    narrow,
    ne,
    neg,
    negative,
    norm,
    ones_like,
    outer,
    permute,
    pow,
    prod,
    reciprocal,
    relu,
    reshape,
    rsqrt,
    rsub,
    scatter,
    scatter_add,
    select,
    sigmoid,
    sign,
    sin,
    softmax,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    sub,
    subtract,
    sum,
    swapaxes,
    t,
    tanh,
    transpose,
    true_divide,
    unbind,
    unsqueeze,
    var,
    where,
    zeros_like,
)

# Renderers: cheap to import (graphviz, pygraphviz and rich load inside the functions).
from gradviz.render import draw_backward, draw_both, draw_forward, draw_step, print_graph, show
from gradviz.tensor import Tensor
from gradviz.trace import graph_of, load_trace, trace

__version__ = "0.1.0"

Size = tuple  # gradviz shapes are plain tuples; `gradviz.Size([2, 3])` builds one

# Last: the layers and optimizers build on everything above (`gradviz.nn.Linear`, `gradviz.optim`).
from gradviz import nn, optim  # noqa: E402

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
