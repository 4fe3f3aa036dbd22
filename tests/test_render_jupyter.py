"""Notebook display without IPython: the ``_repr_*`` methods and ``gradviz.show``."""

from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET

import graphviz
import pytest
from _render_programs import seed_pow, seed_sum

import gradviz as torch
from gradviz.render.jupyter import Player, trace_mimebundle

HAS_PLAYER = importlib.util.find_spec("gradviz.render.html") is not None


@pytest.fixture(autouse=True)
def in_a_notebook(monkeypatch):
    """These tests are about what a notebook displays: show() behaves as in a Jupyter kernel
    (outside one it also opens a browser, tests/test_cli_edges.py)."""
    monkeypatch.setattr("gradviz.render.jupyter.in_notebook", lambda: True)


def test_in_notebook_is_false_in_a_plain_process():
    import subprocess
    import sys

    code = "from gradviz.render.jupyter import in_notebook; print(in_notebook())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def is_svg(text: str) -> bool:
    root = ET.fromstring(text.encode("utf-8"))
    return root.tag == "{http://www.w3.org/2000/svg}svg"


def test_trace_mimebundle_has_player_svg_and_text():
    tr = seed_pow()
    bundle = tr._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml"}
    assert bundle["text/plain"] == repr(tr)
    assert is_svg(bundle["image/svg+xml"])
    assert "PowBackward0" in bundle["image/svg+xml"]
    if HAS_PLAYER:
        assert 'class="gv-player"' in bundle["text/html"]
        assert "<html" not in bundle["text/html"]  # a fragment, for a notebook cell
    else:
        assert bundle["text/html"].startswith('<div class="gradviz-trace"><svg')


def test_trace_mimebundle_include_exclude():
    tr = seed_pow()
    assert list(tr._repr_mimebundle_(include=["text/plain"])) == ["text/plain"]
    assert "text/html" not in tr._repr_mimebundle_(exclude=["text/html"])
    assert is_svg(tr._repr_svg_())
    # (the player's ids are unique per call, so compare what it starts with)
    html = trace_mimebundle(tr, include=["text/html"])["text/html"]
    assert tr._repr_html_()[:20] == html[:20]


def test_empty_trace_displays_without_error():
    with torch.trace() as tr:
        pass
    assert tr._repr_svg_() is None
    assert tr._repr_html_().startswith('<div class="gradviz-trace"><svg')


def test_backward_graph_repr_svg():
    z, _, _ = seed_sum()
    svg = torch.graph_of(z)._repr_svg_()
    assert is_svg(svg) and "SumBackward0" in svg and "AccumulateGrad" in svg


def test_show_a_tensor_is_a_digraph_that_renders_without_dot():
    z, _, _ = seed_sum()
    d = torch.show(z)
    assert isinstance(d, graphviz.Digraph)
    assert is_svg(d._repr_svg_())
    bundle = d._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"] and is_svg(bundle["image/svg+xml"])
    assert d._repr_image_png().startswith(b"\x89PNG")
    assert torch.show(z, show_attrs=True).source != d.source


def test_show_a_graph_and_a_trace():
    z, _, _ = seed_sum()
    assert is_svg(torch.show(torch.graph_of(z))._repr_svg_())
    tr = seed_pow()
    p = torch.show(tr)
    assert isinstance(p, Player)
    assert repr(p).startswith("<gradviz player: gradviz trace: 3 ops")
    html = p._repr_html_()
    assert ('class="gv-player"' in html) if HAS_PLAYER else ("<svg" in html)
    bundle = p._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert is_svg(p._repr_svg_())
    assert is_svg(torch.show(tr, run=0)._repr_mimebundle_(include=["image/svg+xml"])
                  ["image/svg+xml"])


def test_show_rejects_other_objects():
    with pytest.raises(TypeError):
        torch.show(42)
