"""The generic engine: every gather and scatter composed from the array API standard.

An engine is one small object per namespace, kept on itself (``self.xp``). It owns
everything that differs between backends: how index values can be seen (now, in a task
graph, under a trace, never), the index widths, a one-pass clamp, the range read, the gather
and the scatter. This class names no backend; each backend's engine, in a module of its own
beside this one, overrides the steps where its library does better or differs.

What the pipeline (``_api``) and the policies (``_indices``) call is the interface, in the
first two groups below; the rest are the steps of the generic gather and scatter, which a
backend's engine may replace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

from .._arrays import device_for_new, divided_mean, per_segment
from .._errors import BadIndex
from .._indices import Components, IndexAccess, flat_positions
from .._plan import GatherPlan, row_major_strides
from .scatter import ScatterPromises, flat_targets, sorted_scatter, target_axes
from .tree import bit_length, tree_partials

INT32_MAX = 2**31 - 1


def along_rows(count: Any, like: Any) -> Any:
    """`count` (one value per segment, of ``like.shape[:count.ndim]``) with a unit axis for
    each inner axis of `like`, so that it broadcasts against `like` along its leading axes:
    by the array's own ``reshape`` (NumPy's and PyTorch's engines: without the namespace
    wrapper's call, which a small segment call pays as much as for its reduction)."""
    inner = like.ndim - count.ndim
    return count.reshape((*count.shape, *(1,) * inner)) if inner else count


