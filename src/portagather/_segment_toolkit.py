"""The segment toolkit: softmax, log-softmax, logsumexp, argmax/argmin, variance, standard
deviation, counts and ``bincount``, written once over the segment reductions.

Each function is one checked call (``_routes.segment_call``, with its name in the
messages), then the ids made valid once under the call's policy (:class:`_Segments`), then
only reductions by valid ids (``_api.segment_reduce`` with ``"unchecked"``: on NumPy and
PyTorch the backend's own kernel, on Dask its plan by size) and gathers by the same ids,
with elementwise steps between them. Where the policy drops rows (``"ignore"``), they are
sent to one extra segment past the last, which is cut off: no mask is carried through.
"""

from __future__ import annotations

import math
from typing import Any

import array_api_compat as aac
import numpy as np

from ._api import filled_empty, gather, segment_reduce
from ._arrays import (
    device_for_new,
    divisor,
    dtype_kind,
    dtype_name,
    per_segment,
    reduction_identity,
    tied,
)
from ._errors import raise_first_bad
from ._indices import Components, normalize
from ._operands import check_reduce_dtype, empty_value_kind, is_array, python_values
from ._options import SEGMENT_SCATTERS, check_deterministic, int_argument
from ._plan import plan_segments
from ._routes import segment_call
from .engines import engine_for
from .engines.scatter import ScatterPromises

__all__ = [
    "bincount",
    "segment_argmax",
    "segment_argmin",
    "segment_count",
    "segment_log_softmax",
    "segment_logsumexp",
    "segment_softmax",
    "segment_std",
    "segment_var",
]


