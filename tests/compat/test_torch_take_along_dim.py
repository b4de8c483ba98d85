"""``compat.torch.take_along_dim(dim=None)``: the core's gather from the flattened data
(``_routes.flat_call``), whose route is kept under the arrays as given, checked against
PyTorch's own ``torch.take_along_dim`` and a plain loop, cold and on a warm route."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from portagather.compat import torch as torch_compat
from portagather.conformance.backends import load_backend

BACKENDS = ["numpy", "torch", "jax", "dask", "array_api_strict", "ndonnx"]


def _loop(data: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The flat positions' elements, one by one, in float64."""
    flat = [float(v) for v in np.asarray(data, dtype=np.float64).reshape(-1)]
    return np.array([flat[int(i)] for i in np.asarray(index).reshape(-1)], dtype=np.float64)


def _torch(data: np.ndarray, index: np.ndarray) -> np.ndarray:
    return torch.take_along_dim(torch.asarray(data), torch.asarray(index)).numpy()


@pytest.mark.parametrize("name", BACKENDS)
def test_flat_gather_of_nd_arrays_matches_torch_cold_and_warm(name):
    backend = load_backend(name)
    rng = np.random.default_rng(7)
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    index = np.array([[23, 0, 5], [11, 11, 17]])
    other = np.array([1, 22, 3, 0])  # another index shape: another route
    for _ in range(3):  # the first call checks and keeps the route, the others find it
        for idx in (index, other):
            got = backend.to_numpy(torch_compat.take_along_dim(backend.asarray(data),
                                                               backend.asarray(idx)))  # fmt: skip
            assert got.dtype == np.float32
            assert got.shape == (idx.size,)
            np.testing.assert_array_equal(got, _torch(data, idx))
            np.testing.assert_array_equal(got.astype(np.float64), _loop(data, idx))


@pytest.mark.parametrize("name", ["numpy", "torch", "jax"])
def test_flat_gather_raises_pytorchs_message_on_a_warm_route(name):
    backend = load_backend(name)
    x = backend.asarray(np.arange(24, dtype=np.int64).reshape(2, 3, 4))
    np.testing.assert_array_equal(
        backend.to_numpy(torch_compat.take_along_dim(x, backend.asarray([[0, 23]]))), [0, 23]
    )
    for bad in (-1, 24):
        message = rf"^index {bad} is out of bounds for dimension 0 with size 24$"
        with pytest.raises(IndexError, match=message):
            torch_compat.take_along_dim(x, backend.asarray([[0, bad]]))
    with pytest.raises(TypeError, match=r"^indices must have an integer dtype"):
        torch_compat.take_along_dim(x, backend.asarray([[0.0, 1.0]]))


def test_flat_gather_of_a_transposed_tensor_reads_its_logical_order():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.asarray(data).T  # not contiguous: flattened in its own row-major order
    index = np.array([[0, 1], [2, 11]])
    for _ in range(2):
        got = torch_compat.take_along_dim(t, torch.asarray(index)).numpy()
        # (PyTorch's own refuses a tensor it cannot view flat: its contiguous copy's answer)
        want = torch.take_along_dim(t.contiguous(), torch.asarray(index)).numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, _loop(data.T, index))


def test_flat_gather_of_python_values_beside_a_tensor_index_is_a_tensor():
    data = [[1.5, 2.5], [3.5, 4.5]]
    got = torch_compat.take_along_dim(data, torch.tensor([[3], [0]]))
    assert isinstance(got, torch.Tensor)
    want = torch.take_along_dim(torch.tensor(data), torch.tensor([[3], [0]]))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
