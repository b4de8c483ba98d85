"""Running one call through portagather on a backend and through the loop reference."""

from __future__ import annotations

import array_api_compat as aac
import numpy as np
import pytest

import portagather as pg
from portagather.conformance import reference
from portagather.conformance.backends import known_backends

OPERATIONS = {
    "gather_nd": (pg.gather_nd, reference.ref_gather_nd),
    "gather": (pg.gather, reference.ref_gather),
    "gather_d": (pg.gather_d, reference.ref_gather_d),
    "take_along_axis": (pg.take_along_axis, reference.ref_take_along_axis),
}


def backends_with_dtypes(dtypes):
    """pytest params ``(backend, dtype)``: each known backend with the `dtypes` it holds."""
    return [
        pytest.param(b, d, id=f"{b.name}-{d}")
        for b in known_backends()
        for d in dtypes
        if d in b.dtypes
    ]


def _apply(function, op, data, indices, options):
    if op == "gather_d":
        options = dict(options)
        dim = options.pop("dim")
        return function(data, dim, indices, **options)
    return function(data, indices, **options)


def run_portagather(op: str, data, indices, **options):
    """``portagather.<op>`` with `options` (``dim`` goes in ``gather_d``'s place)."""
    return _apply(OPERATIONS[op][0], op, data, indices, options)


def run_reference(op: str, data, indices, **options):
    """The loop reference of `op` on NumPy copies of `data` and `indices`."""
    return _apply(OPERATIONS[op][1], op, np.asarray(data), np.asarray(indices), options)


def call(backend, op: str, data, indices, index_dtype="int64", **options):
    """Run `op` on `backend` with NumPy inputs; return the result as NumPy.

    Also checks that the result has data's namespace and dtype.
    """
    data_b = backend.asarray(data)
    indices_b = backend.asarray(indices, dtype=index_dtype)
    result = _apply(OPERATIONS[op][0], op, data_b, indices_b, options)
    assert aac.array_namespace(result) is aac.array_namespace(data_b)
    assert result.dtype == data_b.dtype
    return backend.to_numpy(result)


def expected(backend, op: str, data, indices, index_dtype="int64", **options):
    """The loop reference on the data as `backend` holds it (JAX may narrow dtypes)."""
    data_np = backend.to_numpy(backend.asarray(data))
    indices_np = backend.to_numpy(backend.asarray(indices, dtype=index_dtype))
    return _apply(OPERATIONS[op][1], op, data_np, indices_np, options)


def check(backend, op: str, data, indices, index_dtype="int64", **options):
    """Assert that portagather on `backend` equals the loop reference, exactly."""
    wanted = expected(backend, op, data, indices, index_dtype, **options)
    actual = call(backend, op, data, indices, index_dtype, **options)
    assert_same(actual, wanted)
    return actual


def assert_same(actual, wanted):
    """Exact equality of values, shape and dtype (NaNs compare equal)."""
    assert actual.shape == wanted.shape, (actual.shape, wanted.shape)
    assert actual.dtype == wanted.dtype, (actual.dtype, wanted.dtype)
    np.testing.assert_array_equal(actual, wanted, strict=True)


def onnxruntime_node(op_type: str, data, indices, updates=None, opset=13, **attributes):
    """ONNX Runtime's result of one node on int32 data, int64 indices (and int32 updates, for
    a scatter), or None where it refuses the indices."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    names = ["data", "indices"] + ([] if updates is None else ["updates"])
    types = [TensorProto.INT32, TensorProto.INT64, TensorProto.INT32]
    arrays = [data, indices.astype(np.int64), updates]
    node = helper.make_node(op_type, names, ["out"], **attributes)
    graph = helper.make_graph(
        [node],
        op_type,
        [
            helper.make_tensor_value_info(name, kind, array.shape)
            for name, kind, array in zip(names, types, arrays, strict=False)
        ],
        [helper.make_tensor_value_info("out", TensorProto.INT32, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.log_severity_level = 4  # out-of-range indices are expected; keep the log quiet
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    try:
        return session.run(None, dict(zip(names, arrays, strict=False)))[0]
    except Exception as err:  # ORT raises its own error types for bad indices
        words = ("out of bounds", "out of range", "invalid", "out of data bounds")
        if any(word in str(err).lower() for word in words):
            return None
        raise