class _Segments:
    """One checked toolkit call: the data, the ids made valid once (``[0, n)``, or ``n`` for
    a row the policy drops), and the two steps everything else is made of: a reduction of
    row values into segments (:meth:`reduce`) and a gather of segment values back to the rows
    (:meth:`spread`). A lazily checked ``"error"`` (Dask, ``checkify``) is enforced on each
    result by :meth:`checked`."""

    def __init__(
        self, data: Any, segment_ids: Any, num_segments: object, indices_are_sorted: object,
        bad_indices: object, function: str, reduce: str = "max", floating: bool = True,
        deterministic: object = False,
    ) -> None:  # fmt: skip
        #: Floating sums in the one order of ``_deterministic`` (docs/deterministic.md).
        self.deterministic = check_deterministic(deterministic)
        route, data, ids = segment_call(
            data, segment_ids, num_segments, reduce, indices_are_sorted, bad_indices,
            function, False, False, floating=floating,
        )  # fmt: skip
        self.xp, self.engine, self.n = route.xp, route.engine, route.num_segments
        self.sorted = route.ids_sorted
        self.data = data = route.engine.laid_out(data)
        ids = route.engine.laid_out(ids)
        self.id_shape = tuple(ids.shape)
        self.rows = math.prod(self.id_shape)
        self.inner = tuple(data.shape[len(self.id_shape) :])
        scatters, access = route.scatters_for(ids)
        self.plan = scatters.scatter.plan
        self.ids, self.kept, self.bad, self.raw_ids = ids, None, None, ids
        self.dropping = self.keyed = False
        if not self.rows:
            return
        if not self.n:  # every id is out of range
            if scatters.policy != "ignore":
                raise IndexError(self.plan.report.empty_axis_text(scatter=True))
            self.dropping = True
            wide = self.engine.wide_index_dtype(ids)
            self.ids = self.xp.zeros(self.id_shape, dtype=wide, device=device_for_new(ids))
            self.kept = self.xp.zeros(self.id_shape, dtype=self.xp.bool, device=device_for_new(ids))
            return
        components = normalize(self.xp, self.engine, ids, self.plan, scatters.policy, access)
        valid = components.values[0]
        if components.keep_inside:  # "unchecked", or "error" checked lazily: reads inside
            valid = self.engine.clamp(valid, 0, self.n - 1)
        if components.keep is not None:
            self.kept = components.keep
            self.dropping = True
            valid = self.xp.where(components.keep, valid, self.xp.full_like(valid, self.n))
        self.ids, self.bad = valid, components.bad
        # An engine whose gathers and scatters check bounds themselves, outside a trace:
        # each step by its own keyed route, whose backend kernel takes the valid ids as they
        # are (PyTorch's scatter_reduce_ / index_add_ / index_select at every size, NumPy's
        # indexing for a small call), with no plan made per call.
        self.keyed = (
            self.engine.gathers_checked and self.engine.route_keys((data, valid)) is not None
        )

    @property
    def segments(self) -> int:
        """The segments the valid ids name: one more than asked where rows are dropped."""
        return self.n + 1 if self.dropping else self.n

    def reduce(self, values: Any, reduce: str) -> Any:
        """The segment reduction `reduce` of `values` (rows like the data's) at the valid ids,
        with the extra segment of dropped rows still in it: the engine's own plan where it
        has one (Dask's by size), else one scatter of the valid ids into the identity (no
        policy left to apply: they are valid)."""
        if self.deterministic and reduce == "sum":  # the tree's order, on every engine
            return segment_reduce(
                values, self.ids, self.segments, reduce, bad_indices="unchecked",
                indices_are_sorted=self.sorted and not self.dropping, function="segment_sum",
                deterministic=True,
            )  # fmt: skip
        if self.keyed:
            return segment_reduce(values, self.ids, self.segments, reduce,
                                  function=f"segment_{reduce}")  # fmt: skip
        xp, engine = self.xp, self.engine
        shape = (self.segments, *values.shape[len(self.id_shape) :])
        scatter, dtype = SEGMENT_SCATTERS[reduce], values.dtype
        identity = reduction_identity(xp, scatter, dtype)
        sorted_ids = self.sorted and not self.dropping
        plan = plan_segments(shape, self.id_shape)
        if engine.segment_plan is not None:
            planned = engine.segment_plan(
                values, self.ids, self.segments, scatter, identity, "unchecked", plan.report,
                False, sorted_ids,
            )  # fmt: skip
            if planned is not None:
                return planned[0]
        init = engine.full(shape, identity, dtype, values)
        reduction = check_reduce_dtype(xp, scatter, dtype, "data")
        promises = ScatterPromises(indices_are_sorted=sorted_ids)  # (checked bools: ours)
        return engine.scatter(init, Components([self.ids]), values, plan, reduction, promises)

    def count(self) -> Any:
        """The rows of each segment (the extra one included), in the widest integer dtype."""
        wide = self.engine.wide_index_dtype(self.ids)
        return self.reduce(
            self.xp.ones(self.id_shape, dtype=wide, device=device_for_new(self.ids)), "sum"
        )

    def spread(self, table: Any) -> Any:
        """``table[ids]``: each row's segment value, of the data's shape."""
        if self.keyed:
            return gather(table, self.ids, axis=0)
        plan = plan_segments(tuple(table.shape), self.id_shape)
        return self.engine.gather(table, Components([self.ids]), plan)

    def per_segment(self, result: Any) -> Any:
        """A reduction's result without the extra segment, lazily checked."""
        if self.dropping:
            result = result[: self.n, ...]
        return self.checked(result)

    def per_row(self, result: Any, dropped: float) -> Any:
        """A row-shaped result with `dropped` at the rows the policy drops, lazily checked."""
        if self.kept is not None:
            keep = per_segment(self.xp, self.kept, result)
            result = self.xp.where(keep, result, self.xp.full_like(result, dropped))
        return self.checked(result)

    def checked(self, result: Any) -> Any:
        """`result`, raising when it is computed (or under ``checkify``) on a bad id."""
        if self.bad is None:
            return result
        return self.engine.enforce_lazily(self.bad, self.raw_ids, self.plan.report, result)

    def no_rows(self, value: float, dtype: Any) -> Any:
        """The result of a call without rows: every segment empty."""
        return self.engine.full((self.n, *self.inner), value, dtype, self.data)

    def shift(self, data: Any) -> tuple[Any, Any]:
        """``(shift, shifted)``: each segment's largest value, finite (0 for an empty or
        infinite one, where subtracting it would make a NaN of no NaN), without a gradient
        (it cancels in a softmax and a logsumexp), and the rows less their segment's."""
        xp = self.xp
        largest = self.engine.without_gradient(self.reduce(data, "max"))
        largest = xp.where(xp.isfinite(largest), largest, xp.zeros_like(largest))
        return largest, data - self.spread(largest)

    def exp_sums(self, data: Any) -> tuple[Any, Any, Any, Any]:
        """``(shift, shifted, exps, sums)``: :meth:`shift`, ``exp(shifted)`` (None where the
        sums came from the engine's one-pass plan, which keeps no exps), and the sum of
        ``exp(shifted)`` in each segment."""
        found = self.statistics("exp", data)
        if found is not None:
            xp, (largest, sums) = self.xp, found
            largest = xp.where(xp.isfinite(largest), largest, xp.zeros_like(largest))
            return largest, data - self.spread(largest), None, sums
        largest, shifted = self.shift(data)
        exps = self.xp.exp(shifted)
        return largest, shifted, exps, self.reduce(exps, "sum")

    def statistics(self, statistic: str, data: Any) -> tuple[Any, ...] | None:
        """`statistic` of `data` in one pass, by the engine's own plan
        (:attr:`~.engines.Engine.segment_statistics`: Dask's), or None where it has none."""
        plan = self.engine.segment_statistics
        summed = statistic in ("moments", "exp")  # (in the blocks' order, not the tree's)
        if plan is None or not self.rows or (self.deterministic and summed):
            return None
        return plan(statistic, data, self.ids, self.segments)


