"""ONNX's ``Gather``, ``GatherElements`` and ``GatherND`` as functions, on any array backend.

The arguments are the operators' inputs followed by their attributes, with ONNX's defaults::

    from portagather.compat import onnx as onnx_ops
    onnx_ops.gather(data, indices, axis=0)

What differs from ONNX: nothing in the results. Index values follow ONNX's rule: valid in
``[-s, s)`` for an axis of length ``s``, negatives counting from the end (in ``GatherND``, per
component). Negative values are turned into positive ones with array API functions before the
core (which, for ``Gather`` and ``GatherND``, follows TensorFlow and rejects negatives) is
called, so an out-of-range value is reported by the core after that shift: ``-s - 1`` shows as
``-1``. ONNX leaves out-of-range indices undefined; here they raise :class:`IndexError` (under
JAX tracing use :func:`jax.experimental.checkify.checkify`).
"""

from __future__ import annotations

from typing import Any

from .. import _api
from ._common import as_int, axis_size, count_from_end

__all__ = ["gather", "gather_elements", "gather_nd"]


def gather(data: Any, indices: Any, axis: int = 0) -> Any:
    """ONNX ``Gather``: ``out.shape == data.shape[:axis] + indices.shape + data.shape[axis+1:]``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import onnx as onnx_ops
    >>> onnx_ops.gather(np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]), np.array([[0, 1], [1, -1]]))
    array([[[1. , 1.2],
            [2.3, 3.4]],
    <BLANKLINE>
           [[2.3, 3.4],
            [4.5, 5.7]]])
    """
    data, indices = count_from_end(data, indices, axis_size(axis), vector=False)
    return _api.gather(data, indices, axis=axis)


def gather_elements(data: Any, indices: Any, axis: int = 0) -> Any:
    """ONNX ``GatherElements``: ``out[i] = data[..., indices[i], ...]`` at `axis`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import onnx as onnx_ops
    >>> onnx_ops.gather_elements(np.array([[1, 2], [3, 4]]), np.array([[0, 0], [-1, 0]]), axis=1)
    array([[1, 1],
           [4, 3]])
    """
    return _api.gather_d(data, axis, indices)


def gather_nd(data: Any, indices: Any, batch_dims: int = 0) -> Any:
    """ONNX ``GatherND``: ``tf.gather_nd`` with negative components counting from the end.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import onnx as onnx_ops
    >>> onnx_ops.gather_nd(np.array([[0, 1], [2, 3]]), np.array([[0, 0], [-1, -1]]))
    array([0, 3])
    >>> onnx_ops.gather_nd(np.arange(8).reshape(2, 2, 2), np.array([[1], [0]]), batch_dims=1)
    array([[2, 3],
           [4, 5]])
    """
    batch_dims = as_int(batch_dims)

    def sizes_of(shape: tuple[int, ...], index_shape: tuple[int, ...]) -> Any:
        if not isinstance(batch_dims, int) or batch_dims < 0 or not index_shape:
            return None
        sizes = shape[batch_dims : batch_dims + index_shape[-1]]
        return sizes if len(sizes) == index_shape[-1] else None

    data, indices = count_from_end(data, indices, sizes_of, vector=True)
    return _api.gather_nd(data, indices, batch_dims=batch_dims)
