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

import numpy as np

from ._arrays import (
    argsort_positions,
    device_for_new,
    dtype_kind,
    dtype_name,
    searchsorted_positions,
)
from ._indices import flat_positions
from ._plan import GatherPlan, row_major_strides

REDUCTIONS = ("update", "add", "multiply", "min", "max")


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
_PROMISES = {
    (unique, ordered): ScatterPromises(unique, ordered)
    for unique in (False, True)
    for ordered in (False, True)
}


def rows_hold_no_duplicate(index: Any, last: int) -> bool:
    """Whether each row along the last axis of `index` (a small array of a backend with
    ``tolist``: NumPy, PyTorch on the CPU) holds no value twice, nor a negative value, read
    as Python lists: a scatter of ``"update"`` along that axis then has one update per target
    and no winner to settle. `last` is the length of that axis."""
    rows = index.reshape(-1, last).tolist() if last else []
    return all(len(set(row)) == len(row) and min(row) >= 0 for row in rows)


def check_promises(unique_indices: object, indices_are_sorted: object) -> ScatterPromises:
    """The promises as one (shared) object; a ``TypeError`` naming the argument for anything
    but a bool (a truthy string or array would make a promise the caller did not mean)."""
    given = {"unique_indices": unique_indices, "indices_are_sorted": indices_are_sorted}
    for name, value in given.items():
        if not isinstance(value, bool | np.bool_):
            msg = f"{name} must be True or False; got {value!r}"
            raise TypeError(msg)
    return _PROMISES[bool(unique_indices), bool(indices_are_sorted)]


def check_reduce(reduce: object) -> str:
    """`reduce` if it names a reduction; a ``ValueError`` listing them otherwise."""
    if isinstance(reduce, str) and reduce in REDUCTIONS:
        return reduce
    valid = ", ".join(repr(r) for r in REDUCTIONS)
    msg = f"reduce must be one of {valid}; got {reduce!r}"
    raise ValueError(msg)


#: The reduction found for each (namespace, reduction, dtype): a call in a loop asks once.
_REDUCIBLE: dict[tuple[Any, ...], str | None] = {}


def reduction_for(xp: Any, reduce: str, dtype: Any) -> str | None:
    """The reduction the engines run for `reduce` (``"add"``, ``"multiply"``, ``"min"``,
    ``"max"``) on `dtype`, or None where the dtype has none: the one dtype rule of the
    scatters and the segment reductions (docs/contract.md, S6 and R3).

    Numbers (NumPy's ``bfloat16`` included: :func:`~._arrays.dtype_kind`) and bool; on bool
    ``"add"`` and ``"max"`` are a logical OR and ``"multiply"`` and ``"min"`` a logical AND
    (False < True), as TensorFlow and PyTorch combine bools: the engines run ``"max"`` and
    ``"min"`` for them. ``"min"`` and ``"max"`` need an order, so not complex.
    """
    key: tuple[Any, ...] = (xp, reduce, dtype)
    try:
        if key in _REDUCIBLE:
            return _REDUCIBLE[key]
    except TypeError:  # a dtype that cannot be hashed
        key = ()
    kind = dtype_kind(xp, dtype)
    found: str | None = reduce
    if kind == "bool":
        found = _BOOL_REDUCTIONS[reduce]
    elif kind is None or (kind == "complex floating" and reduce in ("min", "max")):
        found = None
    if key and len(_REDUCIBLE) < 256:
        _REDUCIBLE[key] = found
    return found


def reducible_kinds(reduce: str, bools: bool = True) -> str:
    """What :func:`reduction_for` takes for `reduce`, in words, for an error message."""
    kind = "a real numeric" if reduce in ("min", "max") else "a numeric"
    return f"{kind} or bool" if bools else kind


def check_reduce_dtype(xp: Any, reduce: str, dtype: Any, data_name: str) -> str:
    """The reduction the engines run for `reduce` on `dtype` (:func:`reduction_for`), or a
    TypeError. ``"update"`` is defined for every dtype (NumPy's strings too)."""
    if reduce == "update":
        return reduce
    found = reduction_for(xp, reduce, dtype)
    if found is not None:
        return found
    kinds = reducible_kinds(reduce)
    msg = f'reduce="{reduce}" needs {data_name} of {kinds} dtype; got {dtype_name(dtype)}'
    raise TypeError(msg)


#: What each reduction is on bool: OR (max) or AND (min).
_BOOL_REDUCTIONS = {"add": "max", "multiply": "min", "min": "min", "max": "max"}


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
