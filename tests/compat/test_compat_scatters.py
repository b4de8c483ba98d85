"""The compat scatters: the examples of the imitated libraries' documentation pages with their
documented outputs (on every backend), and the compat modules' errors and conventions."""

from __future__ import annotations

import numpy as np
import pytest

from portagather.compat import mindspore as ms_compat
from portagather.compat import onnx as onnx_compat
from portagather.compat import tensorflow as tf_compat
from portagather.compat import torch as torch_compat
from portagather.conformance.backends import load_backend

ROWS = [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]
ZERO_BLOCK = [[0] * 4] * 4
ONNX_DATA = [
    [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
    [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
    [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
    [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
]
ONNX_UPDATES = [[[5] * 4, [6] * 4, [7] * 4, [8] * 4], ROWS]

A = np.asarray


def _f(values):
    return A(values, dtype=np.float32)


# (module, function, args, kwargs, documented output). Class forms are (class, ctor args).
DOC_EXAMPLES = [
    # tf.scatter_nd
    (tf_compat, "scatter_nd", (A([[4], [3], [1], [7]]), A([9, 10, 11, 12]), [8]), {},
     A([0, 11, 0, 10, 9, 0, 0, 12])),
    (tf_compat, "scatter_nd", (A([[0], [2]]), A([ROWS, ROWS]), [4, 4, 4]), {},
     A([ROWS, ZERO_BLOCK, ROWS, ZERO_BLOCK])),
    # tf.tensor_scatter_nd_update / _add / _sub / _min / _max
    (tf_compat, "tensor_scatter_nd_update",
     (A([0] * 8), A([[1], [3], [4], [7]]), A([9, 10, 11, 12])), {},
     A([0, 9, 0, 10, 11, 0, 0, 12])),
    (tf_compat, "tensor_scatter_nd_add",
     (A([1, 2, 3, 4, 5, 6, 7, 8]), A([[4], [3], [1], [7]]), A([9, 10, 11, 12])), {},
     A([1, 13, 3, 14, 14, 6, 7, 20])),
    (tf_compat, "tensor_scatter_nd_sub",
     (A([1, 2, 3, 4, 5, 6, 7, 8]), A([[4], [3], [1], [7]]), A([9, 10, 11, 12])), {},
     A([1, -9, 3, -6, -4, 6, 7, -4])),
    (tf_compat, "tensor_scatter_nd_min", (A([0] * 8), A([[1], [4], [5]]), A([1, -1, 1])), {},
     A([0, 0, 0, 0, -1, 0, 0, 0])),
    (tf_compat, "tensor_scatter_nd_max", (A([0] * 8), A([[1], [4], [5]]), A([1, -1, 1])), {},
     A([0, 1, 0, 0, 0, 1, 0, 0])),
    # ops.ScatterNd / ops.scatter_nd
    (ms_compat, ("ScatterNd", ()), (A([[0], [2]]), _f([ROWS, ROWS]), (4, 4, 4)), {},
     _f([ROWS, ZERO_BLOCK, ROWS, ZERO_BLOCK])),
    (ms_compat, ("ScatterNd", ()), (A([[0, 1], [1, 1]]), _f([3.2, 1.1]), (3, 3)), {},
     _f([[0, 3.2, 0], [0, 1.1, 0], [0, 0, 0]])),
    (ms_compat, "scatter_nd", (A([[0, 1], [1, 1]]), _f([3.2, 1.1]), (3, 3)), {},
     _f([[0, 3.2, 0], [0, 1.1, 0], [0, 0, 0]])),
    # ops.TensorScatterElements / ops.tensor_scatter_elements
    (ms_compat, ("TensorScatterElements", (0, "none")),
     (_f([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), A([[1, 0, 2], [0, 2, 1]]), _f([[0, 0, 0]] * 2)), {},
     _f([[0, 0, 3], [0, 5, 0], [7, 0, 0]])),
    (ms_compat, ("TensorScatterElements", (1, "add")),
     (_f([[1, 2, 3, 4, 5]]), A([[2, 4]]), _f([[8, 8]])), {}, _f([[1, 2, 11, 4, 13]])),
    (ms_compat, "tensor_scatter_elements",
     (_f([[1, 2, 3, 4, 5]]), A([[2, 4]]), _f([[8, 8]])), {"axis": 1, "reduction": "add"},
     _f([[1, 2, 11, 4, 13]])),
    # ONNX ScatterND
    (onnx_compat, "scatter_nd",
     (A([1, 2, 3, 4, 5, 6, 7, 8]), A([[4], [3], [1], [7]]), A([9, 10, 11, 12])), {},
     A([1, 11, 3, 10, 9, 6, 7, 12])),
    (onnx_compat, "scatter_nd", (A(ONNX_DATA), A([[0], [2]]), A(ONNX_UPDATES)), {},
     A([ONNX_UPDATES[0], ONNX_DATA[1], ONNX_UPDATES[1], ONNX_DATA[3]])),
    # ONNX ScatterElements
    (onnx_compat, "scatter_elements",
     (_f([[0, 0, 0]] * 3), A([[1, 0, 2], [0, 2, 1]]), _f([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]])),
     {}, _f([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]])),
    (onnx_compat, "scatter_elements", (_f([[1, 2, 3, 4, 5]]), A([[1, 3]]), _f([[1.1, 2.1]])),
     {"axis": 1}, _f([[1.0, 1.1, 3.0, 2.1, 5.0]])),
    (onnx_compat, "scatter_elements", (_f([[1, 2, 3, 4, 5]]), A([[1, -3]]), _f([[1.1, 2.1]])),
     {"axis": 1}, _f([[1.0, 1.1, 2.1, 4.0, 5.0]])),
    (onnx_compat, "scatter_elements", (_f([[1, 2, 3, 4, 5]]), A([[1, 1]]), _f([[1.1, 2.1]])),
     {"axis": 1, "reduction": "add"}, _f([[1.0, 5.2, 3.0, 4.0, 5.0]])),
    (onnx_compat, "scatter_elements", (_f([[1, 2, 3, 4, 5]]), A([[1, 1]]), _f([[1.1, 2.1]])),
     {"axis": 1, "reduction": "max"}, _f([[1.0, 2.1, 3.0, 4.0, 5.0]])),
    (onnx_compat, "scatter_elements", (_f([[1, 2, 3, 4, 5]]), A([[1, 1]]), _f([[1.1, 2.1]])),
     {"axis": 1, "reduction": "min"}, _f([[1.0, 1.1, 3.0, 4.0, 5.0]])),
    # torch.Tensor.scatter_ (out of place here), scatter_add_, scatter_reduce
    (torch_compat, "scatter",
     (A([[0] * 5] * 3), 0, A([[0, 1, 2, 0]]), A(np.arange(1, 11).reshape(2, 5))), {},
     A([[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]])),
    (torch_compat, "scatter",
     (A([[0] * 5] * 3), 1, A([[0, 1, 2], [0, 1, 4]]), A(np.arange(1, 11).reshape(2, 5))), {},
     A([[1, 2, 3, 0, 0], [6, 7, 0, 0, 8], [0, 0, 0, 0, 0]])),
    (torch_compat, "scatter", (_f([[2.0] * 4] * 2), 1, A([[2], [3]]), 1.23),
     {"reduce": "multiply"}, _f([[2.0, 2.0, 2.46, 2.0], [2.0, 2.0, 2.0, 2.46]])),
    (torch_compat, "scatter", (_f([[2.0] * 4] * 2), 1, A([[2], [3]])),
     {"value": 1.23, "reduce": "add"}, _f([[2.0, 2.0, 3.23, 2.0], [2.0, 2.0, 2.0, 3.23]])),
    (torch_compat, "scatter_add", (_f([[0] * 5] * 3), 0, A([[0, 1, 2, 0, 0]]), _f([[1] * 5] * 2)),
     {}, _f([[1, 0, 0, 1, 1], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]])),
    (torch_compat, "scatter_add",
     (_f([[0] * 5] * 3), 0, A([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]]), _f([[1] * 5] * 2)),
     {}, _f([[2, 0, 0, 1, 1], [0, 2, 0, 0, 0], [0, 0, 2, 1, 1]])),
    (torch_compat, "scatter_reduce",
     (_f([1, 2, 3, 4]), 0, A([0, 1, 0, 1, 2, 1]), _f([1, 2, 3, 4, 5, 6]), "sum"), {},
     _f([5, 14, 8, 4])),
    (torch_compat, "scatter_reduce",
     (_f([1, 2, 3, 4]), 0, A([0, 1, 0, 1, 2, 1]), _f([1, 2, 3, 4, 5, 6]), "sum"),
     {"include_self": False}, _f([4, 12, 5, 4])),
    (torch_compat, "scatter_reduce",
     (_f([5, 4, 3, 2]), 0, A([0, 1, 0, 1, 2, 1]), _f([1, 2, 3, 4, 5, 6]), "amax"), {},
     _f([5, 6, 5, 2])),
    (torch_compat, "scatter_reduce",
     (_f([5, 4, 3, 2]), 0, A([0, 1, 0, 1, 2, 1]), _f([1, 2, 3, 4, 5, 6]), "amax"),
     {"include_self": False}, _f([3, 6, 5, 2])),
]  # fmt: skip


def _function(module, name):
    if isinstance(name, tuple):
        cls, init = name
        return getattr(module, cls)(*init)
    return getattr(module, name)


def _ids():
    for module, name, *_ in DOC_EXAMPLES:
        label = name[0] if isinstance(name, tuple) else name
        yield f"{module.__name__.rsplit('.', 1)[-1]}.{label}"


@pytest.mark.parametrize(
    ("module", "name", "args", "kwargs", "documented"), DOC_EXAMPLES, ids=list(_ids())
)
def test_documented_example(backend, module, name, args, kwargs, documented):
    converted = [backend.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    out = _function(module, name)(*converted, **kwargs)
    got = backend.to_numpy(out)
    assert got.shape == documented.shape
    if documented.dtype.kind == "f":
        np.testing.assert_allclose(got, documented, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, documented)


# -- errors and conventions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: tf_compat.tensor_scatter_nd_add(np.zeros(3), [[3]], [1.0]), IndexError,
         r"^indices\[0\] = \[3\] does not index into tensor of shape \(3,\)$"),
        (lambda: tf_compat.tensor_scatter_nd_update(np.zeros(3, np.int8), [[1]], np.array([1])),
         TypeError, "updates must have a dtype that casts safely to tensor.dtype = int8"),
        (lambda: tf_compat.scatter_nd([[5]], [1], [3]), IndexError,
         r"^indices\[0\] = \[5\] does not index into shape \(3,\)$"),
        (lambda: tf_compat.scatter_nd([[1, 1]], [1], [3]), ValueError,
         r"must be at most len\(shape\)"),
        (lambda: tf_compat.scatter_nd([[1]], [1], [-3]), ValueError, "no negative sizes"),
        (lambda: tf_compat.scatter_nd([[1]], [1], "ab"), TypeError, "shape must be a sequence"),
        (lambda: tf_compat.tensor_scatter_nd_min(np.zeros(3), [[1]], [1.0], bad_indices_policy="clip"),
         ValueError, "bad_indices_policy must be one of"),
        (lambda: ms_compat.tensor_scatter_elements(np.zeros((2, 3)), np.array([[3]]), np.ones((1, 1)), 1),
         IndexError, r"^indices\[0, 0\] = 3 is out of range \[-3, 3\) for axis 1 of input_x "),
        (lambda: ms_compat.TensorScatterElements(2)(np.zeros((2, 3)), np.array([[0]]), np.ones((1, 1))),
         ValueError, r"axis must be in \[-input_x.ndim, input_x.ndim\)"),
        (lambda: ms_compat.TensorScatterElements(0, "mul"), ValueError,
         'reduction must be "none" or "add"'),
        (lambda: ms_compat.ScatterNd()(np.array([[-1]]), np.ones(1), (3,)), IndexError,
         r"indices\[0\] = \[-1\] does not index into shape \(3,\)"),
        (lambda: onnx_compat.scatter_elements(np.zeros(3), np.array([0]), np.ones(1), reduction="sum"),
         ValueError, "reduction must be one of 'none', 'add', 'mul', 'max', 'min'"),
        (lambda: onnx_compat.scatter_elements(np.zeros(3), np.array([3]), np.ones(1)), IndexError,
         r"^indices\[0\] = 3 is out of range \[-3, 3\) for axis 0 of data of shape \(3,\)$"),
        (lambda: onnx_compat.scatter_nd(np.zeros(3), np.array([[-4]]), np.ones(1)), IndexError,
         "does not index into data of shape"),
        (lambda: onnx_compat.scatter_nd(np.zeros(3), np.array([[0]]), np.ones(2)), ValueError,
         r"^updates.shape must be \(1,\); got \(2,\)$"),
        (lambda: torch_compat.scatter(np.zeros((2, 3)), 1, np.array([[0, -1]]), np.ones((1, 2))),
         IndexError, r"^index -1 is out of bounds for dimension 1 with size 3$"),
        (lambda: torch_compat.scatter_add(np.zeros((2, 3)), 1, np.array([[3]]), np.ones((1, 1))),
         IndexError, r"^index 3 is out of bounds for dimension 1 with size 3$"),
        (lambda: torch_compat.scatter(np.zeros((2, 3)), 3, np.array([[0]]), value=1), ValueError,
         r"dim must be in \[-input.ndim, input.ndim\)"),
        (lambda: torch_compat.scatter(np.zeros(3), 0, np.array([0]), np.ones(1), reduce="sum"),
         ValueError, "reduce argument must be either add or multiply"),
        (lambda: torch_compat.scatter(np.zeros(3), 0, np.array([0]), np.ones(1), value=2),
         TypeError, "src or value, not both"),
        (lambda: torch_compat.scatter(np.zeros(3), 0, np.array([0])), TypeError,
         "missing src or value"),
        (lambda: torch_compat.scatter_reduce(np.zeros(3), 0, np.array([0]), np.ones(1), "max"),
         ValueError, "reduce must be one of 'sum', 'prod', 'amax', 'amin', 'mean'"),
        (lambda: torch_compat.scatter_reduce(np.zeros(3, bool), 0, np.array([0]),
                                             np.ones(1, bool), "mean"),
         TypeError, r'reduce="mean" needs input of a numeric dtype; got bool'),
        (lambda: torch_compat.scatter(np.zeros((2, 2)), 0, np.array([[0, 1]]), np.ones(2)),
         ValueError, r"^src.shape must be at least \(1, 2\)"),
    ],
)  # fmt: skip
def test_errors_name_the_compat_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_tensorflow_policies_on_scatters():
    tensor, indices, updates = np.zeros(4, np.int32), [[1], [9], [1]], np.array([5, 6, 7], np.int32)
    for policy in ("", "DEFAULT", "ERROR"):
        with pytest.raises(IndexError):
            tf_compat.tensor_scatter_nd_max(tensor, indices, updates, bad_indices_policy=policy)
    got = tf_compat.tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got, [0, 12, 0, 0])
    got = tf_compat.scatter_nd(indices, updates, [4], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got, [0, 12, 0, 0])
    with pytest.raises(TypeError):  # as in TensorFlow: no bad_indices_policy here
        tf_compat.tensor_scatter_nd_update(tensor, indices, updates, bad_indices_policy="IGNORE")


