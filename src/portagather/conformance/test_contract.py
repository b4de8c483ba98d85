"""The contract (docs/contract.md): every error, every policy, zero-size shapes, every dtype."""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import portagather as pg

from .backends import Backend
from .cases import (
    ALIASES,
    BAD,
    OPS,
    POLICIES,
    Call,
    ForeignArray,
    check_call,
    check_result,
    check_unchecked,
    raises_lazily,
)

M23 = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
M232 = np.arange(1, 13, dtype=np.int32).reshape(2, 3, 2)

# (id, call, exception, message pattern): docs/contract.md, "Errors" and "Bad indices".
ERRORS = [
    (
        "nd-float-indices",
        Call("gather_nd", M23, np.array([[0.0, 1.0]])),
        TypeError,
        "indices must have an integer dtype",
    ),
    (
        "nd-bool-indices",
        Call("gather_nd", M23, np.array([[True, False]])),
        TypeError,
        "indices must have an integer dtype",
    ),
    ("nd-0d-indices", Call("gather_nd", M23, np.array(0)), ValueError, "at least 1 dimension"),
    (
        "nd-batch_dims-too-big",
        Call("gather_nd", M232, np.zeros((2, 1), np.int64), {"batch_dims": 2}),
        ValueError,
        r"batch_dims.*got 2",
    ),
    (
        "nd-batch_dims-negative",
        Call("gather_nd", M232, np.zeros((2, 1), np.int64), {"batch_dims": -1}),
        ValueError,
        r"batch_dims.*got -1",
    ),
    (
        "nd-depth-too-big",
        Call("gather_nd", M23, np.zeros((1, 3), np.int64)),
        ValueError,
        r"index depth.*got 3",
    ),
    (
        "nd-batch-shape",
        Call("gather_nd", M232, np.zeros((3, 1), np.int64), {"batch_dims": 1}),
        ValueError,
        r"\(2,\).*\(3,\)",
    ),
    (
        "nd-unknown-policy",
        Call("gather_nd", M23, np.zeros((1, 2), np.int64), {"bad_indices": "bogus"}),
        ValueError,
        r"bad_indices must be one of.*'bogus'",
    ),
    (
        "nd-bad-index",
        Call("gather_nd", M23, np.array([[0, 0], [1, 3]])),
        IndexError,
        r"indices\[1\] = \[1, 3\]",
    ),
    (
        "nd-negative-index",
        Call("gather_nd", M23, np.array([[-1, 0]])),
        IndexError,
        r"indices\[0\] = \[-1, 0\]",
    ),
    ("g-float-indices", Call("gather", M23, np.array([0.5])), TypeError, "integer dtype"),
    ("g-axis", Call("gather", M23, np.array([0]), {"axis": 2}), ValueError, r"axis.*got 2"),
    (
        "g-batch_dims-over-axis",
        Call("gather", M23, np.zeros((2, 3), np.int64), {"axis": 1, "batch_dims": 2}),
        ValueError,
        r"batch_dims=2, axis=1",
    ),
    (
        "g-batch_dims-over-rank",
        Call("gather", M23, np.zeros((2,), np.int64), {"axis": 1, "batch_dims": 2}),
        ValueError,
        r"batch_dims.*got 2",
    ),
    (
        "g-batch-shape",
        Call("gather", M23, np.zeros((3, 1), np.int64), {"axis": 1, "batch_dims": 1}),
        ValueError,
        r"\(2,\).*\(3,\)",
    ),
    (
        "g-unknown-policy",
        Call("gather", M23, np.array([0]), {"bad_indices": "raise"}),
        ValueError,
        "bad_indices must be one of",
    ),
    ("g-negative-index", Call("gather", M23, np.array([0, -1])), IndexError, r"indices\[1\] = -1"),
    (
        "g-bad-index",
        Call("gather", M23, np.array([[0], [3]]), {"axis": 1}),
        IndexError,
        r"indices\[1, 0\] = 3",
    ),
    ("d-rank", Call("gather_d", M23, np.array([0]), {"dim": 0}), ValueError, "same rank"),
    (
        "d-dim",
        Call("gather_d", M23, np.zeros((2, 3), np.int64), {"dim": 2}),
        ValueError,
        r"dim.*got 2",
    ),
    (
        "d-index-too-big",
        Call("gather_d", M23, np.zeros((3, 1), np.int64), {"dim": 1}),
        ValueError,
        "must not exceed",
    ),
    (
        "d-bool-index",
        Call("gather_d", M23, np.zeros((2, 3), bool), {"dim": 1}),
        TypeError,
        "index must have an integer dtype",
    ),
    (
        "d-bad-index",
        Call("gather_d", M23, np.array([[0], [3]]), {"dim": 1}),
        IndexError,
        r"index\[1, 0\] = 3",
    ),
    (
        "d-bad-negative",
        Call("gather_d", M23, np.array([[0], [-4]]), {"dim": 1}),
        IndexError,
        r"index\[1, 0\] = -4",
    ),
    ("t-rank", Call("take_along_axis", M23, np.array([0]), {"axis": 0}), ValueError, "same rank"),
    (
        "t-axis",
        Call("take_along_axis", M23, np.zeros((2, 3), np.int64), {"axis": -3}),
        ValueError,
        r"axis.*got -3",
    ),
    (
        "t-broadcast",
        Call("take_along_axis", M23, np.zeros((3, 1), np.int64), {"axis": 1}),
        ValueError,
        "broadcast",
    ),
    (
        "t-float-indices",
        Call("take_along_axis", M23, np.zeros((2, 1)), {"axis": 1}),
        TypeError,
        "integer dtype",
    ),
    (
        "t-bad-index",
        Call("take_along_axis", M23, np.array([[0], [3]]), {"axis": 1}),
        IndexError,
        r"indices\[1, 0\] = 3",
    ),
    (
        "g-0d-bad-index",
        Call("gather", M23, np.array(5), {"axis": 1}),
        IndexError,
        r"^indices = 5 is out of range \[0, 3\) for axis 1",
    ),
]


