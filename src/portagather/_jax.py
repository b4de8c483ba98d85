"""JAX: tracing, the ``"error"`` check through ``checkify``, gathers that XLA partitions.

Where params may be sharded over several devices, gathers never flatten them: one
multi-dimensional gather along the original axes (``params[..., i0, i1]``, vmapped over
batch dims) is what XLA partitions without moving params, where a flat position into a
reshaped params would make it all-gather them. Where params cannot be split (one device of
the default backend, or a concrete array held whole on each of its devices), index vectors
of several components without batch dims read params through one flat position each,
which XLA on CPU runs faster (GPU and TPU are not measured here). Reads that may be out of
range are clamped by the gather (``mode="clip"``), or by a clip fused before an element
gather (:func:`_kept_inside`).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from ._dispatch import INT32_MAX, Engine
from ._errors import BadIndex
from ._indices import Components, IndexAccess, flat_positions
from ._plan import GatherPlan
from ._scatter import target_axes


class JaxEngine(Engine):
    def index_access(self, x: Any) -> IndexAccess:
        return "trace" if is_traced(x) else "now"

    def reads_cheaply(self, x: Any) -> bool:
        return all(d.platform == "cpu" for d in x.devices())

    def wide_index_dtype(self, xp: Any, like: Any = None) -> Any:
        """JAX without ``jax_enable_x64`` silently turns int64 into int32."""
        return xp.int64 if _has_int64() else xp.int32

    def flat_index_dtype(self, xp: Any, largest: int) -> Any:
        if largest > INT32_MAX:
            if not _has_int64():
                msg = (
                    f"the gather reads positions up to {largest}, more than int32 holds, and "
                    "JAX has no int64 without jax_enable_x64; enable it with "
                    "jax.config.update('jax_enable_x64', True) or gather from a smaller array"
                )
                raise ValueError(msg)
            return xp.int64
        return xp.int32

    def gather(
        self, xp: Any, data: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """The gather; where ``checkify`` will look for bad reads in the result
        (:func:`_marks_bad_reads`), they hold the marker of the dtype (:func:`_bad_marker`)."""
        result = super().gather(xp, data, components, plan, out)
        if not _marks_bad_reads(components, plan, result.dtype):
            return result
        import jax.numpy as jnp

        bad = jnp.reshape(components.bad, plan.mask_shape)
        marker = jnp.asarray(_bad_marker(result.dtype), dtype=result.dtype)
        return jnp.where(bad, marker, result)

    def gather_axes(self, xp: Any, params: Any, components: Components, plan: GatherPlan) -> Any:
        """``params[β, :, ..., c0, c1, ...]``: one gather.

        One component: JAX's own indexing along the axis. Several, without batch dims, on
        params that cannot be split and where bad reads need no fill: one flat position per
        vector. Otherwise one gather along the original axes, reading the index vectors as
        the caller gave them where the policy left them whole (``components.vectors``): no
        pass to take them apart and stack them again.
        """
        if not components.values:  # index depth 0: the generic composition
            return super().gather_axes(xp, params, components, plan)
        import jax
        import jax.numpy as jnp

        # int32 positions where all of params fits (without x64, a larger one is refused).
        flat_dtype = self.flat_index_dtype(xp, plan.largest_flat)
        outer = plan.axis - plan.batch_dims
        mode = _read_mode(components, plan, params.dtype)
        # Whether each index vector reads one element, not a slice (for _kept_inside).
        elements = not outer and params.ndim == plan.axis + plan.depth
        parts = components.values
        gather: Callable[[Any, Any], Any]
        if len(parts) == 1:
            # One component: JAX's own indexing, which ran ~10% faster than lax.gather on the
            # int64 index (W2, W3, W5 "unchecked", medians of 3 repeats: 1.00-1.07 against
            # 1.10-1.14 of the fastest native).
            slices = (slice(None),) * outer
            index, mode = _kept_inside(parts[0], plan.axis_sizes[0] - 1, mode, elements)
            options = _leave_negatives_alone("get")

            def gather(block: Any, component: Any) -> Any:
                return block.at[tuple([*slices, component])].get(mode=mode, **options)

        elif plan.batch_dims == 0 and mode != "fill" and not _may_be_sharded(params):
            # Several components, params that cannot be split: one flat position per vector
            # into params viewed as (gathered, inner), the read of ``take(p.ravel(), flat)``.
            # W1 "unchecked", time / the fastest native (CPU, 1 thread): 0.94-0.95 side by
            # side, where the gather along both axes was 1.04-1.51; 0.81 in the full run
            # with _kept_inside's clip. Not for "fill" (checkify without markers): a flat
            # position can be in range where a component is not, and would read a real
            # element where the fill is wanted. Flattening is what makes XLA all-gather
            # sharded params, hence _may_be_sharded.
            cast = [xp.astype(c, flat_dtype, copy=False) for c in parts]
            flat = flat_positions(cast, plan.strides)
            gathered = math.prod(plan.axis_sizes)
            flat, mode = _kept_inside(flat, gathered - 1, mode, elements)
            block = jnp.reshape(params, (gathered, *params.shape[plan.depth :]))
            return block.at[flat].get(mode=mode, **_leave_negatives_alone("get"))
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
        self, xp: Any, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        import jax.numpy as jnp

        (index,) = components.values
        self.flat_index_dtype(xp, plan.largest_flat)
        if plan.data_block is not None:
            x = x[tuple(slice(0, size) for size in plan.data_block)]
        mode = _read_mode(components, plan, x.dtype)
        index, mode = _kept_inside(index, plan.axis_sizes[0] - 1, mode, elements=True)
        options = _leave_negatives_alone("take_along_axis")
        return jnp.take_along_axis(x, index, axis=plan.axis, mode=mode, **options)

    def scatter(
        self, xp: Any, data: Any, components: Components, updates: Any, plan: GatherPlan,
        reduce: str,
    ) -> Any:  # fmt: skip
        """One XLA scatter along the original axes (``data.at[β, :, c0, c1, ...]``).

        Ignored vectors are moved out of range and dropped by the scatter's ``drop`` mode.
        ``"update"`` scatters positions, not values: the largest (last) update position per
        element, then one gather of the winning updates, so duplicates never depend on the
        order in which XLA writes; its gradient is that gather's, masked to the winners.
        """
        if data.ndim == 0:  # nothing to index along: the generic scatter on flat positions
            return super().scatter(xp, data, components, updates, plan, reduce)
        import jax.numpy as jnp

        parts = components.values
        mode = "promise_in_bounds"
        if components.keep is not None:
            parts = [
                jnp.where(components.keep, c, n)
                for c, n in zip(parts, plan.axis_sizes, strict=True)
            ]
            mode = "drop"
        elif components.keep_inside:
            mode = "clip"
        where = tuple(
            jnp.broadcast_to(axis, plan.out_shape)  # JAX wants the updates' shape
            for axis in target_axes(xp, parts, plan, tuple(data.shape), self.wide_index_dtype(xp))
        )
        if reduce == "update":
            count = math.prod(plan.out_shape)
            self.flat_index_dtype(xp, count)  # refuses what int32 cannot number
            positions = jnp.reshape(jnp.arange(count, dtype=jnp.int32), plan.out_shape)
            none = jnp.full(data.shape, -1, dtype=jnp.int32)
            winner = none.at[where].max(positions, mode=mode)
            picked = jnp.take(jnp.reshape(updates, (-1,)), jnp.maximum(winner, 0), mode="clip")
            return jnp.where(winner >= 0, picked, data)
        return getattr(data.at[where], reduce)(updates, mode=mode)

    def enforce_lazily(
        self, xp: Any, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """Add a ``checkify`` check that reports the first bad index as the eager path does.

        Where `result` is this engine's gather (`find_bad` given), with a marker at every bad
        read, and no larger than the index, one reduction of the result settles the common
        case, nothing marked: the index, which the gather has just read, is read again (in
        `find_bad`, inside the branch) only where a marker is seen (W1: 4 MB of result
        against 16 MB of index).
        """
        if not _under_checkify():
            msg = (
                'bad_indices="error" needs to read index values, which are traced here. '
                "Either wrap the function with jax.experimental.checkify.checkify (a bad index "
                'then comes back as a checkify error), or pass bad_indices="ignore", "clip", '
                '"wrap" or "unchecked"'
            )
            raise ValueError(msg)
        import jax.numpy as jnp
        from jax import lax
        from jax.experimental import checkify

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

        if find_bad is not None and _result_is_read(
            result.dtype, math.prod(result.shape), math.prod(indices.shape)
        ):
            # Everything that reads the index is in the branch (on sharded indices, the
            # collectives too), taken only where a marker is seen.
            def none_bad(_: Any) -> tuple[Any, Any, Any]:
                nothing = jnp.zeros((math.prod(sizes),), dtype=indices.dtype)
                origin = jnp.unravel_index(jnp.zeros((), dtype=int), bad.shape)
                return tuple(origin), jnp.zeros((), dtype=bool), nothing

            coords, first_is_bad, value = lax.cond(
                _marker_seen(result),
                lambda index: first_bad(index, jnp.reshape(find_bad(index), (-1,))),
                none_bad,
                indices,
            )
        else:
            coords, first_is_bad, value = first_bad(indices, jnp.reshape(bad, (-1,)))
        message, arguments = _checkify_message(report, list(coords), value)
        checkify.check(~first_is_bad, message, **arguments)
        return result


def _read_mode(components: Components, plan: GatherPlan, dtype: Any) -> str:
    """How the gather keeps out-of-range reads inside.

    Nothing to do where every index is valid; a clamp where reads may be out of range (the
    gather's own, or one fused before it: :func:`_kept_inside`); ``"fill"`` where
    ``checkify`` reports them and no marker is put there instead (those reads hold JAX's
    fill value and get no gradient; XLA on CPU runs "fill" faster than its own "clip").
    """
    if components.valid:
        return "promise_in_bounds"
    if components.bad is not None and not _marks_bad_reads(components, plan, dtype):
        return "fill"
    return "clip"


def _kept_inside(index: Any, largest: int, mode: str, elements: bool) -> tuple[Any, str]:
    """`index` and the gather mode that keep its reads inside ``[0, largest]``.

    Where `mode` is ``"clip"`` and each index value reads one element (`elements`), the
    index is clamped by one elementwise clip, fused into the gather's index computation,
    and the gather is told that every read is in bounds: XLA on CPU runs that faster than
    the gather's own clamp (W1 "unchecked", 1M points from 2000 x 2000 float32, 1 thread,
    side by side: 4.0-4.6 ms against 4.6-5.4 ms). Where each value reads a slice, the
    fused clip would be computed again for every element of it (W2, rows of 64: 3-4%
    slower), and the gather's own clamp stays.
    """
    if mode != "clip" or not elements:
        return index, mode
    import jax.numpy as jnp

    return jnp.clip(index, 0, largest), "promise_in_bounds"


def _marks_bad_reads(components: Components, plan: GatherPlan, dtype: Any) -> bool:
    """Whether the gather of `plan` puts markers at its bad reads for ``checkify``."""
    if components.bad is None:
        return False
    index_values = math.prod(components.bad.shape) * len(components.values)
    return _result_is_read(dtype, math.prod(plan.out_shape), index_values)


def _result_is_read(dtype: Any, result_size: int, index_size: int) -> bool:
    """Whether the check of a gather's bad reads looks for markers in its result: where the
    dtype has a marker and the result has no more elements than the index has values, so
    that reading it costs no more than reading the index again (W1: 1M results against 2M
    index values)."""
    return _bad_marker(dtype) is not None and result_size <= index_size


def _bad_marker(dtype: Any) -> Any:
    """The value a checked gather puts at bad reads, for the check to find: NaN, or the
    least (signed) or greatest (unsigned) integer; None for booleans, which have none.

    The caller's data may hold it too; the check then reads the index to be sure.
    """
    import jax.numpy as jnp

    if jnp.issubdtype(dtype, jnp.inexact):
        return math.nan
    if jnp.issubdtype(dtype, jnp.signedinteger):
        return np.iinfo(dtype).min
    if jnp.issubdtype(dtype, jnp.unsignedinteger):
        return np.iinfo(dtype).max
    return None


def _marker_seen(result: Any) -> Any:
    """Whether `result` holds the marker of its dtype anywhere: one reduction of it.

    For floats a plain sum, NaN wherever a marker is (XLA on CPU sums twice as fast as it
    reduces ``isnan`` or ``result * 0``; infinities of both signs, or partial sums that
    overflow both ways, also sum to NaN, which only costs the index read that settles it);
    for integers a min or max.
    """
    import jax.numpy as jnp

    if jnp.issubdtype(result.dtype, jnp.inexact):
        return jnp.isnan(jnp.sum(result))
    if jnp.issubdtype(result.dtype, jnp.signedinteger):
        return jnp.min(result) == np.iinfo(result.dtype).min
    return jnp.max(result) == np.iinfo(result.dtype).max


def _may_be_sharded(params: Any) -> bool:
    """Whether `params` may be split over several devices: never where the default backend
    has one device, nor for a concrete array held whole on each of its devices; otherwise (a
    tracer where there are several devices) its sharding is unknown here, and may be split.
    (A tracer sharded over the devices of a backend other than the default one, say several
    CPUs beside one GPU, is taken for unsplit: a cost, all-gathering it, not a wrong
    answer.)"""
    import jax

    if jax.device_count() == 1:
        return False
    if is_traced(params) or not hasattr(params, "sharding"):
        return True
    return not params.sharding.is_fully_replicated


def _gather_vectors(block: Any, vectors: Any, outer: int, mode: str) -> Any:
    """``block[:, ..., v0, v1, ...]`` (`outer` leading axes kept whole) at the index vectors
    along the last axis of `vectors`: one XLA gather along the original axes."""
    from jax import lax

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
def _leave_negatives_alone(method: Literal["get", "take_along_axis"]) -> Mapping[str, Any]:
    """The option that stops JAX's ``.at[].get`` or ``take_along_axis`` (`method`) from
    adding the axis size to negative indices, where this JAX has it: the components count
    from the end already (normalize), or are bad and kept inside by the gather's mode, and
    the extra compare and select ran inside the gather fusion (W4: 6-10% of its time)."""
    import jax.numpy as jnp

    function = jnp.take_along_axis if method == "take_along_axis" else jnp.zeros(0).at[0].get
    if "wrap_negative_indices" in inspect.signature(function).parameters:
        return MappingProxyType({"wrap_negative_indices": False})
    return MappingProxyType({})


def _has_int64() -> bool:
    import jax

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
    import jax
    import jax.numpy as jnp

    if isinstance(x, jax.core.Tracer):
        return True
    return isinstance(jnp.zeros((), dtype=bool), jax.core.Tracer)


def _checkify_message(
    report: BadIndex, coords: list[Any], value: Any
) -> tuple[str, dict[str, Any]]:
    """The eager path's IndexError text, as a ``checkify`` format string and its arguments.

    One scalar argument per coordinate and per component, so that the message prints like
    the eager one (``indices[2, 0] = [7, 1] ...``), not as NumPy arrays (``[2 0]``).
    """
    # Private-use characters stand for the fields while the rest of the text is escaped.
    field = "\ue000{}\ue001"
    position = tuple(field.format(f"p{k}") for k in range(len(coords)))
    components = [field.format(f"v{j}") for j in range(value.shape[0])]
    shown = "[" + ", ".join(components) + "]" if report.vector else components[0]
    text = report.text(position, shown).replace("{", "{{").replace("}", "}}")
    text = text.replace("\ue000", "{").replace("\ue001", "}")
    arguments = {f"p{k}": c for k, c in enumerate(coords)}
    arguments.update({f"v{j}": value[j] for j in range(value.shape[0])})
    return text, arguments


def _under_checkify() -> bool:
    """Whether the current trace runs inside ``checkify.checkify``.

    A traced ``checkify.check`` outside ``checkify`` fails only when the function is lowered,
    with JAX's own message; the tracers look the same either way. ``checkify`` is on the call
    stack whenever it is tracing the caller's function, so look there.
    """
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith(_CHECKIFY_SOURCE):
            return True
        frame = frame.f_back
    return False


_CHECKIFY_SOURCE = os.path.join("jax", "_src", "checkify.py")
