"""The CSR form of the segment reductions, ``segment_csr``: segments given by offsets into
sorted rows (``torch_scatter.segment_csr``). The offsets become segment ids (one
``searchsorted`` of every row position in the offsets), which ``_segment`` reduces, with the
rows outside every segment dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ._api import filled_empty, segment_route
from ._arrays import device_for_new, searchsorted_positions
from ._errors import raise_first_bad
from ._indices import to_wide
from ._operands import check_empty_value
from ._options import SEGMENT_REDUCTIONS
from ._plan import Lengths, Offsets, SegmentsGiven, lengths_total_text, symbolic_size
from ._routes import CsrRoute, csr_call
from ._segment_toolkit import (
    segment_argmax,
    segment_argmin,
    segment_log_softmax,
    segment_logsumexp,
    segment_softmax,
    segment_std,
    segment_var,
)
from .engines import Engine


def _csr(
    data: Any, offsets: Any, reduce: object, bad_indices: object, correction: object,
    empty_value: object, deterministic: object = False, given: SegmentsGiven | None = None,
) -> Any:  # fmt: skip
    """The segment reduction of `data` split by CSR `offsets` (see :func:`segment_csr`); a
    front end's `given` (``_plan.SegmentsGiven``) may give lengths instead, whose offsets
    are made here (:func:`_offsets_of_lengths`)."""
    counting = empty_value is not None
    checked, data, offsets = csr_call(
        data, offsets, reduce, bad_indices, deterministic, counting, given
    )
    xp, engine, shape, axis = checked.xp, checked.engine, checked.shape, checked.axis
    offsets = engine.laid_out(offsets)
    # The policy the offsets are checked under, and a lazy check of lengths (Dask's).
    offsets_policy, pending, on_host = checked.policy, None, None
    if checked.lengths:
        on_host = _ids_from_host_lengths(checked, offsets)
        if on_host is None:
            offsets, offsets_policy, pending = _offsets_of_lengths(checked, offsets)
    data = engine.laid_out(data)
    # The batches and the split axis as one (along the first axis the data is that already).
    rows = xp.reshape(data, (math.prod(shape[: axis + 1]), *shape[axis + 1 :])) if axis else data
    if on_host is None:
        on_host = _ids_from_host(checked, offsets)
    if on_host is not None:  # valid offsets (or lengths), read now: no check left
        ids, policy = on_host
    else:
        ids, policy = _ids_from_offsets(xp, engine, offsets, shape, axis, rows), "ignore"
    reduced = _reduced_rows(checked, rows, ids, policy, correction, empty_value)
    if not axis:  # no batches: the rows' result has the result's shape
        result = reduced
    elif checked.reduce in _ROW_SHAPED:
        result = xp.reshape(reduced, shape)
    else:
        result = xp.reshape(reduced, (*shape[:axis], checked.segments, *shape[axis + 1 :]))
    if on_host is None and offsets_policy == "error":
        result = _enforce_offsets(xp, engine, offsets, shape, axis, result)
    if pending is not None:  # bad lengths raise when the (Dask) result is computed
        bad, values, report = pending
        result = engine.enforce_lazily(bad, values, report, result)
    return result


def _offsets_of_lengths(checked: CsrRoute, lengths: Any) -> tuple[Any, str, Any]:
    """``(offsets, policy, pending)``: the offsets that checked `lengths` make (each row's
    running total from 0), the policy that reduces at them, and the lazy check of the
    lengths where it waits for the (Dask) graph, else None: the array steps, where
    :func:`_ids_from_host_lengths` does not serve.

    Under ``"error"`` the lengths are checked as PyTorch checks them (none negative, each row
    adding up to the data's length: :class:`~._plan.Lengths`'s ValueError): eagerly where
    their values can be read now, in the graph on Dask. Offsets of lengths checked (now or in
    the graph) are valid: ``"unchecked"``; under a JAX trace the lengths are not read, and
    the offsets are checked as offsets (``"error"``). ``"unchecked"`` (the caller's promise)
    checks nothing."""
    xp, engine = checked.xp, checked.engine
    wide = engine.wide_index_dtype(lengths)
    offsets = xp.cumulative_sum(xp.astype(lengths, wide), axis=-1, include_initial=True, dtype=wide)
    if checked.policy == "unchecked":
        return offsets, "unchecked", None
    found = _check_lengths(xp, engine, lengths, checked.shape[checked.axis])
    pending = found if isinstance(found, tuple) else None
    return offsets, "unchecked" if found is True or pending is not None else "error", pending


def _ids_from_host_lengths(checked: CsrRoute, lengths: Any) -> tuple[Any, str] | None:
    """For a small call whose `lengths` the host reads cheaply (as :func:`_ids_from_host`
    offsets): the segment id of every row, written as a Python list, and ``"unchecked"``
    (every row is in a segment), where the lengths are valid. Bad lengths raise the
    ValueError of :func:`_check_lengths` under ``"error"``; under ``"unchecked"`` (and for a
    larger call) None: the array steps."""
    shape, axis, engine = checked.shape, checked.axis, checked.engine
    n, batches = shape[axis], math.prod(shape[:axis])
    size = math.prod(lengths.shape)
    if engine.array_type is None or not size or max(size, batches * n) > _HOST_ROWS:
        return None
    if engine.index_access(lengths) != "now" or not engine.reads_cheaply(lengths):
        return None
    values = lengths.reshape(-1).tolist()
    line = lengths.shape[-1]
    totals = [sum(values[k : k + line]) for k in range(0, size, line)]
    low, high = min(totals), max(totals)
    if min(values) < 0 or low != n or high != n:
        if checked.policy == "unchecked":
            return None
        if min(values) < 0:
            msg = "lengths contains negative value!"
            raise ValueError(msg)
        raise ValueError(lengths_total_text(n, low if low != n else high))
    ids: list[int] = []
    for segment, length in enumerate(values):  # (each batch's segments, in one line)
        ids += [segment] * length
    wide = engine.wide_index_dtype(lengths)
    return checked.xp.asarray(ids, dtype=wide, device=device_for_new(lengths)), "unchecked"


def _check_lengths(xp: Any, engine: Engine, lengths: Any, n: int) -> tuple[Any, Any, Any] | bool:
    """PyTorch's checks of `lengths`: none negative, each row adding up to `n`. Where the
    values can be read now, a ValueError, else True where the offsets they make need no
    check (each length at most `n`, so no total wrapped around); in a Dask graph ``(bad,
    values, report)`` for ``enforce_lazily``, which raises the same ValueError when the
    result is computed; under a JAX trace (or for no lengths) no check: False."""
    access = engine.index_access(lengths)
    if access not in ("now", "graph") or not math.prod(lengths.shape):
        return False
    wide = engine.wide_index_dtype(lengths)
    if access == "graph":
        values = xp.astype(lengths, wide)
        totals = xp.sum(values, axis=-1, keepdims=True, dtype=wide)
        last = xp.arange(lengths.shape[-1], dtype=wide) == lengths.shape[-1] - 1
        wrong = last & (totals != n)
        bad = (values < 0) | wrong
        shown = xp.where(values < 0, values, xp.where(wrong, totals, xp.zeros_like(values)))
        return bad, shown, Lengths("lengths", False, "data", (n,), 0)
    smallest, largest = engine.value_range(lengths)
    if smallest < 0:
        msg = "lengths contains negative value!"
        raise ValueError(msg)
    totals = xp.sum(xp.astype(lengths, wide), axis=-1, dtype=wide)
    low, high = engine.value_range(totals)
    if low != n or high != n:
        raise ValueError(lengths_total_text(n, low if low != n else high))
    return largest <= n


#: The toolkit's functions by their ``reduce=`` name.
_TOOLKIT: dict[str, Callable[..., Any]] = {
    "softmax": segment_softmax, "log_softmax": segment_log_softmax,
    "logsumexp": segment_logsumexp, "argmax": segment_argmax, "argmin": segment_argmin,
    "var": segment_var, "std": segment_std,
}  # fmt: skip

#: The reductions of ``segment_csr`` whose result has the data's shape.
_ROW_SHAPED = ("softmax", "log_softmax")


def _reduced_rows(
    checked: CsrRoute, rows: Any, ids: Any, policy: str, correction: object, empty_value: object
) -> Any:  # fmt: skip
    """The reduction `checked.reduce` of `rows` (the data's batches and the split axis as
    one) at their segment `ids` (every batch's segments in one line; -1 for a row in none,
    which `policy` ``"ignore"`` drops): a segment reduction, or the toolkit's function of
    that name, whose positions (argmax, argmin) are made positions along the split axis."""
    reduce, segments = checked.reduce, math.prod(checked.shape[: checked.axis]) * checked.segments
    if reduce in SEGMENT_REDUCTIONS:  # the route its own checked call keeps
        counting = empty_value is not None
        reduced = segment_route(checked.segment_routes[policy], rows, ids, counting)
        if not counting:
            return reduced
        result, count = reduced
        return filled_empty(checked.xp, result, count, empty_value)
    options: dict[str, Any] = {"indices_are_sorted": True, "bad_indices": policy}
    if reduce in ("var", "std"):
        options["correction"] = correction
    if reduce not in ("argmax", "argmin"):  # (no sum there to order)
        options["deterministic"] = checked.deterministic
    if reduce not in _ROW_SHAPED and reduce not in ("argmax", "argmin"):
        options["empty_value"] = empty_value
    result = _TOOLKIT[reduce](rows, ids, segments, **options)
    if reduce in ("argmax", "argmin"):
        # A position among all rows of all batches: its remainder by the axis's length is
        # the position along it (a segment's rows are in one batch); an empty segment's
        # (the count of all rows) is that length, or empty_value.
        xp, n, count = checked.xp, checked.shape[checked.axis], rows.shape[0]
        empty = result == count
        if symbolic_size(n):  # (torch.export's: Python's max would fix it) at least 1, as arrays
            divisor = xp.maximum(xp.full_like(result, n), xp.ones_like(result))
        else:
            divisor = xp.full_like(result, max(n, 1))
        along = xp.remainder(result, divisor)
        fill = n if empty_value is None else check_empty_value(xp, empty_value, result.dtype)
        result = xp.where(empty, xp.full_like(result, fill), along)
    return result


#: The most rows whose ids :func:`_ids_on_host` writes as a Python list.
_HOST_ROWS = 256


def _ids_from_host(checked: CsrRoute, offsets: Any) -> tuple[Any, str] | None:
    """For a small call whose offsets the host reads cheaply: the segment id of every row
    (as :func:`_ids_from_offsets`, written as a Python list) and the policy that reduces
    them (``"unchecked"`` where every row is in a segment, else ``"ignore"``, which drops
    the others), where every offset is valid; else None (the array steps, which raise on a
    bad offset under ``"error"``)."""
    shape, axis, engine = checked.shape, checked.axis, checked.engine
    n, batches = shape[axis], math.prod(shape[:axis])
    if engine.array_type is None:  # (NumPy's and torch's tolist)
        return None
    if engine.index_access(offsets) != "now" or not engine.reads_cheaply(offsets):
        return None  # (first: under torch.export the size below is symbolic)
    if batches * n > _HOST_ROWS:
        return None
    line, segments = checked.offsets_shape[-1], checked.segments
    values = offsets.reshape(-1).tolist()
    ids = [-1] * (batches * n)
    for batch in range(batches):
        bounds = values[batch * line : (batch + 1) * line]
        previous = 0
        for value in bounds:
            if not previous <= value <= n:
                return None  # a bad offset: the array steps report it
            previous = value
        for segment in range(segments):
            first, stop = batch * n + bounds[segment], batch * n + bounds[segment + 1]
            ids[first:stop] = [batch * segments + segment] * (stop - first)
    policy = "ignore" if -1 in ids else "unchecked"
    wide = engine.wide_index_dtype(offsets)
    return checked.xp.asarray(ids, dtype=wide, device=device_for_new(offsets)), policy


def _ids_from_offsets(
    xp: Any, engine: Engine, offsets: Any, shape: tuple[int, ...], axis: int, rows: Any
) -> Any:
    """The segment id of every row of data viewed as ``(prod(shape[:axis + 1]), ...)``, -1 for
    a row in no segment.

    `rows` is the data so viewed. The batches' offsets are shifted by ``batch * n`` into one
    non-decreasing line (offsets in ``[0, n]``), and one ``searchsorted`` finds for each row
    the last offset at or before it: entry ``s`` of batch ``b`` is segment ``b * S + s``, the
    last entry of a batch is past it.
    """
    wide = engine.wide_index_dtype(offsets)
    n, batches = shape[axis], math.prod(shape[:axis])
    line = offsets.shape[-1]
    segments = line - 1
    device = device_for_new(offsets)
    values = xp.reshape(to_wide(xp, offsets, wide, None, False), (batches, line))
    shift = xp.reshape(xp.arange(batches, dtype=wide, device=device) * n, (batches, 1))
    flat = xp.reshape(values + shift, (batches * line,))
    positions = xp.arange(batches * n, dtype=wide, device=device)
    positions = engine.blocked_like(positions, rows)  # the ids in the rows' blocks
    position = searchsorted_positions(xp, flat, positions, "right") - 1
    batch = xp.floor_divide(position, line)
    entry = position - batch * line
    inside = (position >= 0) & (entry < segments)
    return xp.where(inside, batch * segments + entry, xp.full_like(position, -1))


def _enforce_offsets(
    xp: Any, engine: Engine, offsets: Any, shape: tuple[int, ...], axis: int, result: Any
) -> Any:
    """``"error"`` for offsets outside ``[0, n]`` or smaller than the one before them."""
    if not math.prod(offsets.shape):
        return result
    n = shape[axis]
    values = to_wide(xp, offsets, engine.wide_index_dtype(offsets), None, False)
    bad = (values < 0) | (values > n)
    if offsets.shape[-1] > 1:
        falls = values[..., 1:] < values[..., :-1]
        first = xp.zeros((*offsets.shape[:-1], 1), dtype=xp.bool, device=device_for_new(values))
        bad = bad | xp.concat([first, falls], axis=-1)
        bad = engine.blocked_like(bad, offsets)  # (the lazy check reads the two block by block)
    report = Offsets("offsets", False, "data", shape, axis)
    access = engine.index_access(offsets)
    if access == "now":
        if engine.value_range(xp.astype(bad, xp.int8))[1]:
            raise_first_bad(xp, bad, offsets, report, engine.read_int)
        return result
    try:
        return engine.enforce_lazily(bad, offsets, report, result)
    except ValueError:
        if access != "trace":
            raise
        msg = (
            'bad_indices="error" reads the offsets to decide whether to raise, which are '
            "traced here. Either wrap the function with jax.experimental.checkify.checkify, or "
            'pass bad_indices="unchecked" (offsets then must be valid: for bad ones the result '
            "is unspecified, but nothing outside the arrays is read or written)"
        )
        raise ValueError(msg) from None


def segment_csr(
    data: Any, offsets: Any, *, reduce: str = "sum", bad_indices: Any = "error",
    correction: float = 0, empty_value: Any = None, deterministic: bool = False,
) -> Any:  # fmt: skip
    """The reduction of the segments of `data` that CSR `offsets` mark, like torch_scatter's
    ``segment_csr`` and ``torch.segment_reduce(..., offsets=...)``: segment ``s`` is
    ``data[offsets[s]:offsets[s + 1]]``.

    Parameters
    ----------
    data : array
        The rows, sorted by segment.
    offsets : array of integers, or nested lists of ints
        Shape ``data.shape[:k] + (num_segments + 1,)``: it splits `data` along axis ``k``
        (axis 0 for a 1-d `offsets`; with more dimensions, each leading position has its own
        offsets, as in ``torch_scatter.segment_csr``). Non-decreasing along the last axis,
        in ``[0, data.shape[k]]``; the rows before the first offset and from the last one on
        belong to no segment.
    reduce : str, optional
        The reduction, as ``segment_<reduce>``: ``"sum"``, ``"mean"``, ``"max"``, ``"min"``,
        ``"prod"`` (an empty segment gets the identity: 0 for the sum and the mean, 1, the
        dtype's lowest or highest value), or the toolkit's ``"logsumexp"``, ``"var"``,
        ``"std"``, ``"argmax"``, ``"argmin"`` (the position along axis ``k``; an empty
        segment gets ``data.shape[k]``) and ``"softmax"``, ``"log_softmax"``, whose result
        has the data's shape (a row in no segment: 0 and ``-inf``).
    bad_indices : {"error", "unchecked"}, optional
        ``"error"`` raises ``IndexError`` naming the first offset outside ``[0, n]`` or
        smaller than the one before it (eagerly, when a Dask result is computed, under
        ``checkify``); ``"unchecked"`` promises there is none (for a bad offset the result
        is unspecified, but nothing outside the arrays is read or written).
    correction : int or float, optional
        ``"var"`` and ``"std"``'s degrees of freedom (:func:`segment_var`).
    empty_value : scalar, optional
        The value of an empty segment, for the reductions with one value per segment.
    deterministic : bool, optional
        As for :func:`segment_sum`: a floating sum in one order, the pairwise tree over the
        rows' positions (of the data viewed as ``(prod(data.shape[:k + 1]), ...)``), with
        the same bits on every backend (the sum, mean and product, and the toolkit's sums).

    Returns
    -------
    array
        Shape ``data.shape[:k] + (num_segments,) + data.shape[k + 1:]`` (``data.shape`` for
        ``"softmax"`` and ``"log_softmax"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_csr(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), [0, 2, 2, 5])
    array([ 3.,  0., 12.])
    >>> pg.segment_csr(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), [0, 2, 2, 5], reduce="max")
    array([  2., -inf,   5.])
    >>> pg.segment_csr(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), [0, 2, 2, 5], reduce="argmax")
    array([1, 5, 4])
    >>> pg.segment_csr(np.log(np.array([1.0, 3.0, 2.0])), [0, 2], reduce="softmax")
    array([0.25, 0.75, 0.  ])
    """
    if reduce in _ROW_SHAPED and empty_value is not None:
        msg = (
            f"empty_value is the value of an empty segment, which reduce={reduce!r} has none "
            f"of (its result has the data's shape); got empty_value={empty_value!r}"
        )
        raise ValueError(msg)
    if reduce not in ("var", "std") and not (type(correction) is int and correction == 0):
        msg = f"correction applies to reduce='var' and 'std' only; got correction={correction!r}"
        raise ValueError(msg)
    return _csr(data, offsets, reduce, bad_indices, correction, empty_value, deterministic)
