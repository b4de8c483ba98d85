"""Dask graphs that move indices and updates to the data's blocks, never the data.

Nothing here computes: every function adds tasks to a graph. The tasks run on NumPy blocks.
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

from .._arrays import unknown_sizes
from .._scatter import ScatterPromises
from .numpy import scatter_at

#: What one params axis is in a routed gather: ("index", j) addressed by component j,
#: ("grid", g) by the position along index-grid axis g, ("zero",) always position 0 (a
#: broadcast axis), ("slice",) not addressed (carried whole into the result).
Role = tuple[Any, ...]


def block_starts(chunks: tuple[float, ...]) -> tuple[int, ...]:
    """Where each block of one axis starts, from the axis's chunk sizes."""
    return tuple(int(s) for s in np.cumsum((0, *chunks[:-1])))


def block_ends(chunks: tuple[float, ...]) -> tuple[int, ...]:
    """Where each block of one axis ends, from the axis's chunk sizes."""
    return tuple(int(e) for e in np.cumsum(chunks))


def _refuse_unknown_sizes(names: str, *arrays_chunks: tuple[tuple[float, ...], ...]) -> None:
    if any(math.isnan(c) for chunks in arrays_chunks for axis in chunks for c in axis):
        raise unknown_sizes(names, "some of their chunk sizes are NaN")


# The routed gather: indices travel to params' blocks, params never moves.
#
#   split[I]          one task per index chunk I: which params block each index element
#                     falls in; the chunk's positions and block-local coordinates, sorted
#                     into one piece per candidate block
#   piece[I, c]       the c-th piece of split[I] (a getitem, so that a gather task reads only
#                     its own piece)
#   gather[I, c, S]   params block (candidate c, slice blocks S) at the piece's coordinates
#   out[I, S]         the pieces' values put back in index order: one block of the result
#
# Candidates of chunk I are the non-empty params blocks that its elements can reach: every
# block along an index-addressed axis, the blocks overlapping the chunk's range along a
# position-addressed one. No task reads more than one params block, and what moves between
# tasks is the indices (twice, as positions and coordinates) and the result (twice).


@dataclass(frozen=True)
class _Route:
    """What the tasks of one routed gather need to know; small and picklable."""

    roles: tuple[Role, ...]  # per params axis
    starts: tuple[tuple[int, ...], ...]  # per params axis: where each block starts
    ends: tuple[tuple[int, ...], ...]  # per params axis: where each block ends
    sizes: tuple[int, ...]  # params.shape
    out_axes: tuple[Role, ...]  # per result axis: ("grid", g) or ("slice", d)
    dtype: Any


def routed_gather(
    params: Any,
    components: list[Any],
    roles: list[Role],
    out_axes: list[Role],
    grid_chunks: tuple[tuple[int, ...], ...],
) -> Any:
    """Gather from Dask array `params` by routing the index chunks to its blocks.

    `components` are Dask arrays over the index grid (chunks `grid_chunks`), one per
    ``("index", j)`` role; `roles` says how each params axis is addressed and `out_axes` how
    the result's axes are laid out. The result's chunks follow the index chunks on grid axes
    and params' chunks on slice axes.
    """
    _refuse_unknown_sizes("params and indices", params.chunks, grid_chunks)
    components = [c if c.chunks == grid_chunks else c.rechunk(grid_chunks) for c in components]
    route = _Route(
        tuple(roles),
        tuple(block_starts(c) for c in params.chunks),
        tuple(block_ends(c) for c in params.chunks),
        tuple(int(s) for s in params.shape),
        tuple(out_axes),
        params.dtype,
    )
    token = tokenize(params, *components, route, grid_chunks)
    names = tuple(f"pg-route-{step}-{token}" for step in ("split", "piece", "gather", "out"))
    grid_starts = [block_starts(c) for c in grid_chunks]
    graph: dict[Any, Any] = {}
    for chunk in itertools.product(*(range(len(c)) for c in grid_chunks)):
        shape = tuple(grid_chunks[g][k] for g, k in enumerate(chunk))
        offset = tuple(grid_starts[g][k] for g, k in enumerate(chunk))
        candidates = _candidates(params.chunks, route, shape, offset) if math.prod(shape) else []
        graph[tuple([names[0], *chunk])] = (
            _split_chunk, [(c.name, *chunk) for c in components], route, candidates, shape,
            offset,
        )  # fmt: skip
        for c in range(len(candidates)):
            graph[tuple([names[1], *chunk, c])] = (_take_piece, (names[0], *chunk), c)
        _add_gather_tasks(graph, names, params, route, chunk, candidates, shape, offset)
    out = names[3]
    out_chunks = tuple(
        grid_chunks[axis[1]] if axis[0] == "grid" else params.chunks[axis[1]] for axis in out_axes
    )
    hlg = HighLevelGraph.from_collections(out, graph, dependencies=[params, *components])
    meta = np.empty((0,) * len(out_axes), dtype=params.dtype)
    return da.Array(hlg, out, out_chunks, meta=meta)


