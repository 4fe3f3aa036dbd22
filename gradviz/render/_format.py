"""Short text for the model's values: shapes, value summaries, source locations.

Shared by every renderer (Graphviz labels, rich tables, the HTML player), so a value reads the
same everywhere. Input is the plain data of :mod:`gradviz.trace.model`; output is plain ``str``
(escaping for DOT/HTML is each renderer's job).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["shape_str", "value_str", "grad_str", "source_str", "clip", "plain", "arg_str",
           "op_call", "enum_name"]

MAX_TEXT = 48  # longest user text (names, code) put in a graph label


def plain(text: Any) -> str:
    """``text`` as one printable line: control characters (NUL, newlines, ...) become spaces."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else " " for c in s)


def clip(text: Any, width: int = MAX_TEXT) -> str:
    """:func:`plain` text cut to ``width`` characters with an ellipsis.

    Example:
        >>> clip("abcdefgh", 5)
        'abcd…'
    """
    s = plain(text)
    return s if len(s) <= width else s[: width - 1] + "…"


def shape_str(shape: Any) -> str:
    """A shape as PyTorch prints a size, without the ``torch.Size``: ``(2, 3)``, ``()``.

    Example:
        >>> shape_str([2, 3]), shape_str([5]), shape_str([])
        ('(2, 3)', '(5,)', '()')
    """
    dims = [str(d) for d in (shape or [])]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _num(v: Any) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _values(values: Any, budget: int) -> str:
    """Nested lists as ``[[1, 2], [3, 4]]``, giving up (``…``) after ``budget`` numbers."""
    out: list[str] = []
    count = 0
    stack: list[Any] = [values]
    while stack:  # iterative: the nesting depth is the tensor's ndim
        item = stack.pop()
        if isinstance(item, str) and item in ("[", "]", ", "):
            out.append(item)
            continue
        if isinstance(item, list):
            stack.append("]")
            for k in range(len(item) - 1, -1, -1):
                stack.append(item[k])
                if k:
                    stack.append(", ")
            stack.append("[")
            continue
        count += 1
        if count > budget:
            out.append("…")
            break
        out.append(_num(item))
    return "".join(out)


def value_str(summary: dict[str, Any] | None, numbers: int = 6) -> str:
    """A value summary (:func:`gradviz.trace.model.summarize`) in a few words.

    Small values are printed (``[1, 2, 3, 4, 5, 6, …`` when cut); large ones as their range,
    ``min a max b mean m``; constants as themselves.

    Example:
        >>> value_str({"shape": [2], "dtype": "float32", "values": [1.0, 2.5]})
        '[1, 2.5]'
        >>> value_str({"const": 2})
        '2'
        >>> value_str({"shape": [500], "stats": {"min": -0.7031, "max": 0.6152, "mean": 0.01}})
        'min -0.7031 max 0.6152 mean 0.01'
    """
    if not summary:
        return ""
    if "const" in summary:
        return clip(summary["const"])
    if "values" in summary:
        return _values(summary["values"], numbers)
    stats = summary.get("stats")
    if stats:
        # Words, not "a … b": "…" means "left out" everywhere else (a cut list, cut text).
        return (f"min {_num(stats.get('min'))} max {_num(stats.get('max'))} "
                f"mean {_num(stats.get('mean'))}")
    return ""


def grad_str(summary: dict[str, Any] | None, numbers: int = 4) -> str:
    """A gradient summary as ``shape values``: ``(2,) [1, 1]``; ``None`` when nothing flowed.

    Example:
        >>> grad_str({"shape": [2], "dtype": "float32", "values": [1.0, 1.0]})
        '(2,) [1, 1]'
        >>> grad_str(None)
        'None'
    """
    if summary is None:
        return "None"
    if "const" in summary:
        return value_str(summary)
    vals = value_str(summary, numbers)
    shape = shape_str(summary.get("shape"))
    return f"{shape} {vals}" if vals else shape


def source_str(source: Any, with_code: bool = True, width: int = MAX_TEXT) -> str:
    """A :class:`~gradviz.trace.model.SourceLoc` as ``file.py:12  code``; ``""`` for ``None``.

    Example:
        >>> from gradviz.trace.model import SourceLoc
        >>> source_str(SourceLoc("/home/me/train.py", 12, "loss = f(x)"))
        'train.py:12  loss = f(x)'
    """
    if source is None:
        return ""
    file = str(getattr(source, "file", "") or "")
    base = os.path.basename(file) or file
    text = f"{plain(base)}:{getattr(source, 'line', '')}"
    code = getattr(source, "code", "") if with_code else ""
    if code:
        text += "  " + plain(code)
    return clip(text, width)


