"""Backends for the test suite: one test body runs on each of them.

A ``Backend`` turns NumPy data into its own arrays and back, and says which dtypes it holds.
JAX runs with its default configuration (no ``jax_enable_x64``), as most users run it; the
tests that need 64-bit JAX switch it on locally with ``jax.enable_x64``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from portagather.conformance.backends import load_backend

ALL_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip


@dataclass
class Backend:
    name: str
    dtypes: tuple[str, ...] = ALL_DTYPES
    lazy: bool = False

    @property
    def loaded(self):
        """The conformance suite's backend of this name; a missing backend fails loudly."""
        try:
            return load_backend(self.name)
        except ImportError as err:  # the test extra installs every backend
            pytest.fail(str(err))

    @property
    def xp(self):
        return self.loaded.xp

    def asarray(self, values, dtype=None):
        """A backend array holding a copy of `values`; Dask in chunks of about half each axis."""
        return self.loaded.asarray(values, dtype)

    def to_numpy(self, array):
        return self.loaded.to_numpy(array)


def _make_backends():
    jax_dtypes = tuple(
        d for d in ALL_DTYPES if d not in ("int64", "uint64", "float64", "complex128")
    )
    torch_dtypes = tuple(d for d in ALL_DTYPES if d not in ("uint16", "uint32", "uint64"))
    strict_dtypes = tuple(d for d in ALL_DTYPES if d != "float16")  # not in the standard
    ndonnx_dtypes = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))
    return [
        Backend("numpy"),
        Backend("array_api_strict", dtypes=strict_dtypes),
        Backend("jax", dtypes=jax_dtypes),
        Backend("torch", dtypes=torch_dtypes),
        Backend("dask", lazy=True),
        Backend("ndonnx", dtypes=ndonnx_dtypes),
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
