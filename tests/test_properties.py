"""Random shapes, depths, batch dims, dtypes and policies, checked against the loop reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BACKENDS
from helpers import assert_same, call, expected

POLICIES = ["error", "ignore", "clip", "wrap", "unchecked", "", "IGNORE"]
EXAMPLES = {
    "numpy": 300,
    "array_api_strict": 120,
    "jax": 80,
    "torch": 120,
    "dask": 60,
    "ndonnx": 40,
}
dims = st.integers(0, 3)


@st.composite
def gather_nd_case(draw):
    rank = draw(st.integers(1, 5))
    batch_dims = draw(st.integers(0, rank - 1))
    depth = draw(st.integers(0, rank - batch_dims))
    shape = tuple(draw(dims) for _ in range(rank))
    grid = tuple(draw(dims) for _ in range(draw(st.integers(0, 5 - batch_dims))))
    index_shape = shape[:batch_dims] + grid + (depth,)
    return (
        "gather_nd",
        shape,
        index_shape,
        {"batch_dims": batch_dims},
        [*shape[batch_dims : batch_dims + depth]],
    )


@st.composite
def gather_case(draw):
    rank = draw(st.integers(1, 5))
    axis = draw(st.integers(0, rank - 1))
    batch_dims = draw(st.integers(0, axis))
    shape = tuple(draw(dims) for _ in range(rank))
    grid = tuple(draw(dims) for _ in range(draw(st.integers(0, 3))))
    index_rank = batch_dims + len(grid)
    options = {"batch_dims": draw(st.sampled_from([batch_dims, batch_dims - index_rank]))}
    # axis=None means batch_dims as given, so only a non-negative batch_dims names this axis.
    defaults = [None] if axis == batch_dims and options["batch_dims"] >= 0 else []
    options["axis"] = draw(st.sampled_from([axis, axis - rank, *defaults]))
    return "gather", shape, shape[:batch_dims] + grid, options, [shape[axis]]


@st.composite
def gather_d_case(draw):
    rank = draw(st.integers(1, 4))
    dim = draw(st.integers(0, rank - 1))
    shape = tuple(draw(dims) for _ in range(rank))
    index_shape = tuple(
        draw(st.integers(0, 4)) if d == dim else draw(st.integers(0, s))
        for d, s in enumerate(shape)
    )
    return (
        "gather_d",
        shape,
        index_shape,
        {"dim": draw(st.sampled_from([dim, dim - rank]))},
        [shape[dim]],
    )


@st.composite
def take_along_axis_case(draw):
    rank = draw(st.integers(1, 4))
    axis = draw(st.integers(0, rank - 1))
    shape, index_shape = [], []
    for d in range(rank):
        size = draw(dims)
        if d == axis:
            shape.append(size)
            index_shape.append(draw(st.integers(0, 4)))
        else:  # equal sizes, or either side broadcast from 1
            kind = draw(st.sampled_from(["same", "x1", "i1"]))
            shape.append(1 if kind == "x1" else size)
            index_shape.append(1 if kind == "i1" else size)
    return (
        "take_along_axis",
        tuple(shape),
        tuple(index_shape),
        {"axis": draw(st.sampled_from([axis, axis - rank]))},
        [shape[axis]],
    )


@st.composite
def case(draw, backend):
    op, shape, index_shape, options, sizes = draw(
        st.one_of(gather_nd_case(), gather_case(), gather_d_case(), take_along_axis_case())
    )
    policy = draw(st.sampled_from(POLICIES))
    index_dtype = draw(
        st.sampled_from(
            [
                d
                for d in ("int8", "int16", "int32", "int64", "uint8", "uint32")
                if d in backend.dtypes
            ]
        )
    )
    data_dtype = draw(
        st.sampled_from(
            [d for d in ("float32", "int16", "bool", "complex64") if d in backend.dtypes]
        )
    )
    size = int(np.prod(shape))
    data = (np.arange(size) * 7 % 11).reshape(shape).astype(data_dtype)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    indices = rng.integers(-5, 6, size=index_shape)
    # Mostly valid values; component j of a gather_nd vector ranges over its own axis.
    limits = (
        np.maximum(np.array(sizes, dtype=np.int64), 1) if op == "gather_nd" else max(sizes[0], 1)
    )
    valid = indices % limits
    if policy == "unchecked":  # only valid indices have specified values
        indices = valid
    else:
        indices = np.where(rng.random(index_shape) < 0.85, valid, indices)
    if index_dtype.startswith("uint"):
        indices = np.abs(indices)
    return op, data, indices.astype(index_dtype), options, policy


def _run_property(backend):
    @settings(
        max_examples=EXAMPLES[backend.name],
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def run(data_strategy):
        op, data, indices, options, policy = data_strategy.draw(case(backend))
        kwargs = dict(options, bad_indices=policy)
        try:
            wanted = expected(backend, op, data, indices, index_dtype=indices.dtype, **kwargs)
        except IndexError:
            with pytest.raises(IndexError):
                call(backend, op, data, indices, index_dtype=indices.dtype, **kwargs)
            return
        actual = call(backend, op, data, indices, index_dtype=indices.dtype, **kwargs)
        assert_same(actual, wanted)

    run()


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
def test_matches_reference_on_random_cases(backend):
    _run_property(backend)
