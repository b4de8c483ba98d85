"""The CSR form of the segment reductions, ``segment_csr``: segments given by offsets into
sorted rows (``torch_scatter.segment_csr``). The offsets become segment ids (one
``searchsorted`` of every row position in the offsets), which ``_segment`` reduces, with the
rows outside every segment dropped.
"""

from __future__ import annotations

import math
from typing import Any

import array_api_compat as aac

from ._api import segment_reduce
from ._arguments import CsrRoute, csr_call
from ._arrays import device_for_new, searchsorted_positions
from ._errors import raise_first_bad
from ._indices import to_wide
from ._plan import Offsets
from .engines import Engine


def _csr(
    data: Any, offsets: Any, reduce: object, bad_indices: object, deterministic: object = False
) -> Any:
    """The segment reduction of `data` split by CSR `offsets` (see :func:`segment_csr`)."""
    checked, data, offsets = csr_call(data, offsets, reduce, bad_indices, deterministic)
    xp, engine, shape, axis = checked.xp, checked.engine, checked.shape, checked.axis
    function = f'segment_csr(reduce="{checked.reduce}")'
    offsets = engine.laid_out(offsets)
    data = engine.laid_out(data)
    rows = xp.reshape(data, (math.prod(shape[: axis + 1]), *shape[axis + 1 :]))
    result_shape = (*shape[:axis], checked.segments, *shape[axis + 1 :])
    on_host = _ids_on_host(checked, offsets)
    if on_host is not None:  # valid offsets, read now: no check left
        ids, policy = on_host
        reduced = segment_reduce(
            rows, ids, math.prod(shape[:axis]) * checked.segments, checked.reduce,
            indices_are_sorted=True, bad_indices=policy, function=function,
            deterministic=deterministic,
        )  # fmt: skip
        return xp.reshape(reduced, result_shape)
    ids, count = _ids_from_offsets(xp, engine, offsets, shape, axis, rows)
    reduced = segment_reduce(
        rows, ids, count, checked.reduce, indices_are_sorted=True, bad_indices="ignore",
        function=function, deterministic=deterministic,
    )  # fmt: skip
    result = xp.reshape(reduced, result_shape)
    if checked.policy == "error":
        result = _enforce_offsets(xp, engine, offsets, shape, axis, result)
    return result


#: The most rows whose ids :func:`_ids_on_host` writes as a Python list.
_HOST_ROWS = 256


def _ids_on_host(checked: CsrRoute, offsets: Any) -> tuple[Any, str] | None:
    """For a small call whose offsets the host reads cheaply: the segment id of every row
    (as :func:`_ids_from_offsets`, written as a Python list) and the policy that reduces
    them (``"unchecked"`` where every row is in a segment, else ``"ignore"``, which drops
    the others), where every offset is valid; else None (the array steps, which raise on a
    bad offset under ``"error"``)."""
    shape, axis, engine = checked.shape, checked.axis, checked.engine
    n, batches = shape[axis], math.prod(shape[:axis])
    if batches * n > _HOST_ROWS or engine.array_type is None:  # (NumPy's and torch's tolist)
        return None
    if engine.index_access(offsets) != "now" or not engine.reads_cheaply(offsets):
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
) -> tuple[Any, int]:
    """The segment id of every row of data viewed as ``(prod(shape[:axis + 1]), ...)``, -1 for
    a row in no segment, and the number of segments over all batches.

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
    if aac.is_dask_array(rows):  # the ids in the rows' chunks of the data
        positions = positions.rechunk(rows.chunks[:1])
    position = searchsorted_positions(xp, flat, positions, "right") - 1
    batch = xp.floor_divide(position, line)
    entry = position - batch * line
    inside = (position >= 0) & (entry < segments)
    ids = xp.where(inside, batch * segments + entry, xp.full_like(position, -1))
    return ids, batches * segments


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
        if aac.is_dask_array(bad):  # the lazy check reads bad and offsets block by block
            bad = bad.rechunk(offsets.chunks)
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
    deterministic: bool = False,
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
    reduce : {"sum", "mean", "max", "min", "prod"}, optional
        The reduction, as ``segment_<reduce>``: an empty segment gets its identity (0 for the
        sum and the mean, 1, the dtype's lowest or highest value).
    bad_indices : {"error", "unchecked"}, optional
        ``"error"`` raises ``IndexError`` naming the first offset outside ``[0, n]`` or
        smaller than the one before it (eagerly, when a Dask result is computed, under
        ``checkify``); ``"unchecked"`` promises there is none (for a bad offset the result
        is unspecified, but nothing outside the arrays is read or written).
    deterministic : bool, optional
        As for :func:`segment_sum`: a floating sum, mean or product in one order, the
        pairwise tree over the rows' positions (of the data viewed as
        ``(prod(data.shape[:k + 1]), ...)``), with the same bits on every backend.

    Returns
    -------
    array
        Shape ``data.shape[:k] + (num_segments,) + data.shape[k + 1:]``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_csr(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), [0, 2, 2, 5])
    array([ 3.,  0., 12.])
    >>> pg.segment_csr(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), [0, 2, 2, 5], reduce="max")
    array([  2., -inf,   5.])
    """
    return _csr(data, offsets, reduce, bad_indices, deterministic)
