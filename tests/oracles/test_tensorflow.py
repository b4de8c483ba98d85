"""portagather against TensorFlow itself: ``tf.gather_nd`` and ``tf.gather`` on CPU."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import portagather as pg
from portagather.conformance.strategies import gather_calls, gather_nd_calls

from .oracle_settings import ORACLE

tf = pytest.importorskip(
    "tensorflow", reason='tensorflow is not installed: pip install "portagather[oracle]"'
)

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
