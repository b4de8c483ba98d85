"""The four operations on every backend, compared element by element with the loop reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import portagather as pg
from helpers import assert_same, backends_with_dtypes, call, check, expected
from portagather.conformance import reference

DATA = np.arange(2 * 3 * 4).reshape(2, 3, 4) * 10 + 1

# (id, operation, data, indices, options): valid indices, every shape rule of docs/contract.md.
CASES = [
    ("nd-points", "gather_nd", DATA, [[1, 2, 3], [0, 0, 0], [1, 0, 2]], {}),
    ("nd-rows", "gather_nd", DATA, [[1], [0], [1]], {}),
    ("nd-pairs", "gather_nd", DATA, [[[0, 1], [1, 2]], [[1, 1], [0, 0]]], {}),
    ("nd-depth0", "gather_nd", DATA, np.zeros((3, 0), dtype=np.int64), {}),
    ("nd-batch1", "gather_nd", DATA, [[[2], [0]], [[1], [1]]], {"batch_dims": 1}),
    ("nd-batch1-full", "gather_nd", DATA, [[2, 3], [0, 1]], {"batch_dims": 1}),
    ("nd-batch1-depth0", "gather_nd", DATA, np.zeros((2, 3, 0), dtype=np.int64), {"batch_dims": 1}),
    ("nd-batch2", "gather_nd", DATA, np.array([[[3], [0], [1]], [[2], [2], [0]]]), {"batch_dims": 2}),
    ("g-axis0", "gather", DATA, [1, 0, 1], {}),
    ("g-axis1", "gather", DATA, [[2, 0], [1, 1]], {"axis": 1}),
    ("g-axis-neg", "gather", DATA, [3, 0], {"axis": -1}),
    ("g-scalar", "gather", DATA, 2, {"axis": 2}),
    ("g-batch1", "gather", DATA, [[2, 0], [1, 1]], {"batch_dims": 1}),
    ("g-batch1-axis2", "gather", DATA, [[3, 0, 1], [1, 1, 2]], {"axis": 2, "batch_dims": 1}),
    ("g-batch-neg", "gather", DATA, [[3, 0, 1], [1, 1, 2]], {"axis": 2, "batch_dims": -1}),
    ("g-batch2", "gather", DATA, np.array([[[3, 0], [1, 1], [2, 2]], [[0, 0], [3, 3], [1, 2]]]), {"axis": 2, "batch_dims": 2}),
    ("g-batch2-scalar", "gather", DATA, np.array([[3, 0, 1], [1, 1, 2]]), {"axis": 2, "batch_dims": 2}),
    ("d-dim0", "gather_d", DATA, [[[1, 0, 1, 0]], [[0, 0, 1, 1]]], {"dim": 0}),
    ("d-dim1", "gather_d", DATA, [[[2, 0, 1, 2], [1, 1, 1, 1]], [[0, 2, 0, 2], [2, 2, 2, 2]]], {"dim": 1}),
    ("d-dim-neg", "gather_d", DATA, [[[3, -1], [-4, 0]], [[1, 2], [-2, -3]]], {"dim": -1}),
    ("d-larger-along-dim", "gather_d", DATA, [[[0, 1, 2, 3, 3, 2]]], {"dim": 2}),
    ("t-axis-last", "take_along_axis", DATA, np.argsort(-DATA, axis=-1), {}),
    ("t-axis0", "take_along_axis", DATA, [[[1, 0, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]]], {"axis": 0}),
    ("t-bcast-index", "take_along_axis", DATA, [[[2], [0]]], {"axis": 1}),
    ("t-bcast-x", "take_along_axis", DATA[:1, :, :1], [[[0, 1, 2]], [[2, 2, 0]]], {"axis": 1}),
    ("t-negative", "take_along_axis", DATA, [[[-1, -4, 0, 3]]], {"axis": 2}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "data", "indices", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_matches_reference(backend, op, data, indices, options):
    check(backend, op, data, indices, **options)


BAD_CASES = [
    ("nd", "gather_nd", DATA, [[1, 2, 3], [0, 5, 0], [-1, 0, 0], [1, 2, 4]], {}),
    ("nd-batch", "gather_nd", DATA, [[[3], [-3]], [[9], [1]]], {"batch_dims": 1}),
    ("g", "gather", DATA, [[3, -1], [4, 0]], {"axis": 2}),
    ("g-batch", "gather", DATA, [[2, 3], [-1, 0]], {"axis": 1, "batch_dims": 1}),
    ("d", "gather_d", DATA, [[[3, -5], [4, 0]], [[-4, 2], [-1, 7]]], {"dim": 2}),
    ("t", "take_along_axis", DATA, [[[5], [-6]]], {"axis": 1}),
]  # fmt: skip


@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap", "IGNORE"])
@pytest.mark.parametrize(
    ("op", "data", "indices", "options"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES]
)
def test_policies_on_bad_indices(backend, op, data, indices, options, policy):
    check(backend, op, data, indices, bad_indices=policy, **options)


@pytest.mark.parametrize("fill_value", [-7, 2.0])
def test_ignore_fills_with_fill_value(backend, fill_value):
    out = check(
        backend, "gather_nd", DATA, [[1, 5], [0, 2]], bad_indices="ignore", fill_value=fill_value
    )
    assert (out[0] == fill_value).all()


@pytest.mark.parametrize(
    ("op", "data", "indices", "options"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES]
)
@pytest.mark.parametrize("policy", ["error", "ERROR", "", "DEFAULT"])
def test_error_policy_raises(backend, op, data, indices, options, policy):
    with pytest.raises(IndexError):
        expected(backend, op, data, indices, bad_indices=policy, **options)
    with pytest.raises(IndexError, match=r"out of range|does not index"):
        call(backend, op, data, indices, bad_indices=policy, **options)


@pytest.mark.parametrize(
    ("op", "data", "indices", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_unchecked_on_valid_indices(backend, op, data, indices, options):
    check(backend, op, data, indices, bad_indices="unchecked", **options)


@pytest.mark.parametrize(
    ("op", "data", "indices", "options"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES]
)
def test_unchecked_never_reads_outside(backend, op, data, indices, options):
    # Values for bad indices are unspecified, but each one is an element of the data, and
    # good indices read the right value.
    out = call(backend, op, data, indices, bad_indices="unchecked", **options)
    clipped = expected(backend, op, data, indices, bad_indices="ignore", fill_value=-1, **options)
    assert out.shape == clipped.shape
    good = clipped != -1
    assert_same(out[good], clipped[good])
    assert np.isin(out, np.asarray(data)).all()


INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
DATA_DTYPES = ["bool", *INDEX_DTYPES, "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize(("backend", "index_dtype"), backends_with_dtypes(INDEX_DTYPES))
def test_every_index_dtype(backend, index_dtype):
    check(backend, "gather_nd", DATA, [[1, 2, 3], [0, 0, 1]], index_dtype=index_dtype)
    check(backend, "gather_d", DATA, [[[2, 0, 1, 2]]], index_dtype=index_dtype, dim=1)
    check(backend, "gather", DATA, [[3, 7]], index_dtype=index_dtype, axis=2, bad_indices="ignore")


def test_negative_values_of_unsigned_width_are_bad(backend):
    # 255 as uint8 is out of range, never "-1 from the end".
    out = check(
        backend, "gather_d", DATA, [[[255, 1]]], index_dtype="uint8", dim=2, bad_indices="ignore"
    )
    assert out[0, 0, 0] == 0


@pytest.mark.parametrize("policy", ["error", "ignore"])
@pytest.mark.parametrize(("backend", "dtype"), backends_with_dtypes(DATA_DTYPES))
def test_every_data_dtype(backend, dtype, policy):
    data = (DATA % 7).astype(dtype)
    bad = 3 if policy == "ignore" else 0
    check(backend, "gather_nd", data, [[1, 2], [0, bad]], bad_indices=policy)
    check(backend, "gather", data, [[1, bad]], axis=1, bad_indices=policy)
    check(
        backend, "gather_d", data, [[[0, 1], [1, 1]], [[2, 0], [0, 1]]], dim=1, bad_indices="clip"
    )
    check(backend, "take_along_axis", data, [[[0, 5]], [[-7, 1]]], axis=2, bad_indices="wrap")


def test_strings_on_numpy():
    params = np.array([["a0", "b0"], ["c0", "d0"]])
    out = pg.gather_nd(params, [[1, 0], [0, 5]], bad_indices="ignore")
    assert out.tolist() == ["c0", ""]
    out = pg.gather(params, [1, 3], axis=1, bad_indices="ignore", fill_value="zz")
    assert out.tolist() == [["b0", "zz"], ["d0", "zz"]]
    assert pg.gather_d(params, 0, [[1, 0]]).tolist() == [["c0", "b0"]]
    assert pg.take_along_axis(params, np.array([[1], [0]])).tolist() == [["b0"], ["c0"]]


ZERO_SIZE = [
    ("nd-no-vectors", "gather_nd", np.zeros((3, 4)), np.zeros((0, 2), dtype=np.int64), {}),
    ("nd-empty-params-no-vectors", "gather_nd", np.zeros((0, 4)), np.zeros((0, 1), dtype=np.int64), {}),
    ("nd-empty-slice", "gather_nd", np.zeros((3, 0)), [[1], [2]], {}),
    ("nd-all-empty", "gather_nd", np.zeros((0, 0)), [[0]], {}),
    ("nd-empty-batch", "gather_nd", np.zeros((0, 3)), np.zeros((0, 2, 1), dtype=np.int64), {"batch_dims": 1}),
    ("nd-depth0-empty-params", "gather_nd", np.zeros((0, 2)), np.zeros((4, 0), dtype=np.int64), {}),
    ("g-no-indices", "gather", np.zeros((3, 4)), np.zeros((0,), dtype=np.int64), {"axis": 1}),
    ("g-empty-params", "gather", np.zeros((0, 4)), np.zeros((2, 0), dtype=np.int64), {"axis": 1}),
    ("d-empty-index", "gather_d", np.zeros((3, 4)), np.zeros((3, 0), dtype=np.int64), {"dim": 0}),
    ("t-empty-index", "take_along_axis", np.zeros((3, 4)), np.zeros((3, 0), dtype=np.int64), {"axis": 1}),
    ("t-empty-bcast", "take_along_axis", np.zeros((1, 4)), np.zeros((0, 1), dtype=np.int64), {"axis": 1}),
]  # fmt: skip


@pytest.mark.parametrize("policy", ["error", "ignore", "clip", "wrap", "unchecked"])
@pytest.mark.parametrize(
    ("op", "data", "indices", "options"), [c[1:] for c in ZERO_SIZE], ids=[c[0] for c in ZERO_SIZE]
)
def test_empty_results(backend, op, data, indices, options, policy):
    out = check(backend, op, data, indices, bad_indices=policy, **options)
    assert out.size == 0


EMPTY_AXIS = [
    ("nd", "gather_nd", np.zeros((0, 3)), [[0], [0]], {}),
    ("g", "gather", np.zeros((2, 0, 3)), [0], {"axis": 1}),
    ("d", "gather_d", np.zeros((2, 0)), [[0], [0]], {"dim": 1}),
    ("t", "take_along_axis", np.zeros((2, 0)), [[0]], {"axis": 1}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "data", "indices", "options"),
    [c[1:] for c in EMPTY_AXIS],
    ids=[c[0] for c in EMPTY_AXIS],
)
def test_axis_of_length_zero(backend, op, data, indices, options):
    for policy in ("error", "clip", "wrap", "unchecked"):
        with pytest.raises(IndexError, match="length 0"):
            call(backend, op, data, indices, bad_indices=policy, **options)
    out = check(backend, op, data, indices, bad_indices="ignore", fill_value=3, **options)
    assert out.size > 0 and (out == 3).all()


def test_inputs_unchanged_and_result_does_not_alias(backend):
    data_b = backend.asarray(DATA)
    indices_b = backend.asarray([[1, 2], [0, 0]])
    before_data, before_indices = (
        backend.to_numpy(data_b).copy(),
        backend.to_numpy(indices_b).copy(),
    )
    for policy in ("error", "ignore", "clip", "wrap", "unchecked"):
        out = pg.gather_nd(data_b, indices_b, bad_indices=policy)
        assert_same(backend.to_numpy(data_b), before_data)
        assert_same(backend.to_numpy(indices_b), before_indices)
    if backend.name in ("numpy", "torch"):  # the backends whose arrays can be written in place
        out[...] = 0
        assert_same(backend.to_numpy(data_b), before_data)
        depth0 = pg.gather_nd(data_b, backend.asarray(np.zeros((1, 0), dtype=np.int64)))
        depth0[...] = 0
        assert_same(backend.to_numpy(data_b), before_data)


def test_lists_and_scalars_are_accepted():
    assert pg.gather_nd([[1, 2], [3, 4]], [[1, 0]]).tolist() == [3]
    assert pg.gather([[1, 2], [3, 4]], 1).tolist() == [3, 4]
    assert pg.gather(np.array([5, 6, 7]), (2, 0)).tolist() == [7, 5]
    assert pg.gather_d([[1, 2], [3, 4]], 1, [[1], [0]]).tolist() == [[2], [3]]
    assert pg.take_along_axis([[1, 2], [3, 4]], [[1], [0]], axis=1).tolist() == [[2], [3]]
    assert pg.gather(np.array([5, 6, 7]), []).shape == (0,)


def test_list_indices_take_the_params_backend(backend):
    data_b = backend.asarray(DATA)
    out = pg.gather_nd(data_b, [[1, 2, 3]])
    assert type(out) is type(data_b)
    assert backend.to_numpy(out).tolist() == [DATA[1, 2, 3]]


def test_default_fill_is_the_dtype_zero():
    out = pg.gather(np.array([True, True]), [0, 5], bad_indices="ignore")
    assert out.tolist() == [True, False]
    out = pg.gather(np.array([1 + 2j]), [3], bad_indices="ignore")
    assert out.dtype == np.complex128 and out.tolist() == [0j]


def test_gather_axis_defaults_to_batch_dims_as_given():
    # TensorFlow: axis=None takes batch_dims before it is normalised, so batch_dims=-1 means
    # axis=-1 of params (here 2), not axis=1.
    params = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    indices = np.array([[3, 0], [1, 2]])
    out = pg.gather(params, indices, batch_dims=-1)
    assert_same(out, reference.ref_gather(params, indices, axis=2, batch_dims=1))
    with pytest.raises(ValueError, match="batch_dims must not exceed axis"):
        pg.gather(np.zeros((2, 3)), np.zeros((2, 2, 2), dtype=int), batch_dims=-1)


def test_wrap_reduces_huge_unsigned_values_exactly():
    x = np.arange(1, 7).reshape(2, 3)
    out = pg.gather(x, np.array([0, 2**64 - 1], dtype=np.uint64), axis=1, bad_indices="wrap")
    assert out.tolist() == [[1, (2**64 - 1) % 3 + 1], [4, (2**64 - 1) % 3 + 4]]
    out = pg.gather_nd(x, np.array([[2**64 - 1, 2**64 - 2]], dtype=np.uint64), bad_indices="wrap")
    assert out.tolist() == [x[(2**64 - 1) % 2, (2**64 - 2) % 3]]


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex64])
def test_dropped_updates_raise_no_warning(reduce, dtype):
    # NumPy's scatter drops the updates of ignored index vectors into one element past the
    # data, where their sum or product must not overflow (NumPy would warn of it).
    big = np.finfo(dtype).max / 2
    data = np.ones(3, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = pg.scatter_nd(
            data, [[0], [5], [5], [5]], np.full(4, big, dtype=dtype), reduce=reduce,
            bad_indices="ignore",
        )  # fmt: skip
    np.testing.assert_array_equal(got, [big if reduce == "multiply" else big + 1, 1, 1])
