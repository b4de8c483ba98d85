"""PyTorch: ``index_select``, ``gather`` and ``scatter_reduce_``, whose own bounds checks on
the CPU stand in for portagather's where every index is valid."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from .._errors import BadIndex
from .._indices import Components, IndexAccess
from .._plan import GatherPlan
from ._torch_private import batched_by_vmap
from .base import Engine, along_rows
from .scatter import ScatterPromises, rows_hold_no_duplicate
from .torch_scatter import SIGNED_TWIN, TORCH_REDUCE, compiling, scatter_along

#: Why ``"error"`` cannot be exported: the index is symbolic while ``torch.export`` traces.
_EXPORT_READS_VALUES = (
    'bad_indices="error" reads index values to decide whether to raise, which torch.export '
    "cannot put in an exported program (its inputs have no values while it is traced); pass "
    'bad_indices="ignore", "clip", "wrap" or "unchecked", or check the indices before '
    "calling the exported program"
)


class TorchEngine(Engine):
    """PyTorch: ``index_select`` and ``gather`` want int64 and have no kernels for uint16, 32
    and 64 (those are gathered as the signed type of the same width); ``aminmax`` reads the
    range in one pass (a small index: ``tolist``); values are read only on the CPU, and under
    ``torch.compile`` only by breaking the graph, and never under ``torch.export`` or
    ``torch.func.vmap``. Every PyTorch call has a fixed cost, so a small call is made of as
    few of them as it can be.

    On the CPU, torch's gathers and scatters check every index value themselves and raise,
    reading and writing nothing outside, on one out of range. Where such a kernel computes
    the whole answer, it is handed the caller's index first (:func:`_unless_out_of_range`):
    only index values, never the plan, say whether that succeeds, and a valid index, the
    common case, then costs no pass of portagather's.
    """

    int64_gathers = True
    gathers_checked = True
    array_type = torch.Tensor
    #: Index tensors of at most this many elements: range read with ``tolist``, and gathered
    #: by one indexing call when valid.
    SMALL = 32

    def _small(self, x: Any) -> bool:
        """Whether tensor `x` holds at most :attr:`SMALL` elements; never where its size is
        symbolic (``torch.export``'s dynamic dimensions), which a comparison would fix."""
        size = x.numel()
        return type(size) is int and size <= self.SMALL

    def divided_by_root(self, total: Any, count: Any) -> Any:
        """As the generic one, by the tensors' own methods (the namespace's, without the
        wrapper's cost per call: a small call of TensorFlow's ``sqrt_n`` pays for each)."""
        return total / along_rows(count.clamp(min=1).to(total.dtype).sqrt(), total)

    def flattened(self, x: Any) -> Any:
        # The array's own ravel (reshape(-1)'s values, a view where it can be), without the
        # namespace wrapper's call, which costs a small call more than the ravel.
        return x.ravel()

    def divided_mean(
        self, total: Any, count: Any, division: str, divide_in: Any, gathered: bool = False
    ) -> Any:  # fmt: skip
        """An eager mean in the data's own dtype (``"plain"``) by the tensors' own methods, as
        :meth:`divided_by_root` (the generic one's steps: the count at least 1, cast to the
        dtype, divides along the inner axes by broadcasting); the others by the generic
        one."""
        if division != "plain" or gathered:
            return super().divided_mean(total, count, division, divide_in, gathered)
        return total / along_rows(count.clamp(min=1).to(total.dtype), total)

    def filled_empty(self, result: Any, count: Any, fill: Any) -> Any:
        # The tensor's own masked_fill, out of place (a max's or min's backward reads its
        # result), the mask shaped along the leading axes: without the namespace wrapper's
        # where, full_like and broadcast. It has no kernels for uint16/32/64.
        if result.dtype in SIGNED_TWIN:
            return super().filled_empty(result, count, fill)
        return result.masked_fill(along_rows(count == 0, result), fill)

    def route_keys(self, arrays: tuple[Any, ...]) -> Any:
        # Under torch.compile every call is traced anew: Dynamo keeps its own guards.
        return None if compiling() else tuple([(x.shape, x.dtype, x.device) for x in arrays])

    def index_access(self, x: Any) -> IndexAccess:
        if compiling():  # torch.export's have no values; torch.compile reads by a graph break
            return "none" if torch.compiler.is_exporting() else "now"
        return "none" if batched_by_vmap(x) else "now"

    def reads_cheaply(self, x: Any) -> bool:
        return bool(x.is_cpu and not compiling() and not batched_by_vmap(x))

    def enforce_lazily(
        self, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """An index under ``torch.export`` or batched by ``torch.func.vmap`` (the PyTorch
        tensors whose values cannot be read)."""
        if torch.compiler.is_exporting():
            raise ValueError(_EXPORT_READS_VALUES)
        msg = (
            'bad_indices="error" reads index values to decide whether to raise, which '
            "torch.func.vmap cannot (its batched tensors have no values to read); check the "
            'indices outside vmap, or pass bad_indices="ignore", "clip", "wrap" or "unchecked"'
        )
        raise ValueError(msg)

    def reads_range_freely(self, x: Any) -> bool:
        return self._small(x)

    def vector_components(self, values: Any, depth: int) -> list[Any]:
        return list(values.unbind(-1))  # one call for all of them

    def wide_index_dtype(self, like: Any = None) -> Any:
        return torch.int64

    def clamp(self, values: Any, low: int, high: int) -> Any:
        return torch.clamp(values, low, high)

    counts = True

    def counted(self, x: Any, minlength: int, length: int | None, weights: Any) -> Any | None:
        # torch.bincount refuses a negative value itself (its RuntimeError); a value past
        # the length makes a longer result. No kernel for integer weights; float16 weights
        # sum in float64 (rounded once to their dtype here).
        if compiling() or (weights is not None and not weights.dtype.is_floating_point):
            return None
        try:
            counts = torch.bincount(x.to(torch.int64), weights,
                                    minlength=minlength if length is None else length)  # fmt: skip
        except RuntimeError:
            return None
        if length is not None and counts.shape[0] > length:
            return None
        return counts if weights is None else counts.to(weights.dtype)

    def value_range(self, x: Any) -> tuple[int, int]:
        if torch.compiler.is_exporting():  # (compiling too): no graph break to fall back on
            raise ValueError(_EXPORT_READS_VALUES)
        if torch.compiler.is_compiling():
            # Under torch.compile this raise breaks the graph, and the frame runs eagerly
            # (where the check reads the values); with fullgraph=True Dynamo reports it.
            msg = (
                'bad_indices="error" reads index values to decide whether to raise, which '
                "torch.compile(fullgraph=True) cannot put in a graph; compile without "
                "fullgraph=True (the check then runs eagerly between graphs), or pass "
                'bad_indices="ignore", "clip", "wrap" or "unchecked"'
            )
            raise ValueError(msg)
        if x.numel() <= self.SMALL:
            values = x.tolist()
            if x.ndim == 0:
                return values, values
            for _ in range(x.ndim - 1):
                values = list(itertools.chain.from_iterable(values))
            return min(values), max(values)
        low, high = torch.aminmax(x)
        return int(low), int(high)

    def read_int(self, value: Any) -> int:
        if value.dtype == torch.uint64:  # torch converts no uint64 value >= 2**63 to an int
            return int(value.view(torch.int64)) % 2**64
        return int(value)

    def empty(self, data: Any, shape: tuple[int, ...]) -> Any:
        # A slice of params, not new zeros: the result stays in the autograd graph, as
        # torch's own indexing does.
        return data.reshape(-1)[:0].reshape(shape)

    def keeps_reads_inside(self, values: Any) -> bool:
        return self.reads_cheaply(values)  # see gather

    def checked_gather(
        self, plan: GatherPlan, index_shape: tuple[int, ...], index_dtype: Any, policy: str
    ) -> Callable[[Any, Any], Any | None] | None:
        """:meth:`_gather_if_valid` for the route's plan, where the index is int64; along an
        axis, where the index has the result's shape, ``torch.gather`` itself."""
        if index_dtype != torch.int64 or plan.batch_dims or not plan.depth:
            return None
        if plan.kind == "along":
            if tuple(index_shape) != plan.out_shape or not index_shape:
                return None
            return functools.partial(self._gather_along, axis=plan.axis)
        return functools.partial(self._gather_if_valid, plan=plan)

    def _checks_itself(self, data: Any, indices: Any) -> bool:
        """Whether torch's own kernels check every value of `indices` into `data`: on the
        CPU (a GPU asserts instead), where the values read now (no vmap, no compile), and
        for a dtype torch has kernels of (not the unsigned ones, written through a twin)."""
        return bool(data.is_cpu and self.reads_cheaply(indices) and data.dtype not in SIGNED_TWIN)

    def _gather_along(self, data: Any, indices: Any, axis: int) -> Any | None:
        """``torch.gather``, which raises on a value not in ``[0, n)`` (negatives included)
        and on an index longer than the data on another axis, reading nothing outside."""
        if not self._checks_itself(data, indices):
            return None
        return _unless_out_of_range(torch.gather, data, axis, indices)

    def checked_scatter(
        self, plan: GatherPlan, index_shape: tuple[int, ...], index_dtype: Any, reduce: str,
        promises: ScatterPromises, policy: str, *, in_place: bool,
    ) -> Callable[[Any, Any, Any], Any | None] | None:  # fmt: skip
        """:meth:`_scatter_if_valid` for the route's plan, where the index is int64."""
        if index_dtype != torch.int64 or plan.batch_dims or not plan.depth:
            return None
        if not plan.vector and plan.axis == 0 and reduce != "update":  # a segment reduction
            return functools.partial(self._reduce_rows, reduce=reduce, in_place=in_place)
        checked = functools.partial(
            self._scatter_if_valid, plan=plan, reduce=reduce, promises=promises
        )
        along = plan.kind == "along" and tuple(index_shape) == plan.out_shape and index_shape
        if not along or (promises.unique_indices and reduce in ("min", "max")):
            # (Under the promise, min and max read, combine and write: faster on the CPU
            # than scatter_reduce_, and what _scatter_if_valid's scatter_along does.)
            return checked
        if reduce == "update" and not promises.unique_indices:  # a winner to settle
            if plan.axis != len(index_shape) - 1:
                return checked
            return functools.partial(self._update_along, axis=plan.axis, checked=checked)
        return functools.partial(self._reduce_along, axis=plan.axis, reduce=reduce)

    def full(self, shape: tuple[int, ...], value: float, dtype: Any, like: Any) -> Any:
        return torch.full(shape, value, dtype=dtype, device=like.device)

    def _update_along(
        self, data: Any, indices: Any, updates: Any, axis: int, checked: Callable[..., Any]
    ) -> Any | None:
        """``"update"`` along the last axis without the promise of unique indices: a small
        index whose rows hold no duplicate, read as Python lists, has no winner to settle
        (:meth:`_reduce_along`); any other index goes to `checked`
        (:meth:`_scatter_if_valid`, whose scatter settles the winners)."""
        if not (data.is_cpu and self.reads_cheaply(indices)):
            return None
        if self._small(indices) and rows_hold_no_duplicate(indices, indices.shape[-1]):
            return self._reduce_along(data, indices, updates, axis, "update")
        return checked(data, indices, updates)

    def _reduce_along(
        self, data: Any, indices: Any, updates: Any, axis: int, reduce: str
    ) -> Any | None:
        """``scatter_d`` / ``put_along_axis`` at an index of the updates' shape by one
        ``scatter_``, ``scatter_add_`` or ``scatter_reduce_`` into a copy: torch raises on any
        value not in ``[0, n)`` (a negative one, which these operations count from the end,
        goes through the policy) and on an index longer than the data on another axis,
        having written only into the copy. ``"update"`` only where no target has two
        updates (torch says not which one wins)."""
        if not self._checks_itself(data, indices):
            return None
        out = data.clone()
        try:
            if reduce == "update":
                return out.scatter_(axis, indices, updates)
            if reduce == "add":
                return out.scatter_add_(axis, indices, updates)
            return out.scatter_reduce_(axis, indices, updates, TORCH_REDUCE[reduce])
        except (IndexError, RuntimeError):
            return None

    def _reduce_rows(
        self, data: Any, ids: Any, updates: Any, reduce: str, in_place: bool
    ) -> Any | None:
        """The rows of `updates` combined into rows `ids` of `data` (a segment reduction) by
        one ``index_add_`` or ``scatter_reduce_``, which raise on any id not in ``[0, n)``,
        negatives included, having written only into the result (`data` itself, with
        `in_place`: the pipeline's new identity array)."""
        if not self._checks_itself(data, ids):
            return None
        rows = ids.reshape(-1) if ids.ndim != 1 else ids
        if updates.ndim != data.ndim:
            updates = updates.reshape(rows.shape[0], *data.shape[1:])
        out = data if in_place else data.clone()
        try:
            if reduce == "add":
                return out.index_add_(0, rows, updates)
            index = rows.view(-1, *(1,) * (updates.ndim - 1)).expand_as(updates)
            return out.scatter_reduce_(0, index, updates, TORCH_REDUCE[reduce])
        except (IndexError, RuntimeError):
            return None

    def _gather_if_valid(self, data: Any, indices: Any, plan: GatherPlan) -> Any | None:
        """``torch.gather`` along the axis where the index has the result's shape, and
        ``index_select`` for one gathered axis without batch dims: on the CPU both raise,
        reading nothing outside, on any value not in ``[0, n)`` (negatives included)."""
        along = plan.kind == "along"
        if along:
            if not data.ndim or not _torch_gathers_along(indices, data, plan):
                return None
        if not self._checks_itself(data, indices):
            return None
        if plan.depth > 1:
            return self._index_small(data, indices, plan)
        if along:
            return _unless_out_of_range(torch.gather, data, plan.axis, indices)
        index = indices[..., 0] if plan.vector else indices
        if index.ndim == 1:  # index_select's result has the plan's shape as it is
            return _unless_out_of_range(torch.index_select, data, plan.axis, index)
        result = _unless_out_of_range(torch.index_select, data, plan.axis, index.reshape(-1))
        return None if result is None else result.reshape(plan.out_shape)

    def _index_small(self, data: Any, indices: Any, plan: GatherPlan) -> Any | None:
        """Index vectors of several components, a small number of them (at most
        :attr:`SMALL` values, in rows of two or more dims), by one indexing call along the
        original axes, which raises on a value past the end; its range is read as one Python
        list first, since torch counts a negative value from the end."""
        if not self._small(indices) or indices.ndim < 2:  # 1-d: a 0-d part would view
            return None
        if min(itertools.chain.from_iterable(indices.reshape(-1, plan.depth).tolist())) < 0:
            return None
        place = (slice(None),) * plan.axis + tuple(indices.unbind(-1))
        return _unless_out_of_range(data.__getitem__, place)

    def _index_put_small(
        self, data: Any, indices: Any, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises,
    ) -> Any | None:  # fmt: skip
        """A small number of index vectors of several components (as :meth:`_index_small`),
        read as one Python list first (torch counts a negative value from the end, and
        a flat position would hide a component past its axis). ``"add"`` and ``"update"``
        by one ``index_put``, which raises on a value past the end; for ``"update"`` without
        the promise of unique indices, only where no two vectors are equal (which one wins
        is then settled by :meth:`scatter`). ``"multiply"``, ``"min"`` and ``"max"`` by one
        ``scatter_reduce_`` at the vectors' flat positions, each component checked against
        its axis in the same list."""
        if not self._small(indices) or indices.ndim < 2:
            return None
        if data.dtype in SIGNED_TWIN or data.dtype == torch.bool:  # no kernels / OR semantics
            return None
        vectors = indices.reshape(-1, plan.depth).tolist()
        if vectors and min(itertools.chain.from_iterable(vectors)) < 0:
            return None
        if reduce in ("add", "update"):
            if reduce == "update" and not promises.unique_indices:
                if len(set(map(tuple, vectors))) < len(vectors):
                    return None
            place = (slice(None),) * plan.axis + tuple(indices.unbind(-1))
            return _unless_out_of_range(data.index_put, place, updates, accumulate=reduce == "add")
        if data.is_complex():  # (torch's prod of complex numbers)
            return None
        flat = []
        for vector in vectors:
            position = 0
            for value, n in zip(vector, plan.axis_sizes, strict=True):
                if value >= n:
                    return None
                position = position * n + value
            flat.append(position)
        lines = math.prod(plan.axis_sizes)
        width = math.prod(data.shape[plan.depth :])
        out = data.clone(memory_format=torch.contiguous_format)
        source = updates.reshape(len(flat), width)
        at = torch.tensor(flat, dtype=torch.int64, device=data.device)
        at = at.reshape(-1, 1).expand(len(flat), width)
        out.view(lines, width).scatter_reduce_(0, at, source, TORCH_REDUCE[reduce])
        return out

    def gather(self, data: Any, components: Components, plan: GatherPlan, out: Any = None) -> Any:
        """uint16/32/64 as the signed type of the same width. Reads that must be kept inside
        (``"unchecked"``) are first made as they are, where torch's gathers check them (on the
        CPU, outside ``torch.compile``): any out-of-range one raises before anything is read
        outside, and the gather is made again with the positions clamped."""
        twin = SIGNED_TWIN.get(data.dtype)
        source = data if twin is None else data.view(twin)
        result = None
        if components.keep_inside and self.reads_cheaply(source):
            unclamped = replace(components, keep_inside=False)
            result = _unless_out_of_range(super().gather, source, unclamped, plan)
        if result is None:
            result = super().gather(source, components, plan)
        return result if twin is None else result.view(data.dtype)

    def without_gradient(self, x: Any) -> Any:
        return x.detach()

    def copy(self, data: Any) -> Any:
        return data.clone()  # stays in the autograd graph

    def merge_rows(self, rows: Any, left: Any, right: Any, op: str) -> Any:
        """In place (an index_copy of distinct rows: no order to choose), but for a product
        that autograd records: its backward reads the factors, which a later level would
        have overwritten."""
        first, second = rows.index_select(0, left), rows.index_select(0, right)
        merged = first + second if op == "add" else first * second
        if op == "multiply" and rows.requires_grad:
            return rows.index_copy(0, left, merged)
        return rows.index_copy_(0, left, merged)

    def tree_index_engine(self, slots: Any) -> tuple[Engine, Any]:
        """NumPy's engine for slots on the CPU, outside a trace (the same memory: its sort
        and bookkeeping cost a fraction of PyTorch's on one thread); else this one."""
        if slots.is_cpu and not compiling():
            return _numpy_engine(), slots.numpy()
        return self, slots

    def tree_indices(self, x: Any) -> Any:
        return torch.from_numpy(x) if isinstance(x, np.ndarray) else x

    def take_rows(self, x: Any, positions: Any) -> Any:
        return x.index_select(0, positions)

    def level_buffer(self, values: Any, rows: int) -> Any | None:
        if values.requires_grad or compiling():  # autograd records no out= writes
            return None
        return values.new_empty((rows, *values.shape[1:]))

    def copy_into(self, source: Any, out: Any) -> None:
        out.copy_(source)

    def take_rows_into(self, x: Any, positions: Any, out: Any) -> None:
        torch.index_select(x, 0, positions, out=out)

    full_blocks = True

    def combine_into(self, op: str, left: Any, right: Any, out: Any) -> Any:
        return (torch.add if op == "add" else torch.mul)(left, right, out=out)

    def select_function(self, dtype: Any) -> Any:
        twin = SIGNED_TWIN.get(dtype)
        if twin is None:
            return torch.where

        def where(condition: Any, x: Any, y: Any) -> Any:
            # PyTorch's CUDA where has no uint16/32/64 kernels: the same bits as signed.
            y = torch.as_tensor(y, dtype=dtype, device=x.device)
            return torch.where(condition, x.view(twin), y.view(twin)).view(dtype)

        return where

    def scatter(
        self, data: Any, components: Components, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises,
    ) -> Any:  # fmt: skip
        """Straight along the axis where the index is already what torch wants (elementwise,
        same shape as the updates, every value in range, a dtype torch scatters): one
        ``scatter_add`` / ``scatter_reduce`` / ``scatter``; otherwise one write per index
        vector for slices (:meth:`_scatter_slices`), or through flat positions."""
        if _no_kernel(data, reduce):
            return super().scatter(data, components, updates, plan, reduce, promises)
        along = plan.kind == "along" and components.keep is None and data.ndim
        # Unchecked values (keep_inside) go straight too where torch checks them (the CPU):
        # an out-of-range one raises there, and the flat path below clamps it.
        checked = not components.keep_inside or self.reads_cheaply(data)
        if along and checked and data.dtype not in SIGNED_TWIN and data.dtype != torch.bool:
            (index,) = components.values
            if _torch_gathers_along(index, data, plan):
                # Out of place where nothing is resolved: a new tensor, as a copy and an
                # in-place write make.
                kernel: Callable[..., Any] = scatter_along
                arguments: tuple[Any, ...] = (
                    data, plan.axis, index, updates, reduce, False, promises,
                    self.reads_cheaply(index),
                )  # fmt: skip
                if reduce == "add":
                    kernel, arguments = torch.scatter_add, (data, plan.axis, index, updates)
                elif reduce != "update" and not promises.unique_indices:
                    kernel = functools.partial(
                        torch.scatter_reduce, reduce=TORCH_REDUCE[reduce], include_self=True
                    )
                    arguments = (data, plan.axis, index, updates)
                if not components.keep_inside:  # every value checked
                    return kernel(*arguments)
                result = _unless_out_of_range(kernel, *arguments)
                if result is not None:
                    return result
        if plan.kind == "axes" and not plan.batch_dims and components.values:
            return self._scatter_slices(data, components, updates, plan, reduce, promises)
        return super().scatter(data, components, updates, plan, reduce, promises)

    def scatter_at(
        self, data: Any, flat: Any, updates: Any, reduce: str, promises: ScatterPromises,
        *, dropping: bool = True,
    ) -> Any:  # fmt: skip
        if _no_kernel(data, reduce):
            return super().scatter_at(data, flat, updates, reduce, promises, dropping=dropping)
        flat = flat.reshape(-1)
        line = scatter_along(
            data.reshape(-1), 0, flat, updates.reshape(-1), reduce, dropping, promises,
            self.reads_cheaply(flat),
        )  # fmt: skip
        return line.reshape(data.shape)

    def _scatter_slices(
        self, data: Any, components: Components, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises,
    ) -> Any:  # fmt: skip
        """Index vectors without batch dims write whole slices: one ``index_add_`` (or
        ``scatter_reduce_``, ``index_copy_``) at one position per vector, along the gathered
        axes merged, on the data viewed as ``(outer, gathered, inner)`` without unit axes; no
        position per element (a vector that writes a slice of 32 would need 32)."""
        gathered = math.prod(plan.axis_sizes)
        positions = self._flat_positions(components, plan).reshape(-1)
        if components.keep is not None:
            positions = torch.where(components.keep.reshape(-1), positions, gathered)
        elif components.keep_inside:
            positions = torch.clamp(positions, 0, gathered - 1)
        dropping = components.keep is not None
        return self._scatter_at_slices(data, positions, updates, plan, reduce, promises, dropping)

    def _scatter_at_slices(
        self, data: Any, positions: Any, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises, dropping: bool,
    ) -> Any:  # fmt: skip
        """:meth:`_scatter_slices` at `positions`, one per index vector (1-d), into the
        gathered axes merged (the merged size where `dropping` drops one)."""
        shape = tuple(data.shape)
        axis, stop = plan.axis, plan.axis + plan.depth
        outer, inner = math.prod(shape[:axis]), math.prod(shape[stop:])
        gathered = math.prod(plan.axis_sizes)
        dim = 1 if outer > 1 else 0
        lead, tail = [outer] if dim else [], [inner] if inner > 1 else []
        values = updates.reshape([*lead, positions.numel(), *tail])
        view = [*lead, gathered, *tail]
        cheap = self.reads_cheaply(positions)
        result = scatter_along(
            data.reshape(view), dim, positions, values, reduce, dropping, promises, cheap
        )
        return result.reshape(shape)

    def _scatter_if_valid(
        self, data: Any, indices: Any, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises,
    ) -> Any | None:  # fmt: skip
        """The scatter at the caller's `indices` as they are, where torch's CPU kernels
        check every value (``scatter_*`` along the axis where the index has the updates'
        shape; ``index_*``, ``scatter_`` at one position per index vector of one component
        without batch dims): every value in ``[0, n)`` is every policy's answer, with no
        range read; on any other value (a negative one counts from the end for
        ``scatter_d``) torch raises having written only into the new result, and None sends
        the call through the policy."""
        if not data.ndim or not (data.is_cpu and self.reads_cheaply(indices)):
            return None
        if plan.kind == "along":
            if not _torch_gathers_along(indices, data, plan):
                return None
            arguments = (data, plan.axis, indices, updates, reduce, False, promises, True)
            return _unless_out_of_range(scatter_along, *arguments)
        if plan.depth > 1:
            return self._index_put_small(data, indices, updates, plan, reduce, promises)
        positions = indices.reshape(-1)  # the one component of each vector (or each id)
        return _unless_out_of_range(
            self._scatter_at_slices, data, positions, updates, plan, reduce, promises, False
        )

    def _flat_positions(self, components: Components, plan: GatherPlan) -> Any:
        """One position per index vector within the gathered block: one fused multiply-add
        per component but the last, whose stride is 1."""
        parts = components.values
        flat = parts[-1]
        for part, stride in zip(parts[:-1], plan.strides[:-1], strict=True):
            flat = torch.add(flat, part, alpha=stride)
        return flat

    def take(self, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        # array-api-compat's take first maps negative indices: passes the policies made moot.
        return torch.index_select(x, axis, indices)

    def gather_axes(
        self, params: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """One ``index_select`` along the gathered axes (merged, a view, for several) with
        no batch dims: fewer reshapes than the generic composition, which a small call
        feels. A small valid index (not 0-d, which would index a view) by one indexing call
        along the original axes."""
        parts = components.values
        contiguous = len(parts) == 1 or params.is_contiguous()
        if plan.batch_dims or not parts or not contiguous:
            return super().gather_axes(params, components, plan)
        if components.valid and parts[0].ndim and self._small(parts[0]):
            return params[(slice(None),) * plan.axis + tuple(parts)]
        axis, stop = plan.axis, plan.axis + plan.depth
        flat = self.kept_inside(
            self._flat_positions(components, plan), components, math.prod(plan.axis_sizes) - 1
        )
        if len(parts) > 1:
            shape = tuple(params.shape)
            params = params.reshape((*shape[:axis], math.prod(shape[axis:stop]), *shape[stop:]))
        return torch.index_select(params, axis, flat.reshape(-1)).reshape(plan.out_shape)

    def own_take_along_axis(self, x: Any, indices: Any, axis: int, elementwise: bool) -> Any:
        if not elementwise:  # with broadcasting, torch would expand the indices first
            return None
        return torch.gather(x, axis, indices)


def _no_kernel(data: Any, reduce: str) -> bool:
    """Whether PyTorch has no scatter kernel for `reduce` on `data`: the product of complex
    numbers on a GPU (``scatter_reduce`` there has none), which the generic sorted scatter
    computes instead."""
    return reduce == "multiply" and data.is_complex() and not data.is_cpu


def _unless_out_of_range(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Any | None:
    """``kernel(*args, **kwargs)``, or None where torch's bounds check refused an index
    value (``index_select`` raises IndexError, ``gather`` and the scatters RuntimeError),
    having read and written nothing outside."""
    try:
        return kernel(*args, **kwargs)
    except (IndexError, RuntimeError):
        return None


def _torch_gathers_along(index: Any, data: Any, plan: GatherPlan) -> bool:
    """Whether ``torch.gather`` (``torch.scatter_*``) along ``plan.axis`` at `index` is the plan's
    elementwise read (write): the index has the result's shape and fits in the data on every
    other axis (torch never broadcasts it)."""
    shape = tuple(index.shape)
    return shape == plan.out_shape and all(
        n <= size for d, (n, size) in enumerate(zip(shape, data.shape, strict=True))
        if d != plan.axis
    )  # fmt: skip


@functools.cache
def _numpy_engine() -> Engine:
    """NumPy's engine, for the deterministic tree's integer work on CPU tensors."""
    import array_api_compat.numpy as anp

    from .numpy import NumPyEngine

    return NumPyEngine(anp)
