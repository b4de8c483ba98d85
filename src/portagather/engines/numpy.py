"""NumPy: ``take(mode="clip")`` keeps reads inside at no cost, ``ufunc.at`` scatters, and
large indices run in blocks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._indices import Components, flat_positions
from .._plan import GatherPlan
from .base import Engine, along_rows, position_bytes, winning_positions
from .scatter import NO_PROMISES, ScatterPromises, rows_hold_no_duplicate


class NumPyEngine(Engine):
    """NumPy: ``take(mode="clip")`` keeps reads inside at no cost; its ``take`` converts every
    index width to ``intp`` first, so int32 flat positions would cost an extra pass. Large
    indices are processed in blocks of about ``BLOCK`` elements, so that the temporaries
    (flat positions, masks) stay in cache and the peak memory is the result's."""

    take_clamps = True
    int64_gathers = True
    gathers_checked = True
    array_type = np.ndarray
    #: Index elements per block: each block costs some Python (plan, policy, gather), which
    #: smaller blocks repeat more often, and temporaries that larger ones push out of cache
    #: (the sizes measured are in benchmarks/RESULTS.md, "NumPy blocks").
    BLOCK = 2**18
    #: Index arrays of at most this many elements have their range read as one Python list:
    #: below it, ``tolist`` and Python's ``min``/``max`` cost less than two reductions.
    SMALL = 32

    def flattened(self, x: Any) -> Any:
        # The array's own ravel (reshape(-1)'s values, a view where it can be), without the
        # namespace wrapper's call, which costs a small call more than the ravel.
        return x.ravel()

    def route_keys(self, arrays: tuple[Any, ...]) -> Any:
        return tuple([(x.shape, x.dtype) for x in arrays])

    def divided_by_root(self, total: Any, count: Any) -> Any:
        """As the generic one, by NumPy's own functions (the namespace's, without the
        wrapper's cost per call: a small call of TensorFlow's ``sqrt_n`` pays for each)."""
        return total / along_rows(np.sqrt(np.maximum(count, 1).astype(total.dtype)), total)

    def divided_mean(
        self, total: Any, count: Any, division: str, divide_in: Any, gathered: bool = False
    ) -> Any:  # fmt: skip
        """An eager mean in the data's own dtype (``"plain"``) by NumPy's own functions, as
        :meth:`divided_by_root` (the same steps as the generic one: the count at least 1,
        cast to the dtype, divides along the inner axes by broadcasting); the others by the
        generic one."""
        if division != "plain" or gathered:
            return super().divided_mean(total, count, division, divide_in, gathered)
        return total / along_rows(np.maximum(count, 1).astype(total.dtype), total)

    def full(self, shape: tuple[int, ...], value: float, dtype: Any, like: Any) -> Any:
        # np.full costs four times np.empty and an in-place fill on a small array.
        out = np.empty(shape, dtype=dtype)
        out.fill(value)
        return out

    def merge_rows(self, rows: Any, left: Any, right: Any, op: str) -> Any:
        """``take`` of the two rows (faster than indexing), one ufunc into the first."""
        ufunc = np.add if op == "add" else np.multiply
        merged = np.take(rows, left, axis=0)
        rows[left] = ufunc(merged, np.take(rows, right, axis=0), out=merged)
        return rows

    def take_rows(self, x: Any, positions: Any) -> Any:
        return np.take(x, positions, axis=0)

    def sorted_keys(self, slots: Any, levels: int, wide: Any) -> Any:
        # In place, and NumPy's default kind: distinct keys need no stable sort (the array
        # API's sort is stable, a merge sort here), and the unstable one has SIMD kernels.
        keys = slots.astype(wide)
        keys <<= levels
        keys |= np.arange(keys.shape[0], dtype=wide)
        keys.sort()
        return keys

    def byte_bit_length(self, x: Any, below: int) -> Any:
        if below > 2**24:
            return super().byte_bit_length(x, below)
        # Exact in float32 below 2**24: the bit length is the biased exponent less 126
        # (a zero's -126 wraps to 130 as a byte; no caller has one).
        exponent = x.astype(np.float32).view(np.int32) >> 23
        exponent -= 126
        return exponent.astype(np.uint8)

    def level_buffer(self, values: Any, rows: int) -> Any | None:
        return np.empty((rows, *values.shape[1:]), dtype=values.dtype)

    def copy_into(self, source: Any, out: Any) -> None:
        np.copyto(out, source)

    def combine_into(self, op: str, left: Any, right: Any, out: Any) -> Any:
        return (np.add if op == "add" else np.multiply)(left, right, out=out)

    def index_block_rows(self, data: Any, indices: Any, plan: GatherPlan) -> int:
        if plan.batch_dims or indices.size < 4 * self.BLOCK or indices.ndim < 1 + plan.vector:
            return 0
        # Temporaries are the index's size, and the result's too where a block's result is
        # copied into place or its flat positions are broadcast to the result (along an
        # axis); along axis 0 of C-contiguous params each block is taken straight in.
        straight = plan.kind == "axes" and plan.axis == 0 and data.flags.c_contiguous
        elements = indices.size if straight else max(indices.size, math.prod(plan.out_shape))
        rows = max(1, self.BLOCK * indices.shape[0] // elements)
        return rows if rows < indices.shape[0] else 0

    def wide_index_dtype(self, like: Any = None) -> Any:
        return np.int64

    def clamp(self, values: Any, low: int, high: int) -> Any:
        return np.clip(values, low, high)

    def reads_range_freely(self, x: Any) -> bool:
        return bool(x.size <= self.SMALL)

    counts = True

    def counted(self, x: Any, minlength: int, length: int | None, weights: Any) -> Any | None:
        # np.bincount sums weights in float64 (rounded once to their dtype here), and
        # refuses a negative value itself; a value past the length makes a longer result.
        if weights is not None and weights.dtype.kind not in "fiu":
            return None
        try:
            counts = np.bincount(x.astype(np.intp, copy=False), weights,
                                 minlength=minlength if length is None else length)  # fmt: skip
        except ValueError:
            return None
        if length is not None and counts.shape[0] > length:
            return None
        return counts if weights is None else counts.astype(weights.dtype, copy=False)

    def value_range(self, x: Any) -> tuple[int, int]:
        if x.size <= self.SMALL:
            values = x.ravel().tolist()
            return min(values), max(values)
        return int(x.min()), int(x.max())

    def take(self, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        # The method, which np.take calls after two Python frames (a tiny call feels them).
        return x.take(indices, axis=axis, out=out, mode="clip")

    def checked_gather(
        self, plan: GatherPlan, index_shape: tuple[int, ...], index_dtype: Any, policy: str
    ) -> Callable[[Any, Any], Any | None] | None:
        """A small index (at most :attr:`SMALL` values, of a signed dtype) as NumPy's own
        indexing takes it, which raises on a value past the end. Where NumPy would count a
        negative value from the end and the operation does not (``gather``, ``gather_nd``),
        the index is read as one Python list first, except under ``"unchecked"`` (such a
        value then reads an element inside, which that policy allows)."""
        if not _small_signed(index_shape, index_dtype, self.SMALL):
            return None
        if plan.kind == "along":
            return _take_along_axis(plan)
        if plan.batch_dims or not plan.depth or len(index_shape) == plan.vector:
            return None  # (a 1-d vector's 0-d parts would index a view)
        return _gather_places(plan.axis, plan.depth if plan.vector else 0, policy != "unchecked")

    def checked_scatter(
        self, plan: GatherPlan, index_shape: tuple[int, ...], index_dtype: Any, reduce: str,
        promises: ScatterPromises, policy: str, *, in_place: bool,
    ) -> Callable[[Any, Any, Any], Any | None] | None:  # fmt: skip
        """A small index (as :meth:`checked_gather`) written by NumPy's own indexing
        (``ufunc.at`` for the reductions) into a copy (into `data` itself, with `in_place`).
        ``scatter_d`` and ``put_along_axis`` count negatives from the end as NumPy does, so
        its bounds check serves them as it is (a plan of ``[0, n)``, a front end's, reads
        the index as one Python list first); ``scatter_nd`` and the segment reductions
        read the index as one Python list first. ``"update"`` without the promise of unique
        indices needs the winner of each duplicate settled (:meth:`scatter`): only
        ``scatter_nd``'s, whose index vectors are seen in that list, is served, where no two
        are equal."""
        if not _small_signed(index_shape, index_dtype, self.SMALL):
            return None
        write = _writer(reduce)
        settle = reduce == "update" and not promises.unique_indices
        if plan.kind == "along":
            if settle and plan.axis != len(index_shape) - 1:
                return None  # which duplicate wins is settled by scatter()
            return _scatter_along(plan.axis, write, in_place, settle, plan.allow_negative)
        if plan.batch_dims or not plan.depth:
            return None
        depth = plan.depth if plan.vector else 0
        return _scatter_places(plan.axis, depth, plan.axis_sizes, write, settle, in_place)

    def gather(self, data: Any, components: Components, plan: GatherPlan, out: Any = None) -> Any:
        if plan.kind == "axes":  # dispatched here, not by super(): a tiny call feels a frame
            result = self.gather_axes(data, components, plan, out)
        else:
            result = self.gather_along(data, components, plan, out)
        return result if type(result) is np.ndarray else np.asarray(result)  # not a scalar

    def scatter_at(
        self, data: Any, flat: Any, updates: Any, reduce: str, promises: ScatterPromises,
        *, dropping: bool = True,
    ) -> Any:  # fmt: skip
        return scatter_at(data, flat, updates, reduce, promises, dropping=dropping)

    def filled_empty(self, result: Any, count: Any, fill: Any) -> Any:
        # NumPy's where of the fill as a scalar of the result's dtype, the mask shaped along
        # the leading axes: without the namespace wrapper's where, full_like and broadcast,
        # which a small segment call pays as much as for its reduction.
        return np.where(along_rows(count == 0, result), result.dtype.type(fill), result)

    def fill(self, result: Any, keep: Any, fill: Any) -> Any:
        np.copyto(result, fill, where=~keep)  # the result is new: fill it in place
        return result

    def gather_axes(
        self, params: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """One ``take(mode="clip")`` on C-contiguous params, with the gathered axes merged
        (a view) and no reshape of the index; other params (views: transposed, strided,
        broadcast) by indexing along the original axes, since ``take`` would copy them whole.
        A small index is indexed along the original axes too: one indexing call costs less
        than the flat positions' arithmetic and a ``take``.
        """
        parts = components.values
        if not parts:
            return super().gather_axes(params, components, plan)
        if parts[0].size <= self.SMALL and components.valid:
            if not plan.batch_dims:  # the common small call, in one step
                return params[(slice(None),) * plan.axis + tuple(parts)]
            return self._index_view(params, components, plan)
        if not params.flags.c_contiguous:
            return self._index_view(params, components, plan)
        if plan.batch_dims:
            return super().gather_axes(params, components, plan)
        axis, stop = plan.axis, plan.axis + plan.depth
        flat = self.kept_inside(flat_positions(parts, plan.strides), components, 0)
        if len(parts) > 1:
            shape = params.shape
            params = params.reshape((*shape[:axis], math.prod(shape[axis:stop]), *shape[stop:]))
        if out is not None and out.flags.c_contiguous:
            return params.take(flat, axis=axis, out=out, mode="clip")
        return params.take(flat, axis=axis, mode="clip")

    def gather_along(
        self, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        if x.flags.c_contiguous:
            usable = out if out is not None and out.flags.c_contiguous else None
            return super().gather_along(x, components, plan, usable)
        (index,) = self._inside(components, plan)
        return np.take_along_axis(plan.read_block(x), index, axis=plan.axis)

    def _inside(self, components: Components, plan: GatherPlan) -> list[Any]:
        """The components with every read kept inside the data (0 where ignored), for
        NumPy's indexing, which does not clip."""
        return [
            self.kept_inside(c, components, n - 1, clamp=True)
            for c, n in zip(components.values, plan.axis_sizes, strict=True)
        ]

    def _index_view(self, params: Any, components: Components, plan: GatherPlan) -> Any:
        """``params[β, :, ..., c0, c1, ...]``: NumPy's indexing reads any strides in place."""
        b, outer = plan.batch_dims, plan.axis - plan.batch_dims
        parts = self._inside(components, plan)
        if not b:
            return params[(slice(None),) * outer + tuple(parts)]
        grid = parts[0].ndim - b
        batch = [
            np.arange(params.shape[k]).reshape((1,) * k + (-1,) + (1,) * (b - k - 1 + grid))
            for k in range(b)
        ]
        out = params[tuple([*batch, *(slice(None),) * outer, *parts])]
        if b and outer:  # indices split by slices come first: put the outer axes back
            moved = range(b + grid, b + grid + outer)
            out = np.moveaxis(out, list(moved), list(range(b, b + outer)))
        return out


# The checked kernels (NumPyEngine.checked_gather, checked_scatter): each returns None for a
# call it cannot answer, which then runs through the policy.


def _small_signed(shape: tuple[int, ...], dtype: Any, small: int) -> bool:
    """Whether an index of `shape` and `dtype` is small, not 0-d and of a signed integer
    dtype (NumPy's indexing would wrap an unsigned value past ``2**63`` to a negative one)."""
    return bool(shape) and math.prod(shape) <= small and np.dtype(dtype).kind == "i"


def _reads_negative(indices: Any) -> bool:
    """Whether a small index holds a negative value, read as one Python list (faster than
    NumPy's ``min`` on a few values): for a kernel whose operation takes none."""
    return bool(min(indices.ravel().tolist()) < 0)


def _take_along_axis(plan: GatherPlan) -> Callable[[Any, Any], Any]:
    """``np.take_along_axis`` as one indexing call: the positions on the other axes (a
    broadcast ``arange`` each, made at the route's first call, its shapes being the route's)
    and the index on the plan's axis, whose negative values count from the end as the
    operation's do; where the plan's do not (a front end's, PyTorch's ``[0, n)``), None for a
    negative value (read as one Python list)."""
    grid: list[tuple[Any, ...]] = []
    axis, from_end = plan.axis, plan.allow_negative

    def kernel(data: Any, indices: Any) -> Any:
        if not from_end and _reads_negative(indices):
            return None
        data = plan.read_block(data)  # gather_d with a smaller index reads the leading block
        if not grid:
            grid.append(_axis_positions(data.shape, axis))
        place = grid[0]
        try:
            return data[place[:axis] + (indices,) + place[axis + 1 :]]
        except IndexError:
            return None

    return kernel


def _axis_positions(shape: tuple[int, ...], axis: int) -> tuple[Any, ...]:
    """Each axis's positions, shaped to broadcast along it (``np.ix_``'s; `axis`'s unused)."""
    ndim = len(shape)
    return tuple(
        np.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1)) if d != axis else None
        for d, n in enumerate(shape)
    )


def _parts(indices: Any, depth: int) -> tuple[Any, ...]:
    """The components of index vectors along the last axis of `indices` (depth 0: the
    index itself, one component)."""
    if not depth:
        return (indices,)
    if depth == 2:  # the common pair, without a loop
        return indices[..., 0], indices[..., 1]
    return tuple([indices[..., k] for k in range(depth)])


def _gather_places(axis: int, depth: int, checked: bool) -> Callable[[Any, Any], Any]:
    """NumPy's indexing at the components after `axis` full slices; with `checked`, None
    where a value is negative (read as one Python list)."""
    lead = (slice(None),) * axis

    def kernel(data: Any, indices: Any) -> Any:
        if checked and _reads_negative(indices):
            return None
        try:
            return data[lead + _parts(indices, depth)]
        except IndexError:
            return None

    return kernel


def _scatter_places(
    axis: int, depth: int, sizes: tuple[int, ...], write: Callable[..., None], settle: bool,
    in_place: bool,
) -> Callable[[Any, Any, Any], Any]:  # fmt: skip
    """The updates written at the components after `axis` full slices, where each is in
    ``[0, n)`` (and, with `settle`, no two index vectors are equal), read as Python lists."""
    lead = (slice(None),) * axis

    def kernel(data: Any, indices: Any, updates: Any) -> Any:
        columns = indices.reshape(-1, depth).T.tolist() if depth else [indices.ravel().tolist()]
        for values, n in zip(columns, sizes, strict=True):
            if min(values) < 0 or max(values) >= n:
                return None
        if settle:
            targets = list(zip(*columns, strict=True))
            if len(set(targets)) < len(targets):
                return None  # duplicates: which one wins is settled by scatter()
        out = data if in_place else np.array(data, order="C")
        write(out, lead + _parts(indices, depth), updates)
        return out

    return kernel


def _scatter_along(
    axis: int, write: Callable[..., None], in_place: bool, settle: bool, from_end: bool
) -> Callable[[Any, Any, Any], Any]:
    """``scatter_d`` / ``put_along_axis`` as one indexing call (``ufunc.at`` for the
    reductions), positions as in :func:`_take_along_axis` over the updates' shape: NumPy
    counts a negative index from the end, as these operations do (`from_end`; else None for
    a negative value, read as one Python list), and raises on one out of range (or on a
    position past the data's end on another axis), writing only into the new result. With
    `settle` (``"update"`` along the last axis without the promise of unique indices), only
    an index whose rows hold no duplicate and no negative value."""
    grid: list[tuple[Any, ...]] = []

    def kernel(data: Any, indices: Any, updates: Any) -> Any:
        if not from_end and _reads_negative(indices):
            return None
        if settle and not rows_hold_no_duplicate(indices, indices.shape[-1]):
            return None  # duplicates along the last axis: scatter() settles the winners
        if not grid:
            grid.append(_axis_positions(updates.shape, axis))
        place = grid[0][:axis] + (indices,) + grid[0][axis + 1 :]
        out = data if in_place else np.array(data, order="C")
        try:
            write(out, place, updates)
        except IndexError:
            return None
        return out

    return kernel


def _writer(reduce: str) -> Callable[[Any, tuple[Any, ...], Any], None]:
    """``write(out, place, updates)``: assignment for ``"update"``, else the reduction's
    ``ufunc.at``."""
    if reduce == "update":
        return _assign
    at = UFUNCS[reduce].at
    if reduce not in ("min", "max"):
        return at

    def quiet(out: Any, place: tuple[Any, ...], updates: Any) -> None:
        with np.errstate(invalid="ignore"):  # a NaN propagated is the answer, not a fault
            at(out, place, updates)

    return quiet


def _assign(out: Any, place: tuple[Any, ...], updates: Any) -> None:
    out[place] = updates


#: The ufunc of each reduction, applied by ``ufunc.at`` (every duplicate combined).
UFUNCS = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def scatter_at(
    data: Any, flat: Any, updates: Any, reduce: str, promises: ScatterPromises = NO_PROMISES,
    *, dropping: bool = True,
) -> Any:  # fmt: skip
    """A new array: NumPy array `data` with `updates` combined by `reduce` at flat positions
    `flat`, where ``data.size`` drops an update if `dropping` (only then is the result made
    in a buffer one element longer, whose last element takes the dropped updates).

    The reductions are one ``ufunc.at``, which combines every duplicate. ``"update"``
    writes the updates, then settles which duplicate wins (:func:`_settle_last_writes`),
    unless the caller promised unique targets."""
    size = math.prod(data.shape)
    if dropping:
        line = np.empty(size + 1, dtype=data.dtype)
        out = line[:size].reshape(data.shape)
        out[...] = data  # new and writable, whatever data was (a view, read-only)
        if reduce in ("add", "multiply") and data.dtype.kind in "fc":
            # A quiet NaN, which every sum and product of dropped updates leaves as it is:
            # from a value of the data they could overflow, and NumPy would warn of it.
            line[size] = np.nan
        elif size:
            line[size] = line[0]  # a value of the data: no NaN or junk for ufunc.at to meet
    else:
        out = np.array(data, order="C")  # a new C-order copy, whatever data was
        line = out.reshape(-1)  # a view
    flat, updates = flat.reshape(-1), updates.reshape(-1)
    if reduce != "update":
        # maximum.at and minimum.at flag a NaN they propagate as an invalid operation (their
        # elementwise forms do not): the NaN is the promised answer, not a fault.
        with np.errstate(invalid="ignore"):
            UFUNCS[reduce].at(line, flat, updates)
        return out
    line[flat] = updates
    if not promises.unique_indices:
        _settle_last_writes(line, flat, updates, size if dropping else None)
    return out


def _settle_last_writes(line: Any, flat: Any, updates: Any, dropped_at: int | None) -> None:
    """Make every target of `line` (1-d, written with ``line[flat] = updates`` already) hold
    its last update, in the order of `updates`, whatever order NumPy wrote them in.

    Where every update reads back its own bits (:func:`_reads_back`), each target holds a
    value that all its updates share: the last one's, proved. Otherwise the winners are
    settled (:func:`~.base.winning_positions`, ``maximum.at`` for the maximum) in the
    result's own storage, viewed as integers of its width where the positions fit (the
    targets' values are written again afterwards; only the touched elements are used), or
    else in a scratch. Every update then writes its target's winner, so duplicates write
    equal values and the order is moot."""
    if _reads_back(line, flat, updates, dropped_at):
        return
    count = flat.shape[0]
    width = position_bytes(count)
    itemsize = line.dtype.itemsize
    if line.dtype.kind in "iufc" and itemsize in (4, 8) and itemsize >= width:
        ints = line.view(np.int32 if itemsize == 4 else np.int64)
    else:  # bool, 16-bit, complex128, strings, objects (never viewed: they hold references)
        ints = np.empty(line.shape[0], dtype=np.int32 if width == 4 else np.int64)

    def write(positions: Any) -> None:
        ints[flat] = positions

    def settle(positions: Any) -> None:  # maximum.at combines every duplicate
        np.maximum.at(ints, flat, positions)

    won = winning_positions(np.arange(count, dtype=ints.dtype), write, lambda: ints[flat], settle)
    line[flat] = updates[won]  # never None: no `unique` asked (_reads_back has looked)


def _reads_back(line: Any, flat: Any, updates: Any, dropped_at: int | None) -> bool:
    """Whether each update reads back its own bits at its target (bits, not values: -0.0
    and 0.0, or two NaNs, are different updates); updates dropped at `dropped_at` are left
    out. False for dtypes whose bits cannot be viewed (objects)."""
    itemsize = line.dtype.itemsize
    unit = next(u for u in (8, 4, 2, 1) if itemsize % u == 0) if itemsize else 1
    bits = np.dtype(f"u{unit}")
    try:
        got = line[flat].view(bits)
        want = updates.view(bits) if unit == itemsize else np.ascontiguousarray(updates).view(bits)
    except (TypeError, ValueError):  # objects, or dtypes holding them
        return False
    same = got == want
    if unit != itemsize:
        same = same.reshape(flat.shape[0], itemsize // unit).all(axis=1)
    if dropped_at is not None:
        same |= flat == dropped_at
    return bool(same.all())
