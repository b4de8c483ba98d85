"""Dask: the lazy ``"error"`` check and the gathers that route indices to params' blocks.

Nothing here computes: every function adds tasks to a graph.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ._dispatch import Engine
from ._errors import BadIndex, python_value
from ._indices import Components, IndexAccess, flat_positions
from ._plan import GatherPlan


class DaskEngine(Engine):
    def index_access(self, x: Any) -> IndexAccess:
        return "graph"

    def reads_cheaply(self, x: Any) -> bool:
        return False

    def wide_index_dtype(self, xp: Any) -> Any:
        return xp.int64

    def enforce_lazily(
        self, xp: Any, bad: Any, indices: Any, report: BadIndex, result: Any
    ) -> Any:
        return _dask_checked(bad, indices, report, result)

    def gather_axes(self, xp: Any, params: Any, components: Components, plan: GatherPlan) -> Any:
        flat = flat_positions(components.values, plan.axis_sizes)
        if flat is None:
            flat = xp.zeros(self._depth0_grid(plan), dtype=xp.int64)
        flat = self._flat_ready(xp, flat, components, math.prod(plan.axis_sizes) - 1, plan)
        return dask_gather_axes(params, flat, plan.batch_dims, plan.axis, plan.depth)

    def gather_along(self, xp: Any, x: Any, components: Components, plan: GatherPlan) -> Any:
        (index,) = components.values
        index = self._flat_ready(xp, index, components, plan.axis_sizes[0] - 1, plan)
        if plan.data_block is not None:
            x = x[tuple(slice(0, size) for size in plan.data_block)]
        return dask_take_along(x, index, plan.axis)


def _dask_checked(bad, values, report, result):
    """Make `result` raise the eager path's IndexError when it is computed.

    Each block of `bad` finds its own first bad position; one small task picks the first in
    C order and raises, and every block of `result` waits for that verdict.
    """
    import dask
    import dask.array as da

    if report.vector:  # one block holds whole index vectors
        values = values.rechunk({values.ndim - 1: -1})
    bad_blocks = np.asarray(bad.to_delayed(), dtype=object)
    value_blocks = np.asarray(values.to_delayed(), dtype=object)
    if report.vector:
        value_blocks = value_blocks[..., 0]
    starts = [np.cumsum((0, *chunks[:-1])) for chunks in bad.chunks]
    parts = []
    for block_index, bad_block in np.ndenumerate(bad_blocks):
        offset = tuple(int(s[i]) for s, i in zip(starts, block_index, strict=True))
        parts.append(
            dask.delayed(_first_bad_in_block)(bad_block, value_blocks[block_index], offset, report)
        )
    verdict = dask.delayed(_raise_first_bad)(parts, report)
    verdict_array = da.from_delayed(verdict, shape=(), dtype=bool)
    return da.map_blocks(_first_argument, result, verdict_array, dtype=result.dtype)


def _first_bad_in_block(bad_block, value_block, offset, report):
    hits = np.argwhere(np.asarray(bad_block))
    if hits.shape[0] == 0:
        return None
    local = tuple(int(h) for h in hits[0])
    position = tuple(o + h for o, h in zip(offset, local, strict=True))
    return position, python_value(np.asarray(value_block), local, report.vector)


def _raise_first_bad(parts, report):
    found = [p for p in parts if p is not None]
    if found:
        report.raise_at(*min(found))
    return True


def _first_argument(block, _verdict):
    return block


def dask_gather_axes(params, flat, batch_dims: int, axis: int, depth: int):
    """:func:`~portagather._compose.gather_axes` on Dask, with no block of params merged.

    One task per result block; the result's blocks are params' blocks on the batch, outer and
    inner axes and `flat`'s blocks on the index grid. Each task reads the params blocks along
    the gathered axes as a nested list, never concatenated, and picks from each the positions
    that fall inside it.
    """
    import dask.array as da

    b, stop = batch_dims, axis + depth
    if flat.chunks[:b] != params.chunks[:b]:  # batch blocks pair up with params' blocks
        flat = flat.rechunk(params.chunks[:b] + flat.chunks[b:])
    grid = flat.ndim - b
    batch = tuple(f"b{k}" for k in range(b))
    outer = tuple(f"p{k}" for k in range(axis - b))
    gathered = tuple(f"s{k}" for k in range(depth))
    inner = tuple(f"t{k}" for k in range(params.ndim - stop))
    grid_ind = tuple(f"i{k}" for k in range(grid))
    bounds = [tuple(int(e) for e in np.cumsum((0, *params.chunks[d]))) for d in range(axis, stop)]
    return da.blockwise(
        _gather_axes_blocks,
        batch + outer + grid_ind + inner,
        params,
        batch + outer + gathered + inner,
        flat,
        batch + grid_ind,
        concatenate=False,
        sizes=tuple(params.shape[axis:stop]),
        bounds=bounds,
        batch_dims=b,
        outer=axis - b,
        dtype=params.dtype,
        meta=np.empty((0,) * (params.ndim - depth + grid), dtype=params.dtype),
    )


def _gather_axes_blocks(params_blocks, flat_block, sizes, bounds, batch_dims, outer):
    flat_block = np.asarray(flat_block)
    coords = np.unravel_index(flat_block, sizes) if sizes else ()
    b, grid = batch_dims, flat_block.ndim - batch_dims
    # Batch positions, broadcast against the index grid, for NumPy's advanced indexing.
    batch = [
        np.arange(flat_block.shape[k]).reshape((1,) * k + (-1,) + (1,) * (b - k - 1 + grid))
        for k in range(b)
    ]
    out = None
    for block_index in itertools.product(*(range(len(e) - 1) for e in bounds)):
        block = params_blocks
        for i in block_index:
            block = block[i]
        block = np.asarray(block)
        inside = np.ones(flat_block.shape, dtype=bool)
        local = []
        for c, i, edges in zip(coords, block_index, bounds, strict=True):
            inside &= (c >= edges[i]) & (c < edges[i + 1])
            local.append(c - edges[i])
        local = [np.where(inside, c, 0) for c in local]
        if not sizes:  # index depth 0: a unit axis to index, so the grid axes appear
            block = np.expand_dims(block, b + outer)
            local = [np.zeros(flat_block.shape, dtype=np.intp)]
        # Batch and gathered axes first: one advanced index puts batch+grid in front.
        order = [*range(b), *range(b + outer, b + outer + len(local))]
        rest = [d for d in range(block.ndim) if d not in order]
        picked = np.transpose(block, order + rest)[(*batch, *local)]
        mask = inside.reshape(inside.shape + (1,) * (picked.ndim - inside.ndim))
        out = picked if out is None else np.where(mask, picked, out)
    # (batch, grid, outer, inner) -> (batch, outer, grid, inner)
    axes = list(range(out.ndim))
    grid_axes, outer_axes = axes[b : b + grid], axes[b + grid : b + grid + outer]
    return np.transpose(out, axes[:b] + outer_axes + grid_axes + axes[b + grid + outer :])


def dask_take_along(x, indices, axis: int):
    """``take_along_axis`` with broadcasting on Dask arrays, for indices in ``[0, n)``.

    One task per block of the result, whose blocks are the index blocks (x's blocks along
    axes where the indices have size 1; x is rechunked to the index blocks on the axes both
    span). Each task reads the blocks of `x` along `axis`
    as a list, never concatenated, and picks from each the indices that fall inside it, so no
    block of `x` is merged with another and no reshape rechunks the indices.
    """
    import dask.array as da

    ndim = x.ndim
    shared = {
        d: indices.chunks[d]
        for d in range(ndim)
        if d != axis and x.shape[d] == indices.shape[d] > 1 and x.chunks[d] != indices.chunks[d]
    }
    if shared:  # the result's blocks follow the index blocks on the axes both arrays span
        x = x.rechunk(shared)
    symbols = tuple(f"d{d}" for d in range(ndim))
    out_ind = symbols[:axis] + ("along",) + symbols[axis + 1 :]
    x_ind = symbols[:axis] + ("source",) + symbols[axis + 1 :]
    bounds = tuple(int(b) for b in np.cumsum((0, *x.chunks[axis])))
    return da.blockwise(
        _take_along_blocks,
        out_ind,
        x,
        x_ind,
        indices,
        out_ind,
        concatenate=False,
        axis=axis,
        bounds=bounds,
        dtype=x.dtype,
        meta=np.empty((0,) * ndim, dtype=x.dtype),
    )


def _take_along_blocks(x_blocks, index_block, axis, bounds):
    if not isinstance(x_blocks, list):
        x_blocks = [x_blocks]
    index_block = np.asarray(index_block)
    zero = np.zeros((), dtype=np.asarray(x_blocks[0]).dtype)
    out = None
    for block, start, stop in zip(x_blocks, bounds[:-1], bounds[1:], strict=True):
        inside = (index_block >= start) & (index_block < stop)
        local = np.where(inside, index_block - start, 0)
        picked = np.take_along_axis(np.asarray(block), local, axis=axis)
        out = np.where(inside, picked, zero if out is None else out)
    return out
