"""Rows of random sampling (NOTE [random rows] in gradviz/ops/opinfo.py): the samplers and the
in-place random fills."""

from __future__ import annotations

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.derivatives.arithmetic import _not_implemented
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import P, R, Sample, W


# Sampling. PyTorch records a node for them but defines the gradient as zero: the
# sample is not differentiated.
def _zeros_sized(grad, sizes):
    return f.new_zeros(tuple(sizes), f.dtype_of(grad), f.is_tensor(grad))


# Probabilities in (0, 1), away from both ends: finite differences never flip a seeded draw.
_PROBS = [[0.15, 0.5, 0.85], [0.3, 0.7, 0.45]]
_NORMAL_FD = ("the seeded sample moves with mean and std; PyTorch defines both gradients as "
              "zero (tests/test_ops_random.py checks them)")

defop("bernoulli", "BernoulliBackward0", K.bernoulli, ("self",),
      random=True,
      doc="1 with probability ``input`` (each element), else 0; gradient zero.",
      calls=("`gradviz.bernoulli(p)`", "`.bernoulli()`"),
      samples=(Sample(W(_PROBS)), Sample(W(0.4))),
      self=lambda grad: f.zeros_like(grad))
defop("bernoulli_p", "NotImplemented", K.bernoulli_p, ("self",),
      internal="overload of bernoulli (p=): reached through gradviz.bernoulli, which picks "
               "torch's overload",
      random=True,
      doc="1 with probability ``p`` (a number), in input's shape and dtype (no derivative).",
      calls=("`gradviz.bernoulli(x, 0.3)`", "`.bernoulli(0.3)`"),
      self=_not_implemented("bernoulli"))
defop("normal_tensor_float", "NormalBackward1", K.normal_tensor_float, ("mean",),
      internal="overload of normal (a tensor mean): reached through gradviz.normal, which picks "
               "torch's overload",
      random=True,
      doc="samples of mean ``mean`` (a tensor) and std ``std`` (a number); gradient zero.",
      calls=("`gradviz.normal(mean, 2.0)`, `gradviz.normal(mean)`", ""),
      samples=(Sample(R(2, 3), std=0.5, fd=_NORMAL_FD),),
      mean=lambda grad, mean_sym_sizes: _zeros_sized(grad, mean_sym_sizes))
defop("normal_float_tensor", "NormalBackward2", K.normal_float_tensor, ("std",),
      internal="overload of normal (a tensor std): reached through gradviz.normal, which picks "
               "torch's overload",
      random=True,
      doc="samples of mean ``mean`` (a number) and std ``std`` (a tensor); gradient zero.",
      calls=("`gradviz.normal(1.0, std)`", ""),
      samples=(Sample(P(2, 3), mean=1.5, fd=_NORMAL_FD),),
      std=lambda grad, std_sym_sizes: _zeros_sized(grad, std_sym_sizes))
defop("normal_tensor_tensor", "NormalBackward3", K.normal_tensor_tensor, ("mean", "std"),
      internal="overload of normal (tensor mean and std): reached through gradviz.normal, which "
               "picks torch's overload",
      random=True,
      doc="samples of mean ``mean`` and std ``std`` (tensors, broadcast); gradients zero.",
      calls=("`gradviz.normal(mean, std)`", ""),
      samples=(Sample(R(2, 3), P(2, 3), fd=_NORMAL_FD), Sample(R(2, 1), P(3), fd=_NORMAL_FD)),
      mean=lambda grad, mean_sym_sizes: _zeros_sized(grad, mean_sym_sizes),
      std=lambda grad, std_sym_sizes: _zeros_sized(grad, std_sym_sizes))
defop("poisson", "PoissonBackward0", K.poisson, ("self",),
      random=True,
      doc="a Poisson count of rate ``input`` (each element); gradient zero.",
      calls=("`gradviz.poisson`", ""),
      samples=(Sample(P(2, 3)),),
      self=lambda grad: f.zeros_like(grad))


# The in-place random fills (NOTE [random rows] in gradviz/ops/opinfo.py); their
# gradient is zero, as fill_'s. (Their cases: tests/test_ops_gradcheck.py.)
defop("bernoulli_", "BernoulliBackward2", K.bernoulli_p, ("self",),
      random=True, calls=("", "`.bernoulli_(0.3)`"),
      self=lambda grad: f.zeros_like(grad))
defop("bernoulli_tensor_", "BernoulliBackward1", K.bernoulli_tensor_, ("self", "p"),
      internal="overload of bernoulli_ (a tensor p): reached through gradviz.bernoulli_, which "
               "picks torch's overload",
      random=True, calls=("", "`.bernoulli_(p)` with a tensor `p`"),
      hidden=("p_sym_sizes",),  # torch keeps p's type and size (`p_info`), not as `_saved_`
      self=lambda grad: f.zeros_like(grad),
      p=lambda grad, p_sym_sizes: _zeros_sized(grad, p_sym_sizes))
# The in-place random fills: the result does not depend on the input, so no gradient flows.
# random_'s three overloads are three nodes: (from, to), (to), ().
for _name, _node, _fill, _call in (
        ("exponential_", "ExponentialBackward0", K.exponential, "`.exponential_()`"),
        ("geometric_", "GeometricBackward0", K.geometric, "`.geometric_(p)`"),
        ("cauchy_", "CauchyBackward0", K.cauchy, "`.cauchy_()`"),
        ("log_normal_", "LogNormalBackward0", K.log_normal, "`.log_normal_()`"),
        ("uniform_", "UniformBackward0", K.uniform, "`.uniform_()`"),
        ("normal_", "NormalBackward0", K.normal_fill, "`.normal_()`"),
        ("random_from_", "RandomBackward0", K.random_fill, "`.random_(2, 5)`"),
        ("random_to_", "RandomBackward1", K.random_fill, "`.random_(5)`"),
        ("random_", "RandomBackward2", K.random_fill, "`.random_()`")):
    defop(_name, _node, _fill, ("self",),
          random=True, calls=("", _call),
          internal=(f"overload of random_ ({'from, to' if _name == 'random_from_' else 'to'}): "
                    "reached through Tensor.random_, which picks torch's overload")
          if _name in ("random_from_", "random_to_") else "",
          self=lambda grad: f.zeros_like(grad))
