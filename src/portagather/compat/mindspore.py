"""MindSpore's gathers (``ops.GatherD``, ``ops.gather_d``, ``ops.gather_elements``,
``ops.GatherNd``, ``ops.gather_nd``, ``ops.gather``) with MindSpore's signatures.

Port by changing the import::

    from portagather.compat import mindspore as ops

What differs from MindSpore:

- The result is an array of the backend of the inputs, not a ``mindspore.Tensor``.
- A bad index raises :class:`IndexError` on every device (MindSpore: ``RuntimeError`` on CPU,
  zeros or undefined values on GPU and Ascend); under JAX tracing wrap the call with
  ``jax.experimental.checkify`` or call :func:`portagather.gather_d` and friends with another
  ``bad_indices`` policy.
- ``GatherD`` and ``gather_d`` allow an index smaller than `x` on the axes other than `dim`
  (it reads the leading block, as ``torch.gather`` does).
"""

from __future__ import annotations

from typing import Any

from .. import _api
from ._common import axis_size, count_from_end

__all__ = ["GatherD", "GatherNd", "gather", "gather_d", "gather_elements", "gather_nd"]


def gather_d(x: Any, dim: int, index: Any) -> Any:
    """``ops.gather_d``: ``out[i] = x[i_0, ..., index[i], ..., i_{n-1}]`` (``index[i]`` at `dim`).

    Index values are valid in ``[-x.shape[dim], x.shape[dim])``; negatives count from the end.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.gather_d(np.array([[1, 2], [3, 4]]), 1, np.array([[0, -1], [1, 0]]))
    array([[1, 2],
           [4, 3]])
    """
    return _api.gather_d(x, dim, index)


def gather_elements(input: Any, dim: int, index: Any) -> Any:
    """``ops.gather_elements``: the same as :func:`gather_d`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.gather_elements(np.array([[1, 2], [3, 4]]), 0, np.array([[1, 0]]))
    array([[3, 2]])
    """
    return _api.gather_d(input, dim, index)


class GatherD:
    """``ops.GatherD``: the primitive form; ``GatherD()(x, dim, index)`` is ``gather_d``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> print(ops.GatherD()(np.array([[1, 2], [3, 4]]), 1, np.array([[0, 0], [1, 0]])))
    [[1 1]
     [4 3]]
    """

    def __call__(self, x: Any, dim: int, index: Any) -> Any:
        return _api.gather_d(x, dim, index)


def gather_nd(input_x: Any, indices: Any) -> Any:
    """``ops.gather_nd``: ``tf.gather_nd`` without batch dimensions.

    Each component ``j`` of an index vector is valid in ``[0, input_x.shape[j])``; a negative
    component is a bad index, as in MindSpore.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.gather_nd(np.array([[1, 2], [3, 4]]), np.array([[1, 0], [0, 1]]))
    array([3, 2])
    """
    return _api.gather_nd(input_x, indices)


class GatherNd:
    """``ops.GatherNd``: the primitive form; ``GatherNd()(input_x, indices)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.GatherNd()(np.array([[1, 2], [3, 4]]), np.array([[1]]))
    array([[3, 4]])
    """

    def __call__(self, input_x: Any, indices: Any) -> Any:
        return _api.gather_nd(input_x, indices)


def gather(input_params: Any, input_indices: Any, axis: int, batch_dims: int = 0) -> Any:
    """``ops.gather``: ``tf.gather`` with a required `axis`.

    Index values are valid in ``[-n, n)`` with ``n = input_params.shape[axis]``; negatives
    count from the end, as MindSpore does on CPU.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.gather(np.array([[1, 2, 3], [4, 5, 6]]), np.array([2, -3]), 1)
    array([[3, 1],
           [6, 4]])
    """
    input_params, input_indices = count_from_end(
        input_params,
        input_indices,
        axis_size(axis),
        vector=False,
        names=("input_params", "input_indices"),
    )
    return _api.gather(input_params, input_indices, axis=axis, batch_dims=batch_dims)
