"""compat.tensorflow's scatters against TensorFlow itself: ``tf.tensor_scatter_nd_update`` /
``_add`` / ``_sub`` / ``_min`` / ``_max`` and ``tf.scatter_nd``, on NumPy, PyTorch and JAX
inputs.

TensorFlow leaves the order of duplicate updates under ``tensor_scatter_nd_update``
unspecified; a call whose index vectors repeat is compared with the plain-loop reference
instead (the last update in row-major order wins).
"""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from portagather.compat import tensorflow as tf_compat
from portagather.conformance.reference import ref_scatter_nd

from .oracle_settings import ORACLE
from .scatter_draws import backend_names, check_compat, nd_scatters, nd_targets, on, repeats, same

CALLS = st.one_of(nd_scatters(False), nd_scatters(True))
POLICIES = st.sampled_from(["", "DEFAULT", "ERROR", "IGNORE"])
REDUCING = ["add", "sub", "min", "max"]


def _tensorflow(f, *args, **kwargs):
    """TensorFlow's result as NumPy, or None where it refuses the indices."""
    try:
        return f(*args, **kwargs).numpy()
    except tf.errors.InvalidArgumentError as err:
        if "does not index into" in str(err):
            return None
        raise


@ORACLE
@given(CALLS, st.sampled_from(REDUCING), POLICIES, backend_names)
def test_tensor_scatter_nd_reductions(call, op, policy, name):
    data, indices, updates = call
    tf_op, compat_op = (
        getattr(tf, f"tensor_scatter_nd_{op}"),
        getattr(tf_compat, f"tensor_scatter_nd_{op}"),
    )
    want = _tensorflow(tf_op, data, indices, updates, bad_indices_policy=policy)
    args = on(name, data, indices, updates)
    check_compat(name, lambda: compat_op(*args, bad_indices_policy=policy), want)


@ORACLE
@given(CALLS, backend_names)
def test_tensor_scatter_nd_update(call, name):
    data, indices, updates = call
    args = on(name, data, indices, updates)
    if repeats(nd_targets(data.shape, indices, allow_negative=False)):
        try:
            want = ref_scatter_nd(data, indices, updates)
        except IndexError:
            want = None
    else:
        want = _tensorflow(tf.tensor_scatter_nd_update, data, indices, updates)
    check_compat(name, lambda: tf_compat.tensor_scatter_nd_update(*args), want)


@ORACLE
@given(CALLS, POLICIES, st.sampled_from([np.int32, np.float32, np.bool_]), backend_names)
def test_scatter_nd(call, policy, dtype, name):
    """Bool updates too: TensorFlow combines their duplicates with a logical OR."""
    data, indices, updates = call
    updates = updates % 2 > 0 if dtype == np.bool_ else updates.astype(dtype)
    shape = np.asarray(data.shape, dtype=np.int64)
    want = _tensorflow(tf.scatter_nd, indices, updates, shape, bad_indices_policy=policy)
    indices_b, updates_b = on(name, indices, updates)
    compat_call = lambda: tf_compat.scatter_nd(  # noqa: E731
        indices_b, updates_b, data.shape, bad_indices_policy=policy
    )
    check_compat(name, compat_call, want)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64, np.float64])
def test_tensor_scatter_nd_sub_wraps_as_tensorflow(dtype):
    tensor = np.array([0, 1, 200 % 128, 5], dtype=dtype)
    indices = np.array([[1], [1], [3], [0]])
    updates = np.array([3, 4, 7, 1], dtype=dtype)
    want = tf.tensor_scatter_nd_sub(tensor, indices, updates).numpy()
    same(tf_compat.tensor_scatter_nd_sub(tensor, indices, updates), want)
