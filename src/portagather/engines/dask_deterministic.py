"""Dask's plan of the deterministic tree (``_deterministic``): dense partials of aligned
power-of-two chunks, combined in the same tree.

The tree over row positions splits at every aligned block of ``2**k`` positions. So the rows
are rechunked to one chunk size ``C = 2**k``, each chunk's segments are combined by the tree
over its local positions (the same tree: its first position is a multiple of ``C``) into a
dense partial of every segment, the padding (``-0.0``, ``1``) where a chunk holds none of its
rows, and the partials of chunks ``2i`` and ``2i + 1`` are combined, level by level, with a
chunk of padding after an odd last one. The padding changes no bit, so the result is the
tree's, whatever the caller's chunks. The counts are integers, added the same way.
"""

from __future__ import annotations

from typing import Any

import array_api_compat as aac
import dask.array as da
import numpy as np
from dask.delayed import delayed

from .base import Engine
from .numpy import NumPyEngine
from .tree import combine, padding, tree_partials

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
    values = values.rechunk({0: size, 1: -1})
    slots = slots.rechunk({0: size})
    pad, dtype = padding(np, op, values.dtype), values.dtype
    partials, counts = [], []
    for block, ids in zip(values.to_delayed()[:, 0], slots.to_delayed(), strict=True):
        both = delayed(_chunk_partial, nout=2, pure=True)(block, ids, segments, op, in_order)
        partials.append(da.from_delayed(both[0], (segments, width), dtype=dtype))
        counts.append(da.from_delayed(both[1], (segments,), dtype=np.int64))
    while len(partials) > 1:
        if len(partials) % 2:
            partials.append(da.full((segments, width), pad, dtype=dtype))
            counts.append(da.zeros((segments,), dtype=np.int64))
        partials = [combine(op, a, b) for a, b in zip(partials[::2], partials[1::2], strict=True)]
        counts = [a + b for a, b in zip(counts[::2], counts[1::2], strict=True)]
    return partials[0], counts[0]


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


def _chunk_partial(
    values: Any, slots: Any, segments: int, op: str, in_order: bool
) -> tuple[Any, Any]:  # fmt: skip
    """One chunk's partial and counts, by the engine of its blocks' namespace."""
    xp = aac.array_namespace(values, slots)
    partial, count = tree_partials(xp, _block_engine(xp), values, slots, segments, op, in_order)
    return partial, xp.astype(count, xp.int64)
