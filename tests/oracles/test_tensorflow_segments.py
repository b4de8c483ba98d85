"""compat.tensorflow's segment reductions against TensorFlow itself: ``tf.math``'s
``unsorted_segment_sum`` / ``_mean`` / ``_max`` / ``_min`` / ``_prod`` / ``_sqrt_n`` and the
sorted ``segment_*``, on NumPy, PyTorch and JAX inputs, with empty segments, all-equal,
sorted and unsorted ids, negative and too-large ids, every dtype TensorFlow reduces, and
infinities for the max and the min.

NaN is left out here: TensorFlow's max and min of a segment holding one depend on its
position (portagather propagates it; the JAX and PyTorch oracles check that).
"""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from portagather.compat import tensorflow as tf_compat

from .scatter_draws import on, to_numpy
from .segment_draws import FLOATING, REAL, SEGMENTS, compat_backends, same, segment_cases


def _tensorflow(f, *args):
    """TensorFlow's result as NumPy, or the kind of error it raised: "range" for a bad id,
    "order" for unsorted ids of a sorted op."""
    try:
        return f(*args).numpy()
    except tf.errors.InvalidArgumentError as err:
        text = str(err)
        if "out of range" in text:
            return "range"
        if "not increasing" in text:
            return "order"
        raise


def _check(name, compat_call, want, ulps=0):
    if isinstance(want, str):
        error, match = {"range": (IndexError, "out of range"),
                        "order": (ValueError, "must be sorted")}[want]  # fmt: skip
        with pytest.raises(error, match=match):
            compat_call()
        return
    same(to_numpy(name, compat_call()), want, ulps)


UNSORTED = {
    "sum": REAL,
    "prod": REAL,
    "max": REAL,
    "min": REAL,
    "mean": REAL,  # integers: a float mean
    "sqrt_n": FLOATING,
}


@SEGMENTS
@given(st.sampled_from(sorted(UNSORTED)).flatmap(
    lambda op: st.tuples(st.just(op), segment_cases(UNSORTED[op], specials=op in ("max", "min"),
                                                    small=op == "prod"))
), compat_backends)  # fmt: skip
def test_unsorted_segment(op_and_case, name):
    op, (data, ids, n) = op_and_case
    want = _tensorflow(getattr(tf.math, f"unsorted_segment_{op}"), data, ids, n)
    data_b, ids_b = on(name, data, ids)
    compat_op = getattr(tf_compat.math, f"unsorted_segment_{op}")
    _check(name, lambda: compat_op(data_b, ids_b, n), want, ulps=1 if op == "sqrt_n" else 0)


@SEGMENTS
@given(st.sampled_from(["sum", "prod", "max", "min", "mean"]), st.data(), compat_backends)
def test_sorted_segment(op, draw, name):
    """Sorted ids (with gaps: empty segments, 0 for the max and the min), and now and then
    a negative first id or an unsorted pair, which both refuse."""
    data, ids, _ = draw.draw(segment_cases(REAL, one_d=True, bad=False, sorted_ids=True,
                                           small=op == "prod"))  # fmt: skip
    if ids.size > 1:
        spoil = draw.draw(st.sampled_from(["none", "none", "negative", "swap"]))
        if spoil == "negative":
            ids[0] = -1
        elif spoil == "swap" and ids[0] != ids[-1]:
            ids = ids[::-1].copy()
    want = _tensorflow(getattr(tf.math, f"segment_{op}"), data, ids)
    data_b, ids_b = on(name, data, ids)
    _check(name, lambda: getattr(tf_compat.math, f"segment_{op}")(data_b, ids_b), want)


def test_refusals_match():
    """What TensorFlow refuses, compat refuses with a TypeError or ValueError naming it."""
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.unsorted_segment_sqrt_n(np.array([1, 2], np.int32), [0, 0], 1)
    with pytest.raises(TypeError, match="unsorted_segment_sqrt_n needs data of a floating"):
        tf_compat.math.unsorted_segment_sqrt_n(np.array([1, 2], np.int32), [0, 0], 1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.unsorted_segment_max(np.array([1j]), [0], 1)
    with pytest.raises(TypeError, match="unsorted_segment_max needs data of a real numeric"):
        tf_compat.math.unsorted_segment_max(np.array([1j]), [0], 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be a vector"):
        tf.math.segment_sum(np.ones((2, 2)), [[0, 1], [1, 1]])
    with pytest.raises(ValueError, match="segment_ids must be 1-d"):
        tf_compat.math.segment_sum(np.ones((2, 2)), [[0, 1], [1, 1]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must not be negative"):
        tf.math.unsorted_segment_sum(np.ones(2), [-1, -1], -1)
    with pytest.raises(ValueError, match="num_segments must be an int >= 0; got -1"):
        tf_compat.math.unsorted_segment_sum(np.ones(2), [-1, -1], -1)


def test_lazy_and_traced():
    """On Dask a too-large id raises when computed; under jax.jit it drops its row, as
    TensorFlow does on GPU; the sorted forms need the ids now and say so."""
    import dask.array as da
    import jax

    data, ids = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 5, 1, -1])
    lazy = tf_compat.math.unsorted_segment_sum(da.from_array(data, 2), da.from_array(ids, 2), 4)
    with pytest.raises(IndexError, match=r"segment_ids\[1\] = 5 is out of range \[0, 4\)"):
        lazy.compute()
    traced = jax.jit(lambda d, i: tf_compat.math.unsorted_segment_sum(d, i, 4))(data, ids)
    dropped = np.where(ids == 5, -1, ids)
    same(np.asarray(traced), tf.math.unsorted_segment_sum(data.astype(np.float32), dropped, 4)
         .numpy())  # fmt: skip
    with pytest.raises(ValueError, match="pass num_segments"):
        tf_compat.math.segment_sum(da.from_array(data, 2), da.from_array(np.sort(ids), 2))
