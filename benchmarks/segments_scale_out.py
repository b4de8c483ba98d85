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
``RESULTS.md`` after the scale-out one. The result (1M float32 segments, 4 MB) takes the
partial plan; ``segments_scale_out_routed.json`` is the series of the routed plan that ran
before it (kept, and drawn beside). ``--large-result`` adds one run whose result is larger
than a worker's memory (the routed plan), without ``da.bincount`` (whose float64 partials
of that result would not fit a worker).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from harness import (
    WORKER_LIMIT,
    WorkerMemory,
    arguments,
    code_commit,
    local_cluster,
    write_section,
)

import portagather as pg

HERE = Path(__file__).resolve().parent
START, END = "<!-- segments-scale-out -->", "<!-- /segments-scale-out -->"
SEGMENTS = 1_000_000
CHUNK = 500_000  # ids per chunk: 4 MB of int64


LARGE_SEGMENTS = 150_000_000  # 600 MB of float32: larger than one worker (500 MB)
LARGE_MULTIPLE = 0.5


def _plan(lazy) -> str:
    """The plan a graph uses, by its task names."""
    names = " ".join(str(k) for k in dict(lazy.__dask_graph__()))
    if "segment-sorted-partial" in names:
        return "sorted"
    return "partial" if "segment-partial" in names else "routed"


def series(
    multiples: list[float], segments: int, chunk: int, bincount: bool = True,
    sorted_ids: bool = False,
) -> list[dict]:  # fmt: skip
    """One row per multiple; `sorted_ids`: ids ``row * segments // rows``, promised sorted."""
    from distributed import wait

    out = []
    with local_cluster() as client:
        for multiple in multiples:
            count = int(multiple * WORKER_LIMIT / 8)
            if sorted_ids:
                ids = da.arange(count, chunks=chunk, dtype=np.int64) * segments // count
            else:
                ids = da.random.default_rng(1).integers(0, segments, count, chunks=chunk)
            data = da.random.default_rng(2).random(count, dtype=np.float32, chunks=chunk)
            row = {
                "multiple_of_worker_limit": multiple, "ids_bytes": count * 8, "rows": count,
                "segments": segments, "sorted": sorted_ids,
            }  # fmt: skip
            call = pg.segment_sum(data, ids, segments, indices_are_sorted=sorted_ids)
            lazies = [("portagather", call)]
            if bincount:
                lazies.append(("da.bincount", da.bincount(ids, weights=data, minlength=segments)))
            row["plan"] = _plan(call)
            for name, lazy in lazies:
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
                if bincount:
                    row[f"{name} result"] = future.result()
                del future
                client.cancel(list(client.futures))
            if bincount:
                mine, theirs = row.pop("portagather result"), row.pop("da.bincount result")
            else:  # a result larger than a worker: its first 1000 segments, checked
                head = np.minimum(ids, 1000)
                mine = pg.segment_sum(data, ids, segments, indices_are_sorted=sorted_ids)
                mine = mine[:1000].compute()
                theirs = da.bincount(head, weights=data, minlength=1001)[:1000].compute()
            row["agrees"] = bool(np.allclose(mine, theirs, rtol=1e-4, atol=1e-3))
            print(row, flush=True)
            out.append(row)
    return out


