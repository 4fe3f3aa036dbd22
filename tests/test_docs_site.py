"""The documentation site (``mkdocs.yml``, ``make docs``): it builds strictly, its links resolve,
and a real browser shows the home page, a tutorial and the step player embedded in it.

The site is built once per module into a temporary directory, by ``mkdocs build`` as ``make
docs`` runs it, with one difference: ``make docs`` executes every tutorial (about 30 s on 2
cores), here only notebook 4 is executed (the others are built from the stored notebooks, through
mkdocs-jupyter's ``execute_ignore``). Its kernel starts the way ``make docs`` starts one
(scripts/docs_ext.py, docs/jupyter/), and what the pages show for it, its pictures and its
player, is checked here; that every notebook executes is checked by tests/test_notebooks.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest_plugins = ("_browser",)
pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
PLAYER_NOTEBOOK = "04_engine_step_by_step.ipynb"


def _mkdocs_available() -> None:
    try:
        import mkdocs  # noqa: F401
        import mkdocs_jupyter  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError as e:
        pytest.fail(f"the docs extra is missing ({e}): pip install -e '.[docs]' "
                    "(`make test` and `make docs` install it)", pytrace=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A strict build of the site from a copy of the sources, notebook 4 executed by mkdocs."""
    _mkdocs_available()

    src = tmp_path_factory.mktemp("docsrc")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    execute = "      execute: !ENV [GRADVIZ_DOCS_EXECUTE, true]\n"
    assert execute in config, "mkdocs.yml's mkdocs-jupyter options changed: update this fixture"
    others = sorted(p.name for p in (ROOT / "tutorials").glob("[0-9][0-9]_*.ipynb")
                    if p.name != PLAYER_NOTEBOOK)
    config = config.replace(execute, execute + f"      execute_ignore: {others!r}\n")
    (src / "mkdocs.yml").write_text(config, encoding="utf-8")
    (src / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "docs_ext.py", src / "scripts" / "docs_ext.py")
    (src / "gradviz").symlink_to(ROOT / "gradviz")  # mkdocstrings reads the sources statically
    shutil.copytree(ROOT / "docs", src / "docs", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))

    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(src / "mkdocs.yml"), "-d", str(out)],
                          capture_output=True, text=True, env=env, cwd=src)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    assert "WARNING" not in log, log[-4000:]
    return out


def test_every_page_is_built(site):
    for page in ["index.html", "engine.html", "ops.html", "gallery.html", "site.html",
                 "tutorials/index.html", "tutorials/CONCEPTS.html", "tutorials/solutions.py",
                 "api/gradviz.html", "api/nn.html", "api/autograd.html", "api/trace.html",
                 "api/render.html", "api/linalg.html"]:
        assert (site / page).is_file(), page
    tutorials = sorted(p.name for p in (ROOT / "tutorials").glob("[0-9][0-9]_*.ipynb"))
    for name in tutorials:
        assert (site / "tutorials" / f"{name[:-6]}.html").is_file(), name
    # The API reference is made from the docstrings: a known function and its example.
    api = (site / "api" / "autograd.html").read_text(encoding="utf-8")
    assert 'id="gradviz.autograd.wrappers.backward"' in api
    assert 'id="gradviz.autograd.finite_differences.gradcheck"' in api


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "link", "img", "script"):
                self.links.append(a[key])


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_internal_links_resolve(site):
    """Every relative link of every page leads to a file of the site, and every #anchor to an
    element of the page it names (mkdocs --strict checks the Markdown; this checks the HTML,
    the notebooks' links included)."""
    # 404.html is served for any missing path, so its links are absolute from the server root.
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 25
    parsed = {p: _parse(p) for p in pages}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("//", "mailto:")) or link == "":
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, "\n".join(broken[:30])


def test_pages_load_nothing_from_the_network(site):
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link|img)\b[^>]*(?:src|href)="(https?:[^"]+)"', text)
        assert not remote, f"{page.relative_to(site)} loads {remote}"


def _requests(driver) -> list[str]:
    import json

    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def _open(driver, path: Path) -> None:
    driver.get_log("performance")
    driver.get_log("browser")
    driver.get(path.as_uri())


def test_home_page_renders(driver, site):
    _open(driver, site / "index.html")
    assert driver.title.startswith("gradviz")
    # The picture of the player is there and decoded (not a broken image).
    sizes = driver.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth])")
    assert any("mlp_player.png" in src and width > 500 for src, width in sizes), sizes
    nav = driver.execute_script(
        "return document.querySelector('nav.md-nav--primary').textContent")
    for entry in ("Tutorials", "Gallery", "API reference"):
        assert entry in nav, nav
    # Every request the page made (Chrome's own pages, chrome://, are other documents).
    remote = [u for u in _requests(driver) if not u.startswith(("file:", "data:", "blob:",
                                                                  "chrome:", "chrome-"))]
    assert remote == [], remote


def test_tutorial_page_shows_pictures_and_a_working_player(driver, site):
    from selenium.webdriver.common.by import By

    _open(driver, site / "tutorials" / f"{PLAYER_NOTEBOOK[:-6]}.html")
    assert "The engine, step by step" in driver.title
    # The drawn graphs (SVG outputs, embedded as images) are decoded and have a size.
    pictures = driver.execute_script(
        "return Array.from(document.querySelectorAll('.jp-RenderedSVG img'))"
        ".map(i => [i.complete, i.naturalWidth])")
    assert len(pictures) >= 3 and all(done and w > 50 for done, w in pictures), pictures
    players = driver.find_elements(By.CSS_SELECTOR, ".gv-player")
    assert players, "no step player on the page"
    player = players[0]
    driver.execute_script("arguments[0].scrollIntoView()", player)
    shown = driver.execute_script("""
        const box = arguments[0].querySelector('.gv-svg[data-run]:not([hidden])');
        const r = box.getBoundingClientRect();
        return {w: r.width, h: r.height, nodes: box.querySelectorAll('g.node').length,
                step: Number(arguments[0].dataset.step)};""", player)
    assert shown["w"] > 200 and shown["h"] > 100 and shown["nodes"] > 2, shown
    # Its scripts run on the site's page: the "next" button advances the engine one step.
    player.find_element(By.CSS_SELECTOR, '[data-role="next"]').click()
    after = driver.execute_script("return Number(arguments[0].dataset.step)", player)
    assert after == shown["step"] + 1, (shown, after)
    current = driver.execute_script(
        "return arguments[0].querySelectorAll('.gv-svg:not([hidden]) g.node.gv-current')"
        ".length", player)
    assert current >= 1
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"
              and "gv-" in e["message"]]
    assert severe == [], severe