@pytest.mark.cell("errors")
@pytest.mark.parametrize(
    ("op", "call", "error", "match"),
    [e[1:] for e in [(e[0], e[1].op, *e[1:]) for e in ERRORS]],
    ids=[e[0] for e in ERRORS],
)
def test_error(backend, repro, op, call, error, match):
    del op  # names the matrix row only
    info = raises_lazily(backend, error, repro(call), match)
    if error is IndexError:  # names the shape it does not fit
        assert "shape (2, 3)" in str(info.value)


# (id, data dtype, fill_value, error, message): docs/contract.md, "Bad indices": only
# scalars, and only values the data's dtype holds exactly.
FILL_ERRORS = [
    ("none", "int32", None, TypeError, r"fill_value must be a scalar.*got None"),
    ("list", "int32", [1], TypeError, r"fill_value must be a scalar.*got \[1\]"),
    ("tuple", "float32", (1.0,), TypeError, r"fill_value must be a scalar.*got \(1.0,\)"),
    ("array-1", "int32", np.array([1]), ValueError, r"fill_value.*array of shape \(1,\)"),
    ("300-int8", "int8", 300, ValueError, r"fill_value=300 cannot be held.*int8"),
    ("neg-uint8", "uint8", -1, ValueError, r"fill_value=-1 cannot be held.*uint8"),
    ("half-int32", "int32", 0.5, ValueError, r"fill_value=0.5 cannot be held.*int32"),
    ("nan-int32", "int32", float("nan"), ValueError, r"fill_value=nan cannot be held.*int32"),
    ("inf-int32", "int32", float("inf"), ValueError, r"fill_value=inf cannot be held.*int32"),
    ("2**63-int32", "int32", 2**63, ValueError, r"fill_value=9223372036854775808 cannot"),
    ("2**70-float32", "float32", 1e300, ValueError, r"fill_value=1e\+300 cannot.*float32"),
    ("str-int32", "int32", "x", ValueError, r"fill_value='x' cannot be held.*int32"),
    ("2-bool", "bool", 2, ValueError, r"fill_value=2 cannot be held.*bool"),
    ("complex-float32", "float32", 1j, ValueError, r"fill_value=1j cannot be held.*float32"),
    ("2**1030-float32", "float32", 2**1030, ValueError, r"fill_value=\d+ cannot be held.*float32"),
    ("2**24+1-float32", "float32", 2**24 + 1, ValueError, r"fill_value=16777217 cannot be held"),
]


