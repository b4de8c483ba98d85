"""portagather against TensorFlow itself: ``tf.gather_nd`` and ``tf.gather`` on CPU."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import portagather as pg
from portagather.conformance.strategies import gather_calls, gather_nd_calls

from .oracle_settings import ORACLE

CALLS_ND = st.one_of(*(gather_nd_calls(batch, bad) for batch in (False, True) for bad in (0, 1)))
CALLS = st.one_of(*(gather_calls(batch, bad) for batch in (False, True) for bad in (False, True)))


def _tensorflow(f, *args, **kwargs):
    """TensorFlow's result as NumPy, or None where it refuses the indices."""
    try:
        return f(*args, **kwargs).numpy()
    except tf.errors.InvalidArgumentError:
        return None


@ORACLE
@given(CALLS_ND, st.sampled_from(["", "DEFAULT", "ERROR", "IGNORE"]))
def test_gather_nd(call, policy):
    b = call.kwargs["batch_dims"]
    want = _tensorflow(
        tf.gather_nd, call.data, call.indices, batch_dims=b, bad_indices_policy=policy
    )
    if want is None:
        with pytest.raises(IndexError):
            pg.gather_nd(call.data, call.indices, batch_dims=b, bad_indices=policy)
        return
    got = pg.gather_nd(call.data, call.indices, batch_dims=b, bad_indices=policy)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


@ORACLE
@given(CALLS)
def test_gather(call):
    want = _tensorflow(tf.gather, call.data, call.indices, **call.kwargs)
    if want is None:
        with pytest.raises(IndexError):
            pg.gather(call.data, call.indices, **call.kwargs)
        return
    got = pg.gather(call.data, call.indices, **call.kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


def test_empty_params_differ_on_purpose():
    # tf.gather_nd refuses any gather from empty params, even with an empty result; portagather
    # reads nothing and returns the empty result (docs/contract.md, "Bad indices"). tf.gather agrees.
    params, indices = np.zeros((2, 0), np.int32), np.array([[1]])
    assert _tensorflow(tf.gather_nd, params, indices) is None
    assert _tensorflow(tf.gather, params, indices).shape == (1, 1, 0)
    got = pg.gather_nd(params, indices)
    assert got.shape == (1, 0) and got.dtype == np.int32


# Gradients with respect to params, against TensorFlow's GradientTape: a scatter-add of the
# cotangent, duplicates summed, zero for ignored slices; on every framework with autodiff.
GRADIENT_CASES = [
    ("gather_nd", {}, [[0, 1], [0, 1], [2, 3]], "error"),
    ("gather_nd", {}, [[0, 1], [3, 1], [0, 1], [2, -1]], "ignore"),
    ("gather_nd", {"batch_dims": 1}, [[[2], [2], [0]], [[1], [5], [1]]], "ignore"),
    ("gather", {"axis": 1, "batch_dims": 1}, [[2, 2, 0], [1, 2, 1]], "error"),
]


def _tensorflow_gradient(op, kwargs, params, indices, policy, cotangent):
    variable = tf.Variable(params)
    with tf.GradientTape() as tape:
        if op == "gather_nd":
            tf_policy = "IGNORE" if policy == "ignore" else ""
            out = tf.gather_nd(variable, indices, bad_indices_policy=tf_policy, **kwargs)
        else:
            out = tf.gather(variable, indices, **kwargs)
        loss = tf.reduce_sum(out * cotangent)
    return np.asarray(tf.convert_to_tensor(tape.gradient(loss, variable)))


def _jax_gradient(op, kwargs, params, indices, policy, cotangent):
    import jax

    f = getattr(pg, op)
    indices = jax.numpy.asarray(indices)
    loss = lambda p: (f(p, indices, bad_indices=policy, **kwargs) * cotangent).sum()  # noqa: E731
    return np.asarray(jax.grad(loss)(jax.numpy.asarray(params)))


def _torch_gradient(op, kwargs, params, indices, policy, cotangent):
    import torch

    tensor = torch.tensor(params, requires_grad=True)
    out = getattr(pg, op)(tensor, torch.tensor(indices), bad_indices=policy, **kwargs)
    out.backward(torch.tensor(cotangent))
    return tensor.grad.numpy()


@pytest.mark.parametrize("gradient", [_jax_gradient, _torch_gradient], ids=["jax", "torch"])
@pytest.mark.parametrize(("op", "kwargs", "indices", "policy"), GRADIENT_CASES)
def test_gradient_equals_tensorflow(gradient, op, kwargs, indices, policy):
    shape = (2, 3, 4) if kwargs.get("batch_dims") else (3, 4, 2)
    params = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    out_shape = np.shape(getattr(pg, op)(params, indices, bad_indices=policy, **kwargs))
    cotangent = np.arange(1, 1 + np.prod(out_shape), dtype=np.float32).reshape(out_shape)
    expected = _tensorflow_gradient(op, kwargs, params, np.asarray(indices), policy, cotangent)
    got = gradient(op, kwargs, params, indices, policy, cotangent)
    np.testing.assert_array_equal(got, expected)
