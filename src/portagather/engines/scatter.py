"""The scatters' own steps, on any namespace: where each update lands, and the generic scatter.

A scatter is the transpose of a gather: ``scatter_nd(params, indices, updates)`` writes
``updates`` (shaped like ``gather_nd(params, indices)``) back at the places that gather would
read. So the scatters reuse the gathers' plans and policies (``_plan``, ``_indices``) and add
two things here: the target of every update element (:func:`target_axes`, one coordinate array
per params axis, and :func:`flat_targets`), and :func:`sorted_scatter`, a scatter written on
the standard's functions alone (sort the targets, reduce each run of equal targets, look the
runs up with ``searchsorted``) for namespaces with no accumulating scatter of their own
(array-api-strict, ndonnx). Engines with their own scatter (NumPy's ``ufunc.at``, PyTorch's
``scatter_reduce``, JAX's ``.at``) take the targets from here and do the rest.

Duplicates: every reduction combines all updates to an element; ``"update"`` keeps the last
update in row-major order of the updates, resolved once per call and never assumed from the
order in which a backend happens to write: a stable sort here; on NumPy the updates written
and read back, with the positions written into the result's own storage where one does not
read back its own bits; on PyTorch the positions written into a scratch and read back (on the
CPU), or the largest position per element (``scatter_reduce("amax")``); on JAX a scatter-max
of the positions; on Dask the position in the whole updates. The caller's promises
(:class:`ScatterPromises`) let an engine skip that resolution, or use a sorted kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._arrays import (
    argsort_positions,
    device_for_new,
    searchsorted_positions,
)
from .._indices import flat_positions
from .._plan import GatherPlan, row_major_strides


@dataclass(frozen=True, slots=True)
class ScatterPromises:
    """What the caller promises about the index of a scatter (docs/contract.md, S3):
    `unique_indices`, no two updates aim at one element; `indices_are_sorted`, the targets
    never decrease in row-major order of the updates. Hashable, so that it keys compiled
    computations. A broken promise never makes a write land outside the data."""

    unique_indices: bool = False
    indices_are_sorted: bool = False


#: No promise: the default of every scatter.
NO_PROMISES = ScatterPromises()


def rows_hold_no_duplicate(index: Any, last: int) -> bool:
    """Whether each row along the last axis of `index` (a small array of a backend with
    ``tolist``: NumPy, PyTorch on the CPU) holds no value twice, nor a negative value, read
    as Python lists: a scatter of ``"update"`` along that axis then has one update per target
    and no winner to settle. `last` is the length of that axis."""
    if not last:
        return True
    # (A 2-d index is its rows already: torch's reshape costs as much as its tolist.)
    rows = (index if index.ndim == 2 else index.reshape(-1, last)).tolist()
    return all(len(set(row)) == len(row) and min(row) >= 0 for row in rows)


def target_axes(
    xp: Any, components: list[Any], plan: GatherPlan, shape: tuple[int, ...], dtype: Any
) -> list[Any]:
    """Where each update element lands: one integer array per axis of the data, each
    broadcastable against ``plan.out_shape`` (the updates' shape).

    The gathered axes take the index components; every other axis of the data is matched to
    an axis of the updates by position (an ``arange`` along that axis, of `dtype` where
    there are no components to take it from).
    """
    out_shape, rank = plan.out_shape, len(plan.out_shape)
    device = device_for_new(components[0]) if components else None
    dtype = components[0].dtype if components else dtype

    def position(size: int, at: int) -> Any:
        line = xp.arange(size, dtype=dtype, device=device)
        return xp.reshape(line, (1,) * at + (size,) + (1,) * (rank - at - 1))

    axes: list[Any] = []
    if plan.kind == "along":
        for d in range(len(shape)):
            if d == plan.axis:
                axes.append(components[0])
            else:
                axes.append(position(1 if shape[d] == 1 else out_shape[d], d))
        return axes
    b, axis, depth = plan.batch_dims, plan.axis, plan.depth
    inner = len(shape) - axis - depth
    outer = axis - b
    grid = rank - b - outer - inner
    for d in range(axis):  # batch axes, then the outer axes of gather: in place
        axes.append(position(shape[d], d))
    for component in components:
        lead, tail = tuple(component.shape[:b]), tuple(component.shape[b:])
        axes.append(xp.reshape(component, lead + (1,) * outer + tail + (1,) * inner))
    for k in range(inner):
        axes.append(position(shape[axis + depth + k], b + outer + grid + k))
    return axes


def flat_targets(
    xp: Any, axes: list[Any], shape: tuple[int, ...], out_shape: tuple[int, ...], dtype: Any
) -> Any:
    """Row-major flat positions into the data, of shape `out_shape`, from :func:`target_axes`."""
    flat = flat_positions(axes, row_major_strides(shape))
    if flat is None:  # a 0-d data array
        return xp.zeros(out_shape, dtype=dtype)
    if tuple(flat.shape) != out_shape:
        flat = xp.broadcast_to(flat, out_shape)
    return flat


def combine(xp: Any, reduce: str, old: Any, new: Any) -> Any:
    """Two values of one element combined by `reduce` (`new` the later one)."""
    if reduce == "add":
        return old + new
    if reduce == "multiply":
        return old * new
    if reduce == "min":  # on bool, AND (the standard's minimum takes no bools)
        return xp.logical_and(old, new) if old.dtype == xp.bool else xp.minimum(old, new)
    if reduce == "max":  # on bool, OR
        return xp.logical_or(old, new) if old.dtype == xp.bool else xp.maximum(old, new)
    return new


def sorted_scatter(
    xp: Any, data: Any, flat: Any, updates: Any, reduce: str, select: Any = None,
    unique: bool = False,
) -> Any:  # fmt: skip
    """`data` with `updates` combined at flat positions `flat` (1-d, both), on the standard's
    functions only; positions outside ``[0, data.size)`` are dropped.

    A stable sort puts the updates of one element together in their original order; a
    segmented scan (doubling: about log2(len) elementwise steps) reduces each run, so that its
    last element holds the run's result; ``searchsorted`` finds, for every element of the
    data, the last entry of its run, if any. `select` is the engine's ``where`` for data
    values (ndonnx's is lossy for uint64). Where the caller promised `unique` targets there
    are no runs to reduce, and no scan (were the promise broken, each element would take the
    last update of its run only: one of its updates).
    """
    select = select or xp.where
    size = math.prod(data.shape)
    flat_data = xp.reshape(data, (size,))
    count = flat.shape[0]
    if count == 0:
        return xp.reshape(xp.asarray(flat_data, copy=True), data.shape)
    device = device_for_new(data)
    order = argsort_positions(xp, flat)
    targets = xp.take(flat, order)
    values = xp.take(updates, order)
    if reduce != "update" and count > 1 and not unique:
        start = searchsorted_positions(xp, targets, targets, "left")  # first entry of each run
        place = xp.arange(count, dtype=start.dtype, device=device)
        step = 1
        while step < count:
            earlier = xp.concat([values[:step], values[:-step]])
            values = select(place - step >= start, combine(xp, reduce, earlier, values), values)
            step *= 2
    positions = xp.arange(size, dtype=targets.dtype, device=device)
    last = searchsorted_positions(xp, targets, positions, "right") - 1
    last = xp.maximum(last, 0)  # -1: before the first target, so not hit
    hit = xp.take(targets, last) == positions
    reduced = xp.take(values, last)
    new = combine(xp, reduce, flat_data, reduced)
    return xp.reshape(select(hit, new, flat_data), data.shape)