def test_tensorflow_default_policy_skips_under_jit():
    import jax

    jnp = jax.numpy
    f = jax.jit(lambda t, i, u: tf_compat.tensor_scatter_nd_update(t, i, u))
    out = f(jnp.zeros(3, jnp.int32), jnp.array([[1], [7]]), jnp.array([4, 5], jnp.int32))
    np.testing.assert_array_equal(np.asarray(out), [0, 4, 0])


def test_tensorflow_sub_negates_in_the_tensor_dtype():
    # int8 -128 negated in int8 stays -128; in the int32 tensor's dtype it is 128.
    got = tf_compat.tensor_scatter_nd_sub(np.zeros(2, np.int32), [[0]], np.array([-128], np.int8))
    np.testing.assert_array_equal(got, [128, 0])
    got = tf_compat.tensor_scatter_nd_sub(np.zeros(2, np.uint8), [[1]], np.array([1], np.uint8))
    np.testing.assert_array_equal(got, [0, 255])
    got = tf_compat.tensor_scatter_nd_sub([1, 2], [[0]], [5])  # lists, as TensorFlow takes
    np.testing.assert_array_equal(got, [-4, 2])


@pytest.mark.parametrize("name", ["numpy", "torch", "jax", "dask"])
def test_scatter_nd_zeros_follow_updates(name):
    backend = load_backend(name)
    updates = backend.asarray(np.array([1.5, 2.5], np.float32))
    for out in (
        tf_compat.scatter_nd(backend.asarray(np.array([[1], [1]])), updates, np.array([3])),
        ms_compat.ScatterNd()(backend.asarray(np.array([[1], [1]])), updates, (3,)),
    ):
        assert type(out) is type(updates)
        got = backend.to_numpy(out)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, [0, 4, 0])


