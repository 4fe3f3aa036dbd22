"""Regenerate the op table in docs/ops.md from the derivative table (``gradviz.ops.OPS``).

Usage: ``python scripts/gen_ops_doc.py`` (rewrites the part of docs/ops.md between the
``ops-table`` markers; the prose around it is kept). ``tests/test_ops_doc.py`` parses the
checked-in file and compares it with ``OPS``, so the documentation cannot drift: after adding
an op, add its row to :data:`CALLS` here and rerun the script.

The node name and the saved names come from ``OPS``; how the op is called (functional forms,
Tensor methods) is written down here, and the notes column is the entry's ``doc``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ops.md"
BEGIN, END = "<!-- ops-table:begin -->", "<!-- ops-table:end -->"

# op name -> (how to call it, as functions or operators; Tensor methods). Spans starting with
# `gradviz.` or `F.` (gradviz.nn.functional) and methods written `.name()` are checked to exist.
CALLS: dict[str, tuple[str, str]] = {
    # arithmetic
    "add": ("`gradviz.add`, `x + y`", "`.add()`, `.add_()`, `+=`"),
    "sub": ("`gradviz.sub`, `gradviz.subtract`, `x - y`", "`.sub()`, `.sub_()`, `-=`"),
    "rsub": ("`2 - x`, `gradviz.rsub(x, 2)`", ""),
    "rsub_tensor": ("`gradviz.rsub(x, y)`", ""),
    "mul": ("`gradviz.mul`, `gradviz.multiply`, `x * y`, `gradviz.outer`, `F.dropout`",
            "`.mul()`, `.mul_()`, `*=`, `.outer()`"),
    "div": ("`gradviz.div`, `gradviz.divide`, `x / y`", "`.div()`, `.div_()`, `/=`"),
    "neg": ("`gradviz.neg`, `gradviz.negative`, `-x`", "`.neg()`"),
    "reciprocal": ("`gradviz.reciprocal`, `2 / x`", "`.reciprocal()`"),
    "pow": ("`gradviz.pow`, `x ** 2`, `gradviz.square`", "`.pow()`, `.square()`"),
    "pow_tensor": ("`gradviz.pow`, `x ** y`", "`.pow()`"),
    "pow_scalar_base": ("`gradviz.pow(2, x)`, `2 ** x`", ""),
    "exp": ("`gradviz.exp`", "`.exp()`"),
    "log": ("`gradviz.log`", "`.log()`"),
    "tanh": ("`gradviz.tanh`, `F.tanh`", "`.tanh()`"),
    "sigmoid": ("`gradviz.sigmoid`, `F.sigmoid`", "`.sigmoid()`"),
    "relu": ("`gradviz.relu`, `F.relu`", "`.relu()`, `.relu_()`"),
    # reductions
    "sum": ("`gradviz.sum`", "`.sum()`"),
    "sum_dim": ("`gradviz.sum(x, dim)`", "`.sum()`"),
    "mean": ("`gradviz.mean`", "`.mean()`"),
    "mean_dim": ("`gradviz.mean(x, dim)`", "`.mean()`"),
    # shapes
    "view": ("`gradviz.reshape`, `gradviz.flatten`", "`.view()`, `.reshape()`, `.flatten()`, "
             "`.view_as()`"),
    "_unsafe_view": ("`gradviz.reshape` (copying), `x @ y` (N-D)", "`.reshape()`"),
    "clone": ("`gradviz.clone`", "`.clone()`, `.contiguous()`"),
    "transpose": ("`gradviz.transpose`, `gradviz.swapaxes`", "`.transpose()`, `.swapaxes()`"),
    "t": ("`gradviz.t`", "`.t()`"),
    "permute": ("`gradviz.permute`", "`.permute()`, `x.T`"),
    "expand": ("`gradviz.expand`", "`.expand()`, `.expand_as()`"),
    "unsqueeze": ("`gradviz.unsqueeze`, `x[None]`", "`.unsqueeze()`"),
    "squeeze": ("`gradviz.squeeze`", "`.squeeze()`"),
    "squeeze_dim": ("`gradviz.squeeze(x, dim)`", "`.squeeze()`"),
    "squeeze_dim_": ("`x @ y` (1-D @ 2-D)", ""),
    "to_copy": ("", "`.to()`, `.double()`, `.float()`, `.type_as()`"),
    # linear algebra
    "mm": ("`gradviz.mm`, `gradviz.matmul`, `x @ y`", "`.mm()`, `.matmul()`"),
    "dot": ("`gradviz.dot`, `x @ y` (1-D)", "`.dot()`"),
    "mv": ("`gradviz.mv`, `x @ y` (2-D @ 1-D)", "`.mv()`"),
    "where": ("`gradviz.where`", ""),
    # in place
    "zero_": ("", "`.zero_()`"),
    "fill_": ("", "`.fill_()`"),
    "copy_": ("`x[...] = y`", "`.copy_()`"),
    # comparisons
    "eq": ("`gradviz.eq`, `x == y`", "`.eq()`"),
    "ne": ("`gradviz.ne`, `x != y`", "`.ne()`"),
    "lt": ("`gradviz.lt`, `x < y`", "`.lt()`"),
    "le": ("`gradviz.le`, `x <= y`", "`.le()`"),
    "gt": ("`gradviz.gt`, `x > y`", "`.gt()`"),
    "ge": ("`gradviz.ge`, `x >= y`", "`.ge()`"),
    "logical_not": ("`gradviz.logical_not`, `~x`", ""),
    "logical_and": ("`gradviz.logical_and`, `x & y`", ""),
    "logical_or": ("`gradviz.logical_or`, `x | y`", ""),
    # the op library: elementwise
    "abs": ("`gradviz.abs`, `gradviz.absolute`", "`.abs()`, `.absolute()`"),
    "sign": ("`gradviz.sign`", "`.sign()`"),
    "sqrt": ("`gradviz.sqrt`", "`.sqrt()`"),
    "rsqrt": ("`gradviz.rsqrt`", "`.rsqrt()`"),
    "sin": ("`gradviz.sin`", "`.sin()`"),
    "cos": ("`gradviz.cos`", "`.cos()`"),
    "log1p": ("`gradviz.log1p`", "`.log1p()`"),
    "expm1": ("`gradviz.expm1`", "`.expm1()`"),
    "erf": ("`gradviz.erf`", "`.erf()`"),
    "clamp": ("`gradviz.clamp`, `gradviz.clip`", "`.clamp()`, `.clip()`, `.clamp_()`"),
    "clamp_tensor": ("`gradviz.clamp(x, min_tensor, max_tensor)`", "`.clamp()`, `.clamp_()`"),
    "clamp_min": ("`gradviz.clamp_min`", "`.clamp_min()`"),
    "clamp_min_tensor": ("`gradviz.clamp_min(x, tensor)`", "`.clamp_min()`"),
    "clamp_max": ("`gradviz.clamp_max`", "`.clamp_max()`"),
    "clamp_max_tensor": ("`gradviz.clamp_max(x, tensor)`", "`.clamp_max()`"),
    "maximum": ("`gradviz.maximum`, `gradviz.max(x, y)`", "`.maximum()`, `.max(y)`"),
    "minimum": ("`gradviz.minimum`, `gradviz.min(x, y)`", "`.minimum()`, `.min(y)`"),
    "mul_scalar": ("inside `F.cross_entropy(label_smoothing=...)`", ""),
    "add_scalar": ("inside `F.cross_entropy` (probabilities, smoothing)", ""),
    "div_scalar": ("inside `F.cross_entropy` (probabilities, mean)", ""),
    "leaky_relu": ("`F.leaky_relu`", ""),
    "leaky_relu_": ("`F.leaky_relu(x, inplace=True)`", ""),
    "elu": ("`F.elu`", ""),
    "elu_": ("`F.elu(x, inplace=True)`", ""),
    "gelu": ("`F.gelu`", ""),
    "silu": ("`F.silu`", ""),
    "softplus": ("`F.softplus`", ""),
    "softmax": ("`gradviz.softmax`, `F.softmax`", "`.softmax()`"),
    "log_softmax": ("`gradviz.log_softmax`, `F.log_softmax`", "`.log_softmax()`"),
    # reductions
    "amax": ("`gradviz.amax`", "`.amax()`"),
    "argmax": ("`gradviz.argmax`", "`.argmax()`"),
    "all": ("`gradviz.all`", "`.all()`"),
    "any": ("`gradviz.any`", "`.any()`"),
    "isnan": ("`gradviz.isnan`", "`.isnan()`"),
    "isinf": ("`gradviz.isinf`", "`.isinf()`"),
    "isfinite": ("`gradviz.isfinite`", "`.isfinite()`"),
    "argmin": ("`gradviz.argmin`", "`.argmin()`"),
    "amin": ("`gradviz.amin`", "`.amin()`"),
    "max": ("`gradviz.max`", "`.max()`"),
    "min": ("`gradviz.min`", "`.min()`"),
    "max_dim": ("`gradviz.max(x, dim)`", "`.max()`"),
    "min_dim": ("`gradviz.min(x, dim)`", "`.min()`"),
    "prod": ("`gradviz.prod`", "`.prod()`"),
    "prod_dim": ("`gradviz.prod(x, dim)`", "`.prod()`"),
    "var": ("`gradviz.var`", "`.var()`"),
    "std": ("`gradviz.std`", "`.std()`"),
    "logsumexp": ("`gradviz.logsumexp`", "`.logsumexp()`"),
    "norm": ("`gradviz.norm`", "`.norm()`"),
    # shapes and views
    "_reshape_alias": ("`gradviz.reshape` (non-contiguous view)", "`.reshape()`, `.flatten()`"),
    "alias": ("`x[...]`, `x[:, :]`", ""),
    "select": ("`gradviz.select`, `x[i]`", "`.select()`"),
    "slice": ("`gradviz.narrow`, `x[a:b:c]`", "`.narrow()`"),
    "select_backward": ("select's backward under `create_graph=True`", ""),
    "slice_backward": ("slice's backward under `create_graph=True`", ""),
    "repeat": ("", "`.repeat()`"),
    "split": ("`gradviz.split`, `gradviz.chunk`", "`.split()`, `.chunk()`"),
    "split_with_sizes": ("`gradviz.split(x, [sizes])`", "`.split()`"),
    "unbind": ("`gradviz.unbind`, `iter(x)`", "`.unbind()`"),
    "cat": ("`gradviz.cat`, `gradviz.concat`, `gradviz.concatenate`", ""),
    "stack": ("`gradviz.stack`", ""),
    # linear algebra
    "bmm": ("`gradviz.bmm`, `x @ y` (N-D)", "`.bmm()`"),
    "addmm": ("`gradviz.addmm`, `F.linear`", ""),
    # indexing
    "index": ("`x[tensor]`, `x[list]`, `x[mask]`", ""),
    "index_put": ("`gradviz.index_put`, `x[tensor] = v`", "`.index_put()`, `.index_put_()`"),
    "_index_put_impl": ("index's backward under `create_graph=True`", ""),
    "index_select": ("`gradviz.index_select`", "`.index_select()`"),
    "gather": ("`gradviz.gather`", "`.gather()`"),
    "scatter": ("`gradviz.scatter`", "`.scatter()`, `.scatter_()`"),
    "scatter_value": ("`gradviz.scatter(x, dim, index, 2.0)`", "`.scatter()`, `.scatter_()`"),
    "scatter_add": ("`gradviz.scatter_add`", "`.scatter_add()`, `.scatter_add_()`"),
    "masked_fill": ("`gradviz.masked_fill`", "`.masked_fill()`, `.masked_fill_()`"),
    "masked_fill_tensor": ("`gradviz.masked_fill(x, mask, tensor)`",
                           "`.masked_fill()`, `.masked_fill_()`"),
    "fill_tensor_": ("`x[i] = 2.0`, `x[...] = tensor(2.0)`", ""),
    "embedding": ("`F.embedding`", ""),
    # losses and normalization
    "nll_loss": ("`F.nll_loss`, `F.cross_entropy`", ""),
    "mse_loss": ("`F.mse_loss`", ""),
    "binary_cross_entropy": ("`F.binary_cross_entropy`", ""),
    "binary_cross_entropy_with_logits": ("`F.binary_cross_entropy_with_logits`", ""),
    "layer_norm": ("`F.layer_norm`", ""),
}


def _cell(text: str) -> str:
    return (text or "—").replace("``", "`").replace("|", "\\|").replace("\n", " ")


def table() -> str:
    """The markdown table of every op in ``OPS``."""
    sys.path.insert(0, str(ROOT))
    from gradviz.ops.derivatives import OPS

    missing = sorted(set(OPS) - set(CALLS))
    if missing:
        raise SystemExit(f"add these ops to CALLS in {__file__}: {missing}")
    rows = ["| op | functional | Tensor method | PyTorch node | saved (`_saved_*`) | notes |",
            "| --- | --- | --- | --- | --- | --- |"]
    for name, op in OPS.items():
        fn, method = CALLS[name]
        saved = ", ".join(f"`{n}`" for n in op.saved_names if n not in op.hidden)
        node = f"`{op.node}`" if op.node else "—"
        rows.append(f"| `{name}` | {_cell(fn)} | {_cell(method)} | {node} | {_cell(saved)} | "
                    f"{_cell(op.doc)} |")
    return "\n".join(rows)


def main() -> None:
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{table()}\n{END}{tail}")
    print(f"wrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
