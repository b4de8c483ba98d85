"""portagather on Dask: lazy calls, "error" checked inside the task graph, chunk structure.

That every operation and policy computes nothing when called, and matches the plain-loop
reference once computed, is the conformance suite's (``test_transforms.test_policy``, lazy
mode, run by ``portagather check``). Here: error messages, chunk layouts and task sizes,
compared with the plain-loop references; laziness checked by the same ``modes.in_mode``.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
from dask.callbacks import Callback

import portagather as pg
from helpers import run_portagather, run_reference
from portagather.conformance.modes import in_mode
from portagather.conformance.reference import (
    ref_gather,
    ref_gather_d,
    ref_gather_nd,
    ref_take_along_axis,
)

# (name, params shape, params chunks, kwargs, valid, bad, index chunks, "where = value" of
# the first bad index)
CASES = [
    ("gather_nd", (6, 4, 2), (2, 2, 2), {},
     [[[0, 1], [5, 3]], [[0, 1], [1, 0]], [[4, 2], [3, 3]]],
     [[[0, 1], [6, 0]], [[0, 1], [1, -1]], [[4, 2], [3, 3]]], (2, 1, 2),
     "indices[0, 1] = [6, 0]"),
    ("gather_nd[batch_dims=1]", (4, 3, 4), (2, 2, 2), {"batch_dims": 1},
     [[[2], [0], [2]], [[1], [1], [0]], [[0], [0], [0]], [[2], [1], [0]]],
     [[[2], [0], [2]], [[1], [1], [3]], [[0], [0], [0]], [[2], [-1], [0]]], (2, 2, 1),
     "indices[1, 2] = [3]"),
    ("gather", (3, 6, 2), (2, 2, 1), {"axis": 1},
     [[5, 0, 3], [1, 2, 0]], [[5, 0, 3], [1, 6, 0]], (1, 2), "indices[1, 1] = 6"),
    ("gather[batch_dims=1]", (4, 5, 3), (2, 2, 3), {"axis": 1, "batch_dims": 1},
     [[0, 4, 3, 1], [2, 2, 1, 0], [4, 4, 4, 4], [0, 1, 2, 3]],
     [[0, 4, 3, 1], [2, 2, 1, 0], [4, 4, -1, 4], [0, 1, 2, 7]], (2, 2), "indices[2, 2] = -1"),
    ("gather_d", (4, 5), (2, 2), {"dim": 1},
     [[0, 4, -1, 2, 2, 1], [1, -5, 0, 0, 3, 3], [4, 4, 4, 0, 1, 2]],
     [[0, 4, -1, 2, 2, 1], [1, -6, 0, 0, 3, 3], [4, 5, 4, 0, 1, 2]], (2, 3),
     "index[1, 1] = -6"),
    ("take_along_axis", (4, 5, 2), (2, 2, 1), {"axis": 1},
     [[[0, 3], [-1, 1], [1, 1]]], [[[0, 3], [-1, 1], [1, 5]]], (1, 2, 1),
     "indices[0, 2, 1] = 5"),
    ("take_along_axis[broadcast]", (1, 5, 3), (1, 2, 3), {"axis": 1},
     [[[0], [4], [-5]], [[1], [1], [2]]], [[[0], [4], [-5]], [[1], [9], [2]]], (1, 2, 1),
     "indices[1, 1, 0] = 9"),
]  # fmt: skip
cases = pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])


def call(case, params, indices, policy, fill_value=0):
    op, kwargs = case[0].split("[")[0], case[3]
    return run_portagather(op, params, indices, bad_indices=policy, fill_value=fill_value, **kwargs)


def ref(case, params, indices, policy, fill_value=0):
    op, kwargs = case[0].split("[")[0], case[3]
    return run_reference(op, params, indices, bad_indices=policy, fill_value=fill_value, **kwargs)


def arrays(case, indices):
    shape, chunks, index_chunks = case[1], case[2], case[6]
    params = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 2 + 1
    return (
        params,
        da.from_array(params, chunks=chunks),
        da.from_array(np.asarray(indices), chunks=index_chunks),
    )


@cases
@pytest.mark.parametrize("policy", ["error", "", "ERROR"])
def test_error_is_raised_by_compute(case, policy):
    params, lazy_params, lazy_indices = arrays(case, case[5])
    # Builds the graph and raises nothing: any computation fails the test.
    out = in_mode(call, "lazy")(case, lazy_params, lazy_indices, policy)
    with pytest.raises(IndexError) as lazy_error:
        out.compute()
    assert str(lazy_error.value).startswith(case[7] + " ")
    # The same words as the eager path on the same values.
    with pytest.raises(IndexError) as eager_error:
        call(case, params, np.asarray(case[5]), policy)
    assert str(lazy_error.value) == str(eager_error.value)


def test_error_is_raised_once_per_graph_whatever_the_chunks():
    """Bad indices in several index chunks: the first in C order is reported."""
    params = np.arange(20.0).reshape(4, 5)
    indices = np.array([[0, 1, 2, 3], [9, 0, 0, 0], [0, 0, 0, -2], [7, 0, 0, 0]])
    out = pg.take_along_axis(
        da.from_array(params, chunks=(2, 2)), da.from_array(indices, chunks=(1, 2)), axis=1
    )
    with pytest.raises(IndexError, match=r"^indices\[1, 0\] = 9 is out of range \[-5, 5\)"):
        out.compute()


@pytest.mark.parametrize("chunks", [((0, 1),), ((1, 0),), ((1,),)])
def test_too_large_segment_id_named_whatever_the_chunks(chunks):
    """TensorFlow's rule (negative ids dropped, an id past the end an error) on ids whose
    one element sits beside a zero-size chunk: Dask compares such a block with a Python
    scalar into two elements, so the ids are laid out first; the message names the id."""
    from portagather.compat import tensorflow as tf

    ids = da.from_array(np.array([5]), chunks=chunks)
    data = da.from_array(np.array([7.0]), chunks=1)
    out = tf.math.unsorted_segment_sum(data, ids, 3)
    with pytest.raises(IndexError) as lazy_error:
        out.compute()
    with pytest.raises(IndexError) as eager_error:
        tf.math.unsorted_segment_sum(np.array([7.0]), np.array([5]), 3)
    assert str(lazy_error.value) == str(eager_error.value)
    assert str(lazy_error.value).startswith("segment_ids[0] = 5 is out of range [0, 3)")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_scatter_add_keeps_negative_zero_where_nothing_lands(dtype):
    # The dense partials of a small target start from -0.0, the identity of a floating
    # add: an element no update reaches keeps its value, as NumPy's scatter keeps it.
    x = np.array([-0.0, 1.0, -0.0, 4.0], dtype=dtype)
    index, updates = np.array([1, 3, 3]), np.array([2.0, 0.5, 0.25], dtype=dtype)
    want = x.copy()
    for i, u in zip(index.tolist(), updates.tolist(), strict=True):
        want[i] += u
    got = pg.scatter_d(da.from_array(x, chunks=2), 0, da.from_array(index, chunks=1),
                       da.from_array(updates, chunks=1), reduce="add").compute()  # fmt: skip
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


@pytest.mark.parametrize("policy", ["error", "ignore", "clip", "wrap"])
def test_take_along_axis_and_gather_d_on_dask(policy):
    """Dask has no take_along_axis of its own; both work, on every axis and with negatives."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 6, 4))
    lazy_x = da.from_array(x, chunks=(2, 4, 3))
    for axis in (0, 1, 2, -1):
        n = x.shape[axis]
        low, high = (-n, n) if policy == "error" else (-n - 3, n + 3)
        shape = list(x.shape)
        shape[axis] = 7
        indices = rng.integers(low, high, shape)
        lazy = da.from_array(indices, chunks=3)
        out = pg.take_along_axis(lazy_x, lazy, axis=axis, bad_indices=policy)
        np.testing.assert_array_equal(
            out.compute(), ref_take_along_axis(x, indices, axis=axis, bad_indices=policy)
        )
        index_d = indices[:3, :4, :3] if axis % 3 != 0 else indices[:, :4, :3]
        out = pg.gather_d(lazy_x, axis, da.from_array(index_d, chunks=2), bad_indices=policy)
        np.testing.assert_array_equal(
            out.compute(), ref_gather_d(x, axis, index_d, bad_indices=policy)
        )


