"""The Dask plans of the segment reductions and of the scatters' reductions into a small
target (``engines/dask_segments.py``), on a ``distributed.LocalCluster``: values against the
plain-loop references for every reduction and policy, the plan chosen at each size (by the
graph's task names), and what each task holds."""

from __future__ import annotations

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
from dask.utils import key_split

import portagather as pg
from portagather.conformance import dask_costs, reference
from portagather.engines.dask_scatter_routes import FAN_IN

ROWS, CHUNK, SEGMENTS = 2000, 250, 40
REDUCTIONS = ("sum", "mean", "max", "min", "prod")
POLICIES = ("error", "ignore", "clip", "wrap", "unchecked")
LIMIT = "portagather.segment-partial-bytes"


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, memory_limit="1GB",
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):  # fmt: skip
        yield client


def _segment(data, ids, segments, reduce, **kw):
    return getattr(pg, f"segment_{reduce}")(data, ids, segments, **kw)


def _names(lazy) -> set[str]:
    return {key_split(k) for k in dict(lazy.__dask_graph__())}


def _ids(policy: str, segments: int = SEGMENTS, seed: int = 0) -> np.ndarray:
    """Ids with bad ones (on both sides, in several chunks) except under "error" and
    "unchecked", which promise or check valid ones."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, segments, ROWS)
    if policy not in ("error", "unchecked"):
        ids[rng.integers(0, ROWS, 30)] = rng.integers(-3 * segments, 3 * segments, 30)
    return ids


def _data(dtype: str, inner: tuple[int, ...] = ()) -> np.ndarray:
    rng = np.random.default_rng(1)
    if dtype.startswith("int"):
        return rng.integers(-4, 5, (ROWS, *inner)).astype(dtype)
    return rng.standard_normal((ROWS, *inner)).astype(dtype)


def _check(out: np.ndarray, wanted: np.ndarray) -> None:
    assert out.dtype == wanted.dtype
    if out.dtype.kind in "iu":
        np.testing.assert_array_equal(out, wanted)
    else:  # the partials are combined in another order than the loop's
        np.testing.assert_allclose(out, wanted, rtol=1e-4, atol=1e-5)


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_partial_plan_values_every_reduction_and_policy(reduce, policy):
    ids = _ids(policy)
    for x, chunks in ((_data("float32", (3,)), (CHUNK, 2)), (_data("int32"), CHUNK)):
        lazy = _segment(
            da.from_array(x, chunks=chunks), da.from_array(ids, chunks=CHUNK), SEGMENTS, reduce,
            bad_indices=policy,
        )  # fmt: skip
        assert "segment-partial" in _names(lazy)
        assert not any(n.startswith("pg-scatter") for n in _names(lazy))
        _check(lazy.compute(), reference.ref_segment(x, ids, SEGMENTS, reduce, policy))


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_error_raises_the_first_bad_id_at_compute(reduce):
    ids = _ids("error")
    ids[[1500, 777, 1999]] = [-1, SEGMENTS, SEGMENTS + 5]
    lazy = _segment(
        da.from_array(_data("float64"), chunks=CHUNK), da.from_array(ids, chunks=CHUNK),
        SEGMENTS, reduce,
    )  # fmt: skip
    message = rf"segment_ids\[777\] = {SEGMENTS} is out of range \[0, {SEGMENTS}\)"
    with pytest.raises(IndexError, match=message):
        lazy.compute()


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize(
    ("dtype", "reduce"),
    [("complex64", "sum"), ("complex128", "prod"), ("int8", "sum"), ("uint8", "max"),
     ("int64", "mean"), ("float16", "min"), ("float64", "max")],
)  # fmt: skip
def test_dtypes_and_id_widths(dtype, reduce):
    """Integers wrap as their ``+`` does, the mean floor-divides, complex sums and products;
    ids of every width, wrapped into more segments than a narrow id dtype holds."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, ROWS) + (1j * rng.integers(0, 3, ROWS) if "complex" in dtype else 0)
    x = (x * 50).astype(dtype) if dtype == "int8" else x.astype(dtype)
    for id_dtype in ("int8", "uint16", "int32", "uint64"):
        ids = rng.integers(0, 120, ROWS).astype(id_dtype)
        segments = 300 if id_dtype == "int8" else 70
        for policy in ("wrap", "clip", "ignore"):
            lazy = _segment(
                da.from_array(x, chunks=CHUNK), da.from_array(ids, chunks=CHUNK), segments,
                reduce, bad_indices=policy,
            )  # fmt: skip
            wanted = reference.ref_segment(x, ids, segments, reduce, policy)
            out = lazy.compute()
            if dtype == "float16":
                np.testing.assert_array_equal(out, wanted)
            else:
                _check(out, wanted)


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_plan_by_size(reduce):
    """The partial plan up to the limit (one partial: segments x the inner block x the
    itemsize, and 8 bytes per segment of counts for the mean), the routed plan past it."""
    x, ids = _data("float64", (4,)), _ids("ignore")
    data, index = da.from_array(x, chunks=(CHUNK, 2)), da.from_array(ids, chunks=CHUNK)
    partial = SEGMENTS * 2 * 8 + (8 * SEGMENTS if reduce == "mean" else 0)
    wanted = reference.ref_segment(x, ids, SEGMENTS, reduce, "ignore")
    for limit, plan in ((partial, "segment-partial"), (partial - 1, "pg-scatter-split")):
        with dask.config.set({LIMIT: limit}):
            lazy = _segment(data, index, SEGMENTS, reduce, bad_indices="ignore")
        names = _names(lazy)
        assert plan in names, (limit, names)
        assert ("segment-partial" in names) == (plan == "segment-partial")
        _check(lazy.compute(), wanted)


