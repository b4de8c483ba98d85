"""gather_nd on a Dask cluster, without pulling params to one place.

Run against your own scheduler with ``--scheduler tcp://host:8786``, or leave it out to start
a local cluster of two worker processes. ``--size`` and ``--vectors`` scale the problem; the
defaults are the issue's sizes (params 8000 x 8000 float32 in 1000 x 1000 chunks, 2_000_000
index vectors in 8 chunks).

    python examples/dask_cluster.py --size 2000 --vectors 200000
"""

from __future__ import annotations

import argparse
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import portagather as pg


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    parser.add_argument("--size", type=int, default=8000, help="params is size x size")
    parser.add_argument("--chunk", type=int, default=1000, help="params chunk edge")
    parser.add_argument("--vectors", type=int, default=2_000_000, help="index vectors")
    args = parser.parse_args(argv)

    cluster = None
    if args.scheduler is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(args.scheduler or cluster)
    try:
        params = da.random.default_rng(0).random((args.size, args.size), chunks=args.chunk)
        params = params.astype(np.float32)
        # The index vectors are made on the workers too: nothing large travels in the graph.
        indices = da.random.default_rng(1).integers(
            0, args.size, (args.vectors, 2), chunks=(-(-args.vectors // 8), 2)
        )

        out = pg.gather_nd(params, indices)  # lazy: nothing runs yet
        start = time.perf_counter()
        values = out.compute()
        seconds = time.perf_counter() - start

        # Check a sample against Dask's own vindex with the same points as NumPy indexers.
        sample = np.random.default_rng(2).choice(args.vectors, 100, replace=False)
        points = indices[sample].compute()
        direct = params.vindex[points[:, 0], points[:, 1]].compute()
        assert np.array_equal(values[sample], direct)
        print(
            f"gathered {args.vectors} points from params {params.shape} in {params.numblocks} "
            f"blocks on {len(client.scheduler_info()['workers'])} workers in {seconds:.2f} s; "
            "a sample matches"
        )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
