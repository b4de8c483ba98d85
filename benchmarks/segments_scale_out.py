"""Segment sums on a Dask cluster, over ids larger than one worker's memory.

    python benchmarks/segments_scale_out.py                       # 0.5, 1, 2 and 4 x a worker
    python benchmarks/segments_scale_out.py --multiples 0.25 0.5  # a small series
    python benchmarks/segments_scale_out.py --quick               # tiny, writes nothing

A ``distributed.LocalCluster`` of 3 worker processes x 500 MB (as ``scale_out.py``):
``segment_sum(data, ids, 1_000_000)`` of float32 rows whose int64 ids take 0.5 x to 4 x one
worker's memory limit, both made on the workers chunk by chunk (never whole anywhere), with
``bad_indices="error"`` checked in the graph. Timed, with the peak memory of each worker as
the scheduler reports it, beside Dask's own ``da.bincount(ids, weights=data)`` (the native
idiom of a 1-d segment sum), and checked against it.

Writes ``segments_scale_out.json``, the plot ``segments_scale_out.png`` and a section of
``RESULTS.md`` after the scale-out one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from harness import WORKER_LIMIT, WorkerMemory, arguments, local_cluster, write_section

import portagather as pg

HERE = Path(__file__).resolve().parent
START, END = "<!-- segments-scale-out -->", "<!-- /segments-scale-out -->"
SEGMENTS = 1_000_000
CHUNK = 500_000  # ids per chunk: 4 MB of int64


def series(multiples: list[float], segments: int, chunk: int) -> list[dict]:
    from distributed import wait

    out = []
    with local_cluster() as client:
        for multiple in multiples:
            count = int(multiple * WORKER_LIMIT / 8)
            ids = da.random.default_rng(1).integers(0, segments, count, chunks=chunk)
            data = da.random.default_rng(2).random(count, dtype=np.float32, chunks=chunk)
            row = {"multiple_of_worker_limit": multiple, "ids_bytes": count * 8, "rows": count}
            for name, lazy in (
                ("portagather", pg.segment_sum(data, ids, segments)),
                ("da.bincount", da.bincount(ids, weights=data, minlength=segments)),
            ):
                with WorkerMemory(client) as memory:
                    start = time.perf_counter()
                    future = client.compute(lazy)
                    wait(future)
                    seconds = time.perf_counter() - start
                row[name] = {
                    "seconds": seconds,
                    "peak_worker_memory": max(memory.peak.values()),
                    "tasks": len(lazy.__dask_graph__()),
                }
                row[f"{name} result"] = future.result()
                del future
                client.cancel(list(client.futures))
            mine, theirs = row.pop("portagather result"), row.pop("da.bincount result")
            row["agrees"] = bool(np.allclose(mine, theirs, rtol=1e-4, atol=1e-3))
            print(row, flush=True)
            out.append(row)
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["multiple_of_worker_limit"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    for name, style in (("portagather", "o-"), ("da.bincount", "s--")):
        left.plot(x, [r[name]["seconds"] for r in rows], style, label=name)
        right.plot(x, [r[name]["peak_worker_memory"] / 1e6 for r in rows], style, label=name)
    left.set(xlabel="ids / one worker's memory limit", ylabel="seconds",
             title="segment_sum on 3 workers x 500 MB")  # fmt: skip
    right.axhline(WORKER_LIMIT / 1e6, color="gray", linestyle="--", label="memory limit")
    right.set(xlabel="ids / one worker's memory limit", ylabel="MB", title="peak worker memory")
    left.legend()
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def section(rows: list[dict], small: bool) -> str:
    lines = [
        START,
        "## Segment sums on a Dask cluster",
        "",
        f"Measured by `benchmarks/segments_scale_out.py` with Dask {dask.__version__}: "
        f"`segment_sum(data, ids, {SEGMENTS:_})` (float32 rows, int64 ids made on the workers "
        f'in chunks of {CHUNK:_}, `bad_indices="error"` checked in the graph) on a '
        "`distributed.LocalCluster` of 3 worker processes with a 500 MB memory limit each, "
        "beside Dask's `da.bincount(ids, weights=data)`; both results agree."
        + (" A small series (the machine was shared): the script runs to 4 x." if small else ""),
        "",
        "| ids | x one worker's limit | rows | portagather | peak worker memory | da.bincount "
        "| peak worker memory |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        mine, theirs = r["portagather"], r["da.bincount"]
        lines.append(
            f"| {r['ids_bytes'] / 1e6:.0f} MB | {r['multiple_of_worker_limit']:.2f} | "
            f"{r['rows']:_} | {mine['seconds']:.1f} s | {mine['peak_worker_memory'] / 1e6:.0f} MB "
            f"| {theirs['seconds']:.1f} s | {theirs['peak_worker_memory'] / 1e6:.0f} MB |"
        )
    lines += [
        "",
        "![segment sums on a cluster](segments_scale_out.png)",
        "",
        "Peak worker memory stays flat as the ids grow past a worker's memory: the rows of "
        "each result block reach it through a tree of tasks that each combine four pieces "
        "(`_combine_pieces`). The time is several times `da.bincount`'s: portagather routes "
        "every row with its flat position and its position in the ids (three arrays per "
        "chunk), sorts each chunk by result block and each group of pieces by target, and "
        "checks the ids in the graph, where `da.bincount` makes one dense partial result per "
        "chunk with `np.bincount` and sums them in a tree. Dense per-chunk partials where a "
        "result block is small (here one block of 1M segments) are the engine work this "
        "points to. The time grows faster than the ids here; the machine was shared with "
        "other work and this was not analysed further.",
        END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, quick="tiny sizes; writes nothing")
    parser.add_argument("--multiples", nargs="+", type=float, default=[0.5, 1, 2, 4])
    parser.add_argument(
        "--from-json", action="store_true", help="rewrite the section from the saved series"
    )
    args = parser.parse_args(argv)
    if args.quick:
        print(series([0.01], 10_000, 100_000))
        return
    if args.from_json:
        rows = json.loads((HERE / "segments_scale_out.json").read_text())
        args.multiples = [r["multiple_of_worker_limit"] for r in rows]
    else:
        rows = series(args.multiples, SEGMENTS, CHUNK)
        assert all(r["agrees"] for r in rows)
        (HERE / "segments_scale_out.json").write_text(json.dumps(rows, indent=1))
        plot(rows, HERE / "segments_scale_out.png")
    write_section(
        "segments-scale-out", section(rows, small=max(args.multiples) < 4), after="scale-out"
    )


if __name__ == "__main__":
    main()