def _log(xp: Any, x: Any) -> Any:
    """``log(x)`` for ``x >= 0`` or NaN, with ``-inf`` for 0 and no division warning."""
    zero = x == 0
    logs = xp.log(xp.where(zero, xp.ones_like(x), x))
    return xp.where(zero, xp.full_like(logs, -math.inf), logs)


def _with_empty(segments: _Segments, result: Any, empty_value: Any, count: Any = None) -> Any:
    """`result` (per segment, the extra one cut) with `empty_value` (checked) where a
    segment has no row; as it is where `empty_value` is None."""
    if empty_value is None:
        return result
    if count is None:
        count = segments.count()
    if segments.dropping:
        count = count[: segments.n]
    return filled_empty(segments.xp, result, count, empty_value)


# -- the public functions


def segment_softmax(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", deterministic: bool = False,
) -> Any:  # fmt: skip
    """The softmax of the rows of `data` within each segment, elementwise along the inner
    axes: ``out[i] = exp(data[i]) / sum(exp(data[j]) for j in the segment of i)``, like
    PyG's ``softmax``, jraph's ``segment_softmax`` and torch_scatter's ``scatter_softmax``.

    Stable: each segment's largest value is subtracted first (without a gradient, since it
    cancels). A segment with a NaN is NaN in every row; in one with ``+inf``, the ``+inf``
    rows are NaN (inf / inf) and the others 0; one whose values are all ``-inf`` is NaN
    (0 / 0). A row the policy drops (``"ignore"``) is 0.

    Parameters
    ----------
    data : array
        Floating rows; `segment_ids`, `num_segments`, `indices_are_sorted` and `bad_indices`
        as in :func:`segment_sum`.
    deterministic : bool, optional
        The segments' sums in one order fixed by the ids alone, the pairwise tree of
        :func:`segment_sum` (docs/deterministic.md), so that the result has the same bits on
        every backend and in every run; so for the log-softmax, logsumexp, var, std and
        a weighted :func:`bincount`.

    Returns
    -------
    array
        `data`'s shape, namespace, dtype and device.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_softmax(np.log(np.array([1.0, 3.0, 2.0])), [0, 0, 1])
    array([0.25, 0.75, 1.  ])
    """
    seg = _Segments(data, segment_ids, num_segments, indices_are_sorted, bad_indices,
                    "segment_softmax", deterministic=deterministic)  # fmt: skip
    if not seg.rows:
        return seg.checked(seg.xp.asarray(seg.data, copy=True))
    _, shifted, exps, sums = seg.exp_sums(seg.data)
    if exps is None:
        exps = seg.xp.exp(shifted)
    return seg.per_row(exps / seg.spread(sums), 0.0)


