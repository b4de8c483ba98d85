"""The unit tests' fixtures: ``backend``, and ``browser`` with its marker.

``backend`` is each known backend of the conformance suite in turn. What a backend holds (its
dtypes, whether it is lazy) and how NumPy data goes in and out are the conformance suite's
(``portagather.conformance.backends``), one source for both. JAX runs with its default
configuration (no ``jax_enable_x64``), as most users run it; the tests that need 64-bit JAX
switch it on locally with ``jax.enable_x64``.

Every other package the tests import (the backends, the oracle systems, distributed) is
installed by ``pip install -e ".[test]"``, and the tests import it plainly: none is skipped
when missing. ``pytest_configure`` names the missing ones, and the line that installs them,
before any test module fails to import.

``browser`` is Debian's Chromium driven through Playwright: the one thing the tests need that
``pip install -e ".[test]"`` does not give. Every test that uses it, directly or through
another fixture, is marked ``browser`` and left out of a run whose ``-m`` does not name that
marker, so that ``pytest`` passes on a machine with Python alone; ``pytest -m browser`` runs
them (``.ci/run`` does, after installing Chromium), and there a missing browser fails them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path

import pytest

from portagather.conformance.backends import KNOWN, Backend, load_backend

BROWSER_MARK = "browser"
CHROMIUM = os.environ.get("PORTAGATHER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
INSTALL = (
    "the browser tests need Playwright and Debian's Chromium: "
    '`pip install playwright` (or `pip install -e ".[test]"`) and, as root, '
    "`apt-get update && apt-get install -y chromium` (/usr/bin/chromium, or set "
    "PORTAGATHER_CHROMIUM). Do not run `playwright install`: the tests launch that system "
    "Chromium, not a browser build of Playwright's own."
)
LEFT_OUT = pytest.StashKey[int]()
# The modules of the test extra that tests import, each with the extra of pyproject.toml
# that names it.
TEST_EXTRA = {
    "hypothesis": "check",
    "jax": "jax",
    "torch": "torch",
    "dask": "dask",
    "distributed": "test",
    "ndonnx": "ndonnx",
    "onnxruntime": "ndonnx",
    "array_api_strict": "strict",
    "tensorflow": "oracle",
    "mindspore": "oracle",
    "onnx": "oracle",
}


def pytest_configure(config: pytest.Config) -> None:
    missing = [name for name in TEST_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        extras = ", ".join(f"{name} (extra {TEST_EXTRA[name]})" for name in missing)
        msg = (
            f"the tests need {extras}, which are not installed: "
            'pip install -e ".[test]" installs every one (no test is skipped without them)'
        )
        raise pytest.UsageError(msg)
    # The drawn tests' share of their written examples, as in the conformance suite: the
    # `portagather` profile unless the run names one (`--hypothesis-profile thorough`: all).
    from portagather.conformance.strategies import load_profile

    load_profile(config)


@pytest.fixture(params=list(KNOWN))
def backend(request: pytest.FixtureRequest) -> Backend:
    try:
        return load_backend(request.param)
    except ImportError as err:  # the test extra installs every backend
        pytest.fail(str(err))


def _chromium_found() -> bool:
    return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright; a test that uses it is marked ``browser``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        pytest.fail(f"{INSTALL} ({err})", pytrace=False)
    if not _chromium_found():
        pytest.fail(f"{INSTALL} ({CHROMIUM} not found)", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _browser_asked_for(config: pytest.Config) -> bool:
    """Whether ``-m`` names the marker: then the expression alone decides."""
    return re.search(rf"\b{BROWSER_MARK}\b", config.getoption("markexpr") or "") is not None


def pytest_report_header(config: pytest.Config) -> str:
    if not _browser_asked_for(config):
        return f"browser tests: left out (`pytest -m {BROWSER_MARK}` runs them)"
    found = "found" if _chromium_found() else "NOT FOUND, the browser tests fail"
    return f"browser tests: selected by -m; Chromium at {CHROMIUM}: {found}"


# Before the -m expression is applied (by pytest's own hook), so that it sees the marks.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(BROWSER_MARK)
    if _browser_asked_for(config):
        return
    left_out = [item for item in items if item.get_closest_marker(BROWSER_MARK)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker(BROWSER_MARK)]
    config.stash[LEFT_OUT] = len(left_out)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    left_out = config.stash.get(LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} browser tests left out (deselected): they need Debian's Chromium; "
            f"`pytest -m {BROWSER_MARK}` runs them (README.md)"
        )
