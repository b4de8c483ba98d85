"""Build-time pages: shape diagrams, the backend support matrix and the performance page."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np


def all_pages(docs: Path) -> None:
    out = docs / "_generated"
    (out / "diagrams").mkdir(parents=True, exist_ok=True)
    diagrams(out / "diagrams")
    support_matrix(out / "support-matrix.md")
    performance(docs.parent / "benchmarks", out / "performance.md")
    message_passing(docs.parent / "examples" / "message_passing.py", out / "message_passing.txt")


def message_passing(example: Path, path: Path) -> None:
    """The output of ``examples/message_passing.py`` on every backend, run now: the page
    shows what this build's portagather prints. A failing run fails the build."""
    command = [sys.executable, str(example), "--nodes", "500", "--edges", "4000"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if done.returncode != 0:
        msg = f"examples/message_passing.py failed:\n{done.stderr}"
        raise RuntimeError(msg)
    path.write_text(f"$ python examples/message_passing.py --nodes 500 --edges 4000\n{done.stdout}")


# --- shape diagrams ---------------------------------------------------------------------------


def _grid(ax, values, colors, x0, y0, title, cell=1.0):
    """Draw a 2-D grid of labelled cells with its top-left corner at (x0, y0)."""
    from matplotlib.patches import Rectangle

    rows, cols = values.shape
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(
                Rectangle(
                    (x0 + c * cell, y0 - (r + 1) * cell),
                    cell,
                    cell,
                    facecolor=colors[r][c],
                    edgecolor="black",
                    linewidth=1,
                )
            )
            ax.text(
                x0 + (c + 0.5) * cell,
                y0 - (r + 0.5) * cell,
                str(values[r, c]),
                ha="center",
                va="center",
                fontsize=9,
            )
    ax.text(x0, y0 + 0.3, title, ha="left", va="bottom", fontsize=9, family="monospace")


def _palette(n):
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


WHITE = (1, 1, 1, 1)


def _draw(path, panels, caption, width=12, height=3.6):
    """panels: list of (title, values 3-d or 2-d, colors) drawn side by side; 3-d arrays are
    drawn as a stack of 2-d blocks, one per batch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height))
    x = 0.0
    top = 0.0
    bottom = 0.0
    for title, values, colors in panels:
        values = np.asarray(values)
        colors = np.asarray(colors, dtype=object)
        if values.ndim == 1:
            values, colors = values[None, :], colors[None, :]
        if values.ndim == 2:
            values, colors = values[None], colors[None]
        y = top
        panel_width = values.shape[2]
        for b in range(values.shape[0]):
            name = f"{title}[{b}]" if values.shape[0] > 1 else title
            _grid(ax, values[b], colors[b].tolist(), x, y, name)
            y -= values.shape[1] + 1.2
        bottom = min(bottom, y)
        x += panel_width + 2.5
    ax.set_xlim(-0.5, x - 1.5)
    ax.set_ylim(bottom + 0.8, top + 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.suptitle(caption, fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def diagrams(out: Path) -> None:
    import portagather as pg

    # gather_nd, batch_dims=1: params (2, 3, 2), indices (2, 2, 1) -> out (2, 2, 2).
    params = np.arange(12).reshape(2, 3, 2)
    row_colors = _palette(6)
    p_colors = [[[row_colors[b * 3 + r]] * 2 for r in range(3)] for b in range(2)]
    indices = np.array([[[2], [0]], [[1], [1]]])
    out_values = pg.gather_nd(params, indices, batch_dims=1)
    o_colors = [
        [[row_colors[b * 3 + int(indices[b, i, 0])]] * 2 for i in range(2)] for b in range(2)
    ]
    i_colors = [[[row_colors[b * 3 + int(indices[b, i, 0])]] for i in range(2)] for b in range(2)]
    _draw(
        out / "gather_nd.png",
        [
            ("params", params, p_colors),
            ("indices", indices, i_colors),
            ("out", out_values, o_colors),
        ],
        "gather_nd(params, indices, batch_dims=1): out[b, i] = params[b, indices[b, i, 0]]",
    )

    # gather, batch_dims=1, axis=1: params (2, 4), indices (2, 3) -> out (2, 3).
    params = np.arange(10, 18).reshape(2, 4)
    colors = _palette(8)
    p_colors = [[colors[b * 4 + c] for c in range(4)] for b in range(2)]
    indices = np.array([[3, 0, 3], [1, 2, 0]])
    out_values = pg.gather(params, indices, axis=1, batch_dims=1)
    o_colors = [[colors[b * 4 + int(indices[b, j])] for j in range(3)] for b in range(2)]
    _draw(
        out / "gather.png",
        [
            ("params", params, p_colors),
            ("indices", indices, o_colors),
            ("out", out_values, o_colors),
        ],
        "gather(params, indices, axis=1, batch_dims=1): out[b, j] = params[b, indices[b, j]]",
        height=2.6,
    )

    # gather_d, dim=1: x (2, 3), index (2, 2) -> out (2, 2).
    x = np.array([[1, 2, 3], [4, 5, 6]])
    colors = _palette(6)
    x_colors = [[colors[r * 3 + c] for c in range(3)] for r in range(2)]
    index = np.array([[2, 0], [-1, 1]])
    out_values = pg.gather_d(x, 1, index)
    o_colors = [[colors[r * 3 + int(index[r, j]) % 3] for j in range(2)] for r in range(2)]
    _draw(
        out / "gather_d.png",
        [("x", x, x_colors), ("index", index, o_colors), ("out", out_values, o_colors)],
        "gather_d(x, 1, index): out[i, j] = x[i, index[i, j]]  (-1 counts from the end)",
        height=2.6,
    )

    # take_along_axis, axis=1, broadcasting: x (2, 3), indices (1, 2) -> out (2, 2).
    index = np.array([[2, 0]])
    out_values = pg.take_along_axis(x, index, axis=1)
    i_colors = [[WHITE, WHITE]]
    o_colors = [[colors[r * 3 + int(index[0, j])] for j in range(2)] for r in range(2)]
    _draw(
        out / "take_along_axis.png",
        [("x", x, x_colors), ("indices", index, i_colors), ("out", out_values, o_colors)],
        "take_along_axis(x, indices, axis=1): indices (1, 2) broadcasts against x (2, 3)",
        height=2.6,
    )

    _scatter_diagrams(out)
    _segment_diagram(out)
    _toolkit_diagrams(out)


def _segment_diagram(out: Path) -> None:
    """segment_sum: each row of the data, its id and the segment it is summed into share the
    segment's colour; an empty segment is white."""
    import portagather as pg

    data = np.array([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]])
    ids = np.array([0, 2, 0, 3, 2])
    colors = _palette(4)
    _draw(
        out / "segment_sum.png",
        [
            ("data", data, [[colors[int(i)]] * 2 for i in ids]),
            ("segment_ids", ids[:, None], [[colors[int(i)]] for i in ids]),
            (
                "out",
                pg.segment_sum(data, ids, num_segments=4),
                [[colors[s] if s in set(ids.tolist()) else WHITE] * 2 for s in range(4)],
            ),
        ],
        "segment_sum(data, segment_ids, num_segments=4): out[s] = sum of the rows with id s; "
        "segment 1 is empty (0)",
        height=3.4,
    )


