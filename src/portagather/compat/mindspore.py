"""MindSpore's gathers (``ops.GatherD``, ``ops.gather_d``, ``ops.gather_elements``,
``ops.GatherNd``, ``ops.gather_nd``, ``ops.gather``), scatters (``ops.TensorScatterElements``,
``ops.tensor_scatter_elements``, ``ops.ScatterNd``, ``ops.scatter_nd``) and segment
reductions (``ops.unsorted_segment_sum`` / ``_max`` / ``_min`` / ``_prod`` and their primitives
``ops.UnsortedSegmentSum`` / ``Max`` / ``Min`` / ``Prod``) with MindSpore's signatures.

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
- The segment reductions keep MindSpore's conventions (checked against MindSpore 2.10 on
  CPU, ``tests/oracles``): a negative id drops its row, an id ``>= num_segments`` raises
  :class:`IndexError` (MindSpore: ``RuntimeError``; under JAX tracing it drops its row), an
  empty segment's max (min) is the dtype's lowest (highest) finite value, and so is a
  segment of only ``-inf`` (``inf``). A NaN makes its segment's max and min NaN (MindSpore
  2.10 on CPU passes over it).
- The front ends that add or multiply floats (``tensor_scatter_elements`` with
  ``reduction="add"``, ``scatter_nd``, ``unsorted_segment_sum`` and ``_prod`` and their
  primitives) follow MindSpore's deterministic switch: with
  ``mindspore.set_context(deterministic="ON")`` they combine floats in one order fixed by
  the index (docs/deterministic.md), the same bits on every backend and in every run. The
  switch is read only where mindspore is imported already.
"""

from __future__ import annotations

from typing import Any

from .. import _api
from .._options import int_argument
from .._types import Reduction
from ._common import (
    GATHER_FROM_END,
    mindspore_deterministic,
    renamed,
    unsorted_segment,
    ways_out,
    zeros_of,
)

__all__ = [
    "GatherD",
    "GatherNd",
    "ScatterNd",
    "TensorScatterElements",
    "UnsortedSegmentMax",
    "UnsortedSegmentMin",
    "UnsortedSegmentProd",
    "UnsortedSegmentSum",
    "gather",
    "gather_d",
    "gather_elements",
    "gather_nd",
    "scatter_nd",
    "tensor_scatter_elements",
    "unsorted_segment_max",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sum",
]


def _ways(name: str, core: str) -> dict[str, str]:
    """The ways out front end `name` has where index values cannot be checked."""
    return ways_out(f"portagather.compat.mindspore.{name}", core)


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
    with renamed({}, _ways("gather_d", "gather_d")):
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
    with renamed({"x": "input"}, _ways("gather_elements", "gather_d")):
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
        with renamed({}, _ways("GatherD", "gather_d")):
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
    with renamed({"params": "input_x"}, _ways("gather_nd", "gather_nd")):
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
        with renamed({"params": "input_x"}, _ways("GatherNd", "gather_nd")):
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
    names = {"params": "input_params", "indices": "input_indices"}
    arguments = (int_argument(axis, "axis"), int_argument(batch_dims, "batch_dims"))
    with renamed(names, _ways("gather", "gather")):
        return _api.run_gather(GATHER_FROM_END, input_params, input_indices, arguments, "error", 0)


_ELEMENTS = {"x": "input_x", "index": "indices", "src": "updates", "dim": "axis"}
_SHAPE = {
    "params of shape": "shape",
    "params.shape": "shape",
    "params.ndim": "len(shape)",
    "params": "updates",
}
_REDUCTIONS: dict[str, Reduction] = {"none": "update", "add": "add"}


def tensor_scatter_elements(
    input_x: Any, indices: Any, updates: Any, axis: int = 0, reduction: str = "none"
) -> Any:
    """``ops.tensor_scatter_elements``: a copy of `input_x` with `updates` written along
    `axis` at `indices` (the inverse of :func:`gather_d`).

    ``reduction="none"`` writes, ``"add"`` adds. Index values are valid in ``[-s, s)``; a value
    outside raises :class:`IndexError` (see the module notes for MindSpore's behaviour).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.tensor_scatter_elements(np.array([[1, 2, 3, 4, 5]]), np.array([[2, -1]]),
    ...                             np.array([[8, 8]]), axis=1, reduction="add")
    array([[ 1,  2, 11,  4, 13]])
    """
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        msg = f'reduction must be "none" or "add"; got {reduction!r}'
        raise ValueError(msg)
    with renamed(_ELEMENTS, _ways("tensor_scatter_elements", "scatter_d")):
        ordered = reduction == "add" and mindspore_deterministic()
        return _api.scatter_d(input_x, axis, indices, updates, reduce=_REDUCTIONS[reduction],
                              deterministic=ordered)  # fmt: skip


class TensorScatterElements:
    """``ops.TensorScatterElements(axis=0, reduction="none")``: the primitive form;
    ``TensorScatterElements(axis, reduction)(input_x, indices, updates)`` is
    :func:`tensor_scatter_elements`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> op = ops.TensorScatterElements(0, "none")
    >>> print(op(np.array([[1., 2, 3], [4, 5, 6], [7, 8, 9]]), np.array([[1, 0, 2], [0, 2, 1]]),
    ...          np.zeros((2, 3))))
    [[0. 0. 3.]
     [0. 5. 0.]
     [7. 0. 0.]]
    """

    def __init__(self, axis: int = 0, reduction: str = "none") -> None:
        if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
            msg = f'reduction must be "none" or "add"; got {reduction!r}'
            raise ValueError(msg)
        self.axis = axis
        self.reduction = reduction

    def __call__(self, input_x: Any, indices: Any, updates: Any) -> Any:
        return tensor_scatter_elements(input_x, indices, updates, self.axis, self.reduction)


