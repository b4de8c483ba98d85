"""Segment reductions: ``segment_sum`` / ``_mean`` / ``_max`` / ``_min`` / ``_prod``, on the
scatters' plans, policies and engines.

A segment reduction is a scatter: ``segment_sum(data, ids, n)`` is ``scatter_nd`` into an
array of shape ``(n,) + data.shape[ids.ndim:]`` filled with the reduction's identity, with
``ids[..., None]`` as the index vectors and `data` as the updates. So every call here, once
its arguments are checked (once per call signature: ``_routes``), runs the scatter's steps
(``_api.scatter_route``) with :func:`plan_segments`, the plan of ``gather(result, ids,
axis=0)`` whose bad index is described as a segment id; nothing here reads or writes an array
element by element, and each engine runs the scatter its own way. The mean is the sum over a
count, an add of ones at the same ids made valid once for both (``scatter_with_count``).

The CSR form ``segment_csr`` is in ``_segment_csr``.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from ._api import scatter_route, scatter_with_count
from ._arguments import _Pair
from ._arrays import dtype_kind, dtype_name, reduction_identity, static_shape
from ._errors import BadIndex, raise_first_bad
from ._indices import normalize_policy, resolve_default, to_wide
from ._plan import GatherPlan, plan_gather
from ._routes import Route, call_key, find, keep, kernel_applies
from ._scatter import check_promises, check_reduce_dtype, reducible_kinds, reduction_for
from .engines import Engine, engine_for

#: The segment reductions, by the name in ``segment_<name>``.
SEGMENT_REDUCTIONS = ("sum", "mean", "max", "min", "prod")

#: The dtype kinds that have gradients.
_DIFFERENTIABLE = ("real floating", "complex floating")

#: The scatter reduction behind each segment reduction (the mean is a sum over a count).
_SCATTER = {"sum": "add", "mean": "add", "max": "max", "min": "min", "prod": "multiply"}


@dataclass(frozen=True)
class SegmentIds(BadIndex):
    """A bad segment id: ``segment_ids[3] = 7 is out of range [0, 4) (num_segments = 4)``.

    `data_shape` is the result's shape, whose axis 0 has ``num_segments`` entries.
    """

    def valid_range_text(self) -> str:
        n = self.data_shape[0]
        return f"is out of range [0, {n}) (num_segments = {n})"

    def empty_axis_text(self, scatter: bool = False) -> str:  # noqa: ARG002 (always a scatter)
        return (
            f"num_segments = 0, so every value of {self.index_name} is out of range; only "
            'bad_indices="ignore" (which drops every row) accepts that'
        )


@lru_cache(maxsize=512)
def plan_segments(shape: tuple[int, ...], index_shape: tuple[int, ...]) -> GatherPlan:
    """The plan of a segment reduction into a result of `shape` (``(num_segments,) +
    inner``) at ids of `index_shape`: ``gather(result, ids, axis=0)``'s, whose result has the
    data's shape, with a bad index described as a segment id."""
    plan = plan_gather(shape, index_shape, 0, 0)
    return replace(plan, report=SegmentIds("segment_ids", False, "the result", shape, 0))


def _num_segments_argument(value: object) -> int | None:
    """`num_segments` as a Python int >= 0, or None (read from the ids)."""
    if value is None:
        return None
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


def check_num_segments(
    count: int, xp: Any, engine: Engine, data: Any, id_rank: int, name: str = "num_segments"
) -> None:
    """A ValueError for a `num_segments` (given, as the Python int `count`) that no array of
    the data's device can hold: more than the widest integer of that device (int64; int32 on
    JAX without x64), or more result rows than ``2**63 - 1`` bytes hold (NumPy's and
    PyTorch's limit on an array's size), counting each row at least 8 bytes (the count of
    the mean, the sorts' positions)."""
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