@pytest.mark.cell("errors")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    ("dtype", "fill_value", "error", "match"),
    [f[1:] for f in FILL_ERRORS],
    ids=[f[0] for f in FILL_ERRORS],
)
def test_fill_value_rules(backend, repro, op, dtype, fill_value, error, match):
    base = BAD[op]
    kwargs = {**base.kwargs, "bad_indices": "ignore", "fill_value": fill_value}
    call = repro(Call(op, base.data.astype(dtype), base.indices, kwargs))
    with pytest.raises(error, match=match):
        call.run(backend)


# (data dtype, fill_value, the value it fills with): what the dtype holds exactly is accepted.
FILL_ACCEPTED = [
    ("int8", -128, -128), ("uint8", 255, 255), ("int32", 7.0, 7), ("float32", 0.1, 0.1),
    ("float32", float("-inf"), float("-inf")), ("bool", True, True), ("int32", np.int64(-3), -3),
    ("float32", np.array(2.5), 2.5), ("int8", 1 + 0j, 1), ("float32", 2**24, 2**24),
]  # fmt: skip


@pytest.mark.cell("policy:ignore")
@pytest.mark.parametrize(("dtype", "fill_value", "filled"), FILL_ACCEPTED)
def test_fill_value_accepted(backend, repro, dtype, fill_value, filled):
    index = np.array([[0, 5], [-4, 1]])  # 5 and -4 are bad for an axis of 3
    kwargs = {"dim": 1, "bad_indices": "ignore", "fill_value": fill_value}
    call = repro(Call("gather_d", M23.astype(dtype), index, kwargs))
    out, _ = call.run(backend)
    expected = M23.astype(dtype)[[[0, 0], [1, 1]], [[0, 0], [0, 1]]]
    expected[[0, 1], [1, 0]] = np.asarray(filled, dtype=dtype)
    values = backend.to_numpy(out)
    assert values.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(values, expected)


@pytest.mark.cell("errors")
@pytest.mark.parametrize("op", OPS)
def test_two_namespaces(backend, op):
    data = backend.asarray(M23)
    other = ForeignArray() if backend.name == "numpy" else np.zeros((2, 1), np.int64)
    args = (data, 1, other) if op == "gather_d" else (data, other)
    with pytest.raises(TypeError, match="one namespace"):
        getattr(pg, op)(*args)


# One call per operation with negative, past-the-end and valid indices.
def _check_policy(backend: Backend, call: Call) -> None:
    if call.kwargs["bad_indices"] == "unchecked":
        call.kwargs["fill_value"] = -7
        return check_unchecked(backend, call)
    check_call(backend, call)


@pytest.mark.cell("policy:{policy}")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("op", OPS)
def test_policy(backend, repro, op, policy):
    base = BAD[op]
    kwargs = {**base.kwargs, "bad_indices": policy, "fill_value": -1}
    _check_policy(backend, repro(Call(op, base.data, base.indices, kwargs)))


@pytest.mark.cell("policy aliases")
@pytest.mark.parametrize("policy", ALIASES)
@pytest.mark.parametrize("op", OPS)
def test_policy_alias(backend, repro, op, policy):
    base = BAD[op]
    call = repro(Call(op, base.data, base.indices, {**base.kwargs, "bad_indices": policy}))
    _check_policy(backend, call)


