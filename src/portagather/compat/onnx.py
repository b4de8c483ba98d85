"""ONNX's ``Gather``, ``GatherElements``, ``GatherND``, ``ScatterElements`` and ``ScatterND`` as
functions, on any array backend.

The arguments are the operators' inputs followed by their attributes, with ONNX's defaults::

    from portagather.compat import onnx as onnx_ops
    onnx_ops.gather(data, indices, axis=0)

What differs from ONNX: nothing in the results. Index values follow ONNX's rule: valid in
``[-s, s)`` for an axis of length ``s``, negatives counting from the end (in ``GatherND``, per
component). The core checks each value once against that range (its plans for ``Gather``,
``GatherND`` and ``ScatterND``: ``compat._common.plan_gather_from_end`` and
``plan_gather_nd_from_end``; the core's own ``GatherElements`` and ``ScatterElements`` take
it already) and names an out-of-range value as written: ``indices[0] = -4 is out of range
[-3, 3) for axis 0 of data``.
ONNX leaves out-of-range indices undefined; here they raise :class:`IndexError` (under JAX
tracing use :func:`jax.experimental.checkify.checkify`).

The scatters take ``reduction`` as ONNX does (``"none"``, ``"add"``, ``"mul"``, ``"max"``,
``"min"``; opset 18). Where ONNX leaves a result undefined, portagather defines it:
duplicate indices under ``reduction="none"`` keep the last update in row-major order. Also,
``scatter_elements`` takes `updates` larger than `indices` (its leading block is used) and of
any dtype that casts safely to `data`'s; ONNX wants both equal.
"""

from __future__ import annotations

from typing import Any

from .. import _api
from .._options import int_argument, one_of
from .._types import Reduction
from ._common import GATHER_FROM_END, GATHER_ND_FROM_END, SCATTER_ND_FROM_END, renamed, ways_out

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]

_REDUCTIONS: dict[str, Reduction] = {
    "none": "update",
    "add": "add",
    "mul": "multiply",
    "max": "max",
    "min": "min",
}
_ELEMENTS = {"x": "data", "index": "indices", "src": "updates", "dim": "axis"}
_ND = {"params": "data"}


def _ways(name: str, core: str) -> dict[str, str]:
    """The ways out front end `name` has where index values cannot be checked."""
    return ways_out(f"portagather.compat.onnx.{name}", core)


def _reduce(reduction: object) -> Reduction:
    return _REDUCTIONS[one_of(reduction, _REDUCTIONS, "reduction")]


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
    arguments = (int_argument(axis, "axis"), 0)
    with renamed(_ND, _ways("gather", "gather")):
        return _api.run_gather(GATHER_FROM_END, data, indices, arguments, "error", 0)


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
    with renamed(_ELEMENTS, _ways("gather_elements", "gather_d")):
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
    arguments = (int_argument(batch_dims, "batch_dims"),)
    with renamed(_ND, _ways("gather_nd", "gather_nd")):
        return _api.run_gather(GATHER_ND_FROM_END, data, indices, arguments, "error", 0)


def scatter_elements(
    data: Any, indices: Any, updates: Any, axis: int = 0, reduction: str = "none"
) -> Any:
    """ONNX ``ScatterElements``: a copy of `data` with `updates` combined along `axis` at
    `indices` (the inverse of :func:`gather_elements`); values in ``[-s, s)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import onnx as onnx_ops
    >>> onnx_ops.scatter_elements(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), np.array([[1, 3]]),
    ...                           np.array([[1.1, 2.1]]), axis=1)
    array([[1. , 1.1, 3. , 2.1, 5. ]])
    >>> onnx_ops.scatter_elements(np.array([[1, 2, 3]]), np.array([[1, 1]]), np.array([[5, 6]]),
    ...                           axis=1, reduction="mul")
    array([[ 1, 60,  3]])
    """
    reduce = _reduce(reduction)
    with renamed(_ELEMENTS, _ways("scatter_elements", "scatter_d")):
        return _api.scatter_d(data, axis, indices, updates, reduce=reduce)


def scatter_nd(data: Any, indices: Any, updates: Any, reduction: str = "none") -> Any:
    """ONNX ``ScatterND``: a copy of `data` with `updates` combined at the index vectors of
    `indices` (the inverse of :func:`gather_nd`); negative components count from the end.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import onnx as onnx_ops
    >>> onnx_ops.scatter_nd(np.arange(1, 9), np.array([[4], [3], [1], [7]]),
    ...                     np.array([9, 10, 11, 12]))
    array([ 1, 11,  3, 10,  9,  6,  7, 12])
    >>> onnx_ops.scatter_nd(np.arange(1, 5), np.array([[1], [-1], [1]]), np.array([5, 6, 7]),
    ...                     reduction="add")
    array([ 1, 14,  3, 10])
    """
    reduce = _reduce(reduction)
    with renamed(_ND, _ways("scatter_nd", "scatter_nd")):
        return _api.run_scatter(
            SCATTER_ND_FROM_END, data, indices, updates, (0,), reduce, "error", False, False
        )