def _itemsize(dtype: Any) -> int:
    """The bytes of one element of `dtype` (8 where no library says)."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    try:
        return int(np.dtype(dtype_name(dtype)).itemsize)
    except TypeError:
        return 8


def check_dtype(xp: Any, reduce: str, dtype: Any, function: str) -> None:
    """The scatters' dtype rule (:func:`~._scatter.reduction_for`) for the reduction's
    scatter: numbers for every reduction (NumPy's ``bfloat16`` too), but no complex numbers
    for ``max`` and ``min``; bool for ``max`` and ``min`` (any, all), not for the sum, the
    mean and the product, whose results are no bools."""
    bools = reduce in ("max", "min")
    if reduction_for(xp, _SCATTER[reduce], dtype) is not None and (
        bools or dtype_kind(xp, dtype) != "bool"
    ):
        return
    kinds = reducible_kinds(_SCATTER[reduce], bools)
    msg = f"{function} needs data of {kinds} dtype; got {dtype_name(dtype)}"
    raise TypeError(msg)


def _unsigned_wide(xp: Any) -> Any:
    """The widest unsigned integer dtype of the namespace (uint32 on JAX without x64)."""
    try:
        found = xp.__array_namespace_info__().dtypes(kind="unsigned integer")
    except AttributeError:
        return xp.uint64
    return found.get("uint64", found.get("uint32"))


@dataclass
class _Call:
    """One segment reduction's checked arguments."""

    xp: Any
    engine: Engine
    data: Any
    ids: Any
    num_segments: int
    policy: str
    access: Any
    #: The caller's promise that the ids never decrease (an engine may use a sorted kernel).
    ids_sorted: bool
    #: The scatters' routes (and the identity) found for this call's signature, by what they
    #: are for: shared by its repeat calls (:class:`_Kept`), so each is made once.
    routes: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    @property
    def result_shape(self) -> tuple[int, ...]:
        return (self.num_segments, *self.data.shape[self.ids.ndim :])


def _prepare(
    data: Any, segment_ids: Any, num_segments: object, reduce: str, indices_are_sorted: object,
    bad_indices: object, function: str, drop_negative: bool = False,
) -> _Call:  # fmt: skip
    """The checks, in the scatters' order: the policy, the arrays, the ids' dtype, the data's
    dtype, the shapes, `num_segments`; then `num_segments` read from the ids where not given.

    Ids given as Python values are the gathers' (``_arguments._Pair``): integers, and a value
    that no integer dtype of the data's device holds is bad under every policy, dealt with
    as the policy says (``_arguments._fitted_index``: ``"error"`` names it as written), with
    `drop_negative` a negative one is dropped, as every negative id then is.
    """
    policy = normalize_policy(bad_indices)
    promises = check_promises(False, indices_are_sorted)
    pair = _Pair(data, segment_ids, "data", "segment_ids")
    data = pair.data_array()
    xp, as_values = pair.xp, pair.from_values[1]
    pair.check_index_dtype()
    check_dtype(xp, reduce, data.dtype, function)
    shape, id_shape = static_shape(data, "data"), static_shape(pair.indices, "segment_ids")
    if shape[: len(id_shape)] != id_shape:
        msg = (
            f"segment_ids.shape must be a leading part of data.shape; got segment_ids.shape = "
            f"{id_shape} and data.shape = {shape}"
        )
        raise ValueError(msg)
    count = _num_segments_argument(num_segments)
    engine = engine_for(xp)
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
        plan = plan_segments((count, *shape[len(id_shape) :]), id_shape)
        ids = pair.index_array(data, plan, policy)
    else:
        ids = pair.indices
    ids = engine.index_array(ids)
    access = engine.index_access(ids)
    if count is None:
        count = _read_num_segments(xp, engine, ids, access)
    policy = resolve_default(policy, access)
    return _Call(xp, engine, data, ids, count, policy, access, promises.indices_are_sorted)


def _read_num_segments(xp: Any, engine: Engine, ids: Any, access: Any) -> int:
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


@dataclass(frozen=True, slots=True)
class _Kept:
    """What the checks of one segment reduction's signature found, for its repeat calls
    (``_routes``): the namespace, its engine, the number of segments, the policy as named
    (TensorFlow's default unresolved) and the promise of sorted ids."""

    xp: Any
    engine: Engine
    num_segments: int
    policy: str
    ids_sorted: bool
    #: :attr:`_Call.routes` of the calls of this signature.
    routes: dict[tuple[Any, ...], Any]


def _repeat_call(kept: _Kept, data: Any, segment_ids: Any) -> _Call:
    """The checked call of a signature seen before: only what the ids' values decide."""
    engine = kept.engine
    ids = engine.index_array(segment_ids)
    access = engine.index_access(ids)
    policy = resolve_default(kept.policy, access)
    return _Call(
        kept.xp, engine, data, ids, kept.num_segments, policy, access, kept.ids_sorted,
        kept.routes,
    )  # fmt: skip


def _scatter(call: _Call, init: Any, updates: Any, reduce: str, policy: str) -> Any:
    """`updates` combined by `reduce` into `init` at the segment ids, under `policy`: the
    scatter's own steps on arguments checked already (the reduction's dtype, the shapes)."""
    return scatter_route(_route(call, init, reduce, policy), init, call.ids, updates)


def _route(call: _Call, target: Any, reduce: str, policy: str) -> Route:
    """The route of the scatter by `reduce` into `target` (the result, or the count) under
    `policy`, found once per call signature."""
    key = (reduce, policy, target.dtype, target.shape)
    route = call.routes.get(key)
    if route is None:
        route = call.routes[key] = _scatter_route(
            call.xp, call.engine, tuple(target.shape), tuple(call.ids.shape), call.ids.dtype,
            policy, reduce, target.dtype, call.ids_sorted,
        )  # fmt: skip
    return route


@lru_cache(maxsize=512)
def _scatter_route(
    xp: Any, engine: Engine, shape: tuple[int, ...], id_shape: tuple[int, ...], id_dtype: Any,
    policy: str, reduce: str, dtype: Any, ids_sorted: bool,
) -> Route:  # fmt: skip
    """The scatter's route into a new result of `shape` at ids of `id_shape`."""
    reduction = check_reduce_dtype(xp, reduce, dtype, "data")
    plan, promises = plan_segments(shape, id_shape), check_promises(False, ids_sorted)
    kernel = None
    if kernel_applies(engine, plan, policy):  # the result is new: written in place
        kernel = engine.checked_scatter(
            plan, id_shape, id_dtype, reduction, promises, policy, in_place=True
        )
    return Route(xp, engine, plan, policy, 0, reduction, promises, kernel)


def _scatter_with_count(call: _Call, init: Any, reduce: str, policy: str) -> tuple[Any, Any]:
    """The data combined by `reduce` into `init` at the segment ids under `policy`, and how
    many rows each segment receives (in the namespace's widest integer dtype), from the ids
    made valid once for both."""
    xp, wide = call.xp, call.engine.wide_index_dtype(call.ids)
    zeros = call.engine.full((call.num_segments,), 0, wide, call.data)
    ones = xp.ones_like(call.ids, dtype=wide)
    route, counting = _route(call, init, reduce, policy), _route(call, zeros, "add", policy)
    return scatter_with_count(route, counting, init, zeros, call.ids, call.data, ones)


def _mean(call: _Call, total: Any, count: Any) -> Any:
    """`total` over `count` (broadcast along the inner axes); 0 where nothing was counted.
    Integers are floor-divided (as ``//``) in the widest signed integer dtype (the widest
    unsigned one for those it cannot hold); float16 and bfloat16 are divided in float32."""
    xp, dtype = call.xp, call.data.dtype
    count = xp.maximum(count, xp.ones_like(count))
    count = xp.reshape(count, (call.num_segments,) + (1,) * (total.ndim - 1))
    # Of the total's shape: XLA turns a division by a broadcast divisor into a product with
    # its reciprocal, which is not rounded once (5 / 3 in float32 gives 1.6666667).
    count = xp.broadcast_to(count, tuple(total.shape))
    if dtype_kind(xp, dtype) in ("signed integer", "unsigned integer"):
        wide = call.engine.wide_index_dtype(total)
        if int(xp.iinfo(dtype).max) > int(xp.iinfo(wide).max):  # uint64 (uint32 on 32-bit JAX)
            wide = _unsigned_wide(xp)
        quotient = xp.floor_divide(xp.astype(total, wide), xp.astype(count, wide))
        return xp.astype(quotient, dtype)
    if dtype_name(dtype) in ("float16", "bfloat16"):
        return xp.astype(xp.astype(total, xp.float32) / xp.astype(count, xp.float32), dtype)
    return total / xp.astype(count, dtype)


def segment_reduce(
    data: Any, segment_ids: Any, num_segments: object, reduce: str, *,
    indices_are_sorted: object = False, bad_indices: object = "error",
    drop_negative: bool = False, with_count: bool = False, function: str | None = None,
) -> Any:  # fmt: skip
    """The segment reduction `reduce` (one of :data:`SEGMENT_REDUCTIONS`).

    For the compat front ends: `drop_negative` drops the rows of negative ids and keeps the
    policy for ids past the end (TensorFlow's and MindSpore's rule); `with_count` returns
    ``(result, count)``, the rows each segment received.
    """
    function = function or f"segment_{reduce}"
    key = None
    if num_segments is not None:  # else read from the ids on every call
        options = (reduce, type(num_segments), num_segments, type(indices_are_sorted),
                   indices_are_sorted, type(bad_indices), bad_indices, drop_negative,
                   with_count, function)  # fmt: skip
        key = call_key(options, data, segment_ids)
    kept = find(key)
    if kept is None:
        call = _prepare(
            data, segment_ids, num_segments, reduce, indices_are_sorted, bad_indices, function,
            drop_negative,
        )  # fmt: skip
        policy = normalize_policy(bad_indices)
        kept = _Kept(call.xp, call.engine, call.num_segments, policy, call.ids_sorted, call.routes)
        keep(key, kept)
    else:
        call = _repeat_call(kept, data, segment_ids)
    xp, policy = call.xp, call.policy
    check_too_large = drop_negative and policy == "error"
    if check_too_large:
        policy = "ignore"
    empty = call.routes.get(("identity", reduce))
    if empty is None:
        empty = call.routes["identity", reduce] = reduction_identity(xp, reduce, call.data.dtype)
    init = call.engine.full(call.result_shape, empty, call.data.dtype, call.data)
    counting = reduce == "mean" or with_count
    report = call.routes.get(("report",))
    if report is None:
        report = call.routes["report",] = plan_segments(
            call.result_shape, tuple(call.ids.shape)
        ).report
    planned = call.engine.segment_reduce(
        call.data, call.ids, call.num_segments, _SCATTER[reduce], empty, policy, report,
        counting=counting, ids_sorted=call.ids_sorted,
    )  # fmt: skip
    if planned is not None:  # the engine's own plan (Dask: by size)
        result, count = planned
    elif counting:
        result, count = _scatter_with_count(call, init, _SCATTER[reduce], policy)
    else:
        result, count = _scatter(call, init, call.data, _SCATTER[reduce], policy), None
    if not math.prod(call.data.shape) and dtype_kind(xp, call.data.dtype) in _DIFFERENTIABLE:
        # No rows: the identity, kept in the autograd graph of the data (PyTorch), as the
        # scatter of rows would be, by adding the data's (empty, so zero) sum. Only floating
        # data has gradients (and PyTorch has no addition for some unsigned dtypes).
        result = result + xp.sum(call.data, dtype=call.data.dtype)
    if reduce == "mean":
        result = _mean(call, result, count)
    if check_too_large:
        result = _enforce_too_large(call, result)
    return (result, count) if with_count else result


def _enforce_too_large(call: _Call, result: Any) -> Any:
    """``"error"`` for the ids past the end only (negative ids were dropped)."""
    xp, engine, ids = call.xp, call.engine, call.ids
    if not math.prod(ids.shape):
        return result
    report = plan_segments(call.result_shape, tuple(ids.shape)).report
    wide = to_wide(xp, ids, engine.wide_index_dtype(ids), None, False)
    if call.access == "now":
        if engine.value_range(wide)[1] >= call.num_segments:
            raise_first_bad(xp, wide >= call.num_segments, ids, report, engine.read_int)
        return result
    return engine.enforce_lazily(wide >= call.num_segments, ids, report, result)


# The public functions.

_SEGMENT_PARAMETERS = """
    Parameters
    ----------
    data : array
        The rows to reduce, of a numeric dtype{real}.
    segment_ids : array of integers, or nested lists of ints
        The segment of each row: its shape is a leading part of ``data.shape`` (as in
        TensorFlow's ``unsorted_segment_*``), so each id takes the slice
        ``data[i_0, ..., i_k]`` of the remaining axes. Valid ids are ``[0, num_segments)``.
    num_segments : int, optional
        The number of segments, the result's length. None means ``max(segment_ids) + 1``,
        read when the function is called: under ``jax.jit`` (and other JAX
        transformations), on Dask and on symbolic ndonnx arrays it must be given.
    indices_are_sorted : bool, optional
        A promise, as in JAX, that the ids are sorted (non-decreasing), which lets an engine
        use a sorted kernel. With an unsorted id under the promise the result is unspecified,
        but nothing outside the arrays is read or written.
    bad_indices : {{"error", "ignore", "clip", "wrap", "unchecked"}}, optional
        What an id outside ``[0, num_segments)`` does: ``"error"`` raises ``IndexError``
        naming it (eagerly, when a Dask result is computed, under ``checkify``);
        ``"ignore"`` drops its row (TensorFlow's rule for negative ids); ``"clip"`` and
        ``"wrap"`` move it into range; ``"unchecked"`` promises there is none.

    Returns
    -------
    array
        Shape ``(num_segments,) + data.shape[segment_ids.ndim:]``, with data's namespace,
        dtype and device. {empty}
"""


def _docstring(summary: str, empty: str, examples: str, real: bool = False) -> str:
    real_text = " (real: no complex), or bool (the max is any, the min all)"
    parameters = _SEGMENT_PARAMETERS.format(real=real_text if real else "", empty=empty)
    imports = "    >>> import numpy as np\n    >>> import portagather as pg\n"
    return f"{summary}\n{parameters}\n    Examples\n    --------\n{imports}{examples}"


class _SegmentFunction(Protocol):
    def __call__(
        self, data: Any, segment_ids: Any, num_segments: int | None = None, *,
        indices_are_sorted: bool = False, bad_indices: Any = "error",
    ) -> Any: ...  # fmt: skip


def _segment_function(reduce: str, doc: str) -> _SegmentFunction:
    """``segment_<reduce>``: :func:`segment_reduce` with `reduce`, documented by `doc`."""

    def function(
        data: Any, segment_ids: Any, num_segments: int | None = None, *,
        indices_are_sorted: bool = False, bad_indices: Any = "error",
    ) -> Any:  # fmt: skip
        return segment_reduce(
            data, segment_ids, num_segments, reduce, indices_are_sorted=indices_are_sorted,
            bad_indices=bad_indices,
        )  # fmt: skip

    function.__name__ = function.__qualname__ = f"segment_{reduce}"
    function.__doc__ = doc
    return function


segment_sum = _segment_function(
    "sum",
    _docstring(
        "The sum of the rows of `data` in each segment, like ``jax.ops.segment_sum`` and\n"
        "    ``tf.math.unsorted_segment_sum``: ``out[s] = sum(data[i] for i where segment_ids[i]"
        " == s)``.",
        "An empty segment is 0.",
        """    >>> pg.segment_sum(np.array([1, 2, 3, 4]), [0, 0, 2, 0])
    array([7, 0, 3])
    >>> pg.segment_sum(np.ones((3, 2)), [1, 1, 0], num_segments=3)
    array([[1., 1.],
           [2., 2.],
           [0., 0.]])
    >>> pg.segment_sum(np.array([1, 2, 3]), [0, -1, 1], 2, bad_indices="ignore")
    array([1, 3])
""",
    ),
)

segment_mean = _segment_function(
    "mean",
    _docstring(
        "The mean of the rows of `data` in each segment (their sum over their count).\n\n"
        "    Integer data is floor-divided (as ``//``, and PyTorch's ``index_reduce``), after a\n"
        "    sum in the data's dtype (wrapping around as its ``+`` does).",
        "An empty segment is 0.",
        """    >>> pg.segment_mean(np.array([1.0, 2.0, 6.0]), [0, 0, 2])
    array([1.5, 0. , 6. ])
    >>> pg.segment_mean(np.array([-3, -4, 5]), [0, 0, 1])
    array([-4,  5])
""",
    ),
)

segment_max = _segment_function(
    "max",
    _docstring(
        "The largest row of `data` in each segment, elementwise, like ``jax.ops.segment_max``.\n\n"
        "    A NaN in a segment makes its maximum NaN.",
        "An empty segment holds the dtype's lowest value (``-inf`` for floating dtypes).",
        """    >>> pg.segment_max(np.array([1.0, 5.0, 3.0]), [0, 0, 2])
    array([  5., -inf,   3.])
    >>> pg.segment_max(np.array([1, 5, 3], dtype=np.int8), [0, 0, 2])
    array([   5, -128,    3], dtype=int8)
""",
        real=True,
    ),
)

segment_min = _segment_function(
    "min",
    _docstring(
        "The smallest row of `data` in each segment, elementwise, like ``jax.ops.segment_min``.\n\n"
        "    A NaN in a segment makes its minimum NaN.",
        "An empty segment holds the dtype's highest value (``inf`` for floating dtypes).",
        """    >>> pg.segment_min(np.array([1.0, 5.0, 3.0]), [0, 0, 2])
    array([ 1., inf,  3.])
""",
        real=True,
    ),
)

segment_prod = _segment_function(
    "prod",
    _docstring(
        "The product of the rows of `data` in each segment, like ``jax.ops.segment_prod``.",
        "An empty segment is 1.",
        """    >>> pg.segment_prod(np.array([2, 3, 4]), [1, 1, 0], num_segments=3)
    array([4, 6, 1])
""",
    ),
)