Z = np.zeros
ZERO_SIZE = [
    ("nd-empty-grid", Call("gather_nd", M23, Z((0, 2), np.int64))),
    ("nd-empty-slices", Call("gather_nd", Z((2, 0), np.int32), np.array([[1]]))),
    ("nd-empty-params-empty-grid", Call("gather_nd", Z((0, 3), np.int32), Z((0, 1), np.int64))),
    ("nd-into-empty-axis", Call("gather_nd", Z((0, 3), np.int32), np.array([[0]]))),
    ("nd-depth-0", Call("gather_nd", M23, Z((4, 0), np.int64))),
    ("g-empty-slices", Call("gather", Z((3, 0), np.int32), np.array([2, 0]))),
    ("g-empty-indices", Call("gather", M23, Z((0,), np.int64), {"axis": 1})),
    ("g-into-empty-axis", Call("gather", Z((0, 2), np.int32), np.array([0]))),
    ("d-empty-index", Call("gather_d", Z((2, 0), np.int32), Z((1, 0), np.int64), {"dim": 0})),
    ("d-into-empty-axis", Call("gather_d", Z((2, 0), np.int32), Z((2, 1), np.int64), {"dim": 1})),
    ("t-empty-indices", Call("take_along_axis", M23, Z((2, 0), np.int64), {"axis": 1})),
    (
        "t-into-empty-axis",
        Call("take_along_axis", Z((0, 3), np.int32), Z((2, 3), np.int64), {"axis": 0}),
    ),
]


@pytest.mark.cell("zero-size")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("op", "call"), [(c.op, c) for _, c in ZERO_SIZE], ids=[i for i, _ in ZERO_SIZE]
)
def test_zero_size(backend, repro, op, call, policy):
    call = repro(Call(op, call.data, call.indices, {**call.kwargs, "bad_indices": policy}))
    check_call(backend, call)


