"""The few things that need a backend's own mechanism.

Everything else in portagather is written against the array API standard. What lives here:

- how index values can be inspected: eagerly, inside a Dask task graph, through JAX's
  ``checkify`` under tracing, or not at all (symbolic ndonnx arrays);
- which integer width a backend's gather takes, and whether it has int64 at all;
- whether a backend's ``take_along_axis`` is the better composition for batched gathers.

None of these modules imports jax, torch or dask at import time; they are looked up in
``sys.modules`` only when an array of theirs is already in hand.
"""

from __future__ import annotations

import itertools
import os
import sys

import array_api_compat as aac
import numpy as np

from ._errors import python_value

INT32_MAX = 2**31 - 1


def _jax_tracer_type():
    jax = sys.modules.get("jax")
    return None if jax is None else jax.core.Tracer


def is_traced(x) -> bool:
    """Whether the values of JAX array `x` are out of reach of Python here.

    True for a tracer (under ``jit``, ``vmap``, ``grad``, ...), and also for a concrete JAX
    array while a staging trace (``jit``, ``checkify``, ``eval_shape``) is active: an index
    list or a closed-over array inside a jitted function is concrete, but every operation on
    it is staged, so a reduction of it cannot be read either. Under ``grad`` and ``vmap``
    alone, operations on concrete arrays stay concrete, and so does this answer.
    """
    tracer = _jax_tracer_type()
    if tracer is None:
        return False
    if isinstance(x, tracer):
        return True
    if not aac.is_jax_array(x):
        return False
    import jax.numpy as jnp

    return isinstance(jnp.zeros((), dtype=bool), tracer)


def reads_cheaply(x) -> bool:
    """Whether reading values of `x` into Python is cheap and harmless: host memory, and not
    under ``torch.compile`` (where a branch on them would break the graph). On an accelerator
    it would wait for the device."""
    if aac.is_numpy_array(x) or aac.is_array_api_strict_namespace(aac.array_namespace(x)):
        return True
    if aac.is_torch_array(x):
        import torch

        return x.device.type == "cpu" and not torch.compiler.is_compiling()
    if aac.is_jax_array(x):
        return all(d.platform == "cpu" for d in x.devices())
    return False


def is_symbolic(x) -> bool:
    """True for an ndonnx array that only describes a graph input (it has no values)."""
    if not aac.is_ndonnx_array(x):
        return False
    try:
        x.unwrap_numpy()
    except ValueError:
        return True
    return False


def values_visible(x) -> bool:
    """Whether the values of index array `x` can be checked (now, or inside a task graph)."""
    return not (is_traced(x) or is_symbolic(x))


def has_int64(xp) -> bool:
    """JAX without ``jax_enable_x64`` silently turns int64 into int32."""
    if aac.is_jax_namespace(xp):
        import jax

        return bool(jax.config.read("jax_enable_x64"))
    return True


def wide_index_dtype(xp):
    """The widest signed integer dtype the backend holds; index policies work in it."""
    return xp.int64 if has_int64(xp) else xp.int32


def flat_index_dtype(xp, largest: int):
    """The dtype of the flat indices handed to the backend's ``take``.

    int32 where `largest` fits, except where the gather takes int64 only (PyTorch, ndonnx) or
    converts every other width to ``intp`` first (NumPy, where int32 would cost an extra pass).
    """
    if largest > INT32_MAX:
        if not has_int64(xp):
            raise ValueError(
                f"the gather needs flat positions up to {largest}, more than int32 holds, and "
                "JAX has no int64 without jax_enable_x64; enable it with "
                "jax.config.update('jax_enable_x64', True) or gather from a smaller array"
            )
        return xp.int64
    if aac.is_torch_namespace(xp) or aac.is_ndonnx_namespace(xp) or aac.is_numpy_namespace(xp):
        return xp.int64
    return xp.int32