def segment_log_softmax(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", deterministic: bool = False,
) -> Any:  # fmt: skip
    """The log of :func:`segment_softmax`, computed stably: ``data[i]`` less the
    logsumexp of its segment. A row the policy drops (``"ignore"``) is ``-inf``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> np.exp(pg.segment_log_softmax(np.log(np.array([1.0, 3.0, 2.0])), [0, 0, 1]))
    array([0.25, 0.75, 1.  ])
    """
    seg = _Segments(data, segment_ids, num_segments, indices_are_sorted, bad_indices,
                    "segment_log_softmax", deterministic=deterministic)  # fmt: skip
    if not seg.rows:
        return seg.checked(seg.xp.asarray(seg.data, copy=True))
    _, shifted, _, sums = seg.exp_sums(seg.data)
    return seg.per_row(shifted - seg.spread(_log(seg.xp, sums)), -math.inf)


def segment_logsumexp(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
    deterministic: bool = False,
) -> Any:  # fmt: skip
    """``log(sum(exp(data[i])))`` over the rows of each segment, computed stably (each
    segment's largest value taken out first), like torch_scatter's ``scatter_logsumexp``.

    An empty segment is ``-inf`` (the log of an empty sum), or `empty_value`.

    Returns
    -------
    array
        Shape ``(num_segments,) + data.shape[segment_ids.ndim:]``, data's dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> np.exp(pg.segment_logsumexp(np.log(np.array([1.0, 3.0, 2.0])), [0, 0, 2]))
    array([4., 0., 2.])
    """
    empty_value_kind(empty_value)
    seg = _Segments(data, segment_ids, num_segments, indices_are_sorted, bad_indices,
                    "segment_logsumexp", deterministic=deterministic)  # fmt: skip
    if not seg.rows:
        result = seg.no_rows(-math.inf, seg.data.dtype)
    else:
        largest, _, _, sums = seg.exp_sums(seg.data)
        result = seg.per_segment(_log(seg.xp, sums) + largest)
    return _with_empty(seg, result, empty_value)


def _arg(data: Any, segment_ids: Any, num_segments: object, indices_are_sorted: object,
         bad_indices: object, empty_value: object, reduce: str) -> Any:  # fmt: skip
    """The position of the largest (`reduce` ``"max"``) or smallest row value of each
    segment: the first one, with NaN taken as the extreme (as NumPy's ``argmax``)."""
    empty_value_kind(empty_value)
    seg = _Segments(data, segment_ids, num_segments, indices_are_sorted, bad_indices,
                    f"segment_arg{reduce}", reduce=reduce, floating=False)  # fmt: skip
    xp, data = seg.xp, seg.data
    wide = seg.engine.wide_index_dtype(data)
    if not seg.rows:
        return _with_empty(seg, seg.no_rows(0, wide), empty_value)
    found = seg.statistics(f"arg{reduce}", data)
    if found is not None:  # (first positions, the int64 maximum where a segment is empty)
        first = xp.astype(xp.minimum(found[1], xp.full_like(found[1], seg.rows)), wide)
        return _with_empty(seg, seg.per_segment(first), empty_value)
    table = seg.reduce(data, reduce)
    extreme = seg.spread(table)
    hit = data == extreme
    if dtype_kind(xp, data.dtype) == "real floating" and _may_hold_nan(seg, table):
        # A NaN makes its segment's extreme NaN (the segment reductions' rule), so every NaN
        # row is a hit of its segment, and the first wins, as in NumPy's argmax.
        hit = hit | xp.isnan(data)
    # The positions along the ids' axes, broadcast against the inner ones by `where`.
    device = device_for_new(data)
    ones = (1,) * len(seg.inner)
    positions = xp.reshape(xp.arange(seg.rows, dtype=wide, device=device), seg.id_shape + ones)
    past = xp.full((1,) * len(seg.id_shape + ones), seg.rows, dtype=wide, device=device)
    first = seg.reduce(xp.where(hit, positions, past), "min")
    # An empty segment holds the min's identity (the dtype's largest): the row count instead.
    first = xp.minimum(first, xp.full_like(first, seg.rows))
    return _with_empty(seg, seg.per_segment(first), empty_value)


