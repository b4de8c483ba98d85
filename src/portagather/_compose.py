"""The one gather primitive every operation reduces to, composed from the standard's ``take``."""

from __future__ import annotations

import math

import array_api_compat as aac

from ._backends import (
    backend_take_along_axis,
    dask_gather_axes,
    dask_take_along,
    prefers_take_along_axis,
    take,
)


def gather_axes(xp, params, flat, batch_dims: int, axis: int, depth: int):
    """Gather ``depth`` consecutive axes of `params`, from `axis` on, at flat positions.

    `flat` has shape ``params.shape[:batch_dims] + grid`` and values in
    ``[0, prod(params.shape[axis:axis + depth]))``, row-major over those axes. The result has
    shape ``params.shape[:axis] + grid + params.shape[axis + depth:]``: ``gather_nd`` is
    ``axis == batch_dims``, ``gather`` is ``depth == 1``. Anywhere but on Dask, params is viewed
    as ``(batch, outer, gathered, inner)`` blocks for one :func:`take_along`; on Dask, where
    that reshape would merge params chunks, ``dask_gather_axes`` gathers block by block.
    """
    shape, b = tuple(params.shape), batch_dims
    grid = tuple(flat.shape[b:])
    out_shape = shape[:axis] + grid + shape[axis + depth :]
    if aac.is_dask_array(params):
        return dask_gather_axes(params, flat, b, axis, depth)
    blocks = [math.prod(s) for s in (shape[:b], shape[b:axis], shape[axis : axis + depth])]
    data = xp.reshape(params, (*blocks, math.prod(shape[axis + depth :])))
    index = xp.reshape(flat, (blocks[0], 1, math.prod(grid), 1))
    return xp.reshape(take_along(xp, data, index, axis=2), out_shape)


def take_along(xp, x, indices, axis: int):
    """``take_along_axis`` with broadcasting, for indices already in ``[0, x.shape[axis])``.

    `x` and `indices` have the same rank and broadcast against each other on every axis but
    `axis`. Four compositions, all one gather:

    - Dask: ``dask_take_along``, one task per index block (Dask has no ``take_along_axis``);
    - the indices vary along `axis` only: one ``take`` on `x` as it is;
    - the backend prefers it (see ``prefers_take_along_axis``): its ``take_along_axis``,
      which keeps batch axes as axes;
    - otherwise: one ``take`` on `x` reshaped to ``(lead, middle, tail)``, with flat indices
      into the middle block. Leading and trailing axes along which the indices do not vary
      stay out of the index arithmetic, so the flat index array is never larger than needed.
    """
    if aac.is_dask_array(x):  # a reshape of a Dask array would rechunk it
        return dask_take_along(x, indices, axis)
    ndim = x.ndim
    out_shape = tuple(
        x.shape[d] if d != axis and indices.shape[d] == 1 else indices.shape[d] for d in range(ndim)
    )
    varying = [d for d in range(ndim) if d != axis and indices.shape[d] != 1]
    if not varying:
        return _take_block(xp, x, xp.reshape(indices, (-1,)), axis, out_shape)
    elementwise = all(x.shape[d] == indices.shape[d] for d in range(ndim) if d != axis)
    if prefers_take_along_axis(xp, elementwise):
        return backend_take_along_axis(xp, x, indices, axis, elementwise)

    lead = min(axis, varying[0])
    stop = max(axis, varying[-1]) + 1
    middle = x.shape[lead:stop]
    # Row-major strides of the middle block; zero where x is broadcast (size 1).
    strides = [math.prod(middle[k + 1 :]) for k in range(len(middle))]
    flat = indices if strides[axis - lead] == 1 else indices * strides[axis - lead]
    flat = xp.reshape(flat, indices.shape[lead:stop])
    device = aac.device(x)
    for k, d in enumerate(range(lead, stop)):
        if d == axis or x.shape[d] == 1 or out_shape[d] == 1:
            continue
        shape = [1] * len(middle)
        shape[k] = out_shape[d]
        position = xp.arange(out_shape[d], dtype=indices.dtype, device=device)
        flat = flat + xp.reshape(position, tuple(shape)) * strides[k]
    if tuple(flat.shape) != out_shape[lead:stop]:
        flat = xp.broadcast_to(flat, out_shape[lead:stop])  # NumPy's take copies such a view
    blocks = (math.prod(x.shape[:lead]), math.prod(middle), math.prod(x.shape[stop:]))
    return _take_block(xp, xp.reshape(x, blocks), xp.reshape(flat, (-1,)), 1, out_shape)


def _take_block(xp, x, flat, axis: int, out_shape):
    """One ``take`` of the 1-d `flat` along `axis`, reshaped to `out_shape`.

    With nothing before `axis`, the take runs on an ``(n,)`` or ``(n, tail)`` view: the
    backends' simplest gather (PyTorch's ``index_select`` on a 4-d view with unit axes is
    several times slower).
    """
    if math.prod(x.shape[:axis]) == 1:
        tail = math.prod(x.shape[axis + 1 :])
        block = (x.shape[axis],) if tail == 1 else (x.shape[axis], tail)
        return xp.reshape(take(xp, xp.reshape(x, block), flat, 0), out_shape)
    return xp.reshape(take(xp, x, flat, axis), out_shape)
