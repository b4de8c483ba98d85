"""``portagather check`` and the suite's pytest plugin as a user meets them: backend names,
exit codes, help, output, traces.

Most tests run the command in a subprocess, on NumPy only (a few seconds); the checks that
would need a slow backend test the parsing and printing functions directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import portagather

SRC = Path(portagather.__file__).resolve().parents[1]  # the portagather these tests import


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m portagather ARGS`` in `cwd`."""
    command = [sys.executable, "-m", "portagather", *args]
    return subprocess.run(command, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


# --- 1. an unknown backend name is one usage error ------------------------------------------


def test_pytest_with_unknown_backend_is_one_usage_error(tmp_path):
    suite = SRC / "portagather" / "conformance"
    command = [sys.executable, "-m", "pytest", str(suite), "--backend", "nump"]
    command += ["-p", "no:cacheprovider"]
    done = subprocess.run(
        command, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert done.stderr.count("ERROR: unknown backend 'nump'") == 1
    assert "failed" not in done.stdout


# --- 2. each backend once; any array API module ------------------------------------------


def test_array_api_compat_module_as_backend_passes(tmp_path):
    done = run_cli("check", "--backend", "array_api_compat.numpy", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all conformance checks passed" in done.stdout


def test_plugin_selects_each_backend_once():
    from portagather.conformance.plugin import selected_backends

    class Config:
        def getoption(self, name):
            return ["numpy", "jax", "numpy"]

    assert selected_backends(Config()) == ["numpy", "jax"]
