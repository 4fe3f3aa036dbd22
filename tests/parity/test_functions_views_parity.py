"""Custom Functions, views and in-place ops against a live torch (issue #14): each program runs
on both libraries (``m`` is the library, ``Function`` and ``once_differentiable`` its own) and
appends what it sees to ``out``; the two lists must be equal: values, node names, next_functions,
reprs, warnings and error texts.


Differences allowed, with their reason:
* gradviz appends to some of PyTorch's error texts what op and shapes failed (the expanded-tensor
  write): PyTorch's text must be a prefix of gradviz's.
* PyTorch appends "(Triggered internally at ...)" to warnings raised from C++: compared without it.
* object addresses in reprs (``<FBackward object at 0x...>``) are not compared.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
import torch

import gradviz

PROGRAMS: dict[str, str] = {}

PROGRAMS["setup_context"] = '''
class F(Function):
    @staticmethod
    def forward(x, k):
        return x * k
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(x, output)
    @staticmethod
    def backward(ctx, g):
        x, o = ctx.saved_tensors
        out.append(ctx.needs_input_grad)
        return g * ctx.k, None
a = m.ones(3, requires_grad=True)
y = F.apply(a, 2.0)
out.append(repr(y))
out.append(y.grad_fn.name())
y.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["vjp_alias"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3
    @staticmethod
    def vjp(ctx, g):
        return g * 3
a = m.ones(2, requires_grad=True)
F.apply(a).sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["both_backward_vjp"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3
    @staticmethod
    def vjp(ctx, g):
        return g * 3
    @staticmethod
    def backward(ctx, g):
        return g * 3
a = m.ones(2, requires_grad=True)
F.apply(a).sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["no_backward"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3
a = m.ones(2, requires_grad=True)
F.apply(a).sum().backward()
'''
PROGRAMS["instance_called"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3
    @staticmethod
    def backward(ctx, g):
        return g * 3
a = m.ones(2, requires_grad=True)
F()(a)
'''
PROGRAMS["setup_ctx_with_ctx_forward"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3
    @staticmethod
    def setup_context(ctx, inputs, output):
        pass
    @staticmethod
    def backward(ctx, g):
        return g
a = m.ones(2, requires_grad=True)
F.apply(a)
'''
PROGRAMS["dirty_not_returned"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
a = m.ones(2, requires_grad=True) * 1
F.apply(a)
'''
PROGRAMS["dirty_not_input"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.mark_dirty(y)
        return y
    @staticmethod
    def backward(ctx, g):
        return g
a = m.ones(2, requires_grad=True) * 1
F.apply(a)
'''
PROGRAMS["dirty_ok"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, requires_grad=True)
b = a * 1
v0 = b._version
c = F.apply(b)
out.append((c is b, b._version - v0, b.grad_fn.name(), repr(c)))
c.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["dirty_leaf"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, requires_grad=True)
F.apply(a)
'''
PROGRAMS["dirty_view_of_leaf"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, 2, requires_grad=True)
F.apply(a[0])
'''
PROGRAMS["dirty_view_multi"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, 2, requires_grad=True)
b = a * 1
F.apply(b.unbind(0)[0])
'''
PROGRAMS["dirty_view_ok"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, 2, requires_grad=True)
b = a * 1
v = b[0]
c = F.apply(v)
out.append((c is v, b.grad_fn.name(), v.grad_fn.name(), repr(b)))
out.append([ (n.name() if n else None, i) for n, i in b.grad_fn.next_functions])
b.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["dirty_view_two_outputs"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x, x * 3
    @staticmethod
    def backward(ctx, g0, g1):
        return g0 * 2 + g1 * 6
out.append([t.tolist() for t in F.apply(m.ones(4)[:2])])
b = m.ones(4, requires_grad=True) * 1
out.append([t.tolist() for t in F.apply(b * 1)])
F.apply(b[:2])
'''
PROGRAMS["dirty_non_input_not_returned"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x * 2)
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
F.apply(m.ones(2))
'''
PROGRAMS["dirty_non_input_not_recorded"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.mark_dirty(y)
        return y
    @staticmethod
    def backward(ctx, g):
        return g
out.append(F.apply(m.ones(2)).tolist())
'''
PROGRAMS["non_diff"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        i = x.argmax()
        ctx.mark_non_differentiable(i)
        return x * 2, i
    @staticmethod
    def backward(ctx, g, gi):
        out.append(repr(gi))
        return g * 2
a = m.tensor([3., 1., 2.], requires_grad=True)
s, i = F.apply(a)
out.append((s.requires_grad, i.requires_grad, repr(i)))
s.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["non_diff_float"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        z = x * 3
        ctx.mark_non_differentiable(z)
        return y, z
    @staticmethod
    def backward(ctx, gy, gz):
        out.append(repr(gz))
        return gy * 2
a = m.ones(2, requires_grad=True)
y, z = F.apply(a)
out.append((y.requires_grad, z.requires_grad, z.grad_fn, y.grad_fn.name()))
z.sum()
y.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["once_diff_create_graph"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x
a = m.tensor([1., 2.], requires_grad=True)
y = F.apply(a).sum()
g, = m.autograd.grad(y, a, create_graph=True)
out.append((repr(g), g.requires_grad, g.grad_fn.name() if g.grad_fn else None))
g.sum().backward()
'''
PROGRAMS["once_diff_plain"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        out.append((m.is_grad_enabled(), g.requires_grad, x.requires_grad))
        return g * 2 * x
a = m.tensor([1., 2.], requires_grad=True)
y = F.apply(a).sum()
y.backward()
out.append(a.grad.tolist())
'''
PROGRAMS["view_returned_modified"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x.view(-1)
    @staticmethod
    def backward(ctx, g):
        return g.view(2, 2)
a = m.ones(2, 2, requires_grad=True)
b = a * 1
y = F.apply(b)
out.append((y._is_view(), y.grad_fn.name()))
y.mul_(2)
'''
PROGRAMS["view_returned_multi_modified"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x[0], x[1]
    @staticmethod
    def backward(ctx, g0, g1):
        return m.stack([g0, g1])
a = m.ones(2, 2, requires_grad=True)
b = a * 1
y, z = F.apply(b)
out.append((y._is_view(), y.grad_fn.name()))
y.mul_(2)
'''
PROGRAMS["view_returned_nograd_modified"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x.view(-1)
    @staticmethod
    def backward(ctx, g):
        return g.view(2, 2)
a = m.ones(2, 2, requires_grad=True)
b = a * 1
with m.no_grad():
    y = F.apply(b)
out.append((y._is_view(), y.grad_fn, y.requires_grad))
y.mul_(2)
out.append(repr(y))
'''
PROGRAMS["view_returned_input_not_rg"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x, w):
        return x.view(-1), w * 2
    @staticmethod
    def backward(ctx, g, gw):
        return None, gw * 2
a = m.ones(2, 2)
w = m.ones(2, requires_grad=True)
y, z = F.apply(a, w)
out.append((y._is_view(), y.grad_fn, y.requires_grad))
y.mul_(2)
out.append(repr(y))
'''
PROGRAMS["materialize_false"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, g1, g2):
        out.append((g1 is None, g2 is None))
        return g1 * 2
a = m.ones(2, requires_grad=True)
y, z = F.apply(a)
y.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["saved_after_free"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, requires_grad=True)
y = F.apply(a)
y.sum().backward()
y.grad_fn.saved_tensors
'''
PROGRAMS["needs_input_grad"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x, y, k):
        out.append(ctx.needs_input_grad)
        return x * y * k
    @staticmethod
    def backward(ctx, g):
        out.append(ctx.needs_input_grad)
        return g, None, None
a = m.ones(2, requires_grad=True)
b = m.ones(2)
y = F.apply(a, b, 3)
out.append(y.grad_fn.needs_input_grad)
y.sum().backward()
'''
PROGRAMS["setup_context_kwargs"] = '''
class F(Function):
    @staticmethod
    def forward(x, k=2.0):
        return x * k
    @staticmethod
    def setup_context(ctx, inputs, output):
        out.append((len(inputs), type(output).__name__))
        ctx.k = inputs[1]
    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None
a = m.ones(2, requires_grad=True)
y = F.apply(a, 3.0)
y.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["setup_context_tuple_out"] = '''
class F(Function):
    @staticmethod
    def forward(x):
        return x * 2, x * 3
    @staticmethod
    def setup_context(ctx, inputs, output):
        out.append((type(inputs).__name__, type(output).__name__, len(output)))
        ctx.mark_non_differentiable(output[1])
    @staticmethod
    def backward(ctx, g, g2):
        return g * 2
a = m.ones(2, requires_grad=True)
y, z = F.apply(a)
out.append((y.requires_grad, z.requires_grad))
y.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["mark_dirty_setup_context"] = '''
class F(Function):
    @staticmethod
    def forward(x):
        x.mul_(2)
        return x
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = m.ones(2, requires_grad=True)
b = a * 1
c = F.apply(b)
out.append((c is b, b.grad_fn.name()))
c.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["rebase_base_inplace"] = '''
def nf(t):
    return [(n.name() if n else None, i) for n, i in t.grad_fn.next_functions]
a = m.ones(2, 3, requires_grad=True)
b = a * 1
v = b[0]
w = b.view(3, 2)
out.append((v.grad_fn.name(), w.grad_fn.name()))
b.mul_(2)
out.append((b.grad_fn.name(), v.grad_fn.name(), w.grad_fn.name(), nf(v), nf(w)))
out.append(repr(v)); out.append(repr(w))
(v.sum() + w.sum()).backward()
out.append(a.grad.tolist())
'''
PROGRAMS["rebase_view_inplace"] = '''
def nf(t):
    return [(n.name() if n else None, i) for n, i in t.grad_fn.next_functions]
a = m.ones(2, 3, requires_grad=True)
b = a * 1
v = b[0]
w = b[:, 1]
v.mul_(2)
out.append((b.grad_fn.name(), nf(b), v.grad_fn.name(), nf(v), w.grad_fn.name(), nf(w)))
out.append(repr(v)); out.append(repr(w)); out.append(repr(b))
(v.sum() + w.sum() * 3 + b.sum()).backward()
out.append(a.grad.tolist())
'''
PROGRAMS["rebase_view_of_view"] = '''
def nf(t):
    return [(n.name() if n else None, i) for n, i in t.grad_fn.next_functions]
a = m.ones(2, 3, requires_grad=True)
b = a * 1
v = b[0]
u = v[1:]
u.add_(1)
out.append((b.grad_fn.name(), v.grad_fn.name(), nf(v), u.grad_fn.name(), nf(u)))
(v * m.tensor([1., 2., 3.])).sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["rebase_transpose"] = '''
def nf(t):
    return [(n.name() if n else None, i) for n, i in t.grad_fn.next_functions]
a = m.ones(2, 3, requires_grad=True)
b = a * 1
v = b.t()
v.mul_(3)
out.append((b.grad_fn.name(), v.grad_fn.name(), nf(v)))
v.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["rebase_unsqueeze_base_write"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
v = b.unsqueeze(0)
e = b.expand(2, 3)
b.exp_()
out.append((v.grad_fn.name(), e.grad_fn.name()))
'''
PROGRAMS["retain_grad_moves"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
v = b[:2]
v.retain_grad()
b.mul_(2)
v.sum().backward()
out.append(repr(v.grad))
'''
PROGRAMS["retain_grad_moves_view_inplace"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
b.retain_grad()
v = b[:2]
v.mul_(2)
b.sum().backward()
out.append(repr(b.grad))
'''
PROGRAMS["retain_grad_view_own_inplace"] = '''
b = m.ones(4, requires_grad=True) * 1
v = b[:2]
v.retain_grad()
w = b[1:3]
w.mul_(3)
v.mul_(2)
((v * 5).sum() + (b * 7).sum()).backward()
out.append((repr(v.grad), v.grad_fn.name(), w.grad))
'''
PROGRAMS["hook_moves"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
v = b[:2]
v.register_hook(lambda g: out.append(("hook", g.tolist())))
b.mul_(2)
v.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["hook_moves_self_inplace"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
b.register_hook(lambda g: out.append(("hook", g.tolist())))
b.mul_(2)
b.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["detach_view"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
b[:2].detach_()
'''
PROGRAMS["detach_view_noreq"] = '''
a = m.ones(3)
v = a[:2]
v.detach_()
out.append(v._is_view())
'''
PROGRAMS["detach_saved"] = '''
a = m.ones(3, requires_grad=True)
b = a * 1
c = b * b
b.detach_()
out.append((b.requires_grad, b._version))
c.sum().backward()
'''
PROGRAMS["detach_saved_output"] = '''
a = m.ones(3, requires_grad=True)
b = a.exp()
b.detach_()
b.sum()
a.exp()
'''
PROGRAMS["grad_self"] = '''
x = m.ones(3, requires_grad=True)
x.grad = x
'''
PROGRAMS["numpy_no_grad"] = '''
x = m.ones(3, requires_grad=True)
with m.no_grad():
    out.append(x.numpy().tolist())
'''
PROGRAMS["numpy_rg"] = '''
x = m.ones(3, requires_grad=True)
x.numpy()
'''
PROGRAMS["numpy_inference"] = '''
x = m.ones(3, requires_grad=True)
y = x * 2
with m.no_grad():
    out.append(y.numpy().tolist())
'''
PROGRAMS["expand_write_one"] = '''
x = m.ones(1, 3)
e = x.expand(2, 3)
e[0, 0] = 5
out.append(repr(e)); out.append(repr(x))
'''
PROGRAMS["expand_write_all"] = '''
x = m.ones(1, 3)
e = x.expand(2, 3)
e.mul_(2)
'''
PROGRAMS["expand_write_grad"] = '''
a = m.ones(1, 3, requires_grad=True)
x = a * 1
e = x.expand(2, 3)
e[0, 1] = 5
out.append(repr(e)); out.append(repr(x))
x.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["expand_fill"] = '''
x = m.ones(1, 3)
e = x.expand(2, 3)
e.fill_(2)
out.append(repr(x))
'''
PROGRAMS["nograd_view"] = '''
a = m.ones(2, 3, requires_grad=True)
b = a * 1
with m.no_grad():
    v = b[0]
    out.append(repr(v))
    v.mul_(2)
out.append(repr(v)); out.append(repr(b))
out.append((v.requires_grad, v.grad_fn, v._is_view(), b.grad_fn.name()))
b.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["nograd_view_leaf"] = '''
a = m.ones(2, 3, requires_grad=True)
with m.no_grad():
    v = a[0]
    v.mul_(2)
out.append(repr(v)); out.append(repr(a))
out.append((v.requires_grad, v.grad_fn, v._is_view(), v.is_leaf))
'''
PROGRAMS["nograd_view_then_grad"] = '''
a = m.ones(2, 3, requires_grad=True)
b = a * 1
with m.no_grad():
    v = b[0]
v.mul_(2)
'''
PROGRAMS["nograd_view_of_view_then_grad"] = '''
b = m.ones(4, requires_grad=True) * 1
with m.no_grad():
    v = b[:3]
vv = v[:2]
try:
    vv.mul_(2)
except RuntimeError as e:
    out.append(str(e))
b.mul_(2)
vv.grad_fn
'''
PROGRAMS["inference_view_then_normal"] = '''
b = m.ones(4, requires_grad=True) * 1
with m.inference_mode():
    v = b[:3]
vv = v[:2]
try:
    vv.mul_(2)
except RuntimeError as e:
    out.append(str(e))
b.mul_(2)
try:
    vv.grad_fn
except RuntimeError as e:
    out.append(str(e))
v.mul_(2)
'''
PROGRAMS["view_of_leaf_later_requiring_grad"] = '''
a = m.ones(3)
v = a[:2]
a.requires_grad_()
try:
    v.add_(m.ones(2, requires_grad=True))
except RuntimeError as e:
    out.append(str(e))
out.append((v.grad_fn, v.is_leaf, a.tolist()))
v[:1].mul_(2)
'''
PROGRAMS["nograd_view_use"] = '''
a = m.ones(2, 3, requires_grad=True)
b = a * 1
with m.no_grad():
    v = b[0]
out.append((v.requires_grad, repr(v)))
(v * 2).sum()
'''
PROGRAMS["second_backward_index"] = '''
x = m.ones(3, requires_grad=True)
y = x[[1, 1]]
y.sum().backward()
y.sum().backward()
'''
PROGRAMS["second_backward_index_saved"] = '''
x = m.ones(3, requires_grad=True)
y = x[[1, 1]]
out.append(y.grad_fn._saved_indices)
y.sum().backward()
y.grad_fn._saved_indices
'''
PROGRAMS["second_backward_index_put"] = '''
x = m.ones(3, requires_grad=True)
b = x * 1
b[[0, 1]] = m.tensor([2., 3.])
b.sum().backward()
b.sum().backward()
'''
PROGRAMS["second_backward_copyslices"] = '''
x = m.ones(3, requires_grad=True)
b = x * 1
b[0].mul_(x[1])
b.sum().backward()
b.sum().backward()
'''
PROGRAMS["second_backward_masked"] = '''
x = m.ones(3, requires_grad=True)
y = x[x > 0]
y.sum().backward()
y.sum().backward()
'''
PROGRAMS["second_backward_gather"] = '''
x = m.ones(3, requires_grad=True)
y = x.gather(0, m.tensor([0, 0]))
y.sum().backward()
y.sum().backward()
'''
PROGRAMS["second_backward_sum"] = '''
x = m.ones(3, requires_grad=True)
y = x.sum()
y.backward()
y.backward()
'''
PROGRAMS["second_backward_view"] = '''
x = m.ones(3, requires_grad=True)
y = x.view(3, 1)
y.sum().backward()
y.sum().backward()
out.append(x.grad.tolist())
'''

PROGRAMS["once_diff_create_graph_error_node"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x
a = m.tensor([1., 2.], requires_grad=True)
b = m.tensor([1., 2.], requires_grad=True)
g, = m.autograd.grad((F.apply(a) * b).sum(), a, create_graph=True)
out.append((repr(g), g.grad_fn.name(), [(n.name(), i) for n, i in g.grad_fn.next_functions]))
g.sum().backward()
'''
PROGRAMS["linear_setup_context"] = '''
class Linear(Function):
    @staticmethod
    def forward(x, w, b=None):
        y = x.mm(w.t())
        return y if b is None else y + b.unsqueeze(0).expand_as(y)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
    @staticmethod
    def backward(ctx, g):
        x, w, b = ctx.saved_tensors
        out.append(ctx.needs_input_grad)
        gx = g.mm(w) if ctx.needs_input_grad[0] else None
        gw = g.t().mm(x) if ctx.needs_input_grad[1] else None
        gb = g.sum(0) if b is not None and ctx.needs_input_grad[2] else None
        return gx, gw, gb
x = m.tensor([[1., 2.], [3., 4.]], dtype=m.float64)
w = m.tensor([[0.5, -1.], [2., 1.], [0., 3.]], dtype=m.float64, requires_grad=True)
b = m.tensor([1., 2., 3.], dtype=m.float64, requires_grad=True)
y = Linear.apply(x, w, b)
out.append((repr(y), [(n.name() if n else None, i) for n, i in y.grad_fn.next_functions]))
y.pow(2).sum().backward()
out.append((w.grad.tolist(), b.grad.tolist()))
'''
PROGRAMS["cube_double_backward"] = '''
class Cube(Function):
    @staticmethod
    def forward(x):
        return x ** 3, 3 * x ** 2
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output[1])
    @staticmethod
    def backward(ctx, g, g_dx):
        x, dx = ctx.saved_tensors
        return g * dx + g_dx * 6 * x
def cube(x):
    return Cube.apply(x)[0]
x = m.tensor([0.5, -1.5, 2.], dtype=m.float64, requires_grad=True)
out.append(m.autograd.gradcheck(cube, (x,)))
out.append(m.autograd.gradgradcheck(cube, (x,)))
g, = m.autograd.grad(cube(x).sum(), x, create_graph=True)
out.append(repr(g))
gg, = m.autograd.grad(g.sum(), x)
out.append(gg.tolist())
'''
PROGRAMS["as_strided_geometry"] = '''
a = m.ones(2, 3, requires_grad=True)
b = a * 1
views = [b[1, 1:], b.t(), b.unsqueeze(0), b[:, 0].unsqueeze(1), b.view(3, 2)[1:], b.expand(2, 2, 3)]
b.mul_(2)
for v in views:
    n = v.grad_fn
    out.append((n.name(), n._saved_size, n._saved_stride, n._saved_storage_offset,
                [(f.name(), i) for f, i in n.next_functions]))
'''
PROGRAMS["split_view_indirect"] = '''
a = m.ones(4, requires_grad=True)
b = a * 1
s = b.split(2)
b.mul_(2)
out.append(repr(s[1]))
s[1].grad_fn
'''
PROGRAMS["retain_grad_plain_inplace"] = '''
x = m.ones(3, requires_grad=True)
b = x * 1
b.retain_grad()
b.mul_(2)
b.sum().backward()
out.append((repr(b.grad), x.grad.tolist()))
'''
PROGRAMS["double_backward_through_rebase"] = '''
x = m.tensor([1., 2., 3.], requires_grad=True)
b = x * x
v = b[1:]
b.mul_(x)
g, = m.autograd.grad((v * v).sum(), x, create_graph=True)
out.append(repr(g))
g.sum().backward()
out.append(x.grad.tolist())
'''
PROGRAMS["double_backward_through_copyslices"] = '''
x = m.tensor([1., 2., 3.], requires_grad=True)
b = x * 1
b[1:].mul_(x[:2])
g, = m.autograd.grad((b * b).sum(), x, create_graph=True)
out.append(repr(g))
g.sum().backward()
out.append(x.grad.tolist())
'''
PROGRAMS["view_of_base_without_grad"] = '''
a = m.ones(3)
v = a[:2]
w = m.ones(2, requires_grad=True)
v.mul_(w)
out.append((a.grad_fn.name(), v.grad_fn.name(), v.grad_fn.next_functions[0][0].name()))
a.sum().backward()
out.append(w.grad.tolist())
'''
PROGRAMS["returned_input_is_a_view"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, g):
        return g
a = m.ones(2, requires_grad=True)
b = a * 1
y = F.apply(b)
out.append((y is b, y._is_view(), y._base is b, y.grad_fn.name(), y._version))
y.add_(1)
'''
PROGRAMS["returned_input_under_no_grad"] = '''
class Same(Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, g):
        return g
class Dirty(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
for fn in (Same, Dirty):
    for rg in (True, False):
        b = m.ones(4, requires_grad=rg) * 1
        for given in (b, b[:2]):
            with m.no_grad():
                y = fn.apply(given)
            out.append((y is given, y.requires_grad, y.grad_fn, y._base is given, y._version))
'''
PROGRAMS["setup_context_saved_output"] = '''
class Exp(Function):
    @staticmethod
    def forward(x):
        return x.exp()
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
    @staticmethod
    def backward(ctx, g):
        r, = ctx.saved_tensors
        return g * r
x = m.tensor([0., 1.], dtype=m.float64, requires_grad=True)
y = Exp.apply(x)
g, = m.autograd.grad(y.sum(), x, create_graph=True)
out.append((repr(g), g.grad_fn.name()))
'''
PROGRAMS["nograd_view_nonrg_base"] = '''
a = m.ones(3)
with m.no_grad():
    v = a[:2]
w = m.ones(2, requires_grad=True)
v.mul_(w)
out.append(repr(a))
'''
PROGRAMS["nograd_view_then_base_grad_inplace"] = '''
a = m.ones(3)
with m.no_grad():
    v = a[:2]
w = m.ones(3, requires_grad=True)
a.mul_(w)
out.append(repr(a))
out.append(repr(v))
'''
PROGRAMS["optimizer_like"] = '''
p = m.ones(2, 2, requires_grad=True)
(p * 2).sum().backward()
with m.no_grad():
    for row in p:
        row.sub_(0.1 * row)
    p.add_(-0.1 * p.grad)
out.append(repr(p))
(p * 3).sum().backward()
out.append(p.grad.tolist())
'''
PROGRAMS["view_in_place_create_graph"] = '''
x = m.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y[0] = x[1] * x[2]
g, = m.autograd.grad(y.sum(), x, create_graph=True)
out.append(repr(g))
'''
PROGRAMS["unbind_rows_iterate_modify"] = '''
p = m.ones(2, 2, requires_grad=True)
b = p * 1
for row in b:
    row.mul_(2)
out.append(repr(b))
b.sum().backward()
out.append(p.grad.tolist())
'''

PROGRAMS["dirty_view_create_graph"] = '''
class Sq(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.clone())
        x.mul_(x)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
a = m.tensor([1., 2., 3.], requires_grad=True)
b = a * 1
Sq.apply(b[1:])
g, = m.autograd.grad((b * b).sum(), a, create_graph=True)
out.append(repr(g))
g.sum().backward()
out.append(a.grad.tolist())
'''
PROGRAMS["dirty_two_outputs"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x * 2, x
    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2
a = m.ones(2, requires_grad=True)
b = a * 1

y, z = F.apply(b)
out.append((z is b, z.output_nr, z.grad_fn.name(), y.output_nr))
(y.sum() + z.sum() * 3).backward()
out.append(a.grad.tolist())
'''
PROGRAMS["view_returned_then_base_modified"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, x):
        return x[0]
    @staticmethod
    def backward(ctx, g):
        return m.stack([g, m.zeros_like(g)])
a = m.ones(2, 2, requires_grad=True)
b = a * 1
y = F.apply(b)
b.mul_(2)
out.append(repr(y))
y.sum()
'''

PROGRAMS["passthrough_non_differentiable"] = '''
class F(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[t for t in args if not t.requires_grad])
        return args
    @staticmethod
    def backward(ctx, *grads):
        return grads
a = m.tensor([1.0, 2.0], requires_grad=True)
b = m.tensor([3.0, 4.0])
pa, pb = F.apply(a, b)
out.append((pa.grad_fn is pb.grad_fn, pb.requires_grad, pb.grad_fn, pb._is_view()))
def listed(gs):
    return [None if g is None else g.tolist() for g in gs]
pa.grad_fn.register_hook(lambda gi, go: out.append((listed(gi), listed(go))))
(pa * pb).sum().backward()
out.append((a.grad.tolist(), b.grad))
'''


PROGRAMS["view_of_leaf_later_requires_grad"] = '''
a = m.ones(3)
v = a[1:]
w = v[:1]
out.append((v.requires_grad, w.requires_grad))
a.requires_grad_()
out.append((v.requires_grad, w.requires_grad, v.is_leaf, v.grad_fn))
'''
for _mode in ("no_grad", "inference_mode"):
    PROGRAMS[f"view_of_view_written_under_{_mode}_twice"] = f'''
b = m.ones(4, requires_grad=True) * 1
with m.{_mode}():
    v = b[:3]
w = v[:2]
with m.{_mode}():
    w.mul_(2)
out.append((w.requires_grad, b.tolist()))
try:
    w.grad_fn
except RuntimeError as e:
    out.append(str(e))
out.append(w.requires_grad)
'''

PROGRAMS["queue_callback"] = '''
engine = m.autograd.Variable._execution_engine
class Q(Function):
    @staticmethod
    def forward(ctx, x, nested, fail):
        ctx.nested, ctx.fail = nested, fail
        return x * 1
    @staticmethod
    def backward(ctx, g):
        def first():
            out.append(("first", m.is_grad_enabled()))
            engine.queue_callback(lambda: out.append("queued by a callback"))
        engine.queue_callback(first)
        if ctx.nested:
            with m.enable_grad():
                Q.apply(m.ones(1, requires_grad=True), False, False).sum().backward()
            out.append("inner pass returned")
        if ctx.fail:
            raise ValueError("this backward failed")
        return g * 2, None, None
x = m.ones(1, requires_grad=True)
Q.apply(x, False, False).sum().backward()
Q.apply(x, True, False).sum().backward()
out.append(m.autograd.grad(Q.apply(x, False, False).sum(), x, create_graph=True)[0].tolist())
try:
    Q.apply(x, False, True).sum().backward()
except ValueError as e:
    out.append(str(e))
try:
    engine.queue_callback(print)
except RuntimeError as e:
    out.append(str(e))
'''

def _run(src: str, lib: Any) -> list:
    """Run one program on ``lib``; what it appended to ``out``, then its warnings or error."""
    out: list = []
    if lib is gradviz:
        fn, once = gradviz.autograd.Function, gradviz.autograd.function.once_differentiable
    else:
        fn, once = torch.autograd.Function, torch.autograd.function.once_differentiable
    env = {"m": lib, "out": out, "Function": fn, "once_differentiable": once}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(src, env)  # noqa: S102 - the programs of this module
        out.extend(("warning", w.category.__name__,
                    str(w.message).split(" (Triggered internally at")[0]) for w in caught)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        out.append(("error", type(e).__name__, str(e)))
    return [_normal(x) for x in out]


def _normal(x: Any) -> Any:
    text = re.sub(r" object at 0x[0-9a-f]+", " object", str(x))
    return text.replace("gradviz", "torch")


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_behaves_as_in_torch(name: str) -> None:
    src = PROGRAMS[name]
    theirs, ours = _run(src, torch), _run(src, gradviz)
    assert len(ours) == len(theirs), (name, theirs, ours)
    for t, g in zip(theirs, ours, strict=True):
        if t.startswith("('error'") and "unsupported operation" in t:
            assert g.startswith(t[:-2]), (name, t, g)  # gradviz says which op and shape too
        else:
            assert g == t, (name, t, g)
