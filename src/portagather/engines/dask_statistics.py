"""Dask: the segment toolkit's statistics in one pass over the data, as dense partials
combined in a tree (the partial plan of ``dask_segments``, with a pair or a triple per
segment instead of one value; flox's "map-reduce").

Each data block (rows along axis 0, the inner axes whole) reduces its rows into a partial
of every segment, then FAN_IN partials at a time are combined, in the blocks' order, until
one is left. Nothing here computes: every function adds tasks to a graph. The statistics:

- ``"argmax"`` / ``"argmin"``: (the extreme, the first position that holds it), a NaN being
  the extreme; combined by taking the extreme of the two and the first position among
  those that hold it (the earlier block's on a tie);
- ``"moments"``: (count, mean, sum of squared deviations from the mean), each block's
  from its own two passes, combined by Chan et al.'s pairwise update (no sum of squares
  to cancel);
- ``"exp"``: (shift, sum of ``exp(x - shift)``): the shift is the largest value where it is
  finite, else 0 (as the toolkit's eager steps take it); combined by rescaling both sums to
  the larger shift.

Where the partials would not fit a task (``dask_segments.plan_of``), the ids are not a
vector, sizes are unknown, or the data's inner axes are split into blocks, the functions
return None and the toolkit takes its steps of one reduction each.
"""

from __future__ import annotations

import math
from typing import Any

import dask.array as da
import numpy as np
from dask.delayed import delayed

from .dask_routes import block_starts, has_unknown_sizes
from .dask_scatter_routes import FAN_IN
from .dask_segments import plan_of

#: The arrays of each statistic's partial, in order.
STATISTICS = {"argmax": 2, "argmin": 2, "moments": 3, "exp": 2}


def segment_statistics(
    statistic: str, data: Any, ids: Any, segments: int
) -> tuple[Any, ...] | None:
    """`statistic` of the rows of Dask array `data` in `segments` segments at valid 1-d
    `ids`, as Dask arrays (see the module's docstring), or None where this plan does not
    serve."""
    if (
        ids.ndim != 1
        or not segments
        or has_unknown_sizes(data.chunks, ids.chunks)
        or any(len(c) != 1 for c in data.chunks[1:])
        or data.chunks[0] != ids.chunks[0]
        or np.dtype(data.dtype).kind != "f"
    ):
        return None
    inner = data.shape[1:]
    count = STATISTICS[statistic]
    if plan_of(segments * count, tuple((s,) for s in inner), np.float64, False) != "partial":
        return None
    starts = block_starts(data.chunks[0])
    blocks = data.to_delayed().reshape(-1)
    id_blocks = ids.to_delayed().reshape(-1)
    dtype = np.dtype(data.dtype)
    partials = [
        delayed(_partial, pure=True)(statistic, block, block_ids, start, segments, dtype)
        for block, block_ids, start in zip(blocks, id_blocks, starts, strict=True)
    ]
    while len(partials) > 1:
        partials = [
            delayed(_combined, pure=True)(statistic, *partials[k : k + FAN_IN])
            for k in range(0, len(partials), FAN_IN)
        ]
    root = partials[0]
    shape = (segments, *inner)
    dtypes = {"argmax": (dtype, np.int64), "argmin": (dtype, np.int64),
              "moments": (np.int64, dtype, dtype), "exp": (dtype, dtype)}[statistic]  # fmt: skip
    shapes = [(segments,) if d is np.int64 and statistic == "moments" else shape for d in dtypes]
    return tuple(
        da.from_delayed(delayed(_item, pure=True)(root, k), shape=s, dtype=d)
        for k, (s, d) in enumerate(zip(shapes, dtypes, strict=True))
    )


def _item(partial: tuple[Any, ...], k: int) -> Any:
    return partial[k]


