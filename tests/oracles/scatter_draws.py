"""Scatter calls for the oracle tests, drawn from the gather strategies: a scatter writes
``updates`` shaped like the gather's result back at the places that gather would read.

Also: the backend each call's compat inputs are made in (NumPy, PyTorch or JAX), whether a
call's valid targets repeat (where an oracle leaves the order of ``"update"`` unspecified),
and the comparison of a compat result with an oracle's or the reference's NumPy answer.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import strategies as st

from portagather.conformance.backends import load_backend
from portagather.conformance.strategies import gather_d_calls, gather_nd_calls

BACKEND_NAMES = ("numpy", "torch", "jax")


def _updates(shape):
    # Distinct values, none equal to a data value (data is 1..size), small enough for
    # products of a few of them to stay exact in int32 and float32.
    count = int(np.prod(shape))
    return (-(np.arange(count, dtype=np.int32) % 7) - 2).reshape(shape)


@st.composite
def nd_scatters(draw, bad):
    """``(data, indices, updates)`` for ``scatter_nd`` without batch dims; depth >= 1 and
    ``indices.ndim >= 2``."""
    call = draw(gather_nd_calls(False, bad))
    data, indices = call.data, call.indices
    depth = indices.shape[-1]
    if depth == 0:
        indices = np.zeros(indices.shape[:-1] + (1,), dtype=indices.dtype)
        depth = 1
    if indices.ndim == 1:  # TensorFlow and MindSpore want a batch of vectors: rank >= 2
        indices = indices[None]
    shape = indices.shape[:-1] + data.shape[depth:]
    return data, indices, _updates(shape)


@st.composite
def element_scatters(draw, bad):
    """``(data, dim, index, src)`` for ``scatter_d``; `src` has the index's shape."""
    call = draw(gather_d_calls(bad))
    return call.data, call.kwargs["dim"], call.indices, _updates(call.indices.shape)


backend_names = st.sampled_from(BACKEND_NAMES)


def on(name, *arrays):
    """`arrays` as arrays of the backend `name`."""
    backend = load_backend(name)
    return [backend.asarray(a, None) for a in arrays]


def to_numpy(name, array):
    return load_backend(name).to_numpy(array)


def nd_targets(data_shape, indices, allow_negative):
    """The valid targets (index vectors as tuples), in row-major order of the vectors."""
    depth = indices.shape[-1]
    sizes = data_shape[:depth]
    found = []
    for vector in indices.reshape(-1, depth).tolist():
        low = [-n if allow_negative else 0 for n in sizes]
        if all(lo <= v < n for v, lo, n in zip(vector, low, sizes, strict=True)):
            found.append(tuple(v % n for v, n in zip(vector, sizes, strict=True)))
    return found


def element_targets(data_shape, dim, index):
    dim %= len(data_shape)
    n = data_shape[dim]
    found = []
    for position in itertools.product(*(range(s) for s in index.shape)):
        value = int(index[position])
        if -n <= value < n:
            found.append(position[:dim] + (value % n,) + position[dim + 1 :])
    return found


def repeats(targets):
    return len(set(targets)) != len(targets)


def in_range(data_shape, indices, allow_negative):
    """Whether every index vector of a ``scatter_nd`` call is valid."""
    return len(nd_targets(data_shape, indices, allow_negative)) == int(np.prod(indices.shape[:-1]))


def same(got, want):
    """Exact equality of dtype, shape and values (NaNs compare equal)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want, strict=True)


def check_compat(name, compat_call, want, match=None):
    """The compat call on backend `name` gives `want`, or raises IndexError (matching
    `match`) where the oracle refused the indices (`want` is None)."""
    if want is None:
        with pytest.raises(IndexError, match=match):
            compat_call()
        return
    same(to_numpy(name, compat_call()), want)