# ------------------------------------------------------------------------ chunk structure


def large_cases():
    """Sizes where one index chunk is small next to the whole index array."""
    rng = np.random.default_rng(0)
    p3 = rng.standard_normal((8, 12, 6))
    return [
        ("gather_nd", p3, (4, 4, 3), rng.integers(0, 8, (40, 2)), (10, 2), {}),
        ("gather_nd[batch_dims=1]", p3, (4, 4, 3), rng.integers(0, 12, (8, 20, 1)),
         (4, 5, 1), {"batch_dims": 1}),
        ("gather", p3, (4, 4, 3), rng.integers(0, 12, (30,)), (10,), {"axis": 1}),
        ("gather_d", p3, (4, 4, 3), rng.integers(-12, 12, (8, 30, 6)), (4, 10, 3), {"dim": 1}),
        ("take_along_axis", p3, (4, 4, 3), rng.integers(-12, 12, (8, 30, 6)), (4, 10, 3),
         {"axis": 1}),
    ]  # fmt: skip


def run_large(name, params, chunks, indices, index_chunks, kwargs, policy):
    lazy = da.from_array(params, chunks=chunks)
    lazy_indices = da.from_array(indices, chunks=index_chunks)
    op = name.split("[")[0]
    if op == "gather_d":
        return pg.gather_d(lazy, kwargs["dim"], lazy_indices, bad_indices=policy)
    return getattr(pg, op)(lazy, lazy_indices, bad_indices=policy, **kwargs)


