"""The routes of checked calls, and the entry points that find or make them.

Each public function (the gathers, the scatters, the segment reductions and ``segment_csr``,
and each compat front end through them) passes its arguments to one entry point here
(:func:`gather_call`, :func:`flat_call`, :func:`scatter_call`, :func:`parts_call`,
:func:`segment_call`, :func:`csr_call`), which runs the argument checks (``_options``: the
options; ``_operands``: the data, the index, the updates, ``fill_value``, ``empty_value`` and
``num_segments``, as arrays or Python values) in their one order and returns the checked
call.

A call is checked once per call signature: the first call of a key (:func:`call_key`: the
entry point's options as written, derived from its signature by :func:`options_key`, and
each array's type, shape, dtype and device) runs the checks and keeps what they found as a
data-only route, built with keywords and never changed after (:class:`Route`,
:class:`SegmentRoute` with its :class:`SegmentScatters`, :class:`CsrRoute`), in the one
route cache (``_ROUTES``); a repeat call finds it with one dictionary lookup and runs no check (the
idea of einops' cached recipe). The values of an index are never part of a key: the policy
reads them on every call. Only arrays are keyed: a call with Python values, an option that
cannot be hashed, or arrays of a type whose engine keeps no key (JAX, Dask, ndonnx,
array-api-strict, whose calls either compile once per shape already or are lazy) runs every
check each time.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import dtype_kind, dtype_name, mean_division, reduction_identity
from ._indices import IndexAccess, normalize_policy, resolve_default
from ._operands import (
    Updates,
    _Pair,
    check_fill_value,
    check_index_dtype,
    check_num_segments,
    check_reduce_dtype,
    check_segment_dtype,
    check_sorted_vector,
    fill_value_kind,
    fill_value_shape,
    fitted_updates,
    is_array,
    num_segments_argument,
    plan_for,
    python_values,
    read_num_segments,
    static_shape,
)
from ._options import (
    _CSR_DTYPES,
    _CSR_POLICIES,
    CSR_REDUCTIONS,
    SEGMENT_REDUCTIONS,
    SEGMENT_SCATTERS,
    check_deterministic,
    check_promises,
    check_reduce,
    one_of,
)
from ._plan import (
    GatherPlan,
    IndexParts,
    Offsets,
    SegmentsGiven,
    check_segments_axis,
    plan_index_parts,
    plan_segments,
)
from .engines import KEYED_ENGINES, Engine, engine_for
from .engines.scatter import NO_PROMISES, ScatterPromises

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


def options_key(
    entry: Callable[..., Any], arrays: tuple[str, ...], scalars: tuple[str, ...] = ()
) -> Callable[..., Any]:  # fmt: skip
    """The options of a call of the entry point `entry`, as its key holds them: a function of
    `entry`'s own parameters, made once from its signature, that returns every parameter not
    named in `arrays`, in order, each after its type (``0``, ``0.0``, ``False`` and
    ``np.int8(0)`` compare equal and hash alike, yet the checks treat them differently); or
    None, where an option named in `scalars` (one that may be given as an array) is no
    Python or NumPy scalar (:data:`_SCALAR_TYPES`): the call is not keyed.

    Every entry point hands it all the arguments it was given, so an option added to an
    entry point is in its key by construction (a call that leaves one out fails at once),
    and ``tests/test_route_keys.py`` varies each option of each public function on a warm
    route. Written as source and compiled once, as ``dataclasses`` writes ``__init__``:
    every call pays for its key, and a loop over the parameters costs several times the
    tuple it builds."""
    parameters = list(inspect.signature(entry).parameters)
    unknown = [name for name in (*arrays, *scalars) if name not in parameters]
    if unknown:
        msg = f"{entry.__name__} has no parameter {unknown[0]!r}"
        raise TypeError(msg)
    items = "".join(f"type({p}), {p}, " for p in parameters if p not in arrays)
    source = f"def key({', '.join(parameters)}):\n"
    for name in scalars:
        source += f"    if type({name}) not in _SCALAR_TYPES and not isinstance({name}, _NUMPY):\n"
        source += "        return None\n"
    namespace: dict[str, Any] = {"_SCALAR_TYPES": _SCALAR_TYPES, "_NUMPY": np.generic}
    exec(f"{source}    return ({items})\n", namespace)
    key: Callable[..., Any] = namespace["key"]
    key.__qualname__ = key.__name__ = f"{entry.__name__}_key"
    return key


def call_key(options: tuple[Any, ...], *arrays: Any) -> tuple[Any, Any]:
    """``(key, route)``: the key of a call with these `options` (an entry point's
    :func:`options_key`) and these arrays, and the route kept for it (a :class:`Route`,
    :class:`SegmentRoute` or :class:`CsrRoute`), or None. The key is None where the call
    cannot be keyed: arrays of two types, of a type with no keyed engine, Python values, or
    an option that cannot be hashed (a list as ``bad_indices``, an array). One function for
    the key and the lookup: every call pays for it."""
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


#: The one route cache: the routes of checked calls by key (:func:`call_key`); a segment
#: reduction's route holds its scatters' routes, a ``segment_csr`` route its segment
#: reductions'. A program calls a bounded number of signatures; the bound keeps a program
#: that calls an unbounded number (shapes that grow) from holding on to every one: at
#: ``_MAX_ROUTES`` routes the cache starts again, empty.
_ROUTES: dict[tuple[Any, ...], Any] = {}
_MAX_ROUTES = 1024


#: The types of the options that hash by their value, so that they may key a route (with a
#: NumPy scalar; and None, ``num_segments=None`` read from the ids): a PyTorch tensor hashes
#: by identity, and one filled in place between two calls would find the route of its old
#: value.
_SCALAR_TYPES = frozenset((bool, int, float, complex, str, type(None)))


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
    key = route = None
    options = _GATHER_KEY(op, data, indices, arguments, bad_indices, fill_value)
    if options is not None:  # (a tensor as fill_value hashes by identity: no key)
        key, route = call_key(options, data, indices)
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
    route = Route(
        xp=xp, engine=engine, plan=plan, policy=policy, fill=fill, reduction="update",
        promises=NO_PROMISES, kernel=kernel, updates_as_given=True,
    )  # fmt: skip
    keep(key, route)
    return route, data, indices


_GATHER_KEY = options_key(gather_call, ("data", "indices"), scalars=("fill_value",))


def flat_call(
    op: Operation, data: Any, indices: Any, bad_indices: object, fill_value: object
) -> tuple[Route, Any, Any]:
    """``(route, data, indices)`` of a gather from the flattened data at the flattened index,
    the flat position being the index (PyTorch's ``take_along_dim(dim=None)``): the
    :func:`gather_call` of the two as vectors, along axis 0 (`op`'s planner plans them),
    kept under the key of the arrays as given, so that a call seen before runs no check and
    only flattens them, by its engine (:meth:`Engine.flattened`). `data` and `indices` come
    back as vectors of the route's namespace."""
    key = route = None
    options = _FLAT_KEY(op, data, indices, bad_indices, fill_value)
    if options is not None:  # (a tensor as fill_value hashes by identity: no key)
        key, route = call_key(options, data, indices)
    if route is not None:  # (a vector, the common index, as it is, without a call)
        engine = route.engine
        if data.ndim != 1:
            data = engine.flattened(data)
        return route, data, indices if indices.ndim == 1 else engine.flattened(indices)
    data_name, index_name = op.names
    # Python values as data stay NumPy arrays, in their dtype, beside an index of that kind;
    # beside an index array of another kind, a list, which the checked call makes an array
    # of the index's namespace (as it makes values beside such an index: _Pair.data_array).
    listed = is_array(indices) and not isinstance(indices, np.ndarray)
    flat_data = _flat(data, data_name, text=True, listed=listed)
    route, data, indices = gather_call(
        op, flat_data, _flat(indices, index_name), _AXIS_0, bad_indices, fill_value
    )
    keep(key, route)
    return route, data, indices


_FLAT_KEY = options_key(flat_call, ("data", "indices"), scalars=("fill_value",))
_AXIS_0 = (0,)


def _flat(x: Any, name: str, text: bool = False, listed: bool = True) -> Any:
    """`x` flattened for :func:`flat_call`'s checked call: an array as a vector of its
    namespace (:meth:`Engine.flattened`), Python values (their kind checked, as the checked
    call checks it) as a flat list (else, not `listed`, a flat NumPy array)."""
    if is_array(x):
        return x if x.ndim == 1 else engine_for(aac.array_namespace(x)).flattened(x)
    values = python_values(x, name, text=text).reshape(-1)
    return values.tolist() if listed else values


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
    options = _SCATTER_KEY(
        op, data, indices, updates, arguments, reduce, bad_indices, unique_indices,
        indices_are_sorted, deterministic,
    )  # fmt: skip
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
    route = Route(
        xp=xp, engine=engine, plan=plan, policy=policy, fill=0, reduction=reduction,
        promises=promised, kernel=kernel, updates_as_given=as_given,
    )  # fmt: skip
    keep(key, route)
    return route, data, indices, updates


_SCATTER_KEY = options_key(scatter_call, ("data", "indices", "updates"))


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
    options = _PARTS_KEY(op, data, parts, updates, reduce, deterministic)
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


_PARTS_KEY = options_key(parts_call, ("data", "parts", "updates"))


def _checked_parts(
    data: Any, parts: Any, data_name: str, index_name: str
) -> tuple[Any, Any, list[Any], IndexParts]:  # fmt: skip
    """``(xp, data, parts, plan)``: the checks of index parts (:func:`parts_call`), with the
    data and the parts as arrays of `xp`. A part given as Python values is checked as an
    index (its kind, then its dtype) and becomes an array of the widest signed integer of
    the data's device, a value that dtype does not hold clipped into it (where it stays out
    of range and keeps its sign: :func:`~._operands.index_array` under ``"clip"``)."""
    pairs = [_Pair(data, part, data_name, index_name) for part in parts]
    data = pairs[0].data_array()
    xp = pairs[0].xp
    arrays = []
    for pair in pairs:
        if pair.from_values[1]:  # (its dtype checked as it becomes an array)
            pair.check_index_dtype()
            arrays.append(pair.index_array(data, engine_for(xp), None, "clip"))
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
    return Route(
        xp=xp, engine=engine, plan=plan, policy=policy, fill=0, reduction=reduction,
        promises=promises, kernel=kernel, updates_as_given=True,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SegmentScatters:
    """What a segment reduction runs under one policy (resolved): the scatter of the rows
    into the new result (whose plan's report describes a bad id), the add of ones into the
    counts where the call counts, the policy they run under, and whether the ids past the
    end are checked after a scatter that drops them (TensorFlow's rule: negative ids
    dropped, the others under ``"error"``, so the scatters run under ``"ignore"``)."""

    scatter: Route
    count: Route | None
    policy: str
    too_large: bool
    #: The engine's checked kernels of the scatter and of the count (None where the call
    #: does not count), under ``"error"`` with `too_large`, which ``_api.segment_route``
    #: tries first: ids all in ``[0, n)``, the common case, leave nothing to drop and nothing
    #: past the end to check, so the kernels' own range read is the call's only one. None
    #: where the engine has no kernel for either (``kernel_applies``: a policy that may
    #: change a valid id has none), and with `too_large` for more than
    #: :data:`_DROPPING_KERNEL_IDS` ids.
    kernels: tuple[Callable[..., Any], Callable[..., Any] | None] | None


@dataclass(frozen=True, slots=True)
class SegmentRoute:
    """What the checks of one segment reduction's signature found, for its repeat calls: the
    namespace, its engine, the number of segments, the result's shape and dtype (the data's),
    the policy as named (TensorFlow's default unresolved), the caller's promise that the ids
    never decrease (an engine may use a sorted kernel), what follows from the reduction and
    the data's dtype and shape, and the scatters it runs. Made whole, with keywords, by
    :func:`segment_call` and :func:`csr_call`, and never changed after."""

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
    #: The ids' name in messages: ``segment_ids``, or ``x`` for ``bincount``.
    ids_name: str
    #: ``deterministic=True`` on a floating sum, mean or product: the tree of
    #: ``_deterministic`` (for other dtypes and reductions every order gives the same bits).
    deterministic: bool
    #: The scatters by each policy that `policy` resolves to in a call
    #: (:meth:`scatters_for`: TensorFlow's default is ``"error"`` or ``"ignore"``, any
    #: other policy itself), made with the route for ids of the key's shape and dtype.
    scatters: Mapping[str, SegmentScatters]

    def scatters_for(self, ids: Any) -> tuple[SegmentScatters, IndexAccess]:
        """How the values of `ids` can be seen in this call, and the scatters under the policy
        that follows: TensorFlow's default resolved here, once per call."""
        access = self.engine.index_access(ids)
        return self.scatters[resolve_default(self.policy, access)], access


#: The names of the data and the ids in the messages of a function whose arguments are not
#: called ``data`` and ``segment_ids``.
_SEGMENT_ARGUMENTS = {"bincount": ("weights", "x")}


def segment_call(
    data: Any, segment_ids: Any, num_segments: object, reduce: str, indices_are_sorted: object,
    bad_indices: object, function: str, drop_negative: bool, with_count: bool,
    sorted_vector: bool = False, floating: bool = False, deterministic: object = False,
) -> tuple[SegmentRoute, Any, Any]:  # fmt: skip
    """``(route, data, ids)`` of the segment reduction `reduce`: its route, found by the
    call's key where it was seen before or made from every argument checked, and the data
    and the ids as arrays of the route's namespace. ``num_segments=None`` keys the call too:
    its count is a value of the ids, read (and its sorted ids checked) on every call, which
    picks the route of that count (:func:`_read_count_route`).

    The checks, in the scatters' order: the policy, the arrays, the ids' dtype, the data's
    dtype, the shapes, `num_segments`; then `num_segments` read from the ids where not given.
    Ids given as Python values are the gathers' (:class:`_Pair`): integers, and a value that
    no integer dtype of the data's device holds is bad under every policy, dealt with as the
    policy says (:func:`~._operands.index_array`: ``"error"`` names it as written); with
    `drop_negative` a negative one is dropped, as every negative id then is.

    With `sorted_vector` (TensorFlow's sorted ``segment_*``, whose messages name `function`)
    the ids given as Python values become an array after the dtype checks, as
    :func:`~._operands.index_array` makes them under ``"clip"`` (a value past the widest
    integer clipped into it, where it stays out of range), and the shapes start with two
    checks of their own (:func:`check_sorted_vector`): the ids are a vector, then sorted
    where their values can be read now. With `floating` integer data is refused among the
    dtypes (:func:`check_segment_dtype`).
    """
    key = kept = None
    options = _SEGMENT_KEY(
        data, segment_ids, num_segments, reduce, indices_are_sorted, bad_indices, function,
        drop_negative, with_count, sorted_vector, floating, deterministic,
    )  # fmt: skip
    if options is not None:  # (an array: checked on every call)
        key, kept = call_key(options, data, segment_ids)
    if kept is not None:  # only what the ids' values decide is left
        if num_segments is None:
            return _read_count_route(
                kept, data, segment_ids, reduce, indices_are_sorted, bad_indices, function,
                drop_negative, with_count, sorted_vector, floating, deterministic,
            )  # fmt: skip
        return kept, data, segment_ids
    named_policy = policy = normalize_policy(bad_indices)
    promises = check_promises(False, indices_are_sorted)
    tree = check_deterministic(deterministic)
    data_name, ids_name = _SEGMENT_ARGUMENTS.get(function, ("data", "segment_ids"))
    pair = _Pair(data, segment_ids, data_name, ids_name)
    data = pair.data_array()
    xp, as_values = pair.xp, pair.from_values[1]
    pair.check_index_dtype()
    check_segment_dtype(xp, reduce, data.dtype, function, floating)
    if tree and reduce not in _COMPLEX_TREES and dtype_kind(xp, data.dtype) == "complex floating":
        msg = (
            f"{function}(deterministic=True) takes real data (complex sums only: backends "
            "multiply and divide complex numbers by formulas of their own, whose last bits "
            f"differ); got data of dtype {dtype_name(data.dtype)}"
        )
        raise TypeError(msg)
    engine = engine_for(xp)
    if sorted_vector:
        if as_values:  # (no error: values clipped into the dtype, on the data's device)
            pair.indices, as_values = pair.index_array(data, engine, None, "clip"), False
        check_sorted_vector(xp, engine, pair.indices, function)
    shape, id_shape = static_shape(data, data_name), static_shape(pair.indices, ids_name)
    if shape[: len(id_shape)] != id_shape:
        msg = (
            f"{ids_name}.shape must be a leading part of {data_name}.shape; got {ids_name}.shape"
            f" = {id_shape} and {data_name}.shape = {shape}"
        )
        raise ValueError(msg)
    count = num_segments_argument(num_segments)
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
        count = read_num_segments(xp, engine, ids, engine.index_access(ids), data)
    identity = reduction_identity(xp, reduce, data.dtype)
    if drop_negative and isinstance(identity, float):  # a floating max or min: +-inf
        # TensorFlow and MindSpore start from the lowest (highest) finite value instead.
        info = xp.finfo(data.dtype)
        identity = float(info.min) if identity < 0 else float(info.max)
    route = _segment_route(
        xp, engine, data, tuple(ids.shape), ids.dtype, count_dtype=engine.wide_index_dtype(ids),
        reduce=reduce, num_segments=count, inner=shape[len(id_shape) :],
        policy=named_policy, ids_sorted=promises.indices_are_sorted, counting=with_count,
        drop_negative=drop_negative, identity=identity, ids_name=ids_name, tree=tree,
    )  # fmt: skip
    keep(key, route)
    return route, data, ids


_SEGMENT_KEY = options_key(segment_call, ("data", "segment_ids"), scalars=("num_segments",))


def _read_count_route(
    kept: SegmentRoute, data: Any, segment_ids: Any, reduce: str, indices_are_sorted: object,
    bad_indices: object, function: str, drop_negative: bool, with_count: bool,
    sorted_vector: bool, floating: bool, deterministic: object,
) -> tuple[SegmentRoute, Any, Any]:  # fmt: skip
    """:func:`segment_call`'s answer for a signature with ``num_segments=None`` whose checks
    ran before (`kept`: the route of the count that call read): the checks the ids' values
    decide, in the checked call's order (sorted, where `sorted_vector`; then the count the
    ids give), and the route of that count, which is the route of the same call with the
    count given, kept by its own key (every check it makes has passed for this signature)."""
    xp, engine = kept.xp, kept.engine
    if sorted_vector:
        check_sorted_vector(xp, engine, segment_ids, function)
    access = engine.index_access(segment_ids)
    count = read_num_segments(xp, engine, segment_ids, access, data, kept.num_segments)
    if count == kept.num_segments:
        return kept, data, segment_ids
    return segment_call(
        data, segment_ids, count, reduce, indices_are_sorted, bad_indices, function,
        drop_negative, with_count, sorted_vector, floating, deterministic,
    )  # fmt: skip


#: The most ids for which TensorFlow's rule (negative ids dropped, the others under
#: ``"error"``) tries the kernels first: a negative id is valid input there, on which a kernel
#: refuses, maybe after a pass over the rows (PyTorch checks each id as it adds its row),
#: which on a small call costs less than the steps it saves, and on a large one does not.
_DROPPING_KERNEL_IDS = 256

#: The dtype kinds that have gradients.
_DIFFERENTIABLE = ("real floating", "complex floating")

#: The segment reductions that ``deterministic=True`` orders (the others pick one row), and
#: those it orders for complex data (sums, divided by nothing the backends compute apart).
_TREE_REDUCTIONS = ("sum", "mean", "prod", "sqrt_n")
_COMPLEX_TREES = ("sum", "sqrt_n")

#: The index accesses whose policies differ for TensorFlow's default (``resolve_default``):
#: one that reads the ids' values now, and one that cannot.
_ACCESSES: tuple[IndexAccess, ...] = ("now", "none")


def _segment_route(
    xp: Any, engine: Engine, data: Any, id_shape: tuple[int, ...], id_dtype: Any, *,
    count_dtype: Any, reduce: str, num_segments: int, inner: tuple[int, ...], policy: str,
    ids_sorted: bool, counting: bool, drop_negative: bool, identity: Any, ids_name: str,
    tree: bool,
) -> SegmentRoute:  # fmt: skip
    """The :class:`SegmentRoute` of the reduction `reduce` of `data` (checked) at ids of
    `id_shape` and `id_dtype` into `num_segments` segments of shape `inner`, counting each
    segment's rows where the call does (`counting`, or a mean: into `count_dtype`, the
    widest integer of the ids' device), with the scatters of every policy that `policy`
    resolves to (:meth:`SegmentRoute.scatters_for`)."""
    dtype = data.dtype
    counting = counting or reduce in ("mean", "sqrt_n")
    division, division_dtype = ("", None)
    if reduce == "mean":
        division, division_dtype = mean_division(xp, engine, data)
    shape = (num_segments, *inner)
    floating = dtype_kind(xp, dtype) in _DIFFERENTIABLE

    def scatters_under(runs: str, too_large: bool) -> SegmentScatters:
        scatter = _scatter_into_new(
            xp, engine, shape, id_shape, id_dtype, runs, SEGMENT_SCATTERS[reduce], dtype,
            ids_sorted, ids_name,
        )  # fmt: skip
        count = None
        if counting:
            count = _scatter_into_new(
                xp, engine, (num_segments,), id_shape, id_dtype, runs, "add",
                count_dtype, ids_sorted, "segment_ids",
            )  # fmt: skip
        checked, counted = scatter, count  # (kernels serve the policies that keep valid ids)
        if too_large:
            under_error = scatters_under("error", False)
            checked, counted = under_error.scatter, under_error.count
        counter = None if counted is None else counted.kernel
        kernels = None
        if checked.kernel is not None and (counter is not None or not counting):
            if not too_large or math.prod(id_shape) <= _DROPPING_KERNEL_IDS:
                kernels = (checked.kernel, counter)
        return SegmentScatters(
            scatter=scatter, count=count, policy=runs, too_large=too_large, kernels=kernels
        )

    scatters = {}
    for resolved in dict.fromkeys(resolve_default(policy, access) for access in _ACCESSES):
        too_large = drop_negative and resolved == "error"
        scatters[resolved] = scatters_under("ignore" if too_large else resolved, too_large)
    return SegmentRoute(
        xp=xp, engine=engine, num_segments=num_segments, result_shape=shape, dtype=dtype,
        policy=policy, ids_sorted=ids_sorted, reduce=reduce, counting=counting,
        drop_negative=drop_negative, identity=identity,
        no_rows=not (math.prod(id_shape) and math.prod(inner)) and floating, division=division,
        division_dtype=division_dtype, ids_name=ids_name,
        deterministic=tree and reduce in _TREE_REDUCTIONS and floating, scatters=scatters,
    )  # fmt: skip


def _scatter_into_new(
    xp: Any, engine: Engine, shape: tuple[int, ...], id_shape: tuple[int, ...], id_dtype: Any,
    policy: str, reduce: str, dtype: Any, ids_sorted: bool, ids_name: str,
) -> Route:  # fmt: skip
    """The route of the scatter by `reduce` of rows at ids of `id_shape` and `id_dtype` into a
    new array of `shape` and `dtype` (written in place: it is new); a bad id named
    `ids_name`."""
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
    #: ``deterministic=True`` (checked): the segment reduction's floating sums in one order.
    deterministic: bool
    #: For a reduction of :data:`SEGMENT_REDUCTIONS`, the route of the segment reduction of
    #: the rows (the data viewed as ``(prod(shape[:axis + 1]), ...)``) at the ids the
    #: offsets give them, by the policy they run under: ``"unchecked"`` where every row is in
    #: a segment, ``"ignore"`` where rows in none are dropped (``_segment_csr``); else empty.
    segment_routes: Mapping[str, SegmentRoute]
    #: The call gives lengths, not offsets (a front end's: ``_plan.SegmentsGiven``); its
    #: `offsets_shape` is that of the offsets they make.
    lengths: bool

    @property
    def segments(self) -> int:
        """The number of segments of each batch."""
        return self.offsets_shape[-1] - 1


def csr_call(
    data: Any, offsets: Any, reduce: object, bad_indices: object, deterministic: object,
    counting: bool, given: SegmentsGiven | None = None,
) -> tuple[CsrRoute, Any, Any]:  # fmt: skip
    """``(route, data, offsets)`` of a ``segment_csr`` call: its route found by the call's key,
    or made from every argument checked in the one order (the options, the kinds, the
    dtypes, the shapes), with the data and the offsets as arrays of one namespace.
    `counting`: the segment reduction also counts each segment's rows (for ``empty_value``).

    A front end's `given` (:class:`~._plan.SegmentsGiven`) gives lengths instead of offsets
    (``route.lengths``: ``_segment_csr`` makes the offsets of valid ones), names the axis
    they split (checked after their dtype: :func:`~._plan.check_segments_axis`) and the
    reduction whose dtypes the data must have."""
    options = _CSR_KEY(data, offsets, reduce, bad_indices, deterministic, counting, given)
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
        offsets = pair.index_array(data, engine, None, "clip")
    else:
        offsets = pair.index_array(
            data, engine, Offsets("offsets", False, "data", shape, axis), policy
        )
    if lengths:  # (the shape of the offsets they make)
        offset_shape = (*offset_shape[:-1], offset_shape[-1] + 1)
    segment_routes = {}
    if reduce in SEGMENT_REDUCTIONS:
        # One id per row (of the data viewed as rows), in the widest integer dtype.
        count = math.prod(shape[:axis]) * (offset_shape[-1] - 1)
        check_num_segments(count, xp, engine, data, 1)
        id_shape, wide = (math.prod(shape[: axis + 1]),), engine.wide_index_dtype(offsets)
        identity = reduction_identity(xp, reduce, data.dtype)
        for runs in ("unchecked", "ignore"):
            segment_routes[runs] = _segment_route(
                xp, engine, data, id_shape, wide, count_dtype=wide, reduce=reduce,
                num_segments=count, inner=shape[axis + 1 :], policy=runs, ids_sorted=True,
                counting=counting, drop_negative=False, identity=identity,
                ids_name="segment_ids", tree=tree,
            )  # fmt: skip
    route = CsrRoute(
        xp=xp, engine=engine, reduce=reduce, policy=policy, shape=shape, axis=axis,
        offsets_shape=offset_shape, deterministic=tree, segment_routes=segment_routes,
        lengths=lengths,
    )  # fmt: skip
    keep(key, route)
    return route, data, offsets


_CSR_KEY = options_key(csr_call, ("data", "offsets"))
