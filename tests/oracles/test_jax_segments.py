"""portagather's segment reductions against ``jax.ops.segment_sum`` / ``_max`` / ``_min`` /
``_prod``, values and gradients, on drawn data: empty segments, all-equal, sorted and
unsorted ids (1-d: ``jax.ops`` takes no others), every dtype (64-bit ones under
``jax.enable_x64``), NaN and infinities, and negative and too-large ids under every policy.

``jax.ops`` drops every id outside ``[0, num_segments)``: that is ``"ignore"``; ``"clip"``
and ``"wrap"`` are ``jax.ops`` on the clipped or wrapped ids; ``"error"`` raises exactly
when some id is bad; ``"unchecked"`` is compared on valid ids only. portagather runs on
NumPy, PyTorch and Dask here (JAX itself runs the conformance suite), and on JAX for the
gradients.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import portagather as pg

from .scatter_draws import on, to_numpy
from .segment_draws import REAL, SEGMENTS, same, segment_cases

POLICIES = ("error", "ignore", "clip", "wrap", "unchecked")
BACKENDS = st.sampled_from(["numpy", "torch", "dask"])


# jax.ops runs on arrays padded to one shape (the rows past the data with an id that it
# drops), so that it compiles once per operation and dtype, not once per drawn shape.
ROWS, WIDTH, SEGMENTS_PADDED = 8, 3, 6


def _padded(data, ids):
    rows = np.zeros((ROWS, WIDTH), dtype=data.dtype)
    flat = data.reshape(ids.shape[0], int(np.prod(data.shape[1:])))
    rows[: flat.shape[0], : flat.shape[1]] = flat
    padded_ids = np.full(ROWS, -1, dtype=np.int64)
    padded_ids[: ids.shape[0]] = ids
    return rows, padded_ids


def _jax_ops(op, data, ids, n):
    """``jax.ops.segment_<op>(data, ids, n)``, ids past `n` dropped, on the padded shape."""
    rows, padded_ids = _padded(data, np.where(ids < n, ids, -1))
    with jax.enable_x64(True):
        out = np.asarray(_JITTED[op](rows, padded_ids))
    inner = data.shape[1:]
    return out[:n, : int(np.prod(inner))].reshape((n, *inner))


_JITTED = {
    op: jax.jit(lambda d, i, op=op: getattr(jax.ops, f"segment_{op}")(d, i, SEGMENTS_PADDED))
    for op in ("sum", "max", "min", "prod")
}


@SEGMENTS
@given(st.sampled_from(["sum", "max", "min", "prod"]), st.sampled_from(POLICIES), st.data(),
       BACKENDS)  # fmt: skip
def test_segment_ops(op, policy, draw, name):
    data, ids, n = draw.draw(segment_cases(REAL, specials=op != "prod", small=op == "prod",
                                           bad=policy != "unchecked", one_d=True))  # fmt: skip
    bad = (ids < 0) | (ids >= n)
    moved = {"clip": np.clip(ids, 0, n - 1), "wrap": ids % n}.get(policy, ids)
    data_b, ids_b = on(name, data, ids)
    call = getattr(pg, f"segment_{op}")
    if policy == "error" and bad.any():
        with pytest.raises(IndexError, match=r"segment_ids\[.*\] = -?\d+ is out of range"):
            to_numpy(name, call(data_b, ids_b, n, bad_indices=policy))
        return
    same(to_numpy(name, call(data_b, ids_b, n, bad_indices=policy)), _jax_ops(op, data, moved, n))


_WEIGHTS = jnp.arange(1.0, 1.0 + SEGMENTS_PADDED * WIDTH).reshape(SEGMENTS_PADDED, WIDTH)


def _gradient(f):
    """The jitted gradient of ``sum(w * f(x, ids))`` over its finite entries."""

    def loss(x, ids):
        out = f(x, ids)
        return jnp.sum(jnp.where(jnp.isfinite(out), _WEIGHTS * out, 0.0))

    return jax.jit(jax.grad(loss))


def _pg(op):
    return lambda x, i: getattr(pg, f"segment_{op}")(x, i, SEGMENTS_PADDED, bad_indices="ignore")


def _ops(op):
    return lambda x, i: getattr(jax.ops, f"segment_{op}")(x, i, SEGMENTS_PADDED)


_GRADIENTS = {(op, lib): _gradient(make(op)) for op in ("sum", "max", "min")
              for lib, make in (("pg", _pg), ("jax", _ops))}  # fmt: skip


@SEGMENTS
@given(st.sampled_from(["sum", "max", "min"]), segment_cases(("float32",), one_d=True))
def test_gradients(op, case):
    """The gradient of ``sum(w * segment_<op>(x))`` (under ``jit``) equals ``jax.ops``'s: a
    gather for the sum, the arg-max (arg-min) for the max (min), split evenly between ties;
    nothing for dropped rows."""
    data, ids, _ = case
    rows, padded_ids = _padded(data, ids)
    mine = _GRADIENTS[op, "pg"](jnp.asarray(rows), jnp.asarray(padded_ids))
    theirs = _GRADIENTS[op, "jax"](jnp.asarray(rows), jnp.asarray(padded_ids))
    same(np.asarray(mine), np.asarray(theirs))
