"""The pytest side of the suite: backend selection, the matrix cell of each test, known failures.

- ``--backend NAME`` (repeatable) or ``PORTAGATHER_BACKENDS=a,b``, each backend once; by
  default every known backend that is installed (the report header names the missing ones).
  A name that is neither a known backend nor an importable module is a usage error.
- Every test is marked ``cell(feature)``; the feature may name parameters, e.g.
  ``"policy:{policy}"``. Tests marked ``only(*backends)`` run on those backends only.
- ``known_failures.txt`` lists each backend-specific expected failure with its reason; they
  become strict xfails, so a fixed one shows up.
- A test that takes ``mode`` runs once per mode of each backend (``modes.py``: eager; jit on
  JAX; lazy on Dask); ``modes(*modes)`` narrows them.
- The ``repro`` fixture records the last call a test made; a failing report carries it.
- The drawn tests draw a share of their written examples set by a hypothesis profile
  (``strategies.PROFILES``): the suite's own by default, every one with
  ``--hypothesis-profile thorough`` (``PYTEST_ADDOPTS`` passes it to ``portagather check``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .cases import Call

from . import strategies
from .backends import (
    Backend,
    install_hint,
    installed_backends,
    load_backend,
    unknown_backend_message,
    unknown_backends,
)
from .modes import modes_of

KNOWN_FAILURES = Path(__file__).with_name("known_failures.txt")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        action="append",
        default=[],
        help="backend to run the conformance suite on (repeatable): a known name "
        "(numpy, array_api_strict, jax, torch, dask, ndonnx) or any importable module",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cell(feature): the matrix row of a conformance test")
    config.addinivalue_line("markers", "only(*backends): run on these backends only")
    config.addinivalue_line("markers", "per_dtype(kind): one test per data or index dtype")
    config.addinivalue_line("markers", "modes(*modes): run in these modes only (modes.py)")
    strategies.load_profile(config)
    unknown = unknown_backends(requested_backends(config))
    if unknown:
        raise pytest.UsageError(unknown_backend_message(unknown[0]))


def requested_backends(config: pytest.Config) -> list[str]:
    """The backends asked for, by ``--backend`` or ``PORTAGATHER_BACKENDS``, each once."""
    names = list(config.getoption("--backend"))
    if not names and os.environ.get("PORTAGATHER_BACKENDS"):
        names = [n.strip() for n in os.environ["PORTAGATHER_BACKENDS"].split(",") if n.strip()]
    return list(dict.fromkeys(names))


def selected_backends(config: pytest.Config) -> list[str]:
    """The backends asked for, else every known one that is installed."""
    return requested_backends(config) or installed_backends()[0]


def pytest_report_header(config: pytest.Config) -> list[str]:
    names = selected_backends(config)
    lines = [f"portagather conformance backends: {', '.join(names)}"]
    missing = installed_backends()[1]
    if missing and not requested_backends(config):
        hints = "; ".join(f"{n}: {install_hint(n)}" for n in missing)
        lines.append(f"backends not installed, not run: {hints}")
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend_name" not in metafunc.fixturenames:
        return
    names = selected_backends(metafunc.config)
    only = metafunc.definition.get_closest_marker("only")
    if only is not None:
        names = [n for n in names if n in only.args]
    if "mode" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("modes")
        modes = [(n, m) for n in names for m in modes_of(n) if marker is None or m in marker.args]
        metafunc.parametrize(("backend_name", "mode"), modes)
        return
    per_dtype = metafunc.definition.get_closest_marker("per_dtype")
    if per_dtype is None:
        metafunc.parametrize("backend_name", names)
        return
    pairs: list[tuple[str, str | None]] = []
    for name in names:
        try:
            backend = load_backend(name)
        except ImportError:
            pairs.append((name, None))  # the backend fixture fails it loudly
            continue
        dtypes = backend.dtypes if per_dtype.args[0] == "data" else backend.index_dtypes
        pairs += [
            (name, d)
            for d in dtypes + (("str",) if per_dtype.args[0] == "data" and backend.strings else ())
        ]
    metafunc.parametrize(("backend_name", "dtype"), pairs)


@pytest.fixture
def backend(backend_name: str) -> Backend:
    try:
        return load_backend(backend_name)
    except ImportError as err:  # a backend that was asked for fails loudly
        pytest.fail(str(err), pytrace=False)


class Repro:
    """The last call a test made, as a reproducer."""

    def __init__(self, backend_name: str) -> None:
        self.backend_name = backend_name
        self.text = ""

    def __call__(self, call: Call) -> Call:
        self.text = call.reproducer(self.backend_name)
        return call


@pytest.fixture
def repro(backend_name: str) -> Repro:
    return Repro(backend_name)


def _known_failures() -> list[tuple[str, str, str]]:
    entries = []
    for line in KNOWN_FAILURES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            backend, pattern, reason = (part.strip() for part in line.split("|", 2))
            entries.append((backend, pattern, reason))
    return entries


def _matches(pattern: str, name: str) -> bool:
    """``*`` is the only wildcard; brackets in test names are literal."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), name) is not None


def cell_of(item: Any) -> tuple[str, str] | None:
    """``(operation, feature)`` of a conformance test item."""
    marker = item.get_closest_marker("cell")
    if marker is None or not hasattr(item, "callspec"):
        return None
    params = item.callspec.params
    return params.get("op", "all"), marker.args[0].format(**params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests for backends that are not selected (e.g. JAX's jit without JAX) do not apply:
    # they are deselected, and the summary counts them.
    absent = [
        i
        for i in items
        if hasattr(i, "callspec") and not isinstance(i.callspec.params.get("backend_name"), str)
    ]
    if absent:
        config.hook.pytest_deselected(items=absent)
        items[:] = [i for i in items if i not in absent]
    known = _known_failures()
    for item in items:
        cell = cell_of(item)
        if cell is None:
            continue
        name = item.callspec.params["backend_name"]  # type: ignore[attr-defined]
        item.user_properties += [("op", cell[0]), ("feature", cell[1]), ("backend", name)]
        for backend, pattern, reason in known:
            if backend == name and _matches(pattern, item.name):
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
                break


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, Any, Any]:
    report = yield
    repro = getattr(item, "funcargs", {}).get("repro")
    if report.failed and repro is not None and repro.text:
        report.user_properties.append(("reproducer", repro.text))
        report.sections.append(("reproducer", repro.text))
    return report
