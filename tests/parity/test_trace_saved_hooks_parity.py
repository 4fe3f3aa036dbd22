"""The traced saved-tensor hook steps follow PyTorch's order: the same program on torch, with
hooks that log what they were given, packs and unpacks in the order the trace records them.
"""

from __future__ import annotations

import torch

import gradviz


def _program(m, pack, unpack):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        z = (x * w).exp() * x.sin()
    z.sum().backward()


def _torch_log():
    log = []

    def pack(t):
        log.append(("pack", t.tolist()))
        return t

    def unpack(p):
        log.append(("unpack", p.tolist()))
        return p

    _program(torch, pack, unpack)
    return log


def test_pack_and_unpack_order_matches_torch():
    want = _torch_log()
    with gradviz.trace() as tr:
        _program(gradviz, lambda t: t, lambda p: p)
    # packs: the saved values of the forward ops, in op order, each node's in the order saved
    packs = [s.packed["values"] for op in tr.ops if op.node
             for s in tr.nodes[op.node].saved if s.pack_hook]
    unpacks = [s.tensor["values"] for s in tr.run().steps if s.kind == "unpack_hook"]
    got = [("pack", v) for v in packs] + [("unpack", v) for v in unpacks]
    assert len(got) == len(want) == 12

    def rounded(log):
        return [(k, [round(x, 3) for x in v]) for k, v in log]

    assert [e for e in rounded(got) if e[0] == "unpack"] == \
        [e for e in rounded(want) if e[0] == "unpack"]
    assert sorted(rounded(got)) == sorted(rounded(want))