def clamp(xp, values, low: int, high: int):
    """Clip into ``[low, high]`` (Python ints), in one pass where the backend has one.

    array-api-compat's ``clip`` broadcasts its bounds to full arrays first (on Dask, one block
    as large as all of `values`), and its ``minimum`` with a Python int calls
    ``torch.result_type``, which breaks ``torch.compile`` graphs; NumPy's and PyTorch's own
    clip take scalars in one pass.
    """
    if aac.is_numpy_namespace(xp):
        return np.clip(values, low, high)
    if aac.is_torch_namespace(xp):
        import torch

        return torch.clamp(values, low, high)
    return xp.minimum(xp.maximum(values, low), high)


def prefers_take_along_axis(xp, elementwise: bool) -> bool:
    """Whether a gather whose indices vary across axes should use ``take_along_axis``.

    JAX: a batch-preserving gather stays shard-local when the batch axis is sharded, where
    flattening the batch into the gathered axis makes XLA insert collectives. PyTorch: its
    ``gather`` when nothing is broadcast (``elementwise``); with broadcasting it would expand
    the indices first. Otherwise one ``take`` on flat indices: NumPy's is faster than its
    ``take_along_axis``, and ndonnx's ``take_along_axis`` does not broadcast.
    """
    return aac.is_jax_namespace(xp) or (elementwise and aac.is_torch_namespace(xp))


def backend_take_along_axis(xp, x, indices, axis: int, elementwise: bool):
    """The backend's ``take_along_axis``; PyTorch's ``gather`` where nothing is broadcast
    (array-api-compat's ``take_along_axis`` adds passes for negative indices, which the
    policies have already removed)."""
    if elementwise and aac.is_torch_namespace(xp):
        import torch

        return torch.gather(x, axis, indices)
    return xp.take_along_axis(x, indices, axis=axis)


def take(xp, x, indices, axis: int):
    """The standard's ``take`` for 1-d indices already mapped into ``[0, x.shape[axis])``.

    NumPy: ``mode="clip"`` clamps inside the take at no cost, so ``"unchecked"`` needs no
    clamping pass of its own (see ``take_clamps``). PyTorch: ``index_select`` directly;
    array-api-compat's ``take`` first maps negative indices, three passes the policies have
    already made unnecessary.
    """
    if aac.is_numpy_namespace(xp):
        return np.take(x, indices, axis=axis, mode="clip")
    if aac.is_torch_namespace(xp):
        import torch

        return torch.index_select(x, axis, indices)
    return xp.take(x, indices, axis=axis)


def take_clamps(xp) -> bool:
    """Whether ``take`` itself keeps out-of-range flat indices inside the array."""
    return aac.is_numpy_namespace(xp)


def value_range(xp, x) -> tuple[int, int]:
    """``(min, max)`` of an eager integer array as Python ints; PyTorch's ``aminmax`` is one
    pass and several times faster than its ``min`` and ``max``."""
    if aac.is_torch_namespace(xp):
        import torch

        low, high = torch.aminmax(x)
        return int(low), int(high)
    return int(xp.min(x)), int(xp.max(x))


def enforce_lazily(xp, bad, values, report, result):
    """Enforce the ``"error"`` policy where index values cannot be read now.

    `bad` is a boolean array over index positions, `values` the caller's index array (its
    leading axes match `bad`), `report` a :class:`~portagather._errors.BadIndex`. Dask: returns
    `result`, made to raise the eager path's IndexError when it is computed. JAX tracing: adds
    a ``checkify`` check. Symbolic ndonnx arrays: raises ValueError, as ONNX cannot raise.
    """
    if aac.is_dask_array(bad):
        return _dask_checked(bad, values, report, result)
    if is_traced(bad):
        _jax_check(bad, values, report)
        return result
    raise ValueError(
        'bad_indices="error" cannot be enforced on symbolic ndonnx arrays: ONNX has no '
        'operator that raises at run time; pass bad_indices="ignore", "clip", "wrap" or '
        '"unchecked"'
    )