def _partial(
    statistic: str, x: np.ndarray, ids: np.ndarray, start: int, segments: int, dtype: Any
) -> tuple[np.ndarray, ...]:
    """One block's partial: `x` (rows from position `start`) at `ids`."""
    shape = (segments, *x.shape[1:])
    ids = ids.astype(np.intp, copy=False)
    if statistic in ("argmax", "argmin"):
        ufunc, identity = (np.maximum, -np.inf) if statistic == "argmax" else (np.minimum, np.inf)
        extreme = np.full(shape, identity, dtype=dtype)
        with np.errstate(invalid="ignore"):
            _at(ufunc, extreme, ids, x)
            hit = (x == extreme[ids]) | np.isnan(x)
        rows = np.arange(start, start + len(ids), dtype=np.int64).reshape(
            (-1,) + (1,) * (x.ndim - 1)
        )
        first = np.full(shape, np.iinfo(np.int64).max, dtype=np.int64)
        _at(np.minimum, first, ids, np.where(hit, rows, np.iinfo(np.int64).max))
        return extreme, first
    if statistic == "moments":
        count = np.bincount(ids, minlength=segments).astype(np.int64)
        total = np.zeros(shape, dtype=dtype)
        _at(np.add, total, ids, x)
        divisor = np.maximum(count, 1).reshape((-1,) + (1,) * (x.ndim - 1)).astype(dtype)
        mean = total / divisor
        deviation = x - mean[ids]
        squares = np.zeros(shape, dtype=dtype)
        _at(np.add, squares, ids, deviation * deviation)
        return count, mean, squares
    largest = np.full(shape, -np.inf, dtype=dtype)
    with np.errstate(invalid="ignore"):
        _at(np.maximum, largest, ids, x)
    shift = np.where(np.isfinite(largest), largest, 0).astype(dtype)
    sums = np.zeros(shape, dtype=dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        _at(np.add, sums, ids, np.exp(x - shift[ids]))
    return largest, sums


def _at(ufunc: Any, target: np.ndarray, ids: np.ndarray, values: np.ndarray) -> None:
    """``ufunc.at(target, ids, values)`` for rows, as one ``ufunc.at`` on flat positions:
    NumPy's loop over whole rows is the slower one."""
    width = math.prod(target.shape[1:])
    if width == 1:
        ufunc.at(
            target.reshape(-1),
            ids,
            np.broadcast_to(values, ids.shape + target.shape[1:]).reshape(-1),
        )
        return
    flat = (ids[:, None] * width + np.arange(width)).reshape(-1)
    ufunc.at(
        target.reshape(-1), flat, np.broadcast_to(values, ids.shape + target.shape[1:]).reshape(-1)
    )


def _combined(statistic: str, *partials: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The partials of consecutive blocks as one, in their order."""
    result = partials[0]
    for other in partials[1:]:
        result = _pair(statistic, result, other)
    return result


def _pair(
    statistic: str, a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, ...]:
    if statistic in ("argmax", "argmin"):
        (m1, p1), (m2, p2) = a, b
        ufunc = np.maximum if statistic == "argmax" else np.minimum
        with np.errstate(invalid="ignore"):
            m = ufunc(m1, m2)
            never = np.iinfo(np.int64).max
            first = np.minimum(np.where(m1 == m, p1, never), np.where(m2 == m, p2, never))
        first = np.where(np.isnan(m2), p2, first)  # (NaN: the earlier block's first wins)
        first = np.where(np.isnan(m1), p1, first)
        return m, first
    if statistic == "moments":
        (n1, mean1, sq1), (n2, mean2, sq2) = a, b
        n = n1 + n2
        column = (-1,) + (1,) * (mean1.ndim - 1)
        w1 = (n1 / np.maximum(n, 1)).reshape(column).astype(mean1.dtype)
        w2 = (n2 / np.maximum(n, 1)).reshape(column).astype(mean1.dtype)
        delta = mean2 - mean1
        mean = mean1 * w1 + mean2 * w2
        squares = sq1 + sq2 + delta * delta * (w1 * n2.reshape(column).astype(mean1.dtype))
        return n, mean, squares
    (l1, s1), (l2, s2) = a, b
    largest = np.maximum(l1, l2)
    with np.errstate(invalid="ignore", over="ignore"):
        c1, c2, c = (np.where(np.isfinite(v), v, 0) for v in (l1, l2, largest))
        sums = s1 * np.exp(c1 - c) + s2 * np.exp(c2 - c)
    return largest, sums.astype(s1.dtype)
