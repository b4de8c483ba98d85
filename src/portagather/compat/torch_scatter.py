"""torch_scatter 2.1.2's functions with its signatures, defaults and return conventions, on
any backend: ``scatter`` and ``scatter_sum`` / ``_add`` / ``_mul`` / ``_mean`` / ``_min`` /
``_max``, ``segment_coo`` and ``segment_csr`` with their ``_sum`` / ``_add`` / ``_mean`` /
``_min`` / ``_max`` forms, ``gather_coo``, ``gather_csr``, ``scatter_std``,
``scatter_logsumexp``, ``scatter_softmax`` and ``scatter_log_softmax``.

Port by changing the import::

    from portagather.compat import torch_scatter  # was: import torch_scatter

The semantics are torch_scatter's, read from its source (``torch_scatter/*.py`` and the CPU
kernels in ``csrc/cpu``): `index` broadcast against `src` as its ``broadcast(src, other,
dim)`` does (a 1-d index along `dim`, a longer one along its leading axes, size-1 axes
expanded), `dim_size` defaulting to ``index.max() + 1`` (0 for an empty `src`), an `out`
whose values take part as torch_scatter's kernels let them (``scatter_sum`` adds to them,
``scatter_min`` keeps them where no value of `src` is smaller, ``segment_csr`` overwrites
them), an empty segment 0 for every reduction but the product (1) and an ``argindex`` of
``src.size(dim)`` where no value of `src` won, ties won by the first value along `dim`, NaN
values skipped by min and max, the integer mean floor-divided by ``scatter_mean`` and
truncated by ``segment_coo`` / ``segment_csr``, and the ``eps`` and ``1e-6`` of the
composite functions.

What differs from torch_scatter:

- The result is an array of the backend of the inputs (a ``torch.Tensor`` only for
  tensors); `out` is read, never written: the result is returned, on every backend
  (torch_scatter writes into `out` and returns it).
- Gradients (PyTorch's autograd, ``jax.grad``) flow to `src` as torch_scatter's backward
  functions send them (to the winning element of a min or max); with `out` given they also
  flow to the values of `out` the result keeps (torch_scatter's ``scatter_mul`` / ``_mean`` /
  ``_min`` / ``_max`` and the ``segment_*`` forms send `out` none). ``scatter_mul``'s
  gradient at a zero of `src` is the product of the segment's other values (torch_scatter's
  is 0 there: its ``out / src`` with NaN set to 0).
- An index value outside ``[0, dim_size)`` raises :class:`IndexError` naming it (eagerly;
  on Dask when the result is computed, as ``segment_ids`` at its place in the flattened call
  where the index has more than one dimension); torch_scatter's ``scatter_sum`` raises
  PyTorch's ``RuntimeError`` and its C++ kernels do not check. Under ``jax.jit`` the check
  cannot read the values and says so: wrap the function with
  ``jax.experimental.checkify.checkify``, which returns a bad index as its error. A bad
  ``indptr`` (falling, or outside ``[0, src.size(dim)]``) raises too (torch_scatter: not
  checked).
- ``dim_size=None`` reads ``index.max()``, which Dask, ``jax.jit`` and symbolic arrays
  cannot give when the function is called: pass `dim_size` there (and `out` to
  ``gather_csr``, whose length is the last offset).
- `index` and `indptr` may have any integer dtype (torch_scatter: int64); the ``argindex``
  of ``scatter_min`` / ``_max`` and the ``segment_*`` forms has the dtype of `index`
  (`indptr`).
- A `segment_coo` index that is not sorted is reduced as ``scatter`` would (torch_scatter:
  unspecified), and ``gather_coo`` gathers at an unsorted index (torch_scatter raises).
- Where torch_scatter leaves the ``argindex`` unspecified (its kernels keep a stale value:
  a ``segment_coo`` or ``segment_csr`` segment with no value below the start, one of only
  NaN, ``+inf`` for min or ``-inf`` for max, or ``segment_coo`` with an `out` value no
  element beats), it is ``src.size(dim)`` here. Positions of ``gather_csr``'s result in no
  segment (before ``indptr[0]``) are 0, or `out`'s value (torch_scatter: uninitialised).
- ``scatter_std`` of integer `src` is computed in the namespace's default floating dtype
  (torch_scatter: float32; NumPy's default is float64). ``scatter_logsumexp`` of an empty
  `index` without `dim_size` gives size 0 (torch_scatter: ``index.max()`` raises).
- float16 and bfloat16 sums round as the backend's reduction does (torch_scatter's
  ``segment_*`` kernels sum in float32).
- Wrong shapes and dtypes raise :class:`ValueError` / :class:`TypeError` naming the argument
  (torch_scatter: PyTorch's ``RuntimeError``); an unknown `reduce` raises ``ValueError``
  naming the valid ones (torch_scatter: a bare ``ValueError``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import array_api_compat as aac

from .._api import gather as _gather
from .._api import take_along_axis as _take_along_axis
from .._arrays import device_for_new, dtype_kind
from .._segment import segment_max, segment_prod, segment_sum
from .._segment_csr import _enforce_offsets, _ids_from_offsets
from .._segment_toolkit import segment_argmax, segment_argmin
from ..engines import Engine, engine_for
from ._common import renamed, torch_deterministic, ways_out

__all__ = [
    "gather_coo",
    "gather_csr",
    "scatter",
    "scatter_add",
    "scatter_log_softmax",
    "scatter_logsumexp",
    "scatter_max",
    "scatter_mean",
    "scatter_min",
    "scatter_mul",
    "scatter_softmax",
    "scatter_std",
    "scatter_sum",
    "segment_add_coo",
    "segment_add_csr",
    "segment_coo",
    "segment_csr",
    "segment_max_coo",
    "segment_max_csr",
    "segment_mean_coo",
    "segment_mean_csr",
    "segment_min_coo",
    "segment_min_csr",
    "segment_sum_coo",
    "segment_sum_csr",
]

#: The core's argument names in its messages, as torch_scatter's signatures spell them.
_NAMES = {"segment_ids": "index", "num_segments": "dim_size", "data": "src"}
_CSR_NAMES = {"offsets": "indptr", "data": "src"}


def _renamed(function: str, names: dict[str, str] | None = None) -> renamed:
    return renamed(
        _NAMES if names is None else names,
        ways_out(f"portagather.compat.torch_scatter.{function}", "segment_sum"),
    )


# -- arguments ---------------------------------------------------------------------------------


def _namespace(src: Any, function: str) -> Any:
    if not aac.is_array_api_obj(src) or not hasattr(src, "shape"):
        msg = f"{function}: src must be an array; got {type(src).__name__}"
        raise TypeError(msg)
    return aac.array_namespace(src)


def _index_array(xp: Any, index: Any, src: Any, name: str, function: str) -> Any:
    """`index` as an array of `src`'s namespace, of an integer dtype."""
    if not (aac.is_array_api_obj(index) and hasattr(index, "shape")):
        try:
            index = xp.asarray(index, device=device_for_new(src))
        except (TypeError, ValueError, OverflowError):
            msg = f"{function}: {name} must be an array of integers; got {index!r}"
            raise TypeError(msg) from None
    kind = dtype_kind(xp, index.dtype)
    if kind not in ("signed integer", "unsigned integer"):
        msg = f"{function}: {name} must have an integer dtype; got {index.dtype}"
        raise TypeError(msg)
    return index