def _jax_check(bad, values, report):
    if not _under_checkify():
        raise ValueError(
            'bad_indices="error" needs to read index values, which are traced here. Either '
            "wrap the function with jax.experimental.checkify.checkify (a bad index then "
            'comes back as a checkify error), or pass bad_indices="ignore", "clip", "wrap" '
            'or "unchecked"'
        )
    import jax.numpy as jnp
    from jax import lax
    from jax.experimental import checkify

    first = jnp.argmax(jnp.reshape(bad, (-1,)))
    coords = [jnp.asarray(c) for c in jnp.unravel_index(first, bad.shape)]
    # dynamic_slice, not indexing: a traced index would add a second XLA gather.
    extra = [0] if report.vector else []
    sizes = [1] * bad.ndim + ([values.shape[-1]] if report.vector else [])
    value = jnp.reshape(lax.dynamic_slice(values, [*coords, *extra], sizes), (-1,))
    message, arguments = _checkify_message(report, coords, value)
    checkify.check(~jnp.any(bad), message, **arguments)


def _checkify_message(report, coords, value):
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
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith(_CHECKIFY_SOURCE):
            return True
        frame = frame.f_back
    return False


_CHECKIFY_SOURCE = os.path.join("jax", "_src", "checkify.py")


def _dask_checked(bad, values, report, result):
    """Make `result` raise the eager path's IndexError when it is computed.

    Each block of `bad` finds its own first bad position; one small task picks the first in
    C order and raises, and every block of `result` waits for that verdict.
    """
    import dask
    import dask.array as da

    if report.vector:  # one block holds whole index vectors
        values = values.rechunk({values.ndim - 1: -1})
    bad_blocks = np.asarray(bad.to_delayed(), dtype=object)
    value_blocks = np.asarray(values.to_delayed(), dtype=object)
    if report.vector:
        value_blocks = value_blocks[..., 0]
    starts = [np.cumsum((0, *chunks[:-1])) for chunks in bad.chunks]
    parts = []
    for block_index, bad_block in np.ndenumerate(bad_blocks):
        offset = tuple(int(s[i]) for s, i in zip(starts, block_index, strict=True))
        parts.append(
            dask.delayed(_first_bad_in_block)(bad_block, value_blocks[block_index], offset, report)
        )
    verdict = dask.delayed(_raise_first_bad)(parts, report)
    verdict_array = da.from_delayed(verdict, shape=(), dtype=bool)
    return da.map_blocks(_first_argument, result, verdict_array, dtype=result.dtype)


def _first_bad_in_block(bad_block, value_block, offset, report):
    hits = np.argwhere(np.asarray(bad_block))
    if hits.shape[0] == 0:
        return None
    local = tuple(int(h) for h in hits[0])
    position = tuple(o + h for o, h in zip(offset, local, strict=True))
    return position, python_value(np.asarray(value_block), local, report.vector)


def _raise_first_bad(parts, report):
    found = [p for p in parts if p is not None]
    if found:
        report.raise_at(*min(found))
    return True


def _first_argument(block, _verdict):
    return block


def dask_gather_axes(params, flat, batch_dims: int, axis: int, depth: int):
    """:func:`~portagather._compose.gather_axes` on Dask, with no block of params merged.

    One task per result block; the result's blocks are params' blocks on the batch, outer and
    inner axes and `flat`'s blocks on the index grid. Each task reads the params blocks along
    the gathered axes as a nested list, never concatenated, and picks from each the positions
    that fall inside it.
    """
    import dask.array as da

    b, stop = batch_dims, axis + depth
    if flat.chunks[:b] != params.chunks[:b]:  # batch blocks pair up with params' blocks
        flat = flat.rechunk(params.chunks[:b] + flat.chunks[b:])
    grid = flat.ndim - b
    batch = tuple(f"b{k}" for k in range(b))
    outer = tuple(f"p{k}" for k in range(axis - b))
    gathered = tuple(f"s{k}" for k in range(depth))
    inner = tuple(f"t{k}" for k in range(params.ndim - stop))
    grid_ind = tuple(f"i{k}" for k in range(grid))
    bounds = [tuple(int(e) for e in np.cumsum((0, *params.chunks[d]))) for d in range(axis, stop)]
    return da.blockwise(
        _gather_axes_blocks,
        batch + outer + grid_ind + inner,
        params,
        batch + outer + gathered + inner,
        flat,
        batch + grid_ind,
        concatenate=False,
        sizes=tuple(params.shape[axis:stop]),
        bounds=bounds,
        batch_dims=b,
        outer=axis - b,
        dtype=params.dtype,
        meta=np.empty((0,) * (params.ndim - depth + grid), dtype=params.dtype),
    )