def _may_hold_nan(seg: _Segments, table: Any) -> bool:
    """Whether the rows may hold a NaN, from their segments' extremes (`table`), which hold
    one wherever a row does: False only where those are read now, cheaply, and hold none
    (a pass over the rows saved); True where they cannot be read (under a trace)."""
    if seg.engine.index_access(table) != "now" or not seg.engine.reads_cheaply(table):
        return True
    return bool(seg.xp.any(seg.xp.isnan(table)))


def segment_argmax(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
) -> Any:  # fmt: skip
    """The position of each segment's largest row value, elementwise along the inner axes,
    like ``numpy.argmax`` within each segment: ties go to the first position, and a NaN is
    the largest value (the first NaN wins).

    The position is along axis 0 of `data` (for ids of more than one axis, the row-major
    position among ``segment_ids``' elements). An empty segment gets the number of rows,
    ``data.shape[0]`` for 1-d ids, a position past the end that every checked gather
    refuses, or `empty_value`. Positions have the widest integer dtype of the data's device.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_argmax(np.array([1.0, 5.0, 5.0, 2.0]), [0, 0, 0, 2])
    array([1, 4, 3])
    """
    return _arg(data, segment_ids, num_segments, indices_are_sorted, bad_indices, empty_value,
                "max")  # fmt: skip


def segment_argmin(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
) -> Any:  # fmt: skip
    """The position of each segment's smallest row value: :func:`segment_argmax` with the
    smallest (a NaN is the smallest, as in ``numpy.argmin``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_argmin(np.array([1.0, 0.0, 0.0, 2.0]), [0, 0, 0, 2])
    array([1, 4, 3])
    """
    return _arg(data, segment_ids, num_segments, indices_are_sorted, bad_indices, empty_value,
                "min")  # fmt: skip


def _correction_kind(correction: object) -> None:
    """A TypeError unless `correction` is a real number (the array API's ``var``: an int or
    a float)."""
    if isinstance(correction, bool) or not isinstance(
        correction, int | float | np.integer | np.floating
    ):
        msg = f"correction must be a real number >= 0 (an int or a float); got {correction!r}"
        raise TypeError(msg)


def _correction_value(correction: Any) -> float:
    """`correction` (of :func:`_correction_kind`) as a float, a ValueError unless >= 0."""
    if not (math.isfinite(correction) and correction >= 0):
        msg = f"correction must be a real number >= 0; got {correction!r}"
        raise ValueError(msg)
    return float(correction)


def _var(
    data: Any, segment_ids: Any, num_segments: object, indices_are_sorted: object,
    bad_indices: object, correction: object, empty_value: object, function: str,
    deterministic: object,
) -> Any:  # fmt: skip
    """The variance of each segment's rows and what :func:`segment_var` says of it; the
    square root where `function` is ``segment_std``."""
    empty_value_kind(empty_value)
    _correction_kind(correction)
    seg = _Segments(data, segment_ids, num_segments, indices_are_sorted, bad_indices,
                    function, deterministic=deterministic)  # fmt: skip
    correction = _correction_value(correction)
    xp, data = seg.xp, seg.data
    if not seg.rows:
        return _with_empty(seg, seg.no_rows(math.nan, data.dtype), empty_value)
    found = seg.statistics("moments", data)
    if found is not None:
        count, _, squares = found
    else:
        count = seg.count()
        total = seg.reduce(data, "sum")
        traced = seg.engine.index_access(total) == "trace"  # (gathered divisors: as eager)
        divided_by = xp.astype(divisor(xp, count, total, traced), data.dtype)
        mean = total / (tied(xp, divided_by, total) if traced else divided_by)
        deviation = data - seg.spread(mean)
        squares = seg.reduce(deviation * deviation, "sum")
    traced = seg.engine.index_access(squares) == "trace"
    freedom = xp.astype(per_segment(xp, count, squares, traced), data.dtype) - correction
    if traced:  # (one rounding under vmap too)
        freedom = tied(xp, freedom, squares)
    some = freedom > 0
    result = xp.where(some, squares / xp.where(some, freedom, xp.ones_like(freedom)),
                      xp.full_like(squares, math.nan))  # fmt: skip
    if function == "segment_std":
        result = xp.sqrt(result)
    return _with_empty(seg, seg.per_segment(result), empty_value, count)


