"""``torch.gather``, ``torch.take_along_dim``, ``torch.scatter``, ``torch.scatter_add``,
``torch.scatter_reduce``, ``torch.index_select``, ``torch.index_add``, ``torch.index_reduce``,
``torch.index_put`` and ``torch.segment_reduce`` with PyTorch's signatures, on any backend.

Port by changing the import::

    from portagather.compat import torch as pgt

What differs from PyTorch:

- The result is an array of the backend of the inputs (a ``torch.Tensor`` only for tensors).
- A bad index raises :class:`IndexError` (PyTorch: ``RuntimeError``).
- ``gather`` follows PyTorch in rejecting negative indices. Where the values can be read now
  (NumPy, PyTorch, concrete JAX arrays) the message is PyTorch's; on Dask and under JAX
  tracing a negative value ``v`` is passed to the core as ``v - n``, which is out of range
  there too, so the lazy or ``checkify`` error shows that shifted value.
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
  row-major order (PyTorch: unspecified). Reductions need a numeric `input` (PyTorch also
  sums bools).
- ``index_select``, ``index_add`` and ``index_reduce`` take index values in ``[0, n)`` with
  PyTorch's message for the first outside, as ``gather``; they and ``index_put`` return a
  new array (the out-of-place forms, not ``Tensor.index_add_``) and take `source` /
  `values` of any dtype that casts safely to `input`'s. Index arrays of any integer dtype
  are accepted (PyTorch: int32 and int64). ``index_add``'s `alpha` must be held exactly by
  `input`'s dtype (PyTorch truncates a float `alpha` for integer input).
- ``index_put`` counts negative indices from the end, as PyTorch does, and raises
  :class:`IndexError` naming the index vector for one outside ``[-n, n)``; it takes no
  boolean masks (pass ``mask.nonzero()``); with duplicates and no `accumulate` the last
  value in row-major order wins (PyTorch: unspecified).
- ``segment_reduce`` checks offsets (non-decreasing, in ``[0, data.shape[axis]]``) unless
  `unsafe`; PyTorch checks only that they do not fall. `lengths` are checked as PyTorch
  does (none negative, each row adding up to the data's length; a :class:`ValueError`),
  on Dask when the result is computed. It refuses `lengths` and `offsets`
  together (PyTorch uses `lengths`) and reduces integer data too (PyTorch has no CPU
  kernel for it; an empty integer mean is 0, not NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import array_api_compat as aac
import numpy as np

from .. import _api
from .._arguments import (
    SEGMENT_REDUCTIONS,
    Operation,
    arrays,
    as_arrays,
    check_index_dtype,
    check_python_values,
    check_reduce_dtype,
    check_segment_dtype,
    gather_call,
    int_argument,
    one_of,
    scatter_call,
    updates_array,
)
from .._arrays import dtype_kind, dtype_name, per_segment, reduction_identity
from .._errors import BadIndex
from .._plan import plan_gather, plan_gather_d, plan_take_along_axis
from .._segment_csr import segment_csr as pg_segment_csr
from .._types import Reduction
from ..engines import engine_for
from ._common import as_int, count_from_end, renamed, ways_out

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
    return _gather(input, dim, index, "gather", {})


def _gather(input: Any, dim: Any, index: Any, name: str, renames: dict[str, str]) -> Any:
    """``torch.gather`` (front end `name`): the core's checks, PyTorch's range, the core."""
    names = {**_NAMES, **renames}
    ways = ways_out(f"portagather.compat.torch.{name}", "gather_d")
    with renamed(names, ways):
        route, input, index = gather_call(
            _api.GATHER_D, input, index, (int_argument(dim, "dim"),), "error", 0
        )
    xp = route.xp
    index = _in_range(xp, input, dim, index)  # PyTorch's message, as PyTorch words it
    with renamed(names, ways):
        return _api.gather_d(input, dim, index)


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
        with renamed(_NAMES):
            xp, input, indices, as_values = arrays(input, indices, "x", "indices")
        flat = np.reshape(indices, (-1,)).tolist() if as_values else xp.reshape(indices, (-1,))
        return _gather(xp.reshape(input, (-1,)), 0, flat, "take_along_dim", {"index": "indices"})
    front = "portagather.compat.torch.take_along_dim"
    with renamed(_NAMES, ways_out(front, "take_along_axis")):
        return _api.take_along_axis(input, indices, axis=dim)


def _in_range(xp: Any, input: Any, dim: Any, index: Any) -> Any:
    """`index`, with PyTorch's ``[0, n)`` rule for its values along `dim` (the arguments
    checked by the core first): checked now where they can be read (PyTorch's message),
    otherwise each negative value ``v`` is moved to ``v - n``, below ``-n``, for the core to
    report later."""
    shape = tuple(input.shape)
    dim = as_int(dim)
    if isinstance(dim, int) and -len(shape) <= dim < len(shape) and _signed(xp, index):
        n = shape[dim]
        engine = engine_for(xp)
        if engine.index_access(index) == "now":
            # PyTorch's valid range is [0, n), and its message names the value it met.
            if math.prod(index.shape):
                low, high = int(xp.min(index)), int(xp.max(index))
                if low < 0 or high >= n:
                    value = low if low < 0 else high
                    msg = f"index {value} is out of bounds for dimension {dim} with size {n}"
                    raise IndexError(msg)
        else:  # checked later: a negative value is moved below -n, in a width that holds it
            index = xp.astype(index, engine.wide_index_dtype(index))
            index = xp.where(index < 0, index - n, index)
    return index


def _renamed(name: str, src_name: str = "src") -> Any:
    """The renames of scatter front end `name`: PyTorch's argument names, and the ways out
    it has where index values cannot be checked."""
    front = f"portagather.compat.torch.{name}"
    return renamed({**_NAMES, "src": src_name}, ways_out(front, "scatter_d"))


def _checked_scatter(
    input: Any, dim: Any, index: Any, src: Any, reduce: Reduction, fit: str,
    mean: bool = False,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """``(xp, input, index, src)``: the core's checks of a ``scatter_d`` (`src` of
    index.shape and input's dtype, a Python scalar broadcast where `fit` says so; with
    `mean`, a numeric input), then PyTorch's range of the index values."""
    op = _api.SCATTER_D if fit == "block" else _SCATTER_D_BROADCAST
    route, input, index, src = scatter_call(
        op, input, index, src, (int_argument(dim, "dim"),), reduce, "error", False, False
    )
    xp = route.xp
    if mean and dtype_kind(xp, input.dtype) == "bool":
        msg = f'reduce="mean" needs input of a numeric dtype; got {dtype_name(input.dtype)}'
        raise TypeError(msg)
    return xp, input, _in_range(xp, input, dim, index), src


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
        _, input, index, src = _checked_scatter(
            input, dim, index, given, core, "broadcast" if scalar else "block"
        )
        return _api.scatter_d(input, dim, index, src, reduce=core)


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
        _, input, index, src = _checked_scatter(input, dim, index, src, "add", "block")
        return _api.scatter_d(input, dim, index, src, reduce="add")


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
    core = _REDUCE[reduce]
    with _renamed("scatter_reduce"):
        xp, input, index, src = _checked_scatter(
            input, dim, index, src, core, "block", mean=reduce == "mean"
        )
        base = input
        if not include_self:
            base = _api.scatter_d(input, dim, index, _identity(xp, input, index, reduce))
        total = _api.scatter_d(base, dim, index, src, reduce=core)
        if reduce != "mean":
            return total
        device = aac.device(input)
        start = xp.ones if include_self else xp.zeros
        ones = xp.ones(tuple(index.shape), dtype=input.dtype, device=device)
        count = _api.scatter_d(
            start(tuple(input.shape), dtype=input.dtype, device=device),
            dim, index, ones, reduce="add",
        )  # fmt: skip
    touched = count != 0
    divisor = xp.where(touched, count, xp.ones_like(count))
    if dtype_kind(xp, input.dtype) in ("signed integer", "unsigned integer"):
        mean = xp.floor_divide(total, divisor)
    else:
        mean = total / divisor
    return xp.where(touched, mean, input)


