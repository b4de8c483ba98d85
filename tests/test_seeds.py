"""Every example of the two seed pages (tests/compat/seeds/), with its printed result.

The TensorFlow ``tf.gather_nd`` page prints byte strings; the examples run on NumPy with
``bytes`` params and must print exactly those values. Every backend also runs a numeric twin:
the same example with each string replaced by a number, against the same expected layout.
"""

from __future__ import annotations

import numpy as np
import pytest

import portagather as pg

M2 = [["a", "b"], ["c", "d"]]
M23 = [["a", "b", "c"], ["d", "e", "f"]]
T3 = [[["a0", "b0"], ["c0", "d0"]], [["a1", "b1"], ["c1", "d1"]]]

# (params, indices, batch_dims, printed result) from the tf.gather_nd page, in page order.
TF_GATHER_ND = [
    (M2, [[0, 0], [1, 1]], 0, ["a", "d"]),
    (M23, [[1], [0]], 0, [["d", "e", "f"], ["a", "b", "c"]]),
    (T3, [[1]], 0, [[["a1", "b1"], ["c1", "d1"]]]),
    (T3, [[0, 1], [1, 0]], 0, [["c0", "d0"], ["a1", "b1"]]),
    (T3, [[0, 0, 1], [1, 0, 1]], 0, ["b0", "b1"]),
    (M2, [[[0, 0]], [[0, 1]]], 0, [["a"], ["b"]]),
    (M2, [[[1]], [[0]]], 0, [[["c", "d"]], [["a", "b"]]]),
    (T3, [[[1]], [[0]]], 0, [[[["a1", "b1"], ["c1", "d1"]]], [[["a0", "b0"], ["c0", "d0"]]]]),
    (T3, [[[0, 1], [1, 0]], [[0, 0], [1, 1]]], 0, [[["c0", "d0"], ["a1", "b1"]], [["a0", "b0"], ["c1", "d1"]]]),
    (T3, [[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]], 0, [["b0", "b1"], ["d0", "c1"]]),
    (T3, [[1], [0]], 1, [["c0", "d0"], ["a1", "b1"]]),
    (T3, [[[1]], [[0]]], 1, [[["c0", "d0"]], [["a1", "b1"]]]),
    (T3, [[[1, 0]], [[0, 1]]], 1, [["c0"], ["b1"]]),
]  # fmt: skip


@pytest.mark.parametrize(("params", "indices", "batch_dims", "printed"), TF_GATHER_ND)
def test_tf_gather_nd_strings_on_numpy(params, indices, batch_dims, printed):
    out = pg.gather_nd(np.char.encode(np.array(params)), indices, batch_dims=batch_dims)
    assert out.tolist() == np.char.encode(np.array(printed)).tolist()
    assert isinstance(out, np.ndarray) and out.dtype.kind == "S"


def _numeric(strings):
    """The numeric twin: each string 'xk' becomes a distinct number."""
    return np.vectorize(lambda s: 100 * (ord(s[0]) - ord("a")) + (int(s[1:]) if s[1:] else 0))(
        np.array(strings)
    ).astype(np.int32)


@pytest.mark.parametrize(("params", "indices", "batch_dims", "printed"), TF_GATHER_ND)
def test_tf_gather_nd_numeric_twin(backend, params, indices, batch_dims, printed):
    out = pg.gather_nd(
        backend.asarray(_numeric(params)), backend.asarray(indices), batch_dims=batch_dims
    )
    np.testing.assert_array_equal(backend.to_numpy(out), _numeric(printed), strict=True)


@pytest.mark.parametrize(
    ("indices", "batch_dims"),
    [([[0, 1], [1, 0], [2, 4], [3, 2], [4, 1]], 0), ([[1], [0], [4], [2], [1]], 1)],
)
def test_tf_gather_nd_shapes_of_zeros(backend, indices, batch_dims):
    # tf.gather_nd(..., params=tf.zeros([5, 7, 3])).shape.as_list() == [5, 3]
    params = backend.asarray(np.zeros((5, 7, 3), dtype=np.float32))
    out = pg.gather_nd(params, backend.asarray(indices), batch_dims=batch_dims)
    assert tuple(out.shape) == (5, 3)
    np.testing.assert_array_equal(backend.to_numpy(out), np.zeros((5, 3), dtype=np.float32))


def test_tf_gather_nd_output_shape_rule(backend):
    # The page's shape walk-through: params (5, 7, 3), indices (5, 1), batch_dims=1 -> [5, 3].
    params = backend.asarray(np.zeros((5, 7, 3), dtype=np.float32))
    out = pg.gather_nd(params, backend.asarray(np.zeros((5, 1), dtype=np.int32)), batch_dims=1)
    assert list(out.shape) == [5, 3]


def test_mindspore_gather_d(backend):
    # ops.GatherD()(x, 1, index) with int32 x and index prints [[1 1] [4 3]].
    x = backend.asarray(np.array([[1, 2], [3, 4]], dtype=np.int32))
    index = backend.asarray(np.array([[0, 0], [1, 0]], dtype=np.int32))
    out = pg.gather_d(x, 1, index)
    assert str(backend.to_numpy(out)) == "[[1 1]\n [4 3]]"
    assert backend.to_numpy(out).dtype == np.int32