def segment_var(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", correction: float = 0,
    empty_value: Any = None, deterministic: bool = False,
) -> Any:  # fmt: skip
    """The variance of the rows of each segment, elementwise along the inner axes, with the
    array API's ``correction`` (degrees of freedom: ``correction=1`` is the sample
    variance): ``sum((x - mean)**2) / (count - correction)``.

    Two passes (the mean, then the squares of the deviations from it), so no cancellation
    of a sum of squares. A segment with ``count - correction <= 0`` (an empty one among
    them) is NaN, or `empty_value` where it is empty.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_var(np.array([1.0, 3.0, 5.0, 2.0]), [0, 0, 0, 2])
    array([2.66666667,        nan, 0.        ])
    >>> pg.segment_var(np.array([1.0, 3.0, 5.0]), [0, 0, 0], correction=1)
    array([4.])
    """
    return _var(data, segment_ids, num_segments, indices_are_sorted, bad_indices, correction,
                empty_value, "segment_var", deterministic)  # fmt: skip


def segment_std(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", correction: float = 0,
    empty_value: Any = None, deterministic: bool = False,
) -> Any:  # fmt: skip
    """The standard deviation of the rows of each segment: the square root of
    :func:`segment_var`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_std(np.array([1.0, 3.0, 5.0]), [0, 0, 0], correction=1)
    array([2.])
    """
    return _var(data, segment_ids, num_segments, indices_are_sorted, bad_indices, correction,
                empty_value, "segment_std", deterministic)  # fmt: skip


def _index_array(segment_ids: Any, name: str) -> Any:
    """`segment_ids` as an array: as it is, or NumPy's for Python values (a TypeError naming
    `name` for what no index holds)."""
    if is_array(segment_ids):
        return segment_ids
    return python_values(segment_ids, name, text=False)


def _ones_like(ids: Any) -> Any:
    """Ones of the widest integer dtype shaped like `ids`, in its namespace, on its device."""
    xp = aac.array_namespace(ids)
    wide = engine_for(xp).wide_index_dtype(ids)
    shape = tuple(ids.shape)
    if any(size is None or (isinstance(size, float) and math.isnan(size)) for size in shape):
        return xp.ones_like(ids, dtype=wide)
    return xp.ones(shape, dtype=wide, device=device_for_new(ids))


def segment_count(
    segment_ids: Any, num_segments: int | None = None, *, indices_are_sorted: bool = False,
    bad_indices: Any = "error",
) -> Any:  # fmt: skip
    """The number of rows in each segment: ``segment_sum`` of ones, in the widest integer
    dtype of the ids' device (NumPy's int64 for ids given as Python values). The arguments
    are :func:`segment_sum`'s.

    Examples
    --------
    >>> import portagather as pg
    >>> pg.segment_count([0, 0, 2, 0])
    array([3, 0, 1])
    """
    ids = _index_array(segment_ids, "segment_ids")
    if bad_indices == "error" and num_segments is not None:  # (a sorted promise: no matter)
        counted = _counted(ids, ids, num_segments, "segment_count", False,
                           indices_are_sorted=indices_are_sorted)  # fmt: skip
        if counted is not None:
            return counted
    return segment_reduce(
        _ones_like(ids), segment_ids, num_segments, "sum", indices_are_sorted=indices_are_sorted,
        bad_indices=bad_indices, function="segment_count",
    )  # fmt: skip


