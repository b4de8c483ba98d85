"""portagather against the native idioms and TensorFlow, measured side by side.

    python benchmarks/run.py            # full run (a few minutes), writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick    # smoke run on small data; writes nothing
    python benchmarks/run.py --backends numpy torch --workloads W1 W4

Every candidate of one workload on one backend is timed in the same process, interleaved
(one call of each per round, in a rotating order), after two warm-up calls, and the median
over the rounds is reported. JAX runs with ``jax_enable_x64`` so that the indices stay int64.

The report is ``RESULTS.template.md`` with its named sections filled by the ``section_*``
functions, each of its headings followed by the commit measured; the sections the other
scripts write (:data:`CARRIED`; ``benchmarks/README.md`` says which) are carried over from
the old report. Timing, threads and the sections: ``harness.py``.
"""

from __future__ import annotations

import gc
import json
import math
import re
import statistics
import string
import time
import tracemalloc
from pathlib import Path

import numpy as np
import workloads
from harness import (
    arguments,
    code_commit,
    fmt_t,
    machine,
    mark,
    marked,
    measure,
    ratio_cell,
    section_pattern,
    setup,
    table,
)

HERE = Path(__file__).resolve().parent
BACKENDS = ("numpy", "jax", "torch", "dask", "tensorflow")
TARGETED = ("numpy", "jax", "torch")
MAIN = {
    "W1": workloads.w1,
    "W2": workloads.w2,
    "W3": workloads.w3,
    "W4": workloads.w4,
    "W5": workloads.w5,
    "W6": workloads.w6,
}
SCALES = (1 / 16, 1 / 4, 1, 4)
SCALING = {"W1": workloads.w1, "W4": workloads.w4}


# ------------------------------------------------------------------------------ timing


def run_block(backend, w, budget, check=True):
    cands = workloads.candidates(backend, w)
    for c in cands:
        # A Dask call costs milliseconds of graph building; one call per sample is enough.
        c.inner = 1 if backend == "dask" else w.inner
    expected = None
    if check:
        expected = workloads.pg_call(np, w, "unchecked", w.params, w.indices)
    min_rounds = 3 if backend == "dask" else 5
    med, rounds = measure(cands, budget, min_rounds=min_rounds, expected=expected)
    return [
        {"name": c.name, "kind": c.kind, "policy": c.policy, "seconds": med[c.name]} for c in cands
    ], rounds


def run_block_repeated(backend, w, budget, repeat):
    """:func:`run_block` `repeat` times, each with candidates made afresh (new compilations,
    new buffers): each candidate's time is the median over the repeats, and the block keeps
    the range of each ratio: on a shared machine one block's ratios can move by more than
    their distance from 1 (the ranges in brackets of RESULTS.md's "Summary: portagather /
    fastest native of the same safety")."""
    repeats = [run_block(backend, w, budget, check=k == 0) for k in range(repeat)]
    rows = [
        {**row, "seconds": statistics.median(rs[0][n]["seconds"] for rs in repeats)}
        for n, row in enumerate(repeats[0][0])
    ]
    per_repeat = [ratios(rows_k) for rows_k, _ in repeats]
    spread = {}
    for pol in ("error", "unchecked"):
        found = [r[pol][0] for r in per_repeat if pol in r]
        if found:
            spread[pol] = (min(found), max(found))
    blk = {"rows": rows, "rounds": sum(r[1] for r in repeats), "ratios": ratios(rows)}
    blk["spread"] = spread if repeat > 1 else {}
    return blk


def ratios(rows):
    """portagather / fastest native of the same safety, for both policies."""
    pg = {r["policy"]: r["seconds"] for r in rows if r["kind"] == workloads.PG}
    checked = [r for r in rows if r["kind"] == workloads.CHECKED]
    natives = [r for r in rows if r["kind"] in (workloads.CHECKED, workloads.UNCHECKED)]
    out = {}
    if checked and "error" in pg:
        best = min(checked, key=lambda r: r["seconds"])
        out["error"] = (pg["error"] / best["seconds"], best["name"], best["seconds"])
    if natives and "unchecked" in pg:
        best = min(natives, key=lambda r: r["seconds"])
        out["unchecked"] = (pg["unchecked"] / best["seconds"], best["name"], best["seconds"])
    return out


# ---------------------------------------------------------------------------- memory


def peak_memory(w):
    """Peak bytes traced during one call, including the result, per candidate (NumPy)."""
    out = {}
    ref = w.bytes_out_plus_indices()
    for c in workloads.candidates("numpy", w):
        c.fn()
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = c.fn()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del result
        out[c.name] = (peak - base) / ref
    return out


