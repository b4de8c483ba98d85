"""The compat modules against the libraries they imitate, on every backend.

Each case is run through the real library (where it is installed) on NumPy data, and through
the compat function on each backend's arrays; the two must agree in values and shape.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from helpers import onnxruntime_node
from portagather.compat import mindspore as ms_compat
from portagather.compat import onnx as onnx_compat
from portagather.compat import tensorflow as tf_compat
from portagather.compat import torch as torch_compat

P = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
X = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)

# (name, args as NumPy, kwargs); the args are data first, then indices (where they are).
TF_CASES = [
    ("gather_nd", (P, np.array([[1, 2], [0, 0]])), {}),
    ("gather_nd", (P, np.array([[2], [0]])), {"batch_dims": 1}),
    ("gather_nd", (P, np.zeros((2, 0), np.int64)), {}),
    ("gather_nd", (P, np.array([[[1, 2, 3]], [[0, 0, 7]]])), {"bad_indices_policy": "IGNORE"}),
    ("gather", (P, np.array([2, 0, 1])), {"axis": 1}),
    ("gather", (P, np.array([[3, 0], [1, 1]])), {"axis": -1, "batch_dims": 1}),
    ("gather", (P, np.array([[0, 2], [1, 1]])), {"batch_dims": -1}),
    ("gather", (P, np.array(1)), {"axis": 2}),
]
MS_CASES = [
    ("GatherD", (X, 1, np.array([[0, -1], [2, 0]])), {}),
    ("gather_d", (X, 0, np.array([[1, 0, 1]])), {}),
    ("gather_elements", (X, -1, np.array([[2], [-3]])), {}),
    ("GatherNd", (P, np.array([[1, 2], [0, 1]])), {}),
    ("gather_nd", (P, np.array([[1, 2, 3]])), {}),
    ("gather", (P, np.array([2, -1]), 1), {}),
    ("gather", (P, np.array([[3, -4], [0, 1]]), 2), {"batch_dims": 1}),
]
ONNX_CASES = [
    ("gather", (P, np.array([[1, -1], [0, -2]])), {"axis": 1}),
    ("gather", (P, np.array([-2, 1])), {}),
    ("gather_elements", (X, np.array([[0, -1], [-3, 2]])), {"axis": 1}),
    ("gather_nd", (P, np.array([[-1, 2], [0, -3]])), {}),
    ("gather_nd", (P, np.array([[-1, -4], [0, 3]])), {"batch_dims": 1}),
]
TORCH_CASES = [
    ("gather", (X, 1, np.array([[2, 0], [1, 1]])), {}),
    ("gather", (P, 0, np.array([[[1, 0]]])), {}),
    ("take_along_dim", (P, np.array([[[0], [3], [-1]]])), {"dim": 2}),
    ("take_along_dim", (X, np.array([5, 1, 0])), {}),
    ("take_along_dim", (X, np.array([[-1], [0]])), {"dim": 1}),
]


def _on(backend, args):
    return [backend.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


def _check(backend, compat, case, wanted):
    name, args, kwargs = case
    fn = getattr(compat, name)
    fn = fn() if isinstance(fn, type) else fn
    out = fn(*_on(backend, args), **kwargs)
    got = backend.to_numpy(out)
    assert got.shape == wanted.shape
    np.testing.assert_array_equal(got, wanted)


@functools.cache
def _tf_result(i):
    import tensorflow as tf

    name, args, kwargs = TF_CASES[i]
    return getattr(tf, name)(*args, **kwargs).numpy()


@functools.cache
def _ms_result(i):
    import mindspore as ms
    from mindspore import ops

    name, args, kwargs = MS_CASES[i]
    fn = getattr(ops, name)
    fn = fn() if isinstance(fn, type) else fn
    ms_args = [ms.Tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    return fn(*ms_args, **kwargs).asnumpy()


@functools.cache
def _onnx_result(i):
    name, (data, indices), kwargs = ONNX_CASES[i]
    op = {"gather": "Gather", "gather_elements": "GatherElements", "gather_nd": "GatherND"}[name]
    return onnxruntime_node(op, data, indices, **kwargs)


@functools.cache
def _torch_result(i):
    import torch

    name, args, kwargs = TORCH_CASES[i]
    t_args = [torch.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    return getattr(torch, name)(*t_args, **kwargs).numpy()


FRONT_ENDS = {
    "tensorflow": (tf_compat, TF_CASES, _tf_result),
    "mindspore": (ms_compat, MS_CASES, _ms_result),
    "onnx": (onnx_compat, ONNX_CASES, _onnx_result),
    "torch": (torch_compat, TORCH_CASES, _torch_result),
}


@pytest.mark.parametrize(
    ("front_end", "i"),
    [(name, i) for name, (_, cases, _) in FRONT_ENDS.items() for i in range(len(cases))],
)
def test_front_end_equals_its_library(backend, front_end, i):
    compat, cases, result = FRONT_ENDS[front_end]
    _check(backend, compat, cases[i], result(i))
