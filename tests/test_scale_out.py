"""Scaling out: a Dask cluster and JAX arrays sharded over 8 virtual devices, without moving params."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import portagather as pg
from portagather.conformance import reference

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

# Small versions of the sizes, so that CI on 2 cores stays quick; the large sizes run
# in examples/dask_cluster.py.
SHAPE, CHUNK, VECTORS, INDEX_CHUNKS = (400, 400), 50, 40_000, 8


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    params = rng.standard_normal(SHAPE).astype(np.float32)
    points = rng.integers(0, SHAPE[0], (VECTORS, 2))
    rows = rng.integers(0, SHAPE[0], (VECTORS // 100, 1))
    index_d = rng.integers(-SHAPE[1], SHAPE[1], (SHAPE[0], SHAPE[1] // 2))
    return params, points, rows, index_d


def _chunked(params, indices):
    return (
        da.from_array(params, chunks=CHUNK),
        da.from_array(indices, chunks=(-(-indices.shape[0] // INDEX_CHUNKS), -1)),
    )


def _calls(params, points, rows, index_d):
    """(name, lazy call on Dask arrays, reference) for the four operations."""
    p, pts = _chunked(params, points)
    _, rws = _chunked(params, rows)
    idx_d = da.from_array(index_d, chunks=CHUNK)
    return [
        ("gather_nd", pg.gather_nd(p, pts), reference.ref_gather_nd(params, points)),
        ("gather", pg.gather(p, rws[:, 0], axis=1), params[:, rows[:, 0]]),
        ("gather_d", pg.gather_d(p, 1, idx_d), reference.ref_gather_d(params, 1, index_d)),
        (
            "take_along_axis",
            pg.take_along_axis(p, idx_d, axis=1),
            np.take_along_axis(params, index_d % SHAPE[1], axis=1),
        ),
    ]


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_four_operations_on_a_cluster(cluster_client, data):
    for name, lazy, wanted in _calls(*data):
        np.testing.assert_array_equal(lazy.compute(), wanted, err_msg=name, strict=True)


def test_error_policy_raises_on_the_cluster(cluster_client, data):
    params, points, _, _ = data
    points = points.copy()
    points[VECTORS - 3] = [SHAPE[0], 0]
    lazy = pg.gather_nd(*_chunked(params, points))
    with pytest.raises(IndexError, match=rf"indices\[{VECTORS - 3}\] = \[{SHAPE[0]}, 0\] does not"):
        lazy.compute()


def _largest_task_outputs(data):
    """{operation: bytes of its largest task output, the final concatenation aside}."""
    # Rechunks by tasks, as without a cluster (a cluster's client would pick P2P rechunking).
    with dask.config.set({"array.rechunk.method": "tasks"}):
        calls = _calls(*data)
    sizes = []

    class Sizes(dask.callbacks.Callback):
        def _posttask(self, key, result, dsk, state, worker_id):
            if "finalize" not in str(key):
                sizes.append(getattr(result, "nbytes", 0))

    largest = {}
    for name, lazy, _ in calls:
        sizes.clear()
        with Sizes():
            lazy.compute(scheduler="threads")
        largest[name] = (max(sizes), lazy)
    return largest


def test_no_task_materialises_params(data):
    params = data[0]
    for name, (largest, _) in _largest_task_outputs(data).items():
        assert largest <= params.nbytes / 4, (name, largest, params.nbytes)


def test_no_task_holds_more_than_a_few_params_chunks(data):
    params = data[0]
    chunk_bytes = CHUNK * CHUNK * params.itemsize
    for name, (largest, lazy) in _largest_task_outputs(data).items():
        # Output blocks follow the index chunks, so bound by both, never by all of params.
        out_block = np.prod([max(c) for c in lazy.chunks]) * params.itemsize
        assert largest <= 2 * max(out_block, chunk_bytes), (name, largest, chunk_bytes)


SHARDED = textwrap.dedent(
    """
    import json, os, re
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    import portagather as pg
    from portagather.conformance import reference

    mesh = Mesh(np.array(jax.devices()), ("batch",))
    def put(a):
        spec = PartitionSpec("batch", *([None] * (a.ndim - 1)))
        return jax.device_put(jnp.asarray(a), NamedSharding(mesh, spec))
    rng = np.random.default_rng(0)
    params = rng.standard_normal((16, 12, 3)).astype(np.float32)
    rows = rng.integers(0, 12, (16, 5, 1)).astype(np.int32)
    cols = rng.integers(0, 12, (16, 5)).astype(np.int32)
    index_d = rng.integers(-12, 12, (16, 4, 3)).astype(np.int32)
    report = {}
    for policy, name in [(pol, op) for pol in ("clip", "ignore", "unchecked")
                         for op in ("gather_nd", "gather", "gather_d")]:
        f, indices, wanted = {
            "gather_nd": (lambda p, i: pg.gather_nd(p, i, batch_dims=1, bad_indices=policy),
                          rows, reference.ref_gather_nd(params, rows, batch_dims=1)),
            "gather": (lambda p, i: pg.gather(p, i, axis=1, batch_dims=1, bad_indices=policy),
                       cols, reference.ref_gather(params, cols, axis=1, batch_dims=1)),
            "gather_d": (lambda p, i: pg.gather_d(p, 1, i, bad_indices=policy), index_d,
                         reference.ref_gather_d(params, 1, index_d)),
        }[name]
        p, i = put(params), put(indices)
        hlo = jax.jit(f).lower(p, i).compile().as_text()
        out = jax.jit(f)(p, i)
        report[f"{name}/{policy}"] = {
            "collectives": {k: len(re.findall(k, hlo)) for k in
                            ("all-gather", "all-to-all", "collective-permute", "all-reduce")},
            "correct": bool(np.array_equal(np.asarray(out), wanted)),
            "spec": list(out.sharding.spec),
            "bytes_per_device": max(s.data.nbytes for s in p.addressable_shards),
        }
    print(json.dumps(report))
    """
)


def test_batch_sharded_jax_gathers_stay_local():
    pytest.importorskip("jax")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(report) == 9
    for name, facts in report.items():
        assert facts["correct"], name
        assert facts["collectives"] == dict.fromkeys(facts["collectives"], 0), (name, facts)
        assert facts["spec"][0] == "batch", (name, facts)
        assert facts["bytes_per_device"] == 16 * 12 * 3 * 4 // 8


def test_dask_cluster_example_runs():
    pytest.importorskip("distributed")
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "dask_cluster.py")
    args = ["--size", "200", "--chunk", "50", "--vectors", "4000"]
    done = subprocess.run([sys.executable, example, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "gathered 4000 points from params (200, 200) in (4, 4) blocks" in done.stdout
    assert "a sample matches" in done.stdout
