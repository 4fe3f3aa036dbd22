"""Rows of convolution and pooling, padding, upsampling, pixel (un)shuffle and im2col."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import R, Sample
from gradviz.tensor import Tensor


def _conv_input_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                     transposed, output_padding, groups):
    nd = len(input.shape) - 2
    if transposed:  # the adjoint of a transposed convolution is the plain one
        gx = f.op("convolution", grad, weight, None, stride=stride, padding=padding,
                  dilation=dilation, transposed=False, output_padding=(0,) * nd, groups=groups)
        # An output_padding >= stride (allowed when dilation > stride) adds output rows that no
        # input row reaches; read back, they are positions past the input's end: crop them.
        for i, n in enumerate(input.shape[2:]):
            if gx.shape[2 + i] != n:
                gx = f.slice_dim(gx, 2 + i, 0, n)
        return gx
    st, pad, dil = (K._per_dim(v, nd) for v in (stride, padding, dilation))
    # The stride may skip the input's last rows: output_padding gives them back (as zeros).
    extra = tuple(n + 2 * p - d * (k - 1) - 1 - (o - 1) * s for n, o, k, s, p, d in zip(
        input.shape[2:], grad.shape[2:], weight.shape[2:], st, pad, dil))
    return f.op("convolution", grad, weight, None, stride=st, padding=pad, dilation=dil,
                transposed=True, output_padding=extra, groups=groups)


def _correlate_for_weight(x, gy, kernel, stride, padding, dilation, groups):
    """The weight's gradient: sum over the batch and the output positions of ``x``'s windows
    times ``gy``. On arrays (a plain backward) one matmul with ``x``'s im2col matrix
    (:func:`K.convolution_weight`). On tensors (create_graph) it must be recorded, so it is
    written as a convolution: the batch becomes the channels (grouped as ``groups``), ``gy``
    the kernel, stride and dilation swap roles; the result is cropped to the kernel's size."""
    if not isinstance(x, Tensor) and not isinstance(gy, Tensor):
        return K.convolution_weight(x, gy, kernel, stride, padding, dilation, groups)
    nd = len(kernel)
    n, g = x.shape[0], groups
    cg, og = x.shape[1] // g, gy.shape[1] // g
    sp = tuple(range(3, 3 + nd))
    xr = f.permute(x.reshape((n, g, cg) + tuple(x.shape[2:])), (2, 1, 0) + sp).reshape(
        (cg, g * n) + tuple(x.shape[2:]))
    gr = f.permute(gy.reshape((n, g, og) + tuple(gy.shape[2:])), (1, 2, 0) + sp).reshape(
        (g * og, n) + tuple(gy.shape[2:]))
    r = f.op("convolution", xr, gr, None, stride=dilation, padding=padding, dilation=stride,
             transposed=False, output_padding=(0,) * nd, groups=g)
    for i, k in enumerate(kernel):
        if r.shape[2 + i] != k:
            r = f.slice_dim(r, 2 + i, 0, k)
    return f.transpose(r, 0, 1)


def _conv_weight_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                      transposed, output_padding, groups):
    nd = len(input.shape) - 2
    st, pad, dil = (K._per_dim(v, nd) for v in (stride, padding, dilation))
    kernel = tuple(weight.shape[2:])
    if transposed:  # input and gradient trade places (the weight is (in, out / groups, ...))
        return _correlate_for_weight(grad, input, kernel, st, pad, dil, groups)
    return _correlate_for_weight(input, grad, kernel, st, pad, dil, groups)


def _conv_bias_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                    transposed, output_padding, groups):
    return f.sum(grad, (0,) + tuple(range(2, len(grad.shape))))


def _shape_only_input(grad):
    """A pooling backward row's ``self``: only its shape matters to the backward, so its
    gradient is zeros (PyTorch's ``self: zeros_like(self)``)."""
    return f.zeros_like(grad)


def _max_pool_gather(grad, indices, nd=2):
    """The gradient flowing back through max_pool's backward: ``grad`` read at the indices
    (flat positions in each plane of the last ``nd`` dimensions)."""
    lead = tuple(indices.shape[:-nd])
    flat = f.gather(grad.reshape(lead + (-1,)), len(lead), indices.reshape(lead + (-1,)))
    return flat.reshape(tuple(indices.shape))