def plot(rows: list[dict], routed: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    for series_rows, name, label, style in (
        (rows, "portagather", "portagather (partial plan)", "o-"),
        (routed, "portagather", "portagather (routed plan, before)", "^:"),
        (rows, "da.bincount", "da.bincount", "s--"),
    ):
        x = [r["multiple_of_worker_limit"] for r in series_rows]
        left.plot(x, [r[name]["seconds"] for r in series_rows], style, label=label)
        right.plot(
            x, [r[name]["peak_worker_memory"] / 1e6 for r in series_rows], style, label=label
        )
    left.set(xlabel="ids / one worker's memory limit", ylabel="seconds",
             title="segment_sum on 3 workers x 500 MB")  # fmt: skip
    right.axhline(WORKER_LIMIT / 1e6, color="gray", linestyle="--", label="memory limit")
    right.set(xlabel="ids / one worker's memory limit", ylabel="MB", title="peak worker memory")
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _row_line(r: dict, before: dict | None) -> str:
    mine = r["portagather"]
    theirs = r.get("da.bincount")
    cells = [
        f"{r['ids_bytes'] / 1e6:.0f} MB", f"{r['multiple_of_worker_limit']:.2f}",
        f"{r['rows']:_}", f"{r.get('segments', SEGMENTS):_}", r.get("plan", "routed"),
        f"{mine['seconds']:.1f} s", f"{mine['peak_worker_memory'] / 1e6:.0f} MB",
        f"{before['portagather']['seconds']:.1f} s" if before else "-",
        f"{theirs['seconds']:.1f} s" if theirs else "-",
        f"{theirs['peak_worker_memory'] / 1e6:.0f} MB" if theirs else "-",
    ]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def section(
    rows: list[dict], routed: list[dict], large: list[dict], small: bool, commit: str
) -> str:
    before = {r["multiple_of_worker_limit"]: r for r in routed}
    # The routed plan's time over da.bincount's at the same size, for the prose below.
    times = [before[m]["portagather"]["seconds"] / r["da.bincount"]["seconds"]
             for r in rows if (m := r["multiple_of_worker_limit"]) in before] or [0.0]  # fmt: skip
    slower = f"{min(times):.0f}-{max(times):.0f}"
    lines = [
        START,
        "## Segment sums on a Dask cluster",
        "",
        f"Measured on `{commit}` by `benchmarks/segments_scale_out.py` with Dask "
        f"{dask.__version__}: "
        f"`segment_sum(data, ids, {SEGMENTS:_})` (float32 rows, int64 ids made on the workers "
        f'in chunks of {CHUNK:_}, `bad_indices="error"` checked in the graph) on a '
        "`distributed.LocalCluster` of 3 worker processes with a 500 MB memory limit each, "
        "beside Dask's `da.bincount(ids, weights=data)`; both results agree. The result (4 MB) "
        "takes the partial plan; 'routed, before' is the routed plan's time at the same size, "
        "measured before the partial plan existed (`segments_scale_out_routed.json`). The "
        f"last rows' result ({LARGE_SEGMENTS:_} float32 segments, 600 MB) is larger than a "
        "worker: the routed plan for ids in no order; for sorted ids (`row * segments // "
        "rows`, `indices_are_sorted=True`) the sorted plan, which sends each chunk's runs "
        "of equal ids, not its rows. Their first 1000 segments are checked against "
        "`da.bincount` (whose float64 partials of the whole result would not fit a worker); "
        "their peak worker memory includes each worker's share of that result, which the "
        "computation leaves on the workers."
        + (" A small series (the machine was shared): the script runs to 4 x." if small else ""),
        "",
        "| ids | x one worker's limit | rows | segments | plan | portagather "
        "| peak worker memory | routed, before | da.bincount | peak worker memory |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [_row_line(r, before.get(r["multiple_of_worker_limit"])) for r in rows]
    lines += [_row_line(r, None) for r in large]
    lines += [
        "",
        "![segment sums on a cluster](segments_scale_out.png)",
        "",
        "Peak worker memory stays flat as the ids grow past a worker's memory, in both "
        "plans. The partial plan makes one dense partial of the result per chunk and sums "
        "them four per task in a tree, as `da.bincount` does; the routed plan sent every row "
        "with its flat position and its position in the ids (three arrays per chunk), sorted "
        "each chunk by result block and each group of pieces by target, which is why it took "
        f"{slower} x `da.bincount`'s time. It stays for a result larger than a worker (last "
        "rows), where no task may hold the whole result.",
        END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, quick="tiny sizes; writes nothing")
    parser.add_argument("--multiples", nargs="+", type=float, default=[0.5, 1, 2, 4])
    parser.add_argument("--large-result", action="store_true", help="add the routed run")
    parser.add_argument(
        "--from-json", action="store_true", help="rewrite the section from the saved series"
    )
    args = parser.parse_args(argv)
    if args.quick:
        print(series([0.01], 10_000, 100_000))
        print(series([0.01], 10_000_000, 100_000, bincount=False))  # routed
        return
    routed = json.loads((HERE / "segments_scale_out_routed.json").read_text())
    large_path = HERE / "segments_scale_out_large.json"
    if args.from_json:
        rows = json.loads((HERE / "segments_scale_out.json").read_text())
        args.multiples = [r["multiple_of_worker_limit"] for r in rows]
    else:
        rows = series(args.multiples, SEGMENTS, CHUNK)
        assert all(r["agrees"] for r in rows)
        (HERE / "segments_scale_out.json").write_text(json.dumps(rows, indent=1))
        plot(rows, routed, HERE / "segments_scale_out.png")
    if args.large_result:
        large = series([LARGE_MULTIPLE], LARGE_SEGMENTS, CHUNK, bincount=False)
        large += series([LARGE_MULTIPLE], LARGE_SEGMENTS, CHUNK, bincount=False, sorted_ids=True)
        assert all(r["agrees"] for r in large)
        large_path.write_text(json.dumps(large, indent=1))
    large = json.loads(large_path.read_text()) if large_path.exists() else []
    block = section(rows, routed, large, max(args.multiples) < 4, args.commit or code_commit())
    write_section("segments-scale-out", block, after="scale-out")


if __name__ == "__main__":
    main()
