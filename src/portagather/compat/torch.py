"""``torch.gather``, ``torch.take_along_dim``, ``torch.scatter``, ``torch.scatter_add``,
``torch.scatter_reduce``, ``torch.index_select``, ``torch.index_add``, ``torch.index_reduce``,
``torch.index_put`` and ``torch.segment_reduce`` with PyTorch's signatures, on any backend.

Port by changing the import::

    from portagather.compat import torch as pgt

What differs from PyTorch:

- The result is an array of the backend of the inputs (a ``torch.Tensor`` only for tensors).
- A bad index raises :class:`IndexError` (PyTorch: ``RuntimeError``).
- ``gather`` follows PyTorch in rejecting negative indices: the core checks every index
  value against PyTorch's range, ``[0, n)``, and words the first bad one as PyTorch does
  (``index 5 is out of bounds for dimension 1 with size 3``), eagerly, on Dask when the
  graph runs and under ``checkify`` alike.
- ``sparse_grad`` and ``out`` are not supported.
- The scatters return a new array (the out-of-place ``torch.scatter``, not ``Tensor.scatter_``)
  and, like ``gather``, take index values in ``[0, n)`` with PyTorch's message for the
  first value outside. `src` may have any dtype that casts safely to `input`'s (PyTorch: the
  same dtype). ``scatter`` with duplicate indices and no `reduce` keeps the last update in
  row-major order (PyTorch: unspecified). On bool, ``"sum"`` and ``"amax"`` are a logical
  OR and ``"prod"`` and ``"amin"`` a logical AND, as in PyTorch; ``"mean"`` needs numbers.
- Under ``jax.jit`` (without ``checkify``) the index check cannot read the values: the error
  says to wrap the function with ``jax.experimental.checkify.checkify``, or to call the core
  function (:func:`portagather.gather_d`, ...) with a ``bad_indices`` policy.
- ``index_select``, ``index_add`` and ``index_reduce`` take index values in ``[0, n)`` with
  ``torch.gather``'s message for the first outside, as ``gather``; a 0-d index selects one
  slice, its axis kept, as in PyTorch. They and ``index_put`` return a
  new array (the out-of-place forms, not ``Tensor.index_add_``) and take `source` /
  `values` of any dtype that casts safely to `input`'s. Index arrays of any integer dtype
  are accepted (PyTorch: int32 and int64). ``index_add``'s `alpha` must be held exactly by
  `input`'s dtype (PyTorch truncates a float `alpha` for integer input).
- ``index_put`` counts negative indices from the end, as PyTorch does, and raises
  :class:`IndexError` naming the index vector (as written) for one outside ``[-n, n)``;
  its index arrays must broadcast together (a :class:`ValueError`); it takes no boolean
  masks (pass ``mask.nonzero()``); with duplicates and no `accumulate` the last
  value in row-major order wins (PyTorch: unspecified).
- ``segment_reduce`` checks offsets (non-decreasing, in ``[0, data.shape[axis]]``) unless
  `unsafe`; PyTorch checks only that they do not fall. `lengths` are checked as PyTorch
  does (none negative, each row adding up to the data's length; a :class:`ValueError`),
  on Dask when the result is computed. It refuses `lengths` and `offsets`
  together (PyTorch uses `lengths`) and reduces integer data too (PyTorch has no CPU
  kernel for it; an empty integer mean is 0, not NaN).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import array_api_compat as aac
import numpy as np

from .. import _api
from .._arrays import dtype_kind, dtype_name, per_segment, reduction_identity
from .._errors import BadIndex
from .._operands import check_python_values, is_array, namespace_of, python_values
from .._options import SEGMENT_REDUCTIONS, int_argument, one_of
from .._plan import GatherPlan, SegmentsGiven, plan_gather, plan_gather_d
from .._routes import (
    Operation,
    Route,
    counting_route,
    flat_call,
    gather_call,
    parts_call,
    scatter_call,
)
from .._segment_csr import _csr as pg_csr
from .._types import Reduction
from ._common import (
    _RENAMED_TYPES,
    as_int,
    floating_array,
    plan_gather_nd_from_end,
    renamed,
    torch_deterministic,
    ways_out,
)

__all__ = [
    "gather",
    "index_add",
    "index_put",
    "index_reduce",
    "index_select",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "segment_reduce",
    "take_along_dim",
]

_NAMES = {"x": "input"}


def gather(input: Any, dim: int, index: Any) -> Any:
    """``torch.gather``: ``out[i] = input[i_0, ..., index[i], ..., i_{n-1}]`` (at `dim`).

    ``index`` has the rank of `input` and ``index.shape[d] <= input.shape[d]`` for
    ``d != dim`` (a smaller index reads the leading block); values are valid in
    ``[0, input.shape[dim])``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> pgt.gather(np.array([[1, 2], [3, 4]]), 1, np.array([[0, 0], [1, 0]]))
    array([[1, 1],
           [4, 3]])
    >>> pgt.gather(np.array([[1, 2], [3, 4]]), 1, np.array([[-1]]))
    Traceback (most recent call last):
    ...
    IndexError: index -1 is out of bounds for dimension 1 with size 2
    """
    return _gather(_GATHER, input, dim, index, "gather")


def _gather(op: Operation, input: Any, dim: Any, index: Any, name: str) -> Any:
    """``torch.gather`` (front end `name`, whose index argument `op` names): the core's
    checked call at PyTorch's range, then the core's pipeline."""
    arguments = (int_argument(dim, "dim"),)
    with renamed(_NAMES, ways_out(f"portagather.compat.torch.{name}", "gather_d")):
        route, input, index = gather_call(op, input, index, arguments, "error", 0)
        return _api.gather_route(route, input, index, op, arguments)


def take_along_dim(input: Any, indices: Any, dim: int | None = None) -> Any:
    """``torch.take_along_dim``: ``take_along_axis`` with broadcasting; ``dim=None`` flattens.

    Values are valid in ``[-n, n)``, negatives counting from the end, as in PyTorch; with
    ``dim=None`` (the flattened input), as in PyTorch, in ``[0, n)`` only.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> t = np.array([[10, 30, 20], [60, 40, 50]])
    >>> pgt.take_along_dim(t, np.argsort(t, axis=1), dim=1)
    array([[10, 20, 30],
           [40, 50, 60]])
    >>> pgt.take_along_dim(t, np.array([[0], [-1]]), dim=1)
    array([[10],
           [50]])
    >>> pgt.take_along_dim(t, np.array([5, 0]))
    array([50, 10])
    """
    if dim is None:  # PyTorch gathers from the flattened input, rejecting negatives
        # The core's gather from the flattened data (the flat position is the index), which
        # keeps its route under the arrays as given and flattens them itself: its checked
        # call, then its route's steps. (A try, not a with: the renamed context's enter and
        # exit cost the flat call more.)
        try:
            route, flat_input, flat = flat_call(_GATHER_FLAT, input, indices, "error", 0)
            return _api.gather_route(route, flat_input, flat, _GATHER_FLAT, _AXIS_0)
        except _RENAMED_TYPES as err:
            _FLAT_RENAMED.__exit__(type(err), err, err.__traceback__)  # raises it renamed
            raise
    front = "portagather.compat.torch.take_along_dim"
    with renamed(_NAMES, ways_out(front, "take_along_axis")):
        return _api.take_along_axis(input, indices, axis=dim)


#: ``take_along_dim(dim=None)``'s renames and ways out (it keeps no state of a call: one for
#: all).
_FLAT_RENAMED = renamed(_NAMES, ways_out("portagather.compat.torch.take_along_dim", "gather_d"))
_AXIS_0 = (0,)  # (its gather's axis)


def _renamed(name: str, src_name: str = "src") -> renamed:
    """The renames of scatter front end `name`: PyTorch's argument names, and the ways out
    it has where index values cannot be checked."""
    return renamed(
        _SCATTER_NAMES[src_name], ways_out(f"portagather.compat.torch.{name}", "scatter_d")
    )


#: PyTorch's names of a scatter's arguments, by the name its `src` has.
_SCATTER_NAMES = {name: {**_NAMES, "src": name} for name in ("src", "value")}


def _checked_scatter(
    op: Operation, input: Any, dim: Any, index: Any, src: Any, reduce: Reduction,
    mean: bool = False, ordered: bool = False,
) -> tuple[Route, Any, Any, Any]:  # fmt: skip
    """``(route, input, index, src)``: the core's checked call of the scatter `op` along
    `dim` (`src` of input's dtype, fitted to the gather's result shape as `op` says; with
    `mean`, a numeric input). Its plan holds PyTorch's range for the index values, which
    the pipeline checks."""
    route, input, index, src = scatter_call(
        op, input, index, src, (int_argument(dim, "dim"),), reduce, "error", False, False,
        ordered,
    )  # fmt: skip
    if mean and route.reduction != "add":  # bool's OR (the core refused the other non-numbers)
        msg = f'reduce="mean" needs input of a numeric dtype; got {dtype_name(input.dtype)}'
        raise TypeError(msg)
    return route, input, index, src


_SCATTER_REDUCE: dict[str | None, Reduction] = {
    None: "update",
    "add": "add",
    "multiply": "multiply",
}


def scatter(
    input: Any,
    dim: int,
    index: Any,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Any:
    """``torch.scatter``: a copy of `input` with `src` (or the scalar `value`) written along
    `dim` at `index`: ``out[i_0, ..., index[i], ..., i_{n-1}] = src[i]``.

    `index` has the rank of `input`, ``index.shape[d] <= input.shape[d]`` for ``d != dim``
    and ``index.shape[d] <= src.shape[d]`` for every ``d`` (the leading block of `src` is
    used); values are valid in ``[0, input.shape[dim])``. As in PyTorch, `src` may also be a
    Python number (the same as ``value=``). ``reduce="add"`` or ``"multiply"`` combines
    instead of writing.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> src = np.arange(1, 11).reshape(2, 5)
    >>> pgt.scatter(np.zeros((3, 5), dtype=src.dtype), 0, np.array([[0, 1, 2, 0]]), src)
    array([[1, 0, 0, 4, 0],
           [0, 2, 0, 0, 0],
           [0, 0, 3, 0, 0]])
    >>> pgt.scatter(np.full((2, 4), 2.0), 1, np.array([[2], [3]]), 1.23, reduce="multiply")
    array([[2.  , 2.  , 2.46, 2.  ],
           [2.  , 2.  , 2.  , 2.46]])
    """
    if reduce not in _SCATTER_REDUCE:
        msg = f"reduce argument must be either add or multiply; got {reduce!r}"
        raise ValueError(msg)
    if src is not None and value is not None:
        msg = "scatter() takes src or value, not both"
        raise TypeError(msg)
    if src is None and value is None:
        msg = "scatter() missing src or value"
        raise TypeError(msg)
    core = _SCATTER_REDUCE[reduce]
    scalar = value is not None or _is_number(src)  # broadcast to index.shape
    given = src if value is None else value
    with _renamed("scatter", "value" if value is not None else "src"):
        op = _SCATTER_BROADCAST if scalar else _SCATTER
        ordered = core == "add" and torch_deterministic()
        route, input, index, src = _checked_scatter(op, input, dim, index, given, core,
                                                    ordered=ordered)  # fmt: skip
        return _api.scatter_route(route, input, index, src, ordered)


def scatter_add(input: Any, dim: int, index: Any, src: Any) -> Any:
    """``torch.scatter_add``: :func:`scatter` with the updates added (duplicates summed).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> pgt.scatter_add(np.zeros((3, 5)), 0, np.array([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]]),
    ...                 np.ones((2, 5)))
    array([[2., 0., 0., 1., 1.],
           [0., 2., 0., 0., 0.],
           [0., 0., 2., 1., 1.]])
    """
    with _renamed("scatter_add"):
        ordered = torch_deterministic()
        route, input, index, src = _checked_scatter(_SCATTER, input, dim, index, src, "add",
                                                    ordered=ordered)  # fmt: skip
        return _api.scatter_route(route, input, index, src, ordered)


_REDUCE: dict[str, Reduction] = {
    "sum": "add",
    "prod": "multiply",
    "amax": "max",
    "amin": "min",
    "mean": "add",
}


def scatter_reduce(
    input: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """``torch.scatter_reduce``: every update of an element combined by `reduce`
    (``"sum"``, ``"prod"``, ``"amax"``, ``"amin"`` or ``"mean"``), with the element's own
    value where `include_self`.

    ``include_self=False`` first writes the reduction's identity (0, 1, the lowest or
    highest value of the dtype; for ``"mean"`` a count) at every element that has an update;
    elements without one keep their value. ``"mean"`` is the sum over the count of values,
    floor-divided for integer dtypes, as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> src = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    >>> index = np.array([0, 1, 0, 1, 2, 1])
    >>> pgt.scatter_reduce(np.array([1.0, 2.0, 3.0, 4.0]), 0, index, src, reduce="sum")
    array([ 5., 14.,  8.,  4.])
    >>> pgt.scatter_reduce(np.array([5.0, 4.0, 3.0, 2.0]), 0, index, src, reduce="amax",
    ...                    include_self=False)
    array([3., 6., 5., 2.])
    """
    one_of(reduce, _REDUCE, "reduce")
    mean = reduce == "mean"
    # PyTorch's deterministic mode: the sum's and the mean's adds in one order (with or
    # without the element's own value).
    ordered = reduce in ("sum", "mean") and torch_deterministic()
    with _renamed("scatter_reduce"):
        route, input, index, src = _checked_scatter(
            _SCATTER, input, dim, index, src, _REDUCE[reduce], mean, ordered
        )
        return _reduced_into(route, input, index, src, reduce, include_self, ordered)


def _reduced_into(
    route: Route, input: Any, index: Any, src: Any, reduce: str, include_self: bool,
    ordered: bool = False,
) -> Any:  # fmt: skip
    """PyTorch's `reduce` of the checked updates `src` into `input` at `index`, by the
    route's scatter (``scatter_reduce``, ``index_reduce``).

    With `include_self` each element's own value takes part. Without it, an element with an
    update takes the updates only (they are combined into a new array of the reduction's
    identity), and one without keeps its value. ``"mean"`` is the sum over the count of
    values, floor-divided for integer dtypes, as in PyTorch. The count of updates per
    element comes from the same index, made valid once (``_api.scatter_with_count``).

    With `ordered`, a floating sum is the tree's (``_deterministic.tree_scatter``): the
    base (`input`, or the identity without `include_self`) plus the tree of the updates,
    where any landed; a mean divides it once by the count."""
    if include_self and reduce != "mean":
        return _api.scatter_route(route, input, index, src, ordered)
    xp, engine = route.xp, route.engine
    dtype, shape = input.dtype, tuple(input.shape)
    base = input
    if not include_self:
        base = engine.full(shape, reduction_identity(xp, reduce, dtype), dtype, input)
    # A mean's count is PyTorch's: in input's dtype (saturating or wrapping as the sum does,
    # so that their quotient is PyTorch's), from 1 where the element's own value takes part.
    # Otherwise the count only says which elements an update reaches: exact, in the widest
    # integer.
    mean = reduce == "mean"
    count_dtype = dtype if mean else engine.wide_index_dtype(input)
    counting = counting_route(route, tuple(index.shape), index.dtype, count_dtype)
    start = engine.full(shape, int(include_self), count_dtype, input)
    ones = xp.ones_like(src, dtype=count_dtype)
    if ordered:  # the tree's sum, then the count by its own (integer) scatter
        total = _api.scatter_route(route, base, index, src, True)
        count = _api.scatter_route(counting, start, index, ones)
    else:
        total, count = _api.scatter_with_count(route, counting, base, start, index, src, ones)
    touched = count != 0
    if not mean:
        return xp.where(touched, total, input)
    divisor = xp.where(touched, count, xp.ones_like(count))
    if dtype_kind(xp, dtype) in ("signed integer", "unsigned integer"):
        quotient = xp.floor_divide(total, divisor)
    else:
        quotient = total / divisor
    return xp.where(touched, quotient, input)


def _is_number(value: Any) -> bool:
    """A Python or NumPy number: PyTorch's scalar `src`, the same as ``value=``."""
    return isinstance(value, bool | int | float | complex | np.bool_ | np.number)