def test_mean_is_one_pass():
    """The sum and the count in the same tasks: one partial per data block."""
    lazy = pg.segment_mean(
        da.from_array(_data("float32"), chunks=CHUNK), da.from_array(_ids("ignore"), chunks=CHUNK),
        SEGMENTS, bad_indices="ignore",
    )  # fmt: skip
    keys = [key_split(k) for k in dict(lazy.__dask_graph__())]
    assert keys.count("segment-partial") == ROWS // CHUNK
    assert keys.count("segment-count") == 1


@pytest.mark.parametrize("sorted_ids", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_each_task_holds_one_block_its_ids_and_one_partial(sorted_ids, reduce):
    """A partial task reads one data block and its ids and writes one partial (for sorted
    ids only the segments its rows span); a combining task reads at most FAN_IN partials."""
    segments = 300
    rng = np.random.default_rng(4)
    ids = rng.integers(0, segments, 8 * ROWS)
    ids = np.sort(ids) if sorted_ids else ids
    x = rng.standard_normal(ids.size)
    data = da.from_array(x, chunks=CHUNK).persist(scheduler="sync")
    index = da.from_array(ids, chunks=CHUNK).persist(scheduler="sync")
    lazy = _segment(data, index, segments, reduce, indices_are_sorted=sorted_ids)
    out, costs = dask_costs.measure(lazy, data.name)
    _check(out, reference.ref_segment(x, ids, segments, reduce))
    block, id_block = CHUNK * 8, CHUNK * 8
    partial = segments * 8 + (8 * segments if reduce == "mean" else 0)
    for key, read in costs.inputs.items():
        name = key_split(key)
        if name == "segment-partial":
            assert costs.params_blocks[key] == 1
            assert read <= block + id_block
            spanned = len(np.unique(ids[key[1] * CHUNK : (key[1] + 1) * CHUNK]))
            written = spanned * 16 if sorted_ids else partial
            assert costs.outputs[key] <= written, (key, costs.outputs[key], written)
        else:  # combining tasks and the result's (fused or not), whatever their names
            assert costs.params_blocks[key] == 0
            assert read <= FAN_IN * partial, (key, read)
            assert costs.outputs[key] <= partial


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_segment_csr_on_the_partial_plan(reduce):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 400)).astype(np.float32)
    offsets = np.sort(rng.integers(0, 401, (3, 31)), axis=1)
    lazy = pg.segment_csr(da.from_array(x, chunks=(1, 100)), da.from_array(offsets), reduce=reduce)
    assert "segment-partial" in _names(lazy)
    _check(lazy.compute(), reference.ref_segment_csr(x, offsets, reduce))


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("reduce", ["add", "multiply", "min", "max", "update"])
def test_scatters_into_a_small_target(reduce):
    """Reductions into a target small enough for one task by dense partials of it; the
    assignment ("update", whose winner is the last write) is routed."""
    rng = np.random.default_rng(6)
    target = rng.standard_normal((30, 20))
    points = rng.integers(0, 30, (ROWS, 2))
    points[:, 1] %= 20
    updates = rng.standard_normal(ROWS)
    lazy = pg.scatter_nd(
        da.from_array(target, chunks=(10, 8)), da.from_array(points, chunks=(CHUNK, 2)),
        da.from_array(updates, chunks=CHUNK), reduce=reduce,
    )  # fmt: skip
    names = _names(lazy)
    assert ("scatter-partial" in names) == (reduce != "update"), names
    assert ("pg-scatter-split" in names) == (reduce == "update"), names
    wanted = reference.ref_scatter_nd(target, points, updates, reduce=reduce)
    np.testing.assert_allclose(lazy.compute(), wanted, rtol=1e-10)


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_sorted_plan_past_the_limit(reduce, policy):
    """Sorted ids and a result past the partial limit: each chunk's runs travel to the
    result's blocks along the segments (several here), not its rows; right under every
    policy, "wrap" included (which unsorts them)."""
    segments = 500
    ids = np.sort(_ids(policy, segments))
    x = _data("float32", (3,))
    with dask.config.set({LIMIT: 0, "array.chunk-size": "2KiB"}):
        lazy = _segment(
            da.from_array(x, chunks=(CHUNK, 2)), da.from_array(ids, chunks=CHUNK), segments,
            reduce, indices_are_sorted=True, bad_indices=policy,
        )  # fmt: skip
    names = _names(lazy)
    assert "segment-sorted-partial" in names and "pg-scatter-split" not in names, names
    assert len(lazy.chunks[0]) > 1
    _check(lazy.compute(), reference.ref_segment(x, ids, segments, reduce, policy))


