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


def _cell(counts) -> str:
    if not counts:
        return "-"
    passed = counts.get("pass", 0)
    total = sum(v for v in counts.values() if isinstance(v, int))
    others = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "pass" and v)
    mark = "✓" if passed == total else "✗"
    return f"{mark} {passed}/{total}" + (f" ({others})" if others else "")


def render_matrix(report) -> str:
    """A markdown table: one row per operation and feature, one column per backend."""
    backends = report.get("backends", [])
    lines = [
        "Each cell: checks passed out of checks run (✓ all passed, ✗ some did not, - none "
        "apply). Generated from `portagather check --json` when these pages were built.",
        "",
        "| operation | feature | " + " | ".join(backends) + " |",
        "| --- | --- | " + " | ".join("---" for _ in backends) + " |",
    ]
    for row in report.get("rows", []):
        cells = row.get("cells", {})
        lines.append(
            f"| `{row.get('op', '')}` | {row.get('feature', '')} | "
            + " | ".join(_cell(cells.get(b, {})) for b in backends)
            + " |"
        )
    missing = report.get("not_installed") or {}
    if missing:
        lines += ["", "Not installed when built: " + ", ".join(sorted(missing)) + "."]
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
    # Drop the first heading: the page has its own.
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    path.write_text("\n".join(lines) + "\n")
