"""Dask graphs that move indices to the data's blocks, never the data (the gathers; the
scatters' graphs, which move updates, are in ``dask_scatter_routes``).

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


def has_unknown_sizes(*arrays_chunks: tuple[tuple[float, ...], ...]) -> bool:
    """Whether any of these chunks (Dask arrays' ``.chunks``) is of unknown (NaN) size."""
    return any(math.isnan(c) for chunks in arrays_chunks for axis in chunks for c in axis)


def refuse_unknown_sizes(names: str, *arrays_chunks: tuple[tuple[float, ...], ...]) -> None:
    if has_unknown_sizes(*arrays_chunks):
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
    refuse_unknown_sizes("params and indices", params.chunks, grid_chunks)
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
            graph[tuple([names[1], *chunk, c])] = (take_piece, (names[0], *chunk), c)
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


def take_piece(pieces: list[Any], c: int) -> Any:
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
