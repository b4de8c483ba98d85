"""The public functions: check the arguments, plan (cached), then one straight pipeline.

Every call runs the same line: convert and check the arguments -> a data-only plan from the
shapes (``_plan``, cached) -> the engine of the namespace (``engines``) -> the policy turns
the index into valid components (``_indices``) -> one gather -> the fill of ignored slices ->
the lazy ``"error"`` check where values cannot be read now. The scatters share the first
steps (``_routes``, :func:`_engine_call`) and end in one scatter. The segment reductions
(:func:`segment_reduce`, for ``_segment``'s public functions and the front ends) are a
scatter of the rows into the reduction's identity, or the engine's own plan, then the mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._arrays import Unread, fill_array
from ._deterministic import tree_scatter, tree_segments
from ._errors import raise_first_bad
from ._indices import IndexAccess, all_in_range, judge_ranges, normalize, resolve_default, to_wide
from ._operands import check_empty_value, empty_value_kind
from ._options import SEGMENT_SCATTERS
from ._options import int_argument as _int_argument
from ._plan import (
    GatherPlan,
    plan_gather,
    plan_gather_d,
    plan_gather_nd,
    plan_take_along_axis,
)
from ._routes import (
    Operation,
    Route,
    SegmentRoute,
    SegmentScatters,
    gather_call,
    scatter_call,
    segment_call,
)
from ._types import Array, IndexLike, Policy, Reduction, Scalar
from .engines import Engine, engine_for
from .engines.scatter import ScatterPromises


@dataclass(slots=True)
class _Call:
    """One call's arguments once checked: the namespace and its engine, the arrays, the plan
    and the policy (TensorFlow's default already resolved). Not a route: it binds this call's
    arrays, and the policy and access resolved for them, to the kept route's findings, and
    is never kept."""

    xp: Any
    engine: Engine
    data: Any
    indices: Any
    plan: GatherPlan
    policy: str
    access: IndexAccess


def _engine_call(route: Route, data: Any, indices: Any) -> _Call:
    """The checked call of `route` on these arrays; where the result is not empty, with how
    the index values can be seen, and TensorFlow's default policy resolved."""
    engine, plan = route.engine, route.plan
    if plan.reads_nothing:  # nothing is read (or written), so nothing can be out of range
        return _Call(route.xp, engine, data, indices, plan, route.policy, "now")
    indices = engine.laid_out(indices)
    access = engine.index_access(indices)
    return _Call(
        route.xp, engine, data, indices, plan, resolve_default(route.policy, access), access
    )


#: The public functions, as the checks and the pipeline see them.
GATHER_ND = Operation(("params", "indices"), plan_gather_nd)
GATHER = Operation(("params", "indices"), plan_gather)
GATHER_D = Operation(("x", "index"), plan_gather_d)
TAKE_ALONG_AXIS = Operation(("x", "indices"), plan_take_along_axis)
SCATTER_ND = Operation(("params", "indices", "updates"), plan_gather_nd, "exact")
SCATTER_D = Operation(("x", "index", "src"), plan_gather_d, "block")
PUT_ALONG_AXIS = Operation(("x", "indices", "values"), plan_take_along_axis, "broadcast")


def run_gather(
    op: Operation,
    data: Any,
    indices: Any,
    arguments: tuple[Any, ...],
    bad_indices: object,
    fill_value: object,
) -> Any:
    """The pipeline every gather shares, as one straight line: the route of the checked call
    (``_routes.gather_call``: its checks run once per call signature), then the steps on
    the index values."""
    route, data, indices = gather_call(op, data, indices, arguments, bad_indices, fill_value)
    return gather_route(route, data, indices, op, arguments)


def gather_route(
    route: Route, data: Any, indices: Any, op: Operation, arguments: tuple[Any, ...]
) -> Any:
    """The steps of a checked gather (`route`, of `op` with these planner `arguments`) that
    remain: on the index values."""
    if route.kernel is not None:
        # Valid indices, the common case, cost no pass of portagather's where the backend's
        # own gather checks them (and on the host, reads them now); else the policy decides.
        result = route.kernel(data, indices)
        if result is not None:
            return result
    call = _engine_call(route, data, indices)
    plan, fill = route.plan, route.fill
    if plan.reads_nothing:
        return call.engine.empty(call.data, plan.out_shape)
    if call.engine.compiles_eager_calls and call.access == "now":
        # The fill is part of the key where it can be (a Python scalar that equals itself).
        static_fill = fill if call.policy == "ignore" and _keyable(fill) else None
        dynamic_fill = None if static_fill is not None or call.policy != "ignore" else fill
        if isinstance(dynamic_fill, Unread):
            dynamic_fill = dynamic_fill.array
        result = _compiled(call, _compiled_gather, static_fill, dynamic_fill)
        return _run(call, fill) if result is None else result
    rows = call.engine.index_block_rows(call.data, call.indices, plan)
    if rows and call.access == "now":
        return _run_in_blocks(call, fill, rows, op.planner, arguments)
    return _run(call, fill)


def run_scatter(
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
) -> Any:
    """The scatters' pipeline: the route of the checked call (``_routes.scatter_call``),
    then one scatter of the updates at the places the gather would read, under the caller's
    promises about the index (with `deterministic`, a floating add or multiply in the one
    order of ``_deterministic``)."""
    route, data, indices, updates = scatter_call(
        op, data, indices, updates, arguments, reduce, bad_indices, unique_indices,
        indices_are_sorted, deterministic,
    )  # fmt: skip
    return scatter_route(route, data, indices, updates, bool(deterministic))


def scatter_route(
    route: Route, data: Any, indices: Any, updates: Any, deterministic: bool = False
) -> Any:  # fmt: skip
    """The steps of a checked scatter (`route`) that remain: on the index values; with
    `deterministic` (the call's, checked), a floating add or multiply in the tree's order
    (``_deterministic.tree_scatter``)."""
    if deterministic:
        found = tree_scatter(route, data, indices, updates)
        if found is not None:
            return found
    return _scatter_checked(route, data, indices, updates)


def _scatter_checked(route: Route, data: Any, indices: Any, updates: Any) -> Any:
    """A checked scatter in any order: the engine's kernel, or the steps on the index values
    (the segment reductions' and the counts' scatters, which have no order to fix)."""
    if route.kernel is not None:
        # As for the gathers (run_gather): a valid index, the common case, costs no range
        # read where the backend's own scatter checks it; on a bad one, the policy decides.
        result = route.kernel(data, indices, updates)
        if result is not None:
            return result
    call = _engine_call(route, data, indices)
    return _scattered(call, updates, route.reduction, route.promises)


def _scattered(call: _Call, updates: Any, reduction: str, promises: ScatterPromises) -> Any:
    """The steps of a scatter once its call is made (its policy resolved): the pipeline's own
    answer, or one compiled computation (JAX), or :func:`_scatter`."""
    engine, plan = call.engine, call.plan
    if plan.reads_nothing:  # no update, so nothing written and nothing out of range
        return engine.copy(call.data)
    if 0 in plan.axis_sizes:  # every index is bad
        if call.policy != "ignore":
            raise IndexError(plan.report.empty_axis_text(scatter=True))
        return engine.copy(call.data)
    if engine.compiles_eager_calls and call.access == "now":
        result = _compiled(call, _compiled_scatter, (reduction, promises), updates)
        if result is not None:
            return result
    return _scatter(call, updates, reduction, promises)


def scatter_with_count(
    route: Route, counting: Route, data: Any, zeros: Any, indices: Any, updates: Any, ones: Any
) -> tuple[Any, Any]:
    """`route`'s scatter of `updates` into `data`, and how many updates each element receives
    (`counting`'s add of `ones` into `zeros` at the same index under the same policy), with
    the index's values read and made valid once for both. A valid index goes to both
    kernels as it is; where the eager call is one compiled computation (JAX) or the pipeline
    answers itself (an empty result or axis), each is its own route."""
    if route.kernel is not None and counting.kernel is not None:
        result = route.kernel(data, indices, updates)
        if result is not None:  # every index valid, so the count's kernel takes it too
            count = counting.kernel(zeros, indices, ones)
            if count is not None:
                return result, count
    plan = route.plan
    if plan.reads_nothing or 0 in plan.axis_sizes:  # the pipeline's own answers
        return (
            _scatter_checked(route, data, indices, updates),
            _scatter_checked(counting, zeros, indices, ones),
        )
    call = _engine_call(route, data, indices)  # (TensorFlow's default resolved once for both)
    engine = call.engine
    if engine.compiles_eager_calls and call.access == "now":
        counted = replace(call, data=zeros, plan=counting.plan)
        return (
            _scattered(call, updates, route.reduction, route.promises),
            _scattered(counted, ones, counting.reduction, counting.promises),
        )
    components = normalize(call.xp, engine, call.indices, plan, call.policy, call.access)
    result = engine.scatter(data, components, updates, plan, route.reduction, route.promises)
    # The count's plan differs from the scatter's only in the target's trailing axes: the
    # components (one per index value) serve both.
    count = engine.scatter(
        zeros, components, ones, counting.plan, counting.reduction, counting.promises
    )
    if components.bad is not None:
        result = engine.enforce_lazily(components.bad, call.indices, plan.report, result)
        count = engine.enforce_lazily(components.bad, call.indices, plan.report, count)
    return result, count


def segment_reduce(
    data: Any, segment_ids: Any, num_segments: object, reduce: str, *,
    indices_are_sorted: object = False, bad_indices: object = "error",
    drop_negative: bool = False, with_count: bool = False, function: str,
    sorted_vector: bool = False, floating: bool = False, deterministic: object = False,
    empty_value: object = None,
) -> Any:  # fmt: skip
    """The segment reduction `reduce` (one of :data:`SEGMENT_REDUCTIONS`, or ``"sqrt_n"``, the
    sum over its count's square root: TensorFlow's ``unsorted_segment_sqrt_n``, with
    `floating`).

    For the compat front ends: `drop_negative` drops the rows of negative ids and keeps the
    policy for ids past the end, and starts a floating max (min) from the dtype's lowest
    (highest) finite value (TensorFlow's and MindSpore's rules); `with_count` returns
    ``(result, count)``, the rows each segment received; `sorted_vector` checks, first among
    the shapes, that the ids are 1-d and, where their values can be read now, sorted
    (TensorFlow's sorted ``segment_*``: :func:`~._operands.check_sorted_vector`);
    `floating` refuses integer data among the dtypes (TensorFlow's ``sqrt_n``). `function` is
    the caller's name, for the messages (``segment_sum``, ``tf.math.unsorted_segment_max``).
    `deterministic` orders a floating sum, mean or product (``_deterministic``).
    `empty_value` is the value of an empty segment (the public functions' ``empty_value``;
    TensorFlow's sorted max and min, 0), from the count of the same ids: its kind checked
    first, its value against the result's dtype last (:func:`filled_empty`).
    """
    empty_value_kind(empty_value)
    counting = with_count or empty_value is not None
    route, data, ids = segment_call(
        data, segment_ids, num_segments, reduce, indices_are_sorted, bad_indices,
        function, drop_negative, counting, sorted_vector, floating, deterministic,
    )  # fmt: skip
    found = segment_route(route, data, ids, counting)
    if empty_value is None:
        return found
    result, count = found
    result = filled_empty(route.xp, result, count, empty_value)
    return (result, count) if with_count else result


def filled_empty(xp: Any, result: Any, count: Any, empty_value: object) -> Any:
    """`result` (one value per segment) with `empty_value` (checked against its dtype) where
    `count` (the rows per segment) is 0, by the engine (:meth:`Engine.filled_empty`)."""
    fill = check_empty_value(xp, empty_value, result.dtype)
    return engine_for(xp).filled_empty(result, count, fill)


def segment_route(route: SegmentRoute, data: Any, ids: Any, with_count: bool = False) -> Any:
    """The steps of a checked segment reduction (`route`, :func:`segment_reduce`'s or
    ``segment_csr``'s) that remain: on the ids' values, under the policy they resolve."""
    ids = route.engine.laid_out(ids)  # (Dask: no zero-size chunks, for every step below)
    scatters, access = route.scatters_for(ids)
    if route.deterministic:  # a floating sum, mean or product in one order (the mean too)
        found = tree_segments(route, scatters, access, data, ids)
        if found is not None:
            result, count = found
            if scatters.too_large:
                result = _enforce_too_large(route, scatters, access, ids, result)
            if route.reduce == "sqrt_n":
                result = route.engine.divided_by_root(result, count)
            return (result, count) if with_count else result
    planned = None
    own_plan = route.engine.segment_plan  # (Dask's by size)
    if own_plan is not None:
        planned = own_plan(
            data, ids, route.num_segments, SEGMENT_SCATTERS[route.reduce], route.identity,
            scatters.policy, scatters.scatter.plan.report, route.counting, route.ids_sorted,
        )  # fmt: skip
    too_large, init, kernels = scatters.too_large, None, scatters.kernels
    if planned is None and kernels is not None:
        init = route.engine.full(route.result_shape, route.identity, route.dtype, data)
        planned = _kernel_rows(route, kernels, scatters.count, init, data, ids)
        if planned is None and too_large:
            # A refusing kernel may have written part of it (PyTorch checks each id as it
            # adds its row), which "ignore" would keep; the other policies raise or promise.
            init = None
        too_large = too_large and planned is None  # (all ids in range: none too large)
    if planned is None:
        planned = _scatter_rows(route, scatters, data, ids, init)
    result, count = planned
    if route.no_rows:
        # The identity, kept in the autograd graph of the data (PyTorch), as the scatter of
        # rows would be, by adding the data's (empty, so zero) sum. Only floating data has
        # gradients (and PyTorch has no addition for some unsigned dtypes).
        result = result + route.xp.sum(data, dtype=data.dtype)
    if too_large:
        result = _enforce_too_large(route, scatters, access, ids, result)
    if route.reduce == "mean":
        # A traced total's divisor is gathered: one rounding under jit, as in eager calls.
        traced = route.engine.index_access(result) == "trace"
        result = route.engine.divided_mean(
            result, count, route.division, route.division_dtype, gathered=traced
        )
    elif route.reduce == "sqrt_n":
        result = route.engine.divided_by_root(result, count)
    return (result, count) if with_count else result


def _scatter_rows(
    route: SegmentRoute, scatters: SegmentScatters, data: Any, ids: Any, init: Any = None
) -> tuple[Any, Any]:  # fmt: skip
    """The rows of `data` combined into the identity at `ids` (`init`, where the caller made
    it) by ``scatters.scatter``, and where the call counts, how many rows each segment
    receives (``scatters.count``: in the namespace's widest integer dtype), from the ids
    made valid once for both; else None."""
    engine = route.engine
    if init is None:
        init = engine.full(route.result_shape, route.identity, route.dtype, data)
    if scatters.count is None:
        return _scatter_checked(scatters.scatter, init, ids, data), None
    wide = engine.wide_index_dtype(ids)
    zeros = engine.full((route.num_segments,), 0, wide, data)
    ones = route.xp.ones_like(ids, dtype=wide)
    return scatter_with_count(scatters.scatter, scatters.count, init, zeros, ids, data, ones)


def _kernel_rows(
    route: SegmentRoute, kernels: tuple[Callable[..., Any], Callable[..., Any] | None],
    counting: Route | None, init: Any, data: Any, ids: Any,
) -> tuple[Any, Any] | None:  # fmt: skip
    """:func:`_scatter_rows` into `init` (the identity) by the engine's checked `kernels`
    (``SegmentScatters.kernels``: the scatter's, and the count's where the call counts,
    `counting` its route); None where the scatter's refuses (an id not in ``[0, n)``, or
    arrays its backend does not check). The count, of ids then known to be in range, is the
    backend's own ``bincount`` where it has one (``Engine.counted``), which costs less than
    a scatter of ones; else the count's kernel, or its route where that refuses (its policy
    then changes no id)."""
    engine, (scatter, counter) = route.engine, kernels
    result = scatter(init, ids, data)
    if result is None or counting is None:
        return None if result is None else (result, None)
    count = None
    if engine.counts and ids.ndim == 1:
        count = engine.counted(ids, route.num_segments, route.num_segments, None)
    if count is None:
        wide = engine.wide_index_dtype(ids)
        zeros = engine.full((route.num_segments,), 0, wide, data)
        ones = route.xp.ones_like(ids, dtype=wide)
        count = None if counter is None else counter(zeros, ids, ones)
        if count is None:
            count = _scatter_checked(counting, zeros, ids, ones)
    return result, count


def _enforce_too_large(
    route: SegmentRoute, scatters: SegmentScatters, access: IndexAccess, ids: Any, result: Any
) -> Any:  # fmt: skip
    """``"error"`` for the ids past the end only (negative ids were dropped)."""
    report = scatters.scatter.plan.report
    xp, engine, n = route.xp, route.engine, route.num_segments
    if not math.prod(ids.shape):
        return result
    wide = to_wide(xp, ids, engine.wide_index_dtype(ids), None, False)
    if access == "now":
        if engine.value_range(wide)[1] >= n:
            raise_first_bad(xp, wide >= n, ids, report, engine.read_int)
        return result
    return engine.enforce_lazily(wide >= n, ids, report, result)


def _scatter(call: _Call, updates: Any, reduction: str, promises: ScatterPromises) -> Any:
    """The policy, one scatter and the lazy check, for a scatter that writes something."""
    engine, plan = call.engine, call.plan
    components = normalize(call.xp, engine, call.indices, plan, call.policy, call.access)
    result = engine.scatter(call.data, components, updates, plan, reduction, promises)
    if components.bad is not None:
        result = engine.enforce_lazily(components.bad, call.indices, plan.report, result)
    return result


def _compiled(call: _Call, steps: Any, option: Hashable, *arrays: Any) -> Any | None:
    """`steps` (:func:`_compiled_gather`, :func:`_compiled_scatter`) of an eager call as one
    compiled computation (``Engine.compiled``): the policy, the gather or scatter and the fill
    in one dispatch, made once per plan, policy and `option`.

    Under ``"error"`` the steps keep every read and write inside (``"clip"``), and the index
    is checked: read on the host where that is cheap (the CPU: no check to compile, which a
    first call on a new shape would pay), else inside the computation, which returns with
    the result whether every index value is in range (:func:`all_in_range`), read back
    once. None where an index is bad: the call then runs eagerly, which raises the
    IndexError that names it."""
    checking = call.policy == "error"
    if checking and call.engine.reads_cheaply(call.indices):
        if not _in_range_on_host(call.indices, call.plan):
            return None
        checking = False
    policy = "clip" if call.policy == "error" else call.policy
    static = (call.xp, call.engine, call.plan, policy, checking, option)
    result, valid = call.engine.compiled(steps, static, call.data, call.indices, *arrays)
    if valid is not None and not int(valid):
        return None
    return result


def _in_range_on_host(indices: Any, plan: GatherPlan) -> bool:
    """Whether every component of `indices` (an array whose values the host reads without a
    copy) is in range for `plan`: NumPy's minimum and maximum of each."""
    values = np.asarray(indices)
    if not plan.axis_sizes or not values.size:
        return True
    parts = [values[..., k] for k in range(plan.depth)] if plan.vector else [values]
    return judge_ranges(((int(p.min()), int(p.max())) for p in parts), plan).all_valid


def _traced(static: tuple[Any, ...], data: Any, indices: Any) -> tuple[_Call, Any]:
    """Inside :func:`_compiled`: the call on traced arrays, and whether every index value is
    in range where it is checked (else None)."""
    xp, engine, plan, policy, checking, _ = static
    call = _Call(xp, engine, data, indices, plan, policy, "trace")
    checked = checking and plan.axis_sizes and math.prod(indices.shape)
    return call, all_in_range(xp, indices, plan) if checked else None


def _compiled_gather(static: tuple[Any, ...], data: Any, indices: Any, fill: Any) -> Any:
    call, valid = _traced(static, data, indices)
    return _run(call, static[-1] if fill is None else fill), valid


def _compiled_scatter(static: tuple[Any, ...], data: Any, indices: Any, updates: Any) -> Any:
    call, valid = _traced(static, data, indices)
    reduction, promises = static[-1]
    return _scatter(call, updates, reduction, promises), valid


def _keyable(fill: Any) -> bool:
    """Whether a checked fill can key a compiled computation: a Python scalar equal to
    itself (not NaN, whose hash differs from one NaN to the next)."""
    return not isinstance(fill, Unread) and bool(fill == fill)


def _run(call: _Call, fill: Any, out: Any = None) -> Any:
    """The policy, one gather, the fill and the lazy check, for one index array (into `out`
    where the engine can write there); `fill` is what ``check_fill_value`` returned."""
    xp, engine, data, indices, plan = call.xp, call.engine, call.data, call.indices, call.plan
    if 0 in plan.axis_sizes:  # every index is bad
        if call.policy != "ignore":
            raise IndexError(plan.report.empty_axis_text())
        filled = fill_array(xp, fill, data)
        return xp.asarray(xp.broadcast_to(filled, plan.out_shape), copy=True)
    components = normalize(xp, engine, indices, plan, call.policy, call.access)
    result = engine.gather(data, components, plan, out)
    if components.keep is not None:
        keep = xp.reshape(components.keep, plan.mask_shape)
        result = engine.fill(result, keep, fill_array(xp, fill, data))
    if components.bad is not None:
        result = engine.enforce_lazily(
            components.bad, indices, plan.report, result, components.find_bad
        )
    return result


def _run_in_blocks(
    call: _Call, fill: Any, rows: int, planner: Any, arguments: tuple[Any, ...]
) -> Any:
    """:func:`_run` on blocks of `rows` index rows, each written into the result, so that no
    temporary is larger than one block (host backends, large indices).

    Index axis 0 is a result axis (after the outer axes of ``gather``) and, for the
    elementwise operations, also a data axis, sliced alike. A bad index under ``"error"``
    reruns the whole call, so that the message names its position in the whole index.
    """
    xp, data, indices, plan = call.xp, call.data, call.indices, call.plan
    out = xp.empty(plan.out_shape, dtype=data.dtype)
    out_axis = plan.axis - plan.batch_dims if plan.kind == "axes" else 0
    slice_data = plan.kind == "along" and plan.axis != 0 and data.shape[0] != 1
    lead = (slice(None),) * out_axis
    plans: dict[tuple[Any, ...], GatherPlan] = {}  # every block's but the last is one plan
    for start in range(0, indices.shape[0], rows):
        block = slice(start, start + rows)
        data_block = data[block] if slice_data else data
        index_block = indices[block]
        shapes = (tuple(data_block.shape), tuple(index_block.shape))
        block_plan = plans.get(shapes)
        if block_plan is None:
            block_plan = plans[shapes] = planner(*shapes, *arguments)
        block_call = replace(call, data=data_block, indices=index_block, plan=block_plan)
        out_block = out[tuple([*lead, block])]
        try:
            part = _run(block_call, fill, out_block)
        except IndexError:
            return _run(call, fill)
        if part is not out_block:
            out_block[...] = part
    return out


def gather_nd(
    params: Array,
    indices: Array | IndexLike,
    *,
    batch_dims: int = 0,
    bad_indices: Policy = "error",
    fill_value: Scalar = 0,
) -> Array:
    """Gather slices of `params` addressed by index vectors, like ``tf.gather_nd``.

    The index vectors lie along the last axis of `indices`; each selects the slice
    ``params[β, *indices[β, i]]`` (``β`` runs over the `batch_dims` leading axes shared by both
    arrays).

    Parameters
    ----------
    params : array
        The data, of rank ``r``.
    indices : array of integers, or nested lists of ints
        Rank ``q >= 1``; ``K = indices.shape[-1]`` is the index depth, with
        ``batch_dims + K <= r``. Each component ``j`` is valid in ``[0, params.shape[b + j])``;
        a negative component is a bad index, as in TensorFlow.
    batch_dims : int, optional
        Number of leading axes that `params` and `indices` share, ``0 <= batch_dims < q``.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        What a bad index vector does (TensorFlow's ``""``, ``"DEFAULT"``, ``"ERROR"`` and
        ``"IGNORE"`` are accepted too). ``"ignore"`` fills the whole output slice of a bad
        vector with `fill_value`.
    fill_value : scalar, optional
        Value of ignored slices; 0 means the zero of params' dtype.

    Returns
    -------
    array
        Shape ``params.shape[:b] + indices.shape[b:-1] + params.shape[b + K:]``, with params'
        namespace, dtype and device.

    Raises
    ------
    TypeError
        For a non-integer `indices` or arrays of two namespaces.
    ValueError
        For ranks, `batch_dims`, index depth or batch shapes that do not fit, or an unknown
        policy.
    IndexError
        For a bad index vector under ``"error"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.gather_nd(np.array([["a", "b"], ["c", "d"]]), [[0, 0], [1, 1]])
    array(['a', 'd'], dtype='<U1')
    >>> params = np.arange(12).reshape(2, 3, 2)
    >>> pg.gather_nd(params, [[2], [0]], batch_dims=1)
    array([[4, 5],
           [6, 7]])
    >>> pg.gather_nd(params, [[1, 5]], bad_indices="ignore", fill_value=-1)
    array([[-1, -1]])
    """
    return run_gather(  # type: ignore[no-any-return]
        GATHER_ND, params, indices, (_int_argument(batch_dims, "batch_dims"),), bad_indices,
        fill_value,
    )  # fmt: skip


def gather(
    params: Array,
    indices: Array | IndexLike,
    *,
    axis: int | None = None,
    batch_dims: int = 0,
    bad_indices: Policy = "error",
    fill_value: Scalar = 0,
) -> Array:
    """Gather slices of `params` along `axis`, like ``tf.gather``.

    Parameters
    ----------
    params : array
        The data, of rank ``r >= 1``.
    indices : array of integers, nested lists of ints, or an int
        Valid values are ``[0, params.shape[axis])``. 0-d indices remove the axis.
    axis : int, optional
        The gathered axis of `params`; negative counts from the end. Defaults to
        `batch_dims` as given (so ``batch_dims=-1`` means ``axis=-1``, as in TensorFlow).
        ``batch_dims <= axis`` after both are normalised.
    batch_dims : int, optional
        Number of leading axes that `params` and `indices` share; a negative value has
        ``indices.ndim`` added.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        See :func:`gather_nd`.
    fill_value : scalar, optional
        Value of ignored slices; 0 means the zero of params' dtype.

    Returns
    -------
    array
        Shape ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> params = np.array([[10, 11, 12], [20, 21, 22]])
    >>> pg.gather(params, [2, 0], axis=1)
    array([[12, 10],
           [22, 20]])
    >>> pg.gather(params, [[1], [2]], axis=1, batch_dims=1)
    array([[11],
           [22]])
    >>> pg.gather(params, [0, 7], axis=1, bad_indices="clip")
    array([[10, 12],
           [20, 22]])
    """
    axis = None if axis is None else _int_argument(axis, "axis")
    return run_gather(  # type: ignore[no-any-return]
        GATHER, params, indices, (axis, _int_argument(batch_dims, "batch_dims")), bad_indices,
        fill_value,
    )  # fmt: skip


def gather_d(
    x: Array,
    dim: int,
    index: Array | IndexLike,
    *,
    bad_indices: Policy = "error",
    fill_value: Scalar = 0,
) -> Array:
    """Gather elements of `x` along `dim`, like MindSpore's ``GatherD`` and ``torch.gather``.

    ``out[i] = x[i_0, ..., index[i], ..., i_{n-1}]`` with ``index[i]`` in place of ``i_dim``.

    Parameters
    ----------
    x : array
        The data.
    dim : int
        The gathered axis, ``-x.ndim <= dim < x.ndim``.
    index : array of integers, or nested lists of ints
        Same rank as `x`; ``index.shape[d] <= x.shape[d]`` for every ``d != dim`` (a smaller
        index reads the leading block; nothing is broadcast). Valid values are ``[-n, n)``
        with ``n = x.shape[dim]``; negatives count from the end.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        See :func:`gather_nd`; ``"clip"`` and ``"wrap"`` count negatives from the end first.
    fill_value : scalar, optional
        Value of ignored elements; 0 means the zero of x's dtype.

    Returns
    -------
    array
        Shape ``index.shape``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.gather_d(np.array([[1, 2], [3, 4]]), 1, [[0, 0], [1, 0]])
    array([[1, 1],
           [4, 3]])
    >>> pg.gather_d(np.array([[1, 2], [3, 4]]), 1, [[-1], [-2]])
    array([[2],
           [3]])
    """
    return run_gather(  # type: ignore[no-any-return]
        GATHER_D, x, index, (_int_argument(dim, "dim"),), bad_indices, fill_value
    )


def take_along_axis(
    x: Array,
    indices: Array | IndexLike,
    /,
    *,
    axis: int = -1,
    bad_indices: Policy = "error",
    fill_value: Scalar = 0,
) -> Array:
    """Take values of `x` along `axis` at `indices`, like the array API's ``take_along_axis``.

    Provided for backends that lack it (Dask) and so that every backend gets the same
    bad-index policies.

    Parameters
    ----------
    x : array
        The data.
    indices : array of integers, or nested lists of ints
        Same rank as `x`; the two broadcast against each other on every axis but `axis`.
        Valid values are ``[-n, n)`` with ``n = x.shape[axis]``; negatives count from the end.
    axis : int, optional
        The gathered axis, ``-x.ndim <= axis < x.ndim``.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        See :func:`gather_nd`.
    fill_value : scalar, optional
        Value of ignored elements; 0 means the zero of x's dtype.

    Returns
    -------
    array
        The broadcast shape of `x` and `indices`, with ``indices.shape[axis]`` along `axis`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> x = np.array([[10, 30, 20], [60, 40, 50]])
    >>> pg.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    array([[10, 20, 30],
           [40, 50, 60]])
    >>> pg.take_along_axis(x, [[0], [-1]], axis=1)
    array([[10],
           [50]])
    """
    return run_gather(  # type: ignore[no-any-return]
        TAKE_ALONG_AXIS, x, indices, (_int_argument(axis, "axis"),), bad_indices, fill_value
    )


def scatter_nd(
    params: Array,
    indices: Array | IndexLike,
    updates: Array | Any,
    *,
    batch_dims: int = 0,
    reduce: Reduction = "update",
    bad_indices: Policy = "error",
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    deterministic: bool = False,
) -> Array:
    """`params` with `updates` written at index vectors, like TensorFlow's
    ``tensor_scatter_nd_update`` / ``_add`` / ``_min`` / ``_max``: the inverse of
    :func:`gather_nd`.

    Parameters
    ----------
    params : array
        The data, of rank ``r``; never modified.
    indices : array of integers, or nested lists of ints
        As in :func:`gather_nd`: index vectors along the last axis.
    updates : array, or values
        Shape ``indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]`` (with the
        batch axes first: the shape :func:`gather_nd` would return), of a dtype that casts
        safely to params'.
    batch_dims : int, optional
        As in :func:`gather_nd`.
    reduce : {"update", "add", "multiply", "min", "max"}, optional
        How an update combines with the element: ``"update"`` replaces it (with duplicate
        vectors, the last update in row-major order wins); the others combine every update to
        the element with its value.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        As in :func:`gather_nd`; ``"ignore"`` drops the updates of bad vectors.
    unique_indices : bool, optional
        A promise, as in JAX's ``.at[]``: no two updates land on one element (after the
        policy). ``"update"`` then skips resolving which duplicate wins. Broken, an element
        that several updates land on holds one of them (unspecified which), or under a
        reduction its value combined with one or more of them; nothing is ever written
        outside the array.
    indices_are_sorted : bool, optional
        A promise, as in JAX's ``.at[]``: within each batch the index vectors never
        decrease (lexicographically). JAX passes it on to XLA; the other backends have no
        sorted kernel and compute the same result without it. Broken, the elements the
        updates land on hold unspecified values (under ``"update"``, their own or one of
        those updates); every other element keeps its value.
    deterministic : bool, optional
        With ``"add"`` or ``"multiply"`` on floating data: the updates of each element are
        combined in one order fixed by the index alone, a pairwise tree over their positions
        in the updates (row-major; docs/deterministic.md), then combined with the element's
        value (``out = x op tree``), so the result has the same bits on every backend and in
        every run; float16 and bfloat16 in float32, rounded once.

    Returns
    -------
    array
        A new array of params' shape, dtype, namespace and device.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.scatter_nd(np.zeros(4, dtype=int), [[1], [3], [1]], [5, 6, 7])
    array([0, 7, 0, 6])
    >>> pg.scatter_nd(np.zeros(4, dtype=int), [[1], [3], [1]], [5, 6, 7], reduce="add")
    array([ 0, 12,  0,  6])
    >>> pg.scatter_nd(np.ones((2, 2)), [[0, 1], [5, 0]], [9.0, 8.0], bad_indices="ignore")
    array([[1., 9.],
           [1., 1.]])
    """
    return run_scatter(  # type: ignore[no-any-return]
        SCATTER_ND, params, indices, updates, (_int_argument(batch_dims, "batch_dims"),),
        reduce, bad_indices, unique_indices, indices_are_sorted, deterministic,
    )  # fmt: skip


def scatter_d(
    x: Array,
    dim: int,
    index: Array | IndexLike,
    src: Array | Any,
    *,
    reduce: Reduction = "update",
    bad_indices: Policy = "error",
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    deterministic: bool = False,
) -> Array:
    """`x` with `src` written along `dim` at `index`, like ``torch.scatter`` /
    ``scatter_reduce``, MindSpore's ``TensorScatterElements`` and ONNX ``ScatterElements``:
    the inverse of :func:`gather_d`.

    ``out[i_0, ..., index[i], ..., i_{n-1}] = src[i]`` with ``index[i]`` in place of ``i_dim``.

    Parameters
    ----------
    x : array
        The data; never modified.
    dim : int
        The scattered axis, ``-x.ndim <= dim < x.ndim``.
    index : array of integers, or nested lists of ints
        As in :func:`gather_d`: same rank as `x`, ``index.shape[d] <= x.shape[d]`` for
        ``d != dim``; values in ``[-n, n)``, negatives counting from the end.
    src : array, or values
        Same rank, at least ``index.shape`` on every axis; its leading ``index.shape`` block
        is scattered (as in ``torch.scatter``).
    reduce, bad_indices : str, optional
        See :func:`scatter_nd`.
    unique_indices, indices_are_sorted, deterministic : bool, optional
        Promises about the index, as in :func:`scatter_nd`. Sorted means that the targets
        ``(i_0, ..., index[i], ..., i_{n-1})``, in row-major order of `index`, never decrease
        in row-major order of `x` (along the last axis: each row of `index` sorted).
        `deterministic` as in :func:`scatter_nd`.

    Returns
    -------
    array
        A new array of x's shape and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.scatter_d(np.zeros((2, 3), dtype=int), 1, [[2, 0], [-1, 1]], [[1, 2], [3, 4]])
    array([[2, 0, 1],
           [0, 4, 3]])
    >>> pg.scatter_d(np.zeros(3, dtype=int), 0, [0, 0, 2], [1, 2, 3], reduce="add")
    array([3, 0, 3])
    """
    return run_scatter(  # type: ignore[no-any-return]
        SCATTER_D, x, index, src, (_int_argument(dim, "dim"),), reduce, bad_indices,
        unique_indices, indices_are_sorted, deterministic,
    )  # fmt: skip


def put_along_axis(
    x: Array,
    indices: Array | IndexLike,
    values: Array | Any,
    /,
    *,
    axis: int = -1,
    reduce: Reduction = "update",
    bad_indices: Policy = "error",
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    deterministic: bool = False,
) -> Array:
    """`x` with `values` written along `axis` at `indices`, like ``numpy.put_along_axis`` but
    returning a new array: the inverse of :func:`take_along_axis`.

    Parameters
    ----------
    x : array
        The data; never modified.
    indices : array of integers, or nested lists of ints
        As in :func:`take_along_axis`: same rank as `x`, broadcasting against it on every
        axis but `axis`; values in ``[-n, n)``.
    values : array, or values
        Broadcast to the shape :func:`take_along_axis` would return.
    axis : int, optional
        The axis written along, ``-x.ndim <= axis < x.ndim``.
    reduce, bad_indices : str, optional
        As in :func:`scatter_nd`: how updates combine, and what a bad index does.
    unique_indices, indices_are_sorted, deterministic : bool, optional
        Promises about the index, as in :func:`scatter_nd`. Sorted means that the targets,
        in row-major order of the values (broadcast), never decrease in row-major order of
        `x` (along the last axis: each row of `indices` sorted). `deterministic` as in
        :func:`scatter_nd`.

    Returns
    -------
    array
        A new array of x's shape, dtype, namespace and device.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> x = np.array([[10, 30, 20], [60, 40, 50]])
    >>> pg.put_along_axis(x, np.argmax(x, axis=1, keepdims=True), 0, axis=1)
    array([[10,  0, 20],
           [ 0, 40, 50]])
    """
    return run_scatter(  # type: ignore[no-any-return]
        PUT_ALONG_AXIS, x, indices, values, (_int_argument(axis, "axis"),), reduce, bad_indices,
        unique_indices, indices_are_sorted, deterministic,
    )  # fmt: skip
