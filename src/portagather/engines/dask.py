"""Dask: the lazy ``"error"`` check, and gathers and scatters routed to the data's blocks
(``dask_routes``).

Nothing here computes: every function adds tasks to a graph.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np
from dask.array.core import normalize_chunks
from dask.delayed import delayed

from .._errors import BadIndex, python_value
from .._indices import Components, IndexAccess
from .._plan import GatherPlan
from .base import Engine, depth0_grid
from .dask_deterministic import dask_tree_partials
from .dask_routes import Role, has_unknown_sizes, routed_gather
from .dask_scatter_routes import routed_scatter
from .dask_segments import (
    plan_of,
    scatter_partials,
    segment_partials,
    sorted_segments,
)
from .dask_statistics import segment_statistics
from .scatter import ScatterPromises


class DaskEngine(Engine):
    """Dask: values are checked inside the graph; gathers route the indices to params' blocks."""

    def index_access(self, x: Any) -> IndexAccess:
        return "graph"

    def reads_cheaply(self, x: Any) -> bool:
        return False

    def laid_out(self, x: Any) -> Any:
        """Without zero-size chunks: Dask's elementwise operations with a Python scalar
        mis-handle them (``da.maximum(c, 0)`` on chunks ``(0, 1)`` gives two elements). An
        array of no elements at all as one block, which Dask's reshape needs."""
        if not x.size:
            return x.rechunk(-1) if any(len(chunks) > 1 for chunks in x.chunks) else x
        if any(0 in chunks and len(chunks) > 1 for chunks in x.chunks):
            return x.rechunk(nonzero_chunks(x.chunks))
        return x

    def blocked_like(self, x: Any, like: Any) -> Any:
        return x.rechunk(like.chunks[: x.ndim])

    def full(self, shape: tuple[int, ...], value: float, dtype: Any, like: Any) -> Any:
        """Chunked as the result of a reduction of `like` along its leading axes: `like`'s
        chunks on the inner axes, Dask's automatic size on the leading one, so that each
        block of the result is one task of the routed scatter."""
        inner = len(shape) - 1
        previous = nonzero_chunks(like.chunks[like.ndim - inner :] if inner else ())
        if math.prod(shape[1:]):
            chunks = normalize_chunks(("auto", *previous), shape, dtype=np.dtype(dtype))
        else:  # rows of no elements, whose size Dask's automatic chunks divide by: one block
            chunks = ((shape[0],), *previous)
        return da.full(shape, value, dtype=dtype, chunks=chunks)

    def wide_index_dtype(self, like: Any = None) -> Any:
        return self.xp.int64

    def enforce_lazily(
        self, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        return _dask_checked(bad, indices, report, result)

    def copy(self, data: Any) -> Any:
        return data  # Dask arrays are never written in place

    def scatter_at(
        self, data: Any, flat: Any, updates: Any, reduce: str, promises: ScatterPromises,
        *, dropping: bool = True,
    ) -> Any:  # fmt: skip
        """Into a target small enough for one task (``dask_segments.plan_of``): dense
        partials of the target combined in a tree; else the updates routed to its blocks."""
        if (
            reduce != "update"
            and not has_unknown_sizes(data.chunks, flat.chunks, updates.chunks)
            and plan_of(math.prod(data.shape), (), data.dtype, False) == "partial"
        ):
            return scatter_partials(data, flat, updates, reduce)
        return routed_scatter(data, flat, updates, reduce, promises)

    def segment_statistics(
        self, statistic: str, data: Any, ids: Any, segments: int
    ) -> tuple[Any, ...] | None:
        """The one-pass partial plan (``dask_statistics``) where its partials fit a task."""
        return segment_statistics(statistic, data, ids, segments)

    def tree_partials(
        self, values: Any, slots: Any, segments: int, op: str, in_order: bool
    ) -> tuple[Any, Any]:  # fmt: skip
        """Dense partials of aligned power-of-two chunks (``dask_deterministic``)."""
        return dask_tree_partials(values, slots, segments, op, in_order)

    def segment_plan(
        self, data: Any, ids: Any, num_segments: int, reduce: str, identity: int | float,
        policy: str, report: BadIndex, counting: bool, ids_sorted: bool,
    ) -> tuple[Any, Any] | None:  # fmt: skip
        """The partial plan (``dask_segments``) where one partial of the result fits a task;
        past that, the sorted plan where the ids are promised sorted; else None (the routed
        scatter), and where nothing is reduced. The pipeline has laid out the ids."""
        if (
            not num_segments
            or not math.prod(data.shape)
            or has_unknown_sizes(data.chunks, ids.chunks)
        ):
            return None
        inner = data.chunks[ids.ndim :]
        if plan_of(num_segments, inner, data.dtype, counting) == "partial":
            return segment_partials(data, ids, num_segments, reduce, identity, policy, report,
                                    counting)  # fmt: skip
        if not ids_sorted:
            return None
        shape = (num_segments, *data.shape[ids.ndim :])
        chunks = normalize_chunks(("auto", *inner), shape, dtype=np.dtype(data.dtype))[0]
        return sorted_segments(data, ids, num_segments, reduce, identity, policy, report,
                               counting, chunks)  # fmt: skip

    def gather_axes(
        self, params: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """Params axes: batch axes routed by the index position, gathered axes by the
        components, the outer and inner axes carried into the result in params' chunks."""
        b, axis, depth = plan.batch_dims, plan.axis, plan.depth
        if components.values:
            grid_chunks = components.values[0].chunks
        else:  # index depth 0: every vector selects the whole slice
            grid_chunks = da.empty(depth0_grid(plan), dtype=np.int8).chunks
        roles: list[Role] = [("slice",)] * params.ndim
        for d in range(b):
            roles[d] = ("grid", d)
        for j in range(depth):
            roles[axis + j] = ("index", j)
        grid_ndim = len(grid_chunks)
        out_axes: list[Role] = [
            *[("grid", g) for g in range(b)],
            *[("slice", d) for d in range(b, axis)],
            *[("grid", g) for g in range(b, grid_ndim)],
            *[("slice", d) for d in range(axis + depth, params.ndim)],
        ]
        return routed_gather(params, components.values, roles, out_axes, grid_chunks)

    def gather_along(
        self, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """Every axis routed: `plan.axis` by the index, the others by the index position
        (position 0 where x is broadcast)."""
        (index,) = components.values
        x = plan.read_block(x)
        out_shape = plan.out_shape
        if tuple(index.shape) != out_shape:  # broadcast along x's axes, in x's chunks
            index = index.rechunk({d: 1 for d in range(x.ndim) if index.shape[d] == 1})
            chunks = tuple(
                x.chunks[d] if index.shape[d] != out_shape[d] else index.chunks[d]
                for d in range(x.ndim)
            )
            index = da.broadcast_to(index, out_shape, chunks=chunks)
        roles: list[Any] = []
        for d in range(x.ndim):
            if d == plan.axis:
                roles.append(("index", 0))
            elif x.shape[d] == 1 and out_shape[d] != 1:
                roles.append(("zero",))
            else:
                roles.append(("grid", d))
        out_axes = [("grid", d) for d in range(x.ndim)]
        return routed_gather(x, [index], roles, out_axes, index.chunks)


def _dask_checked(bad: Any, values: Any, report: BadIndex, result: Any) -> Any:
    """Make `result` raise the eager path's IndexError when it is computed.

    Each block of `bad` finds its own first bad position; one small task picks the first in
    C order and raises, and every block of `result` waits for that verdict.
    """
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
            delayed(_first_bad_in_block)(bad_block, value_blocks[block_index], offset, report)
        )
    verdict = delayed(_raise_first_bad)(parts, report)
    verdict_array = da.from_delayed(verdict, shape=(), dtype=bool)
    return da.map_blocks(_first_argument, result, verdict_array, dtype=result.dtype)


def _first_bad_in_block(
    bad_block: Any, value_block: Any, offset: tuple[int, ...], report: BadIndex
) -> tuple[tuple[int, ...], Any] | None:
    hits = np.argwhere(np.asarray(bad_block))
    if hits.shape[0] == 0:
        return None
    local = tuple(int(h) for h in hits[0])
    position = tuple(o + h for o, h in zip(offset, local, strict=True))
    return position, python_value(np.asarray(value_block), local, report.vector)


def _raise_first_bad(parts: list[Any], report: BadIndex) -> bool:
    found = [p for p in parts if p is not None]
    if found:
        report.raise_at(*min(found))
    return True


def _first_argument(block: Any, _verdict: Any) -> Any:
    return block


def nonzero_chunks(chunks: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    """Dask chunks without the zero-size ones (one zero-size chunk where all are)."""
    return tuple(tuple(n for n in sizes if n) or (0,) for sizes in chunks)
