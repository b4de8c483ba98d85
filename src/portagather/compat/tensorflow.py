"""``tf.gather_nd``, ``tf.gather``, ``tf.scatter_nd``, ``tf.tensor_scatter_nd_update`` /
``_add`` / ``_sub`` / ``_min`` / ``_max``, and ``tf.math``'s segment reductions
(``tf.math.unsorted_segment_sum`` and the others, as ``tensorflow.math`` here, which lists
its own differences) with TensorFlow's signatures, on any array backend.

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
- The scatters take `updates` of any dtype that casts safely to the tensor's (TensorFlow:
  the same dtype); ``tensor_scatter_nd_update`` with duplicate index vectors keeps the last
  update in row-major order (TensorFlow leaves the order unspecified). ``scatter_nd`` makes
  its zeros in the namespace and dtype of `updates`; Python values for `updates` take the
  default dtype of the indices' namespace (NumPy's int64, not TensorFlow's int32). A 1-d
  `indices` (a single index vector) is accepted; TensorFlow 2.21 refuses it ("Updates shape
  must have rank at least one"). ``scatter_nd`` with bool updates combines duplicates with
  a logical OR, as TensorFlow does. ``scatter_nd`` refuses string updates with a
  :class:`TypeError` that says so: ``tf.scatter_nd`` joins the strings of duplicate index
  vectors (``[b"b", b"b"]`` at one index gives ``b"bb"``), which no reduction here does.
- Under ``jax.jit`` (without ``checkify``), ``bad_indices_policy="ERROR"`` cannot read the
  index values: the error says to wrap the function with
  ``jax.experimental.checkify.checkify`` or to pass ``bad_indices_policy="IGNORE"``.
"""

from __future__ import annotations

from typing import Any

import portagather.compat._tensorflow_math as math  # the tf.math namespace

from .. import _api
from .._arrays import dtype_name
from .._options import one_of
from .._routes import scatter_call
from .._types import Reduction
from ._common import _RENAMED_TYPES, renamed, ways_out, zeros_of

__all__ = [
    "gather",
    "gather_nd",
    "math",
    "scatter_nd",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
]

_TF_POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")


def _ways(name: str, core: str, *, policy: bool = False) -> dict[str, str]:
    """The ways out front end `name` has where index values cannot be checked (kept per
    front end: every call of one reads them)."""
    key = (name, core, policy)
    ways = _WAYS.get(key)
    if ways is None:
        front = f"portagather.compat.tensorflow.{name}"
        ways = _WAYS[key] = ways_out(front, core, "bad_indices_policy" if policy else None)
    return ways


#: The ways out of each front end's renamed errors. Why: made per call they are a share of
#: a small call (the text is built from the front end's and the core's names). Bound: one
#: per front end.
_WAYS: dict[tuple[str, str, bool], dict[str, str]] = {}


def _policy(bad_indices_policy: str) -> Any:
    return one_of(bad_indices_policy, _TF_POLICIES, "bad_indices_policy")


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
    policy = _policy(bad_indices_policy)
    with renamed({}, _ways("gather_nd", "gather_nd", policy=True)):
        return _api.gather_nd(params, indices, batch_dims=batch_dims, bad_indices=policy)


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
    with renamed({}, _ways("gather", "gather")):
        return _api.gather(params, indices, axis=axis, batch_dims=batch_dims, bad_indices="")


# The core names the tensor `params`; TensorFlow's scatters call it `tensor`, and
# ``tf.scatter_nd`` has none: its zeros are described by `shape`.
_TENSOR = {"params": "tensor"}
_SHAPE = {
    "params of shape": "shape",
    "params.shape": "shape",
    "params.ndim": "len(shape)",
    "params": "updates",
}
#: ``tf.scatter_nd`` of strings joins those of duplicate index vectors; here it is refused.
_STRINGS = {
    'reduce="add" needs params of a numeric or bool dtype': (
        "scatter_nd adds the updates of duplicate index vectors, so it needs updates of a "
        "numeric or bool dtype (tf.scatter_nd joins strings there; "
        "portagather.compat.tensorflow.scatter_nd does not)"
    ),
}


def _tensor_scatter(
    name: str,
    tensor: Any,
    indices: Any,
    updates: Any,
    reduce: Reduction,
    bad_indices_policy: str,
    policy_argument: bool = True,
    deterministic: bool = False,
) -> Any:
    policy = _policy(bad_indices_policy)
    with renamed(_TENSOR, _ways(name, "scatter_nd", policy=policy_argument)):
        return _api.scatter_nd(tensor, indices, updates, reduce=reduce, bad_indices=policy,
                               deterministic=deterministic)  # fmt: skip


