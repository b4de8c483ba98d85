"""``portagather check``: run the conformance suite on the installed backends, print a matrix.

The suite runs in this process (``pytest.main``), one backend after another, from a scratch
directory, so that the caller's directory gets no ``.hypothesis/`` or ``.pytest_cache/``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import platform
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import __version__
from .conformance.backends import (
    ANY_MODULE,
    KNOWN,
    install_hint,
    installed_backends,
    is_installed,
    library_version,
    load_backend,
    needs,
    unknown_backend_message,
    unknown_backends,
)

if TYPE_CHECKING:
    import pytest
    from rich.console import Console
    from rich.progress import Progress, TaskID

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2  # argparse's own code for a usage error
EXIT_NOT_INSTALLED = 3
EXIT_CODES = {
    EXIT_PASSED: "every check passed (expected failures count as passed)",
    EXIT_FAILED: "some checks failed",
    EXIT_USAGE: "usage error, e.g. an unknown backend name",
    EXIT_NOT_INSTALLED: "a requested backend is not installed (or pytest, hypothesis or rich)",
}

NEEDS = 'portagather check needs pytest, hypothesis and rich: pip install "portagather[check]"'

DESCRIPTION = """\
Run portagather's conformance suite on array libraries (backends) and print a matrix of
operations (the gathers, the scatters, the segment reductions) and features against
backends: how many checks pass, fail (FAIL) or are expected failures (xfail, the backend
limitations listed in portagather/conformance/known_failures.txt)."""

# The matrix's operations, in the order of its rows: a test's ``op`` parameter names one (a
# test without one counts for "all"). The gathers, then the scatters, each after its gather's
# order, then the segment reductions; an operation not listed here comes last, by name.
GATHERS = ("gather_nd", "gather", "gather_d", "take_along_axis")
SCATTERS = ("scatter_nd", "scatter_d", "put_along_axis")
SEGMENTS = ("segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
            "segment_csr", "segment_softmax", "segment_log_softmax", "segment_logsumexp",
            "segment_argmax", "segment_argmin", "segment_var", "segment_std", "segment_count",
            "bincount")  # fmt: skip
OPERATIONS = ("all", *GATHERS, *SCATTERS, *SEGMENTS)

# Outcome names in the matrix, and in the words of a backend's one-line summary.
OUTCOME_WORDS = {
    "pass": "passed",
    "xfail": "expected failure",  # (made plural by the count)
    "skip": "skipped",
    "fail": "FAILED",
}

HYPOTHESIS_STORAGE = "HYPOTHESIS_STORAGE_DIRECTORY"


class Display(Protocol):
    """Where the progress of a run goes."""

    def start(self, backend: str, total: int) -> None: ...

    def advance(self, backend: str) -> None: ...

    def finish(self, backend: str, summary: str) -> None: ...


def _backend_of(item: Any) -> str | None:
    """The backend a collected test runs on, if it is one of the suite's."""
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("backend_name") if callspec is not None else None
    return name if isinstance(name, str) else None


class Collector:
    """A pytest plugin: runs the backends one after another, counts outcomes per (operation,
    feature, backend), keeps failures and expected failures, and reports progress."""

    def __init__(self, backends: list[str], display: Display | None = None) -> None:
        self.backends = backends
        self.display = display
        self.counts: defaultdict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
        self.failures: list[dict[str, str]] = []
        self.expected_failures: list[dict[str, str]] = []
        self.collection_errors: list[str] = []
        self.backend_of: dict[str, str] = {}  # test id: backend
        self.total: Counter[str] = Counter()  # backend: tests collected
        self.done: Counter[str] = Counter()  # backend: tests finished
        self.started: set[str] = set()  # backends whose progress has started

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """One backend after another, in the order asked for, so the progress can name it."""
        order = {name: i for i, name in enumerate(self.backends)}
        items.sort(key=lambda item: order.get(_backend_of(item) or "", -1))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            backend = _backend_of(item)
            if backend is not None:
                self.backend_of[item.nodeid] = backend
                self.total[backend] += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        backend = self.backend_of.get(nodeid)
        if self.display is not None and backend is not None and backend not in self.started:
            self.started.add(backend)
            self.display.start(backend, self.total[backend])

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        backend = self.backend_of.get(nodeid)
        if self.display is None or backend is None:
            return
        self.done[backend] += 1
        self.display.advance(backend)
        if self.done[backend] == self.total[backend]:
            self.display.finish(backend, self.summary(backend))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if "op" not in props:
            return
        outcome = None
        if report.when == "call" or report.failed or report.skipped:
            if hasattr(report, "wasxfail"):
                outcome = "xfail" if report.skipped else "fail"  # strict XPASS fails
            else:
                outcome = {"passed": "pass", "failed": "fail", "skipped": "skip"}[report.outcome]
        if outcome is None:
            return
        backend = str(props["backend"])
        self.counts[(str(props["op"]), str(props["feature"]), backend)][outcome] += 1
        if outcome == "xfail":
            self.expected_failures.append(
                {"test": report.nodeid, "backend": backend, "reason": str(report.wasxfail)}
            )
        if outcome == "fail":
            self.failures.append(
                {
                    "test": report.nodeid,
                    "backend": backend,
                    "error": report.longrepr.reprcrash.message  # type: ignore[union-attr]
                    if hasattr(report.longrepr, "reprcrash")
                    else str(report.longrepr),
                    "reproducer": str(props.get("reproducer", "")),
                }
            )

    def summary(self, backend: str) -> str:
        """``361 passed``, ``350 passed, 3 expected failures, 8 FAILED``."""
        outcomes: Counter[str] = Counter()
        for (_, _, name), counts in self.counts.items():
            if name == backend:
                outcomes.update(counts)
        parts = [
            f"{outcomes[o]} {word}{'s' if o == 'xfail' and outcomes[o] != 1 else ''}"
            for o, word in OUTCOME_WORDS.items()
            if outcomes[o]
        ]
        return ", ".join(parts) or "no checks"

    @property
    def failed(self) -> bool:
        return bool(self.failures or self.collection_errors)


