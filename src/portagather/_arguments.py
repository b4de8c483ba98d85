"""Every call's arguments, checked in one order before any backend sees them.

Each public function (the gathers, the scatters, the segment reductions and ``segment_csr``,
and each compat front end through them) passes its arguments to one entry point here
(:func:`gather_call`, :func:`scatter_call`, :func:`segment_call`, :func:`csr_call`), which
returns the checked call with named fields. The checks run in one order on every backend, so
that a call with two faults reports the same one everywhere. The gathers and the scatters
(docs/contract.md, "Errors"):

1. the options: ``axis``, ``dim`` and ``batch_dims`` are ints (:func:`int_argument`, as the
   public functions read them), ``bad_indices`` names a policy, ``reduce`` a reduction and
   the promises are bools;
2. the kinds: the data, the index, the updates and ``fill_value`` are arrays or Python
   values of the right kind (a scalar, or rectangular nested lists and tuples of them; no
   ``None``, dict, string index or other object), and the arrays are of one namespace;
3. ranks and shapes: the plan of the gather (``_plan``), the updates' shape, a 0-d
   ``fill_value``;
4. dtypes: an integer index, a reduction the data's dtype has, updates that cast safely;
5. values: ``fill_value`` and Python updates held exactly by the data's dtype, and Python
   index values that no integer dtype of the data's device holds, under the policy.

The segment reductions and ``segment_csr`` keep the order of docs/contract.md, R6: their
options, the kinds, the dtypes (of the ids or offsets, then of the data), the shapes, then
``num_segments`` (its kind, and whether an array of the device can hold it) and the values.
TensorFlow's sorted ``segment_*`` (``sorted_vector``) check two things more, first among the
shapes, as they always have: the ids are a vector, then sorted where their values can be
read now (the one value read before the other shapes, so that a call with unsorted ids
reports them on every backend, whatever else is wrong with its shapes); for them, ids given
as Python values become an array after the dtypes (clipped into the widest integer of the
data's device, :func:`_values_array`'s rule), for those two checks to read.

The values of index arrays are the policy's, afterwards (``_indices``). Python values become
arrays of the data's namespace only once all five have passed, on the data's device and in
a dtype that device holds: no backend ever sees an argument portagather has not checked.

A call is checked once per call signature: the first call of a key (:func:`call_key`: the
operation, the options as written, each array's type, shape, dtype and device) runs the
checks and keeps what they found as a data-only route (:class:`Route`, :class:`SegmentRoute`,
:class:`CsrRoute`); a repeat call finds it with one dictionary lookup and runs no check (the
idea of einops' cached recipe). The values of an index are never part of a key: the policy
reads them on every call. Only arrays are keyed: a call with Python values, an option that
cannot be hashed, or arrays of a type whose engine keeps no key (JAX, Dask, ndonnx,
array-api-strict, whose calls either compile once per shape already or are lazy) runs every
check each time.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import (
    DTYPE_KINDS,
    Unread,
    device_for_new,
    dtype_kind,
    dtype_name,
    mean_division,
    numpy_dtype,
    reduction_identity,
    unknown_sizes,
)
from ._errors import raise_first_bad
from ._indices import normalize_policy, resolve_default, to_wide
from ._plan import (
    GatherPlan,
    IndexParts,
    Offsets,
    SegmentsGiven,
    check_segments_axis,
    plan_index_parts,
    plan_segments,
    symbolic_size,
)
from ._scatter import NO_PROMISES, ScatterPromises
from .engines import KEYED_ENGINES, Engine, engine_for

# -- the operations, and the routes of checked calls ----------------------------------------


@dataclass(frozen=True, eq=False, slots=True)
class Operation:
    """A public function as the checks and the pipeline see it: the names its arguments have
    in messages (data, index, and the updates of a scatter), the planner of its shapes, and
    which updates shapes fit a scatter (:func:`scatter_call`). Compared and hashed by
    identity: a call's key holds the module's own constant."""

    names: tuple[str, ...]
    planner: Callable[..., GatherPlan]
    updates_fit: str = "exact"


@dataclass(frozen=True, slots=True)
class Route:
    """What the checks of one call signature found: nothing but data, the engine, and the
    engine's checked kernel for it.

    `policy` is the canonical policy (``"default"`` until the call knows how its index values
    can be seen); `fill` what ``check_fill_value`` made of ``fill_value`` (gathers);
    `reduction` the reduction the engine runs (scatters: ``"max"`` for ``"add"`` on bool).
    `kernel` is :meth:`Engine.checked_gather` or :meth:`Engine.checked_scatter` of the route:
    the whole call for a valid index, or None where it does not serve (the policy decides).
    `updates_as_given`: a scatter's updates of this key have the data's dtype and the
    result's shape as the caller gives them (else every call casts, cuts or broadcasts
    them: :func:`fitted_updates`); True for a gather. Every field is given (no defaults):
    torch.compile traces a route's making, and cannot trace a default object's."""

    xp: Any
    engine: Engine
    plan: GatherPlan
    policy: str
    fill: Any
    reduction: str
    promises: ScatterPromises
    kernel: Callable[..., Any] | None
    updates_as_given: bool


def kernel_applies(engine: Engine, plan: GatherPlan, policy: str) -> bool:
    """Whether a checked kernel may answer calls of `plan` under `policy`: the policy leaves
    every valid index as it is (TensorFlow's default is "error" wherever such a kernel
    applies, since it applies only where the values can be read now), and the pipeline has
    no answer of its own (an empty result, an empty axis)."""
    return (
        engine.gathers_checked
        and policy in ("error", "unchecked", "default")
        and not plan.reads_nothing
        and 0 not in plan.axis_sizes
    )


def call_key(options: tuple[Any, ...], *arrays: Any) -> tuple[Any, Any]:
    """``(key, route)``: the key of a call with these `options` and these arrays, and the
    route kept for it (a :class:`Route`, :class:`SegmentRoute` or :class:`CsrRoute`), or
    None. The key is None where the call cannot be keyed: arrays of two types, of a type
    with no keyed engine, Python values, or an option that cannot be hashed (a list as
    ``bad_indices``, an array).

    Each option comes after its type where a value of another type could compare equal:
    ``0``, ``0.0``, ``False`` and ``np.int8(0)`` compare equal and hash alike, yet the
    checks treat them differently. One function for the key and the lookup: every call
    pays for it."""
    kind = type(arrays[0])
    engine = KEYED_ENGINES.get(kind)
    if engine is None:
        return None, None
    for array in arrays:
        if type(array) is not kind:
            return None, None
    keys = engine.route_keys(arrays)
    if keys is None:
        return None, None
    key = (options, keys)
    try:
        return key, _ROUTES.get(key)
    except TypeError:
        return None, None


#: Routes by key. A program calls a bounded number of signatures; the bound keeps a program
#: that calls an unbounded number (shapes that grow) from holding on to every one.
_ROUTES: dict[tuple[Any, ...], Any] = {}
_MAX_ROUTES = 1024


def _by_value(option: object) -> bool:
    """Whether `option` hashes by its value, so that it may key a route: a Python or NumPy
    scalar. A PyTorch tensor hashes by identity, and one filled in place between two calls
    would find the route of its old value."""
    return type(option) in _SCALAR_TYPES or isinstance(option, np.generic)


_SCALAR_TYPES = frozenset((bool, int, float, complex, str))


def keep(key: tuple[Any, ...] | None, route: Any) -> None:
    """Keep `route` for later calls of `key` (where :func:`call_key` made one)."""
    if key is None:
        return
    if len(_ROUTES) >= _MAX_ROUTES:
        _ROUTES.clear()
    _ROUTES[key] = route


# -- the entry points: a checked call, or the route kept for its key ------------------------


def gather_call(
    op: Operation,
    data: Any,
    indices: Any,
    arguments: tuple[Any, ...],
    bad_indices: object,
    fill_value: object,
) -> tuple[Route, Any, Any]:
    """``(route, data, indices)`` of a gather: its :class:`Route`, found by the call's key or
    made from every argument checked (once per key), and the data and the index as arrays
    of the route's namespace. `arguments` are the planner's integer arguments after `op`'s
    shapes, as :func:`int_argument` read them."""
    options = (op, arguments, type(bad_indices), bad_indices, type(fill_value), fill_value)
    key, route = call_key(options, data, indices) if _by_value(fill_value) else (None, None)
    if route is not None:
        return route, data, indices
    policy = normalize_policy(bad_indices)
    data_name, index_name = op.names
    pair = _Pair(data, indices, data_name, index_name)
    default_fill = type(fill_value) is int and fill_value == 0
    if not default_fill:
        fill_value_kind(fill_value)
    plan = plan_for(op.planner, pair.data, pair.indices, data_name, index_name, arguments)
    if not default_fill:
        fill_value_shape(fill_value)
    xp = pair.xp
    data = pair.data_array()
    pair.check_index_dtype()
    fill = 0 if default_fill else check_fill_value(xp, fill_value, data.dtype)
    engine = engine_for(xp)
    indices = pair.index_array(data, engine, plan, policy)
    kernel = None
    if kernel_applies(engine, plan, policy):
        kernel = engine.checked_gather(plan, indices.shape, indices.dtype, policy)
    route = Route(xp, engine, plan, policy, fill, "update", NO_PROMISES, kernel, True)
    keep(key, route)
    return route, data, indices


def scatter_call(
    op: Operation,
    data: Any,
    indices: Any,
    updates: Any,
    arguments: tuple[Any, ...],
    reduce: object,
    bad_indices: object,
    unique_indices: object,
    indices_are_sorted: object,
    deterministic: object = False,
) -> tuple[Route, Any, Any, Any]:
    """``(route, data, indices, updates)`` of a scatter, as :func:`gather_call`'s: `updates`
    as an array of the data's namespace and dtype, of the gather's result shape. The route's
    `reduction` is what the engine runs (``"max"`` for ``"add"`` on bool: OR), its `promises`
    the caller's ``unique_indices`` and ``indices_are_sorted``.

    ``op.updates_fit`` says which updates shapes fit: ``"exact"`` (``scatter_nd``),
    ``"block"`` (``scatter_d``: at least the index's shape on every axis; its leading block is
    used, as in ``torch.scatter``) or ``"broadcast"`` (``put_along_axis``); ``"slices"`` and
    ``"slices, broadcast"`` are the last two for slices along one axis at a vector index,
    described as PyTorch's ``index_reduce`` and ``index_add`` describe them.
    `deterministic` is checked with the options, and refused for a complex product.
    """
    options = (op, arguments, type(reduce), reduce, type(bad_indices), bad_indices,
               type(unique_indices), unique_indices, type(indices_are_sorted),
               indices_are_sorted, type(deterministic), deterministic)  # fmt: skip
    key, route = call_key(options, data, indices, updates)
    if route is not None:
        if not route.updates_as_given:  # the same cast, cut or broadcast as the first call's
            shape = route.plan.out_shape
            updates = fitted_updates(route.xp, updates, data.dtype, shape, op.updates_fit)
        return route, data, indices, updates
    data_name, index_name, update_name = op.names
    fit = op.updates_fit
    policy = normalize_policy(bad_indices)
    reduce = check_reduce(reduce)
    promised = check_promises(unique_indices, indices_are_sorted)
    tree = check_deterministic(deterministic)
    pair = _Pair(data, indices, data_name, index_name)
    given = Updates(pair.xp, pair.data_given, pair.data_name, updates, update_name)
    plan = plan_for(op.planner, pair.data, pair.indices, data_name, index_name, arguments)
    given.check_shape(plan, fit)
    data = pair.data_array()
    pair.check_index_dtype()
    xp = pair.xp
    reduction = check_reduce_dtype(xp, reduce, data.dtype, data_name)
    if tree and reduction == "multiply" and dtype_kind(xp, data.dtype) == "complex floating":
        msg = (
            f'reduce="multiply" with deterministic=True takes real {data_name} (backends '
            "multiply complex numbers by formulas of their own, whose last bits differ); "
            f"got {dtype_name(data.dtype)}"
        )
        raise TypeError(msg)
    given.check_dtype(data.dtype)
    updates = given.array(data, plan.out_shape, fit)
    as_given = updates is given.given  # no cast, cut or broadcast
    engine = engine_for(xp)
    indices = pair.index_array(data, engine, plan, policy)
    kernel = None
    if kernel_applies(engine, plan, policy):
        kernel = engine.checked_scatter(
            plan, indices.shape, indices.dtype, reduction, promised, policy, in_place=False
        )
    route = Route(xp, engine, plan, policy, 0, reduction, promised, kernel, as_given)
    keep(key, route)
    return route, data, indices, updates


def parts_call(
    op: Operation, data: Any, parts: Any, updates: Any, reduce: str, deterministic: bool
) -> tuple[Route, Any, Any, Any]:
    """``(route, data, indices, updates)`` of a scatter whose index is given as parts
    (PyTorch's ``index_put``): a tuple of index arrays, one per leading axis of the data,
    broadcast together (:func:`~._plan.plan_index_parts`), under ``"error"``. `indices` is
    the index of vectors they make (:func:`stacked_parts`), which `op`'s planner plans, and
    the rest :func:`scatter_call`'s. The checks of the parts come first, in the one order
    (their kinds, their shapes, their dtypes and the integer dtype they are cast to), once
    per call signature with the scatter's."""
    index_name = op.names[1]
    if not isinstance(parts, tuple | list) or not parts:
        msg = f"{index_name} must be a non-empty tuple of index arrays; got {parts!r}"
        raise TypeError(msg)
    options = (op, type(reduce), reduce, type(deterministic), deterministic)
    key, kept = call_key(options, data, *parts, updates)
    if kept is not None:  # (the route and the parts' plan)
        route, planned = kept
        indices = stacked_parts(route.xp, planned, parts)
        if not route.updates_as_given:  # the same cast or broadcast as the first call's
            shape = route.plan.out_shape
            updates = fitted_updates(route.xp, updates, data.dtype, shape, op.updates_fit)
        return route, data, indices, updates
    xp, data, parts, planned = _checked_parts(data, parts, op.names[0], index_name)
    route, data, indices, updates = scatter_call(
        op, data, stacked_parts(xp, planned, parts), updates, (), reduce, "error", False,
        False, deterministic,
    )  # fmt: skip
    keep(key, (route, planned))
    return route, data, indices, updates


def _checked_parts(
    data: Any, parts: Any, data_name: str, index_name: str
) -> tuple[Any, Any, list[Any], IndexParts]:  # fmt: skip
    """``(xp, data, parts, plan)``: the checks of index parts (:func:`parts_call`), with the
    data and the parts as arrays of `xp`. A part given as Python values is checked as an
    index (its kind, then its dtype) and becomes an array of the widest signed integer of
    the data's device, a value that dtype does not hold clipped into it (where it stays out
    of range and keeps its sign: :func:`_values_array`)."""
    pairs = [_Pair(data, part, data_name, index_name) for part in parts]
    data = pairs[0].data_array()
    xp = pairs[0].xp
    arrays = []
    for pair in pairs:
        if pair.from_values[1]:  # (its dtype checked as it becomes an array)
            pair.check_index_dtype()
            arrays.append(_values_array(xp, engine_for(xp), pair.indices, data))
        else:
            arrays.append(pair.indices)
    shapes = [static_shape(part, index_name) for part in arrays]  # (Dask: known sizes)
    planned = plan_index_parts(data.ndim, shapes, data_name, index_name)
    for pair, part in zip(pairs, arrays, strict=True):
        if not pair.from_values[1]:
            check_index_dtype(xp, part, index_name)
    dtypes = list(dict.fromkeys(part.dtype for part in arrays))
    if len(dtypes) > 1:
        planned = replace(planned, dtype=_promoted_integer(xp, dtypes, index_name))
    return xp, data, arrays, planned


def _promoted_integer(xp: Any, dtypes: list[Any], index_name: str) -> Any:
    """The integer dtype that index arrays of `dtypes` promote to and that holds every value
    of each, or a TypeError where there is none (int64 with uint64: NumPy promotes them to
    float64, PyTorch to int64)."""
    try:
        common = xp.result_type(*dtypes)
        holds = bool(xp.isdtype(common, "integral")) and all(
            xp.iinfo(common).min <= xp.iinfo(d).min and xp.iinfo(d).max <= xp.iinfo(common).max
            for d in dtypes
        )  # (PyTorch promotes uint64 with int64 to int64)
    except (TypeError, ValueError, RuntimeError):  # no promotion (array-api-strict)
        holds = False
    if not holds:
        names = ", ".join(dtype_name(d) for d in dtypes)
        msg = (
            f"{index_name} must be index arrays whose dtypes promote to an integer dtype; got "
            f"{names}"
        )
        raise TypeError(msg)
    return common


def stacked_parts(xp: Any, planned: IndexParts, parts: Any) -> Any:
    """The index of vectors that checked index `parts` of the plan `planned` make: cast to
    its one integer dtype where theirs differ, broadcast together, stacked along a new last
    axis."""
    if planned.dtype is not None:
        parts = [p if p.dtype == planned.dtype else xp.astype(p, planned.dtype) for p in parts]
    if not planned.same_shape:
        parts = xp.broadcast_arrays(*parts)
    return xp.stack(parts, axis=-1)


def counting_route(
    route: Route, index_shape: tuple[int, ...], index_dtype: Any, dtype: Any
) -> Route:  # fmt: skip
    """The route of the count beside `route`'s scatter: the add of ones at the same index,
    under the same policy and promises, into a new array of `dtype` (written in place: it is
    new), for ``_api.scatter_with_count``. Made per call (a kernel is a ``partial``): no
    cache for torch.compile's Dynamo to warn about."""
    reduction = check_reduce_dtype(route.xp, "add", dtype, "count")
    return _new_target_route(
        route.xp, route.engine, route.plan, route.policy, reduction, route.promises,
        index_shape, index_dtype,
    )  # fmt: skip


def _new_target_route(
    xp: Any, engine: Engine, plan: GatherPlan, policy: str, reduction: str,
    promises: ScatterPromises, index_shape: tuple[int, ...], index_dtype: Any,
) -> Route:  # fmt: skip
    """The route of a scatter into a new array (the pipeline's own: the engine's checked
    kernel may write in place), whose updates are the result's shape and dtype already."""
    kernel = None
    if kernel_applies(engine, plan, policy):
        kernel = engine.checked_scatter(
            plan, index_shape, index_dtype, reduction, promises, policy, in_place=True
        )
    return Route(xp, engine, plan, policy, 0, reduction, promises, kernel, True)


@dataclass(frozen=True, slots=True)
class SegmentRoute:
    """What the checks of one segment reduction's signature found, for its repeat calls: the
    namespace, its engine, the number of segments, the result's shape and dtype (the data's),
    the policy as named (TensorFlow's default unresolved), the caller's promise that the ids
    never decrease (an engine may use a sorted kernel), and what follows from the reduction
    and the data's dtype and shape."""

    xp: Any
    engine: Engine
    num_segments: int
    result_shape: tuple[int, ...]
    dtype: Any
    policy: str
    ids_sorted: bool
    #: The segment reduction (one of :data:`SEGMENT_REDUCTIONS`), whether the call also
    #: counts each segment's rows (a mean, or a front end's count), and whether negative ids
    #: are dropped (TensorFlow's and MindSpore's rule, which also starts a floating max or min
    #: from the dtype's lowest or highest finite value).
    reduce: str
    counting: bool
    drop_negative: bool
    #: The value of an empty segment: the reduction's identity (with `drop_negative`, finite).
    identity: Any
    #: No rows, of a dtype with gradients: the result is kept in the data's autograd graph.
    no_rows: bool
    #: A mean's division (:func:`~._arrays.mean_division`): ``"floor"``, ``"widened"`` or
    #: ``"plain"``, and the dtype it divides in (``""`` and None where it is no mean).
    division: str
    division_dtype: Any
    #: The scatters of this signature by the policy of the call (:func:`_scatters`), shared
    #: by its repeat calls, so each is made once.
    scatters: dict[str, SegmentScatters]
    #: The ids' name in messages: ``segment_ids``, or ``x`` for ``bincount``.
    ids_name: str
    #: ``deterministic=True`` on a floating sum, mean or product: the tree of
    #: ``_deterministic`` (for other dtypes and reductions every order gives the same bits).
    deterministic: bool


#: The names of the data and the ids in the messages of a function whose arguments are not
#: called ``data`` and ``segment_ids``.
_SEGMENT_ARGUMENTS = {"bincount": ("weights", "x")}


@dataclass(frozen=True, slots=True)
class SegmentScatters:
    """What a segment reduction runs under one policy: the scatter of the rows into the new
    result (whose plan's report describes a bad id), the add of ones into the counts where
    the call counts, the policy they run under, and whether the ids past the end are checked
    after a scatter that drops them (TensorFlow's rule: negative ids dropped, the others
    under ``"error"``, so the scatters run under ``"ignore"``)."""

    scatter: Route
    count: Route | None
    policy: str
    too_large: bool


@dataclass(slots=True)
class SegmentCall:
    """One segment reduction's checked call: its route, the scatters of its policy, and how
    the ids' values can be seen."""

    route: SegmentRoute
    scatters: SegmentScatters
    access: Any


def segment_call(
    data: Any, segment_ids: Any, num_segments: object, reduce: str, indices_are_sorted: object,
    bad_indices: object, function: str, drop_negative: bool, with_count: bool,
    sorted_vector: bool = False, floating: bool = False, deterministic: object = False,
) -> tuple[SegmentCall, Any, Any]:  # fmt: skip
    """``(call, data, ids)`` of the segment reduction `reduce`: its checked call, from its
    route where the call's key was seen before (a given `num_segments`; else it is read from
    the ids each time), and the data and the ids as arrays of the route's namespace.

    The checks, in the scatters' order: the policy, the arrays, the ids' dtype, the data's
    dtype, the shapes, `num_segments`; then `num_segments` read from the ids where not given.
    Ids given as Python values are the gathers' (:class:`_Pair`): integers, and a value that
    no integer dtype of the data's device holds is bad under every policy, dealt with as the
    policy says (:func:`_fitted_index`: ``"error"`` names it as written); with
    `drop_negative` a negative one is dropped, as every negative id then is.

    With `sorted_vector` (TensorFlow's sorted ``segment_*``, whose messages name `function`)
    the ids given as Python values become an array after the dtype checks, as
    :func:`_values_array` makes them (a value past the widest integer clipped into it, where it
    stays out of range), and the shapes start with two checks of their own
    (:func:`check_sorted_vector`): the ids are a vector, then sorted where their values can
    be read now. With `floating` integer data is refused among the dtypes
    (:func:`check_segment_dtype`).
    """
    key = kept = None
    if num_segments is not None and _by_value(num_segments):  # else checked on every call
        options = (reduce, type(num_segments), num_segments, type(indices_are_sorted),
                   indices_are_sorted, type(bad_indices), bad_indices, drop_negative,
                   with_count, function, sorted_vector, floating, type(deterministic),
                   deterministic)  # fmt: skip
        key, kept = call_key(options, data, segment_ids)
    if kept is not None:  # only what the ids' values decide is left
        return _segment_call(kept, segment_ids), data, segment_ids
    named_policy = policy = normalize_policy(bad_indices)
    promises = check_promises(False, indices_are_sorted)
    tree = check_deterministic(deterministic)
    data_name, ids_name = _SEGMENT_ARGUMENTS.get(function, ("data", "segment_ids"))
    pair = _Pair(data, segment_ids, data_name, ids_name)
    data = pair.data_array()
    xp, as_values = pair.xp, pair.from_values[1]
    pair.check_index_dtype()
    check_segment_dtype(xp, reduce, data.dtype, function, floating)
    if tree and reduce != "sum" and dtype_kind(xp, data.dtype) == "complex floating":
        msg = (
            f"{function}(deterministic=True) takes real data (complex sums only: backends "
            "multiply and divide complex numbers by formulas of their own, whose last bits "
            f"differ); got data of dtype {dtype_name(data.dtype)}"
        )
        raise TypeError(msg)
    engine = engine_for(xp)
    if sorted_vector:
        if as_values:  # (no error: values clipped into the dtype, on the data's device)
            pair.indices, as_values = _values_array(xp, engine, pair.indices, data), False
        check_sorted_vector(xp, engine, pair.indices, function)
    shape, id_shape = static_shape(data, data_name), static_shape(pair.indices, ids_name)
    if shape[: len(id_shape)] != id_shape:
        msg = (
            f"{ids_name}.shape must be a leading part of {data_name}.shape; got {ids_name}.shape"
            f" = {id_shape} and {data_name}.shape = {shape}"
        )
        raise ValueError(msg)
    count = _num_segments_argument(num_segments)
    if count is not None:
        check_num_segments(count, xp, engine, data, len(id_shape))
    if as_values:
        values = pair.indices
        if drop_negative and values.size:
            pair.indices = np.where(values < 0, -1, values)  # dropped, as every negative id
        if count is None:
            count = max(0, int(values.max()) + 1) if values.size else 0
            read = "num_segments=None, read as max(segment_ids) + 1,"
            check_num_segments(count, xp, engine, data, len(id_shape), read)
        plan = plan_segments((count, *shape[len(id_shape) :]), id_shape, ids_name)
        ids = pair.index_array(data, engine, plan, policy)
    else:
        ids = pair.indices
    if count is None:
        count = _read_num_segments(xp, engine, ids, engine.index_access(ids))
    dtype = data.dtype
    division, division_dtype = mean_division(xp, engine, data) if reduce == "mean" else ("", None)
    identity = reduction_identity(xp, reduce, dtype)
    if drop_negative and isinstance(identity, float):  # a floating max or min: +-inf
        # TensorFlow and MindSpore start from the lowest (highest) finite value instead.
        info = xp.finfo(dtype)
        identity = float(info.min) if identity < 0 else float(info.max)
    route = SegmentRoute(
        xp, engine, count, (count, *shape[len(id_shape) :]), dtype, named_policy,
        promises.indices_are_sorted, reduce, reduce == "mean" or with_count, drop_negative,
        identity,
        not math.prod(shape) and dtype_kind(xp, dtype) in _DIFFERENTIABLE, division,
        division_dtype, {}, ids_name,
        tree and reduce in _TREE_REDUCTIONS and _floating(xp, dtype),
    )  # fmt: skip
    keep(key, route)
    return _segment_call(route, ids), data, ids


#: The dtype kinds that have gradients.
_DIFFERENTIABLE = ("real floating", "complex floating")

#: The segment reductions that ``deterministic=True`` orders (the others pick one row).
_TREE_REDUCTIONS = ("sum", "mean", "prod")


def _floating(xp: Any, dtype: Any) -> bool:
    return dtype_kind(xp, dtype) in _DIFFERENTIABLE


def _segment_call(route: SegmentRoute, ids: Any) -> SegmentCall:
    """The call of `route` on `ids`: how their values can be seen, and the scatters of the
    policy that follows (TensorFlow's default resolved; where negative ids are dropped, under
    ``"error"``, ``"ignore"`` and the ids past the end checked after), made once per route
    and policy."""
    engine = route.engine
    access = engine.index_access(ids)
    policy = resolve_default(route.policy, access)
    scatters = route.scatters.get(policy)
    if scatters is None:
        scatters = route.scatters[policy] = _scatters(route, ids, policy)
    return SegmentCall(route, scatters, access)


def _scatters(route: SegmentRoute, ids: Any, policy: str) -> SegmentScatters:
    """The :class:`SegmentScatters` of `route` under `policy` (resolved), for ids like `ids`
    (a call that is not keyed finds the scatters' routes in :func:`_segment_route`'s cache)."""
    xp, engine = route.xp, route.engine
    too_large = route.drop_negative and policy == "error"
    if too_large:
        policy = "ignore"
    reduce, id_shape, sorted_ids = SEGMENT_SCATTERS[route.reduce], ids.shape, route.ids_sorted
    # A symbolic size (torch.export's dynamic dimensions) cannot be hashed: no cache then.
    symbolic = any(symbolic_size(s) for s in id_shape)
    make = _segment_route.__wrapped__ if symbolic else _segment_route
    scatter = make(
        xp, engine, route.result_shape, tuple(id_shape), ids.dtype, policy, reduce,
        route.dtype, sorted_ids, route.ids_name,
    )  # fmt: skip
    count = None
    if route.counting:
        count = make(
            xp, engine, (route.num_segments,), tuple(id_shape), ids.dtype, policy, "add",
            engine.wide_index_dtype(ids), sorted_ids,
        )  # fmt: skip
    return SegmentScatters(scatter, count, policy, too_large)


@lru_cache(maxsize=512)
def _segment_route(
    xp: Any, engine: Engine, shape: tuple[int, ...], id_shape: tuple[int, ...], id_dtype: Any,
    policy: str, reduce: str, dtype: Any, ids_sorted: bool, ids_name: str = "segment_ids",
) -> Route:  # fmt: skip
    """The route of the scatter by `reduce` of rows at ids of `id_shape` into a new array of
    `shape` and `dtype` (written in place: it is new); a bad id named `ids_name`."""
    reduction = check_reduce_dtype(xp, reduce, dtype, "data")
    plan = plan_segments(shape, id_shape, ids_name)
    promises = check_promises(False, ids_sorted)
    return _new_target_route(xp, engine, plan, policy, reduction, promises, id_shape, id_dtype)


@dataclass(frozen=True, slots=True)
class CsrRoute:
    """What the checks of one ``segment_csr`` signature found, kept for its repeat calls
    (:func:`call_key`): the namespace, its engine, the reduction, the policy, the data's shape,
    the axis the offsets split and the offsets' shape."""

    xp: Any
    engine: Engine
    reduce: str
    policy: str
    shape: tuple[int, ...]
    axis: int
    offsets_shape: tuple[int, ...]
    #: The segment reduction of the rows by policy and whether it counts
    #: (:func:`csr_segment_call`), each made once.
    segment_routes: dict[tuple[str, bool], SegmentRoute]
    #: ``deterministic=True`` (checked): the segment reduction's floating sums in one order.
    deterministic: bool
    #: The call gives lengths, not offsets (a front end's: ``_plan.SegmentsGiven``); its
    #: `offsets_shape` is that of the offsets they make.
    lengths: bool

    @property
    def segments(self) -> int:
        """The number of segments of each batch."""
        return self.offsets_shape[-1] - 1


def csr_call(
    data: Any, offsets: Any, reduce: object, bad_indices: object, deterministic: object = False,
    given: SegmentsGiven | None = None,
) -> tuple[CsrRoute, Any, Any]:  # fmt: skip
    """``(route, data, offsets)`` of a ``segment_csr`` call: its route found by the call's key,
    or made from every argument checked in the one order (the options, the kinds, the
    dtypes, the shapes), with the data and the offsets as arrays of one namespace.

    A front end's `given` (:class:`~._plan.SegmentsGiven`) gives lengths instead of offsets
    (``route.lengths``: ``_segment_csr`` makes the offsets of valid ones), names the axis
    they split (checked after their dtype: :func:`~._plan.check_segments_axis`) and the
    reduction whose dtypes the data must have."""
    options = (type(reduce), reduce, type(bad_indices), bad_indices, type(deterministic),
               deterministic, given)  # fmt: skip
    key, route = call_key(options, data, offsets)
    if route is not None:
        return route, data, offsets
    reduce = one_of(reduce, CSR_REDUCTIONS, "reduce")
    tree = check_deterministic(deterministic)
    if not isinstance(bad_indices, str) or bad_indices not in _CSR_POLICIES:
        msg = (
            "bad_indices must be 'error' or 'unchecked' for offsets (a bad offset has no "
            f"segment to drop, clip or wrap to); got {bad_indices!r}"
        )
        raise ValueError(msg)
    policy = _CSR_POLICIES[bad_indices]
    lengths = given is not None and given.lengths
    name = "lengths" if lengths else "offsets"
    pair = _Pair(data, offsets, "data", name)
    data = pair.data_array()
    xp = pair.xp
    pair.check_index_dtype()
    if given is not None and given.axis is not None:
        check_segments_axis(data.ndim, pair.indices.ndim, given.axis, name)
    checked_reduce = reduce if given is None else given.reduce
    checked_as, floating = _CSR_DTYPES.get(checked_reduce, (checked_reduce, False))
    function = f'segment_csr(reduce="{checked_reduce}")'
    check_segment_dtype(xp, checked_as, data.dtype, function, floating)
    shape, offset_shape = static_shape(data, "data"), static_shape(pair.indices, name)
    axis = len(offset_shape) - 1
    if axis < 0 or axis >= len(shape) or offset_shape[:axis] != shape[:axis]:
        last = "num_segments" if lengths else "num_segments + 1"
        msg = (
            f"{name} must have at least 1 dimension and, before its last one, the leading "
            f"dimensions of data ({name}.shape = data.shape[:k] + ({last},), which "
            f"splits data along axis k); got {name}.shape = {offset_shape} and data.shape = "
            f"{shape}"
        )
        raise ValueError(msg)
    if not lengths and offset_shape[-1] < 1:
        msg = "offsets must hold at least one offset along its last axis; got none"
        raise ValueError(msg)
    engine = engine_for(xp)
    if not pair.from_values[1]:
        offsets = pair.indices
    elif lengths:  # (clipped into the widest integer, where a value stays bad)
        offsets = _values_array(xp, engine, pair.indices, data)
    else:
        offsets = _offset_values(xp, engine, pair.indices, data, shape, axis, policy)
    if lengths:  # (the shape of the offsets they make)
        offset_shape = (*offset_shape[:-1], offset_shape[-1] + 1)
    route = CsrRoute(
        xp, engine, reduce, policy, shape, axis, offset_shape, {}, tree, lengths
    )  # fmt: skip
    keep(key, route)
    return route, data, offsets


def csr_segment_call(
    route: CsrRoute, rows: Any, ids: Any, policy: str, with_count: bool = False
) -> SegmentCall:  # fmt: skip
    """The segment reduction of a checked ``segment_csr`` call (`route`; its data viewed as
    `rows`, one per position along the split axis and before it) at the `ids` its offsets
    give every row, under `policy`, counting each segment's rows `with_count`: the call
    :func:`segment_call` would make of them, with no check repeated but the number of
    segments' (:func:`check_num_segments`), kept in `route` per policy and count."""
    kept = route.segment_routes.get((policy, with_count))
    if kept is None:
        xp, engine, reduce, dtype = route.xp, route.engine, route.reduce, rows.dtype
        count = math.prod(route.shape[: route.axis]) * route.segments
        check_num_segments(count, xp, engine, rows, 1)
        mean = reduce == "mean"
        division, division_dtype = mean_division(xp, engine, rows) if mean else ("", None)
        kept = route.segment_routes[policy, with_count] = SegmentRoute(
            xp, engine, count, (count, *route.shape[route.axis + 1 :]), dtype, policy, True,
            reduce, mean or with_count, False, reduction_identity(xp, reduce, dtype),
            not math.prod(route.shape) and dtype_kind(xp, dtype) in _DIFFERENTIABLE,
            division, division_dtype, {}, "segment_ids",
            route.deterministic and reduce in _TREE_REDUCTIONS and _floating(xp, dtype),
        )  # fmt: skip
    return _segment_call(kept, ids)


# -- 1. the options -------------------------------------------------------------------------


def int_argument(value: object, name: str) -> int:
    """`value` as an int: a Python or NumPy integer, never a bool; a TypeError otherwise."""
    if type(value) is int:  # the common case, at the cost of one type check
        return value
    if isinstance(value, bool | np.bool_):
        msg = f"{name} must be an int; got {value!r}"
        raise TypeError(msg)
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        msg = f"{name} must be an int; got {value!r}"
        raise TypeError(msg) from None


REDUCTIONS = ("update", "add", "multiply", "min", "max")


def check_reduce(reduce: object) -> str:
    """`reduce` if it names a reduction; a ``ValueError`` listing them otherwise."""
    return one_of(reduce, REDUCTIONS, "reduce")


def one_of(value: object, choices: Any, name: str) -> str:
    """`value` if it is one of the strings `choices` (the keys, for a dict); a ``ValueError``
    naming the argument `name` and listing them otherwise."""
    if isinstance(value, str) and value in choices:
        return value
    valid = ", ".join(repr(c) for c in choices)
    msg = f"{name} must be one of {valid}; got {value!r}"
    raise ValueError(msg)


_PROMISES = {
    (unique, ordered): ScatterPromises(unique, ordered)
    for unique in (False, True)
    for ordered in (False, True)
}


def check_deterministic(deterministic: object) -> bool:
    """`deterministic` as a bool; a ``TypeError`` naming it for anything else."""
    if not isinstance(deterministic, bool | np.bool_):
        msg = f"deterministic must be True or False; got {deterministic!r}"
        raise TypeError(msg)
    return bool(deterministic)


def check_promises(unique_indices: object, indices_are_sorted: object) -> ScatterPromises:
    """The promises as one (shared) object; a ``TypeError`` naming the argument for anything
    but a bool (a truthy string or array would make a promise the caller did not mean)."""
    given = {"unique_indices": unique_indices, "indices_are_sorted": indices_are_sorted}
    for name, value in given.items():
        if not isinstance(value, bool | np.bool_):
            msg = f"{name} must be True or False; got {value!r}"
            raise TypeError(msg)
    return _PROMISES[bool(unique_indices), bool(indices_are_sorted)]


#: The segment reductions, by the name in ``segment_<name>``.
SEGMENT_REDUCTIONS = ("sum", "mean", "max", "min", "prod")


#: What ``segment_csr`` reduces by: the segment reductions and the toolkit's.
CSR_REDUCTIONS = (
    *SEGMENT_REDUCTIONS, "logsumexp", "argmax", "argmin", "var", "std", "softmax", "log_softmax",
)  # fmt: skip

#: The toolkit's reductions in ``segment_csr``, by the dtype rule of the function they are:
#: the segment reduction whose rule it is, and whether only real floating data is taken.
_CSR_DTYPES = {
    **{r: ("max", True) for r in ("logsumexp", "var", "std", "softmax", "log_softmax")},
    "argmax": ("max", False), "argmin": ("min", False),
}  # fmt: skip


#: The scatter reduction behind each segment reduction (the mean is a sum over a count).
SEGMENT_SCATTERS = {"sum": "add", "mean": "add", "max": "max", "min": "min", "prod": "multiply"}


def _num_segments_argument(value: object) -> int | None:
    """`num_segments` as a Python int >= 0 (a symbolic size as it is), or None (read from the
    ids)."""
    if value is None:
        return None
    if symbolic_size(value):  # a dynamic size under torch.export: kept, as the shapes are
        return value  # type: ignore[return-value]
    if not isinstance(value, bool):
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            number = None
        if number is not None:
            if number < 0:
                msg = f"num_segments must be an int >= 0; got {number}"
                raise ValueError(msg)
            return int(number)
    msg = (
        "num_segments must be an int >= 0 (known when the function is called: under jax.jit, "
        f"a Python int, not a traced value), or None; got {value!r}"
    )
    raise TypeError(msg)


_CSR_POLICIES = {"error": "error", "ERROR": "error", "unchecked": "unchecked"}


# -- 2. the kinds ---------------------------------------------------------------------------


#: The namespace of each array type seen, for the common call with two arrays of one type.
_NAMESPACES: dict[type, Any] = {}


def namespace_name(x: Any) -> str:
    module = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax", "array_api_strict": "array_api_strict"}.get(module, module)


class _Pair:
    """The data and the index of one call, as arrays of one namespace or as checked Python
    values (kept as NumPy arrays: their shapes and dtypes are checked like an array's, and
    they become arrays of the namespace once every check has passed)."""

    __slots__ = ("data", "data_given", "data_name", "from_values", "index_name", "indices", "xp")

    def __init__(self, data: Any, indices: Any, data_name: str, index_name: str) -> None:
        self.data_name, self.index_name = data_name, index_name
        self.data, self.indices, self.data_given = data, indices, data
        #: Which of the two are Python values: the data, the index.
        self.from_values = (False, False)
        kind = type(data)
        if kind is type(indices):  # the common path: one dictionary lookup
            xp = _NAMESPACES.get(kind)
            if xp is not None:
                self.xp = xp
                return
        self.xp = self._sort(data, indices)

    def _sort(self, data: Any, indices: Any) -> Any:
        data_name, index_name = self.data_name, self.index_name
        if isinstance(indices, np.ma.MaskedArray):
            msg = (
                f"{index_name} must not be a NumPy masked array: a gather reads every value, "
                f"the masked ones too; pass {index_name}.filled(value) with a valid or a bad "
                "index for the masked entries"
            )
            raise TypeError(msg)
        data_is_array, index_is_array = is_array(data), is_array(indices)
        if data_is_array and index_is_array:
            if type(data) is type(indices):
                xp = aac.array_namespace(data)
                if not aac.is_array_api_strict_namespace(xp):  # its namespace follows flags
                    _NAMESPACES[type(data)] = xp
                return xp
            data_ns, index_ns = aac.array_namespace(data), aac.array_namespace(indices)
            if data_ns is not index_ns:
                msg = (
                    f"{data_name} and {index_name} must be arrays of one namespace; got a "
                    f"{namespace_name(data)} array for {data_name} and a "
                    f"{namespace_name(indices)} array for {index_name}"
                )
                raise TypeError(msg)
            return data_ns
        if not data_is_array:
            self.data = python_values(data, data_name, text=True)
        if not index_is_array:
            values = python_values(indices, index_name, text=False)
            if values.size == 0 and values.dtype.kind == "f":
                values = values.astype(np.int64)  # [] is float64 in NumPy: no indices, not floats
            self.indices = values
        self.from_values = (not data_is_array, not index_is_array)
        if data_is_array:
            return aac.array_namespace(data)
        if index_is_array:
            return aac.array_namespace(indices)
        return aac.array_namespace(self.data)  # NumPy's, for two sets of Python values

    # -- 4. dtypes

    def check_index_dtype(self) -> None:
        if not self.from_values[1]:
            check_index_dtype(self.xp, self.indices, self.index_name)
        elif self.indices.dtype != object:  # object: Python ints past every NumPy integer
            check_index_dtype(np, self.indices, self.index_name)

    # -- 5. values, and the arrays

    def data_array(self) -> Any:
        """The data as an array of the namespace, kept as :attr:`data` (Python values: on
        the index's device, in the namespace's own default dtypes, as its ``asarray`` makes
        them; NumPy's where neither argument is an array)."""
        if self.from_values[0]:
            if self.data.dtype == object:  # Python ints past every NumPy integer
                msg = f"{self.data_name} holds integers that no integer dtype holds"
                raise ValueError(msg + f"; got {shown(self.data_given)}")
            if not self.from_values[1] and not aac.is_numpy_namespace(self.xp):
                device = device_for_new(self.indices)
                try:
                    self.data = self.xp.asarray(self.data_given, device=device)
                except (TypeError, ValueError, OverflowError) as err:
                    msg = (
                        f"{self.data_name} must be an array, or values that the "
                        f"{namespace_name(self.indices)} namespace holds; got "
                        f"{shown(self.data_given)} ({err})"
                    )
                    raise TypeError(msg) from None
            self.from_values = (False, self.from_values[1])
        return self.data

    def index_array(self, data: Any, engine: Engine, plan: GatherPlan, policy: str) -> Any:
        """The index as an array of the namespace beside `data` (Python values: in the widest
        signed integer dtype of data's device, each value it cannot hold dealt with by the
        policy first: :func:`_fitted_index`)."""
        if not self.from_values[1]:
            return self.indices
        values = self.indices
        xp = self.xp
        held = numpy_dtype(engine.wide_index_dtype(data))
        device = device_for_new(data)
        if values.size and values.dtype != held:
            info = np.iinfo(held)
            if int(values.min()) < int(info.min) or int(values.max()) > int(info.max):
                values = _fitted_index(xp, engine, values, held, device, plan, policy)
        return xp.asarray(values.astype(held, copy=False), device=device)


_SCALARS = (bool, int, float, complex, str, np.generic)


def fill_value_kind(fill_value: object) -> None:
    """A TypeError unless `fill_value` is a Python or NumPy scalar or has a shape."""
    if isinstance(fill_value, _SCALARS):
        return
    if fill_value is None or not hasattr(fill_value, "shape"):
        msg = (
            "fill_value must be a scalar (a Python bool, int, float, complex or str, or a 0-d "
            f"array); got {fill_value!r}"
        )
        raise TypeError(msg)


class Updates:
    """The updates of a scatter: an array of the data's namespace, or checked Python values."""

    __slots__ = ("data_name", "given", "name", "values", "xp")

    def __init__(self, xp: Any, data: Any, data_name: str, updates: Any, name: str) -> None:
        self.xp, self.name, self.data_name = xp, name, data_name
        self.given = updates
        if is_array(updates):
            # `data` as the caller gave it: data given as Python values takes the index's
            # library, whose arrays the updates must then be (not NumPy's, which holds them).
            if type(updates) is not type(data) and aac.array_namespace(updates) is not xp:
                library = (
                    f"{type(data).__module__}.{type(data).__name__}"
                    if is_array(data)
                    else f"the index's library, {getattr(xp, '__name__', xp)}"
                )
                msg = (
                    f"{name} must be an array of the same library as {data_name}; got "
                    f"{type(updates).__module__}.{type(updates).__name__} and {library}"
                )
                raise TypeError(msg)
            self.values: Any = None
        else:
            self.values = python_values(updates, name, text=True)

    @property
    def shape(self) -> tuple[int, ...]:
        source = self.given if self.values is None else self.values
        return tuple(source.shape)

    def check_shape(self, plan: GatherPlan, mode: str) -> None:
        """A ValueError unless the updates fit the gather's result shape as `mode` (an
        :class:`Operation`'s ``updates_fit``) says."""
        given, shape = self.shape, plan.out_shape
        if mode == "block":
            fits = len(given) == len(shape) and all(
                g >= s for g, s in zip(given, shape, strict=True)
            )
            wanted = f"at least {shape} on every axis (index.shape)"
        elif mode in ("broadcast", "slices, broadcast"):
            fits = len(given) <= len(shape) and all(
                g in (1, s) for g, s in zip(given[::-1], shape[::-1], strict=False)
            )
            wanted = f"broadcastable to {shape}"
        else:
            fits = given == shape
            wanted = f"{shape}"
        if mode.startswith("slices"):  # PyTorch's index_add and index_reduce say it so
            index, axis = plan.report.index_name, plan.axis
            wanted = (
                f"{self.data_name}.shape with len({index}) = {shape[axis]} along dim {axis}, "
                f"{shape}"
            )
        if not fits:
            msg = f"{self.name}.shape must be {wanted}; got {given}"
            raise ValueError(msg)

    def check_dtype(self, dtype: Any) -> None:
        if self.values is not None:
            return
        xp, updates = self.xp, self.given
        if updates.dtype != dtype and not casts_safely(xp, updates.dtype, dtype):
            msg = (
                f"{self.name} must have a dtype that casts safely to {self.data_name}.dtype = "
                f"{dtype_name(dtype)}; got {dtype_name(updates.dtype)}"
            )
            raise TypeError(msg)

    def array(self, data: Any, shape: tuple[int, ...], mode: str) -> Any:
        """The updates as an array of data's namespace and dtype, of the gather's result
        `shape` (Python values checked to be held exactly by data's dtype first)."""
        xp = self.xp
        if self.values is None:
            updates = self.given
        else:
            check_exact_values(self.values, data.dtype, self.name, self.data_name, self.given)
            values = self.values
            if values.dtype == object:  # huge ints into a floating dtype: as Python floats
                values = values.astype(float)
            try:
                updates = xp.asarray(values, dtype=data.dtype, device=device_for_new(data))
            except (TypeError, ValueError, OverflowError) as err:
                wanted = dtype_name(data.dtype)
                msg = (
                    f"{self.name} must be values that {self.data_name}.dtype = {wanted} holds "
                    f"exactly, or an array; got {shown(self.given)} ({err})"
                )
                raise TypeError(msg) from None
        return fitted_updates(xp, updates, data.dtype, shape, mode)


def fitted_updates(xp: Any, updates: Any, dtype: Any, shape: tuple[int, ...], mode: str) -> Any:
    """The array `updates` (checked already) in `dtype`, of the gather's result `shape`, as
    `mode` (an :class:`Operation`'s ``updates_fit``) says they fit it."""
    if updates.dtype != dtype:
        updates = xp.astype(updates, dtype)
    if tuple(updates.shape) != shape:
        if mode == "block":  # its leading block, as torch.scatter reads src
            updates = updates[tuple(slice(0, s) for s in shape)]
        else:
            updates = xp.broadcast_to(updates, shape)
    return updates


def updates_array(xp: Any, updates: Any, data: Any, name: str, data_name: str) -> Any:
    """`updates` as an array of data's namespace and dtype, of any shape: the kinds, dtype and
    value checks of a scatter's updates (for front ends, which check shapes their own way)."""
    given = Updates(xp, data, data_name, updates, name)
    given.check_dtype(data.dtype)
    return given.array(data, given.shape, "exact")


#: Python and NumPy scalars that are numbers (bool included: its dtype is checked later).
_NUMBERS = (bool, int, float, complex, np.bool_, np.number)


#: Text scalars, which a data array or updates may hold (NumPy's and ndonnx's strings).
_TEXT = (str, bytes, np.str_, np.bytes_)


_NESTED = (list, tuple, range)


_INDEX_KIND = "an array, an int or a rectangular nested list of ints"


_VALUES_KIND = "an array, a scalar or a rectangular nested list of scalars"


def shown(value: Any) -> str:
    """``repr(value)``, shortened where it is long (a large list)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:72] + " ... " + text[-3:]


def is_array(x: Any) -> bool:
    """An array of some namespace; a NumPy scalar is a Python value here."""
    return not isinstance(x, np.generic) and aac.is_array_api_obj(x)


def python_values(value: Any, name: str, *, text: bool) -> Any:
    """`value`, given where an array is expected, as a NumPy array, or a TypeError naming
    `name` and what it got (a ValueError for ragged nested lists).

    Accepted: a Python or NumPy number (and, where `text`, a string), rectangular nested
    lists and tuples of them, and objects NumPy converts to numbers (``__array__``). Python
    ints past int64 are kept as ints (an object array): whether a dtype holds them is a
    question about values, asked later.
    """
    kind = _VALUES_KIND if text else _INDEX_KIND
    if isinstance(value, np.generic) and not text:
        value = value.item()  # a NumPy integer index means the Python int it holds
    if isinstance(value, _NUMBERS) or (text and isinstance(value, _TEXT)):
        return np.asarray(value)
    if isinstance(value, _NESTED):
        try:
            array = np.asarray(value)
        except ValueError:
            odd = _odd_leaf(value, text)
            if not odd:
                scalars = "scalars" if text else "ints"
                msg = (
                    f"{name} must be an array or a rectangular nested list of {scalars}; "
                    f"got {shown(value)}"
                )
                raise ValueError(msg) from None
        except Exception:
            odd = _odd_leaf(value, text) or [value]
        else:
            odd = _odd_leaf(value, text) if array.dtype.kind in "OUS" else []
        if odd:
            msg = f"{name} must be {kind}; got {shown(value)}, which holds {shown(odd[0])}"
            raise TypeError(msg)
        if array.dtype.kind in "fO":
            return _exact(value, array)
        return array
    if not aac.is_array_api_obj(value) and hasattr(value, "__array__"):
        array = np.asarray(value)
        if array.dtype.kind in "biufc" or (text and array.dtype.kind in "US"):
            return array
    msg = f"{name} must be {kind}; got {shown(value)}"
    raise TypeError(msg)


def _leaves(nested: Any) -> Any:
    if isinstance(nested, _NESTED):
        for item in nested:
            yield from _leaves(item)
    else:
        yield nested


def _odd_leaf(nested: Any, text: bool) -> list[Any]:
    """``[leaf]``: the first leaf that is no scalar of the accepted kinds; ``[]`` if none."""
    for leaf in _leaves(nested):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in ("biufcUS" if text else "biufc"):
            continue
        if not (isinstance(leaf, _NUMBERS) or (text and isinstance(leaf, _TEXT))):
            return [leaf]
    return []


def _exact(nested: Any, array: Any) -> Any:
    """Integers that NumPy made floats or objects (past int64: ``[1, 2**64 - 1]`` is float64,
    ``[2**64]`` object) as an object array of the Python ints, exact; other numbers as they
    are (an object array of mixed floats and huge ints: as floats)."""
    leaves = list(_leaves(nested))
    if leaves and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in leaves):
        exact = np.empty(len(leaves), dtype=object)
        exact[:] = [int(v) for v in leaves]
        return exact.reshape(array.shape)
    if array.dtype == object:
        return array.astype(complex if any(isinstance(v, complex) for v in leaves) else float)
    return array


# -- 3. shapes ------------------------------------------------------------------------------


#: Plans by call signature (the planner's name, both shapes as the arrays give them, the
#: integer arguments) where those shapes are static: one dictionary lookup for a call in a
#: loop, and the one cache of the gathers' and scatters' plans (the planners keep none; a
#: segment reduction's plan is kept in its route). Names, not the functions, as
#: keys: torch.compile traces a dictionary of strings.
_PLANS: dict[tuple[Any, ...], GatherPlan] = {}


def plan_for(
    planner: Any,
    data: Any,
    indices: Any,
    data_name: str,
    index_name: str,
    arguments: tuple[Any, ...],
) -> GatherPlan:
    """The plan of the call, from the shapes (checked static) and the integer arguments."""
    key: tuple[Any, ...] = (planner.__name__, data.shape, indices.shape, arguments)
    try:
        plan = _PLANS.get(key)
    except TypeError:  # a size that cannot be hashed (symbolic)
        plan, key = None, ()
    if plan is None:
        shapes = static_shape(data, data_name), static_shape(indices, index_name)
        plan = planner(*shapes, *arguments)
        if key and shapes == key[1:3]:  # kept where the shapes were Python ints as given
            if len(_PLANS) >= 512:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


def check_sorted_vector(xp: Any, engine: Engine, ids: Any, function: str) -> None:
    """TensorFlow's sorted ``segment_*`` (`function`): a ValueError unless `ids` is 1-d and,
    where its values can be read now, sorted (non-decreasing), naming the first pair that
    falls. Run first among the shapes: the sorted form has always checked both before the
    others. Ids whose values cannot be read now (Dask, a JAX trace) are not checked for
    order."""
    if ids.ndim != 1:
        msg = f"segment_ids must be 1-d (a vector) for {function}; got shape {tuple(ids.shape)}"
        raise ValueError(msg)
    if engine.index_access(ids) != "now" or ids.shape[0] <= 1:
        return
    falls = ids[1:] < ids[:-1]
    if engine.value_range(xp.astype(falls, xp.int8))[1]:
        (where,) = xp.nonzero(falls)
        k = int(where[0]) + 1
        msg = (
            f"segment_ids must be sorted (non-decreasing) for {function}; got "
            f"segment_ids[{k}] = {engine.read_int(ids[k])} after segment_ids[{k - 1}] = "
            f"{engine.read_int(ids[k - 1])} (unsorted_segment_{function[8:]} takes any order)"
        )
        raise ValueError(msg)


def static_shape(x: Any, name: str) -> tuple[int, ...]:
    """The shape as Python ints, where a symbolic size (``torch.export``'s dynamic
    dimension) stays one; every gather here is planned from these shapes."""
    shape = tuple(x.shape)
    if all(type(s) is int or symbolic_size(s) for s in shape):
        return shape
    if any(s is None for s in shape):
        msg = (
            f"{name} must have a static shape (every size known when the call is made); "
            f"got shape {shape}"
        )
        raise ValueError(msg)
    if any(s != s for s in shape):  # NaN: Dask's unknown sizes, after boolean indexing
        raise unknown_sizes(name, f"got shape {shape}")
    return tuple(int(s) for s in shape)


def fill_value_shape(fill_value: object) -> None:
    """A ValueError for an array `fill_value` that is not 0-d (its kind checked first)."""
    scalar = isinstance(fill_value, _SCALARS)
    shape = () if scalar else tuple(fill_value.shape)  # type: ignore[attr-defined]
    if shape != ():
        msg = (
            "fill_value must be a scalar (a Python scalar or a 0-d array); got an array of "
            f"shape {shape}"
        )
        raise ValueError(msg)


# -- 4. dtypes ------------------------------------------------------------------------------


#: Whether a dtype of a namespace is an integer dtype, per (namespace id, dtype).
_INTEGRAL: dict[tuple[int, Any], bool] = {}


def check_index_dtype(xp: Any, indices: Any, index_name: str) -> None:
    """Reject boolean, floating and other non-integer index arrays."""
    dtype = indices.dtype
    key = (id(xp), dtype)
    is_integer = _INTEGRAL.get(key)
    if is_integer is None:
        try:
            is_integer = bool(xp.isdtype(dtype, "integral"))
        except (TypeError, ValueError):  # e.g. NumPy strings, which isdtype does not know
            is_integer = False
        _INTEGRAL[key] = is_integer
    if not is_integer:
        shown = dtype if isinstance(dtype, np.dtype) else dtype_name(dtype)  # NumPy's: "<U1"
        msg = f"{index_name} must have an integer dtype; got {shown}"
        raise TypeError(msg)


#: What each reduction is on bool: OR (max) or AND (min).
_BOOL_REDUCTIONS = {"add": "max", "multiply": "min", "min": "min", "max": "max"}


def reduction_for(xp: Any, reduce: str, dtype: Any) -> str | None:
    """The reduction the engines run for `reduce` (``"add"``, ``"multiply"``, ``"min"``,
    ``"max"``) on `dtype`, or None where the dtype has none: the one dtype rule of the
    scatters and the segment reductions (docs/contract.md, S6 and R3).

    Numbers (NumPy's ``bfloat16`` included: :func:`~._arrays.dtype_kind`) and bool; on bool
    ``"add"`` and ``"max"`` are a logical OR and ``"multiply"`` and ``"min"`` a logical AND
    (False < True), as TensorFlow and PyTorch combine bools: the engines run ``"max"`` and
    ``"min"`` for them. ``"min"`` and ``"max"`` need an order, so not complex.
    """
    kind = dtype_kind(xp, dtype)
    if kind == "bool":
        return _BOOL_REDUCTIONS[reduce]
    if kind is None or (kind == "complex floating" and reduce in ("min", "max")):
        return None
    return reduce


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


def check_segment_dtype(
    xp: Any, reduce: str, dtype: Any, function: str, floating: bool = False
) -> None:
    """The scatters' dtype rule (:func:`reduction_for`) for the reduction's
    scatter: numbers for every reduction (NumPy's ``bfloat16`` too), but no complex numbers
    for ``max`` and ``min``; bool for ``max`` and ``min`` (any, all), not for the sum, the
    mean and the product, whose results are no bools. With `floating`, no integers either
    (TensorFlow's ``unsorted_segment_sqrt_n``, which divides by a square root); with
    `floating` and ``max`` or ``min``, real floating dtypes only (the toolkit's softmax,
    logsumexp, var and std, which take each segment's maximum)."""
    bools = reduce in ("max", "min")
    found = reduction_for(xp, SEGMENT_SCATTERS[reduce], dtype)
    kind = dtype_kind(xp, dtype)
    if floating and bools and kind != "real floating":
        kinds = "a real floating"
    elif found is None or (kind == "bool" and not bools):
        kinds = reducible_kinds(SEGMENT_SCATTERS[reduce], bools)
    elif floating and kind in ("signed integer", "unsigned integer"):
        kinds = "a floating"
    else:
        return
    msg = f"{function} needs data of {kinds} dtype; got {dtype_name(dtype)}"
    raise TypeError(msg)


def _itemsize(dtype: Any) -> int:
    """The bytes of one element of `dtype` (8 where no library says)."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    try:
        return int(np.dtype(dtype_name(dtype)).itemsize)
    except TypeError:
        return 8


def casts_safely(xp: Any, source: Any, target: Any) -> bool:
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


# -- 5. values ------------------------------------------------------------------------------


def check_fill_value(xp: Any, fill_value: object, dtype: Any) -> Any:
    """The Python scalar `fill_value` stands for, checked against `dtype` (or an
    :class:`Unread` for a 0-d array whose value cannot be read now: traced, lazy, symbolic).

    One rule on every backend: only scalars (Python scalars or 0-d arrays); ``None`` and
    other non-numbers are a TypeError, and a value that the dtype cannot hold exactly (300
    into int8, 0.5 or NaN into an integer dtype, 2**24 + 1 or 1e300 into float32, "abc"
    into a 1-character string dtype) is a ValueError naming the value and the dtype. Floats
    round to the nearest value of a floating dtype.
    """
    if type(fill_value) is int and fill_value == 0:  # the default: the dtype's zero
        return 0
    value = _fill_scalar(fill_value)
    if value is _UNKNOWN:
        return Unread(fill_value)
    return _fitted(xp, value, fill_value, dtype)


_UNKNOWN = object()


def _fill_scalar(fill_value: object) -> Any:
    """The Python scalar of `fill_value`, or ``_UNKNOWN`` for a 0-d array without values."""
    if isinstance(fill_value, _SCALARS):
        return fill_value.item() if isinstance(fill_value, np.generic) else fill_value
    fill_value_kind(fill_value)
    fill_value_shape(fill_value)
    if aac.is_lazy_array(fill_value):  # reading it would compute or fail
        return _UNKNOWN
    try:
        return np.asarray(fill_value).item()
    except Exception:  # a tracer or a symbolic array: its value is not known here
        return _UNKNOWN


def empty_value_kind(empty_value: object) -> None:
    """A TypeError unless `empty_value` (the value of an empty segment) is None or a Python
    or NumPy real scalar; checked among the kinds, before the arrays are touched."""
    if empty_value is None or isinstance(empty_value, _REAL_SCALARS):
        return
    msg = (
        "empty_value must be None or a real scalar (a Python or NumPy bool, int or float); "
        f"got {shown(empty_value)}"
    )
    raise TypeError(msg)


_REAL_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def check_empty_value(xp: Any, empty_value: object, dtype: Any) -> Any:
    """The Python scalar that `empty_value` (of :func:`empty_value_kind`) stands for,
    checked against the result's `dtype` as ``fill_value`` is (:func:`check_fill_value`)."""
    empty_value_kind(empty_value)
    value = empty_value.item() if isinstance(empty_value, np.generic) else empty_value
    return _fitted(xp, value, empty_value, dtype, "empty_value", "result")


def _fitted(
    xp: Any, value: Any, fill_value: object, dtype: Any, name: str = "fill_value",
    whose: str = "data",
) -> Any:  # fmt: skip
    """`value` as the Python scalar to cast to `dtype`, or a ValueError if it does not fit
    (naming the argument `name` and `whose` dtype it is)."""

    def refuse() -> None:
        msg = (
            f"{name}={fill_value!r} cannot be held exactly by the {whose}'s dtype "
            f"{dtype_name(dtype)}"
        )
        raise ValueError(msg)

    if isinstance(value, str):
        try:
            numeric = any(xp.isdtype(dtype, k) for k in DTYPE_KINDS)
        except (TypeError, ValueError):  # a string dtype, which the standard does not name
            numeric = False
        if numeric:
            refuse()
        try:
            text = np.dtype(dtype)
        except TypeError:  # another library's string dtype: it keeps what it can
            return value
        if text.kind == "U" and len(value) > text.itemsize // 4:
            refuse()
        return value
    try:
        kind = next(k for k in DTYPE_KINDS if xp.isdtype(dtype, k))
    except (StopIteration, TypeError, ValueError):
        return value  # a dtype the standard does not name (strings of a backend)
    if kind == "complex floating":
        return value
    if isinstance(value, complex):
        if value.imag != 0:
            refuse()
        value = value.real
    if kind == "bool":
        if value not in (0, 1) or (isinstance(value, float) and not math.isfinite(value)):
            refuse()
        return value
    if kind == "real floating":
        info = xp.finfo(dtype)
        if isinstance(value, float):
            if math.isfinite(value) and abs(value) > float(info.max):
                refuse()
        elif not _int_fits_float(int(value), float(info.eps), float(info.max)):
            refuse()
        return value
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        refuse()
    info = xp.iinfo(dtype)
    if not int(info.min) <= int(value) <= int(info.max):
        refuse()
    return int(value)


def _int_fits_float(value: int, eps: float, largest: float) -> bool:
    """Whether a floating dtype with machine epsilon `eps` holds the int `value` exactly."""
    if abs(value) > largest:
        return False
    significand = abs(value)
    while significand and significand % 2 == 0:
        significand //= 2
    return significand.bit_length() <= round(-math.log2(eps)) + 1


def _fitted_index(
    xp: Any, engine: Any, values: Any, held: Any, device: Any, plan: GatherPlan, policy: str
) -> Any:
    """Python index values, some of which dtype `held` (the widest the data's device holds)
    cannot hold, as values it holds that the policy treats alike.

    Such a value is out of range for every array of that device (no axis is longer than its
    widest integer), so it is bad under every policy: ``"error"`` raises the IndexError of
    the first bad index now, naming the value as written (it is known, even under a trace);
    ``"wrap"`` takes its true remainder; ``"clip"`` puts it past the end (or, if negative,
    before the start), where the clamp takes it to the same edge; ``"ignore"`` and
    ``"unchecked"`` put it past the end. An index that reads nothing, or addresses an empty
    axis (which the pipeline reports), is put past the end too.
    """
    info = np.iinfo(held)
    low, high = int(info.min), int(info.max)
    values = np.asarray(values, dtype=object)  # exact Python ints from here on
    big = np.asarray((values < low) | (values > high), dtype=bool)
    if policy == "default":  # TensorFlow's: "error" where values are checked, else "ignore"
        probe = xp.asarray(np.zeros((), dtype=held), device=device)
        policy = resolve_default(policy, engine.index_access(probe))
    readable = not plan.reads_nothing and 0 not in plan.axis_sizes
    if readable and policy == "error":
        raise_first_bad(np, _bad(values, plan), values, plan.report)
    fitted = np.where(big, high, values)
    if readable and policy == "clip":
        fitted = np.where(big & np.asarray(values < 0, dtype=bool), low, fitted)
    elif readable and policy == "wrap":
        sizes = plan.axis_sizes
        if plan.vector:
            for j, n in enumerate(sizes):
                fitted[..., j] = np.where(big[..., j], values[..., j] % n, fitted[..., j])
        else:
            fitted = np.where(big, values % sizes[0], fitted)
    return fitted.astype(held)


def _bad(values: Any, plan: GatherPlan) -> Any:
    """Where the index (Python ints, as an object array) is bad: per index vector."""
    parts = [values[..., j] for j in range(values.shape[-1])] if plan.vector else [values]
    bad = np.zeros(parts[0].shape, dtype=bool)
    for part, n in zip(parts, plan.axis_sizes, strict=True):
        low = -n if plan.allow_negative else 0
        bad |= np.asarray((part < low) | (part >= n), dtype=bool)
    return bad


def check_num_segments(
    count: int, xp: Any, engine: Engine, data: Any, id_rank: int, name: str = "num_segments"
) -> None:
    """A ValueError for a `num_segments` (given, as the Python int `count`) that no array of
    the data's device can hold: more than the widest integer of that device (int64; int32 on
    JAX without x64), or more result rows than ``2**63 - 1`` bytes hold (NumPy's and
    PyTorch's limit on an array's size), counting each row at least 8 bytes (the count of
    the mean, the sorts' positions)."""
    if symbolic_size(count):  # torch.export's dynamic size: an array of it exists already
        return
    info = xp.iinfo(engine.wide_index_dtype(data))
    largest = int(info.max)
    inner = tuple(data.shape[id_rank:])
    row = max(math.prod(inner) * _itemsize(data.dtype), 8)
    by_bytes = (2**63 - 1) // row
    if count <= min(largest, by_bytes):
        return
    if largest <= by_bytes:
        why = f"the largest {dtype_name(info.dtype)}, the widest integer of the data's device"
    else:
        why = (
            f"the most segments that 2**63 - 1 bytes hold at {row} bytes each: rows of "
            f"data.shape[{id_rank}:] = {inner} in {dtype_name(data.dtype)}, 8 bytes at least"
        )
    msg = f"{name} must be in [0, {min(largest, by_bytes)}] ({why}); got {count}"
    raise ValueError(msg)


def _read_num_segments(xp: Any, engine: Engine, ids: Any, access: Any) -> int:
    """`num_segments=None`: max(segment_ids) + 1, read now (0 for no ids)."""
    if access != "now":
        msg = (
            "num_segments=None reads max(segment_ids) + 1, which cannot be read when the "
            "function is called here (under jax.jit or another JAX transformation, on Dask, on "
            "symbolic ndonnx arrays, under torch.func.vmap); pass num_segments=N, a Python int"
        )
        raise ValueError(msg)
    if not math.prod(ids.shape):
        return 0
    wide = to_wide(xp, ids, engine.wide_index_dtype(ids), None, False)
    return max(0, engine.value_range(wide)[1] + 1)


def _offset_values(
    xp: Any, engine: Engine, values: Any, data: Any, shape: tuple[int, ...], axis: int,
    policy: str,
) -> Any:  # fmt: skip
    """Offsets given as Python values (a NumPy array; exact ints, objects past int64) as an
    array of the widest integer of the data's device. A value that dtype does not hold is
    past every axis of that device, so a bad offset: ``"error"`` raises the IndexError of the
    first bad offset now, naming it as written; ``"unchecked"`` clips it into the dtype."""
    held = numpy_dtype(engine.wide_index_dtype(data))
    info = np.iinfo(held)
    low, high = int(info.min), int(info.max)
    if values.size and (int(values.min()) < low or int(values.max()) > high):
        exact = np.asarray(values, dtype=object)
        if policy == "error":
            n = shape[axis]
            bad = np.asarray((exact < 0) | (exact > n), dtype=bool)
            if exact.shape[-1] > 1:
                bad[..., 1:] |= np.asarray(exact[..., 1:] < exact[..., :-1], dtype=bool)
            report = Offsets("offsets", False, "data", shape, axis)
            raise_first_bad(np, bad, exact, report)
        values = np.clip(exact, low, high)
    return xp.asarray(values.astype(held), device=device_for_new(data))


def check_exact_values(given: Any, dtype: Any, name: str, data_name: str, written: object) -> None:
    """Python values (`written`, as the NumPy array `given`) must be held exactly by
    `dtype`: no float into an integer dtype, no complex into a real one, no integer outside
    the dtype's range, no string into a number (backends would truncate, wrap or refuse them,
    each differently)."""
    target = dtype_name(dtype)
    try:
        wanted = np.dtype(target)
    except TypeError:
        return  # a dtype outside the standard's: the namespace decides
    if given.size == 0:
        return  # no values, whatever dtype NumPy guessed for them
    kind = given.dtype.kind  # "O": Python ints past int64
    refused = (
        (kind == "f" and wanted.kind in "biu")
        or (kind == "c" and wanted.kind != "c")
        or (kind in "iuO" and wanted.kind == "b")
        or (kind in "US" and wanted.kind in "biufc")
    )
    if kind in "iuO" and wanted.kind in "iu":
        info = np.iinfo(wanted)
        refused = int(given.min()) < int(info.min) or int(given.max()) > int(info.max)
    if refused:
        msg = (
            f"{name} must be values that {data_name}.dtype = {target} holds exactly, or an "
            f"array; got {shown(written)}"
        )
        raise TypeError(msg)


def check_python_values(values: Any, dtype: Any, name: str, data_name: str) -> None:
    """Python `values` (a scalar or nested lists) must be held exactly by `dtype`."""
    check_exact_values(python_values(values, name, text=True), dtype, name, data_name, values)


# -- index values given as Python values, clipped into the widest integer ------------------


def _values_array(xp: Any, engine: Engine, values: Any, data: Any) -> Any:
    """Index values (a NumPy array of checked integers; objects past int64) as an array of
    `xp` beside `data`, in the widest signed integer dtype of data's device: a value that
    dtype does not hold is out of range for every array of the device; it is clipped into
    the dtype, where it stays out of range and keeps its sign, so that the checks after
    treat it alike on every device (TensorFlow's sorted ids, ``index_put``'s index parts,
    PyTorch's lengths)."""
    held = numpy_dtype(engine.wide_index_dtype(data))
    info = np.iinfo(held)
    if values.size and (int(values.min()) < int(info.min) or int(values.max()) > int(info.max)):
        values = np.clip(np.asarray(values, dtype=object), int(info.min), int(info.max))
    return xp.asarray(values.astype(held), device=device_for_new(data))
