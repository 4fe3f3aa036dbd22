"""``einsum``, decomposed as PyTorch decomposes it (``at::einsum`` in ATen's ``Linear.cpp``).

PyTorch records no "EinsumBackward": einsum is composite, and autograd sees the views and
products it is made of. gradviz takes the same steps, so a learner sees the same graph:

1. **Label order.** The output's labels come first, in the output's order (an implicit output
   is the ellipsis, then the labels seen once, alphabetically with upper case first); then the
   ellipsis if the output drops it; then the contracted labels, in the same alphabetical order.
2. **Align each operand** to that order: a repeated label takes a ``diagonal`` and moves it back
   (``movedim``: ``DiagonalBackward0``, ``PermuteBackward0``); a missing label is an
   ``unsqueeze`` at the end; one ``permute`` puts the dimensions in label order. Every operand
   then has every label, of size 1 where it lacks it.
3. **Contract** left to right (PyTorch's order without opt_einsum, which torch 2.13's CPU wheel
   does not ship): of each pair, a label no later operand has is summed where only one side has
   it (``sum(dims, keepdim=True)``) and contracted by ``sumproduct_pair`` where both have it;
   the product replaces the pair at the front.
4. ``sumproduct_pair``: no contracted label is a ``mul``; otherwise each side is permuted to
   ``(batch, own, contracted)``/``(batch, contracted, own)``, reshaped to 3-D, multiplied with
   ``bmm``, viewed back and permuted to the label order. The two sides swap places when all of
   the right side's own labels come before the left side's in the output (``'ij,jk->ki'``).
5. **Finish**: a single operand sums its contracted labels (``SumBackward1``); a product views
   its size-1 contracted dimensions away (``ViewBackward0``).

So ``einsum('ij,jk->ik', a, b)`` is ``View <- Permute <- View <- Bmm`` over
``View <- Permute <- Permute <- Unsqueeze`` of each input, ``'ij->ji'`` one ``Permute``, and
``'ii->'`` ``Sum <- Permute <- Permute <- Diagonal``.
"""

from __future__ import annotations

from typing import Any

from gradviz.ops import functional as F
from gradviz.tensor import Tensor

__all__ = ["einsum"]

_ELLIPSIS = 52  # the label code of "..." (letters are 0-51: A-Z then a-z, as PyTorch counts)
_TOTAL = 52


def _label(ch: str) -> int:
    return ord(ch) - ord("A") if ch <= "Z" else ord(ch) - ord("a") + 26


def _letter(label: int) -> str:
    return chr(ord("A") + label) if label < 26 else chr(ord("a") + label - 26)


def _is_subscript(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def _parse_inputs(lhs: str, num_ops: int) -> list[list[int]]:
    """Each operand's labels (``_ELLIPSIS`` for ``...``), with PyTorch's error texts."""
    op_labels: list[list[int]] = [[] for _ in range(num_ops)]
    curr, found_ell, i = 0, False, 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            if found_ell:
                raise RuntimeError(f"einsum(): found '.' for operand {curr} for which an "
                                   "ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {curr} that is not part "
                                   "of any ellipsis")
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            found_ell = True
        elif ch == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            found_ell = False
        elif ch != " ":
            if not _is_subscript(ch):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            op_labels[curr].append(_label(ch))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return op_labels


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """``(left * right).sum(sum_dims, keepdim=True)`` as one ``bmm`` between permutes and
    reshapes (PyTorch's ``sumproduct_pair``; both sides have the same number of dimensions,
    size 1 where they broadcast)."""
    if not sum_dims:
        return F.mul(left, right)
    lro: list[int] = []  # in both sides and in the output: the batch of the bmm
    lo: list[int] = []  # only in the left side
    ro: list[int] = []  # only in the right side (or in neither)
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:  # only one side has it: sum it right away
                left = F.sum(left, i, True)
            elif sr:
                right = F.sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:
        # Every right-only dimension comes before every left-only one in the output: with the
        # sides swapped, bmm writes the result in the output's order (PyTorch swaps too).
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo]
                + [1] * len(sum_dims) + [right.shape[d] for d in ro])
    lperm = lro + lo + sum_dims + ro
    rperm = lro + sum_dims + ro + lo
    operm = [-1] * len(out_size)
    for pos, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = pos
    if left._data.dtype != right._data.dtype:  # bmm's check, in PyTorch's words
        raise RuntimeError(f"expected scalar type {left.dtype._legacy[:-6]} but found "
                           f"{right.dtype._legacy[:-6]}")
    left = F.reshape(F.permute(left, lperm), (lro_size, lo_size, sum_size))
    right = F.reshape(F.permute(right, rperm), (lro_size, sum_size, ro_size))
    result = F.bmm(left, right)
    return F.permute(F.view(result, tuple(out_size)), operm)


def _from_sublists(args: tuple) -> tuple[str, list]:
    """``einsum(op0, sublist0, op1, sublist1, ..., [out])``: the equation it spells."""
    def letters(sub: Any) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
                continue
            n = int(s)
            if not 0 <= n < _TOTAL:
                raise ValueError("einsum(): subscript in subscript list is not within the valid "
                                 "range [0, 52)")
            out.append(_letter(n))
        return "".join(out)

    operands = list(args[0:-1:2]) if len(args) % 2 else list(args[0::2])
    subs = [letters(s) for s in args[1::2]]
    equation = ",".join(subs[:len(operands)])
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, operands