def _dim(dim: Any, ndim: int, function: str) -> int:
    try:
        value = operator.index(dim)
    except TypeError:
        msg = f"{function}: dim must be an int; got {dim!r}"
        raise TypeError(msg) from None
    if isinstance(dim, bool) or not -ndim <= value < ndim:
        msg = (
            f"{function}: dim must be in [{-ndim}, {ndim}) for src of {ndim} dimensions; "
            f"got {dim!r}"
        )
        if isinstance(dim, bool):
            raise TypeError(msg)
        raise IndexError(msg)
    return value + ndim if value < 0 else value


def _size(value: Any, name: str, function: str) -> int:
    try:
        size = operator.index(value)
    except TypeError:
        msg = f"{function}: {name} must be an int or None; got {value!r}"
        raise TypeError(msg) from None
    if isinstance(value, bool) or size < 0:
        msg = f"{function}: {name} must be an int >= 0; got {value!r}"
        raise (TypeError if isinstance(value, bool) else ValueError)(msg)
    return size


def _shape(x: Any) -> tuple[int, ...]:
    shape = tuple(x.shape)
    if any(s is None or (isinstance(s, float) and math.isnan(s)) for s in shape):
        msg = "torch_scatter's functions need arrays of known shapes; got shape " + str(shape)
        raise ValueError(msg)
    return tuple(int(s) for s in shape)


def broadcast_shape(
    index_shape: tuple[int, ...], shape: tuple[int, ...], dim: int
) -> tuple[int, ...]:
    """The shape torch_scatter's ``broadcast(index, src, dim)`` views `index` as before it
    expands it to `shape`: a 1-d index along `dim`, another one along its leading axes, with
    size-1 axes added at the end. Raises ValueError where the view does not expand."""
    view = (1,) * dim + index_shape if len(index_shape) == 1 else index_shape
    view = view + (1,) * (len(shape) - len(view))
    if len(view) != len(shape) or any(a not in (1, b) for a, b in zip(view, shape, strict=True)):
        msg = (
            f"index of shape {index_shape} does not broadcast to src of shape {shape} along "
            f"dim {dim} (torch_scatter's broadcast: a 1-d index lies along dim, a longer one "
            f"along the leading axes; each of its sizes must be 1 or src's)"
        )
        raise ValueError(msg)
    return view


def _check_out(
    out: Any, xp: Any, shape: tuple[int, ...], dim: int, src: Any, function: str
) -> tuple[int, ...]:
    if not aac.is_array_api_obj(out) or aac.array_namespace(out) is not xp:
        msg = f"{function}: out must be an array of src's namespace; got {type(out).__name__}"
        raise TypeError(msg)
    out_shape = _shape(out)
    if len(out_shape) != len(shape) or any(
        a != b for i, (a, b) in enumerate(zip(out_shape, shape, strict=True)) if i != dim
    ):
        msg = (
            f"{function}: out must have src's shape {shape} on every axis but dim ({dim}); "
            f"got out.shape = {out_shape}"
        )
        raise ValueError(msg)
    if out.dtype != src.dtype:
        msg = f"{function}: out must have src's dtype {src.dtype}; got {out.dtype}"
        raise TypeError(msg)
    return out_shape


def _read_size(engine: Engine, xp: Any, index: Any, function: str) -> int:
    """``index.max() + 1``, read now."""
    if engine.index_access(index) != "now":
        msg = (
            f"{function}: dim_size=None reads index.max() + 1, which cannot be read when the "
            "function is called here (under jax.jit or another JAX transformation, on Dask, on "
            "symbolic ndonnx arrays, under torch.func.vmap); pass dim_size=N, a Python int"
        )
        raise ValueError(msg)
    return max(0, int(xp.max(index)) + 1)


# -- layouts: the rows a call reduces, the segment of each, and the way back --------------------


class _Layout:
    """A reduction along `dim` as the core's: `rows` (data along axis 0, inner axes
    elementwise), the segment id of each row (`ids`, in ``[0, groups)``; -1 for a row in no
    segment under ``policy="ignore"``), and how arrays move between `src`'s shape, the rows,
    the segments (`groups`) and the result's shape."""

    xp: Any
    engine: Engine
    ids: Any
    groups: int
    policy: str
    size: int  # src.shape[dim]
    out_shape: tuple[int, ...]

    def to_rows(self, x: Any) -> Any:
        raise NotImplementedError

    def from_rows(self, rows: Any) -> Any:
        raise NotImplementedError

    def to_groups(self, x: Any) -> Any:
        raise NotImplementedError

    def from_groups(self, groups: Any) -> Any:
        raise NotImplementedError

    def position(self, rows: Any) -> Any:
        """The positions along dim of the rows numbered `rows`."""
        raise NotImplementedError

    def reduce(self, rows: Any, how: Callable[..., Any]) -> Any:
        """`how` (a core segment reduction) of `rows` by segment: the segments' form."""
        if how is segment_sum:  # (in one order where PyTorch's deterministic mode is on)
            return how(rows, self.ids, self.groups, bad_indices=self.policy,
                       deterministic=torch_deterministic())  # fmt: skip
        return how(rows, self.ids, self.groups, bad_indices=self.policy)

    def gather_rows(self, groups: Any) -> Any:
        """Each row's segment's value in `groups`: rows' form."""
        ids = self.ids
        if self.policy == "ignore":
            ids = self.xp.where(ids < 0, self.xp.zeros_like(ids), ids)
        return _gather(groups, ids, axis=0, bad_indices="unchecked")

    def counts(self, dtype: Any) -> Any:
        """How many rows each segment has, in `dtype`, broadcasting against the segments."""
        xp = self.xp
        ones = xp.ones((self.ids.shape[0],), dtype=dtype, device=device_for_new(self.ids))
        count = self.reduce(ones, segment_sum)
        return xp.reshape(count, (self.groups,) + (1,) * (len(self.group_shape) - 1))

    @property
    def group_shape(self) -> tuple[int, ...]:
        raise NotImplementedError