VIEW_SIDE = 4000
VIEW_PEAK_LIMIT = 8e6


def view_cases():
    """Views of one large float64 array that ``take`` would copy whole (its pages of zeros
    are never touched, so they cost no memory)."""
    big = np.zeros((VIEW_SIDE, VIEW_SIDE))
    return {
        "transposed: big.T": big.T,
        "strided: big[::2, ::2]": big[::2, ::2],
        "broadcast: broadcast_to(big[0], big.shape)": np.broadcast_to(big[0], big.shape),
    }


def measure_views(budget):
    """Peak memory and time of gathering two rows of each view, against native indexing."""
    import portagather as pg

    rows = np.array([3, 7])
    out = {}
    for name, view in view_cases().items():
        cands = [
            workloads.Candidate("portagather", workloads.PG, lambda v=view: pg.gather(v, rows)),
            workloads.Candidate("native", workloads.CHECKED, lambda v=view: v[rows]),
        ]
        for c in cands:
            c.inner = 200
        med, _ = measure(cands, budget, expected=view[rows])
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = pg.gather(view, rows)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        del result
        out[name] = {"peak": peak, "portagather": med["portagather"], "native": med["native"]}
    return out


def run_jax_checked(w, budget):
    """portagather "error" under jit + checkify against JAX's fill-mode idioms."""
    cands = workloads.jax_checked_candidates(w)
    expected = workloads.pg_call(np, w, "unchecked", w.params, w.indices)
    med, _ = measure(cands, budget, expected=expected)
    return [{"name": c.name, "kind": c.kind, "seconds": med[c.name]} for c in cands]


def jax_compile_times(w, repeats=3):
    out = {}
    for name, compile_fn in workloads.jax_compile_targets(w):
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            compile_fn()
            ts.append(time.perf_counter() - t0)
        out[name] = statistics.median(ts)
    return out


# ------------------------------------------------------------------------------ report


TEMPLATE = HERE / "RESULTS.template.md"
#: Sections of the report written by other scripts (``<!-- name -->`` ... ``<!-- /name -->``),
#: each the template field of its name with "_" for "-".
CARRIED = (
    "scale-out",
    "scatter",
    "last-wins",
    "jax-eager",
    "segments",
    "segment-toolkit",
    "segments-scale-out",
    "segments-dask-idioms",
    "gpu",
    "per-call",
    "per-call-torch",
    "scatter-profile",
    "frontends-per-call",
    "deterministic",
)


def build_report(res, quick, previous=""):
    """The report: ``RESULTS.template.md`` with each named section filled by its function
    below (an empty string where the run measured nothing for it). The sections other
    scripts write (:data:`CARRIED`) are carried over from `previous` (the old report)."""
    m = res["machine"]
    th = res.get("threads", 1)
    carried = {}
    for name in CARRIED:
        found = section_pattern(name).search(previous)
        carried[name.replace("-", "_")] = found.group(0) if found else ""
    sections = {
        "quick": (
            "**Smoke run (`--quick`): small data, numbers are not meaningful.**\n\n"
            if quick
            else ""
        ),
        "date": time.strftime("%Y-%m-%d %H:%M", time.localtime(res["started"])),
        "command": "python benchmarks/run.py"
        + (f" --repeat {res['repeat']}" if res.get("repeat", 1) > 1 else "")
        + (f" --threads {th}" if th != 1 else ""),
        "commit": res.get("commit", "unknown"),
        "elapsed": f"{res['elapsed']:.0f}",
        "machine": section_machine(m),
        "threads": section_threads(th),
        "w6_inner": str(workloads.w6().inner),
        "repeat": _repeat_text(res.get("repeat", 1)),
        "summary": section_summary(res),
        "tensorflow": section_tensorflow(res),
        "w6": section_w6(res),
        "views": section_views(res),
        "jax_checked": section_jax_checked(res),
        "memory": section_memory(res),
        "opcount": section_opcount(res),
        "compile": section_compile(res),
        "scaling": section_scaling(res),
        "timings": section_timings(res),
        "notes": section_notes(res),
        **carried,
    }
    own = {k: v for k, v in sections.items() if k not in carried}
    text = string.Template(TEMPLATE.read_text()).safe_substitute(own)
    # Each section of this run names the commit it measured (Engine choices names its own).
    measured = f"\n\nMeasured on `{res.get('commit', 'unknown')}`."
    text = re.sub(r"^## (?!Engine choices).*$", lambda m: m.group(0) + measured, text, flags=re.M)
    for name, block in carried.items():
        text = text.replace("${" + name + "}", block)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _repeat_text(repeat):
    if repeat <= 1:
        return ""
    return (
        f" Each block runs {repeat} times, with its candidates made afresh each time; a time"
        " is the median over the repeats, and the summary shows each ratio's range over them"
        " in brackets."
    )


