"""Dask's plan of the deterministic tree (``_deterministic``): partials of aligned
power-of-two blocks of rows, combined in the same tree.

The tree over row positions splits at every aligned block of ``2**k`` positions. So the rows
are cut into blocks of one size ``C = 2**k``, each block's segments are combined by the tree
over its local positions (the same tree: its first position is a multiple of ``C``) into a
dense partial of every segment, the padding (``-0.0``, ``1``) where a block holds none of its
rows, and the partials of blocks ``2i`` and ``2i + 1`` are combined, level by level (a last
odd one passes up alone: combining it with a block of padding would change no bit). The
result is the tree's, whatever the caller's chunks. The counts are integers, added the same
way. A partial is held over its block's range of segments only (:data:`Sparse`), the
padding outside it left implicit: combining two partials adds where their ranges overlap
and concatenates elsewhere (the same bits), and the last task spreads the result over every
segment. Sorted ids make a block's range, and so its partial and their combination, small.

Few tasks: each block's task takes the caller's chunks that overlap it and cuts its rows
out itself (no rechunk, whose split and merge tasks cost more than they move), and each
combining task runs :data:`_FAN_IN` consecutive partials (an aligned group: ``log2`` of it
levels of the tree) through its levels at once, the partial and the count together.
"""

from __future__ import annotations

import itertools
from typing import Any

import array_api_compat as aac
import dask.array as da
import numpy as np
from dask.delayed import delayed

from .._arrays import combine, padding
from .base import Engine
from .numpy import NumPyEngine

#: The fewest rows of a chunk: smaller chunks cost more partials than they save.
_FEWEST_ROWS = 2**12


def chunk_rows(rows: int, largest: int, segments: int) -> int:
    """The rows of each chunk: a power of two, at least the caller's largest chunk (so no
    more partials than chunks), the segments' count (a partial is no larger than its rows)
    and :data:`_FEWEST_ROWS`, at most the rows padded to a power of two."""

    def up(n: int) -> int:
        return 1 << max(n - 1, 0).bit_length()

    return min(up(rows), max(up(largest), up(segments), _FEWEST_ROWS))


def dask_tree_partials(
    values: Any, slots: Any, segments: int, op: str, in_order: bool = False
) -> tuple[Any, Any]:  # fmt: skip
    """``(partial, count)`` as ``_deterministic.tree_partials``, for Dask arrays."""
    rows, width = values.shape
    size = chunk_rows(rows, max(values.chunks[0]), segments)
    values = values.rechunk({1: -1})
    slots = slots.rechunk((values.chunks[0],))
    starts = np.cumsum((0, *values.chunks[0])).tolist()
    value_blocks, slot_blocks = values.to_delayed()[:, 0], slots.to_delayed()
    dtype = values.dtype
    level = []
    for low in range(0, rows, size):
        high = min(low + size, rows)
        pieces = [  # (value block, slot block, its first and last row within it)
            (value_blocks[j], slot_blocks[j], max(low, starts[j]) - starts[j],
             min(high, starts[j + 1]) - starts[j])
            for j in range(len(starts) - 1)
            if starts[j] < high and starts[j + 1] > low
        ]  # fmt: skip
        level.append(delayed(_block_partial, pure=True)(pieces, segments, op, in_order))
    if len(level) == 1:  # one block: its partial made dense over the segments
        level = [delayed(_combined, pure=True)(level, op, segments)]
    while len(level) > 1:
        top = len(level) <= _FAN_IN  # the last task: its partial dense over the segments
        level = [
            delayed(_combined, pure=True)(level[k : k + _FAN_IN], op, segments if top else 0)
            for k in range(0, len(level), _FAN_IN)
        ]
    both = level[0]
    partial = da.from_delayed(both[0], (segments, width), dtype=dtype)
    count = da.from_delayed(both[1], (segments,), dtype=np.int64)
    return partial, count


#: The partials each combining task takes (a power of two: an aligned group of blocks).
_FAN_IN = 8


#: A block's partial: ``(first, partial, count)``, the segments ``first .. first + m - 1``
#: (``m`` the partial's rows: the range from the block's lowest segment to its highest), the
#: padding and ``0`` in a segment of the range that the block does not hold.
Sparse = tuple[int, Any, Any]


def _combined(partials: list[Sparse], op: str, segments: int) -> Any:
    """The tree's levels over consecutive partials, the first of an aligned group: blocks
    ``2i`` and ``2i + 1`` combined by `op` (:func:`_joined`), a last odd one passing up
    alone. With `segments` (the last task), the ``(partial, count)`` dense over them."""
    while len(partials) > 1:
        paired = [_joined(a, b, op) for a, b in zip(partials[0:-1:2], partials[1::2], strict=True)]
        if len(partials) % 2:
            paired.append(partials[-1])
        partials = paired
    if not segments:
        return partials[0]
    first, partial, count = partials[0]
    pad = padding(_xp(partial), op, partial.dtype)
    return _spread(first, partial, segments, pad), _spread(first, count, segments, 0)


