"""The documentation site, built with ``sphinx-build -W`` and checked in a real browser.

The html is built once per module into a temporary folder (with a small support-matrix report
written here, see ``REPORT``), served on 127.0.0.1, and every page is opened in Debian's
Chromium through Playwright: each loads with HTTP 200 and no console error, every image has
pixels, every link within the site resolves (to an existing anchor, where it names one). The
doctest builder runs every example of the pages and docstrings against the library.

Every test that uses the ``browser`` fixture (tests/conftest.py) is marked ``browser`` and runs
only under ``pytest -m browser``: it needs Debian's Chromium (``apt-get install chromium``, at
/usr/bin/chromium or $PORTAGATHER_CHROMIUM), which pip does not install; never
``playwright install``. The doctest builder's test needs no browser and runs with the rest.
Set $PORTAGATHER_DOCS_SCREENSHOTS to a folder to get screenshots of the index and of the
support matrix there.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import unicodedata
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urldefrag

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
KNOWN_FAILURES = REPO / "src" / "portagather" / "conformance" / "known_failures.txt"
JIT_MESSAGE = (
    'ValueError: bad_indices="error" needs to read index values, which are traced here. '
    "Either wrap the function with jax.experimental.checkify.checkify"
)
XFAIL_TEST = "test_data_dtype[ndonnx-str-gather_nd]"


def _known_reason() -> str:
    """The reason known_failures.txt gives for XFAIL_TEST (what the matrix must show)."""
    for line in KNOWN_FAILURES.read_text().splitlines():
        parts = [p.strip() for p in line.split("|", 2)]
        if not line.startswith("#") and len(parts) == 3 and parts[:2] == ["ndonnx", XFAIL_TEST]:
            return parts[2]
    return "the reason is not recorded"


# A `portagather check --json` report in the format _cli.py prints, small and fixed: numpy
# passes everything, ndonnx has expected failures (known_failures.txt) in two cells.
REPORT = {
    "backends": ["numpy", "ndonnx"],
    "not_installed": {},
    "rows": [
        {"op": "all", "feature": "errors", "cells": {"numpy": {"pass": 40}, "ndonnx": {"pass": 40}}},
        {"op": "gather_nd", "feature": "documented examples", "cells": {"numpy": {"pass": 21}, "ndonnx": {"pass": 13, "xfail": 8}}},
        {"op": "gather_nd", "feature": "dtypes", "cells": {"numpy": {"pass": 15}, "ndonnx": {"pass": 12, "xfail": 1}}},
        {"op": "gather_nd", "feature": "jit", "cells": {"numpy": {}, "ndonnx": {}}},
        {"op": "scatter_nd", "feature": "duplicates", "cells": {"numpy": {"pass": 6}, "ndonnx": {"pass": 6}}},
        {"op": "scatter_d", "feature": "policy:ignore", "cells": {"numpy": {"pass": 3}, "ndonnx": {"pass": 3}}},
        {"op": "put_along_axis", "feature": "errors", "cells": {"numpy": {"pass": 9}, "ndonnx": {"pass": 9}}},
    ],
    "failures": [],
    "collection_errors": [],
    "ok": True,
    "versions": {"numpy": "2.4.6", "ndonnx": "0.23.0"},
}  # fmt: skip


def _env(report: Path) -> dict[str, str]:
    env = dict(os.environ, PORTAGATHER_CHECK_JSON=str(report))
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return env


def _need_sphinx():
    try:
        import furo  # noqa: F401
        import myst_parser  # noqa: F401
        import sphinx  # noqa: F401
        import sphinx_copybutton  # noqa: F401
    except ImportError as err:
        pytest.fail(f'building the docs needs pip install -e ".[docs]" ({err})', pytrace=False)


def _sphinx(builder: str, out: Path, report: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", builder, str(DOCS), str(out)]
    return subprocess.run(
        command, env=_env(report), capture_output=True, text=True, timeout=900, check=False
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("check") / "check.json"
    path.write_text(json.dumps(REPORT))
    return path


@pytest.fixture(scope="module")
def html(tmp_path_factory, report) -> Path:
    _need_sphinx()
    out = tmp_path_factory.mktemp("html")
    done = _sphinx("html", out, report)
    assert done.returncode == 0, f"sphinx-build -W -b html failed:\n{done.stdout}\n{done.stderr}"
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(html):
    handler = functools.partial(_Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


WAIT_FOR_IMAGES = """() => Promise.all(Array.from(document.images, img =>
    img.complete ? null : new Promise(done => { img.onload = img.onerror = done; })))"""
IMAGES = "els => els.map(e => [e.getAttribute('src'), e.naturalWidth])"
LINKS = "els => els.map(e => e.href)"
# The symbols (of `chars`) that the page's font stack cannot draw: each is drawn on a canvas
# in the body's fonts and compared with code points that no font has (the "tofu" box).
TOFU = """(chars) => {
  const family = getComputedStyle(document.body).fontFamily;
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 48;
  const g = canvas.getContext('2d', {willReadFrequently: true});
  const draw = ch => {
    g.clearRect(0, 0, 48, 48);
    g.font = '32px ' + family;
    g.fillText(ch, 4, 36);
    return Array.from(g.getImageData(0, 0, 48, 48).data).join(',');
  };
  const none = [draw('\\uE000'), draw(String.fromCodePoint(0x10FFFD)), draw('')];
  return chars.filter(ch => none.includes(draw(ch)));
}"""
ANCHORS = "els => els.map(e => e.id || e.getAttribute('name'))"


@pytest.fixture(scope="module")
def crawl(html, site, browser):
    """Every html page of the build, opened in the browser: what each showed and linked."""
    pages = {}
    context = browser.new_context()
    for file in sorted(html.rglob("*.html")):
        url = site + file.relative_to(html).as_posix()
        page = context.new_page()
        errors = []
        page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
        page.on(
            "response",
            lambda r, e=errors: (
                e.append(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None
            ),
        )
        page.on("requestfailed", lambda r, e=errors: e.append(f"request failed: {r.url}"))
        response = page.goto(url, wait_until="load")
        page.evaluate(WAIT_FOR_IMAGES)
        pages[url] = {
            "status": response.status if response else None,
            "title": page.title(),
            "errors": errors,
            "images": page.eval_on_selector_all("img", IMAGES),
            "links": page.eval_on_selector_all("a[href]", LINKS),
            "anchors": set(page.eval_on_selector_all("[id], a[name]", ANCHORS)),
            "text": page.inner_text("body"),
            "tables": page.eval_on_selector_all("table", "els => els.map(e => e.innerText)"),
        }
        symbols = sorted({ch for ch in pages[url]["text"] if unicodedata.category(ch) == "So"})
        pages[url]["tofu"] = page.evaluate(TOFU, symbols) if symbols else []
        page.close()
    context.close()
    return pages


def _page(crawl, site, name):
    assert site + name in crawl, f"{name} was not built"
    return crawl[site + name]


def test_every_page_loads_without_console_errors(crawl):
    assert len(crawl) > 20
    bad = {url: p["status"] for url, p in crawl.items() if p["status"] != 200}
    assert not bad, f"pages not served with 200: {bad}"
    errors = {url: p["errors"] for url, p in crawl.items() if p["errors"]}
    assert not errors, f"console errors or failed requests: {errors}"


def test_no_stray_pages(crawl, site):
    untitled = [url for url, p in crawl.items() if "<no title>" in p["title"]]
    assert not untitled, f"pages without a title (fragments built as pages?): {untitled}"
    assert not [url for url in crawl if url.startswith(site + "_generated/")]


def test_no_broken_images(crawl, site):
    broken = [(url, src) for url, p in crawl.items() for src, width in p["images"] if not width]
    assert not broken, f"images that did not load: {broken}"
    # The pages that show pictures do show them.
    assert len(_page(crawl, site, "performance.html")["images"]) >= 2
    assert _page(crawl, site, "operations/gather_nd.html")["images"]


def test_no_broken_internal_links(crawl, site):
    missing, statuses = [], {}
    for source, page in crawl.items():
        for href in page["links"]:
            if not href.startswith(site):
                continue
            target, fragment = urldefrag(href)
            if target not in crawl and target not in statuses:
                try:
                    with urllib.request.urlopen(target, timeout=30) as r:
                        statuses[target] = r.status
                except urllib.error.HTTPError as err:
                    statuses[target] = err.code
            if target in statuses and statuses[target] != 200:
                missing.append(f"{source} -> {href} (HTTP {statuses[target]})")
            elif fragment and target in crawl and unquote(fragment) not in crawl[target]["anchors"]:
                missing.append(f"{source} -> {href} (no such anchor)")
    assert not missing, "broken links:\n" + "\n".join(sorted(set(missing)))


def test_version_changelog_api_and_install(crawl, site):
    import portagather

    index = _page(crawl, site, "index.html")
    assert portagather.__version__ in index["title"]
    assert f"portagather {portagather.__version__}" in index["text"]
    assert "Unreleased" in _page(crawl, site, "changelog.html")["text"]
    api = _page(crawl, site, "api/index.html")
    for name in ("gather_nd", "gather", "gather_d", "take_along_axis"):
        text = _page(crawl, site, f"api/{name}.html")["text"]
        assert f"portagather.{name}(" in text
        assert f"{site}api/{name}.html#portagather.{name}" in api["links"]
    start = _page(crawl, site, "getting-started.html")["text"]
    assert 'pip install "portagather[jax]"' in start
    assert any(u.startswith(site + "_modules/") for u in crawl), "no viewcode source pages"


def test_copy_button_copies_code_without_prompts_or_output(site, browser):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(site + "index.html", wait_until="load")
    page.locator("div.highlight").first.hover()
    page.locator("button.copybtn").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    context.close()
    assert copied.splitlines() == [
        "import numpy as np",
        "import portagather as pg",
        "pg.gather_nd(np.arange(12).reshape(2, 3, 2), [[2], [0]], batch_dims=1)",
    ]


def test_jit_example_shows_the_message(crawl, site):
    text = " ".join(_page(crawl, site, "bad-indices.html")["text"].split())
    assert JIT_MESSAGE in text
    assert "ValueError: ... >>>" not in text and not text.endswith("ValueError: ...")


def test_support_matrix_marks(crawl, site):
    text = _page(crawl, site, "support-matrix.html")["text"]
    flat = " ".join(text.split())
    table = "\n".join(_page(crawl, site, "support-matrix.html")["tables"])
    assert "✓" in table and "⚠" in table
    assert "✗" not in table and "❌" not in table, "all passed: no cell may show a failure"
    assert "✓ 13 ⚠ 8" in table  # ndonnx's documented examples: 13 pass, 8 expected failures
    assert "All conformance checks passed" in flat
    assert "ndonnx 0.23.0" in flat and "numpy 2.4.6" in flat
    assert " ".join(_known_reason().split()) in flat


def test_every_symbol_renders(crawl, site):
    tofu = {url: p["tofu"] for url, p in crawl.items() if p["tofu"]}
    assert not tofu, f"symbols the browser draws as empty boxes (no font has them): {tofu}"
    # The marks of the matrix and of the benchmark tables are among the symbols checked.
    assert "✓" in _page(crawl, site, "support-matrix.html")["text"]
    assert "✓" in _page(crawl, site, "performance.html")["text"]


SCATTERS = ("scatter_nd", "scatter_d", "put_along_axis")


def test_scatter_pages(crawl, site):
    """Each scatter has its guide (with its diagram), its API page, index entries, contract
    sections S1-S9, porting rows and support matrix rows."""
    import portagather

    operations = _page(crawl, site, "operations/index.html")
    api = _page(crawl, site, "api/index.html")
    for name in SCATTERS:
        guide = _page(crawl, site, f"operations/{name}.html")
        assert [src for src, _ in guide["images"]] == [f"../_images/{name}.png"]
        assert all(width > 300 for _, width in guide["images"])
        assert "Bad indices" in guide["text"] and "IndexError" in guide["text"]
        assert f"{site}api/{name}.html#portagather.{name}" in guide["links"]
        assert f"{site}operations/{name}.html" in operations["links"]
        reference = _page(crawl, site, f"api/{name}.html")
        assert f"portagather.{name}(" in reference["text"]
        assert f"{site}api/{name}.html#portagather.{name}" in api["links"]
        assert getattr(portagather, name).__doc__
    contract = _page(crawl, site, "contract.html")
    sections = sorted(a for a in contract["anchors"] if a and a[:1] == "s" and a[1:2].isdigit())
    assert [a.split("-")[0] for a in sections] == [f"s{n}" for n in range(1, 10)]
    assert "portagather.REDUCTIONS" in api["text"] and "Built-in immutable" not in api["text"]
    compat = {
        "tensorflow": ["tensor_scatter_nd_update", "tensor_scatter_nd_sub", "scatter_nd"],
        "mindspore": ["TensorScatterElements", "tensor_scatter_elements", "ScatterNd"],
        "onnx": ["scatter_nd", "scatter_elements"],
        "pytorch": ["scatter", "scatter_add", "scatter_reduce"],
        "numpy": ["put_along_axis"],
        "jax": ["put_along_axis"],
    }
    for guide, names in compat.items():
        text = _page(crawl, site, f"porting/{guide}.html")["text"]
        for name in names:
            assert name in text, (guide, name)
    table = "\n".join(_page(crawl, site, "support-matrix.html")["tables"])
    rows = [line.split("\t")[0] for line in table.splitlines()]
    assert [r for r in rows if r in SCATTERS] == list(SCATTERS)
    assert rows.index("scatter_nd") > rows.index("gather_nd")


@pytest.mark.usefixtures("crawl")
def test_screenshots(site, browser, tmp_path):
    folder = Path(os.environ.get("PORTAGATHER_DOCS_SCREENSHOTS") or tmp_path)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    names = ["index", "support-matrix", *(f"operations/{op}" for op in SCATTERS)]
    for name in names:
        shot = folder / f"docs-{name.replace('/', '-')}.png"
        page.goto(f"{site}{name}.html", wait_until="load")
        page.evaluate(WAIT_FOR_IMAGES)
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
    page.close()


def test_doctest_builder_passes(tmp_path, report):
    """Every example's shown output is what the library prints (sphinx -b doctest)."""
    _need_sphinx()
    done = _sphinx("doctest", tmp_path, report)
    output = (tmp_path / "output.txt").read_text() if (tmp_path / "output.txt").exists() else ""
    assert done.returncode == 0, f"doctest builder failed:\n{output}\n{done.stderr}"
    assert "0 failures in tests" in output