def section_machine(m):
    lines = [
        f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory']} memory, no GPU",
        f"- Python {m['python']} on {m['platform']}",
        "- " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()),
    ]
    if m["env"]:
        lines.append("- environment: " + ", ".join(f"{k}={v}" for k, v in m["env"].items()))
    return "\n".join(lines)


def section_threads(th):
    if th <= 0:
        return "- Threads: every backend uses its default thread pools."
    return (
        f"- Threads: every backend runs with {th} intra-op thread(s) (`--threads`; "
        "PyTorch `set_num_threads`, TensorFlow `set_intra_op_parallelism_threads`, "
        "XLA `intra_op_parallelism_threads`, Dask `num_workers`); NumPy's gathers "
        "are serial. This compares the libraries per core and keeps the numbers "
        "stable on a small shared machine, where spinning thread pools of several "
        "libraries in one process fight over the cores."
    )


def _ratio_backends(res):
    return [b for b in BACKENDS if b != "tensorflow" and b in res["blocks"]]


def section_summary(res):
    backends = _ratio_backends(res)
    header = ["workload"] + [f"{b} {pol}" for b in backends for pol in ("error", "unchecked")]
    rows = []
    for key in res["workloads"]:
        cells = [key]
        for b in backends:
            blk = res["blocks"][b].get(key)
            for pol in ("error", "unchecked"):
                if not blk or pol not in blk["ratios"]:
                    cells.append("-")
                    continue
                low, high = blk.get("spread", {}).get(pol) or (0, 0)
                r = {"ratio": blk["ratios"][pol][0], "low": low, "high": high}
                targeted = b in TARGETED and key != "W6"
                cells.append(ratio_cell(r, 1.0 if targeted else None, 2 if high else 1))
        rows.append(cells)
    return table(header, rows)


def section_tensorflow(res):
    tf = res["blocks"].get("tensorflow", {})
    npb = res["blocks"].get("numpy", {})
    if not (tf and npb):
        return ""
    rows = []
    for key in res["workloads"]:
        if key not in tf or key not in npb:
            continue
        pg_t = _time(npb[key]["rows"], "portagather[error]")
        for row in tf[key]["rows"]:
            r = pg_t / row["seconds"]
            shown = f"{r:.2f}"
            if key in ("W1", "W2", "W3") and row["name"] == "tf.gather_nd":
                shown = marked(r, 0.8)
            if key == "W6":
                shown = f"{marked(r, 0.2)} (target ≤ 0.20)"
            rows.append([key, f"`{row['name']}`", fmt_t(row["seconds"]), fmt_t(pg_t), shown])
    return (
        "## Against TensorFlow\n\n"
        'portagather on NumPy (default policy `"error"`) divided by TensorFlow\'s eager op on '
        "the same data. Target for W1-W3: ≤ 0.80 of `tf.gather_nd`.\n\n"
        + table(["workload", "TF op", "TF time", "portagather[error] NumPy", "ratio"], rows)
    )


#: W6's targets: portagather / the native fancy-index call (issue #12).
W6_LIMITS = {"numpy": 5, "torch": 3}


def section_w6(res):
    if "W6" not in res["workloads"]:
        return ""
    rows = []
    for b in _ratio_backends(res):
        blk = res["blocks"][b].get("W6")
        if not blk:
            continue
        r = blk["rows"]
        e = _time(r, "portagather[error]") or _time(r, "portagather[error] (checkify)")
        u = _time(r, "portagather[unchecked]")
        n = (
            _time(r, "p[i[:,0], i[:,1]]")
            or _time(r, "jit p[i[:,0], i[:,1]]")
            or _time(r, "p.vindex[i0, i1]")
        )
        limit = W6_LIMITS.get(b)
        rows.append(
            [
                b,
                fmt_t(e),
                fmt_t(u),
                fmt_t(n),
                marked(e / n, limit, 1) if limit else f"{e / n:.1f}",
                marked(u / n, limit, 1) if limit else f"{u / n:.1f}",
            ]
        )
    header = ["backend", "portagather[error]", "portagather[unchecked]", "`p[i[:,0], i[:,1]]`"]
    return (
        "## W6: fixed cost per call\n\n"
        "Target: portagather ≤ 5x the native fancy-index call on NumPy, ≤ 3x on PyTorch, ≤ 1/5 of "
        "TensorFlow's eager `tf.gather_nd`.\n\n"
        + table([*header, "error / native", "unchecked / native"], rows)
    )


