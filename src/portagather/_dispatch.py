"""Which engine runs a plan: the generic one on the standard's functions, or a backend's own.

An engine is one small object per namespace, looked up once per call by :func:`engine_for`.
It owns everything that differs between backends: how index values can be seen (now, in a
task graph, under a trace, never), the index widths, a one-pass clamp, the range read, and
the gather itself. The generic :class:`Engine` composes every gather from the standard's
``take`` on computed flat positions; NumPy, PyTorch and ndonnx override a few steps here, and
JAX (``_jax.py``) and Dask (``_dask.py``) have modules of their own. The pipeline in ``_api``
never asks which backend it runs on.

No backend is imported here but NumPy, a dependency (imported once, not in each call); each
other engine's module imports its library only when an array of it is already in hand.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import device_for_new
from ._errors import BadIndex
from ._indices import Components, IndexAccess, flat_positions
from ._plan import GatherPlan
from ._scatter import flat_targets, sorted_scatter, target_axes

INT32_MAX = 2**31 - 1


class Engine:
    """The generic engine: every step written against the array API standard."""

    #: Whether ``take`` itself keeps out-of-range positions inside the array (NumPy's clip).
    take_clamps = False
    #: Whether the backend's gathers take int64 indices only, or convert every width to it.
    int64_gathers = False
    #: Whether :meth:`gather_if_valid` may apply: the backend's own gathers check bounds. A
    #: flag, so that engines without one skip even the call (a tiny call feels it).
    gathers_checked = False

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
        data at no pass over them (NumPy's clipping ``take``)."""
        return self.take_clamps

    def index_array(self, xp: Any, indices: Any) -> Any:
        """The caller's index array, laid out for the policies' elementwise work."""
        return indices

    def index_block_rows(self, data: Any, indices: Any, plan: GatherPlan) -> int:
        """How many rows of a large index to process at a time (0: all at once)."""
        return 0

    def vector_components(self, values: Any, depth: int) -> list[Any]:
        """The `depth` components of the index vectors along the last axis of `values`."""
        return [values[..., j] for j in range(depth)]

    def wide_index_dtype(self, xp: Any) -> Any:
        """The widest signed integer dtype the namespace holds; the policies work in it."""
        try:
            signed = xp.__array_namespace_info__().dtypes(kind="signed integer")
        except AttributeError:
            return xp.int64
        return signed.get("int64", signed.get("int32"))

    def flat_index_dtype(self, xp: Any, largest: int) -> Any:
        """The dtype of the flat positions handed to ``take``: int32 where `largest` fits."""
        if largest > INT32_MAX or self.int64_gathers:
            return self.wide_index_dtype(xp)
        return xp.int32

    def clamp(self, xp: Any, values: Any, low: int, high: int) -> Any:
        """Clip into ``[low, high]`` (Python ints)."""
        return xp.minimum(xp.maximum(values, low), high)

    def value_range(self, xp: Any, x: Any) -> tuple[int, int]:
        """``(min, max)`` of an eager integer array, as Python ints."""
        return int(xp.min(x)), int(xp.max(x))

    def read_int(self, value: Any) -> int:
        """One element of an eager integer array as a Python int."""
        return int(value)

    def empty(self, xp: Any, data: Any, shape: tuple[int, ...]) -> Any:
        """The result of a gather that reads nothing."""
        return xp.zeros(shape, dtype=data.dtype, device=device_for_new(data))

    def enforce_lazily(
        self, xp: Any, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """Enforce ``"error"`` where values cannot be read now; here, where they never can.

        `find_bad` is given where `result` is this engine's :meth:`gather` of the checked
        components (not a scatter): `bad` from the index array again, for an engine whose
        gather marks bad reads and that reads the index only where a mark is seen.
        """
        msg = (
            'bad_indices="error" cannot be enforced on symbolic arrays: ONNX has no operator '
            'that raises at run time; pass bad_indices="ignore", "clip", "wrap" or "unchecked"'
        )
        raise ValueError(msg)

    # The scatter: a new array, the data with the updates combined at the components'
    # targets (``_scatter``).

    def copy(self, xp: Any, data: Any) -> Any:
        """A new array equal to `data` (a scatter that writes nothing)."""
        return xp.asarray(data, copy=True)

    def scatter(
        self, xp: Any, data: Any, components: Components, updates: Any, plan: GatherPlan,
        reduce: str,
    ) -> Any:  # fmt: skip
        """`data` with `updates` (of ``plan.out_shape``) combined by `reduce` at the places
        the gather of `plan` would read; ignored index vectors drop their updates."""
        shape = tuple(data.shape)
        size = math.prod(shape)
        wide = self.wide_index_dtype(xp)
        axes = target_axes(xp, components.values, plan, shape, wide)
        flat = flat_targets(xp, axes, shape, plan.out_shape, wide)
        if components.keep is not None:
            keep = xp.reshape(components.keep, plan.mask_shape)
            flat = xp.where(keep, flat, size)  # past the end: dropped
        elif components.keep_inside:
            flat = self.clamp(xp, flat, 0, size - 1)
        return self.scatter_at(xp, data, flat, updates, reduce)

    def scatter_at(self, xp: Any, data: Any, flat: Any, updates: Any, reduce: str) -> Any:
        """The scatter at flat positions `flat` into `data` (shaped like `updates`;
        ``data.size`` marks an update to drop)."""
        line = xp.reshape(updates, (-1,))
        select = self.select_function(xp, data.dtype)
        return sorted_scatter(xp, data, xp.reshape(flat, (-1,)), line, reduce, select)

    # The gather: one read of the data at the components, as the plan lays them out.

    def gather(
        self, xp: Any, data: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """The gathered array (written into `out` where the engine can; here it cannot)."""
        if plan.kind == "axes":
            return self.gather_axes(xp, data, components, plan)
        return self.gather_along(xp, data, components, plan)

    def gather_if_valid(self, xp: Any, data: Any, indices: Any, plan: GatherPlan) -> Any | None:
        """The gather at the caller's `indices` as they are, by a backend gather that checks
        every value against its axis itself and raises, reading nothing outside, when one is
        not in ``[0, n)``: with every value valid, that is the answer of every policy, and it
        costs no pass of portagather's. None where the engine has no such gather or a value
        is not valid (the policy then decides, from the start)."""
        return None

    def fill(self, xp: Any, result: Any, keep: Any, fill: Any) -> Any:
        """`result` with `fill` where `keep` (broadcast against it) is False."""
        return self.select_function(xp, result.dtype)(keep, result, fill)

    def select_function(self, xp: Any, dtype: Any) -> Any:
        """The ``where(condition, x, y)`` that keeps values of `dtype` exact."""
        return xp.where

    def gather_axes(self, xp: Any, params: Any, components: Components, plan: GatherPlan) -> Any:
        """``plan.depth`` consecutive axes of `params` from ``plan.axis``, at the components.

        The components have shape ``params.shape[:batch_dims] + grid``. params is viewed as
        ``(batch, outer, gathered, inner)`` blocks for one :meth:`take_along` at flat
        positions into the gathered block.
        """
        shape, b, axis = tuple(params.shape), plan.batch_dims, plan.axis
        flat = flat_positions(components.values, plan.strides)
        if flat is None:  # index depth 0: every index vector selects the whole block
            grid = self._depth0_grid(plan)
            flat = xp.zeros(grid, dtype=xp.int32, device=device_for_new(params))
        flat = self._flat_ready(xp, flat, components, math.prod(plan.axis_sizes) - 1, plan)
        grid = tuple(flat.shape[b:])
        stop = axis + plan.depth
        blocks = [math.prod(s) for s in (shape[:b], shape[b:axis], shape[axis:stop])]
        data = xp.reshape(params, (*blocks, math.prod(shape[stop:])))
        index = xp.reshape(flat, (blocks[0], 1, math.prod(grid), 1))
        return xp.reshape(self.take_along(xp, data, index, 2), plan.out_shape)

    @staticmethod
    def _depth0_grid(plan: GatherPlan) -> tuple[int, ...]:
        b = plan.batch_dims
        inner = len(plan.report.data_shape) - b - plan.depth
        return plan.out_shape[: len(plan.out_shape) - inner]

    def gather_along(
        self, xp: Any, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """Elements along ``plan.axis``, the other axes matched position by position (into
        `out` where :meth:`take` writes there)."""
        (index,) = components.values
        index = self._flat_ready(xp, index, components, plan.axis_sizes[0] - 1, plan)
        if plan.data_block is not None:
            x = x[tuple(slice(0, size) for size in plan.data_block)]
        return self.take_along(xp, x, index, plan.axis, out)

    def _flat_ready(
        self, xp: Any, flat: Any, components: Components, largest: int, plan: GatherPlan
    ) -> Any:
        """Positions 0 where ignored, clamped where the caller promised validity, cast."""
        if components.keep is not None:
            flat = xp.where(components.keep, flat, 0)
        elif components.keep_inside and not self.take_clamps:
            flat = self.clamp(xp, flat, 0, largest)
        return xp.astype(flat, self.flat_index_dtype(xp, plan.largest_flat), copy=False)

    def own_take_along_axis(
        self, xp: Any, x: Any, indices: Any, axis: int, elementwise: bool
    ) -> Any | None:
        """The backend's own ``take_along_axis`` where it beats one flat ``take``; else None."""
        return None

    def take(self, xp: Any, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        """The standard's ``take`` for 1-d indices already in ``[0, x.shape[axis])``; engines
        that can write into `out` (of the result's shape) return it, the others ignore it."""
        return xp.take(x, indices, axis=axis)

    def take_along(self, xp: Any, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        """``take_along_axis`` with broadcasting, for indices already in ``[0, n)``.

        `x` and `indices` have the same rank and broadcast against each other on every axis
        but `axis`. One gather: one ``take`` when the indices vary along `axis` only; the
        backend's own ``take_along_axis`` where it prefers it; otherwise one ``take`` on `x`
        viewed as ``(lead, middle, tail)`` with flat indices into the middle block (axes
        along which the indices do not vary stay out of the index arithmetic).
        """
        ndim = x.ndim
        out_shape = tuple(
            x.shape[d] if d != axis and indices.shape[d] == 1 else indices.shape[d]
            for d in range(ndim)
        )
        varying = [d for d in range(ndim) if d != axis and indices.shape[d] != 1]
        if not varying:
            return self._take_block(xp, x, xp.reshape(indices, (-1,)), axis, out_shape, out)
        elementwise = all(x.shape[d] == indices.shape[d] for d in range(ndim) if d != axis)
        own = self.own_take_along_axis(xp, x, indices, axis, elementwise)
        if own is not None:
            return own
        lead = min(axis, varying[0])
        stop = max(axis, varying[-1]) + 1
        middle = x.shape[lead:stop]
        # Row-major strides of the middle block; zero where x is broadcast (size 1).
        strides = [math.prod(middle[k + 1 :]) for k in range(len(middle))]
        flat = indices if strides[axis - lead] == 1 else indices * strides[axis - lead]
        flat = xp.reshape(flat, indices.shape[lead:stop])
        device = device_for_new(x)
        for k, d in enumerate(range(lead, stop)):
            if d == axis or x.shape[d] == 1 or out_shape[d] == 1:
                continue
            shape = [1] * len(middle)
            shape[k] = out_shape[d]
            position = xp.arange(out_shape[d], dtype=indices.dtype, device=device)
            flat = flat + xp.reshape(position, tuple(shape)) * strides[k]
        if tuple(flat.shape) != out_shape[lead:stop]:
            flat = xp.broadcast_to(flat, out_shape[lead:stop])  # NumPy's take copies a view
        blocks = (math.prod(x.shape[:lead]), math.prod(middle), math.prod(x.shape[stop:]))
        x = xp.reshape(x, blocks)
        return self._take_block(xp, x, xp.reshape(flat, (-1,)), 1, out_shape, out)

    def _take_block(
        self, xp: Any, x: Any, flat: Any, axis: int, out_shape: tuple[int, ...], out: Any = None
    ) -> Any:
        """One ``take`` of the 1-d `flat` along `axis`, reshaped to `out_shape` (into `out`,
        of that shape, where the engine's ``take`` writes there); with nothing before `axis`,
        on an ``(n,)`` or ``(n, tail)`` view (PyTorch's ``index_select`` on a 4-d view with
        unit axes is several times slower)."""
        if math.prod(x.shape[:axis]) == 1:
            tail = math.prod(x.shape[axis + 1 :])
            block = (x.shape[axis],) if tail == 1 else (x.shape[axis], tail)
            x, axis = xp.reshape(x, block), 0
        taken = (*x.shape[:axis], flat.shape[0], *x.shape[axis + 1 :])
        target = None if out is None else xp.reshape(out, taken)  # a view: out is contiguous
        result = self.take(xp, x, flat, axis, target)
        return out if target is not None and result is target else xp.reshape(result, out_shape)


class NumPyEngine(Engine):
    """NumPy: ``take(mode="clip")`` keeps reads inside at no cost; its ``take`` converts every
    index width to ``intp`` first, so int32 flat positions would cost an extra pass. Large
    indices are processed in blocks of about ``BLOCK`` elements, so that the temporaries
    (flat positions, masks) stay in cache and the peak memory is the result's."""

    take_clamps = True
    int64_gathers = True
    #: 2**18: each block costs ~15 us of Python (plan, policy, gather). On W4 (4M elements,
    #: measured side by side with one native flat take) 2**16 was ~1.15x the native, 2**17
    #: ~1.0x, 2**18 ~0.95x: the per-block Python outweighs the cache misses of the larger
    #: temporaries (~2 MB of flat positions per block; W1's peak memory 0.23 -> 0.30 of output
    #: + indices).
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

    def wide_index_dtype(self, xp: Any) -> Any:
        return xp.int64

    def clamp(self, xp: Any, values: Any, low: int, high: int) -> Any:
        return np.clip(values, low, high)

    def reads_range_freely(self, x: Any) -> bool:
        return bool(x.size <= self.SMALL)

    def value_range(self, xp: Any, x: Any) -> tuple[int, int]:
        if x.size <= self.SMALL:
            values = x.ravel().tolist()
            return min(values), max(values)
        return int(x.min()), int(x.max())

    def take(self, xp: Any, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        # The method, which np.take calls after two Python frames (a tiny call feels them).
        return x.take(indices, axis=axis, out=out, mode="clip")

    def gather(
        self, xp: Any, data: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        if plan.kind == "axes":
            result = self.gather_axes(xp, data, components, plan, out)
        else:
            result = self.gather_along(xp, data, components, plan, out)
        return result if type(result) is np.ndarray else np.asarray(result)  # not a scalar

    def scatter_at(self, xp: Any, data: Any, flat: Any, updates: Any, reduce: str) -> Any:
        """``ufunc.at`` for the reductions; under ``"update"``, one write of each element's
        last update (:meth:`_last_writes`), so duplicates never depend on write order.

        The result is written in a buffer one element longer than the data: dropped updates
        (at ``data.size``) and the losers under ``"update"`` land in that last element, so
        nothing is compressed out of `flat` and `updates`."""
        size = math.prod(data.shape)
        buffer = np.empty(size + 1, dtype=data.dtype)
        out = buffer[:size].reshape(data.shape)
        out[...] = data  # new and writable, whatever data was (a view, read-only)
        buffer[size] = buffer[0]  # a value of the data: no NaN or junk for ufunc.at to meet
        flat, updates = flat.reshape(-1), updates.reshape(-1)
        if reduce == "update":
            won = self._last_writes(size + 1, flat)
            buffer[np.where(won, flat, size)] = updates
        else:
            ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
            if reduce in ("min", "max"):
                # NumPy's maximum.at and minimum.at flag a NaN as an invalid operation (their
                # elementwise forms do not): the NaN propagates, and nothing is wrong.
                with np.errstate(invalid="ignore"):
                    ufunc[reduce].at(buffer, flat, updates)
            else:
                ufunc[reduce].at(buffer, flat, updates)
        return out

    @staticmethod
    def _last_writes(size: int, flat: Any) -> Any:
        """True at the last occurrence of each position in `flat` (1-d, in ``[0, size)``).

        The positions 0, 1, ... are written at `flat` into an uninitialised buffer (only the
        touched pages are ever allocated) and read back: where every update reads back a
        position at least its own, the buffer holds each element's last update; otherwise
        ``maximum.at`` settles it. Either way the winners are checked, not assumed from the
        order in which NumPy writes.
        """
        import numpy as np

        count = flat.shape[0]
        positions = np.arange(count, dtype=np.int32 if count < 2**31 else np.int64)
        winner = np.empty(size, dtype=positions.dtype)
        winner[flat] = positions
        won = winner[flat]
        if (won < positions).any():
            np.maximum.at(winner, flat, positions)
            won = winner[flat]
        return won == positions

    def fill(self, xp: Any, result: Any, keep: Any, fill: Any) -> Any:
        np.copyto(result, fill, where=~keep)  # the result is new: fill it in place
        return result

    def gather_axes(
        self, xp: Any, params: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """One ``take(mode="clip")`` on C-contiguous params, with the gathered axes merged
        (a view) and no reshape of the index; other params (views: transposed, strided,
        broadcast) by indexing along the original axes, since ``take`` would copy them whole.
        A small index is indexed along the original axes too: one indexing call costs less
        than the flat positions' arithmetic and a ``take``.
        """
        parts = components.values
        if not parts:
            return super().gather_axes(xp, params, components, plan)
        if parts[0].size <= self.SMALL and components.valid:
            if not plan.batch_dims:  # the common small call, in one step
                return params[(slice(None),) * plan.axis + tuple(parts)]
            return self._index_view(params, components, plan)
        if not params.flags.c_contiguous:
            return self._index_view(params, components, plan)
        if plan.batch_dims:
            return super().gather_axes(xp, params, components, plan)
        axis, stop = plan.axis, plan.axis + plan.depth
        flat = flat_positions(parts, plan.strides)
        if components.keep is not None:
            flat = np.where(components.keep, flat, 0)
        if len(parts) > 1:
            shape = params.shape
            params = params.reshape((*shape[:axis], math.prod(shape[axis:stop]), *shape[stop:]))
        if out is not None and out.flags.c_contiguous:
            return params.take(flat, axis=axis, out=out, mode="clip")
        return params.take(flat, axis=axis, mode="clip")

    def gather_along(
        self, xp: Any, x: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        if x.flags.c_contiguous:
            usable = out if out is not None and out.flags.c_contiguous else None
            return super().gather_along(xp, x, components, plan, usable)
        (index,) = self._inside(components, plan)
        if plan.data_block is not None:
            x = x[tuple(slice(0, size) for size in plan.data_block)]
        return np.take_along_axis(x, index, axis=plan.axis)

    def _inside(self, components: Components, plan: GatherPlan) -> list[Any]:
        """The components with every read kept inside the data (0 where ignored)."""
        if components.keep is not None:
            return [np.where(components.keep, c, 0) for c in components.values]
        if components.keep_inside:
            return [
                np.clip(c, 0, n - 1)
                for c, n in zip(components.values, plan.axis_sizes, strict=True)
            ]
        return components.values

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


class TorchEngine(Engine):
    """PyTorch: ``index_select`` and ``gather`` want int64 and have no kernels for uint16, 32
    and 64 (those are gathered as the signed type of the same width); ``aminmax`` reads the
    range in one pass (a small index: ``tolist``); values are read only on the CPU, and under
    ``torch.compile`` only by breaking the graph, and never under ``torch.func.vmap``. Every
    PyTorch call costs about a microsecond, so a small call is made of as few of them as it
    can be."""

    int64_gathers = True
    gathers_checked = True
    #: Index tensors of at most this many elements: range read with ``tolist``, and gathered
    #: by one indexing call when valid.
    SMALL = 32

    def __init__(self) -> None:
        import torch
        from torch._C import _functorch

        self._compiling = torch.compiler.is_compiling
        # torch.func's state; no public API says whether a tensor is batched by vmap (the
        # Python side: https://github.com/pytorch/pytorch/blob/main/torch/_functorch/).
        self._functorch = _functorch

    def index_access(self, x: Any) -> IndexAccess:
        return "none" if not self._compiling() and self._batched(x) else "now"

    def reads_cheaply(self, x: Any) -> bool:
        return bool(x.is_cpu and not self._compiling() and not self._batched(x))

    def _batched(self, x: Any) -> bool:
        """Whether `x` is batched by ``torch.func.vmap`` at some level (under ``grad`` too):
        such a tensor holds no storage, and ``tolist`` or ``item`` on it fails deep inside
        PyTorch. A tensor that vmap does not map (closed over) reads as usual."""
        functorch = self._functorch
        if functorch.maybe_current_level() is None:  # no torch.func transform is running
            return False
        while functorch.is_functorch_wrapped_tensor(x):
            if functorch.is_batchedtensor(x):
                return True
            x = functorch.get_unwrapped(x)  # a grad or jvp level: look beneath it
        return False

    def _write(self, tensor: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        """``tensor.<method>_(...)`` in place on a new tensor of ours, or out of place under
        ``torch.func.vmap``, which refuses in-place writes of batched values into a tensor
        that is not batched (the copy is then torch's)."""
        if not self._compiling() and self._vmap_running():  # torch.compile can't trace it
            return getattr(tensor, method)(*args, **kwargs)
        return getattr(tensor, method + "_")(*args, **kwargs)

    def _vmap_running(self) -> bool:
        functorch = self._functorch
        return functorch.maybe_current_level() is not None and any(
            level.key() == functorch.TransformType.Vmap
            for level in functorch.get_interpreter_stack()
        )

    def enforce_lazily(
        self, xp: Any, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """An index batched by ``torch.func.vmap`` (the one PyTorch tensor whose values
        cannot be read)."""
        msg = (
            'bad_indices="error" reads index values to decide whether to raise, which '
            "torch.func.vmap cannot (its batched tensors have no values to read); check the "
            'indices outside vmap, or pass bad_indices="ignore", "clip", "wrap" or "unchecked"'
        )
        raise ValueError(msg)

    def reads_range_freely(self, x: Any) -> bool:
        return bool(x.numel() <= self.SMALL)

    def vector_components(self, values: Any, depth: int) -> list[Any]:
        return list(values.unbind(-1))  # one call for all of them

    def wide_index_dtype(self, xp: Any) -> Any:
        return xp.int64

    def clamp(self, xp: Any, values: Any, low: int, high: int) -> Any:
        import torch

        return torch.clamp(values, low, high)

    def value_range(self, xp: Any, x: Any) -> tuple[int, int]:
        import torch

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
        try:
            return int(value)
        except RuntimeError:  # PyTorch converts no uint64 value >= 2**63 to a Python int
            import torch

            return int(value.view(torch.int64)) % 2**64

    def empty(self, xp: Any, data: Any, shape: tuple[int, ...]) -> Any:
        # A slice of params, not new zeros: the result stays in the autograd graph, as
        # torch's own indexing does.
        return data.reshape(-1)[:0].reshape(shape)

    def keeps_reads_inside(self, values: Any) -> bool:
        return self.reads_cheaply(values)  # see gather

    def gather_if_valid(self, xp: Any, data: Any, indices: Any, plan: GatherPlan) -> Any | None:
        """``torch.gather`` along the axis where the index has the result's shape, and
        ``index_select`` for one gathered axis without batch dims: on the CPU both raise,
        reading nothing outside, on any value not in ``[0, n)`` (negatives included)."""
        import torch

        along = plan.kind == "along"
        if along:
            if not data.ndim or not _torch_gathers_along(indices, data, plan):
                return None
        elif plan.depth != 1 or plan.batch_dims:
            return None
        if (
            indices.dtype != torch.int64
            or not (data.is_cpu and self.reads_cheaply(indices))  # a GPU asserts instead
            or _signed_twin(data.dtype) is not None
        ):
            return None
        try:
            if along:
                return torch.gather(data, plan.axis, indices)
            index = indices[..., 0] if plan.vector else indices
            result = torch.index_select(data, plan.axis, index.reshape(-1))
        except (IndexError, RuntimeError):  # by kernel: "out of range", "out of bounds"
            return None
        return result.reshape(plan.out_shape)

    def gather(
        self, xp: Any, data: Any, components: Components, plan: GatherPlan, out: Any = None
    ) -> Any:
        """uint16/32/64 as the signed type of the same width. Reads that must be kept inside
        (``"unchecked"``) are first made as they are, where torch's gathers check them (on the
        CPU, outside ``torch.compile``): any out-of-range one raises before anything is read
        outside, and the gather is made again with the positions clamped."""
        twin = _signed_twin(data.dtype)
        source = data if twin is None else data.view(twin)
        if components.keep_inside and self.reads_cheaply(source):
            try:
                result = super().gather(xp, source, replace(components, keep_inside=False), plan)
            except (IndexError, RuntimeError):
                result = super().gather(xp, source, components, plan)
        else:
            result = super().gather(xp, source, components, plan)
        return result if twin is None else result.view(data.dtype)

    def copy(self, xp: Any, data: Any) -> Any:
        return data.clone()  # stays in the autograd graph

    def scatter(
        self, xp: Any, data: Any, components: Components, updates: Any, plan: GatherPlan,
        reduce: str,
    ) -> Any:  # fmt: skip
        """Straight to ``scatter_add`` / ``scatter_reduce`` along the axis where the index
        is already what torch wants (elementwise, same shape as the updates, every value in
        range, a dtype torch reduces); otherwise through flat positions."""
        import torch

        along = plan.kind == "along" and reduce != "update" and components.keep is None
        # Unchecked values (keep_inside) go straight too where torch checks them (the CPU):
        # an out-of-range one raises there, and the flat path below clamps it.
        checked = not components.keep_inside or self.reads_cheaply(data)
        if along and checked and _signed_twin(data.dtype) is None:
            (index,) = components.values
            if _torch_gathers_along(index, data, plan):
                try:  # out of place: a new tensor, as a copy and an in-place write make
                    if reduce == "add":
                        return torch.scatter_add(data, plan.axis, index, updates)
                    return torch.scatter_reduce(
                        data, plan.axis, index, updates, _TORCH_REDUCE[reduce], include_self=True
                    )
                except RuntimeError:
                    if not components.keep_inside:
                        raise
        return super().scatter(xp, data, components, updates, plan, reduce)

    def scatter_at(self, xp: Any, data: Any, flat: Any, updates: Any, reduce: str) -> Any:
        """``index_put_`` of each element's last update, ``scatter_add_``, ``scatter_reduce_``,
        in place on a new copy of the data one element longer: dropped updates (at
        ``data.size``) and the losers under ``"update"`` land in that last element, so nothing
        is compressed (boolean indexing costs torch more than the scatter). Autograd records
        the in-place ops on the copy.

        uint16/32/64 (no kernels) go through the signed type of the same width: the same
        bits for writes, sums and products (modulo 2**bits), and with the sign bit flipped for
        min and max, which keeps their order."""
        import torch

        size = data.numel()
        source = data.reshape(-1)
        flat, updates = flat.reshape(-1), updates.reshape(-1)
        twin = _signed_twin(data.dtype)
        if twin is not None:
            source, updates = source.view(twin), updates.view(twin)
        line = torch.cat([source, source.new_zeros(1)])
        flip = torch.iinfo(twin).min if twin is not None and reduce in ("min", "max") else 0
        if flip:
            line, updates = line ^ flip, updates ^ flip
        if reduce == "update":
            won = self._last_writes(size + 1, flat)
            line = self._write(line, "index_put", (torch.where(won, flat, size),), updates)
        elif reduce == "add":
            line = self._write(line, "scatter_add", 0, flat, updates)
        else:
            reduction = _TORCH_REDUCE[reduce]
            line = self._write(
                line, "scatter_reduce", 0, flat, updates, reduction, include_self=True
            )
        line = line[:size]
        if flip:
            line = line ^ flip
        if twin is not None:
            line = line.view(data.dtype)
        return line.reshape(data.shape)

    def _last_writes(self, size: int, flat: Any) -> Any:
        """True at the last occurrence of each position in `flat`: the largest update
        position per element by ``scatter_reduce("amax")`` (torch's plain writes are
        unordered, so reading them back rarely settles it, as it does on NumPy)."""
        import torch

        positions = torch.arange(flat.shape[0], device=flat.device)
        winner = torch.full((size,), -1, dtype=positions.dtype, device=flat.device)
        winner = self._write(winner, "scatter_reduce", 0, flat, positions, "amax")
        return winner[flat] == positions

    def take(self, xp: Any, x: Any, indices: Any, axis: int, out: Any = None) -> Any:
        # array-api-compat's take first maps negative indices: passes the policies made moot.
        import torch

        return torch.index_select(x, axis, indices)

    def gather_axes(self, xp: Any, params: Any, components: Components, plan: GatherPlan) -> Any:
        """One ``index_select`` along the gathered axes (merged, a view, for several) with
        no batch dims: fewer reshapes than the generic composition, which a small call
        feels. A small valid index (not 0-d, which would index a view) by one indexing call
        along the original axes."""
        import torch

        parts = components.values
        contiguous = len(parts) == 1 or params.is_contiguous()
        if plan.batch_dims or not parts or not contiguous:
            return super().gather_axes(xp, params, components, plan)
        if components.valid and parts[0].ndim and parts[0].numel() <= self.SMALL:
            return params[(slice(None),) * plan.axis + tuple(parts)]
        axis, stop = plan.axis, plan.axis + plan.depth
        flat = parts[-1]  # the last axis has stride 1; one fused multiply-add per other axis
        for part, stride in zip(parts[:-1], plan.strides[:-1], strict=True):
            flat = torch.add(flat, part, alpha=stride)
        if components.keep is not None:
            flat = torch.where(components.keep, flat, 0)
        elif components.keep_inside:
            flat = torch.clamp(flat, 0, math.prod(plan.axis_sizes) - 1)
        if len(parts) > 1:
            shape = tuple(params.shape)
            params = params.reshape((*shape[:axis], math.prod(shape[axis:stop]), *shape[stop:]))
        return torch.index_select(params, axis, flat.reshape(-1)).reshape(plan.out_shape)

    def own_take_along_axis(
        self, xp: Any, x: Any, indices: Any, axis: int, elementwise: bool
    ) -> Any | None:
        if not elementwise:  # with broadcasting, torch would expand the indices first
            return None
        import torch

        return torch.gather(x, axis, indices)


class NdonnxEngine(Engine):
    """ndonnx: ONNX's Gather takes int64; a symbolic array (a graph input) has no values."""

    int64_gathers = True

    def select_function(self, xp: Any, dtype: Any) -> Any:
        """ONNX Runtime has no ``Where`` for uint64; ndonnx then goes through float64 and loses
        every value above 2**53. Selecting by arithmetic (exact modulo 2**64) keeps them."""
        if dtype != xp.uint64:
            return xp.where

        def select(condition: Any, x: Any, y: Any) -> Any:
            chosen = xp.astype(condition, xp.uint64)
            return x * chosen + y * (1 - chosen)

        return select

    def index_access(self, x: Any) -> IndexAccess:
        try:
            x.unwrap_numpy()
        except ValueError:
            return "none"
        return "now"

    def reads_cheaply(self, x: Any) -> bool:
        return False


def _torch_gathers_along(index: Any, data: Any, plan: GatherPlan) -> bool:
    """Whether ``torch.gather`` (``torch.scatter_*``) along ``plan.axis`` at `index` is the plan's
    elementwise read (write): the index has the result's shape and fits in the data on every
    other axis (torch never broadcasts it)."""
    shape = tuple(index.shape)
    return shape == plan.out_shape and all(
        n <= size for d, (n, size) in enumerate(zip(shape, data.shape, strict=True))
        if d != plan.axis
    )  # fmt: skip


def _signed_twin(dtype: Any) -> Any:
    """The signed torch dtype of the width of unsigned `dtype` where torch lacks kernels for
    it (uint16, 32, 64); else None."""
    import torch

    signed = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}
    return signed.get(dtype)


_TORCH_REDUCE = {"multiply": "prod", "min": "amin", "max": "amax"}

_ENGINES: dict[int, Engine] = {}


def engine_for(xp: Any) -> Engine:
    """The engine of namespace `xp`, made once per namespace."""
    engine = _ENGINES.get(id(xp))
    if engine is None:
        engine = _ENGINES[id(xp)] = _make_engine(xp)
    return engine


def _make_engine(xp: Any) -> Engine:
    if aac.is_numpy_namespace(xp):
        return NumPyEngine()
    if aac.is_torch_namespace(xp):
        return TorchEngine()
    if aac.is_jax_namespace(xp):
        from ._jax import JaxEngine

        return JaxEngine()
    if aac.is_dask_namespace(xp):
        from ._dask import DaskEngine

        return DaskEngine()
    if aac.is_ndonnx_namespace(xp):
        return NdonnxEngine()
    return Engine()
