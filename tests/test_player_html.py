"""The HTML step player as text: self-contained, escaped, data round-trips, fragments unique.

Its behaviour in a browser is tested in tests/test_player_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

import pytest

import gradviz as torch
from gradviz.render import html as player
from gradviz.render.graphviz import draw_backward, draw_forward
from gradviz.render.html import _sanitize_svg, player_html
from gradviz.trace.io import trace_from_dict

HOSTILE = "<img src=x onerror=alert(1)>"




def _seed_trace(name: str = HOSTILE, title: str | None = None):
    with torch.trace(name=title) as tr:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.name = name
        y = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
        z = x ** 2 + y ** 3
        z.backward(torch.ones_like(x))
    return tr


class _Collect(HTMLParser):
    """Tags, attributes, ids and script bodies, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_data(self, data):
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    @property
    def ids(self) -> list[str]:
        return [a["id"] for _, a in self.tags if a.get("id")]


def _parse(text: str) -> _Collect:
    p = _Collect()
    p.feed(text)
    p.close()
    return p


def _data(text: str) -> dict:
    (body,) = [t for a, t in _parse(text).scripts if a.get("type") == "application/json"]
    return json.loads(body)


def test_page_is_self_contained():
    page = player_html(_seed_trace())
    assert page.startswith("<!DOCTYPE html>")
    doc = _parse(page)
    for tag, attrs in doc.tags:
        assert tag not in ("link", "iframe", "img", "object", "embed", "base"), tag
        for key in ("src", "href", "xlink:href", "action", "srcset"):
            value = attrs.get(key)
            assert value is None or value.startswith("#"), (tag, key, value)
    lowered = page.lower()
    for needle in ("http://", "https://", "//cdn", "@import", "url(http", "fonts.googleapis"):
        assert needle not in lowered, needle
    # Exactly the player's script and its JSON: no external script.
    assert [a.get("type") for a, _ in doc.scripts] == ["application/json", None]
    # The SVGs are inline.
    assert page.count("<svg") == 2 and 'class="node"' in page


