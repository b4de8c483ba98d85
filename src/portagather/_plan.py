"""Data-only plans: what one gather reads, from static shapes and the call's integer arguments.

A plan holds shapes, axes, the index depth and how to describe a bad index; no arrays, no
namespace, no functions. Plans are kept per call signature in one place (the shapes and the
integer arguments: ``_operands.plan_for``; a keyed call's whole route, with its plan, by
``_routes.call_key``), so a call in a loop pays for the shape arithmetic once.
Every argument error about shapes and axes is raised here, as a ``ValueError`` naming the
argument as the caller wrote it and its valid range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

from ._errors import BadIndex

Shape = tuple[int, ...]


def symbolic_size(size: object) -> bool:
    """Whether `size` is symbolic: a ``torch.SymInt`` (a dynamic dimension under
    ``torch.export``), which plans keep as it is (its arithmetic stays symbolic) and no cache
    keys (it cannot be hashed). Named, not imported: the plans import no backend."""
    kind = type(size)
    return kind.__name__ == "SymInt" and kind.__module__ == "torch"


def row_major_strides(shape: Shape) -> Shape:
    """The row-major (C order) strides of `shape`, in elements."""
    return tuple(math.prod(shape[k + 1 :]) for k in range(len(shape)))


@dataclass(frozen=True)
class GatherPlan:
    """One gather, planned from static shapes.

    kind
        ``"axes"``: index vectors (``gather_nd``) or single indices (``gather``) select slices
        along ``depth`` consecutive axes of the data starting at ``axis``, the first
        ``batch_dims`` axes shared with the index. ``"along"``: each index element selects
        one element along ``axis``, the other axes matched position by position
        (``gather_d``, ``take_along_axis``).
    axis_sizes
        Length of the data axis that each index component addresses.
    vector
        Whether the components lie along the index's last axis (``gather_nd``).
    allow_negative
        Whether ``[-n, 0)`` counts from the end.
    out_shape
        Shape of the result.
    mask_shape
        Shape the per-index mask of ``"ignore"`` takes to broadcast against the result.
    largest_flat
        Largest flat position the gather may read; it sets the index width.
    data_block
        ``"along"`` only: the leading block of the data that is read (``gather_d`` with a
        smaller index), or None for all of it.
    report
        How a bad index is described.
    """

    kind: Literal["axes", "along"]
    axis_sizes: Shape
    vector: bool
    allow_negative: bool
    out_shape: Shape
    mask_shape: Shape
    largest_flat: int
    batch_dims: int
    axis: int
    depth: int
    data_block: Shape | None
    report: BadIndex

    #: Row-major strides of the components within the gathered block.
    strides: Shape = field(init=False, repr=False, compare=False)
    #: Whether the result is empty (nothing is read).
    reads_nothing: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Worked out once, with the (cached) plan: a call in a loop only reads them.
        object.__setattr__(self, "strides", row_major_strides(self.axis_sizes))
        object.__setattr__(self, "reads_nothing", math.prod(self.out_shape) == 0)

    def read_block(self, x: Any) -> Any:
        """The part of data array `x` that the gather reads: its leading `data_block`, or all
        of it."""
        if self.data_block is None:
            return x
        return x[tuple(slice(0, size) for size in self.data_block)]


def _normalize_axis(axis: int, ndim: int, name: str, data_name: str) -> int:
    if not -ndim <= axis < ndim:
        msg = (
            f"{name} must be in [-{data_name}.ndim, {data_name}.ndim) = [{-ndim}, {ndim}); "
            f"got {axis}"
        )
        raise ValueError(msg)
    return axis % ndim


def _same_rank(shape: Shape, index_shape: Shape, index_name: str) -> int:
    """The rank of x, which the elementwise operations' index must share."""
    if len(index_shape) != len(shape):
        msg = (
            f"{index_name} must have the same rank as x; got x.ndim = {len(shape)} and "
            f"{index_name}.ndim = {len(index_shape)}"
        )
        raise ValueError(msg)
    return len(shape)