class _Lines:
    """Progress for a log or a pipe: a line as each backend starts and as it ends."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def start(self, backend: str, total: int) -> None:
        _say(self.console, f"checking {backend}: {total} checks")

    def advance(self, backend: str) -> None:
        pass

    def finish(self, backend: str, summary: str) -> None:
        _say(self.console, f"{backend}: {summary}")


class _Bars:
    """Progress on a terminal: one bar per backend, named while it runs."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def start(self, backend: str, total: int) -> None:
        from rich.markup import escape

        self.tasks[backend] = self.progress.add_task(f"checking {escape(backend)}", total=total)

    def advance(self, backend: str) -> None:
        self.progress.advance(self.tasks[backend])

    def finish(self, backend: str, summary: str) -> None:
        from rich.markup import escape

        self.progress.update(self.tasks[backend], description=escape(f"{backend}: {summary}"))


@contextlib.contextmanager
def _progress(console: Console) -> Iterator[Display]:
    """Bars on a terminal, else plain lines."""
    if not console.is_terminal:
        yield _Lines(console)
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        yield _Bars(progress)


@contextlib.contextmanager
def _away_from_caller() -> Iterator[None]:
    """Run in a scratch directory, with hypothesis's storage there (unless the caller chose
    one): the caller's directory gets no ``.hypothesis/``, ``.pytest_cache/`` nor any other
    plugin's files (pytest-benchmark's ``.benchmarks/``)."""
    caller = os.getcwd()
    storage = os.environ.get(HYPOTHESIS_STORAGE)
    with tempfile.TemporaryDirectory(prefix="portagather-check-") as scratch:
        os.environ.setdefault(HYPOTHESIS_STORAGE, os.path.join(scratch, ".hypothesis"))
        os.chdir(scratch)
        try:
            yield
        finally:
            os.chdir(caller)
            if storage is None:
                os.environ.pop(HYPOTHESIS_STORAGE, None)


def _run(backends: list[str], collector: Collector) -> int:
    """pytest's exit code for the suite on `backends`, with `collector` watching."""
    import pytest

    suite = Path(__file__).with_name("conformance")
    args = [str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite)]
    args += ["-p", "no:terminal", "-p", "no:cacheprovider"]
    for name in backends:
        args += ["--backend", name]
    with _away_from_caller():
        return int(pytest.main(args, plugins=[collector]))


def _epilog() -> str:
    """The backends, what each needs, and the exit codes."""
    width = max(map(len, KNOWN)) + 2
    lines = ["backends (--backend NAME; by default every known one that is installed):"]
    lines += [f"  {name:<{width}}{needs(name)}" for name in KNOWN]
    lines += [f"  or {ANY_MODULE}", "", "exit codes:"]
    lines += [f"  {code}  {meaning}" for code, meaning in EXIT_CODES.items()]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portagather",
        description="portagather: TensorFlow's and MindSpore's gathers and scatters over the "
        "Python array API standard.",
        epilog="portagather check --help lists the backends and the exit codes.",
    )
    parser.add_argument("--version", action="version", version=f"portagather {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="run the conformance suite and print a matrix",
        description=DESCRIPTION,
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "--backend",
        action="append",
        default=[],
        metavar="NAME",
        help="check this backend (repeatable); by default every known one that is installed",
    )
    check.add_argument(
        "--json", action="store_true", help="print the results as JSON; progress goes to stderr"
    )
    check.add_argument(
        "--verbose",
        action="store_true",
        help="print each failing case with a reproducer, and each expected failure with its reason",
    )
    check.set_defaults(command_parser=check)
    return parser