def _identity(xp: Any, input: Any, index: Any, reduce: str) -> Any:
    """The identity of `reduce` in input's dtype, shaped like `index`: what
    ``include_self=False`` writes first at every element with an update."""
    dtype = input.dtype
    shape = tuple(index.shape)
    device = aac.device(input)
    value = reduction_identity(xp, reduce, dtype)
    return xp.full(shape, value, dtype=dtype, device=device)


def _is_number(value: Any) -> bool:
    """A Python or NumPy number: PyTorch's scalar `src`, the same as ``value=``."""
    return isinstance(value, bool | int | float | complex | np.bool_ | np.number)


def _signed(xp: Any, index: Any) -> bool:
    try:
        return bool(xp.isdtype(index.dtype, "signed integer"))
    except (TypeError, ValueError):
        return False


# Indexing along one dimension with a 1-d index, and the segment reduction.


def _line_index(input: Any, dim: Any, index: Any) -> tuple[Any, Any, Any, int]:
    """``(xp, input, index, dim)``: the index as a 1-d array and `dim` as a non-negative
    int, the index values not yet checked (:func:`_in_range`, after the front end's other
    checks: the order of docs/contract.md, "Errors")."""
    with renamed(_NAMES):
        xp, input, index = as_arrays(input, index, "input", "index")
    check_index_dtype(xp, index, "index")
    dim = as_int(dim)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -input.ndim <= dim < input.ndim:
        msg = f"dim must be an int in [-input.ndim, input.ndim) = [{-input.ndim}, {input.ndim}); "
        raise ValueError(msg + f"got {dim!r}")
    if index.ndim > 1:
        msg = f"index must be a vector (1-d, or 0-d); got shape {tuple(index.shape)}"
        raise ValueError(msg)
    return xp, input, xp.reshape(index, (-1,)), dim % input.ndim