class Engine:
    """The generic engine: every step written against the array API standard."""

    #: Whether ``take`` itself keeps out-of-range positions inside the array (a clipping take).
    take_clamps = False
    #: Whether the backend's gathers take int64 indices only, or convert every width to it.
    int64_gathers = False
    #: Whether :meth:`checked_gather` and :meth:`checked_scatter` may apply: the backend's own
    #: gathers check bounds. A
    #: flag, so that engines without one skip even the call (a tiny call feels it).
    gathers_checked = False
    #: Whether an eager call runs as one compiled computation (:meth:`compiled`): where each
    #: operation of an eager call costs a dispatch of its own.
    compiles_eager_calls = False
    #: The array type whose calls this engine keys (``_routes.call_key``): a repeat call
    #: of the same signature then skips the argument checks. None: not keyed (every call checked).
    array_type: type | None = None
    #: A segment reduction by a plan of this engine's own, or None where it has none (the
    #: scatter into the identity runs; an attribute, so that those engines skip even the
    #: call): ``segment_plan(data, ids, num_segments, reduce, identity, policy, report,
    #: counting, ids_sorted)`` combines the rows of `data` by scatter reduction `reduce` into
    #: `num_segments` segments at `ids` (a leading part of data's shape; a bad one as `policy`
    #: says, reported as `report`), each segment starting from `identity`, and returns
    #: ``(result, count)``, the rows per segment (int64) where `counting`, else None; or None
    #: where the plan does not serve these arrays.
    segment_plan: Callable[..., tuple[Any, Any] | None] | None = None
    #: Whether :meth:`counted` may answer (the backend has a ``bincount`` of its own).
    counts = False
    #: The segment toolkit's statistics in one pass by a plan of this engine's own, or None
    #: (the toolkit's steps of one reduction each run): ``segment_statistics(statistic,
    #: data, ids, segments)`` with valid vector `ids` gives, per segment, ``"argmax"`` /
    #: ``"argmin"``: (the extreme, its first position, int64; the int64 maximum where empty),
    #: ``"moments"``: (count, mean, sum of squared deviations), ``"exp"``: (the largest value,
    #: the sum of ``exp(x - shift)`` with shift the largest where finite, else 0); or None
    #: where the plan does not serve these arrays.
    segment_statistics: Callable[..., tuple[Any, ...] | None] | None = None
    #: ``merge_rows(rows, left, right, op)``: `rows` (a new 2-d array of the tree of
    #: ``engines.tree``) with ``rows[left] = rows[left] op rows[right]`` written in place,
    #: for disjoint `left` rows (1-d positions, as many as `right`), returned; or None where
    #: the engine writes no rows in place (the tree then runs with fixed shapes).
    merge_rows: Callable[[Any, Any, Any, str], Any] | None = None

    def __init__(self, xp: Any) -> None:
        self.xp = xp

    def route_keys(self, arrays: tuple[Any, ...]) -> Hashable | None:
        """What of `arrays` (of :attr:`array_type`) a call's checks depend on (each one's
        shape, dtype and device), for the key of a repeat call; None where this call must
        run every check."""
        return None

    # How index values are seen, and the policies' steps (``_indices.IndexEngine``).

    def index_access(self, x: Any) -> IndexAccess:
        """How the values of index array `x` can be seen."""
        return "now"

    def reads_cheaply(self, x: Any) -> bool:
        """Whether reading values of `x` into Python is cheap and harmless."""
        return True

    def reads_range_freely(self, x: Any) -> bool:
        """Whether :meth:`value_range` of `x` (where it reads cheaply) costs less than the
        passes that knowing the range saves (a small index, read into Python at once)."""
        return False

    def keeps_reads_inside(self, values: Any) -> bool:
        """Whether a gather at out-of-range `values` flagged ``keep_inside`` stays inside the
        data at no pass over them (a clipping ``take``)."""
        return self.take_clamps

    def laid_out(self, x: Any) -> Any:
        """Array `x` (an index, or the data of a segment reduction) laid out for elementwise
        work, as its backend's operations read it right (a lazy backend: without zero-size
        blocks); here, as it is."""
        return x

    def flattened(self, x: Any) -> Any:
        """Array `x`, of any rank but one (its callers leave a vector as it is), as a vector,
        its elements in row-major order (a gather from the flattened data,
        ``_routes.flat_call``): the namespace's reshape of `x` laid out (:meth:`laid_out`:
        Dask's reshape fails on zero-size chunks)."""
        return self.xp.reshape(self.laid_out(x), (-1,))

    def blocked_like(self, x: Any, like: Any) -> Any:
        """`x` in the blocks of `like` along its axes (`x` has ``like.shape[:x.ndim]``), so
        that a step that reads the two block by block pairs them (a lazy backend's); here, as
        it is: its arrays have no blocks."""
        return x

    def index_block_rows(self, data: Any, indices: Any, plan: GatherPlan) -> int:
        """How many rows of a large index to process at a time (0: all at once)."""
        return 0

    def vector_components(self, values: Any, depth: int) -> list[Any]:
        """The `depth` components of the index vectors along the last axis of `values`."""
        return [values[..., j] for j in range(depth)]

    def wide_index_dtype(self, like: Any = None) -> Any:
        """The widest signed integer dtype the namespace holds on the device of array `like`
        (None: its default device); the policies work in it. A device may hold fewer dtypes
        than the namespace (array-api-strict's ``Device("no_x64")``). An array, not its
        device: the engines that need no device never pay for looking it up."""
        xp = self.xp
        device = None if like is None else device_for_new(like)
        try:
            signed = xp.__array_namespace_info__().dtypes(kind="signed integer", device=device)
        except AttributeError:
            return xp.int64
        return signed.get("int64", signed.get("int32"))

    def clamp(self, values: Any, low: int, high: int) -> Any:
        """Clip into ``[low, high]`` (Python ints)."""
        return self.xp.minimum(self.xp.maximum(values, low), high)

    def value_range(self, x: Any) -> tuple[int, int]:
        """``(min, max)`` of an eager integer array, as Python ints."""
        return int(self.xp.min(x)), int(self.xp.max(x))

    def read_int(self, value: Any) -> int:
        """One element of an eager integer array as a Python int."""
        return int(value)

    # What the pipeline calls around the gather and the scatter.

    def empty(self, data: Any, shape: tuple[int, ...]) -> Any:
        """The result of a gather that reads nothing."""
        return self.xp.zeros(shape, dtype=data.dtype, device=device_for_new(data))

    def full(self, shape: tuple[int, ...], value: float, dtype: Any, like: Any) -> Any:
        """A new array of `shape` filled with `value`, beside array `like` (the result of a
        reduction of `like` along its leading axes)."""
        return self.xp.full(shape, value, dtype=dtype, device=device_for_new(like))

    def counted(self, x: Any, minlength: int, length: int | None, weights: Any) -> Any | None:
        """The backend's own ``bincount`` of vector `x` into `length` bins (None: ``max(x) +
        1``, at least `minlength`), weighted by `weights` (None: counts in the widest integer
        dtype) with the result in the weights' dtype; None where a value of `x` is negative
        or not below `length` (the backend's own check stands in for portagather's, which
        then names it), or where the backend's kernel does not take these arrays. Asked
        only where :attr:`counts`."""
        return None

    def divided_by_root(self, total: Any, count: Any) -> Any:
        """`total` (a floating or complex segment sum) over the square root of `count` (its
        rows per segment; at least 1: an empty segment's 0 stays 0), in `total`'s dtype:
        TensorFlow's ``unsorted_segment_sqrt_n``, the core's private ``"sqrt_n"``. The root
        is taken once per segment and divides along the inner axes by broadcasting: the same
        bits as dividing by the root of a count repeated along them, elementwise."""
        xp = self.xp
        root = xp.sqrt(xp.astype(xp.maximum(count, xp.ones_like(count)), total.dtype))
        inner = total.ndim - count.ndim
        return total / (xp.reshape(root, (*count.shape, *(1,) * inner)) if inner else root)

    def divided_mean(
        self, total: Any, count: Any, division: str, divide_in: Any, gathered: bool = False
    ) -> Any:  # fmt: skip
        """`total` (a segment sum) over `count` (its rows per segment) as
        :func:`~.._arrays.divided_mean` divides it (`division` in dtype `divide_in`, as
        :func:`~.._arrays.mean_division` says; `gathered` where the call is traced): the
        core's mean, by the namespace's functions here; an engine may divide an eager mean
        by its own with the same bits."""
        return divided_mean(self.xp, total, count, division, divide_in, gathered)

    def filled_empty(self, result: Any, count: Any, fill: Any) -> Any:
        """`result` (one value per segment) with `fill` (a Python scalar its dtype holds
        exactly) where `count` (the rows per segment, of ``result.shape[:count.ndim]``) is 0:
        an empty segment's value (``empty_value``; TensorFlow's sorted max and min, 0); by
        the namespace's functions here."""
        xp = self.xp
        empty = per_segment(xp, count == 0, result)
        return xp.where(empty, xp.full_like(result, fill), result)

    def without_gradient(self, x: Any) -> Any:
        """`x` cut from the autograd graph (a segment's shift in a softmax, which cancels);
        here, where nothing records gradients, as it is."""
        return x

    def copy(self, data: Any) -> Any:
        """A new array equal to `data` (a scatter that writes nothing)."""
        return self.xp.asarray(data, copy=True)

    def compiled(self, steps: Callable[..., Any], static: Hashable, *arrays: Any) -> Any:
        """``steps(static, *arrays)`` as one compiled computation, made once per `steps`,
        `static` (hashable) and the arrays' shapes and dtypes, where :attr:`compiles_eager_calls`;
        here, called as it is."""
        return steps(static, *arrays)

    def checked_gather(
        self, plan: GatherPlan, index_shape: tuple[int, ...], index_dtype: Any, policy: str
    ) -> Callable[[Any, Any], Any | None] | None:
        """For the calls of one route (`plan`, an index of `index_shape` and `index_dtype`,
        `policy` "error", "unchecked" or TensorFlow's default): ``kernel(data, indices)``, the
        gather at the caller's index as it is, by a backend gather that checks every value
        against its axis itself and raises, reading nothing outside, where one is not in
        ``[0, n)``. With every value valid, that is the answer of every policy, and it costs
        no pass of portagather's; the kernel returns None where a value is not valid (the
        policy then decides, from the start) or it cannot serve this call. None where the
        engine has no such gather for the route."""
        return None

    def gather(self, data: Any, components: Components, plan: GatherPlan, out: Any = None) -> Any:
        """The gathered array (written into `out` where the engine can; here it cannot)."""
        if plan.kind == "axes":
            return self.gather_axes(data, components, plan, out)
        return self.gather_along(data, components, plan, out)

    def fill(self, result: Any, keep: Any, fill: Any) -> Any:
        """`result` with `fill` where `keep` (broadcast against it) is False."""
        return self.select_function(result.dtype)(keep, result, fill)

    def enforce_lazily(
        self, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """Enforce ``"error"`` where values cannot be read now (:meth:`index_access` is not
        ``"now"``); here, where they never can.

        `find_bad` is given where `result` is this engine's :meth:`gather` of the checked
        components (not a scatter): `bad` from the index array again, for an engine whose
        gather marks bad reads and that reads the index only where a mark is seen.
        """
        msg = (
            'bad_indices="error" cannot be enforced here: the index values cannot be read; '
            'pass bad_indices="ignore", "clip", "wrap" or "unchecked"'
        )
        raise ValueError(msg)

    def scatter(
        self, data: Any, components: Components, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises,
    ) -> Any:  # fmt: skip
        """`data` with `updates` (of ``plan.out_shape``) combined by `reduce` at the places
        the gather of `plan` would read; ignored index vectors drop their updates. `promises`
        are the caller's about the index (``engines.scatter.ScatterPromises``): an engine may use
        them, and must keep every write inside the data where they are broken."""
        xp, shape = self.xp, tuple(data.shape)
        size = math.prod(shape)
        wide = self.wide_index_dtype(data)
        axes = target_axes(xp, components.values, plan, shape, wide)
        flat = flat_targets(xp, axes, shape, plan.out_shape, wide)
        flat = self.kept_inside(
            flat, components, size - 1, dropped_at=size, clamp=True, keep_shape=plan.mask_shape
        )
        dropping = components.keep is not None
        return self.scatter_at(data, flat, updates, reduce, promises, dropping=dropping)

    def tree_partials(
        self, values: Any, slots: Any, segments: int, op: str, in_order: bool
    ) -> tuple[Any, Any]:  # fmt: skip
        """``(partial, count)``: the rows of `values` (``(N, F)``) combined by `op` (``"add"``,
        ``"multiply"``) into `segments` segments at `slots` (``(N,)``; `segments` marks a row
        of none) in the one order of ``engines.tree``, each empty segment holding the
        padding, and the rows per segment in the widest integer dtype. `in_order`: the
        slots are promised sorted."""
        return tree_partials(self.xp, self, values, slots, segments, op, in_order)

    # The eager tree's steps (``engines.tree``, where :attr:`merge_rows` is not None).

    #: Whether the eager tree over sorted ids reads each segment from full blocks of a dense
    #: pyramid (``engines.tree._full_block_tree``, where :meth:`level_buffer` gives one):
    #: it also combines the blocks across two segments, whose values are never read (NumPy
    #: would warn of an overflow there).
    full_blocks = False

    def tree_index_engine(self, slots: Any) -> tuple[Engine, Any]:
        """The engine whose namespace runs the deterministic tree's integer work (the sort,
        the counts, the bookkeeping of the merges) on the segment `slots`, and the slots in
        it: here this engine. Its arrays come back through :meth:`tree_indices`."""
        return self, slots

    def tree_indices(self, x: Any) -> Any:
        """Integer or boolean array `x` of :meth:`tree_index_engine`'s namespace as an
        array of this one (here, as it is)."""
        return x

    def take_rows(self, x: Any, positions: Any) -> Any:
        """The rows of 2-d `x` at the 1-d `positions`."""
        return self.xp.take(x, positions, axis=0)

    def sorted_keys(self, slots: Any, levels: int, wide: Any) -> Any:
        """The keys ``slots * 2**levels + position`` (`position` ``0 .. N - 1`` below
        ``2**levels``) in dtype `wide`, sorted: all distinct, so no stable sort is needed."""
        xp = self.xp
        positions = xp.arange(slots.shape[0], dtype=wide, device=device_for_new(slots))
        return xp.sort(xp.bitwise_left_shift(xp.astype(slots, wide), levels) + positions)

    def byte_bit_length(self, x: Any, below: int) -> Any:
        """``int.bit_length`` of each value of the non-negative integer array `x` (each below
        `below`), as uint8."""
        return self.xp.astype(bit_length(self.xp, x), self.xp.uint8)

    def level_buffer(self, values: Any, rows: int) -> Any | None:
        """A new uninitialised array of `rows` rows shaped and typed as the 2-d `values`, that
        :meth:`combine_into` writes the tree's merges into; None where the engine writes
        none in place (they are then joined at the end)."""
        return None

    def copy_into(self, source: Any, out: Any) -> None:
        """`source` written into `out` (a part of :meth:`level_buffer`)."""
        raise NotImplementedError

    def take_rows_into(self, x: Any, positions: Any, out: Any) -> None:
        """The rows of 2-d `x` at the 1-d `positions` written into `out` (a part of
        :meth:`level_buffer`)."""
        self.copy_into(self.take_rows(x, positions), out)

    def combine_into(self, op: str, left: Any, right: Any, out: Any) -> Any:
        """``left op right`` written into `out` (a part of :meth:`level_buffer`), returned."""
        raise NotImplementedError

    def repeat(self, count: int, step: Callable[[Any, Any], Any], state: Any) -> Any:
        """``state = step(i, state)`` for ``i`` in ``range(count)``, then `state`: a Python
        loop here; a compiled loop where the engine has one (`i` then is a 0-d array)."""
        for i in range(count):
            state = step(i, state)
        return state

    def unless_none(self, any_work: Any, step: Callable[[Any], Any], state: Any) -> Any:
        """``step(state)``, which may be skipped where the 0-d bool `any_work` is False
        (``state`` returned as it is); here it always runs, as no value is read."""
        return step(state)

    def checked_scatter(
        self, plan: GatherPlan, index_shape: tuple[int, ...], index_dtype: Any, reduce: str,
        promises: ScatterPromises, policy: str, *, in_place: bool,
    ) -> Callable[[Any, Any, Any], Any | None] | None:  # fmt: skip
        """As :meth:`checked_gather`, for scatters: ``kernel(data, indices, updates)``, by
        backend kernels that check every value and raise, writing nothing but into the
        result, on one not in ``[0, n)``. With `in_place`, `data` is a new array of the
        pipeline's (a segment reduction's identity) that the kernel may write into."""
        return None

    # The steps of the generic scatter and gather.

    def kept_inside(
        self, positions: Any, components: Components, largest: int, *, dropped_at: int = 0,
        clamp: bool | None = None, keep_shape: tuple[int, ...] | None = None,
    ) -> Any:  # fmt: skip
        """`positions` (of the components' index vectors) with each ignored vector moved to
        `dropped_at` and, where the caller promised validity, clamped into ``[0, largest]``
        (unless `clamp` is False; by default, where this engine's ``take`` does not). The
        mask of ignored vectors is reshaped to `keep_shape` where given."""
        if components.keep is not None:
            keep = components.keep
            keep = keep if keep_shape is None else self.xp.reshape(keep, keep_shape)
            return self.xp.where(keep, positions, dropped_at)
        if components.keep_inside and (not self.take_clamps if clamp is None else clamp):
            return self.clamp(positions, 0, largest)
        return positions

    def scatter_at(
        self, data: Any, flat: Any, updates: Any, reduce: str, promises: ScatterPromises,
        *, dropping: bool = True,
    ) -> Any:  # fmt: skip
        """The scatter at flat positions `flat` into `data` (shaped like `updates`), where
        ``data.size`` marks an update to drop if `dropping` (only then can one be there)."""
        xp = self.xp
        line = xp.reshape(updates, (-1,))
        select = self.select_function(data.dtype)
        unique = promises.unique_indices
        return sorted_scatter(xp, data, xp.reshape(flat, (-1,)), line, reduce, select, unique)

    def select_function(self, dtype: Any) -> Any:
        """The ``where(condition, x, y)`` that keeps values of `dtype` exact."""
        return self.xp.where

    def flat_index_dtype(self, largest: int) -> Any:
        """The dtype of the flat positions handed to ``take``: int32 where `largest` fits."""
        if self.int64_gathers or largest > INT32_MAX:  # (first: no comparison of a SymInt)
            return self.wide_index_dtype()
        return self.xp.int32

    def gather_axes(
        self, params: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """``plan.depth`` consecutive axes of `params` from ``plan.axis``, at the components.

        The components have shape ``params.shape[:batch_dims] + grid``. params is viewed as
        ``(batch, outer, gathered, inner)`` blocks for one :meth:`take_along` at flat
        positions into the gathered block.
        """
        xp = self.xp
        shape, b, axis = tuple(params.shape), plan.batch_dims, plan.axis
        flat = flat_positions(components.values, plan.strides)
        if flat is None:  # index depth 0: every index vector selects the whole block
            grid = depth0_grid(plan)
            flat = xp.zeros(grid, dtype=xp.int32, device=device_for_new(params))
        flat = self._flat_ready(flat, components, math.prod(plan.axis_sizes) - 1, plan)
        grid = tuple(flat.shape[b:])
        stop = axis + plan.depth
        blocks = [math.prod(s) for s in (shape[:b], shape[b:axis], shape[axis:stop])]
        data = xp.reshape(params, (*blocks, math.prod(shape[stop:])))
        index = xp.reshape(flat, (blocks[0], 1, math.prod(grid), 1))
        return xp.reshape(self.take_along(data, index, 2), plan.out_shape)

    def gather_along(
        self, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """Elements along ``plan.axis``, the other axes matched position by position (into
        `out` where :meth:`take` writes there)."""
        (index,) = components.values
        index = self._flat_ready(index, components, plan.axis_sizes[0] - 1, plan)
        return self.take_along(plan.read_block(x), index, plan.axis, out)

    def _flat_ready(self, flat: Any, components: Components, largest: int, plan: GatherPlan) -> Any:
        """Positions 0 where ignored, clamped where the caller promised validity, cast."""
        flat = self.kept_inside(flat, components, largest)
        return self.xp.astype(flat, self.flat_index_dtype(plan.largest_flat), copy=False)

    def own_take_along_axis(self, x: Any, indices: Any, axis: int, elementwise: bool) -> Any:
        """The backend's own ``take_along_axis`` where it beats one flat ``take``; else None."""
        return None

    def take(self, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        """The standard's ``take`` for 1-d indices already in ``[0, x.shape[axis])``; engines
        that can write into `out` (of the result's shape) return it, the others ignore it."""
        return self.xp.take(x, indices, axis=axis)

    def take_along(self, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        """``take_along_axis`` with broadcasting, for indices already in ``[0, n)``.

        `x` and `indices` have the same rank and broadcast against each other on every axis
        but `axis`. One gather: one ``take`` when the indices vary along `axis` only; the
        backend's own ``take_along_axis`` where it prefers it; otherwise one ``take`` on `x`
        viewed as ``(lead, middle, tail)`` with flat indices into the middle block (axes
        along which the indices do not vary stay out of the index arithmetic).
        """
        xp, ndim = self.xp, x.ndim
        out_shape = tuple(
            x.shape[d] if d != axis and indices.shape[d] == 1 else indices.shape[d]
            for d in range(ndim)
        )
        varying = [d for d in range(ndim) if d != axis and indices.shape[d] != 1]
        if not varying:
            return self._take_block(x, xp.reshape(indices, (-1,)), axis, out_shape, out)
        elementwise = all(x.shape[d] == indices.shape[d] for d in range(ndim) if d != axis)
        own = self.own_take_along_axis(x, indices, axis, elementwise)
        if own is not None:
            return own
        lead = min(axis, varying[0])
        stop = max(axis, varying[-1]) + 1
        flat = self._middle_positions(x, indices, axis, lead, stop, out_shape)
        blocks = (math.prod(x.shape[:lead]), math.prod(x.shape[lead:stop]))
        x = xp.reshape(x, (*blocks, math.prod(x.shape[stop:])))
        return self._take_block(x, xp.reshape(flat, (-1,)), 1, out_shape, out)

    def _middle_positions(
        self, x: Any, indices: Any, axis: int, lead: int, stop: int, out_shape: tuple[int, ...]
    ) -> Any:
        """Flat positions into x's axes ``lead:stop`` viewed as one (the middle block): the
        index along `axis`, the result's position along every other axis where x varies."""
        xp, middle = self.xp, x.shape[lead:stop]
        strides = row_major_strides(middle)
        flat = indices if strides[axis - lead] == 1 else indices * strides[axis - lead]
        flat = xp.reshape(flat, indices.shape[lead:stop])
        for k, d in enumerate(range(lead, stop)):
            if d == axis or x.shape[d] == 1 or out_shape[d] == 1:
                continue  # x is broadcast along d, or the result has one position there
            shape = [1] * len(middle)
            shape[k] = out_shape[d]
            position = xp.arange(out_shape[d], dtype=indices.dtype, device=device_for_new(x))
            flat = flat + xp.reshape(position, tuple(shape)) * strides[k]
        if tuple(flat.shape) != out_shape[lead:stop]:
            flat = xp.broadcast_to(flat, out_shape[lead:stop])  # a take may copy a view
        return flat

    def _take_block(
        self, x: Any, flat: Any, axis: int, out_shape: tuple[int, ...], out: Any = None
    ) -> Any:
        """One ``take`` of the 1-d `flat` along `axis`, reshaped to `out_shape` (into `out`,
        of that shape, where the engine's ``take`` writes there); with nothing before `axis`,
        on an ``(n,)`` or ``(n, tail)`` view (a backend's ``take`` on a 4-d view with unit
        axes can be several times slower)."""
        xp = self.xp
        if math.prod(x.shape[:axis]) == 1:
            tail = math.prod(x.shape[axis + 1 :])
            block = (x.shape[axis],) if tail == 1 else (x.shape[axis], tail)
            x, axis = xp.reshape(x, block), 0
        taken = (*x.shape[:axis], flat.shape[0], *x.shape[axis + 1 :])
        target = None if out is None else xp.reshape(out, taken)  # a view: out is contiguous
        result = self.take(x, flat, axis, target)
        return out if target is not None and result is target else xp.reshape(result, out_shape)


def depth0_grid(plan: GatherPlan) -> tuple[int, ...]:
    """The index grid of a gather of index depth 0 (every vector selects a whole block):
    the result's shape without its inner axes."""
    inner = len(plan.report.data_shape) - plan.batch_dims - plan.depth
    return plan.out_shape[: len(plan.out_shape) - inner]


def position_bytes(count: int) -> int:
    """The width in bytes of the integers that hold the positions ``0 .. count - 1`` of a
    last-wins scatter's updates (:func:`winning_positions`): 4 where they fit int32."""
    return 4 if count - 1 <= INT32_MAX else 8


def winning_positions(
    positions: Any, write: Callable[[Any], object], read: Callable[[], Any],
    settle: Callable[[Any], object], *, reads_values: bool = True,
    unique: Callable[[Any, Any], bool] | None = None,
) -> Any | None:  # fmt: skip
    """The position of the update that wins each update's target under ``"update"`` (the
    last write wins), for targets that may repeat; None where `unique` proves the targets
    unique. The one algorithm of the engines that settle winners by writing positions and
    reading them back, each supplying its storage and its operations on it. Nothing relies
    on the order in which a backend writes duplicates (their libraries document none).

    `positions` are those of the updates in their order (``arange`` of their count, of the
    storage's integer dtype); the storage (the result's own elements viewed as integers,
    written again afterwards, or a scratch) has one integer per target. ``write(p)`` writes
    `p` at the updates' targets, ``read()`` reads each update's target back, ``settle(p)``
    leaves each target holding the largest of its `p`: it may count what the storage held
    (after the write, a position of the target's own), but where `reads_values` is false
    nothing was written there.

    Written and read back, each update sees the position of the one that landed at its
    target (arrays with ``<`` and ``.any()``). Where each sees its own, the targets are
    unique (asked only where `unique` is given; without it, such positions come back as any
    other winners, for an engine that has looked for duplicates its own way); where none
    sees a position earlier than its own, each target holds its last; otherwise the maximum
    settles it, read back. Where the engine may not read values (`reads_values` false: on a
    GPU, under a trace), nothing is read to choose: the maximum at once."""
    if reads_values:
        write(positions)
        won = read()
        if unique is not None and unique(won, positions):
            return None
        if not bool((won < positions).any()):
            return won
    settle(positions)
    return read()