def _gather_axes_blocks(params_blocks, flat_block, sizes, bounds, batch_dims, outer):
    flat_block = np.asarray(flat_block)
    coords = np.unravel_index(flat_block, sizes) if sizes else ()
    b, grid = batch_dims, flat_block.ndim - batch_dims
    # Batch positions, broadcast against the index grid, for NumPy's advanced indexing.
    batch = [
        np.arange(flat_block.shape[k]).reshape((1,) * k + (-1,) + (1,) * (b - k - 1 + grid))
        for k in range(b)
    ]
    out = None
    for block_index in itertools.product(*(range(len(e) - 1) for e in bounds)):
        block = params_blocks
        for i in block_index:
            block = block[i]
        block = np.asarray(block)
        inside = np.ones(flat_block.shape, dtype=bool)
        local = []
        for c, i, edges in zip(coords, block_index, bounds, strict=True):
            inside &= (c >= edges[i]) & (c < edges[i + 1])
            local.append(c - edges[i])
        local = [np.where(inside, c, 0) for c in local]
        if not sizes:  # index depth 0: a unit axis to index, so the grid axes appear
            block = np.expand_dims(block, b + outer)
            local = [np.zeros(flat_block.shape, dtype=np.intp)]
        # Batch and gathered axes first: one advanced index puts batch+grid in front.
        order = [*range(b), *range(b + outer, b + outer + len(local))]
        rest = [d for d in range(block.ndim) if d not in order]
        picked = np.transpose(block, order + rest)[(*batch, *local)]
        mask = inside.reshape(inside.shape + (1,) * (picked.ndim - inside.ndim))
        out = picked if out is None else np.where(mask, picked, out)
    # (batch, grid, outer, inner) -> (batch, outer, grid, inner)
    axes = list(range(out.ndim))
    grid_axes, outer_axes = axes[b : b + grid], axes[b + grid : b + grid + outer]
    return np.transpose(out, axes[:b] + outer_axes + grid_axes + axes[b + grid + outer :])


def dask_take_along(x, indices, axis: int):
    """``take_along_axis`` with broadcasting on Dask arrays, for indices in ``[0, n)``.

    One task per block of the result, whose blocks are the index blocks (x's blocks along
    axes where the indices have size 1; x is rechunked to the index blocks on the axes both
    span). Each task reads the blocks of `x` along `axis`
    as a list, never concatenated, and picks from each the indices that fall inside it, so no
    block of `x` is merged with another and no reshape rechunks the indices.
    """
    import dask.array as da

    ndim = x.ndim
    shared = {
        d: indices.chunks[d]
        for d in range(ndim)
        if d != axis and x.shape[d] == indices.shape[d] > 1 and x.chunks[d] != indices.chunks[d]
    }
    if shared:  # the result's blocks follow the index blocks on the axes both arrays span
        x = x.rechunk(shared)
    symbols = tuple(f"d{d}" for d in range(ndim))
    out_ind = symbols[:axis] + ("along",) + symbols[axis + 1 :]
    x_ind = symbols[:axis] + ("source",) + symbols[axis + 1 :]
    bounds = tuple(int(b) for b in np.cumsum((0, *x.chunks[axis])))
    return da.blockwise(
        _take_along_blocks,
        out_ind,
        x,
        x_ind,
        indices,
        out_ind,
        concatenate=False,
        axis=axis,
        bounds=bounds,
        dtype=x.dtype,
        meta=np.empty((0,) * ndim, dtype=x.dtype),
    )


def _take_along_blocks(x_blocks, index_block, axis, bounds):
    if not isinstance(x_blocks, list):
        x_blocks = [x_blocks]
    index_block = np.asarray(index_block)
    zero = np.zeros((), dtype=np.asarray(x_blocks[0]).dtype)
    out = None
    for block, start, stop in zip(x_blocks, bounds[:-1], bounds[1:], strict=True):
        inside = (index_block >= start) & (index_block < stop)
        local = np.where(inside, index_block - start, 0)
        picked = np.take_along_axis(np.asarray(block), local, axis=axis)
        out = np.where(inside, picked, zero if out is None else out)
    return out