def _add_gather_tasks(
    graph: dict[Any, Any],
    names: tuple[str, ...],
    params: Any,
    route: _Route,
    chunk: tuple[int, ...],
    candidates: list[list[int]],
    shape: tuple[int, ...],
    offset: tuple[int, ...],
) -> None:
    """The gather and out tasks of one index chunk: for each combination of params blocks
    along the slice axes, one gather task per candidate block, and one task that merges them
    into a result block."""
    _, piece, gather, out = names
    slice_axes = [d for d, role in enumerate(route.roles) if role[0] == "slice"]
    pieces = [(piece, *chunk, c) for c in range(len(candidates))]
    for slices in itertools.product(*(range(len(params.chunks[d])) for d in slice_axes)):
        gathered = []
        for c, candidate in enumerate(candidates):
            block = list(candidate)
            for d, k in zip(slice_axes, slices, strict=True):
                block[d] = k
            key = (gather, *chunk, c, *slices)
            graph[key] = (
                _gather_piece, (params.name, *block), pieces[c], route, block, shape, offset,
            )  # fmt: skip
            gathered.append(key)
        slice_shape = tuple(params.chunks[d][k] for d, k in zip(slice_axes, slices, strict=True))
        out_block = tuple(
            chunk[axis[1]] if axis[0] == "grid" else slices[slice_axes.index(axis[1])]
            for axis in route.out_axes
        )
        graph[tuple([out, *out_block])] = (
            _merge_pieces, gathered, pieces, route, shape, slice_shape,
        )  # fmt: skip


def _candidates(
    chunks: tuple[tuple[int, ...], ...],
    route: _Route,
    shape: tuple[int, ...],
    offset: tuple[int, ...],
) -> list[list[int]]:
    """The params blocks (a block index on every axis, 0 on slice axes) that the elements of
    one index chunk can reach, in row-major order of the routed axes."""
    per_axis: list[list[int]] = []
    for d, role in enumerate(route.roles):
        nonempty = [k for k, n in enumerate(chunks[d]) if n > 0]
        if role[0] == "slice":
            per_axis.append([0])
        elif role[0] == "index":
            per_axis.append(nonempty)
        elif role[0] == "zero":
            per_axis.append(nonempty[:1])
        else:
            low, high = offset[role[1]], offset[role[1]] + shape[role[1]]
            per_axis.append(
                [k for k in nonempty if route.starts[d][k] < high and route.ends[d][k] > low]
            )
    return [list(c) for c in itertools.product(*per_axis)]


def _block_of(route: _Route, d: int, coordinate: Any) -> Any:
    """The block along params axis `d` holding each coordinate (empty blocks never match)."""
    return np.searchsorted(np.asarray(route.ends[d]), coordinate, side="right")


def _small_int(largest: int) -> Any:
    return np.int32 if largest < 2**31 else np.int64


