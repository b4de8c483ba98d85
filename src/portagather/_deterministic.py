"""Deterministic sums and products (``deterministic=True``): one order of the operations,
fixed by the index alone, so that every backend, mode and run gives the same bits.

The order (docs/deterministic.md) is a pairwise tree over the global row positions. For a
segment whose rows sit at positions ``p_0 < p_1 < ...`` of the flattened index (``0 ..
N - 1``), its value over an aligned power-of-two block of positions is the value of the one
half that holds rows of the segment, or ``left op right`` where both do; a single row is its
value. Equivalently: pad ``N`` to ``N' = 2**ceil(log2 N)`` and combine with a perfect binary
tree over positions, where a position outside the segment holds the padding (``-0.0`` for a
sum, ``1`` for a product), which changes no bit: ``x + -0.0 == x`` and ``x * 1 == x`` for
every ``x`` but a NaN, which stays a NaN (NaN payloads are no part of the contract). Because
the tree splits at every aligned power-of-two boundary, a chunked backend computes dense
per-chunk partials over aligned power-of-two chunks and combines them with the same tree
(Dask: ``engines/dask_deterministic.py``).

Only elementwise operations touch the values: ``+`` or ``*`` of two arrays, ``where`` and
gathers, whose results IEEE 754 fixes. The integer work (a stable sort of the ids,
``searchsorted``, shifts) is exact whatever order a backend chooses.

How each backend runs the tree is the engines' (``Engine.tree_partials``; docs/deterministic.md,
"How each backend runs it"): ``engines/tree.py`` holds the generic plans, written against
the array API standard: eager ones where an engine merges rows in place
(``Engine.merge_rows``: sorted ids as dense passes over aligned blocks, other ids sorted by
(segment, position) and merged level by level), and :func:`~.engines.tree._merge_fixed`
with fixed shapes (array-api-strict, ndonnx, PyTorch under ``vmap``): ``ceil(log2 N)``
levels over the rows in sorted order; JAX has its own, one compiled program
(``engines/jax.py``); Dask combines aligned blocks' partials
(``engines/dask_deterministic.py``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ._arrays import PADDING, combine, divisor, dtype_kind, tied, widened
from ._indices import normalize, resolve_default
from .engines.scatter import flat_targets, target_axes

if TYPE_CHECKING:
    from ._indices import IndexAccess
    from ._routes import Route, SegmentRoute, SegmentScatters


def tree_segments(
    route: SegmentRoute, scatters: SegmentScatters, access: IndexAccess, data: Any, ids: Any
) -> tuple[Any, Any] | None:  # fmt: skip
    """``(result, count)`` of a deterministic segment sum, mean or product (the mean divided
    here, once, in float32 for float16 and bfloat16 data), with the count of rows per segment
    (in the namespace's widest integer dtype); None where the pipeline's scatter answers
    already (no rows, no segments: its answer has no sum to order).

    The ids are made valid by the call's policy (`scatters`', under the ids' `access`:
    ``_indices.normalize``); an ignored id's row
    goes to no segment, and ``"error"`` that cannot be checked now is checked lazily, as the
    scatter's would be."""
    xp, engine, segments = route.xp, route.engine, route.num_segments
    rows = math.prod(ids.shape)
    if not rows or not segments:
        return None
    plan = scatters.scatter.plan
    op = "multiply" if route.reduce == "prod" else "add"
    components = normalize(xp, engine, ids, plan, scatters.policy, access)
    slots = components.values[0]
    if components.keep is not None:
        slots = xp.where(components.keep, slots, segments)
    elif components.keep_inside:
        slots = engine.clamp(slots, 0, segments - 1)
    slots = xp.reshape(slots, (rows,))
    inner = tuple(route.result_shape[1:])
    wide = widened(xp, route.dtype)
    values = xp.reshape(engine.laid_out(data), (rows, math.prod(inner)))
    if values.dtype != wide:
        values = xp.astype(values, wide)
    in_order = route.ids_sorted and components.keep is None  # (no row moved to the end)
    total, count = engine.tree_partials(values, slots, segments, op, in_order)
    if op == "add":  # a zero sum (-0.0 for an empty segment so far) is +0.0: as `+ 0.0`
        # does to a real one, but XLA would fold that away
        total = xp.where(total == 0, xp.zeros_like(total), total)
    if route.reduce == "mean":
        divided_by = xp.astype(divisor(xp, count, total, gathered=True), total.dtype)
        if engine.index_access(total) == "trace":  # (under vmap too: one rounding)
            divided_by = tied(xp, divided_by, total)
        total = total / divided_by
    result = xp.reshape(total, route.result_shape)
    if result.dtype != route.dtype:
        result = xp.astype(result, route.dtype)  # the one rounding of float16 and bfloat16
    if components.bad is not None:
        result = engine.enforce_lazily(components.bad, ids, plan.report, result)
    return result, count


def tree_scatter(route: Route, data: Any, indices: Any, updates: Any) -> Any | None:
    """The deterministic scatter (``deterministic=True``) of `route` (checked) where it adds
    or multiplies floating data: each element's updates, at their positions in the
    row-major updates, combined by the tree, then ``out = data op tree`` where any landed
    (float16 and bfloat16 in float32, rounded once); None where the reduction has no order
    to fix or the pipeline answers itself (no update, an empty axis)."""
    xp, engine, plan = route.xp, route.engine, route.plan
    op = route.reduction
    if op not in PADDING or dtype_kind(xp, data.dtype) not in _FLOATING:
        return None
    if plan.reads_nothing or 0 in plan.axis_sizes:
        return None
    indices = engine.laid_out(indices)
    access = engine.index_access(indices)
    policy = resolve_default(route.policy, access)
    components = normalize(xp, engine, indices, plan, policy, access)
    shape = tuple(data.shape)
    size, count = math.prod(shape), math.prod(plan.out_shape)
    wide_index = engine.wide_index_dtype(data)
    axes = target_axes(xp, components.values, plan, shape, wide_index)
    flat = flat_targets(xp, axes, shape, plan.out_shape, wide_index)
    flat = engine.kept_inside(
        flat, components, size - 1, dropped_at=size, clamp=True, keep_shape=plan.mask_shape
    )
    wide = widened(xp, data.dtype)
    values = xp.reshape(updates, (count, 1))
    if values.dtype != wide:
        values = xp.astype(values, wide)
    total, landed = engine.tree_partials(
        engine.laid_out(values), engine.laid_out(xp.reshape(flat, (count,))), size, op, False
    )
    target = xp.reshape(data, (size, 1))
    if target.dtype != wide:
        target = xp.astype(target, wide)
    combined = xp.where(xp.reshape(landed > 0, (size, 1)), combine(op, target, total), target)
    result = xp.reshape(combined, shape)
    if result.dtype != data.dtype:
        result = xp.astype(result, data.dtype)  # the one rounding of float16 and bfloat16
    if components.bad is not None:
        result = engine.enforce_lazily(components.bad, indices, plan.report, result)
    return result


#: The dtype kinds whose adds and products the tree orders.
_FLOATING = ("real floating", "complex floating")