class _AlongDim(_Layout):
    """An index that varies along dim only: dim moved to the front, the index a vector."""

    def __init__(self, xp: Any, engine: Engine, shape: tuple[int, ...], dim: int, ids: Any,
                 size: int, policy: str = "error") -> None:  # fmt: skip
        self.xp, self.engine, self.dim, self.ids, self.groups = xp, engine, dim, ids, size
        self.policy, self.size = policy, shape[dim]
        self.perm = (dim, *(i for i in range(len(shape)) if i != dim))
        self.back = tuple(self.perm.index(i) for i in range(len(shape)))
        self.out_shape = (*shape[:dim], size, *shape[dim + 1 :])
        self.rest = tuple(s for i, s in enumerate(shape) if i != dim)

    def _moved(self, x: Any, perm: tuple[int, ...]) -> Any:
        return x if self.dim == 0 else self.xp.permute_dims(x, perm)

    def to_rows(self, x: Any) -> Any:
        return self._moved(x, self.perm)

    def from_rows(self, rows: Any) -> Any:
        return self._moved(rows, self.back)

    def to_groups(self, x: Any) -> Any:
        return self._moved(x, self.perm)

    def from_groups(self, groups: Any) -> Any:
        return self._moved(groups, self.back)

    @property
    def group_shape(self) -> tuple[int, ...]:
        return (self.groups, *self.rest)

    def position(self, rows: Any) -> Any:
        return rows