def _light(color):
    """`color` blended halfway to white: a row of the segment that is not the one picked."""
    return tuple(0.5 + 0.5 * c for c in color[:3]) + (1,)


def _toolkit_diagrams(out: Path) -> None:
    """The segment toolkit, on five rows of two features in the segments of
    ``segment_ids = [0, 2, 0, 3, 2]`` (segment 1 empty), as the ``segment_sum`` diagram: a
    row, its id and what is computed from its segment share the segment's colour; an empty
    segment is white."""
    import portagather as pg

    ids = np.array([0, 2, 0, 3, 2])
    colors = _palette(4)
    id_panel = ("segment_ids", ids[:, None], [[colors[int(i)]] for i in ids])
    by_row = [[colors[int(i)]] * 2 for i in ids]
    by_segment = [[colors[s] if s in set(ids.tolist()) else WHITE] * 2 for s in range(4)]

    data = np.array([[1.0, 0.0], [2.0, 3.0], [0.0, 1.0], [1.0, 1.0], [4.0, 2.0]])
    _draw(
        out / "segment_softmax.png",
        [
            ("data", data, by_row),
            id_panel,
            ("softmax", np.round(pg.segment_softmax(data, ids, 4), 2), by_row),
            ("log_softmax", np.round(pg.segment_log_softmax(data, ids, 4), 2), by_row),
        ],
        "segment_softmax(data, segment_ids, 4): out[i] = exp(data[i]) / (the sum of exp over "
        "the rows of i's segment);\neach column of each segment sums to 1 (rounded here)",
        height=3.6,
    )
    _draw(
        out / "segment_logsumexp.png",
        [
            ("data", data, by_row),
            id_panel,
            ("out", np.round(pg.segment_logsumexp(data, ids, 4), 2), by_segment),
        ],
        "segment_logsumexp(data, segment_ids, 4): out[s] = log(sum of exp(data[i]) with id s); "
        "segment 1 is empty (-inf)",
        height=3.4,
    )

    # Ties: segment 0's first column (3, 3) and segment 2's second (5, 5) go to the first row.
    data = np.array([[3, 1], [2, 5], [3, 4], [7, 8], [0, 5]])
    positions = pg.segment_argmax(data, ids, 4)
    picked = {(int(positions[s, c]), c) for s in range(4) for c in range(2) if s in set(ids)}
    _draw(
        out / "segment_argmax.png",
        [
            (
                "data",
                data,
                [
                    [
                        colors[int(i)] if (r, c) in picked else _light(colors[int(i)])
                        for c in range(2)
                    ]
                    for r, i in enumerate(ids)
                ],
            ),
            id_panel,
            ("out", positions, by_segment),
        ],
        "segment_argmax(data, segment_ids, 4): out[s] = the row of the largest value with id s "
        "(strong colour), ties to the first;\nsegment 1 is empty: 5, data.shape[0]",
        height=3.6,
    )

    data = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 6.0], [7.0, 8.0], [6.0, 1.0]])
    _draw(
        out / "segment_var.png",
        [
            ("data", data, by_row),
            id_panel,
            ("var", pg.segment_var(data, ids, 4), by_segment),
            ("std", pg.segment_std(data, ids, 4), by_segment),
        ],
        "segment_var(data, segment_ids, 4): out[s] = mean of (data[i] - mean of segment s)**2 "
        "over the rows with id s; segment 1 is empty (nan)",
        height=3.4,
    )

    weights = np.array([0.5, 1.0, 2.0, 1.5, 3.0])
    _draw(
        out / "segment_count.png",
        [
            ("segment_ids = x", ids[:, None], [[colors[int(i)]] for i in ids]),
            ("weights", weights[:, None], [[colors[int(i)]] for i in ids]),
            (
                "segment_count",
                pg.segment_count(ids, 4)[:, None],
                [[colors[s] if s in set(ids.tolist()) else WHITE] for s in range(4)],
            ),
            (
                "bincount(x, weights)",
                pg.bincount(ids, weights)[:, None],
                [[colors[s] if s in set(ids.tolist()) else WHITE] for s in range(4)],
            ),
        ],
        "segment_count(segment_ids, 4) = bincount(x): the rows with id s; "
        "bincount(x, weights): the sum of their weights",
        width=9,
        height=3.4,
    )


