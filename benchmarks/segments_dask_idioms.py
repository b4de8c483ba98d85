"""Segment reductions on a Dask cluster beside Dask's own idiom and flox, in the same run.

    python benchmarks/segments_dask_idioms.py               # the issue's sizes, writes RESULTS
    python benchmarks/segments_dask_idioms.py --quick       # tiny, writes nothing
    python benchmarks/segments_dask_idioms.py --profile     # where the partial plan's time goes

A ``distributed.LocalCluster`` of 3 single-thread worker processes x 500 MB (as
``segments_scale_out.py``): 16M float32 rows in chunks of 500k, int64 ids in the same chunks,
both made on the workers and persisted. ``segment_sum`` / ``_max`` / ``_min`` / ``_mean``
into 1,000 and 1,000,000 segments (``bad_indices="error"``, the default, checked in the
graph) beside ``da.bincount(ids, weights=data, minlength=n)`` (sums) and flox's
``groupby_reduce(data, ids, func=..., expected_groups=np.arange(n), method="map-reduce")``
(the engine under xarray's groupby; given the groups, as portagather is given
``num_segments``). Each time is the graph's construction and its computation to futures on
the cluster; rounds interleave the candidates, and the table holds medians. Every result is
checked against the others.

Writes ``segments_dask_idioms.json`` and a section of ``RESULTS.md`` after the segments
scale-out one.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from harness import (
    NOTES,
    arguments,
    cluster_data,
    cluster_rounds,
    code_commit,
    flox_reduce,
    local_cluster,
    ratio_cell,
    write_section,
)

import portagather as pg

HERE = Path(__file__).resolve().parent
START, END = "<!-- segments-dask-idioms -->", "<!-- /segments-dask-idioms -->"
ROWS, CHUNK = 16_000_000, 500_000
SEGMENTS = (1_000, 1_000_000)
REDUCTIONS = ("sum", "max", "min", "mean")
#: Seconds of timed rounds after which a candidate (with 3 rounds at least) sits the rest out.
BUDGET = 45.0
#: Each reduction's bound: portagather / the fastest of the block's idioms.
BOUND = 1.05


def candidates(data, ids, segments: int, reduce: str) -> dict:
    """name -> a function making the lazy result."""
    out = {"portagather": lambda: getattr(pg, f"segment_{reduce}")(data, ids, segments)}
    if reduce == "sum":
        out["da.bincount"] = lambda: da.bincount(ids, weights=data, minlength=segments)
    flox = flox_reduce(reduce, segments)
    out["flox"] = lambda: flox(data, ids)
    return out


def _agree(results: dict, reduce: str) -> bool:
    values = list(results.values())
    first = np.asarray(values[0], dtype=np.float64)
    for other in values[1:]:
        other = np.asarray(other, dtype=np.float64)
        if reduce in ("max", "min", "mean"):  # flox leaves empty groups NaN
            seen = np.isfinite(other) & np.isfinite(first)
            if not np.allclose(first[seen], other[seen], rtol=1e-4, atol=1e-3):
                return False
        elif not np.allclose(first, other, rtol=1e-4, atol=1e-2):
            return False
    return True


def measure(rows: int, chunk: int, rounds: int, segment_counts=SEGMENTS) -> list[dict]:
    out = []
    with local_cluster() as client:
        for segments in segment_counts:
            data, ids = cluster_data(rows, chunk, segments)
            for reduce in REDUCTIONS:
                makers = candidates(data, ids, segments, reduce)
                times, results = cluster_rounds(client, makers, rounds, BUDGET)
                row = {
                    "segments": segments,
                    "reduction": reduce,
                    "rounds": {name: len(t) for name, t in times.items()},
                    "agrees": _agree(results, reduce),
                    **{name: statistics.median(t) for name, t in times.items()},
                    "all": times,
                }
                print({k: v for k, v in row.items() if k != "all"}, flush=True)
                out.append(row)
            del data, ids
    return out


def profile(rows: int, chunk: int, segments: int, reduce: str) -> None:
    """Where the partial plan's time goes: the task groups' durations as the cluster records
    them (``Client.get_task_stream``), beside flox's."""
    from distributed import get_task_stream, wait

    with local_cluster() as client:
        data, ids = cluster_data(rows, chunk, segments)
        for name, make in candidates(data, ids, segments, reduce).items():
            wait(client.compute(make()))  # warm
            with get_task_stream(client) as stream:
                start = time.perf_counter()
                wait(client.compute(make()))
                wall = time.perf_counter() - start
            groups: dict[str, list[float]] = {}
            for task in stream.data:
                for part in task["startstops"]:
                    if part["action"] == "compute":
                        key = dask.utils.key_split(task["key"])
                        groups.setdefault(key, []).append(part["stop"] - part["start"])
            print(f"{name}: {wall:.3f} s wall")
            for key, spans in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
                print(f"  {key}: {len(spans)} tasks, {sum(spans):.3f} s, max {max(spans):.4f} s")