def _split_chunk(
    component_blocks: list[Any],
    route: _Route,
    candidates: list[list[int]],
    shape: tuple[int, ...],
    offset: tuple[int, ...],
) -> list[tuple[Any, list[Any]]]:
    """Sort one index chunk into pieces, one per candidate block: (positions in the chunk,
    block-local coordinates of the index-addressed axes)."""
    count = math.prod(shape)
    code = np.zeros(shape, dtype=np.intp)
    local: dict[int, Any] = {}
    routed = [d for d, role in enumerate(route.roles) if role[0] != "slice"]
    for d in routed:
        role = route.roles[d]
        options = sorted({c[d] for c in candidates})
        rank = np.zeros(len(route.ends[d]), dtype=np.intp)
        rank[options] = np.arange(len(options))
        if role[0] == "index":
            # Out-of-range components (unchecked, or ignored) are read inside the array.
            coordinate = np.clip(np.asarray(component_blocks[role[1]]), 0, route.sizes[d] - 1)
            block = _block_of(route, d, coordinate)
            starts = np.asarray(route.starts[d])
            local[d] = (coordinate - starts[block]).astype(_small_int(route.sizes[d]))
            code = code * len(options) + rank[block]
        elif role[0] == "grid":
            g = role[1]
            position = offset[g] + np.arange(shape[g])
            block = rank[_block_of(route, d, position)]
            code = code * len(options) + block.reshape((-1,) + (1,) * (len(shape) - g - 1))
    code = code.reshape(-1)
    order = np.argsort(code, kind="stable")
    bounds = np.cumsum(np.bincount(code, minlength=len(candidates)))[:-1]
    positions = np.split(order.astype(_small_int(count)), bounds)
    coordinates = {d: np.split(c.reshape(-1)[order], bounds) for d, c in local.items()}
    return [
        (positions[c], [coordinates[d][c] for d in sorted(coordinates)])
        for c in range(len(candidates))
    ]


def _take_piece(pieces: list[Any], c: int) -> Any:
    """One piece of a split chunk (not ``operator.getitem``, which Dask's optimiser treats
    as array slicing)."""
    return pieces[c]


def _gather_piece(
    block: Any,
    piece: tuple[Any, list[Any]],
    route: _Route,
    block_index: list[int],
    shape: tuple[int, ...],
    offset: tuple[int, ...],
) -> Any:
    """One params block at one piece's coordinates: shape ``(len(piece), *slice block)``."""
    positions, coordinates = piece
    block = np.asarray(block)
    index: list[Any] = []
    grid_position = None
    local = iter(coordinates)
    routed = [d for d, role in enumerate(route.roles) if role[0] != "slice"]
    for d in routed:
        role = route.roles[d]
        if role[0] == "index":
            index.append(next(local))
        elif role[0] == "zero":
            index.append(np.zeros(positions.shape, dtype=np.intp))
        else:
            if grid_position is None:
                grid_position = np.unravel_index(positions, shape)
            g = role[1]
            index.append(grid_position[g] + (offset[g] - route.starts[d][block_index[d]]))
    slices = [d for d, role in enumerate(route.roles) if role[0] == "slice"]
    if not routed:  # nothing addressed: every element reads the whole block
        return np.broadcast_to(block, (positions.shape[0], *block.shape))
    return np.transpose(block, routed + slices)[tuple(index)]


def _merge_pieces(
    values: list[Any],
    pieces: list[tuple[Any, list[Any]]],
    route: _Route,
    shape: tuple[int, ...],
    slice_shape: tuple[int, ...],
) -> Any:
    """Put the gathered pieces of one index chunk back in index order: one result block."""
    out = np.empty((math.prod(shape), *slice_shape), dtype=route.dtype)
    for gathered, (positions, _) in zip(values, pieces, strict=True):
        out[positions] = gathered
    out = out.reshape(shape + slice_shape)
    # (grid..., slice...) -> the result's axis order
    slice_axes = [d for d, role in enumerate(route.roles) if role[0] == "slice"]
    order = [
        axis[1] if axis[0] == "grid" else len(shape) + slice_axes.index(axis[1])
        for axis in route.out_axes
    ]
    return np.ascontiguousarray(np.transpose(out, order)) if order != sorted(order) else out


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
    _refuse_unknown_sizes("the data and the updates", data.chunks, updates.chunks)
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
            graph[tuple([piece, *chunk, k])] = (_take_piece, (split, *chunk), k)
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
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
    with np.errstate(invalid="ignore"):  # a NaN propagates through minimum and maximum
        reduced = ufunc[reduce].reduceat(values, first)
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
