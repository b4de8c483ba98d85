"""Segment reduction calls for the oracle tests: data, ids and ``num_segments`` drawn so that
every library's answer is exact and independent of the order in which it combines rows.

Data values are small integers (-3..3, -2..2 for products), exact in every dtype and in any
order of summation; with `specials`, floating data also holds NaN, inf and -inf. Ids come in
three patterns (random, all equal, sorted with gaps: empty segments), with negative and
too-large values when `bad`.
"""

from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

from portagather.conformance.strategies import examples

from .oracle_settings import ORACLE

#: The segment oracles draw fewer cases than the gathers' (each case runs several libraries).
SEGMENTS = settings(ORACLE, max_examples=examples(40))

#: The backends of the compat inputs: JAX, whose eager calls compile for each new shape, runs
#: the core's conformance suite and the jax.ops oracle instead.
compat_backends = st.sampled_from(["numpy", "torch"])

#: Data dtypes every oracle library holds (JAX under ``jax.enable_x64``).
REAL = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float16", "float32",
        "float64")  # fmt: skip
FLOATING = ("float16", "float32", "float64")


@st.composite
def segment_cases(
    draw, dtypes=REAL, *, bad=True, specials=False, one_d=False, small=False, sorted_ids=False
):
    """``(data, ids, num_segments)``: ids of 1 (or 2, unless `one_d`) dimensions over data
    with 0 or 1 more axes."""
    id_ndim = 1 if one_d else draw(st.integers(1, 2))
    id_shape = tuple(draw(st.integers(0, 6)) for _ in range(id_ndim))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 1))))
    n = draw(st.integers(1, 5))
    count = int(np.prod(id_shape))
    pattern = draw(st.sampled_from(["random", "equal", "sorted"]))
    low, high = (-2, n + 1) if bad else (0, n - 1)
    if pattern == "equal":
        ids = np.full(id_shape, draw(st.integers(low, high)), dtype=np.int64)
    else:
        ids = np.asarray(
            draw(st.lists(st.integers(low, high), min_size=count, max_size=count)), dtype=np.int64
        ).reshape(id_shape)
        if pattern == "sorted" or sorted_ids:
            ids = np.sort(ids, axis=None).reshape(id_shape)
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = id_shape + inner
    top = 2 if small else 3
    lowest = 0 if dtype.kind == "u" else -top
    values = draw(st.lists(st.integers(lowest, top), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))  # fmt: skip
    data = np.asarray(values, dtype=np.int64).reshape(shape).astype(dtype)
    if specials and dtype.kind == "f" and data.size:
        flat = data.reshape(-1)
        for _ in range(draw(st.integers(1, 3))):
            flat[draw(st.integers(0, flat.size - 1))] = draw(
                st.sampled_from([np.nan, np.inf, -np.inf])
            )
    return data, ids, n


def same(got, want, ulps=0):
    """Equality of dtype, shape and values (NaNs compare equal), exact or within `ulps`
    units in the last place (for a square root, which libraries round differently)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if ulps:
        np.testing.assert_array_max_ulp(got, want, maxulp=ulps)
    else:
        np.testing.assert_array_equal(got, want, strict=True)
