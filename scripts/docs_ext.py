"""Four small adapters for the documentation site (mkdocs.yml loads them).

* ``ExampleSections``, a griffe extension: gradviz's docstrings write ``Example:`` (singular),
  which griffe's Google-style parser reads as an admonition, so the ``>>>`` lines would render
  as nested block quotes. Renaming the heading to ``Examples:`` when the docstring is loaded
  makes griffe parse it as an examples section, rendered as a Python console block.
* ``on_config``, an MkDocs hook: the tutorials execute in kernels of the Python running MkDocs
  (the kernelspec says ``python``, so its folder goes first on ``PATH``), with the Jupyter
  settings in ``docs/jupyter/`` (local sockets in a private folder made here, a start-up limit
  for a busy machine). Set here, ``mkdocs build`` needs no wrapper: ``make docs`` and the site
  test build the same way.
* ``on_page_markdown``, an MkDocs hook: the guides link source files the way GitHub shows them
  (``[engine.py](../gradviz/autograd/engine.py)``). The site holds no source files, so such a
  link becomes the path in code style instead of a link that would lead nowhere.
* ``on_page_content``, an MkDocs hook: mkdocs-jupyter makes a notebook page's table of contents
  with Python-Markdown's slugs, which drop inline code (``## 6. `no_grad` `` → ``#6``), while
  the page's headings carry nbconvert's ids, which keep it. The table of contents is pointed
  at the headings' real ids and titles, in order, so its links land (the site test checks
  every anchor) and its titles keep their code words.
"""

from __future__ import annotations

import atexit
import html as html_lib
import os
import re
import shutil
import sys
import tempfile
from typing import Any

import griffe

_HEADING = re.compile(r'<h([1-6])\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1>', re.S)
_TAG = re.compile(r"<[^>]+>")
_EXAMPLE_HEADING = re.compile(r"^(\s*)Example:\s*$", re.M)
# A Markdown link whose target leaves docs/ for the repository: ../gradviz/x.py, ../tests/...
_SOURCE_LINK = re.compile(r"\[([^\]]+)\]\(\.\./((?:gradviz|cli|tests|scripts|benchmarks)/[^)#]*)"
                          r"(?:#[^)]*)?\)")


class ExampleSections(griffe.Extension):
    """Read a docstring's ``Example:`` heading as griffe's ``Examples:`` section."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and "Example:" in obj.docstring.value:
            obj.docstring.value = _EXAMPLE_HEADING.sub(r"\1Examples:", obj.docstring.value)


def on_config(config: Any, **kwargs: Any) -> Any:
    """MkDocs hook: the tutorials' kernels run this Python, with docs/jupyter/'s settings."""
    docs_jupyter = os.path.join(os.path.dirname(config.config_file_path), "docs", "jupyter")
    os.environ["JUPYTER_CONFIG_PATH"] = docs_jupyter
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                          os.environ.get("PATH", "")])
    if "GRADVIZ_DOCS_KERNEL_SOCKETS" not in os.environ:  # `mkdocs serve` calls this per build
        sockets = tempfile.mkdtemp(prefix="gradviz-docs-kernels-")
        atexit.register(shutil.rmtree, sockets, ignore_errors=True)
        os.environ["GRADVIZ_DOCS_KERNEL_SOCKETS"] = os.path.join(sockets, "kernel")
    return config


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: a link to a repository source file becomes its path in code style.

    >>> on_page_markdown("see [engine.py](../gradviz/autograd/engine.py#L3)")
    'see engine.py (`gradviz/autograd/engine.py`)'
    """

    def repl(m: re.Match[str]) -> str:
        text, path = m.group(1), m.group(2)
        return text if path in text else f"{text} (`{path}`)"

    return _SOURCE_LINK.sub(repl, markdown)


def on_page_content(html: str, page: Any, **kwargs: Any) -> str:
    """MkDocs hook: a notebook page's table of contents links to its headings' ids."""
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    headings = [(int(level), anchor, html_lib.unescape(_TAG.sub("", text)).rstrip("¶ \n"))
                for level, anchor, text in _HEADING.findall(html)]
    stack, pos = list(reversed(list(page.toc))), 0
    while stack:  # the entries in document order, depth first, without recursion
        item = stack.pop()
        while pos < len(headings) and headings[pos][0] != item.level:
            pos += 1
        if pos < len(headings):
            _, item.id, item.title = headings[pos]
            pos += 1
        stack.extend(reversed(item.children))
    return html