class _Flat(_Layout):
    """An index that varies along other axes too: every element a row of its own, its segment
    ``(b, index, k)`` flattened."""

    def __init__(self, xp: Any, engine: Engine, shape: tuple[int, ...], dim: int, index: Any,
                 size: int, function: str) -> None:  # fmt: skip
        self.xp, self.engine, self.shape, self.dim = xp, engine, shape, dim
        self.size, self.policy = shape[dim], "error"
        self.outer, self.inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
        self.out_shape = (*shape[:dim], size, *shape[dim + 1 :])
        self.groups = self.outer * size * self.inner
        wide = engine.wide_index_dtype(index)
        device = device_for_new(index)
        full = xp.reshape(
            xp.broadcast_to(xp.astype(index, wide), shape), (self.outer, self.size, self.inner)
        )
        b = xp.reshape(xp.arange(self.outer, dtype=wide, device=device), (self.outer, 1, 1))
        k = xp.reshape(xp.arange(self.inner, dtype=wide, device=device), (1, 1, self.inner))
        bad = (full < 0) | (full >= size)
        ids = xp.reshape((b * size + full) * self.inner + k, (-1,))
        if engine.index_access(index) == "now":
            if math.prod(shape) and bool(xp.any(bad)):
                _raise_bad(xp, xp.reshape(bad, shape), xp.reshape(full, shape), size, function)
        else:  # the core's check, on the flat ids, when the values can be read
            ids = xp.where(xp.reshape(bad, (-1,)), xp.full_like(ids, -1), ids)
        self.ids = ids

    def to_rows(self, x: Any) -> Any:
        return self.xp.reshape(x, (-1,))

    def from_rows(self, rows: Any) -> Any:
        return self.xp.reshape(rows, self.shape)

    to_groups = to_rows

    def from_groups(self, groups: Any) -> Any:
        return self.xp.reshape(groups, self.out_shape)

    @property
    def group_shape(self) -> tuple[int, ...]:
        return (self.groups,)

    def position(self, rows: Any) -> Any:
        return (rows // max(self.inner, 1)) % max(self.size, 1)


def _raise_bad(xp: Any, bad: Any, index: Any, size: int, function: str) -> None:
    flat = xp.reshape(bad, (-1,))
    first = int(xp.argmax(xp.astype(flat, xp.int8)))
    shape = tuple(bad.shape)
    place, rest = [], first
    for extent in reversed(shape):
        place.append(rest % extent)
        rest //= extent
    where = ", ".join(str(p) for p in reversed(place))
    value = int(xp.reshape(index, (-1,))[first])
    msg = (
        f"{function}: index (broadcast to src's shape {shape}) [{where}] = {value} is out of "
        f"range [0, {size}) (dim_size = {size})"
    )
    raise IndexError(msg)


class _Csr(_Layout):
    """Segments given by `indptr` along its last axis: the rows ``(B * E, ...)``, each one's
    segment from the offsets (-1 for a row in none)."""

    def __init__(self, xp: Any, engine: Engine, shape: tuple[int, ...], indptr: Any) -> None:
        dim = indptr.ndim - 1
        self.xp, self.engine, self.shape, self.dim = xp, engine, shape, dim
        self.size, self.policy = shape[dim], "ignore"
        self.outer = math.prod(shape[:dim])
        self.segments = max(int(indptr.shape[-1]) - 1, 0)
        self.rest = shape[dim + 1 :]
        self.out_shape = (*shape[:dim], self.segments, *self.rest)
        self.groups = self.outer * self.segments
        self.indptr = indptr
        if self.segments and self.outer * self.size:
            rows = xp.reshape(
                xp.zeros(shape[: dim + 1], dtype=xp.int8, device=device_for_new(indptr)), (-1,)
            )
            self.ids = _ids_from_offsets(xp, engine, indptr, shape, dim, rows)
        else:
            wide = engine.wide_index_dtype(indptr)
            self.ids = xp.full(
                (self.outer * self.size,), -1, dtype=wide, device=device_for_new(indptr)
            )

    def to_rows(self, x: Any) -> Any:
        return self.xp.reshape(x, (self.outer * self.size, *self.rest))

    def from_rows(self, rows: Any) -> Any:
        return self.xp.reshape(rows, self.shape)

    def to_groups(self, x: Any) -> Any:
        return self.xp.reshape(x, (self.groups, *self.rest))

    def from_groups(self, groups: Any) -> Any:
        return self.xp.reshape(groups, self.out_shape)

    @property
    def group_shape(self) -> tuple[int, ...]:
        return (self.groups, *self.rest)

    def position(self, rows: Any) -> Any:
        return rows % max(self.size, 1)

    def checked(self, result: Any) -> Any:
        """`result`, with the offsets checked (falling, or outside ``[0, E]``)."""
        return _enforce_offsets(self.xp, self.engine, self.indptr, self.shape, self.dim, result)


class _Call:
    """What a ``scatter_*`` call works with: the namespace, the engine, src and its shape,
    dim, the result's size along dim, out, and the layout of the reduction."""

    def __init__(
        self, function: str, src: Any, index: Any, dim: Any, out: Any, dim_size: Any
    ) -> None:
        xp = self.xp = _namespace(src, function)
        self.function = function
        shape = self.shape = _shape(src)
        if not shape:
            msg = f"{function}: src must have at least one dimension; got a 0-d array"
            raise ValueError(msg)
        self.dim = _dim(dim, len(shape), function)
        self.index = index = _index_array(xp, index, src, "index", function)
        index_shape = _shape(index)
        self.view = broadcast_shape(index_shape, shape, self.dim)
        self.engine = engine = engine_for(xp)
        self.src, self.out = src, out
        if out is not None:
            size = _check_out(out, xp, shape, self.dim, src, function)[self.dim]
        elif dim_size is not None:
            size = _size(dim_size, "dim_size", function)
        elif not math.prod(shape):
            size = 0
        else:
            size = _read_size(engine, xp, index, function)
        self.size = size
        self.layout = _layout(xp, engine, shape, self.dim, index, self.view, size, function)


def _layout(xp: Any, engine: Engine, shape: tuple[int, ...], dim: int, index: Any,
            view: tuple[int, ...], size: int, function: str) -> _Layout:  # fmt: skip
    """The layout of a reduction of `shape` along `dim` into `size` at `index` (viewed as
    `view`)."""
    if all(v == 1 for i, v in enumerate(view) if i != dim):
        ids = xp.reshape(index, (view[dim],))
        if view[dim] != shape[dim]:
            ids = xp.broadcast_to(ids, (shape[dim],))
        return _AlongDim(xp, engine, shape, dim, ids, size)
    return _Flat(xp, engine, shape, dim, xp.reshape(index, view), size, function)


# -- the reductions on a layout ------------------------------------------------------------------


def _floating(xp: Any, x: Any) -> bool:
    return dtype_kind(xp, x.dtype) == "real floating"


def _zeros(xp: Any, shape: tuple[int, ...], like: Any) -> Any:
    return xp.zeros(shape, dtype=like.dtype, device=device_for_new(like))


def _lowest_highest(xp: Any, dtype: Any) -> tuple[Any, Any]:
    if dtype_kind(xp, dtype) == "real floating":
        info = xp.finfo(dtype)
        return float(info.min), float(info.max)
    info = xp.iinfo(dtype)
    return int(info.min), int(info.max)


def _arg_reduce(
    layout: _Layout, src: Any, reduce: str, out: Any, index_dtype: Any, csr: bool = False
) -> tuple[Any, Any]:  # fmt: skip
    """torch_scatter's min or max with its argindex, in the result's shape: each segment's
    value starts at `out` (or the dtype's highest, lowest finite value) and a value of src
    replaces it where strictly smaller (larger), the first along dim winning ties; NaN
    never does. A segment no value won is `out`'s value, or 0 (``segment_csr``: the start
    value where the segment has rows), with argindex ``src.size(dim)``.

    The winner is the core's ``segment_argmin`` (``_argmax``) of the rows with NaN made the
    value that never wins, and the value is taken from `src` at it, so that gradients reach
    the winning element only, as torch_scatter's backward sends them."""
    xp = layout.xp
    rows = layout.to_rows(src)
    lowest, highest = _lowest_highest(xp, src.dtype)
    start = highest if reduce == "min" else lowest
    if _floating(xp, rows):
        skip = float("inf") if reduce == "min" else -float("inf")
        clean = xp.where(xp.isnan(rows), xp.full_like(rows, skip), rows)
    else:
        clean = rows
    winner = layout.reduce(clean, segment_argmin if reduce == "min" else segment_argmax)
    found = winner < rows.shape[0]
    safe = xp.where(found, winner, xp.zeros_like(winner))
    best = _take_along_axis(clean, safe, axis=0, bad_indices="unchecked")
    base = xp.full_like(best, start) if out is None else layout.to_groups(out)
    wins = found & (best < base if reduce == "min" else best > base)
    taken = _take_along_axis(rows, safe, axis=0, bad_indices="unchecked")
    if out is not None:
        kept = base
    elif csr:
        filled = layout.counts(winner.dtype) > 0
        kept = xp.where(filled, xp.full_like(best, start), xp.zeros_like(best))
    else:
        kept = xp.zeros_like(best)
    value = xp.where(wins, taken, kept)
    arg = xp.where(wins, layout.position(winner), xp.full_like(winner, layout.size))
    return layout.from_groups(value), layout.from_groups(xp.astype(arg, index_dtype))


def _divide(xp: Any, total: Any, count: Any, rounding: str) -> Any:
    """`total` over `count` (>= 1): true division for floating dtypes, else floor or trunc."""
    if _floating(xp, total):
        return total / count
    quotient = xp.floor_divide(total, count)
    if rounding == "floor":
        return quotient
    inexact = (quotient * count) != total
    return xp.where(inexact & (total < 0), quotient + 1, quotient)


def _empty_result(xp: Any, call_shape: tuple[int, ...], out: Any, like: Any) -> Any:
    """A reduction of no elements: zeros (torch_scatter's ``fill_(0)``), or `out` untouched."""
    return out if out is not None else _zeros(xp, call_shape, like)


def _arg_empty(xp: Any, shape: tuple[int, ...], size: int, dtype: Any, like: Any) -> Any:
    return xp.full(shape, size, dtype=dtype, device=device_for_new(like))


# -- scatter -------------------------------------------------------------------------------------


def scatter_sum(src: Any, index: Any, dim: int = -1, out: Any = None,
                dim_size: int | None = None) -> Any:  # fmt: skip
    """``torch_scatter.scatter_sum``: the values of `src` summed into the positions `index`
    gives along `dim` (an empty segment 0; added to `out` where given)."""
    with _renamed("scatter_sum"):
        call = _Call("scatter_sum", src, index, dim, out, dim_size)
        return _sum(call)


def _sum(call: _Call) -> Any:
    xp, layout = call.xp, call.layout
    if not math.prod(call.shape):
        return _empty_result(xp, layout.out_shape, call.out, call.src)
    total = layout.from_groups(layout.reduce(layout.to_rows(call.src), segment_sum))
    return total if call.out is None else call.out + total


def scatter_add(src: Any, index: Any, dim: int = -1, out: Any = None,
                dim_size: int | None = None) -> Any:  # fmt: skip
    """``torch_scatter.scatter_add``: :func:`scatter_sum`."""
    with _renamed("scatter_add"):
        return _sum(_Call("scatter_add", src, index, dim, out, dim_size))


def scatter_mul(src: Any, index: Any, dim: int = -1, out: Any = None,
                dim_size: int | None = None) -> Any:  # fmt: skip
    """``torch_scatter.scatter_mul``: the product of the values of each segment (an empty
    segment 1, but 0 throughout where `src` has no elements; multiplied into `out`)."""
    with _renamed("scatter_mul"):
        call = _Call("scatter_mul", src, index, dim, out, dim_size)
        xp, layout = call.xp, call.layout
        if not math.prod(call.shape):
            return _empty_result(xp, layout.out_shape, out, src)
        product = layout.from_groups(layout.reduce(layout.to_rows(src), segment_prod))
        return product if out is None else out * product


def scatter_mean(src: Any, index: Any, dim: int = -1, out: Any = None,
                 dim_size: int | None = None) -> Any:  # fmt: skip
    """``torch_scatter.scatter_mean``: the sum (added to `out`) over the count of each
    segment (at least 1, so an empty segment is 0, or `out`); integers floor-divided.

    The count is torch_scatter's: ones of `index`'s own shape scattered along `dim` (the
    last axis of `index` where it has no axis `dim`), then broadcast against the result."""
    with _renamed("scatter_mean"):
        call = _Call("scatter_mean", src, index, dim, out, dim_size)
        total = _sum(call)
        return _divide(call.xp, total, _mean_count(call, total), "floor")


def _mean_count(call: _Call, total: Any) -> Any:
    xp, index = call.xp, call.index
    index_shape = _shape(index)
    count_dim = call.dim if len(index_shape) > call.dim else len(index_shape) - 1
    shape = tuple(_shape(total))
    if not index_shape or not math.prod(index_shape):
        return xp.ones(shape, dtype=total.dtype, device=device_for_new(total))
    ones = xp.ones(index_shape, dtype=call.src.dtype, device=device_for_new(index))
    view = broadcast_shape(index_shape, index_shape, count_dim)
    layout = _layout(xp, call.engine, index_shape, count_dim, index, view, call.size, call.function)
    count = layout.from_groups(layout.reduce(layout.to_rows(ones), segment_sum))
    count = xp.where(count < 1, xp.ones_like(count), count)
    count_view = broadcast_shape(tuple(_shape(count)), shape, call.dim)
    return xp.broadcast_to(xp.reshape(count, count_view), shape)


def scatter_min(src: Any, index: Any, dim: int = -1, out: Any = None,
                dim_size: int | None = None) -> tuple[Any, Any]:  # fmt: skip
    """``torch_scatter.scatter_min``: ``(values, argindex)``, the smallest value of each
    segment and its position along `dim` (the first of equal ones). An empty segment (or one
    of NaN and values not below the dtype's largest finite value only) is 0 with argindex
    ``src.size(dim)``; with `out`, a segment keeps `out`'s value where no value is smaller."""
    with _renamed("scatter_min"):
        return _scatter_arg(_Call("scatter_min", src, index, dim, out, dim_size), "min")


def scatter_max(src: Any, index: Any, dim: int = -1, out: Any = None,
                dim_size: int | None = None) -> tuple[Any, Any]:  # fmt: skip
    """``torch_scatter.scatter_max``: ``(values, argindex)``, as :func:`scatter_min` with the
    largest value."""
    with _renamed("scatter_max"):
        return _scatter_arg(_Call("scatter_max", src, index, dim, out, dim_size), "max")


def _scatter_arg(call: _Call, reduce: str) -> tuple[Any, Any]:
    xp, layout = call.xp, call.layout
    if not math.prod(call.shape):
        values = _empty_result(xp, layout.out_shape, call.out, call.src)
        return values, _arg_empty(
            xp, layout.out_shape, call.shape[call.dim], call.index.dtype, values
        )
    return _arg_reduce(layout, call.src, reduce, call.out, call.index.dtype)


_SCATTER_REDUCES = ("sum", "add", "mul", "mean", "min", "max")


def scatter(src: Any, index: Any, dim: int = -1, out: Any = None, dim_size: int | None = None,
            reduce: str = "sum") -> Any:  # fmt: skip
    """``torch_scatter.scatter``: `reduce` (``"sum"``, ``"add"``, ``"mul"``, ``"mean"``,
    ``"min"`` or ``"max"``, the values only) of the values of `src` in each segment along
    `dim` that `index` gives; see :func:`scatter_sum` ... :func:`scatter_max`."""
    if reduce in ("sum", "add"):
        return scatter_sum(src, index, dim, out, dim_size)
    if reduce == "mul":
        return scatter_mul(src, index, dim, out, dim_size)
    if reduce == "mean":
        return scatter_mean(src, index, dim, out, dim_size)
    if reduce == "min":
        return scatter_min(src, index, dim, out, dim_size)[0]
    if reduce == "max":
        return scatter_max(src, index, dim, out, dim_size)[0]
    msg = f"scatter: reduce must be one of {', '.join(map(repr, _SCATTER_REDUCES))}; got {reduce!r}"
    raise ValueError(msg)


# -- segment_coo ---------------------------------------------------------------------------------


def _coo_call(function: str, src: Any, index: Any, out: Any, dim_size: Any) -> _Call:
    """The call of a ``segment_*_coo``: a scatter along ``index.dim() - 1`` (torch_scatter's
    kernel expands `index` to ``src.shape[:index.dim()]``)."""
    xp = _namespace(src, function)
    index = _index_array(xp, index, src, "index", function)
    ndim = len(_shape(index))
    if ndim < 1 or ndim > len(_shape(src)):
        msg = (
            f"{function}: index must have 1 to src.dim() = {len(_shape(src))} dimensions; got "
            f"index.shape = {_shape(index)}"
        )
        raise ValueError(msg)
    return _Call(function, src, index, ndim - 1, out, dim_size)


def segment_sum_coo(src: Any, index: Any, out: Any = None, dim_size: int | None = None) -> Any:
    """``torch_scatter.segment_sum_coo``: the sum of each segment of sorted `index` along its
    last axis (an empty segment 0; added to `out`)."""
    with _renamed("segment_sum_coo"):
        return _sum(_coo_call("segment_sum_coo", src, index, out, dim_size))


def segment_add_coo(src: Any, index: Any, out: Any = None, dim_size: int | None = None) -> Any:
    """``torch_scatter.segment_add_coo``: :func:`segment_sum_coo`."""
    with _renamed("segment_add_coo"):
        return _sum(_coo_call("segment_add_coo", src, index, out, dim_size))


def segment_mean_coo(src: Any, index: Any, out: Any = None, dim_size: int | None = None) -> Any:
    """``torch_scatter.segment_mean_coo``: the sum (added to `out`) over the number of rows
    of each segment (at least 1); integers truncated toward zero, as its C++ kernel does."""
    with _renamed("segment_mean_coo"):
        call = _coo_call("segment_mean_coo", src, index, out, dim_size)
        total = _sum(call)
        if not math.prod(call.shape):
            return total
        return _divide(call.xp, total, _row_count(call.layout, total), "trunc")


def _row_count(layout: _Layout, like: Any) -> Any:
    """The rows of each segment (at least 1), in `like`'s dtype and result shape."""
    xp = layout.xp
    count = layout.counts(like.dtype)
    count = xp.where(count < 1, xp.ones_like(count), count)
    return layout.from_groups(xp.broadcast_to(count, layout.group_shape))


def segment_min_coo(src: Any, index: Any, out: Any = None,
                    dim_size: int | None = None) -> tuple[Any, Any]:  # fmt: skip
    """``torch_scatter.segment_min_coo``: ``(values, argindex)`` as :func:`scatter_min`."""
    with _renamed("segment_min_coo"):
        return _scatter_arg(_coo_call("segment_min_coo", src, index, out, dim_size), "min")


def segment_max_coo(src: Any, index: Any, out: Any = None,
                    dim_size: int | None = None) -> tuple[Any, Any]:  # fmt: skip
    """``torch_scatter.segment_max_coo``: ``(values, argindex)`` as :func:`scatter_max`."""
    with _renamed("segment_max_coo"):
        return _scatter_arg(_coo_call("segment_max_coo", src, index, out, dim_size), "max")


_SEGMENT_REDUCES = ("sum", "add", "mean", "min", "max")


def _bad_reduce(function: str, reduce: Any) -> None:
    valid = ", ".join(map(repr, _SEGMENT_REDUCES))
    msg = f"{function}: reduce must be one of {valid}; got {reduce!r}"
    raise ValueError(msg)


def segment_coo(src: Any, index: Any, out: Any = None, dim_size: int | None = None,
                reduce: str = "sum") -> Any:  # fmt: skip
    """``torch_scatter.segment_coo``: `reduce` (``"sum"``, ``"add"``, ``"mean"``, ``"min"``
    or ``"max"``) of each segment of sorted `index`, along its last axis."""
    if reduce in ("sum", "add"):
        return segment_sum_coo(src, index, out, dim_size)
    if reduce == "mean":
        return segment_mean_coo(src, index, out, dim_size)
    if reduce == "min":
        return segment_min_coo(src, index, out, dim_size)[0]
    if reduce == "max":
        return segment_max_coo(src, index, out, dim_size)[0]
    _bad_reduce("segment_coo", reduce)
    return None  # (not reached)


def gather_coo(src: Any, index: Any, out: Any = None) -> Any:
    """``torch_scatter.gather_coo``: ``src`` gathered along ``index.dim() - 1`` at `index`
    (whose leading axes are src's): ``out[..., e, ...] = src[..., index[..., e], ...]``.
    `out`'s values are all replaced, so only its shape matters."""
    function = "gather_coo"
    xp = _namespace(src, function)
    index = _index_array(xp, index, src, "index", function)
    shape, index_shape = _shape(src), _shape(index)
    dim = len(index_shape) - 1
    if dim < 0 or dim >= len(shape) or index_shape[:dim] != shape[:dim]:
        msg = (
            f"{function}: index must have 1 to src.dim() dimensions, its leading ones src's; got "
            f"index.shape = {index_shape} and src.shape = {shape}"
        )
        raise ValueError(msg)
    out_shape = (*shape[:dim], index_shape[dim], *shape[dim + 1 :])
    if out is not None:
        _check_out(out, xp, shape, dim, src, function)
        out_shape = _shape(out)
    if not math.prod(shape):
        return _zeros(xp, out_shape, src) if out is None else out
    with _renamed(function, {"params": "src", "indices": "index"}):
        return _gather(src, index, axis=dim, batch_dims=dim)


# -- segment_csr ---------------------------------------------------------------------------------


def _checked_indptr(
    function: str, src: Any, indptr: Any
) -> tuple[Any, Any, tuple[int, ...], tuple[int, ...], int]:
    """``(xp, indptr, src.shape, indptr.shape, dim)``: `indptr` as an index array of `src`'s
    namespace, of 1 to ``src.dim()`` dimensions, each leading one of size 1 or `src`'s; the
    offsets split `src` along `dim`, its last axis."""
    xp = _namespace(src, function)
    indptr = _index_array(xp, indptr, src, "indptr", function)
    shape, line = _shape(src), _shape(indptr)
    dim = len(line) - 1
    if (
        dim < 0
        or dim >= len(shape)
        or any(a not in (1, b) for a, b in zip(line[:dim], shape[:dim], strict=True))
    ):
        msg = (
            f"{function}: indptr must have 1 to src.dim() dimensions, each leading one of size "
            f"1 or src's; got indptr.shape = {line} and src.shape = {shape}"
        )
        raise ValueError(msg)
    return xp, indptr, shape, line, dim


def _csr_layout(function: str, src: Any, indptr: Any) -> tuple[Any, _Csr, Any]:
    xp, indptr, shape, line, dim = _checked_indptr(function, src, indptr)
    if line[:dim] != shape[:dim]:
        indptr = xp.broadcast_to(indptr, (*shape[:dim], line[dim]))
    return xp, _Csr(xp, engine_for(xp), shape, indptr), indptr


def _csr_out(function: str, xp: Any, out: Any, layout: _Csr, src: Any) -> None:
    if out is None:
        return
    out_shape = _check_out(out, xp, layout.shape, layout.dim, src, function)
    if math.prod(layout.shape) and out_shape != layout.out_shape:
        msg = f"{function}: out must have shape {layout.out_shape}; got {out_shape}"
        raise ValueError(msg)


def _csr_reduce(function: str, src: Any, indptr: Any, out: Any, reduce: str) -> Any:
    with _renamed(function, _CSR_NAMES):
        xp, layout, indptr = _csr_layout(function, src, indptr)
        _csr_out(function, xp, out, layout, src)
        if not math.prod(layout.shape) or not layout.groups:
            if reduce in ("min", "max"):
                values = out if out is not None else _zeros(xp, layout.out_shape, src)
                return values, _arg_empty(xp, _shape(values), layout.size, indptr.dtype, values)
            return out if out is not None else _zeros(xp, layout.out_shape, src)
        if reduce in ("min", "max"):
            values, arg = _arg_reduce(layout, src, reduce, None, indptr.dtype, csr=True)
            return layout.checked(values), arg
        total = layout.from_groups(layout.reduce(layout.to_rows(src), segment_sum))
        if reduce == "mean":
            total = _divide(xp, total, _row_count(layout, total), "trunc")
        return layout.checked(total)


def segment_sum_csr(src: Any, indptr: Any, out: Any = None) -> Any:
    """``torch_scatter.segment_sum_csr``: the sum of each segment ``indptr[i]:indptr[i+1]``
    along ``indptr.dim() - 1`` (an empty segment 0; `out`'s values are replaced)."""
    return _csr_reduce("segment_sum_csr", src, indptr, out, "sum")


def segment_add_csr(src: Any, indptr: Any, out: Any = None) -> Any:
    """``torch_scatter.segment_add_csr``: :func:`segment_sum_csr`."""
    return _csr_reduce("segment_add_csr", src, indptr, out, "sum")


def segment_mean_csr(src: Any, indptr: Any, out: Any = None) -> Any:
    """``torch_scatter.segment_mean_csr``: the mean of each segment (an empty one 0;
    integers truncated toward zero)."""
    return _csr_reduce("segment_mean_csr", src, indptr, out, "mean")


def segment_min_csr(src: Any, indptr: Any, out: Any = None) -> tuple[Any, Any]:
    """``torch_scatter.segment_min_csr``: ``(values, argindex)``; an empty segment is 0 with
    argindex ``src.size(dim)``."""
    result: tuple[Any, Any] = _csr_reduce("segment_min_csr", src, indptr, out, "min")
    return result


def segment_max_csr(src: Any, indptr: Any, out: Any = None) -> tuple[Any, Any]:
    """``torch_scatter.segment_max_csr``: ``(values, argindex)``, as :func:`segment_min_csr`."""
    result: tuple[Any, Any] = _csr_reduce("segment_max_csr", src, indptr, out, "max")
    return result


def segment_csr(src: Any, indptr: Any, out: Any = None, reduce: str = "sum") -> Any:
    """``torch_scatter.segment_csr``: `reduce` (``"sum"``, ``"add"``, ``"mean"``, ``"min"``
    or ``"max"``) of each segment ``indptr[i]:indptr[i+1]`` along ``indptr.dim() - 1``."""
    if reduce in ("sum", "add"):
        return segment_sum_csr(src, indptr, out)
    if reduce == "mean":
        return segment_mean_csr(src, indptr, out)
    if reduce == "min":
        return segment_min_csr(src, indptr, out)[0]
    if reduce == "max":
        return segment_max_csr(src, indptr, out)[0]
    _bad_reduce("segment_csr", reduce)
    return None  # (not reached)


def gather_csr(src: Any, indptr: Any, out: Any = None) -> Any:
    """``torch_scatter.gather_csr``: each value of `src` along ``indptr.dim() - 1`` repeated
    over its segment ``indptr[i]:indptr[i+1]``; the result's size there is the last offset
    (``indptr.flatten()[-1]``, read now), or `out`'s."""
    function = "gather_csr"
    with _renamed(function, _CSR_NAMES):
        xp, indptr, shape, line, dim = _checked_indptr(function, src, indptr)
        segments = max(line[dim] - 1, 0)
        if shape[dim] not in (0, segments):
            msg = (
                f"{function}: src.size({dim}) must be 0 or the number of segments "
                f"indptr.size(-1) - 1 = {segments}; got src.shape = {shape}"
            )
            raise ValueError(msg)
        engine = engine_for(xp)
        if out is not None:
            length = _check_out(out, xp, shape, dim, src, function)[dim]
        elif not math.prod(shape):
            length = 0
        else:
            if engine.index_access(indptr) != "now":
                msg = (
                    f"{function}: the result's length is the last offset, indptr.flatten()[-1], "
                    "which cannot be read when the function is called here; pass out="
                )
                raise ValueError(msg)
            length = max(0, int(xp.reshape(indptr, (-1,))[-1]))
        out_shape = (*shape[:dim], length, *shape[dim + 1 :])
        if not math.prod(shape) or not math.prod(out_shape):
            return out if out is not None else _zeros(xp, out_shape, src)
        if line[:dim] != shape[:dim]:
            indptr = xp.broadcast_to(indptr, (*shape[:dim], line[dim]))
        layout = _Csr(xp, engine, out_shape, indptr)
        values = xp.reshape(src, (layout.outer * segments, *shape[dim + 1 :]))
        rows = layout.gather_rows(values)
        inside = xp.reshape(layout.ids >= 0, (-1,) + (1,) * (len(shape) - dim - 1))
        kept = layout.to_rows(out) if out is not None else xp.zeros_like(rows)
        return layout.checked(layout.from_rows(xp.where(inside, rows, kept)))


# -- the composite functions ---------------------------------------------------------------------


def _need_floating(xp: Any, src: Any, function: str) -> None:
    if not _floating(xp, src):
        msg = f"`{function}` can only be computed over tensors with floating point data types."
        raise ValueError(msg)


def _shifts(layout: _Layout, rows: Any, start_at_lowest: bool) -> tuple[Any, Any, Any, Any]:
    """``(shifted, finite, shift, best)``: `rows` less their segment's max as torch_scatter's
    ``scatter_max`` gives it (NaN skipped; from the dtype's lowest finite value, 0 where no
    value is above it, or from ``-inf``), in the rows' form; whether that max is finite, in
    the segments' form; the max where finite, else 0; and the max. Rows of a segment whose max is
    infinite are ``-inf``: the callers give those segments the values torch_scatter's
    arithmetic on infinities gives, without computing ``inf - inf``."""
    xp = layout.xp
    clean = xp.where(xp.isnan(rows), xp.full_like(rows, -float("inf")), rows)
    best = layout.reduce(clean, segment_max)
    if start_at_lowest:
        lowest = float(xp.finfo(rows.dtype).min)
        best = xp.where(best > lowest, best, xp.zeros_like(best))
    finite = xp.isfinite(best)
    shift = xp.where(finite, best, xp.zeros_like(best))
    inside = layout.gather_rows(finite)
    shifted = xp.where(inside, rows - layout.gather_rows(shift), xp.full_like(rows, -float("inf")))
    return shifted, finite, shift, best


def _exp_sums(
    function: str, src: Any, index: Any, dim: int, dim_size: int | None
) -> tuple[Any, _Layout, Any, Any, Any, Any] | None:  # fmt: skip
    """The softmax family's common steps of `function`: ``(xp, layout, shifted, finite,
    powers, total)``, the rows less their segment's max (``-inf`` in a segment without a
    finite one), whether it is finite, ``exp(shifted)`` and its sum per segment; None where
    `src` is empty (the result is `src`). Called inside ``_renamed(function)``."""
    xp = _namespace(src, function)
    _need_floating(xp, src, function)
    call = _Call(function, src, index, dim, None, dim_size)
    layout = call.layout
    if not math.prod(call.shape):
        return None
    shifted, finite, _, _ = _shifts(layout, layout.to_rows(src), True)
    powers = xp.exp(shifted)
    return xp, layout, shifted, finite, powers, layout.reduce(powers, segment_sum)


def scatter_softmax(src: Any, index: Any, dim: int = -1, dim_size: int | None = None) -> Any:
    """``torch_scatter.scatter_softmax``: ``exp(src - max) / sum(exp(src - max))`` over each
    segment, `src`'s shape (the max as ``scatter_max`` gives it: 0 for a segment of ``-inf``
    only, whose values are then NaN, as they are in a segment holding ``inf`` or NaN)."""
    function = "scatter_softmax"
    with _renamed(function):
        found = _exp_sums(function, src, index, dim, dim_size)
        if found is None:
            return src
        xp, layout, _, finite, powers, total = found
        nan = ~finite | (total == 0)  # inf - inf, NaN, 0 / 0: NaN throughout, as in torch
        total = xp.where(nan, xp.ones_like(total), total)
        result = xp.where(
            layout.gather_rows(nan), xp.full_like(powers, float("nan")),
            powers / layout.gather_rows(total),
        )  # fmt: skip
        return layout.from_rows(result)


def scatter_log_softmax(src: Any, index: Any, dim: int = -1, eps: float = 1e-12,
                        dim_size: int | None = None) -> Any:  # fmt: skip
    """``torch_scatter.scatter_log_softmax``: ``(src - max) - log(sum(exp(src - max)) + eps)``
    over each segment, `src`'s shape (NaN throughout a segment holding ``inf`` or NaN)."""
    function = "scatter_log_softmax"
    with _renamed(function):
        found = _exp_sums(function, src, index, dim, dim_size)
        if found is None:
            return src
        xp, layout, shifted, finite, _, total = found
        norm = xp.where(finite, xp.log(total + eps), xp.zeros_like(total))
        result = shifted - layout.gather_rows(norm)
        nan = layout.gather_rows(~finite)
        return layout.from_rows(xp.where(nan, xp.full_like(shifted, float("nan")), result))


def _nan_to_num(xp: Any, x: Any) -> Any:
    """PyTorch's ``nan_to_num(x, neginf=0.0)``: NaN and ``-inf`` 0, ``inf`` the largest."""
    largest = float(xp.finfo(x.dtype).max)
    x = xp.where(xp.isnan(x), xp.zeros_like(x), x)
    x = xp.where(x == float("inf"), xp.full_like(x, largest), x)
    return xp.where(x == -float("inf"), xp.zeros_like(x), x)


def scatter_logsumexp(src: Any, index: Any, dim: int = -1, out: Any = None,
                      dim_size: int | None = None, eps: float = 1e-12) -> Any:  # fmt: skip
    """``torch_scatter.scatter_logsumexp``: ``log(sum(exp(src - max)) + eps) + max`` of each
    segment, with ``exp(out - max)`` added to the sum where `out` is given, and
    ``nan_to_num(neginf=0)`` last: an empty segment is 0, one holding ``inf`` the dtype's
    largest value."""
    function = "scatter_logsumexp"
    with _renamed(function):
        xp = _namespace(src, function)
        _need_floating(xp, src, function)
        call = _Call(function, src, index, dim, out, dim_size)
        layout = call.layout
        rows = layout.to_rows(src)
        if math.prod(call.shape):
            shifted, finite, shift, largest = _shifts(layout, rows, False)
            shifted = xp.where(xp.isnan(shifted), xp.full_like(shifted, -float("inf")), shifted)
            total = layout.reduce(xp.exp(shifted), segment_sum)
        else:
            total = xp.zeros(layout.group_shape, dtype=src.dtype, device=device_for_new(src))
            finite = xp.zeros(layout.group_shape, dtype=xp.bool, device=device_for_new(src))
            shift, largest = xp.zeros_like(total), xp.full_like(total, -float("inf"))
        if out is not None:
            kept = layout.to_groups(out)
            total = total + xp.exp(xp.where(finite, kept - shift, xp.zeros_like(kept)))
        value = xp.log(total + eps) + shift
        # an infinite max: inf gives log(eps) + inf, -inf (and an empty segment) -inf
        extreme = xp.where(largest == float("inf"), largest, xp.full_like(largest, -float("inf")))
        value = xp.where(finite, value, extreme)
        return layout.from_groups(_nan_to_num(xp, value))


def scatter_std(src: Any, index: Any, dim: int = -1, out: Any = None,
                dim_size: int | None = None, unbiased: bool = True) -> Any:  # fmt: skip
    """``torch_scatter.scatter_std``: ``sqrt(sum((src - mean)**2) / (max(count - 1, 1) +
    1e-6))`` of each segment (``max(count, 1) + 1e-6`` with ``unbiased=False``), the squares
    added to `out` where given: an empty segment is 0."""
    function = "scatter_std"
    with _renamed(function):
        xp = _namespace(src, function)
        if not _floating(xp, src):
            src = xp.astype(src, xp.__array_namespace_info__().default_dtypes(
                device=device_for_new(src))["real floating"])  # fmt: skip
        call = _Call(function, src, index, dim, out, dim_size)
        layout = call.layout
        if not math.prod(call.shape):
            total = _empty_result(xp, layout.out_shape, out, src)
            return xp.sqrt(total / (1 + 1e-6))
        rows = layout.to_rows(src)
        sums = layout.from_groups(layout.reduce(rows, segment_sum))
        count = _mean_count(call, sums)
        mean = layout.to_groups(sums / count)
        centred = rows - layout.gather_rows(mean)
        squares = layout.from_groups(layout.reduce(centred * centred, segment_sum))
        if out is not None:
            squares = out + squares
        if unbiased:
            count = count - 1
            count = xp.where(count < 1, xp.ones_like(count), count)
        return xp.sqrt(squares / (count + 1e-6))