def test_csp_allows_only_the_players_script_and_no_network():
    page = player_html(_seed_trace())
    (csp,) = [a["content"] for t, a in _parse(page).tags
              if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp.split("script-src")[1]
    (script,) = [t for a, t in _parse(page).scripts if a.get("type") is None]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp


def test_hostile_strings_are_escaped_everywhere():
    evil_code = "</script><script>alert(2)</script>"
    with torch.trace(name=f"</title>{HOSTILE}") as tr:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.name = HOSTILE
        y = (x * 2).sum()
        y.backward()
    # A file path and a code line the user controls, as a loaded trace could carry them.
    tr.ops[0].source.file = f"/tmp/{HOSTILE}.py"
    tr.ops[0].source.code = evil_code
    page = player_html(tr)
    low = page.lower()
    assert "<img" not in low
    assert "alert(2)</script>" not in low
    assert "onerror=" not in low.replace("onerror=alert(1)", "")  # only inside escaped text
    # Every raw occurrence of the name is gone: in HTML/SVG text it is &lt;img..., in JSON \u003c.
    assert HOSTILE not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the SVG label and the title
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in page  # the JSON
    doc = _parse(page)
    assert [t for t, _ in doc.tags].count("script") == 2  # nothing closed the JSON early
    assert not any(k.startswith("on") for _, attrs in doc.tags for k in attrs)
    assert re.search(r"<title>&lt;/title&gt;&lt;img src=x onerror=alert\(1\)&gt;</title>", page)


def test_json_embed_round_trips():
    tr = _seed_trace()
    tr.notes.append("weird text: </script> & <!-- \u2028 \u2029 'quotes' \"dq\"")
    page = player_html(tr)
    data = _data(page)
    assert data["trace"] == json.loads(json.dumps(tr.to_dict()))
    assert data["trace"]["notes"][-1] == tr.notes[-1]
    assert "\u2028" not in page and "\u2029" not in page
    # The embedded trace is a valid trace: it reloads.
    again = trace_from_dict(data["trace"])
    assert again.summary() == tr.summary()


def test_fragment_has_no_document_and_unique_ids():
    tr = _seed_trace()
    a, b = player_html(tr, fragment=True), player_html(tr, fragment=True)
    for frag in (a, b):
        low = frag.lower()
        tags = {t for t, _ in _parse(frag).tags}
        assert not tags & {"html", "head", "body", "meta"}
        assert "<!doctype" not in low and "content-security-policy" not in low
        assert frag.lstrip().startswith('<div class="gv-player"')
        ids = _parse(frag).ids
        assert len(ids) == len(set(ids)), "duplicate ids inside one player"
        # The script finds its container by this call's id only (no global lookups by id).
        root_id = _parse(frag).tags[0][1]["id"]
        (script,) = [t for a_, t in _parse(frag).scripts if a_.get("type") is None]
        assert script.rstrip().endswith(f'}})("{root_id}", false);')
    assert not set(_parse(a).ids) & set(_parse(b).ids)
    # Both fragments carry the same data.
    assert _data(a) == _data(b)


def test_page_output_is_deterministic():
    tr = _seed_trace()
    assert player_html(tr) == player_html(tr)


def test_to_html_writes_the_page(tmp_path):
    tr = _seed_trace()
    path = tmp_path / "steps.html"
    text = tr.to_html(path)
    assert path.read_text(encoding="utf-8") == text
    assert text == tr.to_html()
    assert 'data-run="0"' in text


def test_the_page_numbers_runs_as_their_drawings_titles_do():
    # Five backward calls, the last two kept (ids run3, run4): the player is handed the numbers
    # 4 and 5 and the names the drawings' titles use, for its header, picker and address.
    with torch.trace(keep_runs=2) as tr:
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        for _ in range(5):
            (w * 3).sum().backward()
    page = player_html(tr)
    data = _data(page)
    assert [r["id"] for r in data["trace"]["runs"]] == ["run3", "run4"]  # the data as it was
    assert data["runNumbers"] == [4, 5]
    assert data["runNames"] == ["run 4 of 5", "run 5 of 5"]
    drawings = dict(re.findall(r'<div class="gv-svg" data-run="(\d+)" hidden>(.*?)</div>', page,
                               re.S))
    for k, name in enumerate(data["runNames"]):
        assert f">backward {name}, last 2 kept \u00b7 " in drawings[str(k)]
    one = _data(player_html(tr, run=0))
    assert (one["runNumbers"], one["runNames"]) == ([4], ["run 4 of 5"])


def test_runs_selection_and_limits():
    with torch.trace(keep_runs="all") as tr:  # a loop: by default only its last run is kept
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        for k in range(3):
            (w * (k + 1)).sum().backward()
    all_runs = player_html(tr)
    assert all_runs.count('class="gv-svg" data-run=') == 3
    assert [r["id"] for r in _data(all_runs)["trace"]["runs"]] == ["run0", "run1", "run2"]
    one = player_html(tr, run="run1")
    assert [r["id"] for r in _data(one)["trace"]["runs"]] == ["run1"]
    assert one.count('class="gv-svg" data-run=') == 1
    assert [r["id"] for r in _data(player_html(tr, run=-1))["trace"]["runs"]] == ["run2"]
    capped = _data(player_html(tr, max_runs=2))
    assert [r["id"] for r in capped["trace"]["runs"]] == ["run1", "run2"]
    assert "last 2" in capped["notes"][0]
    with pytest.raises(KeyError, match="run7"):
        player_html(tr, run="run7")
    with pytest.raises(IndexError):
        player_html(tr, run=5)
    with pytest.raises(ValueError, match="max_runs"):
        player_html(tr, max_runs=0)


def test_trace_without_backward_still_renders():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        _ = x * 2
    page = player_html(tr)
    assert _data(page)["trace"]["runs"] == []
    assert page.count("<svg") == 1  # the forward graph only
    assert 'data-role="no-runs"' in page


def test_loaded_trace_renders_the_same(tmp_path):
    tr = _seed_trace()
    path = tmp_path / "t.json"
    tr.save(path)
    assert player_html(torch.load_trace(path)) == player_html(tr)


def test_sanitize_svg_removes_active_content_and_prefixes_ids():
    svg = """<?xml version="1.0"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<!-- a comment -->
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
     width="10pt" height="10pt" viewBox="0 0 10 10" onload="alert(1)">
<defs><linearGradient id="l_0"><stop offset="0"/></linearGradient></defs>
<g id="graph0" class="graph"><title>G</title>
<script>alert(2)</script>
<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>
<image xlink:href="http://example.com/a.png"/>
<g id="node1" class="node" onclick="alert(3)"><title>n0</title>
<a xlink:href="https://example.com/" xlink:title="&lt;b&gt;tip"><polygon fill="url(#l_0)"
 points="0,0 1,1"/></a>
<text style="fill: url(http://example.com/x)">&lt;img src=x onerror=alert(1)&gt;</text>
<use href="#l_0"/>
</g></g></svg>"""
    out = _sanitize_svg(svg, "p-")
    low = out.lower()
    for bad in ("<script", "alert(2)", "foreignobject", "<image", "http", "onload", "onclick",
                "<!--", "doctype", "<?xml", "<img", "<use"):
        assert bad not in low, bad
    assert 'id="p-graph0"' in out and 'id="p-node1"' in out and 'id="p-l_0"' in out
    assert 'fill="url(#p-l_0)"' in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert 'xlink:title="&lt;b&gt;tip"' in out
    assert "<title>n0</title>" in out
    assert out.startswith("<svg ") and 'class="gv-svg-graph"' in out
    with pytest.raises(ValueError, match="well-formed"):
        _sanitize_svg("<svg><g></svg>", "p-")
    with pytest.raises(ValueError, match="expected an <svg>"):
        _sanitize_svg("<html/>", "p-")


def test_templates_are_package_data():
    for name in ("player.html", "player.js", "player.css"):
        assert player._template(name).strip()


def test_the_page_says_which_nodes_each_drawing_folded():
    # A chain long enough to be drawn folded (a repeated block) in both graphs.
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x
        for i in range(400):
            y = y * 1.001 if i % 2 else y + 0.5
        y.sum().backward()
    page = player_html(tr)
    folded = _data(page)["folded"]
    back, fwd = folded["backward"][0], folded["forward"]
    plan = draw_backward(tr).plan
    assert back["of"] == plan.rep
    assert back["titles"] == {g: grp.title for g, grp in plan.groups.items()}
    assert "200 × [MulBackward0 → AddBackward0]" in back["titles"].values()
    # Each group's block: grid[r][p] is the id at place p of repetition r (Group.slots), and
    # one repetition is drawn, hidden, with places titled p0, p1, ... (the player opens it).
    for gid, grp in plan.groups.items():
        block = back["blocks"][gid]
        assert block["reps"] == grp.repeats == len(block["grid"])
        assert {v: (r, p) for r, row in enumerate(block["grid"]) for p, v in enumerate(row)
                if v is not None} == grp.slots
        assert f'data-drawing="b0" data-group="{gid}"' in page
    chain = next(g for g in plan.groups.values() if g.title.startswith("200 ×"))
    assert chain.repeats == 200
    # every repetition but the last (the leaf hangs off its end) is the same two places
    assert {p for r, p in chain.slots.values() if r < 199} == {0, 1}
    assert fwd["of"] == draw_forward(tr).plan.rep
    # The group is drawn as a node whose <title> is its id (what the player looks up).
    for gid in back["titles"]:
        assert f"<title>{gid}</title>" in page
    # Nothing folded: null.
    assert _data(player_html(_seed_trace()))["folded"] == {"forward": None, "backward": [None]}
