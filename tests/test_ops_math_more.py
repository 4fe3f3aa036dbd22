"""PyTorch's elementwise math ops in gradviz: values, dtypes, special values, error texts, the
node each call records and its saved names, and gradients at the points where they are defined
by convention (a tie, a clamp, a zero, a value that is not finite).

The expectations are torch 2.13.0's (CPU), read off it for the same sources;
``tests/parity/test_math_more_parity.py`` derives them again from a live torch. ``m`` is the
module (gradviz here, torch there); ``x``, ``y``, ``w`` are float64 leaves that require grad and
``c`` a float64 constant (:func:`env`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradviz


def env(m: Any = gradviz) -> dict[str, Any]:
    """Fresh inputs for one source: ``m`` and the leaves it reads."""
    def leaf(v: list[float]) -> Any:
        return m.tensor(v, dtype=m.float64, requires_grad=True)

    return {"m": m, "x": leaf([0.3, -0.7, 0.2]), "y": leaf([0.5, 0.9, 0.4]),
            "w": leaf([0.1, 0.6, 0.3]), "c": m.tensor([0.25, 1.5, 0.75], dtype=m.float64)}


def run(src: str, m: Any = gradviz) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, env(m))  # noqa: S307 - sources written in this file


inf, nan = math.inf, math.nan  # as the expected values below spell them

# (source, dtype name, values) as torch 2.13 gives them
VALUES = [
    ('m.floor(m.tensor([-1.5, -0.5, 0.5, 1.5]))',
     'float32', [-2.0, -1.0, 0.0, 1.0]),
    ('m.ceil(m.tensor([-1.5, -0.5, 0.5, 1.5]))',
     'float32', [-1.0, -0.0, 1.0, 2.0]),
    ('m.trunc(m.tensor([-1.5, -0.5, 0.5, 1.5]))',
     'float32', [-1.0, -0.0, 0.0, 1.0]),
    ('m.fix(m.tensor([-1.5, 2.5]))',
     'float32', [-1.0, 2.0]),
    ('m.round(m.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]))',
     'float32', [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]),
    ('m.round(m.tensor([1.2345, 2.5, -0.125, 12345.678]), decimals=2)',
     'float32', [1.2300000190734863, 2.5, -0.11999999731779099, 12345.6796875]),
    ('m.round(m.tensor([1234.5, 250.0, -1250.0], dtype=m.float64), decimals=-2)',
     'float64', [1200.0, 200.0, -1200.0]),
    ('m.floor(m.tensor([3, -2, 0]))',
     'int64', [3, -2, 0]),
    ('m.ceil(m.tensor([3, -2], dtype=m.int32))',
     'int32', [3, -2]),
    ('m.round(m.tensor([3, -2], dtype=m.uint8))',
     'uint8', [3, 254]),
    ('m.trunc(m.tensor([1.5, -2.5], dtype=m.float16))',
     'float16', [1.0, -2.0]),
    ('m.frac(m.tensor([-1.25, 2.5, 3.0], dtype=m.float64))',
     'float64', [-0.25, 0.5, 0.0]),
    ('m.tensor([-1.7, 1.7]).floor_()',
     'float32', [-2.0, 1.0]),
    ('m.tensor([1.25, 2.5]).round_(decimals=1)',
     'float32', [1.2000000476837158, 2.5]),
    ('m.log2(m.tensor([1.0, 8.0, 0.5, 0.0, -1.0]))',
     'float32', [0.0, 3.0, -1.0, -inf, nan]),
    ('m.log2(m.tensor([1, 4, 1024]))',
     'float32', [0.0, 2.0, 10.0]),
    ('m.log10(m.tensor([1.0, 100.0, 0.001], dtype=m.float64))',
     'float64', [0.0, 2.0, -3.0]),
    ('m.log10(m.tensor([True, False]))',
     'float32', [0.0, -inf]),
    ('m.exp2(m.tensor([0.0, 3.0, -1.0, 0.5], dtype=m.float64))',
     'float64', [1.0, 8.0, 0.5, 1.4142135623730951]),
    ('m.exp2(m.tensor([0, 10]))',
     'float32', [1.0, 1024.0]),
    ('m.tan(m.tensor([0.0, 0.5, -1.0], dtype=m.float64))',
     'float64', [0.0, 0.5463024898437905, -1.5574077246549023]),
    ('m.sinh(m.tensor([0.0, 1.0, -2.0], dtype=m.float64))',
     'float64', [0.0, 1.1752011936438014, -3.626860407847019]),
    ('m.cosh(m.tensor([0.0, 1.0, -2.0], dtype=m.float64))',
     'float64', [1.0, 1.5430806348152437, 3.7621956910836314]),
    ('m.asin(m.tensor([0.0, 0.5, 1.0, 1.5], dtype=m.float64))',
     'float64', [0.0, 0.5235987755982989, 1.5707963267948966, nan]),
    ('m.acos(m.tensor([1.0, 0.5, -1.0, -1.5], dtype=m.float64))',
     'float64', [0.0, 1.0471975511965976, 3.141592653589793, nan]),
    ("m.atan(m.tensor([0.0, 1.0, float('inf')], dtype=m.float64))",
     'float64', [0.0, 0.7853981633974483, 1.5707963267948966]),
    ('m.arcsin(m.tensor([0.5], dtype=m.float64))',
     'float64', [0.5235987755982989]),
    ('m.arctan(m.tensor([1, 0]))',
     'float32', [0.7853981852531433, 0.0]),
    ('m.asinh(m.tensor([0.0, 1.0], dtype=m.float64))',
     'float64', [0.0, 0.881373587019543]),
    ('m.acosh(m.tensor([1.0, 2.0, 0.5], dtype=m.float64))',
     'float64', [0.0, 1.3169578969248166, nan]),
    ('m.atanh(m.tensor([0.0, 0.5, 1.0, 2.0], dtype=m.float64))',
     'float64', [0.0, 0.5493061443340548, inf, nan]),
    ('m.tensor([0.0, 1.0]).tan_()',
     'float32', [0.0, 1.5574077367782593]),
    ('m.logit(m.tensor([0.0, 0.25, 0.5, 1.0, -1.0, 2.0], dtype=m.float64))',
     'float64', [-inf, -1.0986122886681098, 0.0, inf, nan, nan]),
    ('m.logit(m.tensor([0.0, 0.25, 0.5, 1.0, -1.0], dtype=m.float64), eps=0.1)',
     'float64', [-2.197224577336219, -1.0986122886681098, 0.0, 2.1972245773362196, -2.197224577336219]),  # noqa: E501 - torch's message, verbatim
    ('m.logit(m.tensor([0.0, 0.5, 2.0], dtype=m.float64), -0.5)',
     'float64', [-inf, 0.0, nan]),
    ('m.logit(m.tensor([1, 0]))',
     'float32', [inf, -inf]),
    ("m.nan_to_num(m.tensor([float('nan'), float('inf'), -float('inf'), 1.5]))",
     'float32', [0.0, 3.4028234663852886e+38, -3.4028234663852886e+38, 1.5]),
    ("m.nan_to_num(m.tensor([float('nan'), float('inf'), -float('inf')], dtype=m.float64))",
     'float64', [0.0, 1.7976931348623157e+308, -1.7976931348623157e+308]),
    ("m.nan_to_num(m.tensor([float('nan'), float('inf'), -float('inf')], dtype=m.float16))",
     'float16', [0.0, 65504.0, -65504.0]),
    ("m.nan_to_num(m.tensor([float('nan'), float('inf'), -float('inf'), 1.0]), 1.0, 2.0, -3.0)",
     'float32', [1.0, 2.0, -3.0, 1.0]),
    ("m.nan_to_num(m.tensor([float('inf'), -float('inf')]), posinf=9.0)",
     'float32', [9.0, -3.4028234663852886e+38]),
    ('m.nan_to_num(m.tensor([1, 2]), nan=5.0)',
     'int64', [1, 2]),
    ("m.tensor([float('nan'), 2.0]).nan_to_num_(nan=-1.0)",
     'float32', [-1.0, 2.0]),
    ('m.atan2(m.tensor([1.0, 1.0, -1.0, -1.0, 0.0], dtype=m.float64), m.tensor([1.0, -1.0, 1.0, -1.0, -1.0], dtype=m.float64))',  # noqa: E501 - torch's message, verbatim
     'float64', [0.7853981633974483, 2.356194490192345, -0.7853981633974483, -2.356194490192345, 3.141592653589793]),  # noqa: E501 - torch's message, verbatim
    ('m.atan2(m.tensor([1, -2]), m.tensor([2, 3], dtype=m.int32))',
     'float32', [0.46364760398864746, -0.588002622127533]),
    ('m.arctan2(m.tensor([True]), m.tensor([False]))',
     'float32', [1.5707963705062866]),
    ('m.atan2(m.ones(2, 1), m.tensor([1.0, -1.0]))',
     'float32', [[0.7853981852531433, 2.356194496154785], [0.7853981852531433, 2.356194496154785]]),
    ('m.hypot(m.tensor([3.0, 5.0]), m.tensor([4.0, 12.0]))',
     'float32', [5.0, 13.0]),
    ('m.hypot(m.tensor([3, 5]), m.tensor([4.0, 12.0]))',
     'float32', [5.0, 13.0]),
    ('m.fmod(m.tensor([-3.0, 3.0, -3.0, 3.0]), m.tensor([2.0, -2.0, -2.0, 2.0]))',
     'float32', [-1.0, 1.0, -1.0, 1.0]),
    ('m.fmod(m.tensor([-3, 3, 7]), 2)',
     'int64', [-1, 1, 1]),
    ('m.fmod(m.tensor([5.5, -5.5]), 2)',
     'float32', [1.5, -1.5]),
    ('m.fmod(m.tensor([1.0, -1.0]), 0)',
     'float32', [nan, nan]),
    ('m.fmod(m.tensor([7, -7]), m.tensor([2.5, 2.5]))',
     'float32', [2.0, -2.0]),
    ('m.tensor([-3.0, 3.0]).fmod_(2)',
     'float32', [-1.0, 1.0]),
    ("m.fmax(m.tensor([float('nan'), 1.0, float('nan'), 2.0]), m.tensor([2.0, float('nan'), float('nan'), 1.0]))",  # noqa: E501 - torch's message, verbatim
     'float32', [2.0, 1.0, nan, 2.0]),
    ("m.fmin(m.tensor([float('nan'), 1.0, float('nan'), 2.0]), m.tensor([2.0, float('nan'), float('nan'), 1.0]))",  # noqa: E501 - torch's message, verbatim
     'float32', [2.0, 1.0, nan, 1.0]),
    ('m.fmax(m.tensor([1, 5]), m.tensor([3, 2]))',
     'int64', [3, 5]),
    ('m.fmin(m.tensor([True, False]), m.tensor([False, False]))',
     'bool', [False, False]),
    ("m.xlogy(m.tensor([0.0, 0.0, 1.0, float('nan'), 2.0], dtype=m.float64), m.tensor([0.0, float('nan'), 0.0, 1.0, 3.0], dtype=m.float64))",  # noqa: E501 - torch's message, verbatim
     'float64', [0.0, nan, -inf, nan, 2.1972245773362196]),
    ('m.xlogy(m.tensor([1, 2]), m.tensor([3, 4]))',
     'float32', [1.0986123085021973, 2.7725887298583984]),
    ('m.xlogy(2.0, m.tensor([1.0, 4.0], dtype=m.float64))',
     'float64', [0.0, 2.772588722239781]),
    ('m.xlogy(m.tensor([0.0, 2.0]), 4)',
     'float32', [0.0, 2.7725887298583984]),
    ('m.tensor([0.0, 2.0]).xlogy_(m.tensor([5.0, 2.0]))',
     'float32', [0.0, 1.3862943649291992]),
    ('m.heaviside(m.tensor([-2.0, 0.0, 3.0]), m.tensor([0.5]))',
     'float32', [0.0, 0.5, 1.0]),
    ('m.heaviside(m.tensor([-2, 0, 3]), m.tensor([7, 8, 9]))',
     'int64', [0, 8, 1]),
    ('m.tensor([-1.0, 0.0]).heaviside_(m.tensor(0.25))',
     'float32', [0.0, 0.25]),
    ('m.lerp(m.tensor([0.0, 10.0]), m.tensor([10.0, 20.0]), 0.25)',
     'float32', [2.5, 12.5]),
    ('m.lerp(m.tensor([0.0, 10.0], dtype=m.float64), m.tensor([10.0, 20.0], dtype=m.float64), m.tensor([0.0, 1.0], dtype=m.float64))',  # noqa: E501 - torch's message, verbatim
     'float64', [0.0, 20.0]),
    ('m.lerp(m.zeros(2, 1), m.ones(3), m.tensor(0.75))',
     'float32', [[0.75, 0.75, 0.75], [0.75, 0.75, 0.75]]),
    ('m.lerp(m.tensor([1.0, 2.0]), m.tensor([2.0, 3.0]), m.tensor(0.5, dtype=m.float64))',
     'float32', [1.5, 2.5]),
    ('m.atan2(m.tensor([1.0, 2.0]), m.tensor(2.0, dtype=m.float64))',
     'float32', [0.46364760398864746, 0.7853981852531433]),
    ('m.fmod(m.tensor([5, 7]), m.tensor(2.5))',
     'float32', [0.0, 2.0]),
    ('m.lerp(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0]), 1)',
     'float32', [3.0, 4.0]),
    ('m.tensor([0.0, 4.0]).lerp_(m.tensor([8.0, 8.0]), 0.5)',
     'float32', [4.0, 6.0]),
    ('m.addcmul(m.ones(2), m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0]), value=0.5)',
     'float32', [2.5, 5.0]),
    ('m.addcmul(m.tensor([3, -2]), m.tensor([3, -2]), m.tensor([3, -2]), value=2)',
     'int64', [21, 6]),
    ('m.addcmul(m.tensor([3, -2]), m.tensor([3, -2]), m.tensor([3, -2]), value=0.5)',
     'int64', [3, -2]),
    ('m.addcmul(m.tensor([1.5, -2.5]), m.tensor([3, -2]), m.tensor([3, -2]), value=0.5)',
     'float32', [6.0, -0.5]),
    ('m.addcmul(m.zeros(3), m.ones(2, 1), m.ones(3))',
     'float32', [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
    ('m.addcdiv(m.ones(2), m.tensor([1.0, 2.0]), m.tensor([4.0, 4.0]), value=2)',
     'float32', [1.5, 2.0]),
    ('m.addcdiv(m.tensor([1, 2]), m.tensor([1.0, 2.0]), m.tensor([4, 8]))',
     'float32', [1.25, 2.25]),
    ('m.tensor([1.0, 2.0]).addcmul_(m.tensor([2.0, 2.0]), m.tensor([3.0, 0.5]), value=-1)',
     'float32', [-5.0, 1.0]),
    ('m.tensor([1.0, 2.0]).addcdiv_(m.tensor([2.0, 2.0]), m.tensor([4.0, 0.5]))',
     'float32', [1.5, 6.0]),
]

# (source, exception type name, message) as torch 2.13 raises them
ERRORS = [
    ('m.floor(m.tensor([True, False]))',
     'NotImplementedError', '"floor_vml_cpu" not implemented for \'Bool\''),
    ('m.ceil(m.tensor([True]))',
     'NotImplementedError', '"ceil_vml_cpu" not implemented for \'Bool\''),
    ('m.round(m.tensor([True]))',
     'NotImplementedError', '"round_vml_cpu" not implemented for \'Bool\''),
    ('m.trunc(m.tensor([True]))',
     'NotImplementedError', '"trunc_vml_cpu" not implemented for \'Bool\''),
    ('m.round(m.tensor([1, 2]), decimals=1)',
     'NotImplementedError', '"round_cpu" not implemented for \'Long\''),
    ('m.frac(m.tensor([1, 2]))',
     'NotImplementedError', '"frac_cpu" not implemented for \'Long\''),
    ('m.frac(m.tensor([True]))',
     'NotImplementedError', '"frac_cpu" not implemented for \'Bool\''),
    ('m.tensor([1, 2]).log2_()',
     'RuntimeError', "result type Float can't be cast to the desired output type Long"),
    ('m.tensor([1, 2]).tan_()',
     'RuntimeError', "result type Float can't be cast to the desired output type Long"),
    ('m.tensor([1, 2]).frac_()',
     'NotImplementedError', '"frac_cpu" not implemented for \'Long\''),
    ('m.atan2(m.tensor([1.0]), 2.0)',
     'TypeError', "atan2(): argument 'other' (position 2) must be Tensor, not float"),
    ('m.atan2(2.0, m.tensor([1.0]))',
     'TypeError', "atan2(): argument 'input' (position 1) must be Tensor, not float"),
    ('m.hypot(m.tensor([1.0]), 2)',
     'TypeError', "hypot(): argument 'other' (position 2) must be Tensor, not int"),
    ('m.hypot(m.tensor([1, 2]), m.tensor([3, 4]))',
     'NotImplementedError', '"hypot_cpu" not implemented for \'Long\''),
    ('m.hypot(m.tensor([True]), m.tensor([True]))',
     'NotImplementedError', '"hypot_cpu" not implemented for \'Bool\''),
    ('m.fmax(m.tensor([1.0]), 2.0)',
     'TypeError', "fmax(): argument 'other' (position 2) must be Tensor, not float"),
    ('m.fmin(2.0, m.tensor([1.0]))',
     'TypeError', "fmin(): argument 'input' (position 1) must be Tensor, not float"),
    ('m.heaviside(m.tensor([1.0]), 0.5)',
     'TypeError', "heaviside(): argument 'values' (position 2) must be Tensor, not float"),
    ('m.heaviside(m.tensor([1.0]), m.tensor([1]))',
     'RuntimeError', 'heaviside is not yet implemented for tensors with different dtypes.'),
    ('m.fmod(m.tensor([1, 2]), 0)',
     'RuntimeError', 'ZeroDivisionError'),
    ('m.fmod(m.tensor([1, 2]), m.tensor([0, 1]))',
     'RuntimeError', 'ZeroDivisionError'),
    ('m.fmod(m.tensor([True]), m.tensor([True]))',
     'NotImplementedError', '"fmod_cpu" not implemented for \'Bool\''),
    ('m.fmod(2.0, m.tensor([1.0]))',
     'TypeError', 'fmod() received an invalid combination of arguments - got (float, Tensor), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n'),  # noqa: E501 - torch's message, verbatim
    ("m.fmod(m.tensor([1.0]), 'a')",
     'TypeError', 'fmod() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n'),  # noqa: E501 - torch's message, verbatim
    ('m.xlogy(2.0, 3.0)',
     'TypeError', 'xlogy() received an invalid combination of arguments - got (float, float), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n'),  # noqa: E501 - torch's message, verbatim
    ('m.lerp(m.tensor([1, 2]), m.tensor([3, 4]), 0.5)',
     'NotImplementedError', '"lerp_kernel_scalar" not implemented for \'Long\''),
    ('m.lerp(m.tensor([1.0]), m.tensor([2.0], dtype=m.float64), 0.5)',
     'RuntimeError', 'expected dtype float for `end` but got dtype double'),
    ('m.lerp(m.tensor([1.0]), m.tensor([2.0]), m.tensor([0.5], dtype=m.float64))',
     'RuntimeError', 'expected dtype float for `weight` but got dtype double'),
    ('m.lerp(m.tensor([1.0]), 2.0, 0.5)',
     'TypeError', 'lerp() received an invalid combination of arguments - got (Tensor, float, float), but expected one of:\n * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n'),  # noqa: E501 - torch's message, verbatim
    ("m.lerp(m.tensor([1.0]), m.tensor([2.0]), 'a')",
     'TypeError', 'lerp() received an invalid combination of arguments - got (Tensor, Tensor, str), but expected one of:\n * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n'),  # noqa: E501 - torch's message, verbatim
    ('m.addcmul(m.tensor([1.0]), m.tensor([1.0]), 2.0)',
     'TypeError', "addcmul(): argument 'tensor2' (position 3) must be Tensor, not float"),
    ('m.addcmul(m.tensor([1.0]), 2.0, m.tensor([1.0]))',
     'TypeError', "addcmul(): argument 'tensor1' (position 2) must be Tensor, not float"),
    ('m.addcmul(m.tensor([True]), m.tensor([True]), m.tensor([True]))',
     'NotImplementedError', '"addcmul_cpu_out" not implemented for \'Bool\''),
    ('m.addcdiv(m.tensor([1.0]), m.tensor([1]), m.tensor([2]))',
     'RuntimeError', 'Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.'),  # noqa: E501 - torch's message, verbatim
    ('m.tensor([1.0, 2.0]).addcmul_(m.ones(2, 2), m.ones(2))',
     'RuntimeError', "output with shape [2] doesn't match the broadcast shape [2, 2]"),
    # a 0-dim operand of another dtype: refused, though dispatch would cast it
    ('m.lerp(m.tensor([1.0, 2.0]), m.tensor(3.0, dtype=m.float64), 0.5)',
     'RuntimeError', 'expected dtype float for `end` but got dtype double'),
    ('m.heaviside(m.tensor([1.0, 2.0]), m.tensor(2.0, dtype=m.float64))',
     'RuntimeError', 'heaviside is not yet implemented for tensors with different dtypes.'),
    # the method forms count positions without self, as torch's parser does
    ('m.ones(2).atan2(2.0)',
     'TypeError', "atan2(): argument 'other' (position 1) must be Tensor, not float"),
    ('m.ones(2).atan2_(2.0)',
     'TypeError', "atan2_(): argument 'other' (position 1) must be Tensor, not float"),
    ('m.ones(2).hypot_(2)',
     'TypeError', "hypot_(): argument 'other' (position 1) must be Tensor, not int"),
    ('m.ones(2).heaviside(0.5)',
     'TypeError', "heaviside(): argument 'values' (position 1) must be Tensor, not float"),
    ('m.ones(2).addcmul_(m.ones(2), 2.0)',
     'TypeError', "addcmul_(): argument 'tensor2' (position 2) must be Tensor, not float"),
    ('m.ones(2).addcdiv(2.0, m.ones(2))',
     'TypeError', "addcdiv(): argument 'tensor1' (position 1) must be Tensor, not float"),
    ('m.ones(2).fmin(1)',
     'TypeError', "fmin(): argument 'other' (position 1) must be Tensor, not int"),
    ('m.ones(2).atan2()',
     'TypeError', 'atan2() missing 1 required positional arguments: "other"'),
    ('m.atan2(m.ones(2, 3), m.ones(4))',
     'RuntimeError', 'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1'),  # noqa: E501 - torch's message, verbatim
]

# (source, node name, saved names: the `_saved_*` attributes of the node) as torch 2.13
# records them
GRAPHS = [
    ('m.floor(x)', 'FloorBackward0', []),
    ('m.ceil(x)', 'CeilBackward0', []),
    ('m.trunc(x)', 'TruncBackward0', []),
    ('m.fix(x)', 'TruncBackward0', []),
    ('m.frac(x)', 'FracBackward0', []),
    ('m.round(x)', 'RoundBackward0', []),
    ('m.round(x, decimals=0)', 'RoundBackward1', []),
    ('m.round(x, decimals=2)', 'RoundBackward1', []),
    ('m.log2(x)', 'Log2Backward0', ['self']),
    ('m.log10(x)', 'Log10Backward0', ['self']),
    ('m.exp2(x)', 'Exp2Backward0', ['result']),
    ('m.sinh(x)', 'SinhBackward0', ['self']),
    ('m.cosh(x)', 'CoshBackward0', ['self']),
    ('m.tan(x)', 'TanBackward0', ['result']),
    ('m.asin(x)', 'AsinBackward0', ['self']),
    ('m.arccos(x)', 'AcosBackward0', ['self']),
    ('m.atan(x)', 'AtanBackward0', ['self']),
    ('m.asinh(x)', 'AsinhBackward0', ['self']),
    ('m.arccosh(x + 2)', 'AcoshBackward0', ['self']),
    ('m.atanh(x)', 'AtanhBackward0', ['self']),
    ('m.logit(x)', 'LogitBackward0', ['eps', 'self']),
    ('m.logit(x, eps=0.1)', 'LogitBackward0', ['eps', 'self']),
    ('m.nan_to_num(x)', 'NanToNumBackward0', ['self']),
    ('m.atan2(x, y)', 'Atan2Backward0', ['other', 'self']),
    ('m.atan2(x, c)', 'Atan2Backward0', ['other', 'self']),
    ('m.arctan2(c, y)', 'Atan2Backward0', ['other', 'self']),
    ('m.hypot(x, y)', 'HypotBackward0', ['other', 'result', 'self']),
    ('m.hypot(c, y)', 'HypotBackward0', ['other', 'result', 'self']),
    ('m.fmod(x, 2.5)', 'FmodBackward0', []),
    ('m.fmod(x, y)', 'FmodBackward1', ['other', 'self']),
    ('m.fmod(x, c)', 'FmodBackward1', ['other', 'self']),
    ('m.fmod(c, y)', 'FmodBackward1', ['other', 'self']),
    ('m.fmax(x, y)', 'FmaxBackward0', ['other', 'self']),
    ('m.fmin(x, c)', 'FminBackward0', ['other', 'self']),
    ('m.xlogy(x, y)', 'XlogyBackward0', ['other', 'self']),
    ('m.xlogy(x, c)', 'XlogyBackward0', ['other', 'self']),
    ('m.xlogy(2.0, y)', 'XlogyBackward1', ['other', 'self']),
    ('m.xlogy(x, 2.5)', 'XlogyBackward2', ['other', 'self']),
    ('m.heaviside(x, y)', 'torch::autograd::NotImplemented', []),
    ('m.lerp(x, y, 0.3)', 'LerpBackward0', ['weight']),
    ('m.lerp(x, y, w)', 'LerpBackward1', ['end', 'self', 'weight']),
    ('m.lerp(c, y, w)', 'LerpBackward1', ['end', 'self', 'weight']),
    ('m.lerp(x, c, c)', 'LerpBackward1', ['end', 'self', 'weight']),
    ('m.addcmul(x, y, w, value=2)', 'AddcmulBackward0', ['tensor1', 'tensor2', 'value']),
    ('m.addcmul(x, c, c)', 'AddcmulBackward0', ['tensor1', 'tensor2', 'value']),
    ('m.addcmul(c, c, w)', 'AddcmulBackward0', ['tensor1', 'tensor2', 'value']),
    ('m.addcdiv(x, y, w, value=0.5)', 'AddcdivBackward0', ['tensor1', 'tensor2', 'value']),
    ('m.addcdiv(c, y, c)', 'AddcdivBackward0', ['tensor1', 'tensor2', 'value']),
    ('(x * 1).floor_()', 'FloorBackward0', []),
    ('(x * 1).round_(decimals=1)', 'RoundBackward1', []),
    ('(x * 1).tan_()', 'TanBackward0', ['result']),
    ('(x * 1).asinh_()', 'AsinhBackward1', []),
    ('(x * 1).arctanh_()', 'AtanhBackward1', []),
    ('(x * 1).logit_(0.2)', 'LogitBackward0', ['eps', 'self']),
    ('(x * 1).atan2_(y)', 'Atan2Backward0', ['other', 'self']),
    ('(x * 1).fmod_(2)', 'FmodBackward0', []),
    ('(x * 1).xlogy_(2)', 'XlogyBackward2', ['other', 'self']),
    ('(x * 1).lerp_(y, w)', 'LerpBackward1', ['end', 'self', 'weight']),
    ('(x * 1).addcdiv_(y, w)', 'AddcdivBackward0', ['tensor1', 'tensor2', 'value']),
    ('(x * 1).heaviside_(y)', 'torch::autograd::NotImplemented', []),
]


# Transcendental functions may differ from PyTorch's in the last bit or two (different libm
# loops); everything else (rounding, fmod, the special values) is compared exactly.
_ULPS = {"float64": 1e-15, "float32": 3e-7, "float16": 2e-3}


def same_values(a: Any, b: Any, dtype: str) -> bool:
    """Equal values within a few ulps of ``dtype``, NaN equal to NaN, infinities exact."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        close = (a == b) | (np.abs(a - b) <= _ULPS.get(dtype, 0.0) * np.abs(b))
    return bool(np.all(nan | close))


