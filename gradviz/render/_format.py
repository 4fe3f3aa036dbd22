"""Short text for the model's values: shapes, value summaries, source locations.

Shared by every renderer (Graphviz labels, rich tables, the HTML player), so a value reads the
same everywhere. Input is the plain data of :mod:`gradviz.trace.model`; output is plain ``str``
(escaping for DOT/HTML is each renderer's job).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["shape_str", "value_str", "grad_str", "source_str", "clip", "plain"]

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

    Small values are printed; large ones as ``min … max (mean m)``; constants as themselves.

    Example:
        >>> value_str({"shape": [2], "dtype": "float32", "values": [1.0, 2.5]})
        '[1, 2.5]'
        >>> value_str({"const": 2})
        '2'
    """
    if not summary:
        return ""
    if "const" in summary:
        return clip(summary["const"])
    if "values" in summary:
        return _values(summary["values"], numbers)
    stats = summary.get("stats")
    if stats:
        return (f"{_num(stats.get('min'))} … {_num(stats.get('max'))} "
                f"(mean {_num(stats.get('mean'))})")
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