def scatter_nd(indices: Any, updates: Any, shape: Any) -> Any:
    """``ops.scatter_nd``: zeros of `shape` with `updates` added at the index vectors
    (duplicates summed, as MindSpore documents).

    Each component ``j`` of an index vector is valid in ``[0, shape[j])``; a negative
    component is a bad index, as in MindSpore.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> print(ops.scatter_nd(np.array([[0, 1], [1, 1]]), np.array([3.2, 1.1]), (3, 3)))
    [[0.  3.2 0. ]
     [0.  1.1 0. ]
     [0.  0.  0. ]]
    """
    with renamed(_SHAPE, _ways("scatter_nd", "scatter_nd")):
        zeros, updates = zeros_of(shape, updates, indices)
        return _api.scatter_nd(zeros, indices, updates, reduce="add",
                               deterministic=mindspore_deterministic())  # fmt: skip


class ScatterNd:
    """``ops.ScatterNd``: the primitive form; ``ScatterNd()(indices, updates, shape)`` is
    :func:`scatter_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.ScatterNd()(np.array([[1], [1], [3]]), np.array([1, 2, 4]), (5,))
    array([0, 3, 0, 4, 0])
    """

    def __call__(self, indices: Any, updates: Any, shape: Any) -> Any:
        return scatter_nd(indices, updates, shape)


def unsorted_segment_sum(input_x: Any, segment_ids: Any, num_segments: Any) -> Any:
    """``ops.unsorted_segment_sum``: the sum of the rows of `input_x` in each segment (0 if
    empty); `segment_ids` has the shape of a leading part of ``input_x.shape``, a negative
    id drops its row.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.unsorted_segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 1, 2]), 4)
    array([3., 3., 4., 0.])
    """
    return unsorted_segment(
        input_x, segment_ids, num_segments, "sum", "unsorted_segment_sum", {"data": "input_x"},
        deterministic=mindspore_deterministic(),
    )  # fmt: skip


def unsorted_segment_max(x: Any, segment_ids: Any, num_segments: Any) -> Any:
    """``ops.unsorted_segment_max``: the largest row of `x` in each segment; an empty one is
    the dtype's lowest finite value.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> x = np.array([[1, 2, 3], [4, 5, 6], [4, 2, 1]])
    >>> ops.unsorted_segment_max(x, np.array([0, 1, 1]), 2)
    array([[1, 2, 3],
           [4, 5, 6]])
    """
    return unsorted_segment(
        x, segment_ids, num_segments, "max", "unsorted_segment_max", {"data": "x"}
    )


def unsorted_segment_min(x: Any, segment_ids: Any, num_segments: Any) -> Any:
    """``ops.unsorted_segment_min``: the smallest row of `x` in each segment; an empty one is
    the dtype's highest finite value.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> x = np.array([[1, 2, 3], [4, 5, 6], [4, 2, 1]])
    >>> ops.unsorted_segment_min(x, np.array([0, 1, 1]), 2)
    array([[1, 2, 3],
           [4, 2, 1]])
    """
    return unsorted_segment(
        x, segment_ids, num_segments, "min", "unsorted_segment_min", {"data": "x"}
    )


def unsorted_segment_prod(x: Any, segment_ids: Any, num_segments: Any) -> Any:
    """``ops.unsorted_segment_prod``: the product of the rows of `x` in each segment (1 if
    empty).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> x = np.array([[1, 2, 3], [4, 5, 6], [4, 2, 1]])
    >>> ops.unsorted_segment_prod(x, np.array([0, 1, 0]), 2)
    array([[4, 4, 3],
           [4, 5, 6]])
    """
    return unsorted_segment(
        x, segment_ids, num_segments, "prod", "unsorted_segment_prod", {"data": "x"},
        deterministic=mindspore_deterministic(),
    )  # fmt: skip


class UnsortedSegmentSum:
    """``ops.UnsortedSegmentSum()``: the primitive form of :func:`unsorted_segment_sum`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.UnsortedSegmentSum()(np.array([1, 2, 3]), np.array([1, 1, -1]), 2)
    array([0, 3])
    """

    def __call__(self, x: Any, segment_ids: Any, num_segments: Any) -> Any:
        return unsorted_segment_sum(x, segment_ids, num_segments)


class UnsortedSegmentMax:
    """``ops.UnsortedSegmentMax()``: the primitive form of :func:`unsorted_segment_max`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.UnsortedSegmentMax()(np.array([1, 2, 3]), np.array([1, 1, 0]), 2)
    array([3, 2])
    """

    def __call__(self, x: Any, segment_ids: Any, num_segments: Any) -> Any:
        return unsorted_segment_max(x, segment_ids, num_segments)


class UnsortedSegmentMin:
    """``ops.UnsortedSegmentMin()``: the primitive form of :func:`unsorted_segment_min`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.UnsortedSegmentMin()(np.array([1, 2, 3]), np.array([1, 1, 0]), 2)
    array([3, 1])
    """

    def __call__(self, x: Any, segment_ids: Any, num_segments: Any) -> Any:
        return unsorted_segment_min(x, segment_ids, num_segments)


class UnsortedSegmentProd:
    """``ops.UnsortedSegmentProd()``: the primitive form of :func:`unsorted_segment_prod`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import mindspore as ops
    >>> ops.UnsortedSegmentProd()(np.array([1, 2, 3]), np.array([1, 1, 0]), 2)
    array([3, 2])
    """

    def __call__(self, x: Any, segment_ids: Any, num_segments: Any) -> Any:
        return unsorted_segment_prod(x, segment_ids, num_segments)
