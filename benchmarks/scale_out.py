"""Scale-out on Dask: what each task reads and writes, and a cluster smaller than params.

    python benchmarks/scale_out.py           # the table and the cluster series
    python benchmarks/scale_out.py --quick   # small sizes, writes nothing

Part 1, on the issue's shape (params 4000 x 4000 float32 in 64 blocks of 500 x 500, indices
in 8 chunks), measured with ``portagather.conformance.dask_costs`` on persisted inputs: the
params blocks one task reads, the largest task input over (params block + index chunk +
result chunk), and all task outputs over (indices + result), for every operation and both
checked policies, beside Dask's own ``vindex`` with NumPy indexers (the anchor).

Part 2, a ``distributed.LocalCluster`` of 3 worker processes x 500 MB: ``gather_nd`` of 1M
points from params of 1 x to 8 x one worker's memory limit (made on the workers block by
block, never whole anywhere), timed, with the peak memory of each worker as the scheduler
reports it; and the issue's 600 MB case with params persisted on the cluster.

Writes ``scale_out.json``, the plot ``scale_out.png`` and the scale-out section of
``RESULTS.md``.
"""

from __future__ import annotations

import json
import platform
import time
import warnings
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
from portagather.conformance.dask_costs import measure

HERE = Path(__file__).resolve().parent


def _largest_chunk(array) -> int:
    return int(np.prod([max(c) for c in array.chunks])) * array.dtype.itemsize