def test_duplicates_under_update_keep_the_last():
    index = np.array([[0, 0, 0]])
    src = np.array([[1, 2, 3]])
    want = [[3, 0, 0]]
    np.testing.assert_array_equal(torch_compat.scatter(np.zeros((1, 3), int), 1, index, src), want)
    np.testing.assert_array_equal(
        ms_compat.tensor_scatter_elements(np.zeros((1, 3), int), index, src, axis=1), want
    )
    np.testing.assert_array_equal(
        onnx_compat.scatter_elements(np.zeros((1, 3), int), index, src, axis=1), want
    )
    got = tf_compat.tensor_scatter_nd_update(np.zeros(2, int), [[1], [1], [0], [1]], [1, 2, 3, 4])
    np.testing.assert_array_equal(got, [3, 4])


def test_torch_scatter_negatives_rejected_lazily_on_dask():
    import dask.array as da

    x = da.from_array(np.zeros((2, 3)), chunks=1)
    out = torch_compat.scatter(x, 1, da.from_array(np.array([[0, -1]])), value=1.0)
    with pytest.raises(IndexError):
        out.compute()


def test_torch_scatter_reduce_mean_floors_integers():
    got = torch_compat.scatter_reduce(
        np.array([7, 7]), 0, np.array([0, 0]), np.array([-1, -2]), "mean"
    )
    np.testing.assert_array_equal(got, [1, 7])  # (7 - 1 - 2) // 3
    got = torch_compat.scatter_reduce(
        np.array([7, 7]), 0, np.array([0, 0]), np.array([-1, -2]), "mean", include_self=False
    )
    np.testing.assert_array_equal(got, [-2, 7])  # -3 // 2, as PyTorch's floor division


