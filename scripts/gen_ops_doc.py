"""Regenerate the op table in docs/ops.md from the derivative table (``gradviz.ops.OPS``).

Usage: ``python scripts/gen_ops_doc.py`` (rewrites the part of docs/ops.md between the
``ops-table`` markers; the prose around it is kept). ``tests/test_ops_doc.py`` parses the
checked-in file and compares it with ``OPS``, so the documentation cannot drift: after adding
an op, rerun the script.

Everything comes from the rows: the signature (PyTorch's schema the row generates its API from,
or why the row has no public form of its own), the node and saved names, how the op is called
(the API the row generates plus its ``calls``), and the notes column (the row's ``doc``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ops.md"
BEGIN, END = "<!-- ops-table:begin -->", "<!-- ops-table:end -->"

def _cell(text: str) -> str:
    return (text or "—").replace("``", "`").replace("|", "\\|").replace("\n", " ")


def signature(op: object) -> str:
    """The signature column: the row's schema, or why it has no public form of its own."""
    if op.signature is not None:
        return f"`{op.signature.text}`"
    return f"internal: {op.internal}" if op.internal else ""


def table() -> str:
    """The markdown table of every op in ``OPS``."""
    sys.path.insert(0, str(ROOT))
    from gradviz.ops import OPS, api
    rows = ["| op | signature | functional | Tensor method | PyTorch node | saved (`_saved_*`) "
            "| notes |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, op in OPS.items():
        fn, method = api.calls(op)
        saved = ", ".join(f"`{n}`" for n in op.saved_names if n not in op.hidden)
        node = f"`{op.node}`" if op.node else "—"
        rows.append(f"| `{name}` | {_cell(signature(op))} | {_cell(fn)} | {_cell(method)} | "
                    f"{node} | {_cell(saved)} | {_cell(op.doc)} |")
    return "\n".join(rows)


def main() -> None:
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{table()}\n{END}{tail}")
    print(f"wrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