@pytest.mark.parametrize(("src", "dtype", "values"), VALUES, ids=[c[0] for c in VALUES])
def test_values_and_dtype(src: str, dtype: str, values: Any) -> None:
    out = run(src)
    assert out.dtype.name == dtype
    assert same_values(out.tolist(), values, dtype), (out.tolist(), values)


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        run(src)
    assert type(info.value).__name__ == error
    # gradviz adds the op and the shapes to PyTorch's broadcasting text (NOTE in dispatch.py).
    assert str(info.value) == message or (message.startswith("The size of tensor a")
                                          and str(info.value).startswith(message + " (atan2:"))


@pytest.mark.parametrize(("src", "node", "saved"), GRAPHS, ids=[c[0] for c in GRAPHS])
def test_node_and_saved_names(src: str, node: str, saved: list[str]) -> None:
    fn = run(src).grad_fn
    assert fn.name() == node
    assert sorted(a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")) == saved


# -- gradients where a convention decides them ------------------------------------------------------  # noqa: E501 - torch's message, verbatim
def _grads(fn: Any, *values: list[float], dtype: Any = gradviz.float64) -> list[list[float]]:
    leaves = [gradviz.tensor(v, dtype=dtype, requires_grad=True) for v in values]
    fn(*leaves).sum().backward()
    return [t.grad.tolist() for t in leaves]


def test_rounding_ops_have_zero_gradients() -> None:
    for name in ("floor", "ceil", "trunc", "round"):
        assert _grads(getattr(gradviz, name), [0.3, -1.7, 2.5]) == [[0.0, 0.0, 0.0]]
    assert _grads(lambda x: gradviz.round(x, decimals=1), [0.37]) == [[0.0]]
    assert _grads(gradviz.frac, [0.3, -1.7]) == [[1.0, 1.0]]


def test_logit_gradient_outside_the_clamp_is_zero_and_outside_0_1_nan() -> None:
    (g,) = _grads(lambda x: gradviz.logit(x, eps=0.2), [0.1, 0.5, 0.95])
    assert g == [0.0, 4.0, 0.0]
    (g,) = _grads(gradviz.logit, [-0.5, 0.5, 1.5])
    assert math.isnan(g[0]) and g[1] == 4.0 and math.isnan(g[2])


def test_nan_to_num_passes_the_gradient_only_where_the_input_was_finite() -> None:
    (g,) = _grads(gradviz.nan_to_num, [float("nan"), float("inf"), -float("inf"), 2.0])
    assert g == [0.0, 0.0, 0.0, 1.0]


def test_fmax_and_fmin_give_a_tie_and_a_nan_other_to_input() -> None:
    nan = float("nan")
    assert _grads(gradviz.fmax, [1.0, 2.0, 3.0], [1.0, nan, 4.0]) == [[1.0, 1.0, 0.0],
                                                                     [0.0, 0.0, 1.0]]
    assert _grads(gradviz.fmin, [1.0, 2.0, 3.0], [1.0, nan, 0.5]) == [[1.0, 1.0, 0.0],
                                                                     [0.0, 0.0, 1.0]]


def test_xlogy_gradient_is_zero_where_input_is_zero() -> None:
    gx, gy = _grads(gradviz.xlogy, [0.0, 2.0], [3.0, 4.0])
    assert gx == [0.0, math.log(4.0)] and gy == [0.0, 0.5]
    (gx,) = _grads(lambda x: gradviz.xlogy(x, 3.0), [0.0, 1.0])
    assert gx == [0.0, math.log(3.0)]
    (gy,) = _grads(lambda y: gradviz.xlogy(2.0, y), [4.0])
    assert gy == [0.5]


def test_fmod_gradient_of_other_is_minus_the_truncated_quotient() -> None:
    gx, gy = _grads(gradviz.fmod, [7.0, -7.0], [2.0, 2.0])
    assert gx == [1.0, 1.0] and gy == [-3.0, 3.0]


def test_lerp_gradients() -> None:
    gx, ge = _grads(lambda x, e: gradviz.lerp(x, e, 0.25), [1.0, 2.0], [3.0, 5.0])
    assert gx == [0.75, 0.75] and ge == [0.25, 0.25]
    gx, ge, gw = _grads(gradviz.lerp, [1.0, 2.0], [3.0, 5.0], [0.25, 0.75])
    assert gx == [0.75, 0.25] and ge == [0.25, 0.75] and gw == [2.0, 3.0]


def test_addcmul_and_addcdiv_gradients_broadcast_back() -> None:
    gs, g1, g2 = _grads(lambda s, a, b: gradviz.addcmul(s, a, b, value=2),
                        [1.0], [[1.0], [2.0]], [3.0, 4.0])
    assert gs == [4.0] and g1 == [[14.0], [14.0]] and g2 == [6.0, 6.0]
    gs, g1, g2 = _grads(lambda s, a, b: gradviz.addcdiv(s, a, b, value=2), [1.0], [3.0], [2.0])
    assert gs == [1.0] and g1 == [1.0] and g2 == [-1.5]


def test_float32_inputs_get_float32_gradients() -> None:
    for fn, n in ((gradviz.atan2, 2), (gradviz.hypot, 2), (gradviz.xlogy, 2),
                  (lambda x: gradviz.xlogy(x, 2.5), 1), (lambda y: gradviz.xlogy(2.0, y), 1),
                  (gradviz.logit, 1), (gradviz.nan_to_num, 1), (gradviz.fmax, 2),
                  (gradviz.fmod, 2), (gradviz.lerp, 3), (gradviz.addcdiv, 3),
                  (gradviz.log10, 1), (gradviz.exp2, 1)):
        leaves = [gradviz.tensor([0.5, 0.25], requires_grad=True) for _ in range(n)]
        fn(*leaves).sum().backward()
        assert all(t.grad.dtype == gradviz.float32 for t in leaves), fn


def test_inplace_forms_bump_the_version_and_record_the_node() -> None:
    x = gradviz.tensor([0.3, 0.6], requires_grad=True)
    y = x * 1
    y.tan_()
    assert y._version == 1 and y.grad_fn.name() == "TanBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / np.cos([0.3, 0.6]) ** 2, rtol=1e-6)


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_inplace_inverse_hyperbolics_record_a_node_without_derivative(name: str) -> None:
    x = gradviz.tensor([1.5, 2.0], requires_grad=True)
    y = getattr(x * 1, f"arc{name[1:]}_")()
    assert y.grad_fn.name() == f"{name.capitalize()}Backward1"
    with pytest.raises(NotImplementedError) as info:
        y.sum().backward()
    assert str(info.value) == f"the derivative for 'inplace version of {name}' is not implemented."


def test_heaviside_records_pytorchs_not_implemented_node() -> None:
    x = gradviz.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    for y, op in ((gradviz.heaviside(x, gradviz.tensor([0.5])), "heaviside"),
                  ((x * 1).heaviside_(gradviz.tensor([0.5])), "heaviside_")):
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        assert str(info.value) == f"derivative for aten::{op} is not implemented"


def test_saved_values() -> None:
    x = gradviz.tensor([0.3, 0.6], dtype=gradviz.float64, requires_grad=True)
    assert gradviz.logit(x, 0.1).grad_fn._saved_eps == 0.1
    assert gradviz.logit(x).grad_fn._saved_eps is None
    assert gradviz.lerp(x, x, 0.3).grad_fn._saved_weight == 0.3
    assert gradviz.addcmul(x, x, x).grad_fn._saved_value == 1
    assert gradviz.addcdiv(x, x, x, value=2).grad_fn._saved_value == 2
    fn = gradviz.xlogy(2.0, x).grad_fn  # a Scalar argument is saved as a number, as in torch
    assert fn._saved_self == 2.0 and fn._saved_other is x
    assert gradviz.xlogy(x, 2.5).grad_fn._saved_other == 2.5
    fn = gradviz.hypot(x, x.detach())
    assert fn.grad_fn._saved_other is None and fn.grad_fn._saved_self is x


def test_aliases_are_the_same_ops() -> None:
    x = gradviz.tensor([0.25, -0.5], dtype=gradviz.float64, requires_grad=True)
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                        ("arcsinh", "asinh"), ("arctanh", "atanh"), ("fix", "trunc")):
        a, b = getattr(gradviz, alias)(x), getattr(gradviz, name)(x)
        assert a.grad_fn.name() == b.grad_fn.name() and a.tolist() == b.tolist()
        assert getattr(x, alias)().tolist() == b.tolist()
    assert gradviz.arccosh(x + 2).tolist() == gradviz.acosh(x + 2).tolist()
    assert gradviz.arctan2 is gradviz.atan2