def test_sorted_plan_moves_runs_not_rows():
    """A sorted-plan partial reads one data block and its ids and writes one entry per run;
    every other task reads at most FAN_IN pieces of one result block's entries, no rows."""
    segments, rows = 5000, 8 * ROWS
    rng = np.random.default_rng(7)
    ids = np.sort(rng.integers(0, segments, rows))
    x = rng.standard_normal(rows)
    data = da.from_array(x, chunks=CHUNK).persist(scheduler="sync")
    index = da.from_array(ids, chunks=CHUNK).persist(scheduler="sync")
    with dask.config.set({LIMIT: 0, "array.chunk-size": "16KiB"}):
        lazy = pg.segment_sum(data, index, segments, indices_are_sorted=True)
    out, costs = dask_costs.measure(lazy, data.name)
    _check(out, reference.ref_segment(x, ids, segments, "sum"))
    block = max(lazy.chunks[0]) * 8
    for key, read in costs.inputs.items():
        name = key_split(key)
        if name == "segment-sorted-partial":
            runs = len(np.unique(ids[key[1] * CHUNK : (key[1] + 1) * CHUNK]))
            assert read <= 2 * CHUNK * 8
            assert costs.outputs[key] <= runs * 16, (key, costs.outputs[key], runs)
        else:  # pieces, combining tasks, the result's blocks: runs' entries, never rows
            assert costs.params_blocks[key] == 0
            assert read <= FAN_IN * 2 * block, (key, read)  # a block's entries: id, value