defop("convolution", "ConvolutionBackward0", K.convolution, ("input", "weight", "bias"),
      doc="conv1d, conv2d and conv_transpose2d (``transposed``); the input's and the weight's "
          "gradients are convolutions themselves, so create_graph records convolutions",
      calls=("`gradviz.conv1d`, `gradviz.conv2d`, `gradviz.conv_transpose2d`, "
             "`gradviz.convolution`, `F.conv1d`, `F.conv2d`, `F.conv_transpose2d`", ""),
      samples=(
          Sample(R(2, 2, 5, 4), R(3, 2, 3, 2), R(3), stride=(2, 1), padding=(1, 0)),
          Sample(R(1, 4, 5, 5), R(4, 2, 2, 2), None, padding=(1, 1), dilation=(2, 1),
                 groups=2),
          Sample(R(2, 2, 6), R(3, 2, 3), R(3), stride=(2,), padding=(1,)),
          Sample(R(2, 2, 3, 3), R(2, 3, 3, 2), R(3), stride=(2, 2), padding=(1, 0),
                 transposed=True, output_padding=(1, 0)),
          Sample(R(1, 4, 3, 2), R(4, 1, 2, 2), None, stride=(1, 2), dilation=(2, 1),
                 transposed=True, groups=2),
      ),
      input=_conv_input_grad, weight=_conv_weight_grad, bias=_conv_bias_grad)
defop("max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", K.max_pool2d_with_indices,
      ("self",),
      internal="reached through F.max_pool2d (a Python function in torch too)",
      outputs=("result0", "result1"), nondiff_outputs=(1,),
      doc="outputs (values, indices); indices are flat positions in each H*W plane",
      calls=("`gradviz.max_pool2d`, `gradviz.max_pool1d`, `F.max_pool2d`, `F.max_pool1d`", ""),
      self=lambda grads, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
      f.op("max_pool2d_with_indices_backward", grads[0], self, indices=result1))
defop("max_pool2d_with_indices_backward", "MaxPool2DWithIndicesBackwardBackward0",
      K.max_pool2d_with_indices_backward, ("grad_output", "self"),
      internal="backward-only: recorded by max_pool2d_with_indices's formula under create_graph",
      doc="max_pool2d's backward, recorded under create_graph",
      calls=("max_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 1, 2, 2), R(2, 1, 4, 3),
                      indices=Tensor._make(np.array([[[[0, 5], [7, 11]]], [[[1, 4], [6, 9]]]]))),),
      grad_output=lambda grad, indices: _max_pool_gather(grad, indices),
      self=_shape_only_input)
defop("max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0", K.max_pool3d_with_indices,
      ("self",),
      internal="reached through F.max_pool3d (a Python function in torch too)",
      outputs=("result0", "result1"), nondiff_outputs=(1,),
      doc="outputs (values, indices); indices are flat positions in each D*H*W volume",
      calls=("`F.max_pool3d`", ""),
      samples=(Sample(R(2, 1, 4, 3, 4), kernel_size=(2, 2, 2), stride=(), padding=(0, 0, 0),
                      dilation=(1, 1, 1), ceil_mode=False),
               Sample(R(1, 2, 3, 5, 4), kernel_size=(3, 2, 2), stride=(2, 1, 2),
                      padding=(1, 1, 0), dilation=(1, 2, 1), ceil_mode=True)),
      self=lambda grads, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
      f.op("max_pool3d_with_indices_backward", grads[0], self, indices=result1))
defop("max_pool3d_with_indices_backward", "MaxPool3DWithIndicesBackwardBackward0",
      K.max_pool3d_with_indices_backward, ("grad_output", "self"),
      internal="backward-only: recorded by max_pool3d_with_indices's formula under create_graph",
      doc="max_pool3d's backward, recorded under create_graph",
      calls=("max_pool3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 1, 1, 2), R(1, 2, 2, 2, 2),
                      indices=Tensor._make(np.array([[[[[0, 7]]], [[[3, 5]]]]]))),),
      grad_output=lambda grad, indices: _max_pool_gather(grad, indices, 3),
      self=_shape_only_input)
