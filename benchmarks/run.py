"""portagather against the native idioms and TensorFlow, measured side by side.

    python benchmarks/run.py            # full run (a few minutes), writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick    # smoke run on small data (~30 s; ~3 s with
                                        # --backends numpy); writes nothing
    python benchmarks/run.py --backends numpy torch --workloads W1 W4

Every candidate of one workload on one backend is timed in the same process, interleaved
(one call of each per round, in a rotating order), after two warm-up calls, and the median
over the rounds is reported. JAX runs with ``jax_enable_x64`` so that the indices stay int64.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import workloads  # noqa: E402

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


def _to_numpy(x):
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            return x.numpy()
        except Exception:
            pass
    return np.asarray(x)


def measure(cands, budget, min_rounds=5, max_rounds=41, expected=None):
    """Median seconds per call of each candidate, interleaved; checks results on warm-up."""
    for c in cands:
        for k in range(2):
            out = c.fn()
            if k == 0 and expected is not None:
                got = _to_numpy(out)
                if got.shape != expected.shape or not np.array_equal(got, expected):
                    msg = f"{c.name} gives a different result"
                    raise AssertionError(msg)
            del out
    inner = getattr(cands[0], "inner", 1)
    times = {c.name: [] for c in cands}
    one_round = 0.0
    for c in cands:
        t0 = time.perf_counter()
        for _ in range(inner):
            c.fn()
        one_round += time.perf_counter() - t0
    rounds = int(min(max_rounds, max(min_rounds, budget / max(one_round, 1e-9))))
    for r in range(rounds):
        order = cands[r % len(cands) :] + cands[: r % len(cands)]
        for c in order:
            t0 = time.perf_counter()
            for _ in range(inner):
                c.fn()
            times[c.name].append((time.perf_counter() - t0) / inner)
    return {name: statistics.median(ts) for name, ts in times.items()}, rounds


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


def machine():
    import importlib.metadata as md

    versions = {}
    for pkg in (
        "portagather",
        "numpy",
        "array-api-compat",
        "jax",
        "jaxlib",
        "torch",
        "dask",
        "tensorflow",
        "tensorflow-cpu",
    ):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
        "env": {
            k: os.environ.get(k)
            for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")
            if k in os.environ
        },
    }


def fmt_t(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def mark(ok):
    return "✅" if ok else "❌"


def build_report(res, quick):
    m = res["machine"]
    lines = []
    lines.append("# portagather benchmark results")
    lines.append("")
    if quick:
        lines.append("**Smoke run (`--quick`): small data, numbers are not meaningful.**")
        lines.append("")
    lines.append(
        "Generated by `python benchmarks/run.py` "
        f"on {time.strftime('%Y-%m-%d %H:%M', time.localtime(res['started']))}, "
        f"in {res['elapsed']:.0f} s."
    )
    lines.append("")
    lines.append("## Machine and versions")
    lines.append("")
    lines.append(f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory']} memory, no GPU")
    lines.append(f"- Python {m['python']} on {m['platform']}")
    lines.append("- " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    if m["env"]:
        lines.append("- environment: " + ", ".join(f"{k}={v}" for k, v in m["env"].items()))
    lines.append(
        "- JAX runs with `jax_enable_x64=True` so that the indices are int64 as on the "
        "other backends; under `jit` on CPU."
    )
    th = res.get("threads", 1)
    if th > 0:
        lines.append(
            f"- Threads: every backend runs with {th} intra-op thread(s) (`--threads`; "
            "PyTorch `set_num_threads`, TensorFlow `set_intra_op_parallelism_threads`, "
            "XLA `intra_op_parallelism_threads`, Dask `num_workers`); NumPy's gathers "
            "are serial. This compares the libraries per core and keeps the numbers "
            "stable on a small shared machine, where spinning thread pools of several "
            "libraries in one process fight over the cores."
        )
    else:
        lines.append("- Threads: every backend uses its default thread pools.")
    lines.append(
        "- Dask: 4 chunks along the first axis of params and indices, threaded "
        "scheduler, `compute()` included."
    )
    lines.append("")
    lines.append("## Method")
    lines.append("")
    lines.append(
        "All candidates of one workload on one backend run in the same process, "
        "interleaved: two warm-up calls each (the first result is compared with NumPy's, "
        "element for element), then rounds of one call each in rotating order, at least 5 "
        "rounds (3 on Dask), up to the time budget; the table shows medians. W6 times "
        f"{workloads.w6().inner} calls per sample."
    )
    lines.append("")
    lines.append(
        "Like is compared with like. **checked** natives raise on a bad index, component "
        "by component (fancy indexing, `take`/`index_select` along one axis, "
        "`take_along_axis`, `torch.gather`, JAX idioms under "
        "`checkify.checkify(..., errors=checkify.index_checks)`, Dask `vindex`); "
        'portagather\'s default `"error"` is divided by the fastest of them. '
        "**unchecked** natives check nothing per component or clamp (`take` on "
        'hand-computed flat indices, `mode="clip"`, JAX under plain `jit`); '
        'portagather\'s `"unchecked"` is divided by the fastest native of either kind. '
        'On JAX, portagather `"error"` runs under `jit(checkify.checkify(...))`.'
    )
    lines.append("")

    lines.append("## Summary: portagather / fastest native of the same safety")
    lines.append("")
    lines.append(
        "Target: ≤ 1.00 on NumPy, JAX-jit and PyTorch, for W1-W5 and both policies. "
        "Dask is reported, not targeted."
    )
    lines.append("")
    backends = [b for b in BACKENDS if b != "tensorflow" and b in res["blocks"]]
    lines.append(
        "| workload | " + " | ".join(f"{b} error | {b} unchecked" for b in backends) + " |"
    )
    lines.append("|---|" + "---|---|" * len(backends))
    for key in res["workloads"]:
        cells = []
        for b in backends:
            blk = res["blocks"][b].get(key)
            for pol in ("error", "unchecked"):
                if not blk or pol not in blk["ratios"]:
                    cells.append("-")
                    continue
                r = blk["ratios"][pol][0]
                targeted = b in TARGETED and key != "W6"
                cells.append(f"{r:.2f}" + (f" {mark(r <= 1.0)}" if targeted else ""))
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines.append("")

    tf = res["blocks"].get("tensorflow", {})
    npb = res["blocks"].get("numpy", {})
    if tf and npb:
        lines.append("## Against TensorFlow")
        lines.append("")
        lines.append(
            'portagather on NumPy (default policy `"error"`) divided by TensorFlow\'s eager '
            "op on the same data. Target for W1-W3: ≤ 0.80 of `tf.gather_nd`."
        )
        lines.append("")
        lines.append("| workload | TF op | TF time | portagather[error] NumPy | ratio |")
        lines.append("|---|---|---|---|---|")
        for key in res["workloads"]:
            if key not in tf or key not in npb:
                continue
            pg_t = _time(npb[key]["rows"], "portagather[error]")
            for row in tf[key]["rows"]:
                r = pg_t / row["seconds"]
                target = ""
                if key in ("W1", "W2", "W3") and row["name"] == "tf.gather_nd":
                    target = f" {mark(r <= 0.8)}"
                if key == "W6":
                    target = f" {mark(r <= 0.2)} (target ≤ 0.20)"
                lines.append(
                    f"| {key} | `{row['name']}` | {fmt_t(row['seconds'])} | "
                    f"{fmt_t(pg_t)} | {r:.2f}{target} |"
                )
        lines.append("")

    if "W6" in res["workloads"]:
        lines.append("## W6: fixed cost per call")
        lines.append("")
        lines.append(
            "Target: portagather ≤ 5x the native fancy-index call on NumPy and PyTorch, "
            "≤ 1/5 of TensorFlow's eager `tf.gather_nd`."
        )
        lines.append("")
        lines.append(
            "| backend | portagather[error] | portagather[unchecked] | `p[i[:,0], i[:,1]]` "
            "| error / native | unchecked / native |"
        )
        lines.append("|---|---|---|---|---|---|")
        for b in backends:
            blk = res["blocks"][b].get("W6")
            if not blk:
                continue
            rows = blk["rows"]
            e = _time(rows, "portagather[error]") or _time(rows, "portagather[error] (checkify)")
            u = _time(rows, "portagather[unchecked]")
            n = (
                _time(rows, "p[i[:,0], i[:,1]]")
                or _time(rows, "jit p[i[:,0], i[:,1]]")
                or _time(rows, "p.vindex[i0, i1]")
            )
            tgt = b in ("numpy", "torch")
            lines.append(
                f"| {b} | {fmt_t(e)} | {fmt_t(u)} | {fmt_t(n)} | {e / n:.1f}"
                + (f" {mark(e / n <= 5)}" if tgt else "")
                + f" | {u / n:.1f}"
                + (f" {mark(u / n <= 5)}" if tgt else "")
                + " |"
            )
        lines.append("")

    if res.get("memory"):
        lines.append("## Peak extra memory on NumPy")
        lines.append("")
        lines.append(
            "Peak bytes allocated during one call (tracemalloc; the result included), as a "
            "multiple of output bytes + indices bytes. Target on W1: ≤ 1.0."
        )
        lines.append("")
        names = sorted({n for v in res["memory"].values() for n in v}, key=_mem_order)
        keys = list(res["memory"])
        lines.append("| candidate | " + " | ".join(keys) + " |")
        lines.append("|---|" + "---|" * len(keys))
        for n in names:
            cells = []
            for k in keys:
                v = res["memory"][k].get(n)
                if v is None:
                    cells.append("")
                else:
                    cells.append(
                        f"{v:.2f}"
                        + (
                            f" {mark(v <= 1.0)}"
                            if k == "W1" and n.startswith("portagather")
                            else ""
                        )
                    )
            lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
        lines.append("")

    if res.get("opcount"):
        lines.append("## Array operations per call (NumPy)")
        lines.append("")
        lines.append(
            "Counted with `benchmarks/opcount.py`: every NumPy function, ufunc and indexing "
            "call portagather makes; a *pass* is one that writes a new array or reduces "
            "(the rest are views). New bytes as a multiple of output + indices bytes."
        )
        lines.append("")
        lines.append("| workload | policy | ops | passes | new bytes | sequence of passes |")
        lines.append("|---|---|---|---|---|---|")
        for key, per in res["opcount"].items():
            for pol, s in per.items():
                seq = ", ".join(n for n in s["sequence"] if not n.endswith("(view)"))
                lines.append(
                    f"| {key} | {pol} | {s['ops']} | {s['passes']} | {s['ratio']:.2f} | {seq} |"
                )
        lines.append("")

    if res.get("compile"):
        lines.append("## JAX compile time")
        lines.append("")
        lines.append("`jax.jit(f).lower(p, i).compile()` on a fresh `jit` object, median of 3.")
        lines.append("")
        lines.append("| workload | portagather[unchecked] | fastest-compiling native | ratio |")
        lines.append("|---|---|---|---|")
        for key, ct in res["compile"].items():
            pg_t = ct["portagather[unchecked]"]
            nat = {k: v for k, v in ct.items() if not k.startswith("portagather")}
            best = min(nat, key=nat.get)
            lines.append(
                f"| {key} | {fmt_t(pg_t)} | {fmt_t(nat[best])} (`{best}`) | "
                f"{pg_t / nat[best]:.2f} |"
            )
        lines.append("")

    if res.get("scaling"):
        lines.append("## W7: scaling")
        lines.append("")
        lines.append(
            "W1 and W4 at 1/16, 1/4, 1 and 4 times the size (params and indices both "
            "scaled). ns per gathered element; *slope* is the log-log slope of time "
            "against elements from 1/4 to 4 (1.00 = linear). The natives grow faster "
            "than linearly too: params grows with the indices (1 MB to 64 MB at W1), so "
            "random reads miss the caches more often. portagather passes when its slope is "
            "at most 1.15, or at most 0.1 above the fastest native's on the same backend."
        )
        lines.append("")
        lines.append("![time against size](w7_scaling.png)")
        lines.append("")
        lines.append(
            "| workload | backend | candidate | "
            + " | ".join(f"x{s:g}" for s in SCALES)
            + " | slope |"
        )
        lines.append("|---|---|---|" + "---|" * len(SCALES) + "---|")
        for key, per_backend in res["scaling"].items():
            for b, series in per_backend.items():
                native_slope = _slope(series["fastest native"]) if "fastest native" in series else 1
                for name, pts in series.items():
                    cells = [f"{t / n * 1e9:.2f}" for n, t in pts]
                    slope = _slope(pts)
                    ok = ""
                    if name.startswith("portagather"):
                        ok = f" {mark(slope <= max(1.15, native_slope + 0.1))}"
                    lines.append(
                        f"| {key} | {b} | `{name}` | " + " | ".join(cells) + f" | {slope:.2f}{ok} |"
                    )
        lines.append("")

    lines.append("## All timings")
    lines.append("")
    for b, blocks in res["blocks"].items():
        lines.append(f"### {b}")
        lines.append("")
        lines.append("| workload | candidate | safety | median | / fastest checked | rounds |")
        lines.append("|---|---|---|---|---|---|")
        for key, blk in blocks.items():
            checked = [r["seconds"] for r in blk["rows"] if r["kind"] == workloads.CHECKED]
            base = min(checked) if checked else None
            for r in blk["rows"]:
                rel = f"{r['seconds'] / base:.2f}" if base else ""
                lines.append(
                    f"| {key} | `{r['name']}` | {r['kind']} | {fmt_t(r['seconds'])} | "
                    f"{rel} | {blk['rounds']} |"
                )
        lines.append("")
    if res.get("notes"):
        lines.append("## Notes")
        lines.append("")
        lines.extend(res["notes"])
        lines.append("")
    return "\n".join(lines)


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


def set_threads(n, backends):
    """One thread count for every backend's intra-op pool (NumPy's gathers are serial).

    Called before any backend runs anything: XLA and TensorFlow read it at start-up.
    """
    if n <= 0:
        return
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen="
        f"{'true' if n > 1 else 'false'} intra_op_parallelism_threads={n}"
    )
    if "torch" in backends:
        import torch

        torch.set_num_threads(n)
        torch.set_num_interop_threads(n)
    if "tensorflow" in backends:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)
    if "dask" in backends:
        import dask

        dask.config.set(scheduler="threads", num_workers=n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small data, a few seconds, no files")
    ap.add_argument("--backends", nargs="*", default=list(BACKENDS), choices=BACKENDS)
    ap.add_argument("--workloads", nargs="*", default=list(MAIN) + ["W7"])
    ap.add_argument("--budget", type=float, default=None, help="seconds per block")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="intra-op threads for PyTorch, TensorFlow and XLA (default 1)",
    )
    ap.add_argument(
        "--out", default=None, help="report path (default benchmarks/RESULTS.md; none with --quick)"
    )
    args = ap.parse_args(argv)
    out_path = Path(args.out) if args.out else (None if args.quick else HERE / "RESULTS.md")
    budget = args.budget or (0.05 if args.quick else 3.0)

    set_threads(args.threads, args.backends)
    res_threads = args.threads
    if "jax" in args.backends:
        import jax

        jax.config.update("jax_enable_x64", True)
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
        "notes": [],
        "threads": res_threads,
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
            rows, rounds = run_block(b, w, budget)
            blk = {"rows": rows, "rounds": rounds, "ratios": ratios(rows)}
            res["blocks"].setdefault(b, {})[key] = blk
            print(f"  {b} ({time.perf_counter() - t0:.1f} s, {rounds} rounds)")
            for r in rows:
                print(f"    {r['name']:42s} {r['kind']:10s} {fmt_t(r['seconds']):>10s}")
            for pol, (ratio, name, _s) in blk["ratios"].items():
                print(f"    => portagather[{pol}] / {name}: {ratio:.2f}")
        if "numpy" in args.backends:
            res["memory"][key] = peak_memory(w)
            import opcount

            per = {}
            for pol in ("error", "unchecked"):
                log = opcount.count(
                    lambda p, i, pol=pol, w=w: workloads.pg_call(np, w, pol, p, i),
                    w.params,
                    w.indices,
                )
                s = opcount.summary(log)
                s["ratio"] = s["bytes"] / w.bytes_out_plus_indices()
                per[pol] = s
            res["opcount"][key] = per
        if "jax" in args.backends and key != "W6" and not args.quick:
            res["compile"][key] = jax_compile_times(w, repeats=1 if args.quick else 3)

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
    report = build_report(res, args.quick)
    print("\n" + report)
    if out_path is not None:
        out_path.write_text(report + "\n")
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
