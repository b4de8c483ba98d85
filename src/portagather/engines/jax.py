"""JAX: tracing, the ``"error"`` check through ``checkify``, gathers that XLA partitions.

Where params may be sharded over several devices, gathers never flatten them: one
multi-dimensional gather along the original axes (``params[..., i0, i1]``, vmapped over
batch dims) is what XLA partitions without moving params, where a flat position into a
reshaped params would make it all-gather them. Where params cannot be split (one device of
the default backend, or a concrete array held whole on each of its devices), index vectors
of several components without batch dims read params through one flat position each,
which XLA on CPU runs faster (GPU and TPU are not measured here). Reads that may be out of
range are clamped by the gather (``mode="clip"``), or by a clip fused before an element
gather (:func:`kept_inside`).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import Any, Literal

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import checkify

from .._arrays import divisor, padding
from .._errors import BadIndex
from .._indices import Components, IndexAccess, flat_positions
from .._plan import GatherPlan, row_major_strides
from ._jax_private import no_trace_active, under_checkify
from .base import INT32_MAX, Engine
from .jax_checks import (
    bad_marker,
    checkify_message,
    kept_inside,
    marker_seen,
    marks_bad_reads,
    read_mode,
    result_is_read,
)
from .scatter import ScatterPromises, target_axes

#: No extra keyword arguments for a JAX indexing method.
_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class JaxEngine(Engine):
    """JAX: index values are read eagerly or checked under ``checkify``; an eager call runs as
    one jitted computation, so that it pays one dispatch (and, on a new shape, one
    compilation) rather than one per operation."""

    compiles_eager_calls = True

    def compiled(self, steps: Callable[..., Any], static: Hashable, *arrays: Any) -> Any:
        return _jitted(steps)(static, *arrays)

    def divided_by_root(self, total: Any, count: Any) -> Any:
        """As the generic one, but the root of the count repeated along the inner axes first
        (:func:`~.._arrays.divisor`): XLA turns a division by a broadcast value into a
        product with its reciprocal, another rounding than the other backends' division."""
        xp = self.xp
        return total / xp.sqrt(xp.astype(divisor(xp, count, total), total.dtype))

    def without_gradient(self, x: Any) -> Any:
        return lax.stop_gradient(x)

    def tree_partials(
        self, values: Any, slots: Any, segments: int, op: str, in_order: bool
    ) -> tuple[Any, Any]:  # fmt: skip
        """The tree of ``engines.tree`` (docs/deterministic.md) in one compiled program:
        ids in order (promised, or found so at run time) skip the sort and run the tree by
        halving (:func:`_tree_in_order`); others are sorted by segment, then position
        (:func:`_sort_by_segment`), and merged by ``engines.tree``'s fixed-shape levels."""
        found: tuple[Any, Any] = self.compiled(
            _tree_steps, (self, segments, op, in_order), values, slots
        )
        return found

    def index_access(self, x: Any) -> IndexAccess:
        return "trace" if is_traced(x) else "now"

    def repeat(self, count: int, step: Callable[[Any, Any], Any], state: Any) -> Any:
        return lax.fori_loop(0, count, step, state) if count else state

    def unless_none(self, any_work: Any, step: Callable[[Any], Any], state: Any) -> Any:
        return lax.cond(any_work, step, lambda unchanged: unchanged, state)

    def reads_cheaply(self, x: Any) -> bool:
        return all(d.platform == "cpu" for d in x.devices())

    def wide_index_dtype(self, like: Any = None) -> Any:
        """JAX without ``jax_enable_x64`` silently turns int64 into int32."""
        return jnp.int64 if _has_int64() else jnp.int32

    def flat_index_dtype(self, largest: int) -> Any:
        if largest > INT32_MAX:
            if not _has_int64():
                msg = (
                    f"the gather reads positions up to {largest}, more than int32 holds, and "
                    "JAX has no int64 without jax_enable_x64; enable it with "
                    "jax.config.update('jax_enable_x64', True) or gather from a smaller array"
                )
                raise ValueError(msg)
            return jnp.int64
        return jnp.int32

    def gather(self, data: Any, components: Components, plan: GatherPlan, out: Any = None) -> Any:
        """The gather; where ``checkify`` will look for bad reads in the result
        (:func:`marks_bad_reads`), they hold the marker of the dtype (:func:`bad_marker`)."""
        result = super().gather(data, components, plan, out)
        if not marks_bad_reads(components, plan, result.dtype):
            return result

        bad = jnp.reshape(components.bad, plan.mask_shape)
        marker = jnp.asarray(bad_marker(result.dtype), dtype=result.dtype)
        return jnp.where(bad, marker, result)

    def gather_axes(
        self, params: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """``params[β, :, ..., c0, c1, ...]``: one gather.

        One component: JAX's own indexing along the axis. Several, without batch dims, on
        params that cannot be split and where bad reads need no fill: one flat position per
        vector. Otherwise one gather along the original axes, reading the index vectors as
        the caller gave them where the policy left them whole (``components.vectors``): no
        pass to take them apart and stack them again.
        """
        if not components.values:  # index depth 0: the generic composition
            return super().gather_axes(params, components, plan)

        # int32 positions where all of params fits (without x64, a larger one is refused).
        flat_dtype = self.flat_index_dtype(plan.largest_flat)
        outer = plan.axis - plan.batch_dims
        mode = read_mode(components, plan, params.dtype)
        # Whether each index vector reads one element, not a slice (for kept_inside).
        elements = not outer and params.ndim == plan.axis + plan.depth
        parts = components.values
        gather: Callable[[Any, Any], Any]
        if len(parts) == 1:
            # One component: JAX's own indexing, which XLA on CPU runs faster than a
            # lax.gather of the int64 index (benchmarks/RESULTS.md, "JAX engine choices").
            slices = (slice(None),) * outer
            index, mode = kept_inside(parts[0], plan.axis_sizes[0] - 1, mode, elements)
            options = _leave_negatives_alone("at")

            def gather(block: Any, component: Any) -> Any:
                return block.at[tuple([*slices, component])].get(mode=mode, **options)

        elif plan.batch_dims == 0 and mode != "fill" and not _may_be_sharded(params):
            # Several components, params that cannot be split: one flat position per vector
            # into params viewed as (gathered, inner), the read of ``take(p.ravel(), flat)``.
            # XLA on CPU runs it faster than the gather along both axes (benchmarks/
            # RESULTS.md, "JAX engine choices"). Not for "fill" (checkify without markers): a flat
            # position can be in range where a component is not, and would read a real
            # element where the fill is wanted. Flattening is what makes XLA all-gather
            # sharded params, hence _may_be_sharded.
            cast = [jnp.astype(c, flat_dtype, copy=False) for c in parts]
            flat = flat_positions(cast, plan.strides)
            gathered = math.prod(plan.axis_sizes)
            flat, mode = kept_inside(flat, gathered - 1, mode, elements)
            block = jnp.reshape(params, (gathered, *params.shape[plan.depth :]))
            return block.at[flat].get(mode=mode, **_leave_negatives_alone("at"))
        else:
            index = components.vectors
            if index is None:
                index = jnp.stack(parts, axis=-1)

            def gather(block: Any, block_vectors: Any) -> Any:
                return _gather_vectors(block, block_vectors, outer, mode)

        for _ in range(plan.batch_dims):
            gather = jax.vmap(gather)
        return gather(params, index)

    def gather_along(
        self, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:

        (index,) = components.values
        self.flat_index_dtype(plan.largest_flat)  # refuses what int32 cannot number
        x = plan.read_block(x)
        mode = read_mode(components, plan, x.dtype)
        index, mode = kept_inside(index, plan.axis_sizes[0] - 1, mode, elements=True)
        options = _leave_negatives_alone("take_along_axis")
        return jnp.take_along_axis(x, index, axis=plan.axis, mode=mode, **options)

    def scatter(
        self, data: Any, components: Components, updates: Any, plan: GatherPlan, reduce: str,
        promises: ScatterPromises,
    ) -> Any:  # fmt: skip
        """One XLA scatter: ``data.at[:, ..., c0, c1, ...]`` where index vectors without
        batch dims write whole slices (one index per vector, however large the slice), else
        at one coordinate per axis for every element; where data cannot be split, the
        coordinates are merged into one flat position per write into the targeted axes
        merged (a view of data), and data that may be sharded keeps its original axes.

        Ignored vectors are moved out of range and dropped by the scatter's ``drop`` mode.
        ``"update"`` resolves the winners first (:func:`_last_update`), so duplicates never
        depend on the order in which XLA writes, unless the caller promised unique targets:
        then one plain ``.at[].set``, whose duplicates XLA applies in some order (JAX's
        ``unique_indices=True`` is not passed on: JAX documents overlapping writes under it
        as undefined behaviour, and a broken promise must still leave one of the updates).
        The promise of sorted targets is passed on (:func:`_sorted_for_xla`).
        """
        if data.ndim == 0:  # nothing to index along: the generic scatter on flat positions
            return super().scatter(data, components, updates, plan, reduce, promises)
        parts = components.values
        mode, options = "promise_in_bounds", _NO_OPTIONS
        slices = plan.kind == "axes" and not plan.batch_dims and bool(parts)
        if components.keep is not None:
            mode = "drop"
            if slices and (reduce != "update" or promises.unique_indices):
                # Each vector writes one slice, which XLA drops whole where a coordinate is
                # out of range: negatives too, where JAX can be told not to count them from
                # the end. The ignored vectors then stay where they are, in order.
                options = _leave_negatives_alone("at")
            if not options:
                parts = [
                    self.kept_inside(c, components, n - 1, dropped_at=n)
                    for c, n in zip(parts, plan.axis_sizes, strict=True)
                ]
        elif components.keep_inside:
            parts = [jnp.clip(c, 0, n - 1) for c, n in zip(parts, plan.axis_sizes, strict=True)]
        shape = tuple(data.shape)
        if slices:
            lead: tuple[Any, ...] = (slice(None),) * plan.axis
            targets = list(parts)
            written = tuple(parts[0].shape)  # one write per index vector
        else:
            lead = ()
            targets = target_axes(jnp, parts, plan, shape, self.wide_index_dtype())
            written = plan.out_shape  # one write per element
        first, count = len(lead), len(targets)
        merged = math.prod(shape[first : first + count])
        flat = count > 1 and not _may_be_sharded(data) and (merged <= INT32_MAX or _has_int64())
        # Ignored vectors are moved past the end unless they stay for XLA to drop; the flat
        # positions below move them in any case.
        moved = mode == "drop" and (flat or not options)
        ordered = promises.indices_are_sorted and _sorted_for_xla(plan, moved, slices)
        if flat:
            # One flat position per write into the targeted axes merged (a view), which XLA
            # on CPU scatters faster than at one coordinate per axis (as the gathers do);
            # not where data may be split, which flattening would make XLA all-gather.
            dtype = self.flat_index_dtype(merged)
            cast = [jnp.astype(t, dtype, copy=False) for t in targets]
            positions = flat_positions(cast, row_major_strides(shape[first : first + count]))
            if components.keep is not None:  # a dropped write past the merged axes
                keep = jnp.reshape(components.keep, written if slices else plan.mask_shape)
                positions = jnp.where(keep, positions, merged)
            block = jnp.reshape(data, (*shape[:first], merged, *shape[first + count :]))
            where: tuple[Any, ...] = (*lead, jnp.broadcast_to(positions, written))
            return jnp.reshape(
                self._scatter_at(block, where, updates, written, mode, reduce, promises, ordered),
                shape,
            )
        where = (*lead, *(jnp.broadcast_to(t, written) for t in targets))  # updates' shape
        return self._scatter_at(
            data, where, updates, written, mode, reduce, promises, ordered, options
        )

    def _scatter_at(
        self, data: Any, where: tuple[Any, ...], updates: Any, written: tuple[int, ...],
        mode: str, reduce: str, promises: ScatterPromises, ordered: bool,
        options: Mapping[str, Any] = _NO_OPTIONS,
    ) -> Any:  # fmt: skip
        """``data.at[where]`` combined with `updates` by `reduce` (:func:`_last_update` for
        ``"update"`` without the unique promise); `options` for ``.at[]``'s method."""
        if reduce == "update" and not promises.unique_indices:
            self.flat_index_dtype(math.prod(written))  # refuses what int32 cannot number
            return _last_update(data, where, updates, written, mode, ordered)
        method = "set" if reduce == "update" else reduce
        return getattr(data.at[where], method)(
            updates, mode=mode, indices_are_sorted=ordered, **options
        )

    def enforce_lazily(
        self, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """Add a ``checkify`` check that reports the first bad index as the eager path does.

        Where `result` is this engine's gather (`find_bad` given), with a marker at every bad
        read, and no larger than the index, one reduction of the result settles the common
        case, nothing marked: the index, which the gather has just read, is read again (in
        `find_bad`, inside the branch) only where a marker is seen (W1: 4 MB of result
        against 16 MB of index).
        """
        if not under_checkify():
            msg = (
                'bad_indices="error" needs to read index values, which are traced here. '
                "Either wrap the function with jax.experimental.checkify.checkify (a bad index "
                'then comes back as a checkify error), or pass bad_indices="ignore", "clip", '
                '"wrap" or "unchecked"'
            )
            raise ValueError(msg)

        # dynamic_slice, not indexing: a traced index would add a second XLA gather.
        extra = [0] if report.vector else []
        sizes = [1] * bad.ndim + ([indices.shape[-1]] if report.vector else [])

        def first_bad(index: Any, flat_bad: Any) -> tuple[Any, Any, Any]:
            """The coordinates of the first bad position (one reduction), whether it is bad
            at all, and the index value there."""
            first = jnp.argmax(flat_bad)
            coords = tuple(jnp.unravel_index(first, bad.shape))
            value = lax.dynamic_slice(index, [*coords, *extra], sizes)
            is_bad = lax.dynamic_index_in_dim(flat_bad, first, keepdims=False)
            return coords, is_bad, jnp.reshape(value, (-1,))

        if find_bad is not None and result_is_read(
            result.dtype, math.prod(result.shape), math.prod(indices.shape)
        ):
            # Everything that reads the index is in the branch (on sharded indices, the
            # collectives too), taken only where a marker is seen.
            def none_bad(_: Any) -> tuple[Any, Any, Any]:
                nothing = jnp.zeros((math.prod(sizes),), dtype=indices.dtype)
                origin = jnp.unravel_index(jnp.zeros((), dtype=int), bad.shape)
                return tuple(origin), jnp.zeros((), dtype=bool), nothing

            coords, first_is_bad, value = lax.cond(
                marker_seen(result),
                lambda index: first_bad(index, jnp.reshape(find_bad(index), (-1,))),
                none_bad,
                indices,
            )
        else:
            coords, first_is_bad, value = first_bad(indices, jnp.reshape(bad, (-1,)))
        message, arguments = checkify_message(report, list(coords), value)
        checkify.check(~first_is_bad, message, **arguments)
        return result


@functools.cache
def _jitted(steps: Callable[..., Any]) -> Callable[..., Any]:
    """`steps` under ``jax.jit``, its first argument static: one wrapper per function, whose
    compilations JAX keeps per static value and argument shapes."""
    return jax.jit(steps, static_argnums=0)


def _sorted_for_xla(plan: GatherPlan, moved: bool, slices: bool) -> bool:
    """Whether the caller's promise of sorted targets (docs/contract.md, S9) makes XLA's
    index vectors sorted, so that it may be passed on: where each index vector writes a
    slice (the vectors are the targets), or each element is written by its coordinates and
    the targets are in row-major order of them (along an axis; ``scatter_nd`` with batch
    dims and no inner axes). Not where ignored vectors were `moved` past the end, nor where
    inner axes put the coordinates of repeated vectors out of order."""
    if moved:
        return False
    inner = len(plan.report.data_shape) - plan.axis - plan.depth
    return slices or plan.kind == "along" or inner == 0


def _last_update(
    data: Any, where: tuple[Any, ...], updates: Any, written: tuple[int, ...], mode: str,
    ordered: bool = False,
) -> Any:  # fmt: skip
    """``data.at[where].set(updates)`` with the last of duplicate writes winning, in
    row-major order of the writes (`written`, the shape of the index arrays in `where`, which
    follow its slices); `ordered`: the index vectors in `where` are sorted.

    One scatter, of positions, not values: the largest (last) write position per target;
    then one gather of the winning updates, so duplicates never depend on the order in which
    XLA writes. Its gradient is that gather's: to the winning updates, and to the data where
    nothing was written."""
    first = sum(isinstance(w, slice) for w in where)
    targets = where[first:]
    target_shape = tuple(data.shape[first : first + len(targets)])
    outer, inner = data.shape[:first], data.shape[first + len(targets) :]
    positions = jnp.reshape(jnp.arange(math.prod(written), dtype=jnp.int32), written)
    scratch = jnp.full(target_shape, -1, dtype=jnp.int32)
    winner = scratch.at[targets].max(positions, mode=mode, indices_are_sorted=ordered)
    lines = jnp.reshape(updates, (*outer, math.prod(written), *inner))
    picked = jnp.take(lines, jnp.maximum(winner, 0).reshape(-1), axis=first, mode="clip")
    hit = jnp.reshape(winner >= 0, (1,) * first + target_shape + (1,) * len(inner))
    return jnp.where(hit, jnp.reshape(picked, data.shape), data)


def _may_be_sharded(params: Any) -> bool:
    """Whether `params` may be split over several devices: never where the default backend
    has one device, nor for a concrete array held whole on each of its devices; otherwise (a
    tracer where there are several devices) its sharding is unknown here, and may be split.
    (A tracer sharded over the devices of a backend other than the default one, say several
    CPUs beside one GPU, is taken for unsplit: a cost, all-gathering it, not a wrong
    answer.)"""

    if jax.device_count() == 1:
        return False
    if is_traced(params) or not hasattr(params, "sharding"):
        return True
    return not params.sharding.is_fully_replicated


def _gather_vectors(block: Any, vectors: Any, outer: int, mode: str) -> Any:
    """``block[:, ..., v0, v1, ...]`` (`outer` leading axes kept whole) at the index vectors
    along the last axis of `vectors`: one XLA gather along the original axes."""

    depth = vectors.shape[-1]
    grid = vectors.ndim - 1
    inner = block.ndim - outer - depth
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(*range(outer), *range(outer + grid, outer + grid + inner)),
        collapsed_slice_dims=tuple(range(outer, outer + depth)),
        start_index_map=tuple(range(outer, outer + depth)),
    )
    sizes = (*block.shape[:outer], *(1,) * depth, *block.shape[outer + depth :])
    return lax.gather(block, vectors, numbers, sizes, mode=mode)


@functools.cache
def _leave_negatives_alone(method: Literal["at", "take_along_axis"]) -> Mapping[str, Any]:
    """The option that stops JAX's ``.at[]`` methods or ``take_along_axis`` (`method`) from
    adding the axis size to negative indices, where this JAX has it: the components count
    from the end already (normalize), or are bad and kept inside by the gather's mode (the
    extra compare and select would run inside the gather fusion, for every element), or
    are ignored and dropped by the scatter's mode where they stand."""

    function = jnp.take_along_axis if method == "take_along_axis" else jnp.zeros(0).at[0].get
    if "wrap_negative_indices" in inspect.signature(function).parameters:
        return MappingProxyType({"wrap_negative_indices": False})
    return _NO_OPTIONS


def _has_int64() -> bool:

    read: Callable[[str], object] = jax.config.read  # unannotated in JAX
    return bool(read("jax_enable_x64"))


def is_traced(x: Any) -> bool:
    """Whether the values of JAX array `x` are out of reach of Python here.

    True for a tracer (under ``jit``, ``vmap``, ``grad``, ...), and also for a concrete JAX
    array while a staging trace (``jit``, ``checkify``, ``eval_shape``) is active: an index
    list or a closed-over array inside a jitted function is concrete, but every operation on
    it is staged, so a reduction of it cannot be read either. Under ``grad`` and ``vmap``
    alone, operations on concrete arrays stay concrete, and so does this answer.
    """

    if isinstance(x, jax.core.Tracer):
        return True
    if no_trace_active():  # the plain eager call, answered without a dispatch
        return False
    return isinstance(jnp.zeros((), dtype=bool), jax.core.Tracer)


def _tree_steps(
    static: tuple[JaxEngine, int, str, bool], values: Any, slots: Any
) -> tuple[Any, Any]:  # fmt: skip
    """``JaxEngine.tree_partials``'s program: `values` ``(N, F)`` at `slots` ``(N,)`` (in
    ``[0, segments]``, ``segments`` for a row of none); `in_order`: the slots are promised
    sorted. The count of rows per segment is an integer scatter-add (exact in any order);
    sorted by segment, the rows of segment ``s`` are those from ``first[s]`` on."""
    engine, segments, op, in_order = static
    wide = engine.wide_index_dtype()
    count = jnp.zeros((segments + 1,), dtype=wide).at[slots].add(1, mode="drop")[:segments]
    first = jnp.cumsum(count) - count
    if in_order or values.shape[0] == 1:
        return _tree_in_order(values, slots, first, count, segments, op), count

    def in_order_tree(values: Any, slots: Any) -> Any:
        return _tree_in_order(values, slots, first, count, segments, op)

    def sorted_tree(values: Any, slots: Any) -> Any:
        return _tree_sorted(values, slots, first, count, segments, op)

    ordered = jnp.all(slots[1:] >= slots[:-1])
    return lax.cond(ordered, in_order_tree, sorted_tree, values, slots), count


def _bit_length(x: Any) -> Any:
    """``int.bit_length`` of each value of the non-negative integer array `x`."""
    return 8 * x.dtype.itemsize - lax.clz(x)


def _tree_in_order(
    values: Any, slots: Any, first: Any, count: Any, segments: int, op: str
) -> Any:  # fmt: skip
    """The tree over rows whose slots are sorted (each segment's rows contiguous, at
    consecutive positions), by halving: the blocks of ``2**l`` positions are the pairs of
    blocks of ``2**(l - 1)``, each known by the value of its first segment (``head``, the
    segment's rows in the block combined by the tree) and of its last (``tail``). Where the
    left block's last segment is the right block's first, ``tail op head`` (``joined``) is
    that segment's value over the pair, and the pair's head or tail where the segment is
    all of the left or the right block. A segment's value is the ``joined`` of the level
    ``bit_length(first ^ last)``, in its block ``first >> level`` (a single row its own
    value). Level ``l`` touches ``N / 2**l`` blocks: ``2N`` in all, with reshapes and
    elementwise ops only."""
    n, width = values.shape
    head = tail = values
    head_seg = tail_seg = slots
    joined: list[Any] = []
    sizes = [0]
    none = jnp.full((1,), segments, dtype=slots.dtype)
    while head.shape[0] > 1:
        if head.shape[0] % 2:  # a block of no segment after an odd last one
            head = jnp.concatenate([head, head[-1:]])
            tail = jnp.concatenate([tail, tail[-1:]])
            head_seg = jnp.concatenate([head_seg, none])
            tail_seg = jnp.concatenate([tail_seg, none])
        pairs = head.shape[0] // 2
        heads = jnp.reshape(head, (pairs, 2, width))
        tails = jnp.reshape(tail, (pairs, 2, width))
        head_segs = jnp.reshape(head_seg, (pairs, 2))
        tail_segs = jnp.reshape(tail_seg, (pairs, 2))
        meet = tail_segs[:, 0] == head_segs[:, 1]
        value = tails[:, 0] + heads[:, 1] if op == "add" else tails[:, 0] * heads[:, 1]
        left_whole = (meet & (head_segs[:, 0] == tail_segs[:, 0]))[:, None]
        right_whole = (meet & (head_segs[:, 1] == tail_segs[:, 1]))[:, None]
        head = jnp.where(left_whole, value, heads[:, 0])
        tail = jnp.where(right_whole, value, tails[:, 1])
        head_seg, tail_seg = head_segs[:, 0], tail_segs[:, 1]
        joined.append(value)
        sizes.append(pairs)
    offsets = jnp.asarray([sum(sizes[:k]) for k in range(len(sizes))], dtype=first.dtype)
    start = jnp.minimum(first, n - 1)
    level = _bit_length(jnp.bitwise_xor(start, jnp.maximum(start + count - 1, start)))
    found = jnp.take(values, start, axis=0, mode="clip")  # a single row: its own value
    if joined:  # (the joined values of levels 1, 2, ... one after the other)
        at = jnp.take(offsets, jnp.maximum(level, 1)) + jnp.right_shift(start, level)
        found_joined = jnp.take(jnp.concatenate(joined), at, axis=0, mode="clip")
        found = jnp.where((level > 0)[:, None], found_joined, found)
    pad = jnp.asarray(padding(jnp, op, values.dtype), dtype=values.dtype)
    return jnp.where((count == 0)[:, None], pad, found)


def _sort_by_segment(slots: Any, segments: int) -> tuple[Any, Any]:
    """``(order, seg)``: the positions of the rows sorted by slot, then position, and their
    slots. One sort of distinct keys ``slot * 2**bits + position`` where they fit the index
    dtype; else, where the slots need at most two digits of the bits left beside a
    position in an int32, a radix sort of those digits, each one sort of distinct int32
    keys ``digit * 2**bits + rank`` (XLA sorts one operand far faster than several); else one
    sort of two keys. All exact: the keys are distinct, so no sort needs to be stable."""
    n = slots.shape[0]
    bits = max((n - 1).bit_length(), 1)
    wide = jnp.int64 if _has_int64() else jnp.int32
    positions = jnp.arange(n, dtype=wide)
    mask = (1 << bits) - 1
    slot_bits = segments.bit_length()
    if slot_bits + bits < 8 * jnp.dtype(wide).itemsize:
        keys = lax.sort(jnp.left_shift(jnp.astype(slots, wide), bits) + positions)
        order = jnp.bitwise_and(keys, mask)
        return order, jnp.astype(jnp.right_shift(keys, bits), slots.dtype)
    digit = 31 - bits
    if digit > 0 and 2 * digit >= slot_bits:
        small = jnp.astype(slots, jnp.int32)
        low = jnp.bitwise_and(small, (1 << digit) - 1)
        order = jnp.bitwise_and(lax.sort(jnp.left_shift(low, bits) + positions), mask)
        high = jnp.right_shift(jnp.take(small, order), digit)
        ranks = jnp.bitwise_and(lax.sort(jnp.left_shift(high, bits) + positions), mask)
        order = jnp.take(order, ranks)
    else:
        order = lax.sort((slots, positions), num_keys=2, is_stable=False)[1]
    return order, jnp.take(slots, order)


def _tree_sorted(
    values: Any, slots: Any, first: Any, count: Any, segments: int, op: str
) -> Any:  # fmt: skip
    """The tree over rows in any order, merged level by level where they lie.

    Sorted by slot, then position (:func:`_sort_by_segment`), two adjacent rows ``j`` and
    ``j + 1`` of one segment are the first rows of the two halves of a block of level
    ``bit_length(p_j ^ p_{j+1})``; its left half begins at the segment's first row in the
    block, ``left`` (a search within the segment, :func:`_block_starts`). The merges, sorted
    by level (one sort of distinct keys), run in chunks of fixed size, each chunk within one
    level (:func:`_merge_chunks`): ``value[left] = value[left] op value[j + 1]``, every
    node's value held at its first row, so each segment's at its first. A level's merges
    read and write distinct rows, so its chunks run in any order: ``N - segments``
    merges in all, on the rows gathered in sorted order (a segment's rows close by)."""
    n = values.shape[0]
    order, seg = _sort_by_segment(slots, segments)
    levels = (n - 1).bit_length()
    same = (seg[1:] == seg[:-1]) & (seg[:-1] < segments)
    level = _bit_length(jnp.bitwise_xor(order[:-1], order[1:]))
    gap_level = jnp.where(same, level, levels + 1)  # (no merge: after the last level)
    seg_start = jnp.take(first, jnp.minimum(seg[:-1], segments - 1))
    left = _block_starts(order, level, jnp.where(same, seg_start, jnp.arange(n - 1)))
    rows = jnp.take(values, order, axis=0, mode="clip")  # (a merge reads rows close by)
    merged = _merge_chunks(rows, gap_level, left, levels, op)
    found = jnp.take(merged, jnp.minimum(first, n - 1), axis=0, mode="clip")
    pad = jnp.asarray(padding(jnp, op, values.dtype), dtype=values.dtype)
    return jnp.where((count == 0)[:, None], pad, found)


def _block_starts(order: Any, level: Any, low: Any) -> Any:
    """For each gap ``j`` (between sorted rows ``j`` and ``j + 1``) of level ``level[j]``:
    the first row ``k`` in ``[low[j], j]`` whose position ``order[k]`` lies in the block of
    ``order[j]`` (``order`` rises over that range: one segment's rows). A binary search, as
    many steps as the longest range needs."""
    high = jnp.arange(order.shape[0] - 1, dtype=order.dtype)
    block = jnp.left_shift(jnp.right_shift(order[:-1], level), level)

    def searching(state: tuple[Any, Any]) -> Any:
        low, high = state
        return jnp.any(low < high)

    def step(state: tuple[Any, Any]) -> tuple[Any, Any]:
        low, high = state
        middle = low + jnp.right_shift(high - low, 1)
        before = jnp.take(order, middle) < block
        return jnp.where(before, middle + 1, low), jnp.where(before, high, middle)

    return lax.while_loop(searching, step, (jnp.astype(low, order.dtype), high))[0]


def _merge_chunks(values: Any, gap_level: Any, left: Any, levels: int, op: str) -> Any:
    """`values` (sorted rows) with ``value[left[j]] op= value[j + 1]`` for each gap ``j`` of
    level ``gap_level[j]`` in ``1 .. levels`` (``levels + 1``: no merge), the levels in
    increasing order, in chunks of a fixed size within one level (a loop of a fixed count,
    which reverse-mode differentiation runs through)."""
    n = values.shape[0]
    gaps = n - 1
    bits = max((gaps - 1).bit_length(), 1)
    index = left.dtype
    positions = jnp.arange(gaps, dtype=index)
    if (levels + 2) << bits <= INT32_MAX or index == jnp.int64:
        keys = lax.sort(jnp.left_shift(jnp.astype(gap_level, index), bits) + positions)
        by_level = jnp.bitwise_and(keys, (1 << bits) - 1)
    else:
        keys = None
        by_level = lax.sort((gap_level, positions), num_keys=2, is_stable=False)[1]
    steps = jnp.arange(1, levels + 3, dtype=index)  # each level's first merge
    if keys is not None:
        bounds = jnp.searchsorted(keys, jnp.left_shift(steps, bits))
    else:
        bounds = jnp.searchsorted(jnp.take(gap_level, by_level), steps)
    bounds = jnp.astype(bounds, index)
    # Chunks of 4096 merges (fewer for fewer rows): their rows stay in the caches.
    size = 1 << min(12, max(8, (gaps - 1).bit_length() - 6))
    size = min(size, 1 << max((gaps - 1).bit_length(), 0))
    chunks = (bounds[1:] - bounds[:-1] + size - 1) // size  # per level
    chunk_ends = jnp.cumsum(chunks[:levels])
    total = -(-gaps // size) + levels  # at most
    tail = jnp.zeros((size,), dtype=index)
    target = jnp.concatenate([jnp.take(left, by_level, mode="clip"), tail])
    source = jnp.concatenate([by_level + 1, tail])
    within = jnp.arange(size, dtype=index)

    def chunk(t: Any, values: Any) -> Any:
        at = jnp.searchsorted(chunk_ends, t, side="right", method="compare_all")
        level = jnp.minimum(at, levels - 1)  # (past the last chunk: no merge)
        done = jnp.where(level > 0, jnp.take(chunk_ends, jnp.maximum(level - 1, 0)), 0)
        start = jnp.take(bounds, level) + (t - done) * size
        stop = jnp.where(at < levels, jnp.take(bounds, level + 1), 0)
        into = lax.dynamic_slice(target, (start,), (size,))
        take_from = lax.dynamic_slice(source, (start,), (size,))
        live = start + within < stop
        a = jnp.take(values, into, axis=0, mode="clip")
        b = jnp.take(values, take_from, axis=0, mode="clip")
        joined = a + b if op == "add" else a * b
        return values.at[jnp.where(live, into, n)].set(joined, mode="drop")

    return lax.fori_loop(0, total, chunk, values)