def _check_batch_shape(data_shape: Shape, index_shape: Shape, batch_dims: int) -> None:
    if data_shape[:batch_dims] != index_shape[:batch_dims]:
        msg = (
            f"the first batch_dims={batch_dims} dimensions of params and indices must be "
            f"equal; got params.shape[:{batch_dims}] = {data_shape[:batch_dims]} and "
            f"indices.shape[:{batch_dims}] = {index_shape[:batch_dims]}"
        )
        raise ValueError(msg)


def plan_gather_nd(shape: Shape, index_shape: Shape, batch_dims: int) -> GatherPlan:
    rank, index_rank = len(shape), len(index_shape)
    if index_rank < 1:
        msg = (
            "indices must have at least 1 dimension (index vectors lie along its last axis); "
            "got a 0-d array"
        )
        raise ValueError(msg)
    if not 0 <= batch_dims < index_rank:
        msg = f"batch_dims must be in [0, indices.ndim) = [0, {index_rank}); got {batch_dims}"
        raise ValueError(msg)
    depth = index_shape[-1]
    if batch_dims + depth > rank:
        msg = (
            f"indices.shape[-1] (the index depth) must be at most params.ndim - batch_dims = "
            f"{rank} - {batch_dims} = {rank - batch_dims}; got {depth}"
        )
        raise ValueError(msg)
    _check_batch_shape(shape, index_shape, batch_dims)
    b = batch_dims
    batch, grid, inner = shape[:b], index_shape[b:-1], shape[b + depth :]
    return GatherPlan(
        kind="axes",
        axis_sizes=shape[b : b + depth],
        vector=True,
        allow_negative=False,
        out_shape=batch + grid + inner,
        mask_shape=batch + grid + (1,) * len(inner),
        largest_flat=math.prod(shape) - 1,
        batch_dims=b,
        axis=b,
        depth=depth,
        data_block=None,
        report=BadIndex("indices", True, "params", shape, b, depth),
    )


def plan_gather(shape: Shape, index_shape: Shape, axis: int | None, batch_dims: int) -> GatherPlan:
    rank, index_rank = len(shape), len(index_shape)
    if not -index_rank <= batch_dims <= index_rank:
        msg = (
            f"batch_dims must be in [-indices.ndim, indices.ndim] = [{-index_rank}, "
            f"{index_rank}]; got {batch_dims}"
        )
        raise ValueError(msg)
    # As in TensorFlow, axis defaults to batch_dims as given, before either is normalised.
    axis = batch_dims if axis is None else axis
    b = batch_dims + index_rank if batch_dims < 0 else batch_dims
    axis = _normalize_axis(axis, rank, "axis", "params")
    if b > axis:
        msg = f"batch_dims must not exceed axis; got batch_dims={b}, axis={axis}"
        raise ValueError(msg)
    _check_batch_shape(shape, index_shape, b)
    batch, outer, grid, inner = shape[:b], shape[b:axis], index_shape[b:], shape[axis + 1 :]
    return GatherPlan(
        kind="axes",
        axis_sizes=(shape[axis],),
        vector=False,
        allow_negative=False,
        out_shape=batch + outer + grid + inner,
        mask_shape=batch + (1,) * len(outer) + grid + (1,) * len(inner),
        largest_flat=math.prod(shape) - 1,
        batch_dims=b,
        axis=axis,
        depth=1,
        data_block=None,
        report=BadIndex("indices", False, "params", shape, axis),
    )


def plan_gather_d(shape: Shape, index_shape: Shape, dim: int) -> GatherPlan:
    rank = _same_rank(shape, index_shape, "index")
    dim = _normalize_axis(dim, rank, "dim", "x")
    too_big = [d for d in range(rank) if d != dim and index_shape[d] > shape[d]]
    if too_big:
        msg = (
            f"index.shape[d] must not exceed x.shape[d] for every d != dim={dim}; got "
            f"index.shape = {index_shape} and x.shape = {shape} (d = {too_big[0]})"
        )
        raise ValueError(msg)
    block = (*index_shape[:dim], shape[dim], *index_shape[dim + 1 :])
    return GatherPlan(
        kind="along",
        axis_sizes=(shape[dim],),
        vector=False,
        allow_negative=True,
        out_shape=index_shape,
        mask_shape=index_shape,
        largest_flat=math.prod(block) - 1,
        batch_dims=0,
        axis=dim,
        depth=1,
        data_block=None if block == shape else block,
        report=BadIndex("index", False, "x", shape, dim, allow_negative=True, axis_word="dim"),
    )