# Indexing along one dimension with a 1-d index, and the segment reduction.


@dataclass(frozen=True)
class _OutOfBounds(BadIndex):
    """A bad index of PyTorch's front ends (``gather``, ``take_along_dim``, the scatters,
    ``index_select``, ``index_add``, ``index_reduce``) in PyTorch's words: ``index 5 is out
    of bounds for dimension 0 with size 3``, the first bad one in the order of the index,
    eagerly and lazily alike; on an axis of length 0, where every index is bad, without a
    value (and without the core's ``bad_indices``, which these front ends do not take)."""

    def text(self, position: tuple[Any, ...], value: object) -> str:  # noqa: ARG002
        n = self.data_shape[self.axis]
        return f"index {value} is out of bounds for dimension {self.axis} with size {n}"

    def empty_axis_text(self, scatter: bool = False) -> str:  # noqa: ARG002
        return (
            f"index is out of bounds for dimension {self.axis} with size 0: no index is valid "
            f"into {self.data_text()}"
        )


def _plan_slices(shape: tuple[int, ...], index_shape: tuple[int, ...], dim: int) -> GatherPlan:
    """The plan of ``index_select``, ``index_add`` and ``index_reduce``: the slices along `dim`
    at a vector index (:func:`~portagather._plan.plan_gather`'s along an axis), whose valid
    range is PyTorch's, ``[0, n)``, with PyTorch's messages for `dim`, for an index that is
    no vector and for a bad index (:class:`_OutOfBounds`). So the core checks the values
    as PyTorch does: a valid index costs no range read where the backend's own bounds
    check serves (the route's checked kernel)."""
    ndim = len(shape)
    if not -ndim <= dim < ndim:
        msg = f"dim must be an int in [-input.ndim, input.ndim) = [{-ndim}, {ndim}); got {dim!r}"
        raise ValueError(msg)
    if len(index_shape) > 1:
        msg = f"index must be a vector (1-d, or 0-d); got shape {index_shape}"
        raise ValueError(msg)
    plan = plan_gather(shape, index_shape, dim, 0)
    return replace(plan, report=_OutOfBounds("index", False, "input", shape, plan.axis))


