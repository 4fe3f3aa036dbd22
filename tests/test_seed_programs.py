"""The seed programs run on gradviz with only their imports changed, and see what PyTorch shows.

SEED_001 is /work/shared/seeds/001_fd105258ddf56a0b.txt's code blocks in order, verbatim except
``import torch`` -> ``import gradviz as torch`` and ``torch.autograd.function`` ->
``gradviz.autograd.function``. Its expectations (node names, printed lines) were checked by
running the original against torch 2.13.0.
"""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np

SEED_001 = '''
import gradviz as torch

x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = torch.sum(x + y)
z.backward()
print(x.grad)
print(y.grad)


x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z = x ** 2 + y ** 3
z.backward(torch.ones_like(x))
print(x.grad)

dir(z)
print("x.is_leaf="+str(x.is_leaf))
print("z.is_leaf="+str(z.is_leaf))

dir(z.grad_fn)
z.grad_fn.next_functions

xg = z.grad_fn.next_functions[0][0]
dir(xg)

x_leaf=xg.next_functions[0][0]

print(type(x_leaf))
print(x_leaf.variable)
print("x_leaf.variable的id:"+str(id(x_leaf.variable)))
print("x的id:"+str(id(x)))
assert(id(x_leaf.variable)==id(x))

import gradviz as torch

from gradviz.autograd.function import Function


# 定义一个乘以常数的操作(输入参数是张量)
# 方法必须是静态方法，所以要加上@staticmethod
class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx 用来保存信息这里类似self，并且ctx的属性可以在backward中调用
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # 返回的参数要与输入的参数一样.
        # 第一个输入为3x3的张量，第二个为一个常数
        # 常数的梯度必须是 None.
        return grad_output, None


a = torch.rand(3, 3, requires_grad=True)
b = MulConstant.apply(a, 5)
print("a:" + str(a))
print("b:" + str(b))  # b为a的元素乘以5
b.backward(torch.ones_like(a))
print(a.grad)
'''


def run_seed(code: str) -> tuple[dict, str]:
    namespace: dict = {"__name__": "__seed__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<seed 001>", "exec"), namespace)
    return namespace, out.getvalue()


def test_seed_001_runs_and_shows_pytorchs_graph():
    ns, _ = run_seed(SEED_001)
    z, x = ns["z"], ns["x"]
    assert z.grad_fn.name() == "AddBackward0"
    assert [type(n).__name__ for n, _ in z.grad_fn.next_functions] == ["PowBackward0"] * 2
    assert [nr for _, nr in z.grad_fn.next_functions] == [0, 0]
    assert ns["xg"].name() == "PowBackward0"
    assert type(ns["x_leaf"]).__name__ == "AccumulateGrad"
    assert ns["x_leaf"].variable is x
    assert ns["x_leaf"].next_functions == ()
    # z = x**2 + y**3 with gradient ones: x.grad = 2x
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_seed_001_prints_what_pytorch_prints():
    ns, out = run_seed(SEED_001)
    lines = out.splitlines()
    assert "x.is_leaf=True" in lines and "z.is_leaf=False" in lines
    # PyTorch prints <class 'AccumulateGrad'>; gradviz's class lives in a module.
    type_line = lines[lines.index("z.is_leaf=False") + 1]
    assert re.fullmatch(r"<class '([\w.]+\.)?AccumulateGrad'>", type_line)
    ids = [line.split(":", 1)[1] for line in lines if line.startswith(("x_leaf.variable的id:",
                                                                        "x的id:"))]
    assert len(ids) == 2 and ids[0] == ids[1] == str(id(ns["x"]))
    # The first two prints are sum(x + y)'s gradients: all ones, 5x5.
    ones = "tensor([[1., 1., 1., 1., 1.],"
    assert lines[0] == ones and lines[5] == ones
    b_text = out[out.index("b:tensor("):]
    assert re.match(r"b:tensor\(\[\[[^\]]+\],\n\s+\[[^\]]+\],\n\s+\[[^\]]+\]\], "
                    r"grad_fn=<MulConstantBackward>\)", b_text)
    assert "a:tensor([[" in out and "requires_grad=True)" in out[out.index("a:tensor("):]
    # MulConstant's backward passes the ones straight through.
    assert out.rstrip().endswith("tensor([[1., 1., 1.],\n        [1., 1., 1.],\n"
                                 "        [1., 1., 1.]])")


def test_seed_001_mul_constant_values():
    ns, _ = run_seed(SEED_001)
    a, b = ns["a"], ns["b"]
    np.testing.assert_allclose(b.detach().numpy(), 5 * a.detach().numpy(), rtol=1e-6)
    assert b.grad_fn.name() == "MulConstantBackward" and b.grad_fn.constant == 5
    assert b.grad_fn.next_functions[0][0].variable is a