def plan_take_along_axis(shape: Shape, index_shape: Shape, axis: int) -> GatherPlan:
    rank = _same_rank(shape, index_shape, "indices")
    axis = _normalize_axis(axis, rank, "axis", "x")
    out_shape = []
    for d, (size, index_size) in enumerate(zip(shape, index_shape, strict=True)):
        if d == axis:
            out_shape.append(index_size)
        elif size == index_size or index_size == 1:
            out_shape.append(size)
        elif size == 1:
            out_shape.append(index_size)
        else:
            msg = (
                f"x and indices must broadcast against each other on every axis but "
                f"axis={axis}; got x.shape = {shape} and indices.shape = {index_shape} "
                f"(axis {d})"
            )
            raise ValueError(msg)
    return GatherPlan(
        kind="along",
        axis_sizes=(shape[axis],),
        vector=False,
        allow_negative=True,
        out_shape=tuple(out_shape),
        mask_shape=index_shape,
        largest_flat=math.prod(shape) - 1,
        batch_dims=0,
        axis=axis,
        depth=1,
        data_block=None,
        report=BadIndex("indices", False, "x", shape, axis, allow_negative=True),
    )


# -- the segment reductions: the plan of the scatter behind them, and their bad values


@dataclass(frozen=True)
class SegmentIds(BadIndex):
    """A bad segment id: ``segment_ids[3] = 7 is out of range [0, 4) (num_segments = 4)``.

    `data_shape` is the result's shape, whose axis 0 has ``num_segments`` entries.
    """

    def valid_range_text(self) -> str:
        n = self.data_shape[0]
        return f"is out of range [0, {n}) (num_segments = {n})"

    def empty_axis_text(self, scatter: bool = False) -> str:  # noqa: ARG002 (always a scatter)
        return (
            f"num_segments = 0, so every value of {self.index_name} is out of range; only "
            'bad_indices="ignore" (which drops every row) accepts that'
        )


@dataclass(frozen=True)
class BinValues(SegmentIds):
    """A bad value of ``bincount``'s `x`: ``x[3] = -1 is out of range [0, 4) (the result's
    length is 4)``."""

    def valid_range_text(self) -> str:
        n = self.data_shape[0]
        return f"is out of range [0, {n}) (the result's length is {n})"


def plan_segments(
    shape: tuple[int, ...], index_shape: tuple[int, ...], ids_name: str = "segment_ids"
) -> GatherPlan:  # fmt: skip
    """The plan of a segment reduction into a result of `shape` (``(num_segments,) +
    inner``) at ids of `index_shape`: ``gather(result, ids, axis=0)``'s, whose result has the
    data's shape, with a bad index described as a segment id (`ids_name` ``"x"``: as a value
    of ``bincount``'s `x`)."""
    plan = plan_gather(shape, index_shape, 0, 0)
    report = SegmentIds if ids_name == "segment_ids" else BinValues
    return replace(plan, report=report(ids_name, False, "the result", shape, 0))


@dataclass(frozen=True)
class Offsets(BadIndex):
    """A bad CSR offset: outside ``[0, n]`` or smaller than the one before it; `data_shape`
    is the data's shape and `axis` the axis the offsets split."""

    def valid_range_text(self) -> str:
        n = self.data_shape[self.axis]
        return (
            f"is outside [0, {n}] or smaller than the offset before it (offsets must be "
            f"non-decreasing along their last axis, in [0, data.shape[{self.axis}]] = [0, {n}])"
        )


# -- index arrays given as parts: one per leading axis of the data, broadcast together


