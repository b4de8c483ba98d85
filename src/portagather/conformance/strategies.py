"""Hypothesis strategies that draw valid calls of the four operations.

Each draws shapes that satisfy docs/contract.md and index values either all valid or (``bad=True``)
from a wider range that includes negatives and values past the end. Data values are distinct
(``arange``), so a wrong position never reads an equal value by chance.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
from hypothesis import strategies as st

from .cases import Call, Chunks

SIZES = st.integers(1, 3)


def _data(shape: tuple[int, ...]) -> npt.NDArray[np.int32]:
    return (np.arange(int(np.prod(shape)), dtype=np.int32) + 1).reshape(shape)


def _values(draw: st.DrawFn, shape: tuple[int, ...], low: int, high: int) -> npt.NDArray[np.int64]:
    count = int(np.prod(shape))
    values = draw(st.lists(st.integers(low, high), min_size=count, max_size=count))
    return np.asarray(values, dtype=np.int64).reshape(shape)


def _range(n: int, allow_negative: bool, bad: bool) -> tuple[int, int]:
    if bad:
        return -n - 2, n + 2
    return (-n if allow_negative else 0), n - 1


@st.composite
def gather_nd_calls(draw: st.DrawFn, batch: bool, bad: bool = False) -> Call:
    b = draw(st.integers(1, 2)) if batch else 0
    r = draw(st.integers(b + 1, b + 3))
    shape = tuple(draw(SIZES) for _ in range(r))
    depth = draw(st.integers(0 if not bad else 1, r - b))
    grid = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    index_shape = shape[:b] + grid + (depth,)
    index_dims = shape[b : b + depth]
    columns = [_values(draw, shape[:b] + grid + (1,), *_range(n, False, bad)) for n in index_dims]
    empty = np.zeros(index_shape, dtype=np.int64)
    indices = np.concatenate(columns, axis=-1) if columns else empty
    return Call("gather_nd", _data(shape), indices, {"batch_dims": b})


@st.composite
def gather_calls(draw: st.DrawFn, batch: bool, bad: bool = False) -> Call:
    b = draw(st.integers(1, 2)) if batch else 0
    r = draw(st.integers(b + 1, b + 3))
    shape = tuple(draw(SIZES) for _ in range(r))
    axis = draw(st.integers(b, r - 1))
    grid = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    indices = _values(draw, shape[:b] + grid, *_range(shape[axis], False, bad))
    q = indices.ndim
    kwargs = {"axis": draw(st.sampled_from([axis, axis - r]))}
    if batch:  # TensorFlow's negative batch_dims counts from indices.ndim
        kwargs["batch_dims"] = draw(st.sampled_from([b, b - q] if b < q else [b]))
    if axis == b and kwargs.get("batch_dims", 0) >= 0 and draw(st.booleans()):
        del kwargs["axis"]  # axis defaults to batch_dims (as given: a negative one is an axis)
    return Call("gather", _data(shape), indices, kwargs)


@st.composite
def gather_d_calls(draw: st.DrawFn, bad: bool = False) -> Call:
    r = draw(st.integers(1, 3))
    shape = tuple(draw(SIZES) for _ in range(r))
    dim = draw(st.integers(0, r - 1))
    index_shape = tuple(
        draw(st.integers(0, 3)) if d == dim else draw(st.integers(0, shape[d])) for d in range(r)
    )
    indices = _values(draw, index_shape, *_range(shape[dim], True, bad))
    return Call("gather_d", _data(shape), indices, {"dim": draw(st.sampled_from([dim, dim - r]))})


@st.composite
def take_along_axis_calls(draw: st.DrawFn, bad: bool = False) -> Call:
    r = draw(st.integers(1, 3))
    axis = draw(st.integers(0, r - 1))
    shape, index_shape = [], []
    for d in range(r):
        size = draw(SIZES)
        if d == axis:
            shape.append(size)
            index_shape.append(draw(st.integers(0, 3)))
        else:  # equal, or one side 1 (broadcast)
            pair = draw(st.sampled_from([(size, size), (size, 1), (1, size)]))
            shape.append(pair[0])
            index_shape.append(pair[1])
    indices = _values(draw, tuple(index_shape), *_range(shape[axis], True, bad))
    kwargs = {"axis": draw(st.sampled_from([axis, axis - r]))}
    return Call("take_along_axis", _data(tuple(shape)), indices, kwargs)


@st.composite
def chunkings(draw: st.DrawFn, shape: tuple[int, ...]) -> Chunks:
    """Dask chunks for `shape`: up to three chunks per axis, zero-size and one-element
    chunks included."""
    chunks = []
    for n in shape:
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=2)))
        edges = [0, *cuts, n]
        chunks.append(tuple(b - a for a, b in itertools.pairwise(edges)))
    return tuple(chunks)


@st.composite
def _laid_out(draw: st.DrawFn, calls: st.SearchStrategy[Call]) -> Call:
    call = draw(calls)
    call.chunks = (draw(chunkings(call.data.shape)), draw(chunkings(np.shape(call.indices))))
    return call


def calls(op: str, *, batch: bool = False, bad: bool = False) -> st.SearchStrategy[Call]:
    """Calls of `op`, with data and indices in drawn chunks (used by backends with chunks)."""
    if op == "gather_nd":
        drawn = gather_nd_calls(batch, bad)
    elif op == "gather":
        drawn = gather_calls(batch, bad)
    elif op == "gather_d":
        drawn = gather_d_calls(bad)
    else:
        drawn = take_along_axis_calls(bad)
    return _laid_out(drawn)