def _named_plan(planner: Any, name: str) -> Any:
    """`planner` whose bad index is described as `index` of `input` (PyTorch's names), for
    the index errors raised later (a Dask graph), which no rename reaches."""

    def plan(*arguments: Any) -> Any:
        made = planner(*arguments)
        return replace(made, report=replace(made.report, index_name="index", data_name="input"))

    plan.__name__ = name  # plans are cached by the planner's name
    return plan


_INDEX_SELECT = Operation(("input", "index"), _named_plan(plan_gather, "plan_index_select"))
_INDEX_ADD = Operation(
    ("input", "index", "source"), _named_plan(plan_take_along_axis, "plan_index_add"), "broadcast"
)
#: ``scatter_d`` whose src broadcasts (a Python scalar ``value``, ``Tensor.scatter``'s).
_SCATTER_D_BROADCAST = Operation(("x", "index", "src"), plan_gather_d, "broadcast")


def _source(xp: Any, input: Any, index: Any, dim: int, source: Any, exact: bool) -> Any:
    """`source` as an array of input's namespace and dtype, of input's shape with
    ``len(index)`` along `dim` (`exact`; else broadcasting to it)."""
    with renamed({"updates": "source", "params": "input"}):
        source = updates_array(xp, source, input, "source", "input")
    want = tuple(index.shape[0] if d == dim else s for d, s in enumerate(input.shape))
    shape = tuple(source.shape)
    try:
        fits = shape == want or (not exact and np.broadcast_shapes(shape, want) == want)
    except ValueError:
        fits = False
    if not fits:
        msg = (
            f"source.shape must be input.shape with len(index) = {index.shape[0]} along dim "
            f"{dim}, {want}; got {shape}"
        )
        raise ValueError(msg)
    return source