@dataclass(frozen=True)
class IndexParts:
    """A tuple of index arrays, one per leading axis of the data, broadcast together
    (PyTorch's ``index_put``), planned from their shapes: the index of vectors they make,
    stacked along a new last axis, of shape ``shape + (depth,)``.

    `same_shape` says the parts need no broadcast; `dtype` is the integer dtype they are cast
    to where their dtypes differ (None where they have one dtype), which the checked call sets
    among the dtypes (``_routes.parts_call``)."""

    shape: Shape
    depth: int
    same_shape: bool
    dtype: Any = None

    @property
    def index_shape(self) -> Shape:
        """The shape of the index of vectors the parts make."""
        return (*self.shape, self.depth)


def plan_index_parts(
    ndim: int, part_shapes: list[Shape], data_name: str, index_name: str
) -> IndexParts:  # fmt: skip
    """The plan of `part_shapes` (static), index arrays of the leading axes of data of rank
    `ndim`: at most `ndim` of them, whose shapes broadcast together (a ValueError naming
    `index_name` otherwise)."""
    depth = len(part_shapes)
    if depth > ndim:
        msg = f"{index_name} must index at most {data_name}.ndim = {ndim} axes; got {depth}"
        raise ValueError(msg)
    first = part_shapes[0]
    same_shape = all(s == first for s in part_shapes)  # the common call: nothing to broadcast
    broadcast = first
    if not same_shape:
        try:
            broadcast = _broadcast_shapes(part_shapes)
        except ValueError:
            msg = f"{index_name} must be arrays that broadcast together; got shapes {part_shapes}"
            raise ValueError(msg) from None
    return IndexParts(broadcast, depth, same_shape)


def _broadcast_shapes(shapes: list[Shape]) -> Shape:
    """The shape `shapes` broadcast to (the array API's rule), or a ValueError."""
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        sizes = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(shapes)
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# -- segments given as lengths, or at a named axis (PyTorch's ``segment_reduce``)


@dataclass(frozen=True, eq=False)
class SegmentsGiven:
    """How a front end gives ``segment_csr``'s checked call (``_routes.csr_call``) its
    segments: as `lengths` (each segment's number of rows, ``data.shape[:k] + (S,)``; PyTorch's
    ``lengths=``) rather than offsets, split at the `axis` the caller names (checked against
    the rank of the lengths or offsets: :func:`check_segments_axis`; None: the axis they
    imply), the data's dtype checked as `reduce`'s (the caller's reduction, which it may make
    of the core's: a mean of a sum and a count). The core makes the offsets of valid lengths
    (:class:`Lengths` describes a bad one). Compared and hashed by identity, as an
    ``Operation``: a front end keeps one per form (a call's key holds it)."""

    lengths: bool
    axis: Any
    reduce: str

    @property
    def name(self) -> str:
        """The argument's name in messages."""
        return "lengths" if self.lengths else "offsets"


def check_segments_axis(ndim: int, given_ndim: int, axis: int, name: str) -> int:
    """`axis` (an int, or what the caller wrote) normalised, or a ValueError: in
    ``[-ndim, ndim)`` for data of rank `ndim`, and the last axis of the lengths or offsets
    (`name`, of rank `given_ndim`)."""
    if not isinstance(axis, int) or not -ndim <= axis < ndim:
        msg = f"axis must be an int in [-data.ndim, data.ndim); got {axis!r}"
        raise ValueError(msg)
    if axis % ndim != given_ndim - 1:
        msg = (
            f"axis must be the last axis of {name} ({name}.ndim - 1 = {given_ndim - 1}); got {axis}"
        )
        raise ValueError(msg)
    return axis % ndim


@dataclass(frozen=True)
class Lengths(BadIndex):
    """A bad entry of `lengths` (ValueError): a negative length (its value), or a row's last
    entry where the row does not add up to ``data_shape[0]`` (the row's total)."""

    error: ClassVar[type[Exception]] = ValueError

    def text(self, position: tuple[Any, ...], value: object) -> str:  # noqa: ARG002
        if isinstance(value, int) and value < 0:
            return "lengths contains negative value!"
        return lengths_total_text(self.data_shape[0], value)


def lengths_total_text(n: int, total: object) -> str:
    """The message of lengths whose row adds up to `total`, not the data's length `n`."""
    return (
        f"lengths must add up to data.shape[axis] = {n} along their last axis (unless "
        f"unsafe=True); got a total of {total}"
    )
