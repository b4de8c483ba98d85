"""Scaling out: a Dask cluster and JAX arrays sharded over 8 virtual devices, without moving params."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest

import portagather as pg
from portagather.conformance import dask_costs, reference

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
    """One cluster for the module: three worker processes of 400 MB each, smaller than the
    params that test_points_from_params_larger_than_any_worker gathers from."""
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=3,
            threads_per_worker=1,
            processes=True,
            memory_limit="400MB",
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.usefixtures("cluster_client")
def test_four_operations_on_a_cluster(data):
    for name, lazy, wanted in _calls(*data):
        np.testing.assert_array_equal(lazy.compute(), wanted, err_msg=name, strict=True)


@pytest.mark.usefixtures("cluster_client")
def test_error_policy_raises_on_the_cluster(data):
    params, points, _, _ = data
    points = points.copy()
    points[VECTORS - 3] = [SHAPE[0], 0]
    lazy = pg.gather_nd(*_chunked(params, points))
    with pytest.raises(IndexError, match=rf"indices\[{VECTORS - 3}\] = \[{SHAPE[0]}, 0\] does not"):
        lazy.compute()


def _costed_calls(params, points, rows, index_d, policy):
    """The four operations on persisted inputs: (name, lazy call, params name, inputs)."""
    p, pts = (a.persist(scheduler="sync") for a in _chunked(params, points))
    rws = _chunked(params, rows)[1].persist(scheduler="sync")
    idx_d = da.from_array(index_d, chunks=(CHUNK, -1)).persist(scheduler="sync")
    kw = {"bad_indices": policy}
    return [
        ("gather_nd", pg.gather_nd(p, pts, **kw), p, pts),
        ("gather_nd rows", pg.gather_nd(p, rws, **kw), p, rws),
        ("gather", pg.gather(p, rws[:, 0], axis=1, **kw), p, rws),
        ("gather_d", pg.gather_d(p, 1, idx_d, **kw), p, idx_d),
        ("take_along_axis", pg.take_along_axis(p, idx_d, axis=1, **kw), p, idx_d),
    ]


def _largest_chunk_bytes(array):
    return int(np.prod([max(c) for c in array.chunks])) * array.dtype.itemsize


@pytest.mark.parametrize("policy", ["error", "ignore"])
def test_every_task_reads_at_most_one_params_block(data, policy):
    """The issue's bounds: no task reads more than 2 params blocks or more than
    2 x (params block + index chunk + result chunk); all task outputs together (what can
    move between workers) stay under 4 x (indices + result); no PerformanceWarning."""
    params = data[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", dask.array.PerformanceWarning)
        calls = _costed_calls(*data, policy)
    for name, lazy, p, indices in calls:
        _, costs = dask_costs.measure(lazy, p.name)
        block = _largest_chunk_bytes(p)
        per_task = block + _largest_chunk_bytes(indices) + _largest_chunk_bytes(lazy)
        assert costs.most_params_blocks <= 2, name
        assert costs.largest_input <= 2 * per_task, (name, costs.largest_input, per_task)
        assert costs.total_output <= 4 * (indices.nbytes + lazy.nbytes), (name, params.nbytes)


def _scatter_calls(params, points, index_d, policy):
    """The three scatters on persisted Dask inputs: (name, lazy call, params, updates, numpy
    result from NumPy's own accumulating and assigning idioms)."""
    p, pts = (a.persist(scheduler="sync") for a in _chunked(params, points))
    idx_d = da.from_array(index_d, chunks=(CHUNK, -1)).persist(scheduler="sync")
    rng = np.random.default_rng(1)
    values = rng.standard_normal(points.shape[0]).astype(np.float32)
    values_d = rng.standard_normal(index_d.shape).astype(np.float32)
    u = da.from_array(values, chunks=pts.chunks[0]).persist(scheduler="sync")
    u_d = da.from_array(values_d, chunks=idx_d.chunks).persist(scheduler="sync")
    added = params.copy()
    np.add.at(added, (points[:, 0], points[:, 1]), values)
    larger = params.copy()
    np.maximum.at(larger, (np.arange(SHAPE[0])[:, None], index_d % SHAPE[1]), values_d)
    kw = {"bad_indices": policy}
    return [
        ("scatter_nd", pg.scatter_nd(p, pts, u, reduce="add", **kw), p, u, added),
        ("scatter_d", pg.scatter_d(p, 1, idx_d, u_d, reduce="max", **kw), p, u_d, larger),
        (
            "put_along_axis",
            pg.put_along_axis(p, idx_d, u_d, axis=1, reduce="max", **kw),
            p, u_d, larger,
        ),
    ]  # fmt: skip


@pytest.mark.parametrize("policy", ["error", "ignore"])
def test_every_scatter_task_reads_at_most_one_params_block(data, policy):
    """Scatters route the updates to params' blocks as gathers route indices: no task reads
    more than one params block or more than 2 x (params block + update chunk + its index
    chunk), and the result is right (against NumPy's ufunc.at)."""
    params, points, _, index_d = data
    # The routed plan: params here is small enough for dense partials of the whole target
    # (dask_segments), whose bounds test_segment_plans.py checks; a limit of 0 routes.
    with warnings.catch_warnings(), dask.config.set({"portagather.segment-partial-bytes": 0}):
        warnings.simplefilter("error", dask.array.PerformanceWarning)
        calls = _scatter_calls(params, points, index_d, policy)
    for name, lazy, p, updates, wanted in calls:
        out, costs = dask_costs.measure(lazy, p.name)
        block = _largest_chunk_bytes(p)
        update_chunk = _largest_chunk_bytes(updates)
        per_task = block + update_chunk * (1 + 8 // updates.dtype.itemsize * 2)
        assert costs.most_params_blocks == 1, name
        assert costs.largest_input <= 2 * per_task, (name, costs.largest_input, per_task)
        # The updates of a block are summed through a tree of combining tasks, in another
        # order than ufunc.at's: float32 sums differ in rounding (docs/contract.md, S3).
        np.testing.assert_allclose(out, wanted, rtol=1e-6, atol=1e-6, err_msg=name)


def test_unknown_chunk_sizes_are_refused_clearly():
    params = da.from_array(np.arange(12).reshape(3, 4), chunks=2)
    masked = params[params[:, 0] > 3]  # rows of unknown count
    with pytest.raises(ValueError, match=r"params must have known sizes.*compute_chunk_sizes"):
        pg.gather(masked, [0], axis=1)
    indices = da.from_array(np.array([[0, 1], [2, 3]]), chunks=1)
    with pytest.raises(ValueError, match=r"indices must have known sizes.*compute_chunk_sizes"):
        pg.gather_nd(params, indices[indices[:, 0] > 0])
    fixed = masked.compute_chunk_sizes()
    np.testing.assert_array_equal(pg.gather(fixed, [3, 0], axis=1).compute(), [[7, 4], [11, 8]])


def test_more_elements_than_int64_counts_stays_lazy_and_reads_right():
    """2**64 elements in four blocks: the call plans and routes without overflowing, and
    what is computed is right (the blocks are zeros made on demand)."""
    big = da.zeros((2**32, 2**32), chunks=(2**31, 2**31), dtype=np.int8)
    lazy = pg.gather_nd(big, [[1, 2], [2**32 - 1, 2**32 - 1]], bad_indices="ignore", fill_value=5)
    np.testing.assert_array_equal(lazy.compute(), [0, 0])
    with pytest.raises(IndexError, match=r"indices\[0\] = \[4294967296, 0\]"):
        pg.gather_nd(big, [[2**32, 0]]).compute()


@pytest.mark.parametrize("policy", ["error", "ignore"])
def test_points_from_params_larger_than_any_worker(cluster_client, policy):
    """params of 512 MB (made on the workers, never on the client) spread over workers of
    400 MB each: every index is routed to the worker holding its block. params[i, j] is
    i * n + j, so the expected values need no copy of params."""
    n = 8000
    params = da.fromfunction(
        lambda i, j: i * n + j, shape=(n, n), dtype=np.int64, chunks=1000
    ).persist()
    assert params.nbytes > 400e6
    rng = np.random.default_rng(2)
    points = rng.integers(0, n, (200_000, 2))
    if policy == "ignore":
        points[::1000, 1] = n  # every 1000th vector is bad: filled with -1
    indices = da.from_array(points, chunks=(25_000, 2))
    out = pg.gather_nd(params, indices, bad_indices=policy, fill_value=-1).compute()
    wanted = points[:, 0] * n + points[:, 1]
    if policy == "ignore":
        wanted[::1000] = -1
    np.testing.assert_array_equal(out, wanted)
    assert len(cluster_client.scheduler_info()["workers"]) == 3  # none was lost


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
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "dask_cluster.py")
    args = ["--size", "200", "--chunk", "50", "--vectors", "4000"]
    done = subprocess.run([sys.executable, example, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "gathered 4000 points from params (200, 200) in (4, 4) blocks" in done.stdout
    assert "a sample matches" in done.stdout


MESH_SCRIPT = Path(__file__).parents[1] / "benchmarks" / "mesh_all_gathers.py"


def test_mesh_sharded_point_gather_moves_no_more_than_native_indexing():
    """params sharded on both axes of a 4 x 2 mesh: gathering along the original axes
    all-gathers no more than ``params[i0, i1]`` does (flattening params all-gathered a
    quarter of it on every device)."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run(
        [sys.executable, str(MESH_SCRIPT)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    native = report.pop("native")
    assert native["correct"]
    for policy, facts in report.items():
        assert facts["correct"], policy
        assert facts["all_gather_bytes"] <= native["all_gather_bytes"], (policy, facts, native)
