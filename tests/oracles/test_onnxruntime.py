"""portagather against ONNX Runtime: ``GatherND`` (batch_dims), ``GatherElements``, ``Gather``."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import portagather as pg
from helpers import onnxruntime_node
from portagather.conformance.strategies import gather_calls, gather_d_calls, gather_nd_calls

from .oracle_settings import ORACLE

_onnxruntime = onnxruntime_node


def _compare(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


@ORACLE
@given(st.one_of(*(gather_nd_calls(batch, bad) for batch in (False, True) for bad in (0, 1))))
def test_gather_nd(call):
    assume(call.indices.shape[-1] >= 1)  # ONNX requires index depth >= 1; portagather allows 0
    b = call.kwargs["batch_dims"]
    want = _onnxruntime("GatherND", call.data, call.indices, batch_dims=b)
    if want is None:
        with pytest.raises(IndexError):
            pg.gather_nd(call.data, call.indices, batch_dims=b)
        return
    # ONNX counts negative index components from the end; portagather (like TensorFlow)
    # refuses them, and its "wrap" policy gives ONNX's answer for values in [-n, n).
    if (call.indices < 0).any():
        with pytest.raises(IndexError):
            pg.gather_nd(call.data, call.indices, batch_dims=b)
        _compare(pg.gather_nd(call.data, call.indices, batch_dims=b, bad_indices="wrap"), want)
        return
    _compare(pg.gather_nd(call.data, call.indices, batch_dims=b), want)


@ORACLE
@given(st.one_of(gather_d_calls(False), gather_d_calls(True)))
def test_gather_elements(call):
    dim = call.kwargs["dim"]
    want = _onnxruntime("GatherElements", call.data, call.indices, axis=dim)
    if want is None:
        with pytest.raises(IndexError):
            pg.gather_d(call.data, dim, call.indices)
        return
    _compare(pg.gather_d(call.data, dim, call.indices), want)


@ORACLE
@given(st.one_of(gather_calls(False, False), gather_calls(False, True)))
def test_gather(call):
    axis = call.kwargs.get("axis", 0)
    want = _onnxruntime("Gather", call.data, call.indices, axis=axis)
    if want is None:
        with pytest.raises(IndexError):
            pg.gather(call.data, call.indices, axis=axis)
        return
    # ONNX Gather counts negative indices from the end; portagather refuses them (as
    # TensorFlow does), and "wrap" gives ONNX's answer for values in [-n, n).
    if (np.asarray(call.indices) < 0).any():
        with pytest.raises(IndexError):
            pg.gather(call.data, call.indices, axis=axis)
        _compare(pg.gather(call.data, call.indices, axis=axis, bad_indices="wrap"), want)
        return
    _compare(pg.gather(call.data, call.indices, axis=axis), want)
