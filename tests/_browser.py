"""The headless Chromium that the player's browser tests drive (Debian's ``chromium`` and
``chromedriver``).

A test module gets the ``driver`` fixture with ``pytest_plugins = ("_browser",)``. It never
skips: without the browser it fails and says how to install it
(``scripts/ensure-chromium.sh``, run by ``make test``, does it in CI)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

INSTALL_HINT = ("install Debian's packages with `apt-get install -y chromium chromium-driver` "
                "(or run `bash scripts/ensure-chromium.sh`, as `make test` does)")


def _find(name: str) -> str | None:
    path = shutil.which(name)
    if path is None and os.access(f"/usr/bin/{name}", os.X_OK):
        path = f"/usr/bin/{name}"
    return path


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    chromium, chromedriver = _find("chromium"), _find("chromedriver")
    if chromium is None or chromedriver is None:
        missing = [n for n, p in (("chromium", chromium), ("chromedriver", chromedriver)) if not p]
        pytest.fail(f"browser test needs {' and '.join(missing)}, not found: {INSTALL_HINT}",
                    pytrace=False)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("browser test needs selenium: pip install -e '.[test]'", pytrace=False)
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--window-size=1400,1000",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(arg)
    # The performance log lists every network request the page makes (there must be none).
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    try:
        drv = webdriver.Chrome(service=Service(chromedriver), options=options)
    except Exception as e:  # noqa: BLE001 - any start-up failure is the same message
        pytest.fail(f"could not start headless chromium via {chromedriver}: {e}\n{INSTALL_HINT}",
                    pytrace=False)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


# -- driving a player page (what the player's browser tests share) ------------------------------
def load_page(driver: Any, path: Path, fragment: str = "") -> None:
    """Open a player page (``fragment``: ``#run=1&step=5``) and wait until it shows a step."""
    driver.get("about:blank")  # a new hash on the same file would not reload the page
    driver.get(path.as_uri() + fragment)
    wait_for(driver, "return document.querySelector('.gv-player').dataset.step !== undefined")


def wait_for(driver: Any, script: str, *args: Any, timeout: float = 5.0) -> Any:
    """Poll a JS expression until it is truthy (the URL is written a moment after a step)."""
    end = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script, *args)
        if value or time.monotonic() > end:
            return value
        time.sleep(0.05)


def goto_step(driver: Any, k: int) -> None:
    """Move the player to step ``k`` as its slider does."""
    driver.execute_script("""
        const s = document.querySelector('[data-role="slider"]');
        s.value = String(arguments[0]); s.dispatchEvent(new Event('input'));""", k)


def no_console_errors(driver: Any) -> None:
    """The page logged no error."""
    assert [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def chain_trace(n_ops: int) -> Any:
    """A chain of ``n_ops`` alternating ops, about 3.5 engine steps per op, drawn folded."""
    import gradviz

    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        y = x
        for i in range(n_ops):
            y = y * 1.001 if i % 2 else y + 0.5
        y.sum().backward()
    return tr

