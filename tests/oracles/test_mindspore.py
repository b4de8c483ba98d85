"""portagather against MindSpore itself: ``ops.GatherD`` (negative indices) and ``ops.GatherNd``."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from mindspore import Tensor, ops

import portagather as pg
from portagather.conformance.strategies import gather_d_calls, gather_nd_calls

from .oracle_settings import ORACLE


def _mindspore(op, *args):
    """MindSpore's result as NumPy, or None where it refuses the indices."""
    try:
        return op(*args).asnumpy()
    except (RuntimeError, ValueError, IndexError):
        return None


@ORACLE
@given(st.one_of(gather_d_calls(False), gather_d_calls(True)))
def test_gather_d(call):
    # MindSpore requires index.shape == x.shape off dim, and non-empty tensors; portagather also
    # accepts a smaller index (its leading block) and empty ones, checked against the reference.
    off_dim = [d for d in range(call.data.ndim) if d != call.kwargs["dim"] % call.data.ndim]
    assume(all(call.indices.shape[d] == call.data.shape[d] for d in off_dim))
    assume(call.indices.size > 0)
    dim = call.kwargs["dim"]
    want = _mindspore(ops.GatherD(), Tensor(call.data), dim, Tensor(call.indices))
    if want is None:
        with pytest.raises(IndexError):
            pg.gather_d(call.data, dim, call.indices)
        return
    got = pg.gather_d(call.data, dim, call.indices)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


@ORACLE
@given(st.one_of(gather_nd_calls(False, False), gather_nd_calls(False, True)))
def test_gather_nd(call):
    assume(call.indices.size > 0)  # MindSpore refuses empty index tensors
    want = _mindspore(ops.GatherNd(), Tensor(call.data), Tensor(call.indices))
    if want is None:
        with pytest.raises(IndexError):
            pg.gather_nd(call.data, call.indices)
        return
    got = pg.gather_nd(call.data, call.indices)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