def _scatter_diagrams(out: Path) -> None:
    """The scatters: the data is white where nothing is written; an update, its index and the
    element it lands on share a colour (the colour of the target element)."""
    import portagather as pg

    # scatter_nd: params (4, 2), indices (3, 1) with row 3 twice, updates (3, 2).
    params = np.zeros((4, 2), dtype=int)
    indices = np.array([[3], [0], [3]])
    updates = np.array([[1, 2], [3, 4], [5, 6]])
    colors = _palette(4)
    written = {int(i) for i in indices[:, 0]}
    row = [colors[r] if r in written else WHITE for r in range(4)]
    _draw(
        out / "scatter_nd.png",
        [
            ("params", params, [[WHITE] * 2] * 4),
            ("indices", indices, [[colors[int(i)]] for i in indices[:, 0]]),
            ("updates", updates, [[colors[int(i)]] * 2 for i in indices[:, 0]]),
            ("out", pg.scatter_nd(params, indices, updates), [[c] * 2 for c in row]),
            (
                'reduce="add"',
                pg.scatter_nd(params, indices, updates, reduce="add"),
                [[c] * 2 for c in row],
            ),
        ],
        "scatter_nd(params, indices, updates): out[indices[i]] = updates[i]; "
        'row 3 is written twice: the last update wins, reduce="add" sums both',
        height=3.2,
    )

    # scatter_d, dim=1: x (2, 3), index (2, 2) with -1, src (2, 2).
    x = np.zeros((2, 3), dtype=int)
    index = np.array([[2, 0], [-1, 1]])
    src = np.array([[1, 2], [3, 4]])
    colors = _palette(6)
    target = [[colors[r * 3 + int(index[r, j]) % 3] for j in range(2)] for r in range(2)]
    hit = {(r, int(index[r, j]) % 3) for r in range(2) for j in range(2)}
    o_colors = [[colors[r * 3 + c] if (r, c) in hit else WHITE for c in range(3)] for r in range(2)]
    _draw(
        out / "scatter_d.png",
        [
            ("x", x, [[WHITE] * 3] * 2),
            ("index", index, target),
            ("src", src, target),
            ("out", pg.scatter_d(x, 1, index, src), o_colors),
        ],
        "scatter_d(x, 1, index, src): out[i, index[i, j]] = src[i, j]  (-1 counts from the end)",
        height=2.6,
    )

    # put_along_axis, axis=1, broadcasting: x (2, 3), indices (1, 2), values (2, 2).
    indices = np.array([[2, 0]])
    values = np.array([[1, 2], [3, 4]])
    target = [[colors[r * 3 + int(indices[0, j])] for j in range(2)] for r in range(2)]
    hit = {(r, int(indices[0, j])) for r in range(2) for j in range(2)}
    o_colors = [[colors[r * 3 + c] if (r, c) in hit else WHITE for c in range(3)] for r in range(2)]
    _draw(
        out / "put_along_axis.png",
        [
            ("x", x, [[WHITE] * 3] * 2),
            ("indices", indices, [[WHITE, WHITE]]),
            ("values", values, target),
            ("out", pg.put_along_axis(x, indices, values, axis=1), o_colors),
        ],
        "put_along_axis(x, indices, values, axis=1): indices (1, 2) broadcasts over both rows",
        height=2.6,
    )


