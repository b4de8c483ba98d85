"""The CSR form of the segment reductions, ``segment_csr``: segments given by offsets into
sorted rows (``torch_scatter.segment_csr``). The offsets become segment ids (one
``searchsorted`` of every row position in the offsets), which ``_segment`` reduces, with the
rows outside every segment dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arguments import _numpy_dtype, _Pair
from ._arrays import device_for_new, searchsorted_positions, static_shape
from ._errors import BadIndex, raise_first_bad
from ._indices import to_wide
from ._routes import call_key, find, keep
from ._segment import SEGMENT_REDUCTIONS, check_dtype, segment_reduce
from .engines import Engine, engine_for


@dataclass(frozen=True)
class Offsets(BadIndex):
    """A bad CSR offset: outside ``[0, n]`` or smaller than the one before it; `data_shape`
    is the data's shape and `axis` the axis the offsets split."""

    def valid_range_text(self) -> str:
        n = self.data_shape[self.axis]
        return (
            f"is outside [0, {n}] or smaller than the offset before it (offsets must be "
            f"non-decreasing along their last axis, in [0, data.shape[{self.axis}]] = [0, {n}])"
        )


_CSR_POLICIES = {"error": "error", "ERROR": "error", "unchecked": "unchecked"}


@dataclass(frozen=True, slots=True)
class _Checked:
    """What the checks of one ``segment_csr`` signature found, kept for its repeat calls
    (``_routes``): the namespace, its engine, the reduction, the policy, the data's shape,
    the axis the offsets split and the offsets' shape."""

    xp: Any
    engine: Engine
    reduce: str
    policy: str
    shape: tuple[int, ...]
    axis: int
    offsets_shape: tuple[int, ...]

    @property
    def segments(self) -> int:
        """The number of segments of each batch."""
        return self.offsets_shape[-1] - 1


def _check(
    data: Any, offsets: Any, reduce: object, bad_indices: object
) -> tuple[_Checked, Any, Any]:
    """Every argument checked, in the one order: the options, the kinds, the dtypes, the
    shapes. The data and the offsets come back as arrays of one namespace."""
    if not isinstance(reduce, str) or reduce not in SEGMENT_REDUCTIONS:
        valid = ", ".join(repr(r) for r in SEGMENT_REDUCTIONS)
        msg = f"reduce must be one of {valid}; got {reduce!r}"
        raise ValueError(msg)
    if not isinstance(bad_indices, str) or bad_indices not in _CSR_POLICIES:
        msg = (
            "bad_indices must be 'error' or 'unchecked' for offsets (a bad offset has no "
            f"segment to drop, clip or wrap to); got {bad_indices!r}"
        )
        raise ValueError(msg)
    policy = _CSR_POLICIES[bad_indices]
    pair = _Pair(data, offsets, "data", "offsets")
    data = pair.data_array()
    xp = pair.xp
    pair.check_index_dtype()
    check_dtype(xp, reduce, data.dtype, f'segment_csr(reduce="{reduce}")')
    shape, offset_shape = static_shape(data, "data"), static_shape(pair.indices, "offsets")
    axis = len(offset_shape) - 1
    if axis < 0 or axis >= len(shape) or offset_shape[:axis] != shape[:axis]:
        msg = (
            "offsets must have at least 1 dimension and, before its last one, the leading "
            "dimensions of data (offsets.shape = data.shape[:k] + (num_segments + 1,), which "
            f"splits data along axis k); got offsets.shape = {offset_shape} and data.shape = "
            f"{shape}"
        )
        raise ValueError(msg)
    if offset_shape[-1] < 1:
        msg = "offsets must hold at least one offset along its last axis; got none"
        raise ValueError(msg)
    engine = engine_for(xp)
    if pair.from_values[1]:
        offsets = _offset_values(xp, engine, pair.indices, data, shape, axis, policy)
    else:
        offsets = pair.indices
    checked = _Checked(xp, engine, reduce, policy, shape, axis, offset_shape)
    return checked, data, offsets


def _csr(data: Any, offsets: Any, reduce: object, bad_indices: object) -> Any:
    """The segment reduction of `data` split by CSR `offsets` (see :func:`segment_csr`)."""
    key = call_key((type(reduce), reduce, type(bad_indices), bad_indices), data, offsets)
    checked = find(key)
    if checked is None:
        checked, data, offsets = _check(data, offsets, reduce, bad_indices)
        keep(key, checked)
    xp, engine, shape, axis = checked.xp, checked.engine, checked.shape, checked.axis
    function = f'segment_csr(reduce="{checked.reduce}")'
    offsets = engine.index_array(offsets)
    data = engine.without_empty_blocks(data)
    rows = xp.reshape(data, (math.prod(shape[: axis + 1]), *shape[axis + 1 :]))
    result_shape = (*shape[:axis], checked.segments, *shape[axis + 1 :])
    on_host = _ids_on_host(checked, offsets)
    if on_host is not None:  # valid offsets, read now: no check left
        ids, policy = on_host
        reduced = segment_reduce(
            rows, ids, math.prod(shape[:axis]) * checked.segments, checked.reduce,
            indices_are_sorted=True, bad_indices=policy, function=function,
        )  # fmt: skip
        return xp.reshape(reduced, result_shape)
    ids, count = _ids_from_offsets(xp, engine, offsets, shape, axis, rows)
    reduced = segment_reduce(
        rows, ids, count, checked.reduce, indices_are_sorted=True, bad_indices="ignore",
        function=function,
    )  # fmt: skip
    result = xp.reshape(reduced, result_shape)
    if checked.policy == "error":
        result = _enforce_offsets(xp, engine, offsets, shape, axis, result)
    return result


#: The most rows whose ids :func:`_ids_on_host` writes as a Python list.
_HOST_ROWS = 256


def _ids_on_host(checked: _Checked, offsets: Any) -> tuple[Any, str] | None:
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


def _offset_values(
    xp: Any, engine: Engine, values: Any, data: Any, shape: tuple[int, ...], axis: int,
    policy: str,
) -> Any:  # fmt: skip
    """Offsets given as Python values (a NumPy array; exact ints, objects past int64) as an
    array of the widest integer of the data's device. A value that dtype does not hold is
    past every axis of that device, so a bad offset: ``"error"`` raises the IndexError of the
    first bad offset now, naming it as written; ``"unchecked"`` clips it into the dtype."""
    held = _numpy_dtype(engine.wide_index_dtype(data))
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


def segment_csr(data: Any, offsets: Any, *, reduce: str = "sum", bad_indices: Any = "error") -> Any:
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
    return _csr(data, offsets, reduce, bad_indices)
