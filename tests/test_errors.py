"""Every invalid call raises before any work, naming the argument, the expected and the actual."""

from __future__ import annotations

import re

import numpy as np
import pytest

import portagather as pg
from portagather.conformance.modes import no_compute

P = np.arange(24.0).reshape(2, 3, 4)
I2 = np.array([[0, 1], [1, 2]])


def raises(exception, *fragments):
    """pytest.raises that also requires each fragment in the message."""
    pattern = "".join(f"(?=.*{re.escape(f)})" for f in fragments)
    return pytest.raises(exception, match=re.compile(pattern, re.DOTALL))


@pytest.mark.parametrize("dtype", [np.float32, np.bool_])
def test_non_integer_indices(backend, dtype):
    data = backend.asarray(P.astype(np.float32))
    indices = backend.asarray(np.array([[0, 1]]).astype(dtype))
    with raises(TypeError, "indices", "integer dtype"):
        pg.gather_nd(data, indices)
    with raises(TypeError, "indices", "integer dtype"):
        pg.gather(data, indices)
    with raises(TypeError, "index", "integer dtype"):
        pg.gather_d(data, 0, backend.asarray(np.zeros((1, 1, 1), dtype=dtype)))
    with raises(TypeError, "indices", "integer dtype"):
        pg.take_along_axis(data, backend.asarray(np.zeros((1, 1, 1), dtype=dtype)))


def test_complex_and_string_indices():
    with raises(TypeError, "indices", "integer dtype", "complex64"):
        pg.gather(P, np.zeros(2, dtype=np.complex64))
    with raises(TypeError, "indices", "integer dtype", "<U1"):
        pg.gather(P, np.array(["a"]))


def test_float_list_indices():
    with raises(TypeError, "indices", "integer dtype", "float64"):
        pg.gather(P, [0.5, 1.0])


def test_mixed_namespaces():
    import torch

    with raises(TypeError, "params", "indices", "torch", "numpy"):
        pg.gather_nd(torch.zeros((2, 2)), np.array([[0, 0]]))
    with raises(TypeError, "x", "index", "numpy", "torch"):
        pg.gather_d(np.zeros((2, 2)), 0, torch.zeros((1, 1), dtype=torch.int64))


@pytest.mark.parametrize("value", ["raise", "Error", None, 3, "ignore "])
def test_unknown_policy(value):
    with raises(
        ValueError,
        "bad_indices",
        "'error'",
        "'ignore'",
        "'clip'",
        "'wrap'",
        "'unchecked'",
        "'DEFAULT'",
        repr(value),
    ):
        pg.gather_nd(P, I2, bad_indices=value)
    with raises(ValueError, "bad_indices"):
        pg.take_along_axis(P, np.zeros((1, 1, 1), dtype=int), bad_indices=value)


def test_policy_checked_before_anything_else():
    # Even with other problems, an unknown policy is named first.
    with raises(ValueError, "bad_indices"):
        pg.gather_nd(P, np.zeros(()), bad_indices="nope")


class TestGatherNd:
    def test_scalar_indices(self):
        with raises(ValueError, "indices", "at least 1 dimension", "0-d"):
            pg.gather_nd(P, np.int64(1))

    @pytest.mark.parametrize("batch_dims", [-1, 2, 5])
    def test_batch_dims_range(self, batch_dims):
        with raises(ValueError, "batch_dims", "[0, 2)", f"got {batch_dims}"):
            pg.gather_nd(P, I2, batch_dims=batch_dims)

    @pytest.mark.parametrize("batch_dims", [1.0, "1", True])
    def test_batch_dims_type(self, batch_dims):
        with raises(TypeError, "batch_dims", "int", repr(batch_dims)):
            pg.gather_nd(P, I2, batch_dims=batch_dims)

    def test_depth_too_large(self):
        with raises(ValueError, "indices.shape[-1]", "index depth", "at most", "3", "got 4"):
            pg.gather_nd(P, np.zeros((2, 4), dtype=int))
        with raises(ValueError, "index depth", "2", "got 3"):
            pg.gather_nd(P, np.zeros((2, 3), dtype=int), batch_dims=1)

    def test_batch_shape_mismatch(self):
        with raises(ValueError, "params.shape[:1] = (2,)", "indices.shape[:1] = (3,)"):
            pg.gather_nd(P, np.zeros((3, 1), dtype=int), batch_dims=1)

    def test_bad_index_message(self, backend):
        params = backend.asarray(np.arange(4).reshape(2, 2))
        indices = backend.asarray(np.array([[0, 1], [2, 1], [5, 5]]))
        with raises(IndexError, "indices[1] = [2, 1] does not index into params of shape (2, 2)"):
            backend.to_numpy(pg.gather_nd(params, indices))

    def test_bad_index_message_with_batch(self, backend):
        params, indices = backend.asarray(P), backend.asarray(np.array([[[1], [0]], [[2], [-1]]]))
        with raises(IndexError, "indices[1, 1] = [-1]", "params.shape[1:2] = (3,)", "batch_dims=1"):
            backend.to_numpy(pg.gather_nd(params, indices, batch_dims=1))