def section_views(res):
    views = res.get("views")
    if not views:
        return ""
    rows = [
        [
            f"`{name}`",
            f"{v['peak'] / 1e6:.3f} MB {mark(v['peak'] < VIEW_PEAK_LIMIT)}",
            fmt_t(v["portagather"]),
            fmt_t(v["native"]),
            f"{v['portagather'] / v['native']:.2f}",
        ]
        for name, v in views.items()
    ]
    return (
        "## Views of a large array (NumPy)\n\n"
        f"`gather(view, [3, 7], axis=0)`: two rows of a view of a {VIEW_SIDE} x {VIEW_SIDE} "
        f"float64 array ({VIEW_SIDE**2 * 8 / 1e6:.0f} MB), against the native "
        "`view[[3, 7]]`. Peak bytes allocated during one call (tracemalloc, the result "
        f"included); target < {VIEW_PEAK_LIMIT / 1e6:.0f} MB (`take` would copy the whole view "
        "first). Median of interleaved calls.\n\n"
        + table(["view", "peak memory", "portagather[error]", "`view[[3, 7]]`", "ratio"], rows)
    )


def section_jax_checked(res):
    checked = res.get("jax_checked")
    if not checked:
        return ""
    rows = []
    for key, rs in checked.items():
        pg_t = _time(rs, "portagather[error] (checkify)")
        natives = [r for r in rs if r["kind"] != workloads.PG]
        best = min(natives, key=lambda r: r["seconds"])
        ratio = pg_t / best["seconds"]
        rows.append(
            [
                key,
                fmt_t(pg_t),
                ", ".join(f"`{r['name']}` {fmt_t(r['seconds'])}" for r in natives),
                marked(ratio, 1.3),
            ]
        )
    return (
        "## JAX: checked path against JAX's own fill mode\n\n"
        'portagather `"error"` under `jit(checkify.checkify(...))` (it raises on a bad index) '
        'against JAX\'s fastest safe idioms of the same shape under plain `jit`: `mode="fill"` '
        "reads a bad index as a fill value instead of raising, at the cost of a bounds mask. "
        "Target: ≤ 1.3x the fastest.\n\n"
        + table(["workload", "portagather[error] (checkify)", "natives (fill)", "ratio"], rows)
    )


def section_memory(res):
    if not res.get("memory"):
        return ""
    names = sorted({n for v in res["memory"].values() for n in v}, key=_mem_order)
    keys = list(res["memory"])
    rows = []
    for n in names:
        cells = [f"`{n}`"]
        for k in keys:
            v = res["memory"][k].get(n)
            if v is None:
                cells.append("")
                continue
            ok = f" {mark(v <= 1.0)}" if k == "W1" and n.startswith("portagather") else ""
            cells.append(f"{v:.2f}{ok}")
        rows.append(cells)
    return (
        "## Peak extra memory on NumPy\n\n"
        "Peak bytes allocated during one call (tracemalloc; the result included), as a "
        "multiple of output bytes + indices bytes. Target on W1: ≤ 1.0.\n\n"
        + table(["candidate", *keys], rows)
    )