# PyTorch's index_select, index_add, index_reduce and index_put: one checked call each, in
# the documented order (options, kinds, shapes, dtypes, values; docs/contract.md, "Errors").

_X34 = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # The dim's kind is an option, checked first, as torch.gather's is.
        (lambda: torch_compat.index_select(_X34, 1.0, np.array([0])), TypeError,
         r"^dim must be an int; got 1\.0$"),
        (lambda: torch_compat.index_add(_X34, True, np.array([0]), np.ones((3, 1))), TypeError,
         r"^dim must be an int; got True$"),
        # Shapes before dtypes: the dim's range and the index's rank before a float index.
        (lambda: torch_compat.index_select(_X34, 5, np.array([[0.5]])), ValueError,
         r"^dim must be an int in \[-input.ndim, input.ndim\) = \[-2, 2\); got 5$"),
        (lambda: torch_compat.index_select(_X34, 0, np.array([[0.5]])), ValueError,
         r"^index must be a vector \(1-d, or 0-d\); got shape \(1, 1\)$"),
        (lambda: torch_compat.index_add(_X34.astype(np.int32), 0, np.array([0.5]),
                                        np.ones(9, np.float32)), ValueError,
         r"^source.shape must be input.shape with len\(index\) = 1 along dim 0, \(1, 4\); "
         r"got \(9,\)$"),
        (lambda: torch_compat.index_reduce(_X34, 1, np.array([0, 1]), np.ones((3, 4)), "amax"),
         ValueError, r"^source.shape must be input.shape with len\(index\) = 2 along dim 1"),
        # The index arrays of index_put, and its values, checked by portagather itself.
        (lambda: torch_compat.index_put(_X34, (np.array([0, 2]), np.array([0, 1, 2])),
                                        np.ones(3)), ValueError,
         r"^indices must be arrays that broadcast together; got shapes \[\(2,\), \(3,\)\]$"),
        (lambda: torch_compat.index_put(_X34, (np.array([0, 2]),), np.ones((2, 3))), ValueError,
         r"^values.shape must be broadcastable to \(2, 4\); got \(2, 3\)$"),
        (lambda: torch_compat.index_put(np.zeros((0, 4)), (np.array([0]),), np.float64(1)),
         IndexError, r"only bad_indices=\"ignore\" \(which drops the values\)"),
        # A 0-d index given as a Python value is a vector of one: its dtype is checked.
        (lambda: torch_compat.index_add(_X34, 1, 1.0, np.ones((3, 1))), TypeError,
         r"^index must have an integer dtype; got float64$"),
        (lambda: torch_compat.index_reduce(_X34, 0, True, np.ones((1, 4)), "amax"), TypeError,
         r"^index must have an integer dtype; got bool$"),
        # Where no index is valid: PyTorch's words, no bad_indices the front end lacks.
        (lambda: torch_compat.index_select(np.zeros((0, 3)), 0, np.array([0])), IndexError,
         r"^index is out of bounds for dimension 0 with size 0: no index is valid into input "
         r"of shape \(0, 3\)$"),
        # An unsigned value past int64's largest is out of range, named as written (it
        # wrapped to a negative); index arrays whose dtypes promote to no integer are refused.
        (lambda: torch_compat.index_put(np.zeros((4, 2)), (np.array([2**64 - 1], np.uint64),),
                                        np.float64(5)), IndexError,
         r"^indices\[0\] = \[18446744073709551615\] does not index into input"),
        (lambda: torch_compat.index_put(np.zeros((4, 2)), (np.array([1], np.uint64),
                                                           np.array([1])), np.float64(5)),
         TypeError, r"^indices must be index arrays whose dtypes promote to an integer dtype; "
         r"got uint64, int64$"),
        # A bad index vector as the caller wrote it (PyTorch counts [-n, 0) from the end).
        (lambda: torch_compat.index_put(_X34, (np.array([-4, 0]),), np.ones((2, 4))), IndexError,
         r"^indices\[0\] = \[-4\] does not index into input of shape \(3, 4\)$"),
    ],
)  # fmt: skip
def test_torch_index_front_ends_check_in_the_documented_order(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda x, i, _: torch_compat.index_select(x, 0, i),
        lambda x, i, source: torch_compat.index_add(x, 0, i, source),
        lambda x, i, source: torch_compat.index_reduce(x, -2, i, source, "amin"),
    ],
)
def test_torch_index_errors_are_pytorchs_eagerly_and_lazily(call):
    # The plan's own range is PyTorch's, [0, n), and its report words a bad index as PyTorch
    # does: the first bad value as written (not moved below -n), in NumPy and in a Dask
    # graph alike.
    import dask.array as da

    message = r"^index -1 is out of bounds for dimension 0 with size 3$"
    index = np.array([0, -1, 7])
    with pytest.raises(IndexError, match=message):
        call(_X34, index, np.ones((3, 4)))
    x = da.from_array(_X34, chunks=2)
    out = call(x, da.from_array(index, chunks=1), da.ones((3, 4), chunks=1))
    with pytest.raises(IndexError, match=message):
        out.compute()


def test_torch_take_along_dim_flattens_dask_arrays_with_zero_size_chunks():
    import dask.array as da

    x = np.arange(12).reshape(3, 4)
    dx = da.from_array(x, chunks=((0, 1, 2), (0, 2, 2)))
    index = da.from_array(np.array([0, 11, 5]), chunks=((0, 3),))
    got = torch_compat.take_along_dim(dx, index).compute()
    np.testing.assert_array_equal(got, np.take(x, [0, 11, 5]))


def test_torch_index_put_refuses_unknown_dask_sizes_itself():
    import dask.array as da

    x = da.from_array(np.arange(12).reshape(3, 4), chunks=2)
    ids = da.from_array(np.array([0, 1, 2, 1]), chunks=2)
    with pytest.raises(ValueError, match=r"^indices must have known sizes; got shape \(nan,\)"):
        torch_compat.index_put(x, (ids[ids > 0],), 7)