class TestGather:
    @pytest.mark.parametrize("axis", [3, -4])
    def test_axis_range(self, axis):
        with raises(ValueError, "axis", "[-3, 3)", f"got {axis}"):
            pg.gather(P, [0], axis=axis)

    def test_batch_dims_range(self):
        with raises(ValueError, "batch_dims", "[-2, 2]", "got 3"):
            pg.gather(P, I2, batch_dims=3)
        with raises(ValueError, "batch_dims", "got -3"):
            pg.gather(P, I2, batch_dims=-3)

    def test_batch_dims_exceeds_axis(self):
        with raises(ValueError, "batch_dims must not exceed axis", "batch_dims=1", "axis=0"):
            pg.gather(P, I2, axis=0, batch_dims=1)

    def test_batch_shape_mismatch(self):
        with raises(ValueError, "params.shape[:1] = (2,)", "indices.shape[:1] = (4,)"):
            pg.gather(P, np.zeros((4, 1), dtype=int), axis=1, batch_dims=1)

    def test_scalar_params(self):
        with raises(ValueError, "axis", "[0, 0)"):
            pg.gather(np.float64(1.0), [0])

    def test_bad_index_message(self, backend):
        params = backend.asarray(P)
        with raises(
            IndexError, "indices[0, 1] = 4", "[0, 4)", "axis 2", "params of shape (2, 3, 4)"
        ):
            backend.to_numpy(pg.gather(params, backend.asarray(np.array([[0, 4], [9, 0]])), axis=2))


class TestGatherD:
    def test_rank_mismatch(self):
        with raises(ValueError, "index", "same rank as x", "x.ndim = 3", "index.ndim = 2"):
            pg.gather_d(P, 0, I2)

    @pytest.mark.parametrize("dim", [3, -4])
    def test_dim_range(self, dim):
        with raises(ValueError, "dim", "[-3, 3)", f"got {dim}"):
            pg.gather_d(P, dim, np.zeros((1, 1, 1), dtype=int))

    def test_index_larger_than_x(self):
        with raises(ValueError, "index.shape[d]", "x.shape[d]", "(1, 4, 1)", "(2, 3, 4)", "d = 1"):
            pg.gather_d(P, 2, np.zeros((1, 4, 1), dtype=int))

    def test_bad_index_message(self, backend):
        x = backend.asarray(P)
        index = backend.asarray(np.array([[[0, 1]], [[-5, 4]]]))
        with raises(IndexError, "index[1, 0, 0] = -5", "[-4, 4)", "dim 2", "x of shape (2, 3, 4)"):
            backend.to_numpy(pg.gather_d(x, -1, index))


class TestTakeAlongAxis:
    def test_rank_mismatch(self):
        with raises(ValueError, "indices", "same rank as x", "x.ndim = 3", "indices.ndim = 2"):
            pg.take_along_axis(P, I2)

    def test_axis_range(self):
        with raises(ValueError, "axis", "[-3, 3)", "got 3"):
            pg.take_along_axis(P, np.zeros((1, 1, 1), dtype=int), axis=3)

    def test_not_broadcastable(self):
        with raises(
            ValueError, "broadcast", "x.shape = (2, 3, 4)", "indices.shape = (2, 2, 1)", "axis 1"
        ):
            pg.take_along_axis(P, np.zeros((2, 2, 1), dtype=int), axis=2)

    def test_bad_index_message(self, backend):
        x = backend.asarray(P)
        with raises(
            IndexError, "indices[0, 0, 0] = 3", "[-3, 3)", "axis 1", "x of shape (2, 3, 4)"
        ):
            backend.to_numpy(pg.take_along_axis(x, backend.asarray(np.array([[[3]]])), axis=1))


def test_first_bad_vector_is_reported(backend):
    params = backend.asarray(np.arange(100).reshape(10, 10))
    indices = np.zeros((50, 2), dtype=np.int64)
    indices[17] = [3, 10]
    indices[40] = [-1, 0]
    with raises(IndexError, "indices[17] = [3, 10]"):
        backend.to_numpy(pg.gather_nd(params, backend.asarray(indices)))


def test_errors_raise_before_any_work_on_dask():
    import dask.array as da

    with no_compute():  # any computation fails the test
        with raises(ValueError, "batch_dims"):
            pg.gather_nd(
                da.zeros((4, 4), chunks=2), da.zeros((2, 1), dtype=int, chunks=1), batch_dims=2
            )
        lazy = pg.gather_nd(da.zeros((4, 4), chunks=2), da.from_array(np.array([[9, 0]]), chunks=1))
    with raises(IndexError, "indices[0] = [9, 0] does not index into params of shape (4, 4)"):
        lazy.compute()
