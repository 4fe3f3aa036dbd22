"""Write the fast paths generated from the derivative table into gradviz/ops/generated/.

Usage: ``python scripts/gen_fastpath.py`` (rewrites ``gradviz/ops/generated/<category>.py``, one
file per file of ``gradviz/ops/derivatives/``, cut in parts where one would pass 2,000 lines,
and ``_parts.py``, their names in order). The code is written by
:mod:`gradviz.ops.fastpath` (NOTE [fast paths], NOTE [generated fast paths]);
``tests/test_generated.py`` writes it again in memory and fails while a checked-in file is
stale, so after changing a row, rerun this script. The package imports these files; it never
writes code at run time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "gradviz" / "ops" / "generated"


def main() -> None:
    """Write every category's module; remove the ones no row needs any more."""
    os.environ["GRADVIZ_FAST"] = "0"  # write from the rows, not from the files being replaced
    sys.path.insert(0, str(ROOT))
    from gradviz.ops import fastpath

    sources = fastpath.sources()
    sources["_parts"] = fastpath.parts_source(list(sources))
    for name, text in sources.items():
        path = OUT / f"{name}.py"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    for path in OUT.glob("*.py"):
        if path.name != "__init__.py" and path.stem not in sources:
            path.unlink()
            print(f"removed {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