def bincount(
    x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None,
    deterministic: bool = False,
) -> Any:  # fmt: skip
    """NumPy's ``bincount`` on every backend: how often each value of the non-negative
    integer vector `x` occurs (``out[v]`` is the number of ``i`` with ``x[i] == v``), or
    with `weights`, the sum of ``weights[i]`` over them.

    The result has ``max(max(x) + 1, minlength)`` entries, or `length` where given: a size
    fixed in advance, which ``jax.jit``, Dask and symbolic arrays need (as
    ``jnp.bincount(length=)``); a value of `x` at or past `length` is then an error, as a
    negative value always is (an ``IndexError`` naming it; under ``jit``, through
    ``checkify``). The counts have the widest integer dtype of `x`'s device (NumPy's
    ``intp`` on NumPy); weighted sums the dtype of `weights` (where NumPy's own ``bincount``
    always gives float64).

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.bincount(np.array([0, 1, 1, 3]))
    array([1, 2, 0, 1])
    >>> pg.bincount(np.array([0, 1, 1, 3]), weights=np.array([0.5, 1.0, 1.0, 2.0]), minlength=6)
    array([0.5, 2. , 0. , 2. , 0. , 0. ])
    """
    deterministic = check_deterministic(deterministic)
    minlength = int_argument(minlength, "minlength")
    if minlength < 0:
        msg = f"minlength must be >= 0; got {minlength}"
        raise ValueError(msg)
    if length is not None:
        length = int_argument(length, "length")
        if length < minlength:
            msg = f"length must be >= minlength; got length={length} and minlength={minlength}"
            raise ValueError(msg)
    ids = _index_array(x, "x")
    if dtype_kind(aac.array_namespace(ids), ids.dtype) not in _INTEGERS:
        msg = f"x must have an integer dtype; got {dtype_name(ids.dtype)}"
        raise TypeError(msg)  # (before the shape, in the one order)
    if ids.ndim != 1:
        msg = f"x must be 1-dimensional; got an array of shape {tuple(ids.shape)}"
        raise ValueError(msg)
    weighted = weights is not None
    if not (deterministic and weighted):  # (counts are exact in any order)
        counted = _counted(weights if weighted else ids, ids, length, "bincount", weighted,
                           minlength)  # fmt: skip
        if counted is not None:
            return counted
    if length is None:
        length = max(_value_range(ids)[1] + 1, minlength)
    data = weights if weighted else _ones_like(ids)
    given = x if is_array(x) else ids
    return segment_reduce(
        data, given, length, "sum", function="bincount", deterministic=deterministic and weighted
    )


_INTEGERS = ("signed integer", "unsigned integer")


def _counted(
    data: Any, ids: Any, length: object, function: str, weighted: bool, minlength: int = 0,
    indices_are_sorted: object = False,
) -> Any | None:  # fmt: skip
    """The counts of `ids` (weighted by `data` where `weighted`; else `data` stands for the
    data in the checks, and no ones are made) into `length` bins (None: ``max(ids) + 1``, at
    least `minlength`) by the backend's own ``bincount``, whose own check of the values
    stands in for ours (:meth:`~.engines.Engine.counted`), after the checks of `function`'s
    checked call; a bad value raises as ``"error"`` names it. None where the backend has no
    ``bincount`` or the values cannot be read now (the segment sum runs)."""
    planned = length if length is not None else minlength
    route, data, ids = segment_call(data, ids, planned, "sum", indices_are_sorted, "error",
                                    function, False, False)  # fmt: skip
    engine, xp = route.engine, route.xp
    if length is not None:
        length = route.num_segments  # (checked: an int)
    if not engine.counts or engine.index_access(ids) != "now" or (weighted and data.ndim != 1):
        return None
    flat = ids if ids.ndim == 1 else xp.reshape(ids, (-1,))
    counts = engine.counted(flat, minlength, length, data if weighted else None)
    if counts is not None:
        return counts
    # A value out of range: found and named as the checks name it, against the length.
    n = length if length is not None else max(engine.value_range(ids)[1] + 1, minlength)
    report = plan_segments((n,), tuple(ids.shape), route.ids_name).report
    raise_first_bad(xp, (ids < 0) | (ids >= n), ids, report, engine.read_int)
    return None  # (not reached)


def _value_range(x: Any) -> tuple[int, int]:
    """``(min(x), max(x))``, read now (``(0, -1)`` for no value); a ValueError where the
    values cannot be read (``bincount``'s length must then be given)."""
    engine = engine_for(aac.array_namespace(x))
    if engine.index_access(x) != "now":
        msg = (
            "bincount(length=None) reads max(x) + 1, which cannot be read here (under jit, on "
            "Dask or on symbolic arrays): pass length="
        )
        raise ValueError(msg)
    if not math.prod(x.shape):
        return 0, -1
    return engine.value_range(x)
