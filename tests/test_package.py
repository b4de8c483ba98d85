"""Import cost, index widths and other package-level promises."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import portagather as pg
from portagather.engines import engine_for


def test_import_pulls_in_no_backend():
    code = (
        "import sys, portagather\n"
        "heavy = [m for m in ('jax', 'torch', 'dask', 'ndonnx', 'array_api_strict') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_names():
    assert set(pg.__all__) == {
        "POLICIES", "REDUCTIONS", "gather", "gather_d", "gather_nd", "take_along_axis",
        "scatter_nd", "scatter_d", "put_along_axis", "SEGMENT_REDUCTIONS", "segment_sum",
        "segment_mean", "segment_max", "segment_min", "segment_prod", "segment_csr",
        "segment_softmax", "segment_log_softmax", "segment_logsumexp", "segment_argmax",
        "segment_argmin", "segment_var", "segment_std", "segment_count", "bincount",
    }  # fmt: skip
    assert pg.POLICIES == ("error", "ignore", "clip", "wrap", "unchecked")
    assert pg.REDUCTIONS == ("update", "add", "multiply", "min", "max")
    assert pg.SEGMENT_REDUCTIONS == ("sum", "mean", "max", "min", "prod")


@pytest.mark.parametrize(
    ("module", "largest", "expected"),
    [
        ("array_api_strict", 2**31 - 1, "int32"),
        ("array_api_strict", 2**31, "int64"),
        ("dask.array", 10, "int32"),
        ("torch", 10, "int64"),  # PyTorch's gathers take int64 only
        ("ndonnx", 10, "int64"),  # so does ndonnx's take
        ("numpy", 10, "int64"),  # NumPy's take converts every other width to intp
        ("jax.numpy", 2**31 - 1, "int32"),
    ],
)
def test_flat_index_width(module, largest, expected):
    import importlib

    import array_api_compat

    xp = array_api_compat.array_namespace(importlib.import_module(module).asarray(np.zeros(1)))
    assert engine_for(xp).flat_index_dtype(largest) == getattr(xp, expected)


def test_jax_without_x64_refuses_more_than_int32_positions():
    import jax
    import jax.numpy as jnp

    assert not jax.config.read("jax_enable_x64")
    big = jax.ShapeDtypeStruct(
        (2**16, 2**15 + 1), jnp.int8
    )  # 2**31 + 2**16 elements, never allocated
    with pytest.raises(ValueError, match=r"(?s)int32.*jax_enable_x64"):
        jax.eval_shape(
            lambda p: pg.gather_nd(p, jnp.zeros((1, 2), dtype=jnp.int32), bad_indices="clip"), big
        )
    # Within int32 the same call plans fine.
    small = jax.ShapeDtypeStruct((2**15, 2**15), jnp.int8)
    out = jax.eval_shape(
        lambda p: pg.gather_nd(p, jnp.zeros((1, 2), dtype=jnp.int32), bad_indices="clip"), small
    )
    assert out.shape == (1,)


def test_jax_with_x64_uses_int64_for_large_arrays():
    import array_api_compat
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        xp = array_api_compat.array_namespace(jnp.zeros(1))
        assert engine_for(xp).flat_index_dtype(2**31) == jnp.int64


def test_a_namespace_without_int64_works_in_its_widest_integer():
    """The policies work in the widest signed integer the namespace has, as its
    ``__array_namespace_info__`` lists them (array-api-strict can be built without int64)."""
    from portagather.engines import Engine

    class Info:
        def dtypes(self, *, device=None, kind=None):  # the standard's signature
            assert kind == "signed integer" and device is None
            return {"int8": "int8", "int16": "int16", "int32": "int32"}

    class Namespace:
        int32, int64 = "int32", "int64"

        def __array_namespace_info__(self):
            return Info()

    assert Engine(Namespace()).wide_index_dtype() == "int32"
    assert Engine(Namespace()).flat_index_dtype(10) == "int32"
