"""Dask: segment reductions, and the scatters' reductions into a small target, as dense
partials combined in a tree (the plan of ``da.reduction``, ``da.bincount`` and flox's
"map-reduce"), where the result is small enough for one task to hold.

Nothing here computes: every function adds tasks to a graph. The tasks run on NumPy blocks,
with NumPy's ``ufunc.at`` (which combines duplicates in one pass, faster than a sort).

The plan by size, from static sizes only (``plan_of``):

- **partial**: where one partial, ``num_segments`` x one inner block of the data (and the
  int64 counts of a mean), takes at most :func:`partial_limit` bytes (by default a quarter
  of Dask's ``array.chunk-size``: 32 MiB of the default 128 MiB; the Dask config key
  ``portagather.segment-partial-bytes`` sets it). Each data block reduces its rows into a
  partial of the segments its valid ids span (all of them for ids in no order, a few for
  sorted ids), with the rows' count per segment in the same pass for a mean; FAN_IN
  partials are combined per task, in a tree; the root becomes the result. No task holds
  more than one data block, its ids and one partial (a combining task: FAN_IN partials).
- **sorted** (``sorted_segments``, below): a result larger than that and ids promised
  sorted (``indices_are_sorted=True``). Each chunk reduces its rows to one entry per run of
  equal ids (no sort, and never more entries than rows), and only those entries travel to
  the result's blocks along the segments (Dask's automatic chunk size).
- **routed** (``dask_scatter_routes``): a result larger than that, ids in no promised
  order. Rows travel to the result's blocks, so no task ever holds the whole result.

The graphs' task names say which plan runs::

    segment-partial[i..., j...]    data block (i..., j...) and its ids: a partial (lo, values,
                                   counts, the first bad id under "error")
    segment-combine[level, g, j...]  up to FAN_IN partials as one
    segment-<reduce>[0, j...]      the result's block j (inner block j of the data); it raises
                                   the first bad id under "error"
    segment-count[0]               the rows per segment (a mean, the compat front ends)

the sorted plan's ``segment-sorted-partial``, ``segment-sorted-piece`` and
``segment-sorted-combine`` (below), the routed plan's ``pg-scatter-split`` and so on,

and, for a scatter into a small Dask target, ``scatter-partial``, ``scatter-combine`` and
``scatter-out`` (one task per target block: the block combined with its part of the root).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph
from dask.utils import parse_bytes

from .._arrays import dtype_kind, reduction_identity
from .._errors import BadIndex
from .dask_routes import block_starts
from .dask_scatter_routes import FAN_IN
from .numpy import UFUNCS

#: The Dask config key that sets the largest partial of the partial plan, in bytes.
PARTIAL_BYTES_KEY = "portagather.segment-partial-bytes"

#: (lowest valid id, values over [lo, lo + len), counts or None, first bad or None); values
#: None where the block had no valid row.
Partial = tuple[int, Any, Any, Any]


#: The result's task name by the scatter reduction.
_NAMES = {"add": "sum", "multiply": "prod"}


def partial_limit() -> int:
    """The largest partial (bytes) of the partial plan: the config key
    ``portagather.segment-partial-bytes`` where set, else a quarter of Dask's
    ``array.chunk-size`` (so that a combining task's FAN_IN partials are one chunk)."""
    given = dask.config.get(PARTIAL_BYTES_KEY, None)
    if given is not None:
        return int(parse_bytes(given) if isinstance(given, str) else given)
    return int(parse_bytes(dask.config.get("array.chunk-size"))) // FAN_IN


def plan_of(segments: int, inner_chunks: tuple[tuple[float, ...], ...], dtype: Any,
            counting: bool) -> str:  # fmt: skip
    """``"partial"`` or ``"routed"``, from the size of one partial: `segments` x the largest
    inner block (data's chunks on the axes after the ids') x the itemsize, and 8 bytes per
    segment for the counts."""
    inner = math.prod(max(c) for c in inner_chunks)  # (a Dask axis has one chunk at least)
    size = segments * inner * np.dtype(dtype).itemsize + (8 * segments if counting else 0)
    return "partial" if size <= partial_limit() else "routed"


@dataclass(frozen=True)
class _Reduction:
    """What the tasks of one partial plan need to know; small and picklable."""

    segments: int
    reduce: str  # the scatter reduction: add, multiply, max, min
    identity: int | float | bool
    #: The result's dtype by name: a dtype unpickled on a worker is a copy, not NumPy's own
    #: instance, and ``ufunc.at`` into an array of that copy leaves its fast loop.
    dtype_name: str
    policy: str  # error, ignore, clip, wrap, unchecked
    counting: bool
    report: BadIndex | None
    ids_ndim: int

    @property
    def dtype(self) -> Any:
        return dtype_named(self.dtype_name)


def dtype_named(name: str) -> Any:
    """NumPy's own instance of the dtype that `name` (``np.dtype(...).str``, or the name of
    an ``ml_dtypes`` type such as ``"bfloat16"``, whose ``str`` is only ``"<V2"``) stands for:
    ``ml_dtypes`` registers its names with NumPy when imported, which a worker has not done."""
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


def dtype_name(dtype: Any) -> str:
    """The name :func:`dtype_named` takes back: NumPy's ``str``, or an ``ml_dtypes`` name."""
    dtype = np.dtype(dtype)
    return str(dtype.str if dtype.kind != "V" else dtype.name)


def segment_partials(
    data: Any, ids: Any, segments: int, reduce: str, identity: int | float | bool, policy: str,
    report: BadIndex | None, counting: bool, prefix: str = "segment",
) -> tuple[Any, Any]:  # fmt: skip
    """The partial plan: the reduction of `data`'s rows into `segments` by `ids` (a leading
    part of data's shape), and the rows per segment where `counting` (else None)."""
    k = ids.ndim
    ids = ids.rechunk(data.chunks[:k])
    spec = _Reduction(segments, reduce, identity, dtype_name(data.dtype), policy, counting,
                      report, k)  # fmt: skip
    token = tokenize(data, ids, spec)
    partial, combine = f"{prefix}-partial-{token}", f"{prefix}-combine-{token}"
    out = f"{prefix}-{_NAMES.get(reduce, reduce)}-{token}"
    starts = [block_starts(c) for c in ids.chunks]
    outer = list(itertools.product(*(range(len(c)) for c in data.chunks[:k])))
    inner = list(itertools.product(*(range(len(c)) for c in data.chunks[k:])))
    graph: dict[Any, Any] = {}
    roots = []
    for j in inner:
        keys: list[Any] = []
        for i in outer:
            offset = tuple(starts[d][b] for d, b in enumerate(i))
            key = (partial, *i, *j)
            graph[key] = (_partial, (ids.name, *i), (data.name, *i, *j), spec, offset)
            keys.append(key)
        level = 0
        while len(keys) > 1:  # a tree: no task holds more than FAN_IN partials
            groups = [keys[g : g + FAN_IN] for g in range(0, len(keys), FAN_IN)]
            keys = []
            for g, group in enumerate(groups):
                graph[tuple([combine, level, g, *j])] = (_combine, group, spec)
                keys.append((combine, level, g, *j))
            level += 1
        roots.append(keys[0])
        shape = tuple(int(data.chunks[k + d][b]) for d, b in enumerate(j))
        graph[tuple([out, 0, *j])] = (_finish, keys[0], spec, shape)
    result_chunks = ((segments,), *data.chunks[k:])
    hlg = HighLevelGraph.from_collections(out, graph, dependencies=[data, ids])
    result: Any = da.Array(
        hlg, out, result_chunks, meta=np.empty((0,) * len(result_chunks), spec.dtype)
    )
    if not counting:
        return result, None
    count = f"{prefix}-count-{token}"
    graph = {(count, 0): (_counts, roots[0], spec)}  # every inner block's counts are alike
    hlg = HighLevelGraph.from_collections(count, graph, dependencies=[result])
    return result, da.Array(hlg, count, ((segments,),), meta=np.empty((0,), np.int64))


def _valid_ids(
    ids: Any, spec: _Reduction, shape: tuple[int, ...], offset: tuple[int, ...]
) -> tuple[Any, Any, Any, tuple[int, int] | None]:
    """The block's ids in ``[0, segments)`` as intp, under the policy: (ids, the mask of rows
    kept or None for all, the first bad (position in the whole ids, value) or None, and the
    smallest and largest id where every id was valid as given, else None)."""
    n = spec.segments
    lo, hi = int(ids.min()), int(ids.max())
    if lo >= 0 and hi < n:
        return ids.astype(np.intp, copy=False), None, None, (lo, hi)
    unsigned = ids.dtype.kind == "u"
    if spec.policy == "wrap":
        wrapped = (
            np.remainder(ids, np.uint64(n)) if unsigned else np.remainder(ids.astype(np.int64), n)
        )
        return wrapped.astype(np.intp), None, None, None
    if spec.policy == "clip":
        if unsigned:
            return np.minimum(ids, np.uint64(n - 1)).astype(np.intp), None, None, None
        return np.clip(ids.astype(np.int64), 0, n - 1).astype(np.intp), None, None, None
    bad = ids >= np.uint64(n) if unsigned else (ids < 0) | (ids >= n)
    first = None
    if spec.policy == "error":
        at = int(np.argmax(bad))
        local = np.unravel_index(at, shape) if shape else ()
        first = (tuple(o + int(p) for o, p in zip(offset, local, strict=True)), int(ids[at]))
    keep = ~bad
    return ids[keep].astype(np.intp), keep, first, None


def _partial(ids_block: Any, data_block: Any, spec: _Reduction, offset: tuple[int, ...]) -> Partial:
    """One data block's rows reduced into the segments ``[lo, hi]`` its valid ids span."""
    shape = np.shape(ids_block)
    # Aligned and C-contiguous: ufunc.at's fast loop needs both, and a block that arrived
    # from another worker may be unaligned (its buffer at any offset of the message).
    ids = np.require(ids_block, requirements=("A", "C")).reshape(-1)
    values = np.require(data_block, requirements=("A", "C"))
    values = values.reshape(ids.shape[0], *values.shape[spec.ids_ndim :])
    if not ids.size:
        return 0, None, None, None
    ids, keep, first, span = _valid_ids(ids, spec, shape, offset)
    if keep is not None:
        values = values[keep]
    if not ids.size:
        return 0, None, None, first
    lo, hi = span if span is not None else (int(ids.min()), int(ids.max()))
    if lo:
        ids = ids - lo
    out = np.full((hi - lo + 1, *values.shape[1:]), spec.identity, dtype=spec.dtype)
    with np.errstate(invalid="ignore"):  # a NaN propagates through minimum and maximum
        UFUNCS[spec.reduce].at(out, ids, values)
    counts = np.bincount(ids, minlength=hi - lo + 1) if spec.counting else None
    return lo, out, counts, first


def _combine(partials: list[Partial], spec: _Reduction) -> Partial:
    """Several partials as one, over the union of their segments."""
    bads = [p[3] for p in partials if p[3] is not None]
    first = min(bads) if bads else None
    present = [p for p in partials if p[1] is not None]
    if not present:
        return 0, None, None, first
    if len(present) == 1:
        return present[0][0], present[0][1], present[0][2], first
    lo = min(p[0] for p in present)
    hi = max(p[0] + p[1].shape[0] for p in present)
    values = np.full((hi - lo, *present[0][1].shape[1:]), spec.identity, dtype=spec.dtype)
    counts = np.zeros(hi - lo, dtype=np.int64) if spec.counting else None
    ufunc = UFUNCS[spec.reduce]
    with np.errstate(invalid="ignore"):
        for start, part, part_counts, _ in present:
            where = slice(start - lo, start - lo + part.shape[0])
            ufunc(values[where], part, out=values[where])
            if counts is not None:
                counts[where] += part_counts
    return lo, values, counts, first


def _raise_first_bad(root: Partial, spec: _Reduction) -> None:
    if root[3] is not None and spec.report is not None:
        spec.report.raise_at(*root[3])


def _finish(root: Partial, spec: _Reduction, inner: tuple[int, ...]) -> Any:
    """The root partial laid into the identity over every segment; under ``"error"`` the
    first bad id raises."""
    _raise_first_bad(root, spec)
    lo, values, _, _ = root
    if values is not None and lo == 0 and values.shape[0] == spec.segments:
        return values
    out = np.full((spec.segments, *inner), spec.identity, dtype=spec.dtype)
    if values is not None:
        out[lo : lo + values.shape[0]] = values
    return out


def _counts(root: Partial, spec: _Reduction) -> Any:
    _raise_first_bad(root, spec)
    lo, _, counts, _ = root
    out = np.zeros(spec.segments, dtype=np.int64)
    if counts is not None:
        out[lo : lo + counts.shape[0]] = counts
    return out


def scatter_partials(data: Any, flat: Any, updates: Any, reduce: str) -> Any:
    """`data` with `updates` combined by `reduce` at row-major flat positions `flat`
    (positions outside ``[0, data.size)`` dropped): the updates' chunks reduced into dense
    partials of the whole target, combined in a tree, and each target block combined with
    its part of the root."""
    size = math.prod(int(n) for n in data.shape)
    flat = flat.rechunk(updates.chunks)
    dtype = np.dtype(data.dtype)
    identity: Any = reduction_identity(np, reduce, dtype)
    if reduce == "add" and dtype_kind(np, dtype) in ("real floating", "complex floating"):
        # x + -0.0 is x for every x, -0.0 too, which a partial of +0.0 would make +0.0 where
        # no update lands (NumPy's scatter leaves such an element as it is).
        identity = complex(-0.0, -0.0) if dtype.kind == "c" else -0.0
    total, _ = segment_partials(
        updates.astype(data.dtype), flat, size, reduce, identity, "ignore", None, False, "scatter"
    )
    token = tokenize(data, total)
    out = f"scatter-out-{token}"
    starts = [block_starts(c) for c in data.chunks]
    graph: dict[Any, Any] = {}
    shape = tuple(int(n) for n in data.shape)
    for block in itertools.product(*(range(len(c)) for c in data.chunks)):
        where = tuple(
            slice(starts[d][b], starts[d][b] + int(data.chunks[d][b])) for d, b in enumerate(block)
        )
        task = (_apply_total, (data.name, *block), (total.name, 0), shape, where, reduce)
        graph[tuple([out, *block])] = task
    hlg = HighLevelGraph.from_collections(out, graph, dependencies=[data, total])
    return da.Array(hlg, out, data.chunks, meta=np.empty((0,) * data.ndim, data.dtype))


def _apply_total(block: Any, total: Any, shape: tuple[int, ...], where: tuple[slice, ...],
                 reduce: str) -> Any:  # fmt: skip
    part = np.asarray(total).reshape(shape)[where]
    with np.errstate(invalid="ignore"):
        return UFUNCS[reduce](np.asarray(block), part)


# The sorted plan: ids promised sorted (indices_are_sorted=True) and a result past the
# partial limit. Each chunk's rows are runs of equal ids, so each chunk reduces to one entry
# per run (never more entries than rows, whatever the ids' spread), and only those entries
# travel, split by the result's blocks along the segments:
#
#   segment-sorted-partial[i..., j...]   a data block's runs: (ids, values, counts, first bad)
#   segment-sorted-piece[i..., j..., b]  the entries of result block b
#   segment-sorted-combine[b, level, g, j...]  up to FAN_IN pieces as one, in chunk order
#   segment-<reduce>[b, j...]            result block b
#   segment-count[b]                     the rows per segment of block b (a mean)
#
# Ids that fall (moved by "wrap", or a broken promise) are sorted where they are met, so the
# result is right either way; kept promises cost no sort.

#: (ids, values, counts or None, first bad or None): one entry per id, ids non-decreasing.
Runs = tuple[Any, Any, Any, Any]


def sorted_segments(
    data: Any, ids: Any, segments: int, reduce: str, identity: int | float, policy: str,
    report: BadIndex, counting: bool, segment_chunks: tuple[int, ...],
) -> tuple[Any, Any]:  # fmt: skip
    """The sorted plan: the result in `segment_chunks` along the segments (data's chunks on
    the inner axes), and the rows per segment where `counting` (else None)."""
    k = ids.ndim
    ids = ids.rechunk(data.chunks[:k])
    spec = _Reduction(segments, reduce, identity, dtype_name(data.dtype), policy, counting,
                      report, k)  # fmt: skip
    token = tokenize(data, ids, spec, segment_chunks, "sorted")
    partial, piece = f"segment-sorted-partial-{token}", f"segment-sorted-piece-{token}"
    combine = f"segment-sorted-combine-{token}"
    out = f"segment-{_NAMES.get(reduce, reduce)}-{token}"
    count = f"segment-count-{token}"
    starts = [block_starts(c) for c in ids.chunks]
    bounds = list(zip(block_starts(segment_chunks), segment_chunks, strict=True))
    outer = list(itertools.product(*(range(len(c)) for c in data.chunks[:k])))
    inner = list(itertools.product(*(range(len(c)) for c in data.chunks[k:])))
    graph: dict[Any, Any] = {}
    counted: dict[Any, Any] = {}
    for j in inner:
        shape = tuple(int(data.chunks[k + d][b]) for d, b in enumerate(j))
        for i in outer:
            offset = tuple(starts[d][b] for d, b in enumerate(i))
            task = (_runs, (ids.name, *i), (data.name, *i, *j), spec, offset)
            graph[tuple([partial, *i, *j])] = task
            for b, (start, size) in enumerate(bounds):
                graph[tuple([piece, *i, *j, b])] = (_piece, (partial, *i, *j), start, size)
        for b, (start, size) in enumerate(bounds):
            keys: list[Any] = [tuple([piece, *i, *j, b]) for i in outer]
            level = 0
            while len(keys) > 1:  # in chunk order, so that the ids stay sorted
                groups = [keys[g : g + FAN_IN] for g in range(0, len(keys), FAN_IN)]
                keys = []
                for g, group in enumerate(groups):
                    graph[tuple([combine, b, level, g, *j])] = (_merge_runs, group, spec)
                    keys.append(tuple([combine, b, level, g, *j]))
                level += 1
            graph[tuple([out, b, *j])] = (_block_of_runs, keys[0], spec, start, size, shape)
            if counting and j == inner[0]:
                counted[(count, b)] = (_counts_of_runs, keys[0], spec, start, size)
    result_chunks = (tuple(segment_chunks), *data.chunks[k:])
    hlg = HighLevelGraph.from_collections(out, graph, dependencies=[data, ids])
    meta = np.empty((0,) * len(result_chunks), spec.dtype)
    result: Any = da.Array(hlg, out, result_chunks, meta=meta)
    if not counting:
        return result, None
    hlg = HighLevelGraph.from_collections(count, counted, dependencies=[result])
    return result, da.Array(hlg, count, (tuple(segment_chunks),), meta=np.empty((0,), np.int64))


def _runs(ids_block: Any, data_block: Any, spec: _Reduction, offset: tuple[int, ...]) -> Runs:
    """A data block's rows reduced per run of equal (valid) ids."""
    shape = np.shape(ids_block)
    ids = np.require(ids_block, requirements=("A", "C")).reshape(-1)
    values = np.require(data_block, requirements=("A", "C"))
    values = values.reshape(ids.shape[0], *values.shape[spec.ids_ndim :])
    empty = np.empty(0, np.intp)
    if not ids.size:
        return empty, values[:0], empty if spec.counting else None, None
    ids, keep, first, _ = _valid_ids(ids, spec, shape, offset)
    if keep is not None:
        values = values[keep]
    if not ids.size:
        return empty, values[:0], empty if spec.counting else None, first
    if _falls(ids):  # "wrap" moved some, or the promise is broken: sorted here
        order = np.argsort(ids, kind="stable")
        ids, values = ids[order], values[order]
    heads = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    with np.errstate(invalid="ignore"):
        reduced = UFUNCS[spec.reduce].reduceat(values, heads, axis=0).astype(spec.dtype)
    counts = np.diff(np.r_[heads, ids.size]) if spec.counting else None
    return ids[heads], reduced, counts, first


def _falls(ids: Any) -> bool:
    return bool(ids.size > 1 and (ids[1:] < ids[:-1]).any())


def _piece(runs: Runs, start: int, size: int) -> Runs:
    """The entries of `runs` in segments ``[start, start + size)``."""
    ids, values, counts, first = runs
    lo, hi = np.searchsorted(ids, [start, start + size])
    return ids[lo:hi], values[lo:hi], None if counts is None else counts[lo:hi], first


def _merge_runs(pieces: list[Runs], spec: _Reduction) -> Runs:
    """Pieces of consecutive chunks as one: the entries of an id shared across a chunk
    boundary combined."""
    bads = [p[3] for p in pieces if p[3] is not None]
    first = min(bads) if bads else None
    ids = np.concatenate([p[0] for p in pieces])
    values = np.concatenate([p[1] for p in pieces])
    counts = np.concatenate([p[2] for p in pieces]) if spec.counting else None
    if not ids.size:
        return ids, values, counts, first
    if _falls(ids):  # runs of one id in chunks apart ("wrap"; a broken promise)
        order = np.argsort(ids, kind="stable")
        ids, values = ids[order], values[order]
        counts = None if counts is None else counts[order]
    heads = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    if heads.size == ids.size:
        return ids, values, counts, first
    with np.errstate(invalid="ignore"):
        values = UFUNCS[spec.reduce].reduceat(values, heads, axis=0).astype(spec.dtype)
    if counts is not None:
        counts = np.add.reduceat(counts, heads)
    return ids[heads], values, counts, first


def _block_of_runs(
    runs: Runs, spec: _Reduction, start: int, size: int, inner: tuple[int, ...]
) -> Any:
    if runs[3] is not None and spec.report is not None:
        spec.report.raise_at(*runs[3])
    out = np.full((size, *inner), spec.identity, dtype=spec.dtype)
    out[runs[0] - start] = runs[1]
    return out


def _counts_of_runs(runs: Runs, spec: _Reduction, start: int, size: int) -> Any:
    if runs[3] is not None and spec.report is not None:
        spec.report.raise_at(*runs[3])
    out = np.zeros(size, dtype=np.int64)
    out[runs[0] - start] = runs[2]
    return out