def _typed(values: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "str":
        return np.array([f"s{v}" for v in values.ravel()]).reshape(values.shape)
    if dtype.startswith("complex"):
        return (values + 1j * values[::-1]).astype(dtype)
    return (values % 2 if dtype == "bool" else values).astype(dtype)


@pytest.mark.cell("dtypes")
@pytest.mark.per_dtype("data")
@pytest.mark.parametrize("op", OPS)
def test_data_dtype(backend, repro, op, dtype):
    base = BAD[op]
    data = _typed(base.data, dtype)
    fill = "z" if dtype == "str" else 1
    for kwargs in ({"bad_indices": "ignore"}, {"bad_indices": "ignore", "fill_value": fill}):
        call = repro(Call(op, data, base.indices, {**base.kwargs, **kwargs}))
        out, data_array = call.run(backend)
        check_result(backend, out, call.expected(), data_array)


@pytest.mark.cell("index dtypes")
@pytest.mark.per_dtype("index")
@pytest.mark.parametrize("op", OPS)
def test_index_dtype(backend, repro, op, dtype):
    base = BAD[op]
    # The largest value as an array of its dtype: NumPy 2.5 refuses a Python uint64 beside
    # the int64 indices in where().
    largest = np.array(np.iinfo(dtype).max, dtype=dtype)
    indices = np.where(base.indices < 0, largest, base.indices.astype(dtype))
    for policy in ("ignore", "wrap", "clip"):
        call = repro(Call(op, base.data, indices, {**base.kwargs, "bad_indices": policy}))
        out, data_array = call.run(backend)
        check_result(backend, out, call.expected(), data_array)


@pytest.mark.cell("inputs")
@pytest.mark.parametrize("op", OPS)
def test_index_lists_and_inputs_unchanged(backend, repro, op):
    base = BAD[op]
    call = repro(Call(op, base.data, base.indices.tolist(), {**base.kwargs, "bad_indices": "wrap"}))
    data = backend.asarray(call.data)
    indices = backend.asarray(base.indices)
    args, kwargs = call.args(data, indices)
    out = getattr(pg, op)(*args, **kwargs)
    check_result(backend, out, call.expected(), data)
    assert np.array_equal(backend.to_numpy(data), base.data)
    assert np.array_equal(backend.to_numpy(indices), base.indices)
    out, data = call.run(backend, as_lists=True)  # Python lists take params' namespace
    check_result(backend, out, call.expected(), data)


@pytest.mark.cell("inputs")
@pytest.mark.only("numpy")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.usefixtures("backend")
def test_all_lists(repro, op):
    base = BAD[op]
    call = repro(Call(op, base.data, base.indices, {**base.kwargs, "bad_indices": "clip"}))
    args, kwargs = call.args(base.data.tolist(), base.indices.tolist())
    out = getattr(pg, op)(*args, **kwargs)
    assert isinstance(out, np.ndarray)
    assert np.array_equal(out, call.expected())


# (front end, call, expected): a NumPy integer axis, dim or batch_dims means what the Python
# int means in every compat front end (docs/contract.md, "Public functions").
def _compat_calls() -> list[tuple[str, Callable[[Backend], Any], npt.NDArray[Any]]]:
    from portagather.compat import mindspore, onnx, tensorflow, torch

    minus_one, one = np.int64(-1), np.int64(1)
    first_last, rows = np.array([0, -1]), np.array([[-1], [0]])
    return [
        ("mindspore.gather", lambda b: mindspore.gather(b.asarray(M23), b.asarray(first_last),
                                                        minus_one), M23[:, [0, 2]]),
        ("onnx.gather", lambda b: onnx.gather(b.asarray(M23), b.asarray(first_last),
                                              axis=minus_one), M23[:, [0, 2]]),
        ("onnx.gather_nd", lambda b: onnx.gather_nd(b.asarray(M232), b.asarray(rows),
                                                    batch_dims=one), M232[[0, 1], [2, 0]]),
        ("torch.gather", lambda b: torch.gather(b.asarray(M23), minus_one,
                                                b.asarray(np.array([[0], [2]]))),
         np.array([[1], [6]], np.int32)),
        ("tensorflow.gather", lambda b: tensorflow.gather(b.asarray(M23),
                                                          b.asarray(np.array([2, 0])),
                                                          axis=minus_one), M23[:, [2, 0]]),
    ]  # fmt: skip


@pytest.mark.cell("inputs")
@pytest.mark.parametrize("front_end", range(5), ids=lambda k: _compat_calls()[k][0])
def test_compat_numpy_integer_arguments(backend, front_end):
    _, call, expected = _compat_calls()[front_end]
    np.testing.assert_array_equal(backend.to_numpy(call(backend)), expected)


# Index values past int64 (Python ints) or past 2**63 (uint64): out of range for every array,
# under every policy (docs/contract.md, "Bad indices": unsigned values are never negative).
# gather along an axis of 3: 2**63 % 3 == 2, (2**64 - 1) % 3 == 0, 7 % 3 == 1.
HUGE = [2**63, 1, 2**64 - 1, 7]
HUGE_EXPECTED = {
    "ignore": [-7, 1, -7, -7], "clip": [2, 1, 2, 2], "wrap": [2, 1, 0, 1], "unchecked": None,
}  # fmt: skip


@pytest.mark.cell("index dtypes")
@pytest.mark.parametrize("as_list", [True, False], ids=["list", "uint64"])
@pytest.mark.parametrize("policy", POLICIES)
def test_huge_unsigned_indices(backend, policy, as_list):
    if not as_list and "uint64" not in backend.index_dtypes:
        pytest.xfail(f"{backend.name} holds no uint64 here")
    indices = HUGE if as_list else backend.asarray(np.array(HUGE, dtype=np.uint64))
    call = lambda: pg.gather(  # noqa: E731
        backend.asarray(M23), indices, axis=1, bad_indices=policy, fill_value=-7
    )
    if policy == "error":
        with pytest.raises(IndexError, match=r"^indices\[0\] = 9223372036854775808 is out of"):
            backend.to_numpy(call())
        return
    values = backend.to_numpy(call())
    if policy == "unchecked":
        assert values.shape == (2, 4) and np.isin(values, M23).all()
        return
    columns = HUGE_EXPECTED[policy]
    assert columns is not None  # None only for "unchecked", which returned above
    expected = np.array([[row[i] if i >= 0 else -7 for i in columns] for row in M23])
    np.testing.assert_array_equal(values, expected)


@pytest.mark.cell("inputs")
def test_masked_indices_are_refused(backend):
    masked = np.ma.masked_array([0, 5], mask=[False, True])
    with pytest.raises(TypeError, match=r"indices must not be a NumPy masked array"):
        pg.gather(backend.asarray(M23), masked, axis=1)


@pytest.mark.cell("zero-size")
@pytest.mark.parametrize("op", ["gather", "gather_d"])
def test_index_into_an_empty_axis_says_so(backend, repro, op):
    data = np.zeros((2, 0), dtype=np.int32)
    index = np.zeros((2, 1), dtype=np.int64)
    kwargs = {"axis": 1} if op == "gather" else {"dim": 1}
    call = repro(Call(op, data, index, kwargs))
    name = "indices" if op == "gather" else "index"
    match = rf"^{name} addresses an axis of length 0 of \w+ of shape \(2, 0\); there is nothing"
    raises_lazily(backend, IndexError, call, match)


# Python ints past every integer dtype (2**64, -2**70), or past the widest one of the data's
# device (2**40 where JAX runs without jax_enable_x64): out of range for every array, under
# every policy, as any other bad index (docs/contract.md, "Bad indices"). Expected values by
# Python's own arithmetic: along an axis of 3, clip takes them to an edge and wrap to their
# true remainder.
BEYOND = [[1, 2**64], [-(2**70), 2**40], [2**63 + 5, 0]]


@pytest.mark.cell("index dtypes")
@pytest.mark.parametrize("policy", POLICIES)
def test_index_list_past_every_integer_dtype(backend, policy):
    call = lambda: pg.gather(  # noqa: E731
        backend.asarray(M23), BEYOND, axis=1, bad_indices=policy, fill_value=-7
    )
    if policy == "error":  # the first bad index, as written
        with pytest.raises(IndexError, match=r"^indices\[0, 1\] = 18446744073709551616 is out"):
            backend.to_numpy(call())
        return
    values = backend.to_numpy(call())
    assert values.shape == (2, 3, 2)
    if policy == "unchecked":
        assert np.isin(values, M23).all()
        return
    for (i, j), v in np.ndenumerate(np.array(BEYOND, dtype=object)):
        if policy == "ignore":
            column = [-7, -7] if not 0 <= v < 3 else list(M23[:, v])
        else:
            k = min(max(v, 0), 2) if policy == "clip" else v % 3
            column = list(M23[:, k])
        assert list(values[:, i, j]) == column, (i, j, v)


@pytest.mark.cell("errors")
@pytest.mark.parametrize("policy", ["error", "clip", "wrap", "unchecked"])
def test_fill_value_is_checked_under_every_policy(backend, policy):
    """A fill value that cannot be used is refused even when nothing is filled."""
    with pytest.raises(TypeError, match=r"fill_value must be a scalar.*got None"):
        pg.gather(backend.asarray(M23), [0], axis=1, bad_indices=policy, fill_value=None)


@pytest.mark.cell("inputs")
def test_ragged_index_list_is_refused(backend):
    with pytest.raises(ValueError, match=r"^indices must be an array or a rectangular nested"):
        pg.gather_nd(backend.asarray(M23), [[1], [0, 2]])
