"""Dask's plan of the deterministic tree (``_deterministic``): dense partials of aligned
power-of-two blocks of rows, combined in the same tree.

The tree over row positions splits at every aligned block of ``2**k`` positions. So the rows
are cut into blocks of one size ``C = 2**k``, each block's segments are combined by the tree
over its local positions (the same tree: its first position is a multiple of ``C``) into a
dense partial of every segment, the padding (``-0.0``, ``1``) where a block holds none of its
rows, and the partials of blocks ``2i`` and ``2i + 1`` are combined, level by level (a last
odd one passes up alone: combining it with a block of padding would change no bit). The
result is the tree's, whatever the caller's chunks. The counts are integers, added the same
way.

Few tasks: each block's task takes the caller's chunks that overlap it and cuts its rows
out itself (no rechunk, whose split and merge tasks cost more than they move), and each
combining task runs :data:`_FAN_IN` consecutive partials (an aligned group: ``log2`` of it
levels of the tree) through its levels at once, the partial and the count together.
"""

from __future__ import annotations

from typing import Any

import array_api_compat as aac
import dask.array as da
import numpy as np
from dask.delayed import delayed

from .base import Engine
from .numpy import NumPyEngine
from .tree import combine

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
    while len(level) > 1:
        level = [
            delayed(_combined, pure=True)(level[k : k + _FAN_IN], op)
            for k in range(0, len(level), _FAN_IN)
        ]
    both = level[0]
    partial = da.from_delayed(both[0], (segments, width), dtype=dtype)
    count = da.from_delayed(both[1], (segments,), dtype=np.int64)
    return partial, count


#: The partials each combining task takes (a power of two: an aligned group of blocks).
_FAN_IN = 8


def _combined(partials: list[tuple[Any, Any]], op: str) -> tuple[Any, Any]:
    """The tree's levels over consecutive ``(partial, count)`` pairs, the first of an aligned
    group: blocks ``2i`` and ``2i + 1`` combined by `op`, a last odd one passing up alone."""
    while len(partials) > 1:
        paired = [
            (combine(op, a[0], b[0]), a[1] + b[1])
            for a, b in zip(partials[0:-1:2], partials[1::2], strict=True)
        ]
        if len(partials) % 2:
            paired.append(partials[-1])
        partials = paired
    return partials[0]


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
) -> tuple[Any, Any]:  # fmt: skip
    """One aligned block's partial and counts, by the engine of its blocks' namespace: its
    rows cut out of the caller's chunks that overlap it (`pieces`: each chunk of values and
    of slots, with the block's first and last row within it)."""
    xp = aac.array_namespace(pieces[0][0], pieces[0][1])
    values = [v[a:b] if (a, b) != (0, v.shape[0]) else v for v, _, a, b in pieces]
    slots = [s[a:b] if (a, b) != (0, s.shape[0]) else s for _, s, a, b in pieces]
    if len(pieces) > 1:
        values, slots = [xp.concat(values, axis=0)], [xp.concat(slots, axis=0)]
    engine = _block_engine(xp)
    partial, count = engine.tree_partials(values[0], slots[0], segments, op, in_order)
    return partial, xp.astype(count, xp.int64)
