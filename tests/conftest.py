"""Backends for the test suite: one test body runs on each of them.

A ``Backend`` turns NumPy data into its own arrays and back, and says which dtypes it holds.
JAX runs with its default configuration (no ``jax_enable_x64``), as most users run it; the
tests that need 64-bit JAX switch it on locally with ``jax.enable_x64``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import array_api_compat
import numpy as np
import pytest

ALL_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip


@dataclass
class Backend:
    name: str
    module: str
    dtypes: tuple[str, ...] = ALL_DTYPES
    lazy: bool = False
    _xp: object = field(default=None, repr=False)

    @property
    def xp(self):
        """The backend's array-API namespace; a missing backend fails loudly."""
        if self._xp is None:
            try:
                module = importlib.import_module(self.module)
            except ImportError as err:  # the test extra installs every backend
                pytest.fail(
                    f"backend {self.name} cannot be imported ({err}); pip install -e '.[test]'"
                )
            self._xp = array_api_compat.array_namespace(module.asarray(np.zeros(1, np.float32)))
        return self._xp

    def asarray(self, values, dtype=None):
        """A backend array holding `values` (NumPy data or nested lists)."""
        values = np.asarray(values, dtype=dtype)
        if self.name == "numpy":
            return values.copy()
        if self.name == "dask":
            import dask.array as da

            # Small chunks, so that every gather crosses chunk boundaries.
            return da.from_array(values, chunks=tuple(max(1, (s + 1) // 2) for s in values.shape))
        if self.name == "torch":
            import torch

            return torch.asarray(values.copy())
        if self.name == "ndonnx":
            return self.xp.asarray(values)
        return self.xp.asarray(values)

    def to_numpy(self, array):
        if self.name == "dask":
            return np.asarray(array.compute())
        if self.name == "ndonnx":
            return array.unwrap_numpy()
        if self.name == "torch":
            return array.detach().cpu().numpy()
        if self.name == "array_api_strict":
            return np.from_dlpack(array)
        return np.asarray(array)


def _make_backends():
    jax_dtypes = tuple(
        d for d in ALL_DTYPES if d not in ("int64", "uint64", "float64", "complex128")
    )
    torch_dtypes = tuple(d for d in ALL_DTYPES if d not in ("uint16", "uint32", "uint64"))
    strict_dtypes = tuple(d for d in ALL_DTYPES if d != "float16")  # not in the standard
    ndonnx_dtypes = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))
    return [
        Backend("numpy", "numpy"),
        Backend("array_api_strict", "array_api_strict", dtypes=strict_dtypes),
        Backend("jax", "jax.numpy", dtypes=jax_dtypes),
        Backend("torch", "torch", dtypes=torch_dtypes),
        Backend("dask", "dask.array", lazy=True),
        Backend("ndonnx", "ndonnx", dtypes=ndonnx_dtypes),
    ]


BACKENDS = _make_backends()


@pytest.fixture(params=BACKENDS, ids=lambda b: b.name)
def backend(request) -> Backend:
    return request.param


def backends_with_dtypes(dtypes):
    """pytest params of (backend, dtype) for the dtypes each backend holds."""
    return [
        pytest.param(b, d, id=f"{b.name}-{d}") for b in BACKENDS for d in dtypes if d in b.dtypes
    ]
