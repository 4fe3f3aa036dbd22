"""The headless Chromium that the player's browser tests drive (Debian's ``chromium`` and
``chromedriver``).

A test module gets the ``driver`` fixture with ``pytest_plugins = ("_browser",)``. It never
skips: without the browser it fails and says how to install it
(``scripts/ensure-chromium.sh``, run by ``make test``, does it in CI)."""

from __future__ import annotations

import os
import shutil

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