def scatter_nd(
    indices: Any,
    updates: Any,
    shape: Any,
    bad_indices_policy: str = "",
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.scatter_nd``: zeros of `shape` with `updates` added at the index vectors.

    Duplicate index vectors sum their updates, as in TensorFlow (bools: OR). String updates
    are refused (TensorFlow joins those of duplicate index vectors).

    Parameters
    ----------
    indices : array of integers, or nested lists of ints
        Index vectors along the last axis; each component ``j`` valid in ``[0, shape[j])``.
    updates : array, or values
        Shape ``indices.shape[:-1] + shape[indices.shape[-1]:]``; gives the result's
        namespace, dtype and device.
    shape : sequence of ints, or 1-d integer array
        The result's shape.
    bad_indices_policy : {"", "DEFAULT", "ERROR", "IGNORE"}, optional
        As in :func:`gather_nd`; ``"IGNORE"`` drops the updates of bad index vectors.
    name : str, optional
        Ignored.
    deterministic : bool, optional
        portagather's keyword: ``True`` adds floating updates in one order fixed by the
        index (docs/deterministic.md), the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.scatter_nd(np.array([[4], [3], [1], [7]]), np.array([9, 10, 11, 12]), [8])
    array([ 0, 11,  0, 10,  9,  0,  0, 12])
    >>> tf.scatter_nd([[1], [1], [9]], np.array([1.5, 2.0, 7.0]), [3], bad_indices_policy="IGNORE")
    array([0. , 3.5, 0. ])
    """
    policy = _policy(bad_indices_policy)
    with renamed(_SHAPE | _STRINGS, _ways("scatter_nd", "scatter_nd", policy=True)):
        zeros, updates = zeros_of(shape, updates, indices)
        return _api.scatter_nd(zeros, indices, updates, reduce="add", bad_indices=policy,
                               deterministic=deterministic)  # fmt: skip


def tensor_scatter_nd_update(
    tensor: Any,
    indices: Any,
    updates: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.tensor_scatter_nd_update``: a copy of `tensor` with `updates` written at the
    index vectors (the inverse of :func:`gather_nd`).

    A bad index vector raises :class:`IndexError` where the values can be checked and is
    skipped under JAX tracing (TensorFlow's CPU and GPU behaviour). With duplicate vectors
    the last update in row-major order wins.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.tensor_scatter_nd_update(np.zeros(8, dtype=np.int32), [[1], [3], [4], [7]],
    ...                             np.array([9, 10, 11, 12], dtype=np.int32))
    array([ 0,  9,  0, 10, 11,  0,  0, 12], dtype=int32)
    """
    return _tensor_scatter(
        "tensor_scatter_nd_update", tensor, indices, updates, "update", "", policy_argument=False
    )


def tensor_scatter_nd_add(
    tensor: Any,
    indices: Any,
    updates: Any,
    bad_indices_policy: str = "",
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.tensor_scatter_nd_add``: `tensor` plus `updates` at the index vectors
    (duplicates summed).

    ``deterministic=True`` (portagather's keyword) adds floats in one order fixed by the
    index (docs/deterministic.md): ``tensor + tree(updates)`` where any update lands, the
    same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.tensor_scatter_nd_add(np.arange(1, 9), [[4], [3], [1], [7]], [9, 10, 11, 12])
    array([ 1, 13,  3, 14, 14,  6,  7, 20])
    """
    return _tensor_scatter("tensor_scatter_nd_add", tensor, indices, updates, "add",
                           bad_indices_policy, deterministic=deterministic)  # fmt: skip


def tensor_scatter_nd_sub(
    tensor: Any,
    indices: Any,
    updates: Any,
    bad_indices_policy: str = "",
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.tensor_scatter_nd_sub``: `tensor` minus `updates` at the index vectors: the add
    of the negated updates, negated in the tensor's dtype once every argument is checked
    (unsigned dtypes wrap around, as in TensorFlow).

    ``deterministic=True`` (portagather's keyword) adds the negated floats in the order of
    :func:`tensor_scatter_nd_add`'s: a negation is exact and rounding is symmetric, so the
    result is ``tensor - tree(updates)`` bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.tensor_scatter_nd_sub(np.arange(1, 9), [[4], [3], [1], [7]], [9, 10, 11, 12])
    array([ 1, -9,  3, -6, -4,  6,  7, -4])
    """
    policy = _policy(bad_indices_policy)
    # One checked call of the core (its checks as an add's), then the updates negated in the
    # tensor's dtype, then the route's scatter. (A try, not a with, and one renamed context
    # for every call: the context's making, its enter and its exit are a share of this
    # small call, beside which the negation is the front end's one step of its own.)
    try:
        route, tensor, indices, updates = scatter_call(
            _api.SCATTER_ND, tensor, indices, updates, (0,), "add", policy, False, False,
            deterministic,
        )  # fmt: skip
        if route.reduction != "add":  # bool's OR (the core refused the other non-numbers)
            msg = (
                "tensor_scatter_nd_sub needs tensor of a numeric dtype; got "
                f"{dtype_name(tensor.dtype)}"
            )
            raise TypeError(msg)
        return _api.scatter_route(route, tensor, indices, -updates, deterministic)
    except _RENAMED_TYPES as err:
        _SUB_RENAMED.__exit__(type(err), err, err.__traceback__)  # raises it renamed
        raise


#: ``tensor_scatter_nd_sub``'s renames and ways out: one for all calls (it keeps no state of
#: a call).
_SUB_RENAMED = renamed(_TENSOR, _ways("tensor_scatter_nd_sub", "scatter_nd", policy=True))


def tensor_scatter_nd_min(
    tensor: Any,
    indices: Any,
    updates: Any,
    bad_indices_policy: str = "",
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.tensor_scatter_nd_min``: the element-wise minimum of `tensor` and the updates at
    the index vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.tensor_scatter_nd_min(np.zeros(8, dtype=int), [[1], [4], [5]], [1, -1, 1])
    array([ 0,  0,  0,  0, -1,  0,  0,  0])
    """
    return _tensor_scatter(
        "tensor_scatter_nd_min", tensor, indices, updates, "min", bad_indices_policy
    )


def tensor_scatter_nd_max(
    tensor: Any,
    indices: Any,
    updates: Any,
    bad_indices_policy: str = "",
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.tensor_scatter_nd_max``: the element-wise maximum of `tensor` and the updates at
    the index vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.tensor_scatter_nd_max(np.zeros(8, dtype=int), [[1], [4], [5]], [1, -1, 1])
    array([0, 1, 0, 0, 0, 1, 0, 0])
    """
    return _tensor_scatter(
        "tensor_scatter_nd_max", tensor, indices, updates, "max", bad_indices_policy
    )
