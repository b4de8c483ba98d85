"""Errors, policies and transformations of the compat modules."""

from __future__ import annotations

import numpy as np
import pytest

from portagather.compat import mindspore as ms_compat
from portagather.compat import onnx as onnx_compat
from portagather.compat import tensorflow as tf_compat
from portagather.compat import torch as torch_compat
from portagather.conformance.backends import load_backend


def test_tensorflow_policy_names():
    params = np.arange(4).reshape(2, 2)
    for policy in ("", "DEFAULT", "ERROR"):
        with pytest.raises(IndexError, match=r"indices\[1\] = \[2, 0\] does not index into"):
            tf_compat.gather_nd(params, [[0, 0], [2, 0]], bad_indices_policy=policy)
    out = tf_compat.gather_nd(params, [[0, 1], [2, 0]], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(out, [1, 0])
    with pytest.raises(ValueError, match="bad_indices_policy must be one of"):
        tf_compat.gather_nd(params, [[0, 0]], bad_indices_policy="clip")


def test_tensorflow_ignores_name_and_validate_indices():
    params = np.arange(6).reshape(2, 3)
    out = tf_compat.gather(params, [2], True, 1, 0, "g")
    np.testing.assert_array_equal(out, [[2], [5]])
    np.testing.assert_array_equal(tf_compat.gather_nd(params, [[1]], 0, "g"), [[3, 4, 5]])


def test_tensorflow_default_policy_is_ignore_under_jit():
    import jax

    params = jax.numpy.arange(6).reshape(2, 3)
    out = jax.jit(lambda p, i: tf_compat.gather(p, i, axis=1))(params, jax.numpy.array([2, 7]))
    np.testing.assert_array_equal(np.asarray(out), [[2, 0], [5, 0]])


@pytest.mark.parametrize("name", ["numpy", "jax", "torch"])
def test_torch_gather_rejects_negatives_eagerly(name):
    backend = load_backend(name)
    x, index = backend.asarray([[1, 2], [3, 4]]), backend.asarray([[0, -1]])
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 1 with size 2"):
        torch_compat.gather(x, 1, index)
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 0 with size 4"):
        torch_compat.take_along_dim(x, backend.asarray([0, -1]))


def test_torch_gather_rejects_negatives_lazily_on_dask():
    import dask.array as da

    x = da.from_array(np.array([[1, 2], [3, 4]]), chunks=1)
    out = torch_compat.gather(x, 1, da.from_array(np.array([[0, -1]]), chunks=1))
    with pytest.raises(
        IndexError, match=r"^index -1 is out of bounds for dimension 1 with size 2$"
    ):
        out.compute()


def test_torch_gather_rejects_negatives_under_checkify():
    import jax
    from jax.experimental import checkify

    f = checkify.checkify(jax.jit(lambda x, i: torch_compat.gather(x, 1, i)))
    x = jax.numpy.array([[1, 2], [3, 4]])
    error, _ = f(x, jax.numpy.array([[0, -1]]))
    assert error.get() is not None
    error, out = f(x, jax.numpy.array([[1, 0]]))
    assert error.get() is None
    np.testing.assert_array_equal(np.asarray(out), [[2, 1]])


def test_onnx_negatives_under_checkify_and_jit():
    import jax
    from jax.experimental import checkify

    f = checkify.checkify(jax.jit(lambda d, i: onnx_compat.gather_nd(d, i)))
    data = jax.numpy.arange(6).reshape(2, 3)
    error, out = f(data, jax.numpy.array([[-1, -3], [0, 2]]))
    assert error.get() is None
    np.testing.assert_array_equal(np.asarray(out), [3, 2])
    error, _ = f(data, jax.numpy.array([[-3, 0]]))
    assert error.get() is not None


def test_onnx_out_of_range_negative_is_an_index_error():
    with pytest.raises(IndexError):
        onnx_compat.gather(np.arange(3), np.array([-4]))
    with pytest.raises(IndexError):
        onnx_compat.gather_elements(np.arange(3), np.array([-4]))


def test_onnx_small_index_dtypes_do_not_overflow():
    data = np.arange(300)
    out = onnx_compat.gather(data, np.array([-1, 5], dtype=np.int8))
    np.testing.assert_array_equal(out, [299, 5])


def test_compat_misfits_raise_the_core_errors():
    with pytest.raises(ValueError, match="axis"):
        onnx_compat.gather(np.arange(3), np.array([0]), axis=3)
    with pytest.raises(ValueError, match="index depth"):
        onnx_compat.gather_nd(np.arange(3), np.array([[0, 0]]))
    with pytest.raises(TypeError, match="integer dtype"):
        onnx_compat.gather(np.arange(3), np.array([0.5]))


def test_torch_gather_names_pytorch_range_for_values_past_the_end():
    """torch.gather's valid range is [0, n): the message says what PyTorch says, not the
    core's [-n, n) of gather_d."""
    with pytest.raises(IndexError, match=r"^index 2 is out of bounds for dimension 1 with size 2$"):
        torch_compat.gather(np.array([[1, 2], [3, 4]]), 1, np.array([[0], [2]]))


@pytest.mark.parametrize("name", ["numpy", "torch", "dask"])
def test_torch_bad_index_is_the_first_in_order_on_every_backend(name):
    """The plan's range is PyTorch's and its report PyTorch's words: the first bad value in
    the order of the index, `dim` counted from 0, eagerly and in a Dask graph alike."""
    backend = load_backend(name)
    x = backend.asarray(np.array([[1, 2], [3, 4]]))
    message = r"^index 5 is out of bounds for dimension 1 with size 2$"
    computed = (lambda r: r.compute()) if name == "dask" else (lambda r: r)
    for call in (
        lambda: torch_compat.gather(x, -1, backend.asarray(np.array([[5, -1]]))),
        lambda: torch_compat.scatter_add(
            x, 1, backend.asarray(np.array([[0, 5, -1]])), backend.asarray(np.ones((1, 3), int))
        ),
        lambda: torch_compat.index_select(x, 1, backend.asarray(np.array([0, 5, -1]))),
    ):
        with pytest.raises(IndexError, match=message):
            computed(call())


def test_torch_gather_lazy_negatives_in_narrow_dtypes_stay_bad():
    """On Dask, a negative index is bad when the graph runs, named as written and as
    PyTorch words it (the plan's own range is PyTorch's [0, n), so no value is moved: an
    int8 -100 moved below -n would wrap to a valid 56)."""
    import dask.array as da

    x = da.from_array(np.arange(100), chunks=50)
    index = da.from_array(np.array([-100, -60], dtype=np.int8))
    with pytest.raises(
        IndexError, match=r"^index -100 is out of bounds for dimension 0 with size 100$"
    ):
        torch_compat.gather(x, 0, index).compute()


def test_torch_gather_takes_uint64_indices():
    import torch

    out = torch_compat.gather(torch.arange(10), 0, torch.tensor([3, 9], dtype=torch.uint64))
    assert out.tolist() == [3, 9]


@pytest.mark.parametrize("name", ["numpy", "dask", "torch"])
def test_compat_value_checks_follow_the_core_checks(name):
    """A front end's own check of index values (PyTorch's [0, n)) comes after the core's
    checks of kinds, shapes and dtypes: an index of the wrong rank with a negative value is
    the rank error on every backend (was PyTorch's IndexError where values can be read, the
    rank error on Dask)."""
    backend = load_backend(name)
    x, index = backend.asarray(np.arange(6).reshape(2, 3)), backend.asarray(np.array([-1, 0]))
    with pytest.raises(ValueError, match=r"^index must have the same rank as input"):
        torch_compat.gather(x, 1, index)


@pytest.mark.parametrize("name", ["numpy", "dask", "torch"])
@pytest.mark.parametrize("op", ["unsorted_segment_sum", "unsorted_segment_sqrt_n"])
def test_segment_ids_dtype_is_checked_before_the_data_dtype(name, op):
    """docs/contract.md, R6: the ids' dtype before the data's. Integer data (which
    ``unsorted_segment_sqrt_n`` refuses, as TensorFlow does) with float ids is the ids'
    error for every segment front end (sqrt_n reported the data's dtype first)."""
    backend = load_backend(name)
    data, ids = backend.asarray(np.array([1, 2], np.int32)), backend.asarray(np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match=r"^segment_ids must have an integer dtype; got float64"):
        getattr(tf_compat.math, op)(data, ids, 2)


@pytest.mark.parametrize("name", ["numpy", "dask", "torch"])
def test_sqrt_n_refuses_integer_data_before_the_shapes(name):
    """The data's dtype before the shapes (R6): integer data with ids of the wrong length."""
    backend = load_backend(name)
    data, ids = backend.asarray(np.array([1, 2], np.int32)), backend.asarray(np.array([0, 1, 1]))
    with pytest.raises(TypeError, match=r"^unsorted_segment_sqrt_n needs data of a floating dt"):
        tf_compat.math.unsorted_segment_sqrt_n(data, ids, 2)


def test_tensor_scatter_nd_sub_checks_python_updates_before_negating():
    """Python updates the tensor's dtype cannot hold are refused, as by every scatter (they
    were cast, 1.5 to 1, before the core saw them)."""
    with pytest.raises(TypeError, match=r"updates must be values that tensor\.dtype = int64"):
        tf_compat.tensor_scatter_nd_sub(np.arange(4), [[1]], [1.5])
    with pytest.raises(TypeError, match=r"tensor_scatter_nd_sub needs tensor of a numeric dtype"):
        tf_compat.tensor_scatter_nd_sub(np.arange(4) > 1, [[1]], [True])


@pytest.mark.parametrize(
    "call",
    [
        lambda: torch_compat.gather(np.arange(3), 0, None),
        lambda: torch_compat.scatter(np.zeros(3), 0, np.array([0]), value={"a": 1}),
        lambda: onnx_compat.gather(None, np.array([0])),
        lambda: tf_compat.scatter_nd([[0]], None, [3]),
        lambda: tf_compat.tensor_scatter_nd_sub(np.arange(3), [[0]], object()),
    ],
    ids=["torch.gather", "torch.scatter", "onnx.gather", "tf.scatter_nd", "tf.sub"],
)
def test_compat_front_ends_refuse_odd_kinds_themselves(call):
    """Every front end's arguments go through the core's kind check before any backend call."""
    with pytest.raises(TypeError, match=r"must be an array, (an int|a scalar) or a rectangular"):
        call()


@pytest.mark.parametrize("name", ["numpy", "torch", "dask"])
def test_negatives_from_the_end_are_named_as_written(name):
    """ONNX's Gather, GatherND and ScatterND and MindSpore's gather count negative indices
    from the end: the core's plan takes [-n, n) (a bad value is named as the caller wrote
    it, with that range), not values moved by n before the core saw them."""
    backend = load_backend(name)
    data = backend.asarray(np.arange(12.0).reshape(3, 4))
    computed = (lambda r: r.compute()) if name == "dask" else (lambda r: r)
    along = r"\[0\] = -4 is out of range \[-3, 3\) for axis 0 of "
    vector = r"^indices\[0\] = \[-4, 0\] does not index into \w+ of shape \(3, 4\)$"
    calls = (
        (lambda: onnx_compat.gather(data, backend.asarray(np.array([-4, 0])), 0), along),
        (lambda: ms_compat.gather(data, backend.asarray(np.array([-4, 0])), 0), along),
        (lambda: onnx_compat.gather_nd(data, backend.asarray(np.array([[-4, 0]]))), vector),
        (lambda: onnx_compat.scatter_nd(data, backend.asarray(np.array([[-4, 0]])),
                                        backend.asarray(np.ones((1,)))), vector),
    )  # fmt: skip
    for call, message in calls:
        with pytest.raises(IndexError, match=message):
            computed(call())
    np.testing.assert_array_equal(
        np.asarray(computed(onnx_compat.gather(data, backend.asarray(np.array([-3, -1])), 1))),
        np.arange(12.0).reshape(3, 4)[:, [-3, -1]],
    )


# torch.segment_reduce's lengths, made offsets by the core (_plan.SegmentsGiven): small ones
# read on the host as one list, larger ones by array passes, Dask's in its graph; the values
# are read on every call, whatever route a call of the same signature keeps.


@pytest.mark.parametrize("segments", [3, 300])  # host list (<= 256 values), array passes
def test_torch_segment_reduce_checks_lengths_on_every_call(segments):
    rng = np.random.default_rng(segments)
    lengths = rng.integers(0, 4, size=(2, segments))
    n = int(lengths.sum(axis=1).max())
    lengths[:, -1] += n - lengths.sum(axis=1)  # each row adds up to n
    data = rng.standard_normal((2, n, 3))
    want = np.zeros((2, segments, 3))  # the plain loop, in float64
    for b in range(2):
        start = 0
        for s in range(segments):
            for row in range(start, start + lengths[b, s]):
                want[b, s] += data[b, row]
            start += lengths[b, s]
    for _ in range(2):  # a first call, then a repeat call of the signature
        got = torch_compat.segment_reduce(data, "sum", lengths=lengths, axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    negative = lengths.copy()
    negative[1, 0] -= 1 + negative[1, 0]  # -1, its row's total one less, so both are bad
    with pytest.raises(ValueError, match=r"^lengths contains negative value!$"):
        torch_compat.segment_reduce(data, "sum", lengths=negative, axis=1)
    short = lengths.copy()
    short[0, -1] -= 1 if short[0, -1] else -1
    total = int(short[0].sum())
    with pytest.raises(
        ValueError,
        match=rf"^lengths must add up to data.shape\[axis\] = {n} along their last axis "
        rf"\(unless unsafe=True\); got a total of {total}$",
    ):
        torch_compat.segment_reduce(data, "sum", lengths=short, axis=1)


def test_torch_segment_reduce_checks_dask_lengths_when_computed():
    import dask.array as da

    data = da.from_array(np.arange(6.0), chunks=2)
    got = torch_compat.segment_reduce(data, "max", lengths=da.from_array(np.array([1, 0, 5])))
    np.testing.assert_array_equal(got.compute(), [0.0, -np.inf, 5.0])
    bad = torch_compat.segment_reduce(data, "sum", lengths=da.from_array(np.array([4, -1, 3])))
    with pytest.raises(ValueError, match=r"^lengths contains negative value!$"):
        bad.compute()


def test_torch_index_put_checks_index_values_on_every_call():
    x = np.zeros((3, 4))
    rows, cols = np.array([0, 2]), np.array([1, 3])
    for _ in range(2):  # a first call, then a repeat call of the signature
        got = torch_compat.index_put(x, (rows, cols), np.array([5.0, 6.0]))
        np.testing.assert_array_equal(got, [[0, 5, 0, 0], [0, 0, 0, 0], [0, 0, 0, 6]])
    with pytest.raises(IndexError, match=r"^indices\[1\] = \[2, 4\] does not index into input"):
        torch_compat.index_put(x, (rows, np.array([1, 4])), np.array([5.0, 6.0]))
