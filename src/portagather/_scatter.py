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

import array_api_compat as aac
import numpy as np

from ._arrays import device_for_new, dtype_name
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


#: The (namespace, reduction, dtype) triples found fine: a call in a loop asks once.
_REDUCIBLE: set[tuple[Any, ...]] = set()


def check_reduce_dtype(xp: Any, reduce: str, dtype: Any, data_name: str) -> None:
    """Only ``"update"`` is defined for bool (and NumPy's strings); ``"min"`` and ``"max"``
    need an order, so not complex."""
    if reduce == "update":
        return
    key: tuple[Any, ...] = (xp, reduce, dtype)
    try:
        if key in _REDUCIBLE:
            return
    except TypeError:  # a dtype that cannot be hashed
        key = ()
    numeric = xp.isdtype(dtype, "numeric") if _is_api_dtype(xp, dtype) else False
    if numeric and not (reduce in ("min", "max") and _complex(xp, dtype)):
        if key and len(_REDUCIBLE) < 256:
            _REDUCIBLE.add(key)
        return
    kind = "a real numeric" if reduce in ("min", "max") else "a numeric"
    msg = f'reduce="{reduce}" needs {data_name} of {kind} dtype; got {dtype_name(dtype)}'
    raise TypeError(msg)


def _is_api_dtype(xp: Any, dtype: Any) -> bool:
    try:
        xp.isdtype(dtype, "numeric")
    except (TypeError, ValueError):  # NumPy strings and objects are no dtype of the standard
        return False
    return True


def _complex(xp: Any, dtype: Any) -> bool:
    return bool(xp.isdtype(dtype, "complex floating"))


def check_updates(
    xp: Any, updates: Any, data: Any, plan: GatherPlan, name: str, data_name: str, mode: str
) -> Any:
    """`updates` as an array of `data`'s namespace and dtype and of ``plan.out_shape``.

    `mode` says which shapes fit: ``"exact"`` (``scatter_nd``), ``"block"`` (``scatter_d``:
    at least the index's shape on every axis, its leading block is used, as in
    ``torch.scatter``) or ``"broadcast"`` (``put_along_axis``). Python scalars and lists take
    `data`'s dtype; an array must cast to it safely.
    """
    shape = plan.out_shape
    if type(updates) is type(data) or aac.is_array_api_obj(updates):
        if type(updates) is not type(data) and aac.array_namespace(updates) is not xp:
            msg = (
                f"{name} must be an array of the same library as {data_name}; got "
                f"{type(updates).__module__}.{type(updates).__name__} and "
                f"{type(data).__module__}.{type(data).__name__}"
            )
            raise TypeError(msg)
        if updates.dtype != data.dtype and not _casts_safely(xp, updates.dtype, data.dtype):
            msg = (
                f"{name} must have a dtype that casts safely to {data_name}.dtype = "
                f"{dtype_name(data.dtype)}; got {dtype_name(updates.dtype)}"
            )
            raise TypeError(msg)
    else:
        _check_python_values(updates, data.dtype, name, data_name)
        try:
            updates = xp.asarray(updates, dtype=data.dtype, device=device_for_new(data))
        except (TypeError, ValueError, OverflowError) as err:
            wanted = dtype_name(data.dtype)
            msg = (
                f"{name} must be values that {data_name}.dtype = {wanted} holds exactly, or an "
                f"array; {err}"
            )
            raise TypeError(msg) from None
    given = tuple(updates.shape)
    if mode == "block":
        fits = len(given) == len(shape) and all(g >= s for g, s in zip(given, shape, strict=True))
        wanted = f"at least {shape} on every axis (index.shape)"
    elif mode == "broadcast":
        fits = len(given) <= len(shape) and all(
            g in (1, s) for g, s in zip(given[::-1], shape[::-1], strict=False)
        )
        wanted = f"broadcastable to {shape}"
    else:
        fits = given == shape
        wanted = f"{shape}"
    if not fits:
        msg = f"{name}.shape must be {wanted}; got {given}"
        raise ValueError(msg)
    if updates.dtype != data.dtype:
        updates = xp.astype(updates, data.dtype)
    if given != shape:
        if mode == "block":
            updates = updates[tuple(slice(0, s) for s in shape)]
        else:
            updates = xp.broadcast_to(updates, shape)
    return updates


def _check_python_values(values: Any, dtype: Any, name: str, data_name: str) -> None:
    """Python values must be held exactly by `dtype`: no float into an integer dtype, no
    complex into a real one, no integer outside the dtype's range (backends would truncate,
    wrap or refuse them, each differently)."""
    try:
        given = np.asarray(values)
    except (TypeError, ValueError):
        return  # ragged or odd values: the namespace's asarray reports them
    target = dtype_name(dtype)
    try:
        wanted = np.dtype(target)
    except TypeError:
        return  # a dtype outside the standard's: the namespace decides
    if given.size == 0:
        return  # no values, whatever dtype NumPy guessed for them
    kind = given.dtype.kind
    refused = (
        (kind == "f" and wanted.kind in "biu")
        or (kind == "c" and wanted.kind != "c")
        or (kind in "iu" and wanted.kind == "b")
    )
    if kind in "iu" and wanted.kind in "iu" and given.size:
        info = np.iinfo(wanted)
        low, high = int(given.min()), int(given.max())
        refused = low < int(info.min) or high > int(info.max)
    if refused:
        msg = (
            f"{name} must be values that {data_name}.dtype = {target} holds exactly, or an "
            f"array; got {values!r}"
        )
        raise TypeError(msg)


def _casts_safely(xp: Any, source: Any, target: Any) -> bool:
    """NumPy's "safe" casting between the standard's dtypes, by name (backends differ:
    ndonnx lets float32 cast to int32); the namespace's ``can_cast`` for any other dtype."""
    names = dtype_name(source), dtype_name(target)
    try:
        return bool(np.can_cast(np.dtype(names[0]), np.dtype(names[1]), casting="safe"))
    except TypeError:
        pass
    try:
        return bool(xp.can_cast(source, target))
    except TypeError:
        return False


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
    if reduce == "min":
        return xp.minimum(old, new)
    if reduce == "max":
        return xp.maximum(old, new)
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
    order = xp.argsort(flat, stable=True)
    targets = xp.take(flat, order)
    values = xp.take(updates, order)
    if reduce != "update" and count > 1 and not unique:
        start = xp.searchsorted(targets, targets, side="left")  # first entry of each run
        place = xp.arange(count, dtype=start.dtype, device=device)
        step = 1
        while step < count:
            earlier = xp.concat([values[:step], values[:-step]])
            values = select(place - step >= start, combine(xp, reduce, earlier, values), values)
            step *= 2
    positions = xp.arange(size, dtype=targets.dtype, device=device)
    last = xp.searchsorted(targets, positions, side="right") - 1
    last = xp.maximum(last, 0)  # -1: before the first target, so not hit
    hit = xp.take(targets, last) == positions
    reduced = xp.take(values, last)
    new = combine(xp, reduce, flat_data, reduced)
    return xp.reshape(select(hit, new, flat_data), data.shape)