def _repeats(names):
    """The passes, with a block repeated per NumPy block of rows written once and counted:
    ``62 x (multiply, add)``."""
    for period in range(1, len(names) // 2 + 1):
        count, rest = divmod(len(names), period)
        if rest == 0 and names == names[:period] * count:
            return f"{count} x ({', '.join(names[:period])})"
    return ", ".join(names)


def section_opcount(res):
    if not res.get("opcount"):
        return ""
    rows = []
    for key, per in res["opcount"].items():
        for pol, s in per.items():
            seq = _repeats([n for n in s["sequence"] if not n.endswith("(view)")])
            rows.append([key, pol, s["ops"], s["passes"], f"{s['ratio']:.2f}", seq])
    return (
        "## Array operations per call (NumPy)\n\n"
        "Counted with `benchmarks/opcount.py`: every NumPy function, ufunc and indexing call "
        "portagather makes; a *pass* is one that writes a new array or reduces (the rest are "
        "views). New bytes as a multiple of output + indices bytes.\n\n"
        + table(["workload", "policy", "ops", "passes", "new bytes", "sequence of passes"], rows)
    )


def section_compile(res):
    if not res.get("compile"):
        return ""
    rows = []
    for key, ct in res["compile"].items():
        pg_t = ct["portagather[unchecked]"]
        nat = {k: v for k, v in ct.items() if not k.startswith("portagather")}
        best = min(nat, key=nat.get)
        rows.append([key, fmt_t(pg_t), f"{fmt_t(nat[best])} (`{best}`)", f"{pg_t / nat[best]:.2f}"])
    return (
        "## JAX compile time\n\n"
        "`jax.jit(f).lower(p, i).compile()` on a fresh `jit` object, median of 3.\n\n"
        + table(["workload", "portagather[unchecked]", "fastest-compiling native", "ratio"], rows)
    )


def section_scaling(res):
    if not res.get("scaling"):
        return ""
    rows = []
    for key, per_backend in res["scaling"].items():
        for b, series in per_backend.items():
            native_slope = _slope(series["fastest native"]) if "fastest native" in series else 1
            for name, pts in series.items():
                slope = _slope(pts)
                ok = ""
                if name.startswith("portagather"):
                    ok = f" {mark(slope <= max(1.15, native_slope + 0.1))}"
                cells = [f"{t / n * 1e9:.2f}" for n, t in pts]
                rows.append([key, b, f"`{name}`", *cells, f"{slope:.2f}{ok}"])
    return (
        "## W7: scaling\n\n"
        "W1 and W4 at 1/16, 1/4, 1 and 4 times the size (params and indices both scaled). ns "
        "per gathered element; *slope* is the log-log slope of time against elements from 1/4 "
        "to 4 (1.00 = linear). The natives grow faster than linearly too: params grows with "
        "the indices (1 MB to 64 MB at W1), so random reads miss the caches more often. "
        "portagather passes when its slope is at most 1.15, or at most 0.1 above the fastest "
        "native's on the same backend.\n\n"
        "![time against size](w7_scaling.png)\n\n"
        + table(["workload", "backend", "candidate", *(f"x{s:g}" for s in SCALES), "slope"], rows)
    )


def section_timings(res):
    parts = []
    for b, blocks in res["blocks"].items():
        rows = []
        for key, blk in blocks.items():
            checked = [r["seconds"] for r in blk["rows"] if r["kind"] == workloads.CHECKED]
            base = min(checked) if checked else None
            for r in blk["rows"]:
                rel = f"{r['seconds'] / base:.2f}" if base else ""
                rows.append(
                    [key, f"`{r['name']}`", r["kind"], fmt_t(r["seconds"]), rel, blk["rounds"]]
                )
        header = ["workload", "candidate", "safety", "median", "/ fastest checked", "rounds"]
        parts.append(f"### {b}\n\n" + table(header, rows))
    return "\n\n".join(parts)


def section_notes(res):
    if not res.get("notes"):
        return ""
    return "## Notes\n\n" + "\n".join(res["notes"])


def _mem_order(name):
    return (not name.startswith("portagather"), name)


def _time(rows, name):
    for r in rows:
        if r["name"] == name:
            return r["seconds"]
    return None


def _slope(pts):
    pts = [(n, t) for n, t in pts]
    sel = pts[1:] if len(pts) > 2 else pts
    (n0, t0), (n1, t1) = sel[0], sel[-1]
    return math.log(t1 / t0) / math.log(n1 / n0)


def plot(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(res["scaling"])
    fig, axes = plt.subplots(1, len(keys), figsize=(6 * len(keys), 4.5), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        for b, series in res["scaling"][key].items():
            for name, pts in series.items():
                n = [p[0] for p in pts]
                t = [p[1] * 1e3 for p in pts]
                style = "-" if name.startswith("portagather") else "--"
                ax.loglog(n, t, style, marker="o", label=f"{b}: {name}")
        ax.set_title(f"{key} ({'gather_nd points' if key == 'W1' else 'gather_d dim=1'})")
        ax.set_xlabel("gathered elements")
        ax.set_ylabel("median time per call (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -------------------------------------------------------------------------------- main


def main(argv=None):
    ap = arguments(
        __doc__, quick="small data, a few seconds, no files", repeat=True, threads=True,
        backends=BACKENDS,
    )  # fmt: skip
    ap.add_argument("--workloads", nargs="*", default=list(MAIN) + ["W7"])
    ap.add_argument("--budget", type=float, default=None, help="seconds per block")
    ap.add_argument(
        "--out", default=None, help="report path (default benchmarks/RESULTS.md; none with --quick)"
    )
    args = ap.parse_args(argv)
    out_path = Path(args.out) if args.out else (None if args.quick else HERE / "RESULTS.md")
    budget = args.budget or (0.05 if args.quick else 3.0)

    setup(args.threads, args.backends)
    res_threads = args.threads
    if "torch" in args.backends:
        import torch  # noqa: F401
    if "tensorflow" in args.backends:
        import tensorflow  # noqa: F401

    started = time.time()
    res = {
        "machine": machine(),
        "started": started,
        "blocks": {},
        "workloads": [],
        "memory": {},
        "opcount": {},
        "compile": {},
        "scaling": {},
        "views": {},
        "jax_checked": {},
        "notes": [],
        "threads": res_threads,
        "repeat": args.repeat,
        "commit": code_commit(),
    }
    main_keys = [k for k in args.workloads if k in MAIN]
    res["workloads"] = main_keys
    for key in main_keys:
        w = MAIN[key]()
        if args.quick:
            w = workloads.quick(w)
        print(f"\n{w.key}: {w.title}", flush=True)
        for b in args.backends:
            t0 = time.perf_counter()
            blk = run_block_repeated(b, w, budget, args.repeat)
            res["blocks"].setdefault(b, {})[key] = blk
            print(f"  {b} ({time.perf_counter() - t0:.1f} s, {blk['rounds']} rounds)")
            for r in blk["rows"]:
                print(f"    {r['name']:42s} {r['kind']:10s} {fmt_t(r['seconds']):>10s}")
            for pol, (ratio, name, _s) in blk["ratios"].items():
                print(f"    => portagather[{pol}] / {name}: {ratio:.2f}")
        if "numpy" in args.backends:
            res["memory"][key] = peak_memory(w)
            import opcount

            per = opcount.per_policy(w, workloads)
            res["opcount"][key] = {pol: {k: v for k, v in s.items() if k != "log"}
                                   for pol, s in per.items()}  # fmt: skip
        if "jax" in args.backends and key != "W6" and not args.quick:
            res["compile"][key] = jax_compile_times(w, repeats=1 if args.quick else 3)
        if "jax" in args.backends and key in ("W1", "W4"):
            res["jax_checked"][key] = run_jax_checked(w, budget)
            print(f"  jax checked: {res['jax_checked'][key]}")

    if "numpy" in args.backends:
        res["views"] = measure_views(budget)
        print(f"\nviews: {res['views']}")

    if "W7" in args.workloads:
        scales = SCALES[:2] if args.quick else SCALES
        sbackends = [b for b in args.backends if b != "dask"]
        for key, make in SCALING.items():
            per_backend = {}
            for scale in scales:
                w = make(scale / 64 if args.quick else scale)
                n = w.out_elements
                print(f"\nW7 {key} x{scale:g}: {w.title}", flush=True)
                for b in sbackends:
                    rows, _ = run_block(b, w, budget * 0.6, check=False)
                    series = per_backend.setdefault(b, {})
                    pgs = [r for r in rows if r["kind"] == workloads.PG]
                    nat = [r for r in rows if r["kind"] != workloads.PG]
                    best = min(nat, key=lambda r: r["seconds"])
                    for r in pgs:
                        series.setdefault(r["name"], []).append((n, r["seconds"]))
                    series.setdefault("fastest native", []).append((n, best["seconds"]))
                    print(
                        f"  {b}: "
                        + ", ".join(f"{r['name']} {fmt_t(r['seconds'])}" for r in pgs)
                        + f", fastest native {fmt_t(best['seconds'])} ({best['name']})"
                    )
            res["scaling"][key] = per_backend

    res["elapsed"] = time.time() - started
    previous = out_path if out_path is not None and out_path.exists() else HERE / "RESULTS.md"
    report = build_report(res, args.quick, previous.read_text() if previous.exists() else "")
    print("\n" + report)
    if out_path is not None:
        out_path.write_text(report)
        (out_path.with_suffix(".json")).write_text(json.dumps(res, indent=1, default=str))
        if res["scaling"]:
            try:
                plot(res, out_path.parent / "w7_scaling.png")
            except ImportError:
                print("matplotlib is not installed: no plot (pip install portagather[bench])")
        print(f"\nwrote {out_path}")
    return res


if __name__ == "__main__":
    main()