def _plan_elements(shape: tuple[int, ...], index_shape: tuple[int, ...], dim: int) -> GatherPlan:
    """The plan of ``torch.gather`` and the scatters: ``gather_d``'s, whose valid range is
    PyTorch's, ``[0, n)``, a bad value worded as PyTorch does (:class:`_OutOfBounds`)."""
    plan = plan_gather_d(shape, index_shape, dim)
    report = _OutOfBounds("index", False, "input", shape, plan.axis)
    return replace(plan, allow_negative=False, report=report)


def _plan_index_put(shape: tuple[int, ...], index_shape: tuple[int, ...]) -> GatherPlan:
    """The plan of ``index_put``: ``scatter_nd``'s, with negative components counting from
    the end, as in PyTorch's indexing, and a bad index vector described as of `input`."""
    plan = plan_gather_nd_from_end(shape, index_shape, 0)
    return replace(plan, report=replace(plan.report, data_name="input"))


_INDEX_SELECT = Operation(("input", "index"), _plan_slices)
_INDEX_ADD = Operation(("input", "index", "source"), _plan_slices, "slices, broadcast")
_INDEX_REDUCE = Operation(("input", "index", "source"), _plan_slices, "slices")
_INDEX_PUT = Operation(("input", "indices", "values"), _plan_index_put, "broadcast")
#: Python and NumPy numbers: a 0-d index given as a value.
_NUMBERS = (bool, int, float, complex, np.bool_, np.number)