def _xp(x: Any) -> Any:
    """The namespace of the block array `x`."""
    return aac.array_namespace(x)


def _spread(first: int, x: Any, size: int, fill: float | complex) -> Any:
    """`x` (the rows ``first .. first + m - 1``) within ``size`` rows, `fill` elsewhere."""
    m = x.shape[0]
    if first == 0 and m == size:
        return x
    return _concat([_filled(x, first, fill), x, _filled(x, size - first - m, fill)])


def _filled(like: Any, rows: int, fill: float | complex) -> Any:
    """``rows`` rows of `fill`, of the shape and dtype of `like`'s rows."""
    xp = _xp(like)
    return xp.full((rows, *like.shape[1:]), fill, dtype=like.dtype, device=aac.device(like))


def _concat(parts: list[Any]) -> Any:
    """The non-empty `parts` one after the other (one of them as it is)."""
    parts = [p for p in parts if p.shape[0]] or parts[:1]
    return parts[0] if len(parts) == 1 else _xp(parts[0]).concat(parts, axis=0)


def _joined(a: Sparse, b: Sparse, op: str) -> Sparse:
    """The partial of blocks ``2i`` (`a`) and ``2i + 1`` (`b`): ``a op b`` where both hold a
    segment's range, the one that does elsewhere (``x op padding`` would be ``x``, bit for
    bit), the padding in a gap between them; the counts the same way, added."""
    (fa, pa, ca), (fb, pb, cb) = a, b
    if not pa.shape[0]:
        return b
    if not pb.shape[0]:
        return a
    ea, eb = fa + pa.shape[0], fb + pb.shape[0]
    if (fa, ea) == (fb, eb):
        return fa, combine(op, pa, pb), ca + cb
    cuts = sorted({fa, ea, fb, eb})
    pad = padding(_xp(pa), op, pa.dtype)
    values, counts = [], []
    for low, high in itertools.pairwise(cuts):
        in_a, in_b = fa <= low < ea, fb <= low < eb
        if in_a and in_b:
            values.append(combine(op, pa[low - fa : high - fa], pb[low - fb : high - fb]))
            counts.append(ca[low - fa : high - fa] + cb[low - fb : high - fb])
        elif in_a:
            values.append(pa[low - fa : high - fa])
            counts.append(ca[low - fa : high - fa])
        elif in_b:
            values.append(pb[low - fb : high - fb])
            counts.append(cb[low - fb : high - fb])
        else:
            values.append(_filled(pa, high - low, pad))
            counts.append(_filled(ca, high - low, 0))
    return cuts[0], _concat(values), _concat(counts)


def _block_engine(xp: Any) -> Engine:
    """The engine of a task's blocks: NumPy's (made once per worker process: an engine holds
    nothing but its namespace), or the generic one for blocks of another namespace.
    Imported here, not through ``engines.engine_for``, which imports this module's engine."""
    global _NUMPY
    if not aac.is_numpy_namespace(xp):
        return Engine(xp)
    if _NUMPY is None:
        _NUMPY = NumPyEngine(xp)
    return _NUMPY


_NUMPY: NumPyEngine | None = None


def _block_partial(
    pieces: list[tuple[Any, Any, int, int]], segments: int, op: str, in_order: bool
) -> Sparse:
    """One aligned block's partial (:data:`Sparse`), by the engine of its blocks' namespace:
    its rows cut out of the caller's chunks that overlap it (`pieces`: each chunk of values
    and of slots, with the block's first and last row within it). The partial covers the
    range of the block's segments only (sorted ids touch few): its slots less the lowest,
    the rows of no segment (`segments`) marked by the range's size."""
    xp = aac.array_namespace(pieces[0][0], pieces[0][1])
    values = [v[a:b] if (a, b) != (0, v.shape[0]) else v for v, _, a, b in pieces]
    slots = [s[a:b] if (a, b) != (0, s.shape[0]) else s for _, s, a, b in pieces]
    if len(pieces) > 1:
        values, slots = [xp.concat(values, axis=0)], [xp.concat(slots, axis=0)]
    engine = _block_engine(xp)
    values, slots = values[0], slots[0]
    low = int(xp.min(slots))
    if low == segments:  # no row of a segment
        return 0, values[:0], xp.zeros((0,), dtype=xp.int64, device=aac.device(slots))
    high = int(xp.max(slots)) + 1
    if high > segments:  # rows of no segment: the range ends at the highest segment
        high = int(xp.max(xp.where(slots < segments, slots, xp.full_like(slots, low)))) + 1
        slots = xp.minimum(slots - low, high - low)
    elif low:
        slots = slots - low
    partial, count = engine.tree_partials(values, slots, high - low, op, in_order)
    return low, partial, xp.astype(count, xp.int64)