def _along(index: Any, ndim: int, dim: int) -> Any:
    """The 1-d `index` with `ndim` axes, its values along `dim` (for ``put_along_axis``)."""
    xp = aac.array_namespace(index)
    return xp.reshape(index, tuple(-1 if d == dim else 1 for d in range(ndim)))


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
    xp, input, index, dim = _line_index(input, dim, index)
    index = _in_range(xp, input, dim, index)
    return _api.run_gather(_INDEX_SELECT, input, index, (dim, 0), "error", 0)


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
    xp, input, index, dim = _line_index(input, dim, index)
    source = _source(xp, input, index, dim, source, exact=False)
    with renamed({"x": "input", "values": "source"}):
        check_reduce_dtype(xp, "add", input.dtype, "input")
    if not (isinstance(alpha, int | float | complex) and alpha == 1):
        check_python_values(alpha, input.dtype, "alpha", "input")
        source = source * xp.asarray(alpha, dtype=input.dtype, device=aac.device(input))
    index = _in_range(xp, input, dim, index)  # the values last
    return _api.run_scatter(
        _INDEX_ADD, input, _along(index, input.ndim, dim), source, (dim,), "add", "error", False,
        False,
    )  # fmt: skip


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


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
    one_of(reduce, _INDEX_REDUCE, "reduce")
    xp, input, index, dim = _line_index(input, dim, index)
    source = _source(xp, input, index, dim, source, exact=True)
    # scatter_reduce checks the dtypes, then the values of the spread index.
    spread = xp.broadcast_to(_along(index, input.ndim, dim), tuple(source.shape))
    return scatter_reduce(input, dim, spread, source, reduce, include_self=include_self)


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
    if not isinstance(indices, tuple | list) or not indices:
        msg = f"indices must be a non-empty tuple of index arrays; got {indices!r}"
        raise TypeError(msg)
    with renamed(_NAMES):
        converted = [as_arrays(input, i, "input", "indices")[1:] for i in indices]
    input = converted[0][0]
    xp = aac.array_namespace(input)
    for _, i in converted:
        check_index_dtype(xp, i, "indices")
    depth = len(converted)
    if depth > input.ndim:
        msg = f"indices must index at most input.ndim = {input.ndim} axes; got {depth}"
        raise ValueError(msg)
    wide = engine_for(xp).wide_index_dtype(input)
    parts = xp.broadcast_arrays(*(xp.astype(i, wide) for _, i in converted))
    vectors = xp.stack(parts, axis=-1)
    input, vectors = count_from_end(
        input, vectors, lambda shape, _: shape[:depth], vector=True, names=("input", "indices")
    )
    shape = (*vectors.shape[:-1], *input.shape[depth:])
    with renamed({"updates": "values", "params": "input"}):
        values = updates_array(xp, values, input, "values", "input")
        if tuple(values.shape) != shape:
            values = xp.broadcast_to(values, shape)
        return _api.scatter_nd(input, vectors, values, reduce="add" if accumulate else "update")


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
    name = "lengths" if offsets is None else "offsets"
    xp, data, given = as_arrays(data, lengths if offsets is None else offsets, "data", name)
    check_index_dtype(xp, given, name)
    axis = as_int(axis)
    if not isinstance(axis, int) or not -data.ndim <= axis < data.ndim:
        msg = f"axis must be an int in [-data.ndim, data.ndim); got {axis!r}"
        raise ValueError(msg)
    if axis % data.ndim != given.ndim - 1:
        msg = (
            f"axis must be the last axis of {name} ({name}.ndim - 1 = {given.ndim - 1}); got {axis}"
        )
        raise ValueError(msg)
    check_segment_dtype(xp, reduce, data.dtype, f'segment_csr(reduce="{reduce}")')  # before values
    pending = None
    if offsets is None:
        if not unsafe:
            pending = _check_lengths(xp, given, data.shape[axis % data.ndim])
        wide = engine_for(xp).wide_index_dtype(given)
        offsets = xp.cumulative_sum(
            xp.astype(given, wide), axis=-1, include_initial=True, dtype=wide
        )
    else:
        offsets = given
    # Offsets made from lengths checked in the graph are checked with them.
    policy = "unchecked" if unsafe or pending is not None else "error"
    result = _reduced(xp, data, offsets, reduce, policy, initial)
    if pending is not None:  # bad lengths raise when the (Dask) result is computed
        result = engine_for(xp).enforce_lazily(*pending, result)
    return result