def einsum(*args: Any) -> Tensor:
    """Sum the products of the operands' elements over the labels the ``equation`` contracts
    (``'ij,jk->ik'`` is a matrix product, ``'ii->'`` a trace, ``'bhqd,bhkd->bhqk'`` attention's
    scores); ``...`` stands for broadcast dimensions. The operands follow the equation, or come
    as one list; the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` works too.

    Recorded as PyTorch records it: views, permutes, ``bmm``, ``mul`` and ``sum`` (this
    module's docstring gives the rule), contracted left to right.

    Example:
        >>> import gradviz
        >>> a, b = gradviz.ones(2, 3), gradviz.ones(3, 4)
        >>> gradviz.einsum('ij,jk->ik', a, b)
        tensor([[3., 3., 3., 3.],
                [3., 3., 3., 3.]])
        >>> gradviz.einsum('ii->', gradviz.eye(3))
        tensor(3.)
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _from_sublists(args)
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(op).__name__}")
    return _einsum(equation, operands)


def _einsum(equation: str, operands: list[Tensor]) -> Tensor:
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_inputs(lhs, num_ops)

    # How often each label occurs, and how many dimensions the ellipsis covers.
    label_count = [0] * _TOTAL
    ell_num_dim = 0
    for i, (op, labels) in enumerate(zip(operands, op_labels, strict=True)):
        nlabels = len(labels)
        has_ell = _ELLIPSIS in labels
        for lab in labels:
            if lab == _ELLIPSIS:
                nlabels -= 1
            else:
                label_count[lab] += 1
        if has_ell:
            ell_num_dim = max(ell_num_dim, op.ndim - nlabels)
        if (nlabels > op.ndim) if has_ell else (nlabels != op.ndim):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) does not match "
                f"the number of dimensions ({op.ndim}) for operand {i}"
                + ("" if has_ell else " and no ellipsis was given"))

    # Where each label goes: the output's labels first, then the contracted ones.
    perm_of = [-1] * _TOTAL
    perm_index = ell_index = 0
    ell_in_output = False
    if arrow < 0:  # implicit output: the ellipsis, then the labels seen once
        perm_index, ell_in_output = ell_num_dim, True
        for lab in range(_TOTAL):
            if label_count[lab] == 1:
                perm_of[lab] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                       "already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                i += 2
                ell_index, ell_in_output = perm_index, True
                perm_index += ell_num_dim
            elif ch != " ":
                if not _is_subscript(ch):
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                       "must be in [a-zA-Z]")
                lab = _label(ch)
                if label_count[lab] == 0 or perm_of[lab] != -1:
                    why = ("appears more than once in the output" if perm_of[lab] != -1
                           else "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {ch} {why}")
                perm_of[lab] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:  # a dropped ellipsis is contracted
        ell_index = perm_index
        perm_index += ell_num_dim
    for lab in range(_TOTAL):
        if label_count[lab] > 0 and perm_of[lab] == -1:
            perm_of[lab] = perm_index
            perm_index += 1

    # Align every operand to the label order (diagonals, unsqueezes, one permute), counting
    # for each position how many operands have it with a size other than 1.
    label_size = [1] * _TOTAL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops: list[Tensor] = []
    for i, op in enumerate(operands):
        labels = op_labels[i]
        permutation = [-1] * perm_index
        dim = 0
        for lab in labels:
            if lab == _ELLIPSIS:
                ndim = op.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {j} covered by ellipsis in operand {i}"
                                f"has size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_of[lab]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[lab] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_letter(lab)} has size {size} for operand "
                            f"{i} which does not broadcast with previously seen size "
                            f"{label_size[lab]}")
                    label_size[lab] = size
                    dim_counts[perm_of[lab]] += 1
                permutation[perm_of[lab]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, moved to where the label first was
                prev = permutation[perm_of[lab]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_letter(lab)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = F.movedim(F.diagonal(op, 0, prev, dim), -1, prev)
        for k, val in enumerate(permutation):
            if val == -1:  # a label this operand lacks: a size-1 dimension
                op = F.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(F.permute(op, permutation))

    # Contract left to right; the product takes the pair's place at the front.
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims: list[int] = []
        a_dims: list[int] = []
        b_dims: list[int] = []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:  # no later operand has it: contract it now
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:  # only one side has it, and nobody after
                if a.shape[d] != 1:
                    a_dims.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_dims.append(d)
                    dim_counts[d] = 0
        if a_dims:
            a = F.sum(a, a_dims, True)
        if b_dims:
            b = F.sum(b, b_dims, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    result = ops[0]
    if perm_index > out_num_dim:
        if num_ops > 1:  # every contracted dimension is 1 by now: view it away
            return F.view(result, tuple(result.shape[:out_num_dim]))
        return F.sum(result, list(range(out_num_dim, perm_index)))
    return result