LARGE = large_cases()


@pytest.mark.parametrize("policy", ["clip", "error"])
@pytest.mark.parametrize("large", LARGE, ids=[c[0] for c in LARGE])
def test_result_chunks_follow_index_chunks(large, policy):
    name, _, _, indices, index_chunks, kwargs = large
    out = run_large(*large, policy)
    lazy_indices = da.from_array(indices, chunks=index_chunks)
    grid_chunks = lazy_indices.chunks[:-1] if name.startswith("gather_nd") else lazy_indices.chunks
    if name.startswith("gather_nd"):
        b = kwargs.get("batch_dims", 0)
        expected_grid = grid_chunks
        got = out.chunks[: len(expected_grid)]
        assert got == expected_grid, (out.chunks, grid_chunks)
        assert b == 0 or out.chunks[:b] == grid_chunks[:b]
    elif name == "gather":
        axis = kwargs["axis"]
        assert out.chunks[axis : axis + indices.ndim] == grid_chunks, out.chunks
    else:
        assert out.chunks == grid_chunks, (out.chunks, grid_chunks)


@pytest.mark.parametrize("policy", ["clip", "ignore", "error"])
@pytest.mark.parametrize("large", LARGE, ids=[c[0] for c in LARGE])
def test_no_task_output_larger_than_params_chunk_times_index_chunk(large, policy):
    name, params, chunks, indices, index_chunks, kwargs = large
    out = run_large(*large, policy)
    vectors_per_chunk = int(np.prod(index_chunks[:-1] if name.startswith("gather_nd")
                                    else index_chunks))  # fmt: skip
    bound = int(np.prod(chunks)) * params.itemsize * vectors_per_chunk
    sizes = {}

    def posttask(key, result, _dsk, _state, _worker_id):
        sizes[key] = getattr(result, "nbytes", 0)

    with Callback(posttask=posttask):
        computed = out.compute(scheduler="sync")
    op = name.split("[")[0]
    expected = (ref_gather_d(params, kwargs["dim"], indices) if op == "gather_d" else
                {"gather_nd": ref_gather_nd, "gather": ref_gather,
                 "take_along_axis": ref_take_along_axis}[op](params, indices, **kwargs))  # fmt: skip
    np.testing.assert_array_equal(computed, expected)
    # The final concatenation of compute() is the whole result by design; leave it out.
    largest = max(v for k, v in sizes.items() if "finalize" not in str(k))
    assert largest <= bound, (largest, bound, params.nbytes)
    # Stricter than the bound where the bound exceeds params: no block holds all of params.
    assert largest < params.nbytes, (largest, params.nbytes)
