"""The four public operations: argument checks and shape plans; the work is in ``_pipeline``."""

from __future__ import annotations

import math
import operator

from ._arrays import as_arrays, check_index_dtype, static_shape
from ._compose import gather_axes, take_along
from ._errors import BadIndex
from ._pipeline import Plan, run
from ._policy import normalize_policy


def _int_argument(value, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int; got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int; got {value!r}") from None


def _prepare(data, indices, data_name: str, index_name: str, bad_indices):
    policy = normalize_policy(bad_indices)
    xp, data, indices = as_arrays(data, indices, data_name, index_name)
    check_index_dtype(xp, indices, index_name)
    return (
        xp,
        data,
        indices,
        policy,
        static_shape(data, data_name),
        static_shape(indices, index_name),
    )


def _check_batch_shape(data_shape, index_shape, batch_dims: int, data_name: str, index_name: str):
    if data_shape[:batch_dims] != index_shape[:batch_dims]:
        raise ValueError(
            f"the first batch_dims={batch_dims} dimensions of {data_name} and {index_name} must "
            f"be equal; got {data_name}.shape[:{batch_dims}] = {data_shape[:batch_dims]} and "
            f"{index_name}.shape[:{batch_dims}] = {index_shape[:batch_dims]}"
        )


def _normalize_axis(axis: int, ndim: int, name: str, data_name: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{name} must be in [-{data_name}.ndim, {data_name}.ndim) = [{-ndim}, {ndim}); "
            f"got {axis}"
        )
    return axis % ndim


def gather_nd(params, indices, *, batch_dims=0, bad_indices="error", fill_value=0):
    """Gather slices of `params` addressed by index vectors, like ``tf.gather_nd``.

    The index vectors lie along the last axis of `indices`; each selects the slice
    ``params[β, *indices[β, i]]`` (``β`` runs over the `batch_dims` leading axes shared by both
    arrays).

    Parameters
    ----------
    params : array
        The data, of rank ``r``.
    indices : array of integers, or nested lists of ints
        Rank ``q >= 1``; ``K = indices.shape[-1]`` is the index depth, with
        ``batch_dims + K <= r``. Each component ``j`` is valid in ``[0, params.shape[b + j])``;
        a negative component is a bad index, as in TensorFlow.
    batch_dims : int, optional
        Number of leading axes that `params` and `indices` share, ``0 <= batch_dims < q``.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        What a bad index vector does (TensorFlow's ``""``, ``"DEFAULT"``, ``"ERROR"`` and
        ``"IGNORE"`` are accepted too). ``"ignore"`` fills the whole output slice of a bad
        vector with `fill_value`.
    fill_value : scalar, optional
        Value of ignored slices; 0 means the zero of params' dtype.

    Returns
    -------
    array
        Shape ``params.shape[:b] + indices.shape[b:-1] + params.shape[b + K:]``, with params'
        namespace, dtype and device.

    Raises
    ------
    TypeError
        For a non-integer `indices` or arrays of two namespaces.
    ValueError
        For ranks, `batch_dims`, index depth or batch shapes that do not fit, or an unknown
        policy.
    IndexError
        For a bad index vector under ``"error"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.gather_nd(np.array([["a", "b"], ["c", "d"]]), [[0, 0], [1, 1]])
    array(['a', 'd'], dtype='<U1')
    >>> params = np.arange(12).reshape(2, 3, 2)
    >>> pg.gather_nd(params, [[2], [0]], batch_dims=1)
    array([[4, 5],
           [6, 7]])
    >>> pg.gather_nd(params, [[1, 5]], bad_indices="ignore", fill_value=-1)
    array([[-1, -1]])
    """
    xp, params, indices, policy, shape, index_shape = _prepare(
        params, indices, "params", "indices", bad_indices
    )
    batch_dims = _int_argument(batch_dims, "batch_dims")
    rank, depth_rank = len(shape), len(index_shape)
    if depth_rank < 1:
        raise ValueError(
            "indices must have at least 1 dimension (index vectors lie along its last axis); "
            "got a 0-d array"
        )
    if not 0 <= batch_dims < depth_rank:
        raise ValueError(
            f"batch_dims must be in [0, indices.ndim) = [0, {depth_rank}); got {batch_dims}"
        )
    depth = index_shape[-1]
    if batch_dims + depth > rank:
        raise ValueError(
            f"indices.shape[-1] (the index depth) must be at most params.ndim - batch_dims = "
            f"{rank} - {batch_dims} = {rank - batch_dims}; got {depth}"
        )
    _check_batch_shape(shape, index_shape, batch_dims, "params", "indices")

    b = batch_dims
    indexed = shape[b : b + depth]
    batch, grid, inner = shape[:b], index_shape[b:-1], shape[b + depth :]

    plan = Plan(
        sizes=indexed,
        strides=tuple(math.prod(indexed[j + 1 :]) for j in range(depth)),
        vector=True,
        allow_negative=False,
        out_shape=batch + grid + inner,
        keep_shape=batch + grid + (1,) * len(inner),
        largest=math.prod(shape) - 1,
        compose=lambda flat: gather_axes(xp, params, flat, b, b, depth),
        report=BadIndex("indices", True, "params", shape, b, depth),
    )
    return run(xp, params, indices, plan, policy, fill_value)


def gather(params, indices, *, axis=None, batch_dims=0, bad_indices="error", fill_value=0):
    """Gather slices of `params` along `axis`, like ``tf.gather``.

    Parameters
    ----------
    params : array
        The data, of rank ``r >= 1``.
    indices : array of integers, nested lists of ints, or an int
        Valid values are ``[0, params.shape[axis])``. 0-d indices remove the axis.
    axis : int, optional
        The gathered axis of `params`; negative counts from the end. Defaults to
        `batch_dims` as given (so ``batch_dims=-1`` means ``axis=-1``, as in TensorFlow).
        ``batch_dims <= axis`` after both are normalised.
    batch_dims : int, optional
        Number of leading axes that `params` and `indices` share; a negative value has
        ``indices.ndim`` added.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        See :func:`gather_nd`.
    fill_value : scalar, optional
        Value of ignored slices; 0 means the zero of params' dtype.

    Returns
    -------
    array
        Shape ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> params = np.array([[10, 11, 12], [20, 21, 22]])
    >>> pg.gather(params, [2, 0], axis=1)
    array([[12, 10],
           [22, 20]])
    >>> pg.gather(params, [[1], [2]], axis=1, batch_dims=1)
    array([[11],
           [22]])
    >>> pg.gather(params, [0, 7], axis=1, bad_indices="clip")
    array([[10, 12],
           [20, 22]])
    """
    xp, params, indices, policy, shape, index_shape = _prepare(
        params, indices, "params", "indices", bad_indices
    )
    rank, index_rank = len(shape), len(index_shape)
    batch_dims = _int_argument(batch_dims, "batch_dims")
    if not -index_rank <= batch_dims <= index_rank:
        raise ValueError(
            f"batch_dims must be in [-indices.ndim, indices.ndim] = [{-index_rank}, "
            f"{index_rank}]; got {batch_dims}"
        )
    # As in TensorFlow, axis defaults to batch_dims as given, before either is normalised.
    axis = batch_dims if axis is None else _int_argument(axis, "axis")
    b = batch_dims + index_rank if batch_dims < 0 else batch_dims
    axis = _normalize_axis(axis, rank, "axis", "params")
    if b > axis:
        raise ValueError(f"batch_dims must not exceed axis; got batch_dims={b}, axis={axis}")
    _check_batch_shape(shape, index_shape, b, "params", "indices")

    n = shape[axis]
    batch, outer, grid, inner = shape[:b], shape[b:axis], index_shape[b:], shape[axis + 1 :]

    plan = Plan(
        sizes=(n,),
        strides=(1,),
        vector=False,
        allow_negative=False,
        out_shape=batch + outer + grid + inner,
        keep_shape=batch + (1,) * len(outer) + grid + (1,) * len(inner),
        largest=math.prod(shape) - 1,
        compose=lambda flat: gather_axes(xp, params, flat, b, axis, 1),
        report=BadIndex("indices", False, "params", shape, axis),
    )
    return run(xp, params, indices, plan, policy, fill_value)


def gather_d(x, dim, index, *, bad_indices="error", fill_value=0):
    """Gather elements of `x` along `dim`, like MindSpore's ``GatherD`` and ``torch.gather``.

    ``out[i] = x[i_0, ..., index[i], ..., i_{n-1}]`` with ``index[i]`` in place of ``i_dim``.

    Parameters
    ----------
    x : array
        The data.
    dim : int
        The gathered axis, ``-x.ndim <= dim < x.ndim``.
    index : array of integers, or nested lists of ints
        Same rank as `x`; ``index.shape[d] <= x.shape[d]`` for every ``d != dim`` (a smaller
        index reads the leading block; nothing is broadcast). Valid values are ``[-n, n)``
        with ``n = x.shape[dim]``; negatives count from the end.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        See :func:`gather_nd`; ``"clip"`` and ``"wrap"`` count negatives from the end first.
    fill_value : scalar, optional
        Value of ignored elements; 0 means the zero of x's dtype.

    Returns
    -------
    array
        Shape ``index.shape``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.gather_d(np.array([[1, 2], [3, 4]]), 1, [[0, 0], [1, 0]])
    array([[1, 1],
           [4, 3]])
    >>> pg.gather_d(np.array([[1, 2], [3, 4]]), 1, [[-1], [-2]])
    array([[2],
           [3]])
    """
    xp, x, index, policy, shape, index_shape = _prepare(x, index, "x", "index", bad_indices)
    rank = len(shape)
    if len(index_shape) != rank:
        raise ValueError(
            f"index must have the same rank as x; got x.ndim = {rank} and index.ndim = "
            f"{len(index_shape)}"
        )
    dim = _normalize_axis(_int_argument(dim, "dim"), rank, "dim", "x")
    too_big = [d for d in range(rank) if d != dim and index_shape[d] > shape[d]]
    if too_big:
        raise ValueError(
            f"index.shape[d] must not exceed x.shape[d] for every d != dim={dim}; got "
            f"index.shape = {index_shape} and x.shape = {shape} (d = {too_big[0]})"
        )
    n = shape[dim]
    block = tuple(slice(None) if d == dim else slice(0, index_shape[d]) for d in range(rank))
    leading = (*index_shape[:dim], n, *index_shape[dim + 1 :])

    def compose(flat):
        data = x if leading == shape else x[block]
        return take_along(xp, data, flat, axis=dim)

    plan = Plan(
        sizes=(n,),
        strides=(1,),
        vector=False,
        allow_negative=True,
        out_shape=index_shape,
        keep_shape=index_shape,
        largest=math.prod(leading) - 1,
        compose=compose,
        report=BadIndex("index", False, "x", shape, dim, allow_negative=True, axis_word="dim"),
    )
    return run(xp, x, index, plan, policy, fill_value)


def take_along_axis(x, indices, /, *, axis=-1, bad_indices="error", fill_value=0):
    """Take values of `x` along `axis` at `indices`, like the array API's ``take_along_axis``.

    Provided for backends that lack it (Dask) and so that every backend gets the same
    bad-index policies.

    Parameters
    ----------
    x : array
        The data.
    indices : array of integers, or nested lists of ints
        Same rank as `x`; the two broadcast against each other on every axis but `axis`.
        Valid values are ``[-n, n)`` with ``n = x.shape[axis]``; negatives count from the end.
    axis : int, optional
        The gathered axis, ``-x.ndim <= axis < x.ndim``.
    bad_indices : {"error", "ignore", "clip", "wrap", "unchecked"}, optional
        See :func:`gather_nd`.
    fill_value : scalar, optional
        Value of ignored elements; 0 means the zero of x's dtype.

    Returns
    -------
    array
        The broadcast shape of `x` and `indices`, with ``indices.shape[axis]`` along `axis`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> x = np.array([[10, 30, 20], [60, 40, 50]])
    >>> pg.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    array([[10, 20, 30],
           [40, 50, 60]])
    >>> pg.take_along_axis(x, [[0], [-1]], axis=1)
    array([[10],
           [50]])
    """
    xp, x, indices, policy, shape, index_shape = _prepare(x, indices, "x", "indices", bad_indices)
    rank = len(shape)
    if len(index_shape) != rank:
        raise ValueError(
            f"indices must have the same rank as x; got x.ndim = {rank} and indices.ndim = "
            f"{len(index_shape)}"
        )
    axis = _normalize_axis(_int_argument(axis, "axis"), rank, "axis", "x")
    out_shape = []
    for d, (size, index_size) in enumerate(zip(shape, index_shape, strict=True)):
        if d == axis:
            out_shape.append(index_size)
        elif size == index_size or index_size == 1:
            out_shape.append(size)
        elif size == 1:
            out_shape.append(index_size)
        else:
            raise ValueError(
                f"x and indices must broadcast against each other on every axis but "
                f"axis={axis}; got x.shape = {shape} and indices.shape = {index_shape} "
                f"(axis {d})"
            )
    n = shape[axis]
    plan = Plan(
        sizes=(n,),
        strides=(1,),
        vector=False,
        allow_negative=True,
        out_shape=tuple(out_shape),
        keep_shape=index_shape,
        largest=math.prod(shape) - 1,
        compose=lambda flat: take_along(xp, x, flat, axis=axis),
        report=BadIndex("indices", False, "x", shape, axis, allow_negative=True),
    )
    return run(xp, x, indices, plan, policy, fill_value)