# --- support matrix -------------------------------------------------------------------------


def support_matrix(path: Path) -> None:
    """The matrix from ``portagather check --json``: from the file named by
    ``PORTAGATHER_CHECK_JSON``, else from a cached run beside `path`, else by running it."""
    report = None
    cache = path.with_name("check.json")
    given = os.environ.get("PORTAGATHER_CHECK_JSON")
    source = Path(given) if given else cache
    if source.exists():
        report = json.loads(source.read_text())
    else:
        command = [sys.executable, "-m", "portagather", "check", "--json"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
            report = json.loads(done.stdout) if done.stdout.strip() else None
        except (OSError, ValueError, subprocess.TimeoutExpired):
            report = None
        if report is not None:
            cache.write_text(json.dumps(report))
    if report is None:
        path.write_text(
            "```{warning}\nPlaceholder: `portagather check --json` was not available when "
            "these pages were built, so the support matrix could not be generated. Run "
            "`portagather check` to see it for your installation.\n```\n"
        )
        return
    path.write_text(render_matrix(report))


# Backend name (as `portagather check` spells it) -> the distribution that provides it.
DISTRIBUTIONS = {
    "numpy": "numpy",
    "array_api_strict": "array-api-strict",
    "jax": "jax",
    "torch": "torch",
    "dask": "dask",
    "ndonnx": "ndonnx",
}
# Longest match first.
OPERATIONS = (
    "gather_nd",
    "gather_d",
    "take_along_axis",
    "gather",
    "scatter_nd",
    "scatter_d",
    "put_along_axis",
    "segment_sum",
    "segment_mean",
    "segment_max",
    "segment_min",
    "segment_prod",
    "segment_csr",
)
# Text symbols, not emoji (✅, ❌): every common font has these, while emoji need an emoji font
# and show as empty boxes without one. Coloured by _static/marks.css.
PASS = '<span class="mark-pass">✓</span>'
XFAIL = '<span class="mark-xfail">⚠</span>'
FAIL = '<span class="mark-fail">✗</span>'


def _distribution(backend: str) -> str:
    return DISTRIBUTIONS.get(backend, backend.split(":")[0].split(".")[0])


def _versions(report) -> tuple[dict[str, str], str]:
    """``{backend: version}`` and where the versions come from: the report's ``versions`` when
    it has them (keyed by backend or by distribution; a value may itself be a mapping of
    distribution to version), else the distributions installed where these pages are built."""
    given = report.get("versions")
    found = {}
    if isinstance(given, dict) and given:
        for backend in report.get("backends", []):
            dist = _distribution(backend)
            value = next(
                (given[k] for k in (backend, dist, dist.replace("-", "_")) if k in given), None
            )
            if isinstance(value, dict):
                value = value.get(dist) or ", ".join(f"{k} {v}" for k, v in value.items())
            if value:
                found[backend] = str(value)
        others = [
            f"{k} {v}"
            for k, v in given.items()
            if isinstance(v, str)
            and k not in report.get("backends", [])
            and k not in {_distribution(b) for b in found}
        ]
        where = "as recorded by `portagather check`"
        return found, where + (f" (also recorded: {', '.join(others)})" if others else "")
    from importlib.metadata import PackageNotFoundError, version

    for backend in report.get("backends", []):
        try:
            found[backend] = version(_distribution(backend))
        except PackageNotFoundError:
            pass
    return found, (
        "installed where these pages were built (this `portagather check` output does not "
        "record versions)"
    )


def _cell_templates(suite: Path) -> dict[str, str]:
    """Test function name -> its ``@pytest.mark.cell(feature)`` template, read from the source
    of the conformance suite (without importing or collecting it)."""
    import ast

    templates = {}
    for module in sorted(suite.glob("test_*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and isinstance(decorator.func, ast.Attribute)
                    and decorator.func.attr == "cell"
                    and decorator.args
                    and isinstance(decorator.args[0], ast.Constant)
                ):
                    templates[node.name] = decorator.args[0].value
    return templates


def _known_failures(suite: Path) -> list[tuple[str, str, str]]:
    """``(backend, test name pattern, reason)`` of ``known_failures.txt``."""
    path = suite / "known_failures.txt"
    entries = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#") and line.count("|") >= 2:
                backend, pattern, reason = (part.strip() for part in line.split("|", 2))
                entries.append((backend, pattern, reason))
    return entries


def _fits(pattern: str, template: str | None, op: str, feature: str) -> bool:
    """Whether a test name pattern (``*`` a wildcard) can be a test of the matrix cell of
    `op` and `feature`, given its test function's cell template."""
    import re

    _, _, params = pattern.partition("[")
    if template is None:
        return False
    tokens = set(re.split(r"[-\[\]]", params))
    wild = "*" in pattern
    ops = [o for o in OPERATIONS if o in tokens]
    if ops and ops[0] != op:
        return False
    if not ops and not wild and op != "all" and op not in params:
        return False
    if "{" not in template:
        return template == feature
    parts = re.split(r"\{[^}]*\}", template)
    regex = "(.+?)".join(map(re.escape, parts))
    match = re.fullmatch(regex, feature)
    return match is not None and (wild or all(g in tokens for g in match.groups()))


def expected_failures(report, suite: Path) -> dict[tuple[str, str, str], list[str]]:
    """``{(op, feature, backend): [reason, ...]}`` for the cells with expected failures.

    From the report's own per-case records when it has them (``expected_failures`` or
    ``xfails``: entries with ``backend``, ``reason`` and ``op``/``feature`` or ``test``);
    else from ``known_failures.txt`` of the suite, matched to the cells by test name."""
    cells = [
        (row.get("op", ""), row.get("feature", ""), backend)
        for row in report.get("rows", [])
        for backend, counts in row.get("cells", {}).items()
        if counts.get("xfail")
    ]
    reasons: dict[tuple[str, str, str], list[str]] = {cell: [] for cell in cells}
    templates = _cell_templates(suite)
    records = report.get("expected_failures") or report.get("xfails")
    if records is None:
        records = [{"backend": b, "test": p, "reason": r} for b, p, r in _known_failures(suite)]
    for record in records:
        if not isinstance(record, dict):
            continue
        reason = str(record.get("reason") or "").strip()
        for op, feature, backend in cells:
            if record.get("backend") not in (None, backend):
                continue
            if "op" in record or "feature" in record:
                hit = record.get("op") == op and record.get("feature") == feature
            else:
                test = str(record.get("test", "")).rpartition("::")[2]
                hit = _fits(test, templates.get(test.partition("[")[0]), op, feature)
            if hit and reason and reason not in reasons[(op, feature, backend)]:
                reasons[(op, feature, backend)].append(reason)
    return reasons


def _cell(counts, notes: list[str]) -> str:
    if not counts or not any(v for v in counts.values() if isinstance(v, int)):
        return "-"
    parts = []
    if counts.get("fail"):
        parts.append(f"{FAIL} {counts['fail']}")
    if counts.get("pass"):
        parts.append(f"{PASS} {counts['pass']}")
    if counts.get("xfail"):
        refs = "".join(f"[^{n}]" for n in notes)
        parts.append(f"{XFAIL} {counts['xfail']}{refs}")
    if counts.get("skip"):
        parts.append(f"skipped {counts['skip']}")
    others = [
        f"{k} {v}" for k, v in counts.items() if k not in ("pass", "fail", "xfail", "skip") and v
    ]
    return " ".join(parts + others)


def render_matrix(report, suite: Path | None = None) -> str:
    """A markdown table: one row per operation and feature, one column per backend; expected
    failures are marked as such, with their reasons and the backend's version as notes."""
    if suite is None:
        import portagather

        suite = Path(portagather.__file__).parent / "conformance"
    backends = report.get("backends", [])
    rows = report.get("rows", [])
    versions, versions_from = _versions(report)
    reasons = expected_failures(report, suite)

    totals: dict[str, int] = {}
    for row in rows:
        for counts in row.get("cells", {}).values():
            for k, v in counts.items():
                if isinstance(v, int):
                    totals[k] = totals.get(k, 0) + v
    failed = totals.get("fail", 0) + len(report.get("collection_errors") or [])
    ok = report.get("ok", not failed)
    xfails = totals.get("xfail", 0)
    if ok and not failed:
        status = f"{PASS} **All conformance checks passed** ({totals.get('pass', 0)} checks"
        status += f"; {xfails} expected failures, below)." if xfails else ")."
    else:
        n = totals.get("fail", 0)
        status = f"{FAIL} **{n} {'check' if n == 1 else 'checks'} failed**"
        if report.get("collection_errors"):
            status += f" and {len(report['collection_errors'])} tests could not be collected"
        status += "."

    # One note per (backend, reason), numbered in the order the table shows them.
    note_of: dict[tuple[str, str], int] = {}
    note_cells: dict[int, list[str]] = {}
    unexplained = "the reason is not recorded in this `portagather check` output"
    for row in rows:
        for backend in backends:
            key = (row.get("op", ""), row.get("feature", ""), backend)
            if key not in reasons:
                continue
            for reason in reasons[key] or [unexplained]:
                n = note_of.setdefault((backend, reason), len(note_of) + 1)
                note_cells.setdefault(n, []).append(
                    f"`{key[0]}` {key[1]}" if key[0] != "all" else key[1]
                )

    def header(backend):
        return f"{backend} {versions[backend]}" if backend in versions else backend

    lines = [
        status,
        "",
        f"Each cell counts the checks of one operation, feature and backend: {PASS} passed, "
        f"{XFAIL} expected failure (a known limit of that backend, reason in the note), "
        f"{FAIL} failed; - none apply. Generated from `portagather check --json` when these "
        "pages were built.",
        "",
        "| operation | feature | " + " | ".join(header(b) for b in backends) + " |",
        "| --- | --- | " + " | ".join("---" for _ in backends) + " |",
    ]
    for row in rows:
        cells = row.get("cells", {})
        op, feature = row.get("op", ""), row.get("feature", "")
        line = f"| `{op}` | {feature} | "
        line += " | ".join(
            _cell(
                cells.get(b, {}),
                [
                    str(note_of[(b, r)])
                    for r in reasons.get((op, feature, b), []) or [unexplained]
                    if (b, r) in note_of
                ],
            )
            for b in backends
        )
        lines.append(line + " |")
    if versions:
        lines += [
            "",
            "Library versions, "
            + versions_from
            + ": "
            + ", ".join(f"{b} {versions[b]}" for b in backends if b in versions)
            + ".",
        ]
    missing = report.get("not_installed") or {}
    if missing:
        lines += ["", "Not installed when built: " + ", ".join(sorted(missing)) + "."]
    for (backend, reason), n in note_of.items():
        where = "; ".join(dict.fromkeys(note_cells[n]))
        version = f" {versions[backend]}" if backend in versions else ""
        lines += ["", f"[^{n}]: Expected failure on {backend}{version} ({where}): {reason}."]
    for failure in report.get("failures") or []:
        if failure is report["failures"][0]:
            lines += ["", "Failed checks:", ""]
        lines.append(f"- {failure.get('backend', '')}: `{failure.get('test', '')}`")
    return "\n".join(lines) + "\n"


# --- performance ----------------------------------------------------------------------------


def performance(benchmarks: Path, path: Path) -> None:
    results = benchmarks / "RESULTS.md"
    if not results.exists():
        path.write_text(
            "```{warning}\nPlaceholder: `benchmarks/RESULTS.md` was not in the checkout when "
            "these pages were built. Run `python benchmarks/run.py` to produce it.\n```\n"
        )
        return
    text = results.read_text()
    # Images next to RESULTS.md: copy them beside the generated page so links still work.
    for image in list(benchmarks.glob("*.png")) + list(benchmarks.glob("*.svg")):
        shutil.copy(image, path.parent / image.name)
    # The benchmark tables mark targets met and missed with emoji; show the site's text marks.
    text = text.replace("✅", PASS).replace("❌", FAIL)
    # Drop the first heading: the page has its own.
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    path.write_text("\n".join(lines) + "\n")
