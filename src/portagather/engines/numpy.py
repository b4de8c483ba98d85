"""NumPy: ``take(mode="clip")`` keeps reads inside at no cost, ``ufunc.at`` scatters, and
large indices run in blocks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._indices import Components, flat_positions
from .._plan import GatherPlan
from .base import Engine


class NumPyEngine(Engine):
    """NumPy: ``take(mode="clip")`` keeps reads inside at no cost; its ``take`` converts every
    index width to ``intp`` first, so int32 flat positions would cost an extra pass. Large
    indices are processed in blocks of about ``BLOCK`` elements, so that the temporaries
    (flat positions, masks) stay in cache and the peak memory is the result's."""

    take_clamps = True
    int64_gathers = True
    #: Index elements per block: each block costs some Python (plan, policy, gather), which
    #: smaller blocks repeat more often, and temporaries that larger ones push out of cache
    #: (the sizes measured are in benchmarks/RESULTS.md, "NumPy blocks").
    BLOCK = 2**18
    #: Index arrays of at most this many elements have their range read as one Python list:
    #: below it, ``tolist`` and Python's ``min``/``max`` cost less than two reductions.
    SMALL = 32

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

    def value_range(self, x: Any) -> tuple[int, int]:
        if x.size <= self.SMALL:
            values = x.ravel().tolist()
            return min(values), max(values)
        return int(x.min()), int(x.max())

    def take(self, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        # The method, which np.take calls after two Python frames (a tiny call feels them).
        return x.take(indices, axis=axis, out=out, mode="clip")

    def gather(self, data: Any, components: Components, plan: GatherPlan, out: Any = None) -> Any:
        if plan.kind == "axes":  # dispatched here, not by super(): a tiny call feels a frame
            result = self.gather_axes(data, components, plan, out)
        else:
            result = self.gather_along(data, components, plan, out)
        return result if type(result) is np.ndarray else np.asarray(result)  # not a scalar

    def scatter_at(self, data: Any, flat: Any, updates: Any, reduce: str) -> Any:
        return scatter_at(data, flat, updates, reduce)

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


def scatter_at(data: Any, flat: Any, updates: Any, reduce: str) -> Any:
    """A new array: NumPy array `data` with `updates` combined by `reduce` at flat positions
    `flat` (``data.size`` drops an update): ``ufunc.at`` for the reductions; under
    ``"update"``, one write of each element's last update (:func:`last_writes`), so
    duplicates never depend on write order.

    The result is written in a buffer one element longer than the data: dropped updates
    and the losers under ``"update"`` land in that last element, so nothing is compressed
    out of `flat` and `updates`."""
    size = math.prod(data.shape)
    buffer = np.empty(size + 1, dtype=data.dtype)
    out = buffer[:size].reshape(data.shape)
    out[...] = data  # new and writable, whatever data was (a view, read-only)
    buffer[size] = buffer[0]  # a value of the data: no NaN or junk for ufunc.at to meet
    flat, updates = flat.reshape(-1), updates.reshape(-1)
    if reduce == "update":
        won = last_writes(size + 1, flat)
        buffer[np.where(won, flat, size)] = updates
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
        # maximum.at and minimum.at flag a NaN they propagate as an invalid operation (their
        # elementwise forms do not): the NaN is the promised answer, not a fault.
        with np.errstate(invalid="ignore"):
            ufunc[reduce].at(buffer, flat, updates)
    return out


def last_writes(size: int, flat: Any) -> Any:
    """True at the last occurrence of each position in `flat` (1-d, in ``[0, size)``).

    The positions 0, 1, ... are written at `flat` into an uninitialised buffer (only the
    touched pages are ever allocated) and read back: where every update reads back a
    position at least its own, the buffer holds each element's last update; otherwise
    ``maximum.at`` settles it. Either way the winners are checked, not assumed from the
    order in which NumPy writes.
    """
    count = flat.shape[0]
    positions = np.arange(count, dtype=np.int32 if count < 2**31 else np.int64)
    winner = np.empty(size, dtype=positions.dtype)
    winner[flat] = positions
    won = winner[flat]
    if (won < positions).any():
        np.maximum.at(winner, flat, positions)
        won = winner[flat]
    return won == positions