#: ``torch.gather`` and the scatters: ``gather_d``'s and ``scatter_d``'s names and shapes, at
#: PyTorch's range (:func:`_plan_elements`); ``Tensor.scatter``'s Python scalar ``value``
#: broadcasts.
_GATHER = Operation(("x", "index"), _plan_elements)
_GATHER_FLAT = Operation(("x", "indices"), _plan_elements)  # take_along_dim's, dim=None
_SCATTER = Operation(("x", "index", "src"), _plan_elements, "block")
_SCATTER_BROADCAST = Operation(("x", "index", "src"), _plan_elements, "broadcast")


def _vector(index: Any) -> Any:
    """A 0-d `index` (an array, or a Python or NumPy number) as a vector of one: it selects
    one slice, whose axis stays (PyTorch's rule); any other index as given. The core checks
    either (a float or a bool one's dtype, as a 0-d one's)."""
    if isinstance(index, _NUMBERS):
        return [index]
    if is_array(index) and index.ndim == 0:
        return aac.array_namespace(index).reshape(index, (1,))
    return index


def index_select(input: Any, dim: int, index: Any) -> Any:
    """``torch.index_select``: the slices of `input` along `dim` at the 1-d `index`.

    Values are valid in ``[0, input.shape[dim])``; a 0-d index selects one slice (the axis
    stays, of length 1), as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> pgt.index_select(np.array([[1, 2, 3], [4, 5, 6]]), 1, np.array([2, 0]))
    array([[3, 1],
           [6, 4]])
    """
    arguments = (int_argument(dim, "dim"),)
    with renamed({}, ways_out("portagather.compat.torch.index_select", "gather")):
        route, input, index = gather_call(
            _INDEX_SELECT, input, _vector(index), arguments, "error", 0
        )
        return _api.gather_route(route, input, index, _INDEX_SELECT, arguments)


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    """``torch.index_add`` (out of place, as ``Tensor.index_add``): `input` with
    ``alpha * source`` added along `dim` at the 1-d `index` (duplicates summed).

    `source` has `input`'s shape with ``len(index)`` along `dim`; `alpha` must be a value
    `input`'s dtype holds exactly (PyTorch truncates a float alpha for integer input).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> pgt.index_add(np.zeros((3, 2)), 0, np.array([0, 2, 0]), np.ones((3, 2)), alpha=2)
    array([[4., 4.],
           [0., 0.],
           [2., 2.]])
    """
    ordered = torch_deterministic()
    with renamed({}, ways_out("portagather.compat.torch.index_add", "scatter_d")):
        route, input, index, source = scatter_call(
            _INDEX_ADD, input, _vector(index), source, (int_argument(dim, "dim"),), "add",
            "error", False, False, ordered,
        )  # fmt: skip
        if not (isinstance(alpha, int | float | complex) and alpha == 1):
            check_python_values(alpha, input.dtype, "alpha", "input")
            xp = route.xp
            source = source * xp.asarray(alpha, dtype=input.dtype, device=aac.device(input))
        return _api.scatter_route(route, input, index, source, ordered)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(
    input: Any, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """``torch.index_reduce`` (out of place): the slices of `source` combined into `input`
    along `dim` at the 1-d `index` by `reduce` (``"prod"``, ``"mean"``, ``"amax"`` or
    ``"amin"``), with the slice's own value where `include_self`: :func:`scatter_reduce`
    with the index spread over `source`'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> x = np.full((3, 2), 5.0)
    >>> src = np.array([[1.0, 9.0], [2.0, 8.0], [3.0, 7.0]])
    >>> pgt.index_reduce(x, 0, np.array([0, 0, 2]), src, "amax", include_self=False)
    array([[2., 9.],
           [5., 5.],
           [3., 7.]])
    """
    one_of(reduce, _INDEX_REDUCTIONS, "reduce")
    mean = reduce == "mean"
    ordered = mean and torch_deterministic()  # (the mean's adds in one order)
    with renamed({}, ways_out("portagather.compat.torch.index_reduce", "scatter_d")):
        route, input, index, source = _checked_scatter(
            _INDEX_REDUCE, input, dim, _vector(index), source, _REDUCE[reduce], mean, ordered
        )
        return _reduced_into(route, input, index, source, reduce, include_self, ordered)


def index_put(input: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    """``torch.index_put`` (out of place): ``input[indices] = values`` (``+=`` with
    `accumulate`), `indices` a tuple of integer index arrays, broadcast together, one per
    leading axis of `input`.

    Values are valid in ``[-n, n)``, negatives counting from the end, as in PyTorch's
    indexing; `values` broadcasts to the indexed shape. With duplicates and no
    `accumulate`, the last in row-major order wins (PyTorch: unspecified). Boolean masks are
    not accepted (a ``TypeError``): pass ``nonzero()`` of the mask.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> pgt.index_put(np.zeros((3, 3)), (np.array([0, 2, 0]), np.array([1, 1, 1])),
    ...               np.array([1.0, 2.0, 3.0]), accumulate=True)
    array([[0., 4., 0.],
           [0., 0., 0.],
           [0., 2., 0.]])
    >>> pgt.index_put(np.zeros((2, 2), dtype=int), (np.array([-1]),), np.array(7))
    array([[0, 0],
           [7, 7]])
    """
    reduce = "add" if accumulate else "update"
    ordered = accumulate and torch_deterministic()
    # (A try, not a with, and one renamed context for every call, as take_along_dim's: the
    # context's making, its enter and its exit are a share of this small call.)
    try:
        route, input, vectors, values = parts_call(_INDEX_PUT, input, indices, values, reduce,
                                                   ordered)  # fmt: skip
        return _api.scatter_route(route, input, vectors, values, ordered)
    except _RENAMED_TYPES as err:
        _PUT_RENAMED.__exit__(type(err), err, err.__traceback__)  # raises it renamed
        raise


#: ``index_put``'s renames (PyTorch's name of the updates) and ways out: one for all calls
#: (it keeps no state of a call).
_PUT_RENAMED = renamed(
    {"updates": "values"}, ways_out("portagather.compat.torch.index_put", "scatter_nd")
)


def segment_reduce(
    data: Any,
    reduce: str,
    *,
    lengths: Any = None,
    indices: Any = None,
    offsets: Any = None,
    axis: int = 0,
    unsafe: bool = False,
    initial: Any = None,
) -> Any:
    """``torch.segment_reduce``: `data` reduced along `axis` in the segments `lengths` or
    `offsets` give (``reduce``: ``"sum"``, ``"mean"``, ``"max"``, ``"min"`` or ``"prod"``).

    `lengths` and `offsets` have the shape ``data.shape[:axis] + (S,)`` (``(S + 1,)`` for
    offsets): the segments of each leading position, as in PyTorch. An empty segment is
    0 (sum), 1 (prod), ``-inf`` (max), ``inf`` (min), NaN (mean; 0 for integers); with
    `initial`, every segment starts from it (an empty mean is `initial`, a full one
    ``(sum + initial) / count``, as PyTorch computes it).

    Unless `unsafe`, the lengths must be non-negative and add up to ``data.shape[axis]``
    (checked eagerly where the values can be read; on Dask and under JAX tracing through the
    offsets they imply, which must be non-decreasing and inside the data), and offsets must
    be non-decreasing and in ``[0, data.shape[axis]]`` (PyTorch checks only that they do
    not fall). ``indices=`` is refused, as in PyTorch 2.13. Integer data is reduced too
    (PyTorch has no CPU kernel for it).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> data = np.array([1.0, 2.0, 3.0, 4.0])
    >>> pgt.segment_reduce(data, "max", lengths=np.array([2, 0, 2]))
    array([  2., -inf,   4.])
    >>> pgt.segment_reduce(data, "mean", offsets=np.array([0, 2, 2, 4]), initial=10.0)
    array([ 6.5, 10. ,  8.5])
    """
    one_of(reduce, SEGMENT_REDUCTIONS, "reduce")
    if indices is not None:
        msg = (
            "indices= is not supported, as in PyTorch 2.13 ('indices based reduction is not "
            "supported yet'); pass lengths= or offsets="
        )
        raise ValueError(msg)
    if (lengths is None) == (offsets is None):
        msg = "segment_reduce takes lengths= or offsets=, one of the two"
        raise ValueError(msg)
    given = lengths if offsets is None else offsets
    form = _form(offsets is None, as_int(axis), reduce)
    # Offsets made from lengths checked by the core are valid; unsafe ones are a promise.
    return _reduced(data, given, form, reduce, "unchecked" if unsafe else "error", initial)


def _form(lengths: bool, axis: Any, reduce: str) -> SegmentsGiven:
    """The core's form of a ``segment_reduce`` call's segments (``_plan.SegmentsGiven``), one
    per form: a call's key holds it."""
    key = (lengths, type(axis), axis, reduce)
    try:
        form = _FORMS.get(key)
    except TypeError:  # an axis that cannot be hashed (the core names it)
        return SegmentsGiven(lengths, axis, reduce)
    if form is None:
        form = _FORMS[key] = SegmentsGiven(lengths, axis, reduce)
    return form


#: The core's form of each ``segment_reduce`` call form. Why: the form is part of the call's
#: key, and one object per form keys by identity at one lookup, where a new record per call
#: would hash its fields each time. Bound: two forms (offsets, lengths) x the axes and
#: reductions a program uses.
_FORMS: dict[tuple[Any, ...], SegmentsGiven] = {}


def _reduced(
    data: Any, given: Any, form: SegmentsGiven, reduce: str, policy: str, initial: Any
) -> Any:  # fmt: skip
    """:func:`segment_reduce` of `data` split by the `given` lengths or offsets (`form`),
    under `policy`: the core's reduction, but a mean with `initial` or of floating data (NaN
    where empty) from the sum and the count."""
    if reduce == "mean" and (initial is not None or _floating(data)):
        total = pg_csr(data, given, "sum", policy, 0, None, torch_deterministic(), form)
        xp = namespace_of(total)
        if not is_array(given):  # (checked by the core: integers it holds)
            given = xp.asarray(np.asarray(given), device=aac.device(total))
        count = given if form.lengths else given[..., 1:] - given[..., :-1]
        count = per_segment(xp, count, total)
        filled = count > 0
        dtype = total.dtype  # the data's
        floating = dtype_kind(xp, dtype) in ("real floating", "complex floating")
        if initial is not None:
            total = total + initial
        divisor = xp.maximum(count, xp.ones_like(count))
        if floating:
            mean = total / xp.astype(divisor, dtype)
        else:
            mean = xp.astype(xp.floor_divide(total, xp.astype(divisor, total.dtype)), dtype)
        empty = xp.nan if initial is None else initial
        return xp.where(filled, mean, xp.full_like(mean, empty))
    deterministic = reduce in ("sum", "mean") and torch_deterministic()
    result = pg_csr(data, given, reduce, policy, 0, None, deterministic, form)
    if initial is None or reduce == "mean":
        return result
    xp = namespace_of(result)
    start = xp.full_like(result, initial)
    if reduce == "sum":
        return result + start
    if reduce == "prod":
        return result * start
    return xp.maximum(result, start) if reduce == "max" else xp.minimum(result, start)


def _floating(data: Any) -> bool:
    """Whether `data` is floating or complex (an array's dtype; Python values as NumPy reads
    them, whose kind the core's array keeps)."""
    if not is_array(data):
        try:
            return python_values(data, "data", text=True).dtype.kind in "fc"
        except (TypeError, ValueError):  # (the core's checks name it)
            return False
    return floating_array(data)