def _reduced(xp: Any, data: Any, offsets: Any, reduce: str, policy: str, initial: Any) -> Any:
    """:func:`segment_reduce` of `data` split by checked `offsets`."""
    count = offsets[..., 1:] - offsets[..., :-1]
    floating = dtype_kind(xp, data.dtype) in ("real floating", "complex floating")
    if reduce == "mean" and (initial is not None or floating):
        total = pg_segment_csr(data, offsets, reduce="sum", bad_indices=policy)
        count = per_segment(xp, count, total)
        filled = count > 0
        if initial is not None:
            total = total + initial
        divisor = xp.maximum(count, xp.ones_like(count))
        if floating:
            mean = total / xp.astype(divisor, data.dtype)
        else:
            mean = xp.astype(xp.floor_divide(total, xp.astype(divisor, total.dtype)), data.dtype)
        empty = xp.nan if initial is None else initial
        return xp.where(filled, mean, xp.full_like(mean, empty))
    result = pg_segment_csr(data, offsets, reduce=reduce, bad_indices=policy)
    if initial is None or reduce == "mean":
        return result
    start = xp.full_like(result, initial)
    if reduce == "sum":
        return result + start
    if reduce == "prod":
        return result * start
    return xp.maximum(result, start) if reduce == "max" else xp.minimum(result, start)


@dataclass(frozen=True)
class _Lengths(BadIndex):
    """A bad entry of `lengths` found in a Dask graph, raised as the eager check's
    ValueError: a negative length (its value), or a row's last entry (its row's total)."""

    error: ClassVar[type[Exception]] = ValueError

    def text(self, position: tuple[Any, ...], value: object) -> str:  # noqa: ARG002
        if isinstance(value, int) and value < 0:
            return "lengths contains negative value!"
        return _total_text(self.data_shape[0], value)


def _total_text(n: int, total: object) -> str:
    return (
        f"lengths must add up to data.shape[axis] = {n} along their last axis (unless "
        f"unsafe=True); got a total of {total}"
    )


def _check_lengths(xp: Any, lengths: Any, n: int) -> tuple[Any, Any, BadIndex] | None:
    """PyTorch's checks of `lengths`: none negative, each row adding up to `n`. Where the
    values can be read now, a ValueError; in a Dask graph ``(bad, values, report)`` for
    ``enforce_lazily``, which raises the same ValueError when the result is computed;
    under a JAX trace none."""
    engine = engine_for(xp)
    access = engine.index_access(lengths)
    if access not in ("now", "graph") or not math.prod(lengths.shape):
        return None
    wide = engine.wide_index_dtype(lengths)
    if access == "graph":
        values = xp.astype(lengths, wide)
        totals = xp.sum(values, axis=-1, keepdims=True, dtype=wide)
        last = xp.arange(lengths.shape[-1], dtype=wide) == lengths.shape[-1] - 1
        wrong = last & (totals != n)
        bad = (values < 0) | wrong
        shown = xp.where(values < 0, values, xp.where(wrong, totals, xp.zeros_like(values)))
        return bad, shown, _Lengths("lengths", False, "data", (n,), 0)
    if engine.value_range(lengths)[0] < 0:
        msg = "lengths contains negative value!"
        raise ValueError(msg)
    totals = xp.sum(xp.astype(lengths, wide), axis=-1, dtype=wide)
    low, high = engine.value_range(totals)
    if low != n or high != n:
        raise ValueError(_total_text(n, low if low != n else high))
    return None