def task_costs(size: int, block: int, points: int) -> list[dict]:
    rng = np.random.default_rng(0)
    values = rng.standard_normal((size, size)).astype(np.float32)
    params = da.from_array(values, chunks=block).persist(scheduler="sync")

    def persisted(a, chunks):
        return da.from_array(a, chunks=chunks).persist(scheduler="sync")

    pts = persisted(rng.integers(0, size, (points, 2)), (points // 8, 2))
    rows = persisted(rng.integers(0, size, (size // 5, 1)), (size // 40, 1))
    along = persisted(rng.integers(-size, size, (size, size // 10)), (size // 8, -1))
    calls = {
        "gather_nd points": lambda kw: pg.gather_nd(params, pts, **kw),
        "gather_nd rows": lambda kw: pg.gather_nd(params, rows, **kw),
        "gather axis=1": lambda kw: pg.gather(params, rows[:, 0], axis=1, **kw),
        "gather_d": lambda kw: pg.gather_d(params, 1, along, **kw),
        "take_along_axis": lambda kw: pg.take_along_axis(params, along, axis=1, **kw),
    }
    index_of = {"gather_nd points": pts, "gather_nd rows": rows, "gather axis=1": rows}
    rows_out = []
    points_np = pts.compute()
    anchor = params.vindex[points_np[:, 0], points_np[:, 1]]
    for name, lazy, indices in [("Dask vindex (NumPy indexers)", anchor, pts)] + [
        (f"{name} [{policy}]", call({"bad_indices": policy}), index_of.get(name, along))
        for name, call in calls.items()
        for policy in ("error", "ignore")
    ]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            _, costs = measure(lazy, params.name)
            seconds = time.perf_counter() - start
        per_task = _largest_chunk(params) + _largest_chunk(indices) + _largest_chunk(lazy)
        rows_out.append(
            {
                "call": name,
                "tasks": len(costs.inputs),
                "params_blocks_per_task": costs.most_params_blocks,
                "largest_input_ratio": costs.largest_input / per_task,
                "total_output_ratio": costs.total_output / (indices.nbytes + lazy.nbytes),
                "performance_warnings": sum(
                    issubclass(w.category, da.PerformanceWarning) for w in caught
                ),
                "seconds": seconds,
            }
        )
    return rows_out


def cluster_series(multiples, points: int, block_mb: float) -> list[dict]:
    from distributed import wait

    out = []
    with local_cluster() as client:
        for multiple, persist in multiples:
            side = int((multiple * WORKER_LIMIT / 8) ** 0.5)
            block = int((block_mb * 1e6 / 8) ** 0.5)
            # params[i, j] = i * side + j, made on the workers block by block.
            params = da.fromfunction(
                lambda i, j, side=side: i * side + j, shape=(side, side), dtype=np.int64,
                chunks=block,
            )  # fmt: skip
            if persist:
                params = params.persist()
                wait(params)
            indices = da.random.default_rng(1).integers(
                0, side, (points, 2), chunks=(points // 8, 2)
            ).persist()  # fmt: skip
            wait(indices)
            lazy = pg.gather_nd(params, indices)
            with WorkerMemory(client) as memory:
                start = time.perf_counter()
                values = lazy.compute()
                seconds = time.perf_counter() - start
            vectors = indices.compute()
            assert np.array_equal(values, vectors[:, 0] * side + vectors[:, 1])
            out.append(
                {
                    "params_bytes": params.nbytes,
                    "multiple_of_worker_limit": params.nbytes / WORKER_LIMIT,
                    "blocks": int(np.prod(params.numblocks)),
                    "persisted": persist,
                    "points": points,
                    "seconds": seconds,
                    "peak_worker_memory": max(memory.peak.values()),
                    "worker_limit": WORKER_LIMIT,
                }
            )
            print(out[-1], flush=True)
            del params
            client.cancel(list(client.futures))
    return out


def plot(series, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [r for r in series if not r["persisted"]]
    x = [r["multiple_of_worker_limit"] for r in runs]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    left.plot(x, [r["seconds"] for r in runs], "o-")
    left.set(xlabel="params / one worker's memory limit", ylabel="seconds for 1M points",
             title="gather_nd on 3 workers x 500 MB")  # fmt: skip
    right.plot(x, [r["peak_worker_memory"] / 1e6 for r in runs], "o-", label="peak worker")
    right.axhline(WORKER_LIMIT / 1e6, color="gray", linestyle="--", label="memory limit")
    right.set(xlabel="params / one worker's memory limit", ylabel="MB", title="worker memory")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def mesh_all_gathers() -> dict:
    """The bytes all-gathered on a 4 x 2 mesh (benchmarks/mesh_all_gathers.py)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, JAX_PLATFORMS="cpu")
    script = HERE / "mesh_all_gathers.py"
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def section(costs, series, mesh, commit) -> str:
    lines = [
        "<!-- scale-out: written by benchmarks/scale_out.py -->",
        "## Scale-out on Dask",
        "",
        f"Measured by `benchmarks/scale_out.py` on {platform.machine()}, "
        f"Dask {dask.__version__}, portagather {pg.__version__}. Measured on `{commit}`.",
        "",
        "Per task, on params 4000 x 4000 float32 in 64 blocks of 500 x 500 and indices in 8 "
        "chunks, inputs persisted (bounds: at most 2 params blocks per task, largest input "
        "at most 2 x (block + index chunk + result chunk), all outputs at most "
        "4 x (indices + result)):",
        "",
        "| call | tasks | params blocks per task | largest task input / (block + index chunk "
        "+ result chunk) | all task outputs / (indices + result) | PerformanceWarnings |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in costs:
        lines.append(
            f"| {r['call']} | {r['tasks']} | {r['params_blocks_per_task']} | "
            f"{r['largest_input_ratio']:.2f} | {r['total_output_ratio']:.2f} | "
            f"{r['performance_warnings']} |"
        )
    lines += [
        "",
        "`gather_nd` of 1M points on a `distributed.LocalCluster` of 3 worker processes with "
        "a 500 MB memory limit each:",
        "",
        "| params | x one worker's limit | blocks | params | seconds | peak worker memory |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in series:
        how = "persisted on the cluster" if r["persisted"] else "made block by block"
        lines.append(
            f"| {r['params_bytes'] / 1e6:.0f} MB | {r['multiple_of_worker_limit']:.1f} | "
            f"{r['blocks']} | {how} | {r['seconds']:.1f} | "
            f"{r['peak_worker_memory'] / 1e6:.0f} MB |"
        )
    lines += [
        "",
        "![scale-out series](scale_out.png)",
        "",
        "JAX, params (64, 32) float32 sharded on both axes of a 4 x 2 mesh of virtual CPU "
        "devices, 100 replicated index vectors: bytes the compiled program all-gathers "
        "(`benchmarks/mesh_all_gathers.py`; flattening params, as portagather 0.1 did, "
        "all-gathered 2048 bytes per device):",
        "",
        "| call | all-gathered bytes | right values |",
        "| --- | --- | --- |",
    ]
    for name, facts in mesh.items():
        call = "`params[i0, i1]`" if name == "native" else f'`gather_nd`, "{name}"'
        lines.append(f"| {call} | {facts['all_gather_bytes']} | {facts['correct']} |")
    lines.append("<!-- /scale-out -->")
    return "\n".join(lines)


def main(argv=None):
    parser = arguments(__doc__, quick="small sizes; writes nothing")
    args = parser.parse_args(argv)
    if args.quick:
        costs = task_costs(400, 50, 40_000)
        series = cluster_series([(0.25, False)], 20_000, 1)
    else:
        costs = task_costs(4000, 500, 400_000)
        for r in costs:
            print(r, flush=True)
        multiples = [(1.2, True), (1, False), (2, False), (4, False), (8, False)]
        series = cluster_series(multiples, 1_000_000, 37.5)
    if args.quick:
        print(costs)
        return
    (HERE / "scale_out.json").write_text(json.dumps({"costs": costs, "series": series}, indent=1))
    plot(series, HERE / "scale_out.png")
    commit = args.commit or code_commit()
    write_section("scale-out", section(costs, series, mesh_all_gathers(), commit))


if __name__ == "__main__":
    main()