# NOTE [enum arguments] PyTorch's aten ops take some choices as ints: a loss's ``reduction`` is
# at::Reduction (0 'none', 1 'mean', 2 'sum'), grid_sampler's modes and embedding_bag's ``mode``
# are enums too. gradviz's own loss ops record ``reduction`` as that int, as PyTorch passes it,
# and a script on real PyTorch that calls the aten op (``torch.ops.aten.mse_loss(x, y, 1)``,
# ``torch.grid_sampler(x, g, 0, 1, False)``) does as well. The trace keeps the int (it is the
# program's value); a label shows the choice by name, as the Python API spells it. Positions
# are those of the aten schemas (checked against torch in tests/parity/test_enum_args.py).
_REDUCTION = ("none", "mean", "sum")
_GRID_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")
_BAG_MODE = ("sum", "mean", "max")
_GRID = ((2, "interpolation_mode", _GRID_INTERPOLATION), (3, "padding_mode", _GRID_PADDING))
_BAG = ((4, "mode", _BAG_MODE),)
ENUM_ARGS: dict[str, tuple[tuple[int, str, tuple[str, ...]], ...]] = {
    **{name: ((2, "reduction", _REDUCTION),) for name in (
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "kl_div",
        "multilabel_margin_loss")},
    **{name: ((3, "reduction", _REDUCTION),) for name in (
        "nll_loss", "nll_loss_nd", "nll_loss2d", "nll_loss_forward", "nll_loss2d_forward",
        "cross_entropy_loss", "binary_cross_entropy", "hinge_embedding_loss")},
    **{name: ((4, "reduction", _REDUCTION),) for name in (
        "binary_cross_entropy_with_logits", "margin_ranking_loss", "cosine_embedding_loss")},
    **{name: ((5, "reduction", _REDUCTION),) for name in (
        "multi_margin_loss", "poisson_nll_loss", "ctc_loss")},
    "triplet_margin_loss": ((7, "reduction", _REDUCTION),),
    "grid_sampler": _GRID, "grid_sampler_2d": _GRID, "grid_sampler_3d": _GRID,
    "embedding_bag": _BAG, "_embedding_bag": _BAG,
}


def enum_name(op: str, arg: str | int, value: Any) -> str | None:
    """The name of the choice an int argument of op ``op`` stands for (``arg``: its keyword,
    or its position among the call's arguments), or None when it is not an enum.

    Example:
        >>> enum_name("nll_loss", "reduction", 1), enum_name("mse_loss", 2, 0)
        ('mean', 'none')
        >>> enum_name("add", "alpha", 1) is None
        True
    """
    if type(value) is not int:  # a bool is not a choice; a str is named already
        return None
    base = op.split(".", 1)[0]  # an overload (torch.ops.aten.mse_loss.default)
    for pos, name, names in ENUM_ARGS.get(base, ()):
        if (arg == pos if isinstance(arg, int) else arg == name):
            return names[value] if 0 <= value < len(names) else None
    if arg == "reduction" and 0 <= value < len(_REDUCTION):  # at::Reduction, whatever the op
        return _REDUCTION[value]
    return None


# Arguments that name a choice: a str passed to one is shown quoted, as the int form's name is
# (``reduction='mean'`` whichever form the program passed). Other strings stay as recorded: a
# trace holds an object it cannot store (a dtype) as its repr, a str too.
_CHOICES = frozenset({"reduction", "mode", "padding_mode", "interpolation_mode"})


def arg_str(value: Any, op: str = "", arg: str | int = -1) -> str:
    """A non-tensor argument of an op call: ``2``, ``None``; a choice by its name, quoted,
    also when it was passed as an int (NOTE [enum arguments]).

    Example:
        >>> arg_str(0.5), arg_str("sum", "mse_loss", "reduction")
        ('0.5', "'sum'")
        >>> arg_str(1, "nll_loss", "reduction"), arg_str(1, "nll_loss", 3)
        ("'mean'", "'mean'")
    """
    name = enum_name(op, arg, value) if op else None
    if name is not None:
        return repr(name)
    if isinstance(value, str) and arg in _CHOICES:
        return clip(repr(value))
    return value_str({"const": value})


def op_call(op: Any, tensor_name: Any) -> str:
    """An op record (:class:`~gradviz.trace.model.OpRecord`) as the call that ran:
    ``nll_loss(p, target=y, reduction='mean')``. ``tensor_name(id)`` names a tensor argument.

    Example:
        >>> from gradviz.trace.model import OpRecord
        >>> op = OpRecord(id="op1", name="mse_loss", inputs=["t0", "t1"], outputs=["t2"],
        ...               kwargs={"reduction": 2})
        >>> op_call(op, {"t0": "pred", "t1": "y"}.get)
        "mse_loss(pred, y, reduction='sum')"
    """
    args = []
    for pos, a in enumerate(op.inputs):
        if isinstance(a, dict):
            args.append(arg_str(a.get("const"), op.name, pos) if set(a) == {"const"}
                        else value_str(a))
        else:
            args.append(str(tensor_name(a) or a))
    for k, v in op.kwargs.items():
        if isinstance(v, dict) and set(v) == {"tensor"}:  # a tensor passed by keyword
            args.append(f"{k}={tensor_name(v['tensor']) or v['tensor']}")
        else:
            args.append(f"{k}={arg_str(v, op.name, k)}")
    return f"{op.name}({', '.join(args)})"
