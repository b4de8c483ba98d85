"""``portagather check``: run the conformance suite on the installed backends, print a matrix."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

NEEDS = 'portagather check needs pytest, hypothesis and rich: pip install "portagather[check]"'


class _Collector:
    """A pytest plugin that counts outcomes per (operation, feature, backend) and shows progress."""

    def __init__(self, progress=None):
        self.progress, self.task = progress, None
        self.counts = defaultdict(lambda: defaultdict(int))
        self.failures = []
        self.collection_errors = []

    def pytest_collection_finish(self, session):
        if self.progress is not None:
            self.task = self.progress.add_task("conformance", total=len(session.items))

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_runtest_logreport(self, report):
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
        key = (props["op"], props["feature"], props["backend"])
        self.counts[key][outcome] += 1
        if outcome == "fail":
            self.failures.append(
                {
                    "test": report.nodeid,
                    "backend": props["backend"],
                    "error": report.longrepr.reprcrash.message
                    if hasattr(report.longrepr, "reprcrash")
                    else str(report.longrepr),
                    "reproducer": props.get("reproducer", ""),
                }
            )
        if self.progress is not None and self.task is not None:
            self.progress.advance(self.task)


def _cell(counts) -> str:
    """``pass 12``, ``pass 10 xfail 2``, ``FAIL 1/12``; ``-`` where nothing applies."""
    total = sum(counts.values())
    if not total:
        return "-"
    if counts.get("fail"):
        return f"FAIL {counts['fail']}/{total}"
    parts = [f"{name} {counts[name]}" for name in ("pass", "xfail", "skip") if counts.get(name)]
    return " ".join(parts)


def _run(backends, verbose_pytest, progress):
    import pytest

    suite = Path(__file__).with_name("conformance")
    collector = _Collector(progress)
    args = [str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite)]
    args += ["-p", "no:terminal"] if not verbose_pytest else ["-q"]
    for name in backends:
        args += ["--backend", name]
    code = pytest.main(args, plugins=[collector])
    return collector, code


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="portagather", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="run the conformance suite and print a matrix")
    check.add_argument("--backend", action="append", default=[], help="backend (repeatable)")
    check.add_argument("--json", action="store_true", help="print the results as JSON")
    check.add_argument("--verbose", action="store_true", help="print each failure's reproducer")
    options = parser.parse_args(argv)

    try:
        import hypothesis  # noqa: F401
        import pytest  # noqa: F401
        import rich  # noqa: F401
    except ImportError:
        print(NEEDS, file=sys.stderr)
        return 2
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from .conformance.backends import install_hint, installed_backends

    found, missing = installed_backends()
    backends = options.backend or found
    console = Console(stderr=options.json)
    if not console.is_terminal:
        console.width = max(console.width, 40 + 16 * len(backends))
    if options.json:
        collector, code = _run(backends, False, None)
    else:
        with Progress(console=console, transient=True) as progress:
            collector, code = _run(backends, False, progress)

    rows = sorted({key[:2] for key in collector.counts})
    failed = any(c.get("fail") for c in collector.counts.values())
    failed = failed or bool(collector.collection_errors) or code not in (0, 1)
    not_found = {n: install_hint(n) for n in missing if n not in backends}
    if options.json:
        result = {
            "backends": backends,
            "not_installed": not_found,
            "rows": [
                {"op": op, "feature": feature,
                 "cells": {b: dict(collector.counts[(op, feature, b)]) for b in backends}}
                for op, feature in rows
            ],
            "failures": collector.failures,
            "collection_errors": collector.collection_errors,
            "ok": not failed,
        }  # fmt: skip
        print(json.dumps(result, indent=2))
        return 1 if failed else 0

    table = Table(title="portagather conformance")
    table.add_column("operation")
    table.add_column("feature")
    for name in backends:
        table.add_column(name)
    for op, feature in rows:
        cells = []
        for name in backends:
            counts = collector.counts.get((op, feature, name), {})
            text = _cell(counts)
            cells.append(f"[red]{text}[/red]" if counts.get("fail") else text)
        table.add_row(op, feature, *cells)
    console.print(table)
    for error in collector.collection_errors:
        console.print(f"collection error: {error}", style="red", markup=False)
    if options.verbose:
        for failure in collector.failures:
            console.print(f"\nFAIL {failure['test']}", style="red", markup=False)
            console.print(failure["error"], markup=False, highlight=False, soft_wrap=True)
            if failure["reproducer"]:
                console.print(failure["reproducer"], markup=False, highlight=False, soft_wrap=True)
    elif collector.failures:
        console.print("run with --verbose to print each failing case with a reproducer")
    for name, hint in not_found.items():
        console.print(f"backend {name} not installed, not checked: {hint}")
    console.print("[red]FAILED[/red]" if failed else "[green]all conformance checks passed[/green]")
    return 1 if failed else 0
