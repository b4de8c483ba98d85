"""``tf.gather_nd`` and ``tf.gather`` with TensorFlow's signatures, on any array backend.

Port by changing the import::

    from portagather.compat import tensorflow as tf

What differs from TensorFlow:

- The result is an array of the backend of the inputs (NumPy, JAX, PyTorch, ...), not a
  ``tf.Tensor``: there is no ``.numpy()``; use ``np.asarray(result)``.
- Python lists of strings become NumPy ``str_`` arrays, not ``bytes`` objects (pass
  ``np.char.encode(...)`` params to get TensorFlow's bytes).
- A bad index raises :class:`IndexError` (TensorFlow: ``InvalidArgumentError``); the message
  names the index vector and the shape, as TensorFlow's does.
- ``name`` is accepted and ignored; so is the deprecated ``validate_indices``.
- A call whose result is empty succeeds even when `params` has no elements.
"""

from __future__ import annotations

from typing import Any

from .. import _api

__all__ = ["gather", "gather_nd"]

_TF_POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")


def _policy(bad_indices_policy: str) -> Any:
    if bad_indices_policy not in _TF_POLICIES:
        msg = (
            f"bad_indices_policy must be one of {', '.join(map(repr, _TF_POLICIES))}; "
            f"got {bad_indices_policy!r}"
        )
        raise ValueError(msg)
    return bad_indices_policy


def gather_nd(
    params: Any,
    indices: Any,
    batch_dims: int = 0,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    bad_indices_policy: str = "",
) -> Any:
    """``tf.gather_nd``: gather slices of `params` addressed by the index vectors in `indices`.

    Parameters
    ----------
    params : array
        The data.
    indices : array of int32 or int64, or nested lists of ints
        Index vectors along the last axis; each component ``j`` valid in
        ``[0, params.shape[batch_dims + j])``.
    batch_dims : int, optional
        Number of leading axes shared by `params` and `indices`.
    name : str, optional
        Ignored (TensorFlow's op name).
    bad_indices_policy : {"", "DEFAULT", "ERROR", "IGNORE"}, optional
        ``""``/``"DEFAULT"``: TensorFlow's default, an error where the index values can be
        checked (eagerly, inside a Dask graph) and ``"IGNORE"`` under JAX tracing, as
        TensorFlow does on GPU. ``"IGNORE"`` writes zeros for a bad index vector's slice.

    Returns
    -------
    array
        Shape ``params.shape[:b] + indices.shape[b:-1] + params.shape[b + K:]``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.gather_nd(indices=[[1], [0]], params=np.array([["a", "b", "c"], ["d", "e", "f"]]))
    array([['d', 'e', 'f'],
           ['a', 'b', 'c']], dtype='<U1')
    >>> tf.gather_nd(np.arange(4).reshape(2, 2), [[0, 1], [5, 0]], bad_indices_policy="IGNORE")
    array([1, 0])
    """
    return _api.gather_nd(
        params, indices, batch_dims=batch_dims, bad_indices=_policy(bad_indices_policy)
    )


def gather(
    params: Any,
    indices: Any,
    validate_indices: object = None,  # noqa: ARG001 (deprecated in TensorFlow, ignored)
    axis: int | None = None,
    batch_dims: int = 0,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.gather``: gather slices of `params` along `axis` at `indices`.

    Parameters
    ----------
    params : array
        The data, of rank at least ``axis + 1``.
    indices : array of int32 or int64, nested lists of ints, or an int
        Valid values ``[0, params.shape[axis])``.
    validate_indices : None
        Deprecated in TensorFlow and ignored there and here.
    axis : int, optional
        The gathered axis; defaults to `batch_dims` as given (so ``batch_dims=-1`` gathers
        along the last axis of `params`, as in TensorFlow); negative counts from the end.
    batch_dims : int, optional
        Number of leading axes shared by `params` and `indices`; negative has
        ``indices.ndim`` added.
    name : str, optional
        Ignored.

    Returns
    -------
    array
        Shape ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    Notes
    -----
    A bad index raises :class:`IndexError` where the values can be checked and gives zeros
    under JAX tracing, TensorFlow's CPU and GPU behaviour respectively.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> params = np.array([[0, 1, 2], [10, 11, 12]])
    >>> tf.gather(params, [2, 0], axis=1)
    array([[ 2,  0],
           [12, 10]])
    >>> tf.gather(params, [[2], [0]], batch_dims=-1, axis=-1)
    array([[ 2],
           [10]])
    """
    if axis is None:
        axis = batch_dims  # before batch_dims is normalised: a negative one counts in params
    return _api.gather(params, indices, axis=axis, batch_dims=batch_dims, bad_indices="")