defop("avg_pool2d", "AvgPool2DBackward0", K.avg_pool2d, ("self",),
      doc="``stride`` is saved as () when it was not given (it defaults to the kernel size)",
      calls=("`F.avg_pool2d`", ""),
      samples=(Sample(R(2, 2, 5, 5), kernel_size=(2, 2)),
               Sample(R(1, 1, 5, 4), kernel_size=(3, 2), stride=(2, 1), padding=(1, 1),
                      ceil_mode=True, count_include_pad=False),
               Sample(R(2, 5, 5), kernel_size=(3, 3), stride=(2, 2), padding=(1, 0),
                      divisor_override=2)),
      self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool2d_backward", grad, self, kernel_size=kernel_size,
                             stride=stride, padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override))
defop("avg_pool2d_backward", "AvgPool2DBackwardBackward0", K.avg_pool2d_backward,
      ("grad_output", "self"),
      internal="backward-only: recorded by avg_pool2d's formula under create_graph",
      doc="avg_pool2d's backward, recorded under create_graph",
      calls=("avg_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 3, 2), R(1, 2, 5, 4), kernel_size=(2, 2), stride=(2, 2),
                      padding=(1, 0)),),
      grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool2d", grad, kernel_size=kernel_size, stride=stride,
                             padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override),
      self=_shape_only_input)
defop("_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", K.adaptive_avg_pool2d, ("self",),
      doc="windows [floor(i*n/o), ceil((i+1)*n/o)); output size 1 records a mean instead",
      calls=("`F.adaptive_avg_pool2d`", ""),
      samples=(Sample(R(2, 2, 5, 4), output_size=(3, 2)), Sample(R(3, 4, 4), output_size=(3, 4))),
      self=lambda grad, self: f.op("_adaptive_avg_pool2d_backward", grad, self))
