"""``portagather check`` and the suite's pytest plugin as a user meets them: backend names,
exit codes, help, output, traces.

The whole suite runs once here, on NumPy, in a subprocess (`json_run`); `.ci/run` runs it on
every backend with ``portagather check --json``. The other runs of the command select a few of
the suite's tests through pytest's ``PYTEST_ADDOPTS`` (`FEW_CHECKS`), since what they test is
the command around the checks (a module name as backend, a closed pipe), not the checks. The
usage errors call ``main`` in this process; ``python -m portagather`` itself runs in a
subprocess where its exit code and streams are the point (help, version, a missing backend). The
checks that would need a slow backend test the parsing and printing functions directly.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

import portagather
from portagather.conformance.backends import KNOWN

SRC = Path(portagather.__file__).resolve().parents[1]  # the portagather these tests import
PYPROJECT = SRC.parent / "pyproject.toml"

# `python -c WITHOUT_JAX ARGS`: the portagather CLI in a process where JAX is not installed.
WITHOUT_JAX = """
import sys
from importlib.abc import MetaPathFinder

class NoJax(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "jax" or name.startswith("jax."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoJax())
from portagather._cli import main
sys.exit(main(sys.argv[1:]))
"""


# Four of the suite's tests on one backend (the same four as test_pytest_pyargs_takes_backend's),
# for the runs of the command that test what is around the checks.
FEW_CHECKS = "-k test_two_namespaces"


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_cli(
    *args: str, cwd: Path | None = None, without_jax: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    """``python -m portagather ARGS`` in `cwd` (in a Python without JAX if `without_jax`), with
    the environment variables `env` added."""
    start = ["-c", WITHOUT_JAX] if without_jax else ["-m", "portagather"]
    command = [sys.executable, *start, *args]
    return subprocess.run(
        command, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=300
    )


def call_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``portagather ARGS`` in this process: (exit code, stdout, stderr)."""
    from portagather._cli import main

    try:
        code = main(list(args))
    except SystemExit as stop:  # argparse's usage errors and --help
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def json_run(tmp_path_factory):
    """One ``check --json`` run on NumPy, named twice, in an empty directory, without JAX."""
    cwd = tmp_path_factory.mktemp("caller")
    args = ("check", "--json", "--backend", "numpy", "--backend", "numpy")
    return run_cli(*args, cwd=cwd, without_jax=True), cwd


# --- 1. an unknown backend name is one usage error ------------------------------------------


def test_misspelt_command_is_a_usage_error_with_the_right_one(capsys):
    code, out, err = call_main(capsys, "chek", "--backend", "numpy")
    assert code == 2, out + err
    assert "unknown command 'chek' (did you mean 'check'?)" in err
    assert out == ""


def test_misspelt_option_is_a_usage_error_with_the_right_one(capsys):
    code, out, err = call_main(capsys, "check", "--bakend", "numpy")
    assert code == 2, out + err
    assert "unknown option '--bakend' (did you mean '--backend'?)" in err
    assert out == ""


def test_unknown_backend_is_one_usage_error(capsys):
    code, out, err = call_main(capsys, "check", "--backend", "nump")
    assert code == 2, out + err
    assert "unknown backend 'nump'" in err
    assert "did you mean 'numpy'" in err
    for name in KNOWN:
        assert name in err
    assert "pip install nump" not in out + err
    assert "FAIL" not in out
    assert err.count("error:") == 1


def test_importable_module_that_is_not_an_array_library_is_a_usage_error(capsys):
    code, out, err = call_main(capsys, "check", "--backend", "json")
    assert code == 2, out + err
    assert "'json'" in err and "array" in err
    assert "FAIL" not in out


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


def test_repeated_backend_is_checked_once(json_run):
    done, _ = json_run
    report = json.loads(done.stdout)
    assert report["backends"] == ["numpy"]
    single = {(r["op"], r["feature"]): r["cells"]["numpy"] for r in report["rows"]}
    announced = re.findall(r"checking numpy: (\d+) checks", done.stderr)
    assert len(announced) == 1, done.stderr  # one run of numpy's checks, not two
    assert sum(sum(cell.values()) for cell in single.values()) == int(announced[0])


def test_array_api_compat_module_as_backend_passes(tmp_path):
    # Its arrays are NumPy's, the backend of json_run's whole run: a few checks here.
    name = "array_api_compat.numpy"
    done = run_cli("check", "--backend", name, cwd=tmp_path, PYTEST_ADDOPTS=FEW_CHECKS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checking {name}: 4 checks" in done.stderr
    assert f"{name}: 4 passed" in done.stderr
    assert name in done.stdout  # named in the matrix and the versions' line
    assert "all conformance checks passed" in done.stdout


def test_plugin_selects_each_backend_once():
    from portagather.conformance.plugin import selected_backends

    class Config:
        def getoption(self, _name):
            return ["numpy", "jax", "numpy"]

    assert selected_backends(Config()) == ["numpy", "jax"]


# --- 3. install hints keep their extras, only for backends asked for -------------------------


def test_requested_backend_not_installed_exits_3_with_the_extra():
    done = run_cli("check", "--backend", "numpy", "--backend", "jax", without_jax=True)
    assert done.returncode == 3, done.stdout + done.stderr
    assert 'pip install "portagather[jax]"' in done.stderr
    assert "torch" not in done.stderr and "ndonnx" not in done.stderr
    assert done.stdout == ""  # nothing was run


def test_note_on_missing_backends_keeps_the_extras():
    from rich.console import Console

    from portagather._cli import print_not_installed

    console = Console(record=True, width=200)
    print_not_installed(console, ["jax", "ndonnx"])
    text = console.export_text()
    assert 'jax: pip install "portagather[jax]"' in text
    assert 'ndonnx: pip install "portagather[ndonnx]"' in text
    assert "torch" not in text


def test_no_hints_for_backends_nobody_asked_for(json_run):
    done, _ = json_run  # JAX is missing, but only NumPy was asked for
    assert json.loads(done.stdout)["not_installed"] == {}
    assert "jax" not in done.stderr


# --- 4. help, version, exit codes ------------------------------------------------------------


def test_help_is_plain_text_with_backends_and_exit_codes():
    done = run_cli("check", "--help")
    assert done.returncode == 0
    text = done.stdout
    assert "``" not in text
    for name in KNOWN:
        assert name in text
    assert 'pip install "portagather[jax]"' in text
    assert 'pip install "portagather[strict]"' in text
    for code in ("0 ", "1 ", "2 ", "3 "):
        assert f"\n  {code}" in text
    assert "expected failures count as passed" in text
    top = run_cli("--help").stdout
    assert "``" not in top and "--version" in top


def test_version():
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"portagather {portagather.__version__}"


# --- 5. progress names the backend; xfails in --verbose; versions in --json ------------------


def test_json_is_pure_and_carries_versions(json_run):
    done, _ = json_run
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # nothing else on stdout
    versions = report["versions"]
    assert versions["portagather"] == portagather.__version__
    assert versions["python"] == platform.python_version()
    import numpy as np

    assert versions["backends"] == {"numpy": np.__version__}
    assert report["ok"] is True
    assert report["expected_failures"] == []


def test_json_shows_progress_on_stderr(json_run):
    done, _ = json_run
    assert "numpy" in done.stderr
    assert "checking numpy" in done.stderr


def _xfail_report():
    report = pytest.TestReport(
        nodeid="test_examples.py::test_data_dtype[torch-uint16-gather_d]",
        location=("test_examples.py", 1, "test_data_dtype"),
        keywords={},
        outcome="skipped",
        longrepr=("test_examples.py", 1, "xfail"),
        when="call",
        user_properties=[("op", "gather_d"), ("feature", "dtypes"), ("backend", "torch")],
    )
    report.wasxfail = "torch.gather is not implemented for uint16"
    return report


@pytest.mark.parametrize("verbose", [True, False])
def test_verbose_shows_expected_failures_with_reasons(verbose):
    from rich.console import Console

    from portagather._cli import Collector, print_details

    collector = Collector(["torch"])
    collector.pytest_runtest_logreport(_xfail_report())
    assert collector.expected_failures == [
        {
            "test": "test_examples.py::test_data_dtype[torch-uint16-gather_d]",
            "backend": "torch",
            "reason": "torch.gather is not implemented for uint16",
        }
    ]
    console = Console(record=True, width=200)
    print_details(console, collector, verbose=verbose)
    text = console.export_text()
    shown = "XFAIL test_examples.py::test_data_dtype[torch-uint16-gather_d]" in text
    assert shown is verbose
    assert ("torch.gather is not implemented for uint16" in text) is verbose


def test_one_expected_failure_is_singular():
    from portagather._cli import Collector

    collector = Collector(["torch"])
    collector.pytest_runtest_logreport(_xfail_report())
    assert collector.summary("torch") == "1 expected failure"


def test_output_into_a_closed_pipe_ends_quietly_with_the_checks_outcome():
    """``portagather check --json | head``: the reader has gone before the report is written;
    the command ends with the checks' own exit code (0: they passed), and no traceback."""
    command = [sys.executable, "-m", "portagather", "check", "--json", "--backend", "numpy"]
    env = _env(PYTEST_ADDOPTS=FEW_CHECKS)  # the command around the checks is what is tested
    done = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.stdout is not None
    done.stdout.close()  # before anything is written, whatever the pipe's buffer holds
    _, err = done.communicate(timeout=300)
    assert "Traceback" not in err.decode(), err.decode()[-2000:]
    assert "numpy: 4 passed" in err.decode()  # the checks ran, and passed
    assert done.returncode == 0


def test_progress_names_the_running_backend():
    from portagather._cli import Collector

    class Display:
        def __init__(self):
            self.events = []

        def start(self, backend, total):
            self.events.append(("start", backend, total))

        def advance(self, backend):
            self.events.append(("advance", backend))

        def finish(self, backend, _summary):
            self.events.append(("finish", backend))

    class Item:
        def __init__(self, nodeid, backend):
            self.nodeid = nodeid
            self.callspec = type("Callspec", (), {"params": {"backend_name": backend}})()

    display = Display()
    collector = Collector(["numpy", "jax"], display)
    items = [Item("a[jax]", "jax"), Item("a[numpy]", "numpy"), Item("b[jax]", "jax")]
    collector.pytest_collection_modifyitems(items)
    assert [i.nodeid for i in items] == ["a[numpy]", "a[jax]", "b[jax]"]  # one backend at a time
    collector.pytest_collection_finish(type("Session", (), {"items": items})())
    for item in items:
        collector.pytest_runtest_logstart(item.nodeid)
        collector.pytest_runtest_logfinish(item.nodeid)
    assert display.events == [
        ("start", "numpy", 1),
        ("advance", "numpy"),
        ("finish", "numpy"),
        ("start", "jax", 2),
        ("advance", "jax"),
        ("advance", "jax"),
        ("finish", "jax"),
    ]


# --- 6. no traces in the caller's directory --------------------------------------------------


def test_leaves_nothing_in_the_current_directory(json_run):
    done, cwd = json_run
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in cwd.iterdir()) == []


# --- 7. pytest --pyargs portagather.conformance --backend numpy -------------------------------


def _install_entry_points(site: Path) -> None:
    """The pytest11 entry points of pyproject.toml, as an installed distribution would have them."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pytest's own dependency on Python 3.10
        import tomli as tomllib
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    entry_points = project.get("entry-points", {}).get("pytest11", {})
    info = site / "portagather_entry_points_test-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: portagather-entry-points-test\n")
    lines = ["[pytest11]", *(f"{name} = {value}" for name, value in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_pytest_pyargs_takes_backend(tmp_path):
    site = tmp_path / "site"
    _install_entry_points(site)
    command = [sys.executable, "-m", "pytest", "--pyargs", "portagather.conformance"]
    command += ["--backend", "numpy", "-k", "test_two_namespaces", "-p", "no:cacheprovider"]
    env = _env(PYTHONPATH=os.pathsep.join([str(site), str(SRC)]))
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout
    assert "portagather conformance backends: numpy" in done.stdout


# --- 8. the matrix: one op name per function, the gathers, then the scatters ----------------


def _report_of(op, feature, backend="numpy", outcome="passed"):
    return pytest.TestReport(
        nodeid=f"test_x.py::test_x[{backend}-{op}-{feature}]",
        location=("test_x.py", 1, "test_x"),
        keywords={},
        outcome=outcome,
        longrepr=None,
        when="call",
        user_properties=[("op", op), ("feature", feature), ("backend", backend)],
    )


def test_every_public_operation_has_its_op_name():
    from portagather._cli import GATHERS, OPERATIONS, SCATTERS, SEGMENTS

    functions = {name for name in portagather.__all__ if callable(getattr(portagather, name))}
    assert set(GATHERS) | set(SCATTERS) | set(SEGMENTS) == functions
    assert OPERATIONS == ("all", *GATHERS, *SCATTERS, *SEGMENTS)
    assert SCATTERS == ("scatter_nd", "scatter_d", "put_along_axis")
    assert SEGMENTS[:6] == ("segment_sum", "segment_mean", "segment_max", "segment_min",
                            "segment_prod", "segment_csr")  # fmt: skip


def test_matrix_shows_scatter_cells_after_the_gathers():
    from rich.console import Console

    from portagather._cli import Collector, _report, print_matrix

    collector = Collector(["numpy", "torch"])
    cells = [
        ("take_along_axis", "dtypes"),
        ("put_along_axis", "policy:ignore"),
        ("scatter_nd", "duplicates"),
        ("gather", "errors"),
        ("scatter_d", "errors"),
        ("a_new_op", "errors"),
        ("all", "errors"),
        ("scatter_nd", "dtypes"),
        ("gather_nd", "errors"),
    ]
    for op, feature in cells:
        collector.pytest_runtest_logreport(_report_of(op, feature))
    collector.pytest_runtest_logreport(_report_of("scatter_nd", "duplicates", "torch"))
    collector.pytest_runtest_logreport(_report_of("scatter_nd", "duplicates", "torch"))

    report = _report(collector, ["numpy", "torch"], [], failed=False)
    assert [(r["op"], r["feature"]) for r in report["rows"]] == [
        ("all", "errors"),
        ("gather_nd", "errors"),
        ("gather", "errors"),
        ("take_along_axis", "dtypes"),
        ("scatter_nd", "dtypes"),
        ("scatter_nd", "duplicates"),
        ("scatter_d", "errors"),
        ("put_along_axis", "policy:ignore"),
        ("a_new_op", "errors"),
    ]
    duplicates = next(r for r in report["rows"] if r["feature"] == "duplicates")
    assert duplicates["cells"] == {"numpy": {"pass": 1}, "torch": {"pass": 2}}

    console = Console(record=True, width=200)
    print_matrix(console, collector, ["numpy", "torch"])
    lines = console.export_text().splitlines()
    rows = [line for line in lines if "│" in line and "operation" not in line]
    ops = [line.split("│")[1].strip() for line in rows]
    assert ops == [op for op, _ in (tuple(r.values())[:2] for r in report["rows"])]
    # A rule separates the gathers from the scatters, and only there.
    first_scatter = next(i for i, line in enumerate(lines) if "scatter_nd" in line)
    assert "─" in lines[first_scatter - 1] and "┼" in lines[first_scatter - 1]
    assert sum("┼" in line for line in lines) == 1  # the header's rule is drawn with ╇
