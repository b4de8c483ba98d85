"""Dask graphs that move updates to the data's blocks, never the data: the scatters.

Nothing here computes: every function adds tasks to a graph. The tasks run on NumPy blocks,
with the NumPy engine's scatter.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .dask_routes import block_ends, block_starts, refuse_unknown_sizes, take_piece
from .numpy import UFUNCS, scatter_at
from .scatter import ScatterPromises

# The routed scatter: updates travel to the data's blocks, the data never moves.
#
#   split[U]      one task per update chunk: its updates sorted into one piece per data
#                 block (block-local flat positions, values, positions in the whole update
#                 array, which order duplicates under "update")
#   piece[U, k]   the k-th piece of split[U]
#   out[k]        data block k with the pieces of every update chunk applied: one block of
#                 the result, in the data's chunks
#
#   combine[k, l, j]  (a data block with more than FAN_IN update chunks aimed at it) up to
#                 FAN_IN pieces as one, with one entry per target: a tree, level l
#
# No task reads more than one data block, nor more than FAN_IN pieces (each, past the first
# level, no larger than a block); what moves is the updates and their positions.


@dataclass(frozen=True)
class _Scatter:
    """What the tasks of one routed scatter need to know; small and picklable."""

    shape: tuple[int, ...]  # the data's shape
    ends: tuple[tuple[int, ...], ...]  # per data axis: where each block ends
    starts: tuple[tuple[int, ...], ...]  # per data axis: where each block starts
    numblocks: tuple[int, ...]
    update_shape: tuple[int, ...]
    reduce: str
    promises: ScatterPromises


def routed_scatter(
    data: Any, flat: Any, updates: Any, reduce: str, promises: ScatterPromises
) -> Any:
    """`data` with `updates` combined at row-major flat positions `flat` (same shape as
    `updates`; positions outside ``[0, data.size)`` are dropped), block by block."""
    refuse_unknown_sizes("the data and the updates", data.chunks, updates.chunks)
    flat = flat.rechunk(updates.chunks)
    route = _Scatter(
        tuple(int(n) for n in data.shape),
        tuple(block_ends(c) for c in data.chunks),
        tuple(block_starts(c) for c in data.chunks),
        tuple(len(c) for c in data.chunks),
        tuple(int(n) for n in updates.shape),
        reduce,
        promises,
    )
    token = tokenize(data, flat, updates, route)
    split, piece, out = (f"pg-scatter-{step}-{token}" for step in ("split", "piece", "out"))
    update_starts = [block_starts(c) for c in updates.chunks]
    blocks = list(itertools.product(*(range(n) for n in route.numblocks)))
    graph: dict[Any, Any] = {}
    chunk_keys = list(itertools.product(*(range(len(c)) for c in updates.chunks)))
    for chunk in chunk_keys:
        offset = tuple(update_starts[g][k] for g, k in enumerate(chunk))
        graph[tuple([split, *chunk])] = (
            _split_updates, (flat.name, *chunk), (updates.name, *chunk), route, offset,
        )  # fmt: skip
        for k in range(len(blocks)):
            graph[tuple([piece, *chunk, k])] = (take_piece, (split, *chunk), k)
    combine = f"pg-scatter-combine-{token}"
    for k, block in enumerate(blocks):
        pieces: list[Any] = [(piece, *chunk, k) for chunk in chunk_keys]
        level = 0
        while len(pieces) > FAN_IN:  # a tree, so that no task holds every chunk's pieces
            groups = [pieces[i : i + FAN_IN] for i in range(0, len(pieces), FAN_IN)]
            pieces = []
            for j, group in enumerate(groups):
                graph[(combine, k, level, j)] = (_combine_pieces, group, route.reduce)
                pieces.append((combine, k, level, j))
            level += 1
        graph[tuple([out, *block])] = (_scatter_block, (data.name, *block), pieces, route)
    hlg = HighLevelGraph.from_collections(out, graph, dependencies=[data, flat, updates])
    meta = np.empty((0,) * data.ndim, dtype=data.dtype)
    return da.Array(hlg, out, data.chunks, meta=meta)


def _split_updates(
    flat_block: Any, update_block: Any, route: _Scatter, offset: tuple[int, ...]
) -> list[tuple[Any, Any, Any]]:
    """One update chunk sorted into pieces, one per data block: (block-local flat positions,
    values, row-major positions in the whole update array)."""
    flat = np.asarray(flat_block).reshape(-1)
    values = np.asarray(update_block).reshape(-1)
    local_shape = np.shape(flat_block)
    size = math.prod(route.shape)
    inside = (flat >= 0) & (flat < size)
    where = np.flatnonzero(inside)
    flat, values = flat[where], values[where]
    coordinates = np.unravel_index(flat, route.shape) if route.shape else ()
    block_of = [
        np.searchsorted(np.asarray(route.ends[d]), coordinates[d], side="right")
        for d in range(len(route.shape))
    ]
    code = (
        np.ravel_multi_index(block_of, route.numblocks)
        if route.shape
        else np.zeros(flat.shape, dtype=np.intp)
    )
    order = np.argsort(code, kind="stable")
    count = math.prod(route.numblocks)
    bounds = np.cumsum(np.bincount(code, minlength=count))[:-1]
    pieces = []
    position = np.unravel_index(where, local_shape) if local_shape else ()
    global_position = (
        np.ravel_multi_index(
            [p + o for p, o in zip(position, offset, strict=True)], route.update_shape
        )
        if local_shape
        else np.zeros(where.shape, dtype=np.intp)
    )
    for k, taken in enumerate(np.split(order, bounds)):
        block = np.unravel_index(k, route.numblocks) if route.shape else ()
        block_shape = tuple(
            route.ends[d][block[d]] - route.starts[d][block[d]] for d in range(len(block))
        )
        local = [coordinates[d][taken] - route.starts[d][block[d]] for d in range(len(block))]
        local_flat = (
            np.ravel_multi_index(local, block_shape)
            if block_shape
            else np.zeros(taken.shape, dtype=np.intp)
        )
        pieces.append((local_flat, values[taken], global_position[taken]))
    return pieces


#: How many pieces one task of the routed scatter combines: a data block with more update
#: chunks aimed at it receives them through a tree of combining tasks.
FAN_IN = 4


def _combine_pieces(pieces: list[tuple[Any, Any, Any]], reduce: str) -> tuple[Any, Any, Any]:
    """Several pieces aimed at one data block as one, with one entry per target: the
    updates of a target combined by `reduce` (under ``"update"`` the one latest in the whole
    updates kept), so that the piece is never larger than the block."""
    flat = np.concatenate([p[0] for p in pieces])
    values = np.concatenate([p[1] for p in pieces])
    positions = np.concatenate([p[2] for p in pieces])
    if not flat.size:
        return flat, values, positions
    if reduce == "update":  # by target, then by position in the updates
        order = np.lexsort((positions, flat))
    else:
        order = np.argsort(flat, kind="stable")
    flat, values, positions = flat[order], values[order], positions[order]
    first = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    last = np.r_[first[1:], flat.size] - 1
    if reduce == "update":
        return flat[last], values[last], positions[last]
    with np.errstate(invalid="ignore"):  # a NaN propagates through minimum and maximum
        reduced = UFUNCS[reduce].reduceat(values, first)
    return flat[first], reduced, positions[last]


def _scatter_block(block: Any, pieces: list[tuple[Any, Any, Any]], route: _Scatter) -> Any:
    """One data block with every piece aimed at it applied, in the order of the updates."""
    block = np.asarray(block)
    if not any(len(p[0]) for p in pieces):
        return block.copy()
    flat = np.concatenate([p[0] for p in pieces])
    values = np.concatenate([p[1] for p in pieces])
    unique = route.promises.unique_indices
    if route.reduce == "update" and not unique:  # the last in the order of the whole updates
        order = np.argsort(np.concatenate([p[2] for p in pieces]), kind="stable")
        flat, values = flat[order], values[order]
    return scatter_at(block, flat, values, route.reduce, route.promises, dropping=False)
