"""``conformance/``, the suite's entry from a checkout: ``pytest conformance --backend NAME``
runs the installed ``portagather.conformance`` package's tests, each once, and holds nothing
of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import portagather.conformance

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "conformance"
SUITE = Path(portagather.conformance.__file__).parent  # what `pytest --pyargs` collects
SRC = Path(portagather.__file__).resolve().parents[1]


def test_one_entry_per_suite_module_importing_it():
    suite = sorted(p.stem for p in SUITE.glob("test_*.py"))
    assert suite, f"no test modules in {SUITE}"
    assert sorted(p.stem for p in ENTRY.glob("test_*.py")) == suite
    for name in suite:
        code = [
            line
            for line in (ENTRY / f"{name}.py").read_text().splitlines()
            if line and not line.startswith(('"""', "from __future__"))
        ]
        assert code == [f"from portagather.conformance.{name} import *  # noqa: F403"], name


def _collected(target: str) -> list[str]:
    """The test names ``pytest TARGET --backend numpy`` collects, without the folder."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", "pytest", target, "--backend", "numpy", "--collect-only"]
    command += ["-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.split("/")[-1] for line in done.stdout.splitlines() if "::" in line]


def test_pytest_conformance_collects_the_packaged_suite_once():
    entry = _collected("conformance")
    assert len(entry) > 100
    assert len(set(entry)) == len(entry), "a test collected twice"
    assert entry == _collected(str(SUITE))