#: The guide of each function of the segment toolkit, and the diagram that guide shows.
TOOLKIT_PAGES = {
    "segment_softmax": ("segment_softmax", "segment_softmax"),
    "segment_log_softmax": ("segment_softmax", "segment_softmax"),
    "segment_logsumexp": ("segment_logsumexp", "segment_logsumexp"),
    "segment_argmax": ("segment_argmax", "segment_argmax"),
    "segment_argmin": ("segment_argmax", "segment_argmax"),
    "segment_var": ("segment_var", "segment_var"),
    "segment_std": ("segment_var", "segment_var"),
    "segment_count": ("segment_count", "segment_count"),
    "bincount": ("segment_count", "segment_count"),
}


def test_toolkit_pages():
    """Each function of the segment toolkit has its guide (with the diagram that
    docs/_ext/generate.py draws, in the operations toctree and table), its API entry, and the
    contract's numbered sections T1-T9; read from the sources, with no build."""
    from portagather import _segment_toolkit

    assert set(TOOLKIT_PAGES) == set(_segment_toolkit.__all__)
    operations = (DOCS / "operations" / "index.md").read_text()
    api = (DOCS / "api" / "segment_toolkit.md").read_text()
    generate = (DOCS / "_ext" / "generate.py").read_text()
    for name, (page, diagram) in TOOLKIT_PAGES.items():
        guide = (DOCS / "operations" / f"{page}.md").read_text()
        assert f"](../_generated/diagrams/{diagram}.png)" in guide, name
        assert f'out / "{diagram}.png"' in generate, name
        assert f"{{py:func}}`portagather.{name}`" in guide, name
        assert "{doctest}" in guide and "IndexError" in guide, name
        assert f"\n{page}\n" in operations.split("```{toctree}")[1], name
        assert f"({page}.md" in operations, name
        assert f".. autofunction:: portagather.{name}\n" in api, name
    contract = (DOCS / "contract.md").read_text()
    toolkit = contract.split("\n## The segment toolkit\n")[1]
    numbers = [line.split(".")[0] for line in toolkit.splitlines() if line.startswith("### T")]
    assert numbers == [f"### T{n}" for n in range(1, 10)]
    assert "segment_toolkit" in (DOCS / "api" / "index.md").read_text()