def _has_check_tools() -> bool:
    try:
        import hypothesis  # noqa: F401
        import pytest  # noqa: F401
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


class NotInstalledError(Exception):
    """A requested backend is not installed, or does not import."""


def _choose_backends(options: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The backends to check, each once, and the known ones that are not installed and were not
    asked for. An unknown name is a usage error (exits 2); a missing one raises."""
    requested = list(dict.fromkeys(options.backend))
    unknown = unknown_backends(requested)
    if unknown:
        options.command_parser.error(unknown_backend_message(unknown[0]))
    missing = [name for name in requested if not is_installed(name)]
    if missing:
        msg = "\n".join(f"backend {n!r} is not installed: {install_hint(n)}" for n in missing)
        raise NotInstalledError(msg)
    found, not_installed = installed_backends()
    return (requested, []) if requested else (found, not_installed)


def _load(options: argparse.Namespace, names: list[str], status: Console) -> None:
    """Import each backend before the run. A module that is no array library is a usage error
    (exits 2); a backend that does not import raises. A known backend that fails in another
    way is left to the suite, which fails it loudly, with the traceback."""
    for name in names:
        with status.status(f"importing {name}"):
            try:
                load_backend(name)
            except ImportError as err:
                raise NotInstalledError(str(err)) from err
            except Exception as err:  # a module that is no array library fails in many ways
                if name not in KNOWN:
                    options.command_parser.error(
                        f"backend {name!r}: the module imports, but array-api-compat does not "
                        f"know its arrays ({type(err).__name__}: {err})"
                    )


def versions(backends: list[str]) -> dict[str, Any]:
    """portagather's, Python's and each backend's library version."""
    return {
        "portagather": __version__,
        "python": platform.python_version(),
        "backends": {name: library_version(name) for name in backends},
    }


def _cell(counts: Counter[str]) -> str:
    """``pass 12``, ``pass 10 xfail 2``, ``FAIL 1/12``; ``-`` where nothing applies."""
    total = sum(counts.values())
    if not total:
        return "-"
    if counts.get("fail"):
        return f"FAIL {counts['fail']}/{total}"
    parts = [f"{name} {counts[name]}" for name in ("pass", "xfail", "skip") if counts.get(name)]
    return " ".join(parts)


def _row_order(row: tuple[str, str]) -> tuple[int, str, str]:
    op, feature = row
    rank = OPERATIONS.index(op) if op in OPERATIONS else len(OPERATIONS)
    return rank, op, feature


def _rows(collector: Collector) -> list[tuple[str, str]]:
    """The matrix's (operation, feature) rows: "all", the gathers, the scatters, the segment
    reductions (OPERATIONS), then any other operation; features by name within an operation."""
    return sorted({key[:2] for key in collector.counts}, key=_row_order)


def _report(
    collector: Collector, backends: list[str], not_installed: list[str], failed: bool
) -> dict[str, Any]:
    """The results as ``--json`` prints them."""
    return {
        "versions": versions(backends),
        "backends": backends,
        "not_installed": {name: install_hint(name) for name in not_installed},
        "rows": [
            {"op": op, "feature": feature,
             "cells": {b: dict(collector.counts[(op, feature, b)]) for b in backends}}
            for op, feature in _rows(collector)
        ],
        "failures": collector.failures,
        "expected_failures": collector.expected_failures,
        "collection_errors": collector.collection_errors,
        "ok": not failed,
    }  # fmt: skip


def print_matrix(console: Console, collector: Collector, backends: list[str]) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    table = Table(title="portagather conformance")
    table.add_column("operation")
    table.add_column("feature")
    for name in backends:
        table.add_column(escape(name))
    previous = None
    for op, feature in _rows(collector):
        if (previous in GATHERS and op in SCATTERS) or (previous in SCATTERS and op in SEGMENTS):
            table.add_section()  # a rule between the gathers, the scatters and the segments
        previous = op
        cells = []
        for name in backends:
            counts = collector.counts.get((op, feature, name), Counter())
            cells.append(Text(_cell(counts), style="red" if counts.get("fail") else ""))
        table.add_row(Text(op), Text(feature), *cells)
    console.print(table)


def _say(console: Console, text: str, style: str = "") -> None:
    """Print `text` as it is: no markup (``[jax]`` stays), no highlighting, no wrapping."""
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def print_details(console: Console, collector: Collector, verbose: bool) -> None:
    """Collection errors; with `verbose` each failure with its reproducer and each expected
    failure with its reason, else a line that says how to see them."""
    for error in collector.collection_errors:
        _say(console, f"collection error: {error}", style="red")
    if verbose:
        for failure in collector.failures:
            _say(console, f"\nFAIL {failure['test']}", style="red")
            _say(console, failure["error"])
            if failure["reproducer"]:
                _say(console, failure["reproducer"])
        if collector.expected_failures:
            _say(console, "\nexpected failures (known_failures.txt):")
        for expected in collector.expected_failures:
            _say(console, f"XFAIL {expected['test']}: {expected['reason']}")
        return
    if collector.failures:
        _say(console, "run with --verbose to print each failing case with a reproducer")
    if collector.expected_failures:
        _say(console, "run with --verbose to print each expected failure with its reason")


def print_not_installed(console: Console, names: list[str]) -> None:
    """A short note on the known backends that are not installed, each with its pip command."""
    if names:
        _say(console, "not installed, not checked:")
    for name in names:
        _say(console, f"  {name}: {install_hint(name)}")


def print_results(
    console: Console, collector: Collector, code: int, verbose: bool, not_installed: list[str]
) -> None:
    """The matrix, the failures, the backends not installed, the versions and the verdict."""
    if not console.is_terminal:
        console.width = max(console.width, 40 + 16 * len(collector.backends))
    print_matrix(console, collector, collector.backends)
    print_details(console, collector, verbose)
    if code != 0 and not collector.failed:
        _say(console, f"the run stopped early or failed outside the matrix (pytest exit {code})")
    print_not_installed(console, not_installed)
    ran = versions(collector.backends)
    libraries = ", ".join(f"{n} {v or '(no version)'}" for n, v in ran["backends"].items())
    _say(console, f"portagather {ran['portagather']}, Python {ran['python']}, {libraries}")
    failed = collector.failed or code != 0
    console.print("[red]FAILED[/red]" if failed else "[green]all conformance checks passed[/green]")


def check(options: argparse.Namespace) -> int:
    """``portagather check``: the exit code."""
    if not _has_check_tools():
        print(NEEDS, file=sys.stderr)
        return EXIT_NOT_INSTALLED
    from rich.console import Console

    status = Console(stderr=True)
    try:
        backends, not_installed = _choose_backends(options)
        _load(options, backends, status)
    except NotInstalledError as err:
        for line in str(err).splitlines():
            print(f"portagather check: {line}", file=sys.stderr)
        return EXIT_NOT_INSTALLED
    with _progress(status) as display:
        collector = Collector(backends, display)
        code = _run(backends, collector)
    failed = collector.failed or code != 0
    exit_code = EXIT_FAILED if failed else EXIT_PASSED
    try:
        if options.json:
            report = _report(collector, backends, not_installed, failed)
            print(json.dumps(report, indent=2))
        else:
            print_results(Console(), collector, code, options.verbose, not_installed)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`portagather check --json | head`): what it read is all it
        # wanted, and the checks' own outcome is the exit code. Python's flush at exit would
        # meet the closed pipe again, so stdout goes nowhere from here.
        # https://docs.python.org/3/library/signal.html#note-on-sigpipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return exit_code


COMMANDS = ("check",)
#: The options of ``portagather check`` (build_parser), for the hint on a mistyped one.
CHECK_OPTIONS = ("--backend", "--json", "--verbose", "--help")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    given = sys.argv[1:] if argv is None else argv
    command = next((a for a in given if not a.startswith("-")), None)
    if command is not None and command not in COMMANDS:
        close = difflib.get_close_matches(command, COMMANDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        parser.error(f"unknown command {command!r}{hint}; the command is: check")
    options, unknown = parser.parse_known_args(argv)
    if unknown:
        # A mistyped option: say which one was meant, as for the command and the backends.
        given_flag = unknown[0].split("=")[0]
        if not given_flag.startswith("-"):
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        close = difflib.get_close_matches(given_flag, CHECK_OPTIONS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        options.command_parser.error(
            f"unknown option {given_flag!r}{hint}; the options are: {', '.join(CHECK_OPTIONS)}"
        )
    return check(options)
