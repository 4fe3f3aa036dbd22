"""Strip outputs, execution counts and metadata from notebooks, so that commits stay clean.

    python scripts/strip_notebooks.py                    # every tutorials/*.ipynb, in place
    python scripts/strip_notebooks.py a.ipynb b.ipynb    # these files
    python scripts/strip_notebooks.py --check            # exit 1 if a file would change

What is kept: the cells' sources and ids, and the notebook's ``kernelspec``. What goes: outputs,
execution counts, cell metadata, and every other notebook metadata (``language_info``, widget
state, ...). ``tests/test_notebooks.py`` enforces the result for the tutorials.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "tutorials"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def strip(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove outputs, execution counts and metadata from ``nb`` (in place); return it."""
    nb.metadata = nbformat.from_dict({"kernelspec": nb.metadata.get("kernelspec", KERNELSPEC)})
    for cell in nb.cells:
        cell.metadata = nbformat.from_dict({})
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def stripped_text(text: str) -> str:
    """The file text of the notebook ``text`` once stripped (as ``nbformat.write`` writes it)."""
    out = nbformat.writes(strip(nbformat.reads(text, as_version=4)))
    return out if out.endswith("\n") else out + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path,
                        help="notebooks to strip (default: tutorials/*.ipynb)")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if some notebook is not stripped")
    args = parser.parse_args(argv)
    paths = args.paths or sorted(TUTORIALS.glob("*.ipynb"))
    dirty = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        clean = stripped_text(text)
        if clean == text:
            continue
        dirty.append(path)
        if not args.check:
            path.write_text(clean, encoding="utf-8")
            print(f"stripped {path}")
    if args.check and dirty:
        print("not stripped: " + ", ".join(str(p) for p in dirty), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
