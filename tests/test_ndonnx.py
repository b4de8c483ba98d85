"""portagather on ndonnx: a call on symbolic arrays builds an ONNX model that ONNX Runtime runs.

Each model is built from ``ndx.argument`` inputs, serialised, run by ONNX Runtime on NumPy data
and compared with the plain-loop references.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import ndonnx as ndx
import numpy as np
import onnxruntime as ort
import pytest

import portagather as pg
from portagather.conformance.reference import (
    ref_gather,
    ref_gather_d,
    ref_gather_nd,
    ref_take_along_axis,
)

# (name, call, reference, params shape, indices with bad values)
CASES = [
    ("gather_nd", lambda p, i, **k: pg.gather_nd(p, i, **k),
     lambda p, i, **k: ref_gather_nd(p, i, **k), (3, 4, 2),
     [[[0, 1], [2, 3]], [[4, 0], [1, -1]]]),
    ("gather_nd[batch_dims=1]", lambda p, i, **k: pg.gather_nd(p, i, batch_dims=1, **k),
     lambda p, i, **k: ref_gather_nd(p, i, batch_dims=1, **k), (2, 3, 4),
     [[[2], [0], [3]], [[1], [-1], [0]]]),
    ("gather", lambda p, i, **k: pg.gather(p, i, axis=1, **k),
     lambda p, i, **k: ref_gather(p, i, axis=1, **k), (3, 4, 2), [[3, 0, 4], [1, -1, 0]]),
    ("gather[batch_dims=1]", lambda p, i, **k: pg.gather(p, i, axis=1, batch_dims=1, **k),
     lambda p, i, **k: ref_gather(p, i, axis=1, batch_dims=1, **k), (2, 4, 3),
     [[0, 3, 5, 1], [2, 2, 1, -7]]),
    ("gather_d", lambda p, i, **k: pg.gather_d(p, 1, i, **k),
     lambda p, i, **k: ref_gather_d(p, 1, i, **k), (3, 4),
     [[0, 3, -1, 4, 2], [1, -5, 0, 0, 3]]),
    ("take_along_axis", lambda p, i, **k: pg.take_along_axis(p, i, axis=1, **k),
     lambda p, i, **k: ref_take_along_axis(p, i, axis=1, **k), (3, 4, 2),
     [[[0, 3], [-1, 4], [1, 1]]]),
]  # fmt: skip
cases = pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])


def run_onnx(model, feeds):
    session = ort.InferenceSession(model.SerializeToString())
    (out,) = session.run(None, feeds)
    return out


@cases
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap", "", "unchecked"])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_symbolic_call_builds_model_that_runs(case, policy, index_dtype):
    _, call, reference, shape, bad = case
    indices = np.asarray(bad, dtype=index_dtype)
    if policy == "unchecked":  # unspecified values for bad indices: feed valid ones
        n = shape[1] if case[0] != "gather_nd" else min(shape[:2])
        indices = np.abs(indices) % n
    params = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1) * 0.5
    p = ndx.argument(shape=shape, dtype=ndx.float32)
    i = ndx.argument(shape=indices.shape, dtype=getattr(ndx, index_dtype))
    out = call(p, i, bad_indices=policy, fill_value=-9)
    model = ndx.build({"params": p, "indices": i}, {"out": out})
    result = run_onnx(model, {"params": params, "indices": indices})
    # Symbolic indices cannot be read: TensorFlow's default ("") is "ignore" here.
    expected_policy = {"": "ignore", "unchecked": "error"}.get(policy, policy)
    expected = reference(params, indices, bad_indices=expected_policy, fill_value=-9)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, expected)


@cases
def test_error_policy_is_refused_on_symbolic_arrays(case):
    _, call, _, shape, bad = case
    p = ndx.argument(shape=shape, dtype=ndx.float32)
    i = ndx.argument(shape=np.shape(bad), dtype=ndx.int64)
    with pytest.raises(ValueError, match=r'cannot be enforced.*"ignore", "clip"'):
        call(p, i, bad_indices="error")


def test_model_with_symbolic_params_and_constant_indices():
    """Concrete indices are checked when the model is built; the model holds them."""
    p = ndx.argument(shape=(3, 4), dtype=ndx.float32)
    out = pg.gather_nd(p, [[2, 1], [0, 3]])
    model = ndx.build({"params": p}, {"out": out})
    params = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run_onnx(model, {"params": params}), [9.0, 3.0])
    with pytest.raises(IndexError, match=r"indices\[1\] = \[0, 4\]"):
        pg.gather_nd(p, [[2, 1], [0, 4]])


def test_export_example_script(tmp_path):
    script = Path(__file__).parents[1] / "examples" / "export_onnx.py"
    module = runpy.run_path(str(script))
    target = tmp_path / "gather_nd.onnx"
    module["main"](target)
    assert target.stat().st_size > 0
    session = ort.InferenceSession(str(target))
    assert [x.name for x in session.get_inputs()] == ["params", "indices"]