def section(saved: dict, commit: str) -> str:
    rows = saved["rows"]
    lines = [
        START,
        "## Segment reductions on a Dask cluster, beside da.bincount and flox",
        "",
        f"Measured on `{commit}` by `benchmarks/segments_dask_idioms.py` with Dask "
        f"{saved['dask']}, flox {saved['flox']}: {ROWS:_} float32 rows in chunks of {CHUNK:_} "
        "with int64 ids, made on the workers and persisted, on a `distributed.LocalCluster` of 3 "
        "single-thread worker processes with a 500 MB memory limit each. portagather "
        '`segment_<reduction>(data, ids, n)` (`bad_indices="error"`, checked in the graph; '
        "the partial plan), `da.bincount(ids, weights=data, minlength=n)`, flox "
        '`groupby_reduce(data, ids, func=..., expected_groups=np.arange(n), method="map-reduce")`'
        ". Medians of "
        f"{max(rows[0]['rounds'].values())} interleaved rounds (after one warm-up round; a "
        f"candidate whose rounds passed {BUDGET:.0f} s stopped at 3 or more, the count in the "
        "JSON) of the graph's construction and computation, on a 2-core machine. "
        "All results agree (flox leaves empty groups NaN where portagather holds the "
        f"identity). Bounds: sum at most {BOUND} x the faster of `da.bincount` and flox; "
        f"max, min and mean at most {BOUND} x flox.",
        "",
        "| segments | reduction | portagather | `da.bincount` | flox | portagather / fastest |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        mine, flox_s = r["portagather"], r["flox"]
        bincount = r.get("da.bincount")
        fastest = min(v for v in (bincount, flox_s) if v is not None)
        lines.append(
            f"| {r['segments']:_} | {r['reduction']} | {mine:.2f} s | "
            f"{f'{bincount:.2f} s' if bincount is not None else '-'} | {flox_s:.2f} s | "
            f"{ratio_cell({'ratio': mine / fastest}, BOUND, words=True)} |"
        )
    lines += ["", NOTES, END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, quick="tiny sizes; writes nothing", rounds=7)
    parser.add_argument("--profile", nargs=2, metavar=("SEGMENTS", "REDUCTION"))
    parser.add_argument(
        "--from-json", action="store_true", help="rewrite the section from the saved table"
    )
    args = parser.parse_args(argv)
    if args.quick:
        measure(200_000, 50_000, 1, (100, 10_000))
        return
    if args.profile:
        profile(ROWS, CHUNK, int(args.profile[0]), args.profile[1])
        return
    path = HERE / "segments_dask_idioms.json"
    if args.from_json:
        saved = json.loads(path.read_text())
    else:
        import flox

        saved = {"rows": measure(ROWS, CHUNK, args.rounds), "commit": code_commit(),
                 "dask": dask.__version__, "flox": flox.__version__}  # fmt: skip
        assert all(r["agrees"] for r in saved["rows"])
        path.write_text(json.dumps(saved, indent=1))
    commit = args.commit or saved.get("commit", "unknown")
    write_section("segments-dask-idioms", section(saved, commit), after="segments-scale-out")


if __name__ == "__main__":
    main()