defop("_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0",
      K.adaptive_avg_pool2d_backward, ("grad_output", "self"),
      internal="backward-only: recorded by _adaptive_avg_pool2d's formula under create_graph",
      doc="adaptive_avg_pool2d's backward, recorded under create_graph",
      calls=("adaptive_avg_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 2, 3), R(1, 2, 5, 4)),),
      grad_output=lambda grad, grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1:
      f.op("_adaptive_avg_pool2d", grad,
           output_size=(grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1)),
      self=_shape_only_input)


defop("constant_pad_nd", "ConstantPadNdBackward0", K.constant_pad_nd, ("self",),
      doc="``pad`` from the last dimension backwards; negative amounts crop",
      calls=("`gradviz.constant_pad_nd`, `F.pad`", ""),
      samples=(Sample(R(2, 3, 4), pad=(1, 2, 0, 1)), Sample(R(2, 4), pad=(-1, 2), value=1.5)),
      self=lambda grad, pad: f.op("constant_pad_nd", grad, pad=tuple(-p for p in pad)))


# The reflection and replication pads, upsampling (nearest, linear), pixel (un)shuffle,
# im2col / col2im (F.unfold / F.fold) and adaptive max pooling: each
# its own PyTorch node. A backward that create_graph records is a row too, whose own gradient
# is the forward again (a pad's backward folds the border back, its gradient pads again).
def _pad_rows(kind: str, nd: int, samples: tuple, back_sample: Sample) -> None:
    title, mode = ("Reflection", "reflect") if kind == "reflection" else ("Replication",
                                                                          "replicate")
    name = f"{kind}_pad{nd}d"
    forward, backward = ((K.reflection_pad, K.reflection_pad_backward) if kind == "reflection"
                         else (K.replication_pad, K.replication_pad_backward))
    defop(name, f"{title}Pad{nd}DBackward0", forward, ("self",),
          internal="reached through F.pad(mode=...) and nn's padding layers (F.pad is a Python "
                   "function in torch too)",
          doc=f"``padding`` as F.pad takes it, the last dimension's (left, right) first; {nd}-D",
          calls=(f"`F.pad(mode='{mode}')`, `nn.{title}Pad{nd}d`", ""),
          samples=samples,
          self=lambda grad, self, padding: f.op(f"{name}_backward", grad, self,
                                                  padding=padding))
    defop(f"{name}_backward", f"{title}Pad{nd}DBackwardBackward0", backward,
          ("grad_output", "self"),
          internal=f"backward-only: recorded by {name}'s formula under create_graph",
          doc=f"{name}'s backward, recorded under create_graph",
          calls=(f"{name}'s backward under `create_graph=True`", ""),
          samples=(back_sample,),
          grad_output=lambda grad, padding: f.op(name, grad, padding=padding),
          self=_shape_only_input)


_pad_rows("reflection", 1, (Sample(R(2, 3, 5), padding=(2, 3)), Sample(R(3, 4), padding=(1, 0))),
          Sample(R(2, 3, 10), R(2, 3, 5), padding=(2, 3)))
_pad_rows("reflection", 2, (Sample(R(2, 2, 4, 5), padding=(1, 2, 3, 0)),
                            Sample(R(2, 3, 3), padding=(2, 2, 1, 1))),
          Sample(R(2, 2, 7, 8), R(2, 2, 4, 5), padding=(1, 2, 3, 0)))
_pad_rows("replication", 1, (Sample(R(2, 3, 4), padding=(3, 1)), Sample(R(3, 2), padding=(0, 2))),
          Sample(R(2, 3, 8), R(2, 3, 4), padding=(3, 1)))
_pad_rows("replication", 2, (Sample(R(2, 2, 3, 4), padding=(2, 1, 0, 3)),
                             Sample(R(1, 2, 2), padding=(1, 1, 2, 2))),
          Sample(R(2, 2, 6, 7), R(2, 2, 3, 4), padding=(2, 1, 0, 3)))

defop("upsample_nearest1d", "UpsampleNearest1DBackward0", K.upsample_nearest1d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``scales`` as F.interpolate passes it (None: from the sizes)",
      calls=("`F.interpolate(mode='nearest')` on 3-D input, `nn.Upsample`", ""),
      samples=(Sample(R(2, 3, 4), output_size=(9,)), Sample(R(1, 2, 3), output_size=(6,),
                                                            scales=2.0)),
      self=lambda grad, self_sym_sizes, output_size, scales: f.op(
          "upsample_nearest1d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales=scales))
defop("upsample_nearest1d_backward", "UpsampleNearest1DBackwardBackward0",
      K.upsample_nearest1d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_nearest1d's formula under create_graph",
      doc="upsample_nearest1d's backward, recorded under create_graph",
      calls=("upsample_nearest1d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 3, 9), output_size=(9,), input_size=(2, 3, 4)),),
      grad_output=lambda grad, output_size, scales: f.op(
          "upsample_nearest1d", grad, output_size=output_size, scales=scales))
defop("upsample_nearest2d", "UpsampleNearest2DBackward0", K.upsample_nearest2d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``scales_h``/``scales_w`` as F.interpolate passes them (None: from the sizes)",
      calls=("`F.interpolate(mode='nearest')` on 4-D input, `nn.Upsample`, "
             "`nn.UpsamplingNearest2d`", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 8)),
               Sample(R(1, 2, 2, 3), output_size=(4, 6), scales_h=2.0, scales_w=2.0)),
      self=lambda grad, self_sym_sizes, output_size, scales_h, scales_w: f.op(
          "upsample_nearest2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0",
      K.upsample_nearest2d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_nearest2d's formula under create_graph",
      doc="upsample_nearest2d's backward, recorded under create_graph",
      calls=("upsample_nearest2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 8), output_size=(5, 8), input_size=(2, 2, 3, 4)),),
      grad_output=lambda grad, output_size, scales_h, scales_w: f.op(
          "upsample_nearest2d", grad, output_size=output_size, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_linear1d", "UpsampleLinear1DBackward0", K.upsample_linear1d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``align_corners`` and ``scales`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='linear')`, `nn.Upsample(mode='linear')`", ""),
      samples=(Sample(R(2, 3, 4), output_size=(7,), align_corners=False),
               Sample(R(1, 2, 5), output_size=(3,), align_corners=True),
               Sample(R(1, 2, 3), output_size=(6,), align_corners=False, scales=2.0)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales: f.op(
          "upsample_linear1d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, align_corners=align_corners, scales=scales))
defop("upsample_linear1d_backward", "UpsampleLinear1DBackwardBackward0",
      K.upsample_linear1d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_linear1d's formula under create_graph",
      doc="upsample_linear1d's backward, recorded under create_graph",
      calls=("upsample_linear1d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 3, 7), output_size=(7,), input_size=(2, 3, 4), align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales: f.op(
          "upsample_linear1d", grad, output_size=output_size, align_corners=align_corners,
          scales=scales))
defop("upsample_bilinear2d", "UpsampleBilinear2DBackward0", K.upsample_bilinear2d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``align_corners`` and ``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='bilinear')`, `nn.Upsample(mode='bilinear')`, "
             "`nn.UpsamplingBilinear2d`", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 7), align_corners=False),
               Sample(R(1, 2, 4, 3), output_size=(2, 6), align_corners=True),
               Sample(R(1, 1, 2, 3), output_size=(4, 6), align_corners=False, scales_h=2.0,
                      scales_w=2.0)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bilinear2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, align_corners=align_corners, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_bilinear2d_backward", "UpsampleBilinear2DBackwardBackward0",
      K.upsample_bilinear2d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_bilinear2d's formula under create_graph",
      doc="upsample_bilinear2d's backward, recorded under create_graph",
      calls=("upsample_bilinear2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 7), output_size=(5, 7), input_size=(2, 2, 3, 4),
                      align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bilinear2d", grad, output_size=output_size, align_corners=align_corners,
          scales_h=scales_h, scales_w=scales_w))
defop("upsample_bicubic2d", "UpsampleBicubic2DBackward0", K.upsample_bicubic2d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="cubic convolution (A = -0.75, borders clamped); ``align_corners`` and "
          "``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='bicubic')`, `nn.Upsample(mode='bicubic')`", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 7), align_corners=False),
               Sample(R(1, 2, 4, 3), output_size=(2, 6), align_corners=True),
               Sample(R(1, 1, 2, 3), output_size=(5, 7), align_corners=False, scales_h=2.5,
                      scales_w=2.5)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bicubic2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, align_corners=align_corners, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_bicubic2d_backward", "UpsampleBicubic2DBackwardBackward0",
      K.upsample_bicubic2d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_bicubic2d's formula under create_graph",
      doc="upsample_bicubic2d's backward, recorded under create_graph",
      calls=("upsample_bicubic2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 7), output_size=(5, 7), input_size=(2, 2, 3, 4),
                      align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bicubic2d", grad, output_size=output_size, align_corners=align_corners,
          scales_h=scales_h, scales_w=scales_w))
defop("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", K.upsample_trilinear3d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``align_corners`` and ``scales_d``/``scales_h``/``scales_w`` as F.interpolate passes "
          "them",
      calls=("`F.interpolate(mode='trilinear')`, `nn.Upsample(mode='trilinear')`", ""),
      samples=(Sample(R(1, 2, 2, 3, 2), output_size=(3, 5, 4), align_corners=False),
               Sample(R(1, 1, 3, 2, 2), output_size=(2, 3, 4), align_corners=True),
               Sample(R(1, 1, 2, 2, 3), output_size=(3, 4, 4), align_corners=False,
                      scales_d=1.5, scales_h=2.0, scales_w=1.5)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales_d, scales_h,
      scales_w: f.op("upsample_trilinear3d_backward", grad, output_size=output_size,
                     input_size=self_sym_sizes, align_corners=align_corners,
                     scales_d=scales_d, scales_h=scales_h, scales_w=scales_w))
defop("upsample_trilinear3d_backward", "UpsampleTrilinear3DBackwardBackward0",
      K.upsample_trilinear3d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_trilinear3d's formula under create_graph",
      doc="upsample_trilinear3d's backward, recorded under create_graph",
      calls=("upsample_trilinear3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 3, 5, 4), output_size=(3, 5, 4), input_size=(1, 2, 2, 3, 2),
                      align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales_d, scales_h, scales_w: f.op(
          "upsample_trilinear3d", grad, output_size=output_size, align_corners=align_corners,
          scales_d=scales_d, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0",
      K.upsample_nearest_exact1d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="each output reads the input whose cell holds its centre; ``scales`` as "
          "F.interpolate passes it",
      calls=("`F.interpolate(mode='nearest-exact')` on 3-D input", ""),
      samples=(Sample(R(2, 3, 4), output_size=(7,)), Sample(R(1, 2, 5), output_size=(3,),
                                                            scales=0.7)),
      self=lambda grad, self_sym_sizes, output_size, scales: f.op(
          "upsample_nearest_exact1d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales=scales))
defop("upsample_nearest_exact1d_backward", "UpsampleNearestExact1DBackwardBackward0",
      K.upsample_nearest_exact1d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_nearest_exact1d's formula under create_graph",
      doc="upsample_nearest_exact1d's backward, recorded under create_graph",
      calls=("upsample_nearest_exact1d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 3, 7), output_size=(7,), input_size=(2, 3, 4)),),
      grad_output=lambda grad, output_size, scales: f.op(
          "upsample_nearest_exact1d", grad, output_size=output_size, scales=scales))
defop("upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0",
      K.upsample_nearest_exact2d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='nearest-exact')` on 4-D input", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 7)),
               Sample(R(1, 2, 4, 3), output_size=(6, 4), scales_h=1.5, scales_w=1.5)),
      self=lambda grad, self_sym_sizes, output_size, scales_h, scales_w: f.op(
          "upsample_nearest_exact2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest_exact2d_backward", "UpsampleNearestExact2DBackwardBackward0",
      K.upsample_nearest_exact2d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_nearest_exact2d's formula under create_graph",
      doc="upsample_nearest_exact2d's backward, recorded under create_graph",
      calls=("upsample_nearest_exact2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 7), output_size=(5, 7), input_size=(2, 2, 3, 4)),),
      grad_output=lambda grad, output_size, scales_h, scales_w: f.op(
          "upsample_nearest_exact2d", grad, output_size=output_size, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0",
      K.upsample_nearest_exact3d, ("self",),
      internal="reached through F.interpolate and nn.Upsample (a Python function in torch too)",
      doc="``scales_d``/``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='nearest-exact')` on 5-D input", ""),
      samples=(Sample(R(1, 2, 2, 3, 2), output_size=(3, 5, 4)),
               Sample(R(1, 1, 2, 2, 3), output_size=(3, 4, 4), scales_d=1.5, scales_h=2.0,
                      scales_w=1.5)),
      self=lambda grad, self_sym_sizes, output_size, scales_d, scales_h, scales_w: f.op(
          "upsample_nearest_exact3d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales_d=scales_d, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest_exact3d_backward", "UpsampleNearestExact3DBackwardBackward0",
      K.upsample_nearest_exact3d_backward, ("grad_output",),
      internal="backward-only: recorded by upsample_nearest_exact3d's formula under create_graph",
      doc="upsample_nearest_exact3d's backward, recorded under create_graph",
      calls=("upsample_nearest_exact3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 3, 5, 4), output_size=(3, 5, 4), input_size=(1, 2, 2, 3, 2)),),
      grad_output=lambda grad, output_size, scales_d, scales_h, scales_w: f.op(
          "upsample_nearest_exact3d", grad, output_size=output_size, scales_d=scales_d,
          scales_h=scales_h, scales_w=scales_w))
defop("pixel_shuffle", "PixelShuffleBackward0", K.pixel_shuffle, ("self",),
      doc="(*, C r², H, W) -> (*, C, H r, W r)",
      calls=("`F.pixel_shuffle`, `nn.PixelShuffle`", ""),
      samples=(Sample(R(2, 8, 2, 3), upscale_factor=2), Sample(R(9, 1, 2), upscale_factor=3)),
      self=lambda grad, upscale_factor: f.op("pixel_unshuffle", grad,
                                             downscale_factor=upscale_factor))
defop("pixel_unshuffle", "PixelUnshuffleBackward0", K.pixel_unshuffle, ("self",),
      doc="(*, C, H r, W r) -> (*, C r², H, W)",
      calls=("`F.pixel_unshuffle`, `nn.PixelUnshuffle`", ""),
      samples=(Sample(R(2, 2, 4, 6), downscale_factor=2), Sample(R(1, 3, 3), downscale_factor=3)),
      self=lambda grad, downscale_factor: f.op("pixel_shuffle", grad,
                                               upscale_factor=downscale_factor))
defop("im2col", "Im2ColBackward0", K.im2col, ("self",),
      internal="reached through F.unfold (a Python function in torch too)",
      doc="(N, C, H, W) -> (N, C kh kw, L): every window as a column (F.unfold)",
      calls=("`F.unfold`, `nn.Unfold`", ""),
      samples=(Sample(R(2, 2, 4, 5), kernel_size=(2, 3), dilation=(1, 1), padding=(1, 0),
                      stride=(1, 2)),
               Sample(R(1, 5, 5), kernel_size=(2, 2), dilation=(2, 1), padding=(0, 1),
                      stride=(2, 2))),
      self=lambda grad, self_sym_argsize_minus_2, self_sym_argsize_minus_1, kernel_size,
      dilation, padding, stride: f.op(
          "col2im", grad, output_size=(self_sym_argsize_minus_2, self_sym_argsize_minus_1),
          kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride))
defop("col2im", "Col2ImBackward0", K.col2im, ("self",),
      internal="reached through F.fold (a Python function in torch too)",
      doc="(N, C kh kw, L) -> (N, C, H, W): the columns added back at their windows (F.fold)",
      calls=("`F.fold`, `nn.Fold`", ""),
      samples=(Sample(R(2, 12, 6), output_size=(3, 4), kernel_size=(2, 2), dilation=(1, 1),
                      padding=(0, 0), stride=(1, 1)),
               Sample(R(6, 6), output_size=(4, 5), kernel_size=(2, 3), dilation=(1, 1),
                      padding=(1, 0), stride=(2, 2))),
      self=lambda grad, kernel_size, dilation, padding, stride: f.op(
          "im2col", grad, kernel_size=kernel_size, dilation=dilation, padding=padding,
          stride=stride))
defop("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", K.adaptive_max_pool2d, ("self",),
      internal="reached through F.adaptive_max_pool2d (a Python function in torch too)",
      outputs=("result0", "result1"), nondiff_outputs=(1,),
      doc="outputs (values, indices); indices are flat positions in each H*W plane",
      calls=("`F.adaptive_max_pool2d`, `F.adaptive_max_pool1d`, `nn.AdaptiveMaxPool2d`", ""),
      samples=(Sample(R(2, 2, 5, 4), output_size=(3, 2)), Sample(R(3, 4, 4), output_size=(4, 3))),
      self=lambda grads, self, result1: f.op("adaptive_max_pool2d_backward", grads[0], self,
                                             indices=result1))
defop("adaptive_max_pool2d_backward", "AdaptiveMaxPool2DBackwardBackward0",
      K.max_pool2d_with_indices_backward, ("grad_output", "self"),
      internal="backward-only: recorded by adaptive_max_pool2d's formula under create_graph",
      doc="adaptive_max_pool2d's backward, recorded under create_graph",
      calls=("adaptive_max_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 1, 2, 2), R(2, 1, 4, 3),
                      indices=Tensor._make(np.array([[[[0, 5], [7, 11]]], [[[1, 4], [6, 9]]]]))),),
      grad_output=lambda grad, indices: _max_pool_gather(grad, indices),
      self=_shape_only_input)


defop("avg_pool3d", "AvgPool3DBackward0", K.avg_pool3d, ("self",),
      doc="``stride`` is saved as () when it was not given (it defaults to the kernel size)",
      calls=("`F.avg_pool3d`, `nn.AvgPool3d`, `F.local_response_norm` (4-D and up)", ""),
      samples=(Sample(R(1, 2, 4, 4, 5), kernel_size=(2, 2, 2)),
               Sample(R(2, 3, 4, 5), kernel_size=(3, 2, 2), stride=(2, 1, 2),
                      padding=(1, 0, 1), ceil_mode=True, count_include_pad=False),
               Sample(R(1, 1, 3, 3, 3), kernel_size=(2, 2, 2), stride=(1, 1, 1),
                      divisor_override=3)),
      self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool3d_backward", grad, self, kernel_size=kernel_size,
                             stride=stride, padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override))
defop("avg_pool3d_backward", "AvgPool3DBackwardBackward0", K.avg_pool3d_backward,
      ("grad_output", "self"),
      internal="backward-only: recorded by avg_pool3d's formula under create_graph",
      doc="avg_pool3d's backward, recorded under create_graph",
      calls=("avg_pool3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 2, 3, 3), R(1, 2, 4, 4, 5), kernel_size=(2, 2, 2),
                      stride=(2, 2, 2), padding=(0, 1, 1)),),
      grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool3d", grad, kernel_size=kernel_size, stride=stride,
                             padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override),
      self=_shape_only_input)
