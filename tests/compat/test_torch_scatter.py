"""``portagather.compat.torch_scatter`` against plain Python loops in float64 written from
torch_scatter 2.1.2's source (``torch_scatter/*.py`` and its CPU kernels, ``csrc/cpu``):
every function, ``dim`` 0, 1 and -1, index broadcasting, ``out``, ``dim_size``, empty
segments, ties, NaN, integer data, PyTorch's gradients against finite differences, and the
same calls on NumPy, PyTorch, JAX, Dask, array-api-strict and ndonnx arrays.

torch_scatter itself has no wheel for the installed PyTorch, so the references are loops
that follow its kernels step by step (the order of the updates, the strict comparisons of
min and max, the ``masked_fill`` of the untouched start values, the composite functions'
``eps``), not calls of portagather."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from portagather.compat import torch_scatter as ts
from portagather.conformance.backends import load_backend

# -- the references --------------------------------------------------------------------------


def ref_broadcast(index, shape, dim):
    """torch_scatter's ``broadcast(index, src, dim)``."""
    index = np.asarray(index)
    dim = dim % len(shape)
    if index.ndim == 1:
        index = index.reshape((1,) * dim + index.shape)
    index = index.reshape(index.shape + (1,) * (len(shape) - index.ndim))
    return np.broadcast_to(index, shape)


def _limits(dtype, reduce):
    if np.issubdtype(dtype, np.floating):
        info = np.finfo(dtype)
        return float(info.max) if reduce == "min" else float(info.min)
    info = np.iinfo(dtype)
    return int(info.max) if reduce == "min" else int(info.min)


def ref_scatter(src, index, dim=-1, out=None, dim_size=None, reduce="sum"):
    """The loop of ``scatter_cpu`` (``scatter_sum``'s ``scatter_add_`` for the sum), with
    ``scatter_mean``'s count; returns ``(out, arg)``."""
    src = np.asarray(src)
    dim = dim % src.ndim
    idx = ref_broadcast(index, src.shape, dim)
    if out is not None:
        n = out.shape[dim]
    elif dim_size is not None:
        n = dim_size
    else:
        n = 0 if idx.size == 0 else int(idx.max()) + 1
    shape = list(src.shape)
    shape[dim] = n
    size = src.shape[dim]
    arg = np.full(shape, size, dtype=np.int64)
    count = np.zeros(shape, dtype=np.int64)
    if src.size == 0:
        return (np.zeros(shape, src.dtype) if out is None else out.copy()), arg
    kind = {"sum": "sum", "mean": "sum", "mul": "mul", "min": "min", "max": "max"}[reduce]
    start = {"sum": 0, "mul": 1}.get(kind)
    if start is None:
        start = _limits(src.dtype, kind)
    res = np.full(shape, start, dtype=object) if out is None else out.astype(object)
    for pos in np.ndindex(*src.shape):
        target = list(pos)
        target[dim] = int(idx[pos])
        target = tuple(target)
        value = src[pos].item()
        count[target] += 1
        if kind == "sum":
            res[target] = res[target] + value
        elif kind == "mul":
            res[target] = res[target] * value
        elif (kind == "min" and value < res[target]) or (kind == "max" and value > res[target]):
            res[target] = value
            arg[target] = pos[dim]
    if out is None and kind in ("min", "max"):
        for pos in np.ndindex(*res.shape):
            if res[pos] == start:
                res[pos] = 0
    if reduce == "mean":  # the sum in src's dtype (wrapping), then divided
        res = _cast(res, src.dtype).astype(object)
        count = ref_count(index, res.shape, dim)
        for pos in np.ndindex(*res.shape):
            c = max(count[pos], 1)
            if np.issubdtype(src.dtype, np.floating):
                res[pos] = res[pos] / c
            else:
                res[pos] = res[pos] // c
    return _cast(res, src.dtype), arg


def ref_count(index, shape, dim):
    """``scatter_mean``'s and ``scatter_std``'s count: ones of `index`'s own shape scattered
    along `dim` (its last axis where it has no axis `dim`), broadcast against the result of
    `shape`: for an index broadcast along `dim` itself, fewer than the segment's elements."""
    index = np.asarray(index)
    count_dim = dim if index.ndim > dim else index.ndim - 1
    ones = np.ones(index.shape, dtype=np.int64)
    count = ref_scatter(ones, index, count_dim, dim_size=shape[dim])[0]
    return ref_broadcast(count, shape, dim)


def _cast(values, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        span = int(info.max) - int(info.min) + 1
        wrapped = [((int(v) - int(info.min)) % span) + int(info.min) for v in values.ravel()]
        return np.array(wrapped, dtype=dtype).reshape(values.shape)
    return np.array(values.ravel().tolist(), dtype=np.float64).astype(dtype).reshape(values.shape)


def _trunc(total, count):
    return total // count if total >= 0 else -((-total) // count)


def ref_segment_coo(src, index, out=None, dim_size=None, reduce="sum"):
    """``segment_coo_cpu``: `index` expanded to ``src.shape[:index.dim()]``, sorted; the
    mean truncates integers (C++ ``/``)."""
    src, index = np.asarray(src), np.asarray(index)
    dim = index.ndim - 1
    index = np.broadcast_to(index, src.shape[: index.ndim])
    if reduce != "mean":
        return ref_scatter(src, index, dim, out, dim_size, reduce)
    total, _ = ref_scatter(src, index, dim, out, dim_size, "sum")
    count = ref_scatter(np.ones(src.shape, np.int64), index, dim, None, total.shape[dim], "sum")[0]
    res = total.astype(object)
    for pos in np.ndindex(*res.shape):
        c = max(int(count[pos]), 1)
        if np.issubdtype(src.dtype, np.floating):
            res[pos] = res[pos] / c
        else:
            res[pos] = _trunc(int(res[pos]), c)
    return _cast(res, src.dtype), None


def ref_segment_csr(src, indptr, reduce="sum"):
    """``segment_csr_cpu``: each segment from its start value; the write of ``Reducer``."""
    src, indptr = np.asarray(src), np.asarray(indptr)
    dim = indptr.ndim - 1
    indptr = np.broadcast_to(indptr, src.shape[:dim] + indptr.shape[-1:])
    segments = max(indptr.shape[-1] - 1, 0)
    shape = list(src.shape)
    shape[dim] = segments
    res = np.zeros(shape, dtype=object)
    arg = np.full(shape, src.shape[dim], dtype=np.int64)
    if src.size == 0:
        return np.zeros(shape, src.dtype), arg
    kind = "sum" if reduce == "mean" else reduce
    for lead in np.ndindex(*src.shape[:dim]):
        for s in range(segments):
            lo, hi = int(indptr[lead + (s,)]), int(indptr[lead + (s + 1,)])
            for inner in np.ndindex(*src.shape[dim + 1 :]):
                val = 0 if kind == "sum" else _limits(src.dtype, kind)
                a = None
                for e in range(lo, hi):
                    v = src[lead + (e,) + inner].item()
                    if kind == "sum":
                        val = val + v
                    elif (kind == "min" and v < val) or (kind == "max" and v > val):
                        val, a = v, e
                count = hi - lo
                target = lead + (s,) + inner
                if reduce == "mean":
                    c = max(count, 1)
                    is_float = np.issubdtype(src.dtype, np.floating)
                    val = (
                        val / c
                        if is_float
                        else _trunc(int(_cast(np.array([val]), src.dtype)[0]), c)
                    )
                if kind in ("min", "max"):
                    res[target] = val if count > 0 else 0
                    if a is not None:
                        arg[target] = a
                else:
                    res[target] = val
    return _cast(res, src.dtype), arg


def ref_gather_coo(src, index):
    src, index = np.asarray(src), np.asarray(index)
    dim = index.ndim - 1
    shape = list(src.shape)
    shape[dim] = index.shape[dim]
    res = np.zeros(shape, src.dtype)
    for pos in np.ndindex(*shape):
        source = list(pos)
        source[dim] = int(index[pos[: dim + 1]])
        res[pos] = src[tuple(source)]
    return res


def ref_gather_csr(src, indptr):
    src, indptr = np.asarray(src), np.asarray(indptr)
    dim = indptr.ndim - 1
    indptr = np.broadcast_to(indptr, src.shape[:dim] + indptr.shape[-1:])
    shape = list(src.shape)
    shape[dim] = int(indptr.reshape(-1)[-1])
    res = np.zeros(shape, src.dtype)
    for lead in np.ndindex(*src.shape[:dim]):
        for s in range(indptr.shape[-1] - 1):
            for e in range(int(indptr[lead + (s,)]), int(indptr[lead + (s + 1,)])):
                res[lead + (e,)] = src[lead + (s,)]
    return res


def _segments(src, index, dim, n):
    """For each result position, the src positions of its segment (float64 values)."""
    src = np.asarray(src, dtype=np.float64)
    dim = dim % src.ndim
    idx = ref_broadcast(index, src.shape, dim)
    shape = list(src.shape)
    shape[dim] = n
    members = {pos: [] for pos in np.ndindex(*shape)}
    for pos in np.ndindex(*src.shape):
        target = list(pos)
        target[dim] = int(idx[pos])
        members[tuple(target)].append(pos)
    return src, idx, shape, members


def ref_max_value(values):
    """``scatter_max``'s value without `out`: the largest above the lowest finite, else 0."""
    best = None
    for v in values:
        if v > (best if best is not None else -np.finfo(np.float64).max):
            best = v
    return 0.0 if best is None else best


def ref_softmax(src, index, dim=-1, log=False, eps=1e-12):
    src = np.asarray(src, dtype=np.float64)
    n = int(ref_broadcast(index, src.shape, dim).max()) + 1
    src, _, _, members = _segments(src, index, dim, n)
    res = np.zeros(src.shape)
    for places in members.values():
        values = [src[p] for p in places]
        if not values:
            continue
        top = ref_max_value(values)
        total = sum(math.exp(v - top) for v in values)
        for p in places:
            if log:
                res[p] = (src[p] - top) - math.log(total + eps)
            else:
                res[p] = math.exp(src[p] - top) / total
    return res


def ref_logsumexp(src, index, dim=-1, out=None, dim_size=None, eps=1e-12):
    src = np.asarray(src, dtype=np.float64)
    idx = ref_broadcast(index, src.shape, dim)
    n = out.shape[dim % src.ndim] if out is not None else dim_size
    if n is None:
        n = int(idx.max()) + 1
    src, _, shape, members = _segments(src, index, dim, n)
    res = np.zeros(shape)
    for target, places in members.items():
        values = [src[p] for p in places]
        top = max(values) if values else -math.inf  # scatter_max into -inf
        total = sum(math.exp(v - top) for v in values)
        if out is not None:
            total += math.exp(out[target] - top) if top != -math.inf else math.inf
        value = math.log(total + eps) + top if total != math.inf else math.inf + top
        res[target] = 0.0 if (math.isnan(value) or value == -math.inf) else value
    return res


def ref_std(src, index, dim=-1, out=None, dim_size=None, unbiased=True):
    src = np.asarray(src, dtype=np.float64)
    idx = ref_broadcast(index, src.shape, dim)
    n = out.shape[dim % src.ndim] if out is not None else dim_size
    if n is None:
        n = int(idx.max()) + 1
    src, _, shape, members = _segments(src, index, dim, n)
    counts = ref_count(index, shape, dim % src.ndim)
    res = np.zeros(shape)
    for target, places in members.items():
        values = [src[p] for p in places]
        count = max(int(counts[target]), 1)
        mean = sum(values) / count
        squares = sum((v - mean) ** 2 for v in values)
        if out is not None:
            squares += out[target]
        if unbiased:
            count = max(count - 1, 1)
        res[target] = math.sqrt(squares / (count + 1e-6))
    return res


# -- data ----------------------------------------------------------------------------------------

RNG = np.random.default_rng(38)
SRC = RNG.integers(-9, 10, size=(2, 5, 3)).astype(np.float64)  # small ints: many ties
INDEX_1D = np.array([2, 0, 2, 4, 0])  # along dim 1 (size 5); segments 1 and 3 empty
INDEX_DIM0 = np.array([1, 1])  # along dim 0 (size 2): segment 0 empty
INDEX_LAST = np.array([0, 2, 0])  # along dim -1 (size 3)
INDEX_FULL = RNG.integers(0, 4, size=(2, 5, 3))  # full shape: the flat layout
INDEX_LEAD = np.array([[0, 1, 0, 3, 1], [2, 2, 0, 0, 1]])  # (2, 5) along dim 1, over axis 2

CASE_IDS = ["dim0", "dim1", "dim-1", "full-dim1", "full-dim0", "full-dim-1", "leading-dim1"]
CASES = [  # (index, dim)
    (INDEX_DIM0, 0),
    (INDEX_1D, 1),
    (INDEX_LAST, -1),
    (INDEX_FULL, 1),
    (INDEX_FULL[:1] % 2, 0),  # size 1 along dim 0, broadcast there
    (INDEX_FULL, -1),
    (INDEX_LEAD, 1),
]


def _close(actual, wanted, rtol=1e-12):
    actual = np.asarray(actual)
    assert actual.shape == wanted.shape, (actual.shape, wanted.shape)
    np.testing.assert_allclose(
        actual.astype(np.float64), wanted.astype(np.float64), rtol=rtol, atol=1e-12
    )


# -- scatter -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("reduce", ["sum", "mul", "mean", "min", "max"])
def test_scatter_reductions(index, dim, reduce):
    wanted, wanted_arg = ref_scatter(SRC, index, dim, reduce=reduce)
    function = getattr(ts, f"scatter_{reduce}")
    result = function(SRC, index, dim)
    if reduce in ("min", "max"):
        values, arg = result
        _close(values, wanted)
        np.testing.assert_array_equal(arg, wanted_arg)
    else:
        _close(result, wanted)
    _close(ts.scatter(SRC, index, dim, reduce=reduce), wanted)


@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("reduce", ["sum", "mul", "mean", "min", "max"])
def test_scatter_dim_size_and_out(index, dim, reduce):
    dim_size = int(np.max(index)) + 3
    wanted, wanted_arg = ref_scatter(SRC, index, dim, dim_size=dim_size, reduce=reduce)
    _close(ts.scatter(SRC, index, dim, dim_size=dim_size, reduce=reduce), wanted)
    shape = list(SRC.shape)
    shape[dim] = dim_size
    out = RNG.integers(-5, 6, size=shape).astype(np.float64)
    kept = out.copy()
    wanted, wanted_arg = ref_scatter(SRC, index, dim, out=out, reduce=reduce)
    result = getattr(ts, f"scatter_{reduce}")(SRC, index, dim, out, 1)  # dim_size ignored
    if reduce in ("min", "max"):
        _close(result[0], wanted)
        np.testing.assert_array_equal(result[1], wanted_arg)
    else:
        _close(result, wanted)
    np.testing.assert_array_equal(out, kept)  # read, not written


def test_scatter_add_is_scatter_sum():
    _close(ts.scatter_add(SRC, INDEX_1D, 1), ref_scatter(SRC, INDEX_1D, 1)[0])


def test_scatter_readme_example():
    """torch_scatter's README example of ``scatter_max``, with its printed output."""
    src = np.array([[2, 0, 1, 4, 3], [0, 2, 1, 3, 4]])
    index = np.array([[4, 5, 4, 2, 3], [0, 0, 2, 2, 1]])
    out, argmax = ts.scatter_max(src, index, dim=-1)
    np.testing.assert_array_equal(out, [[0, 0, 4, 3, 2, 0], [2, 4, 3, 0, 0, 0]])
    np.testing.assert_array_equal(argmax, [[5, 5, 3, 4, 0, 1], [1, 4, 3, 5, 5, 5]])


def test_min_max_ties_nan_and_extremes():
    src = np.array([3.0, 1.0, 1.0, np.nan, 5.0, 5.0, np.inf, np.nan, -np.inf])
    index = np.array([0, 0, 0, 0, 1, 1, 2, 3, 4])
    for reduce in ("min", "max"):
        wanted, wanted_arg = ref_scatter(src, index, reduce=reduce, dim_size=6)
        values, arg = getattr(ts, f"scatter_{reduce}")(src, index, dim_size=6)
        _close(values, wanted)
        np.testing.assert_array_equal(arg, wanted_arg)
    values, arg = ts.scatter_min(src, index, dim_size=6)  # the first of the ties: position 1
    np.testing.assert_array_equal(arg, [1, 4, 9, 9, 8, 9])
    np.testing.assert_array_equal(values, [1.0, 5.0, 0.0, 0.0, -np.inf, 0.0])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
def test_integer_sum_and_mean(dtype):
    src = np.array([[-3, -4, 5, 7, -1], [100, 27, -9, 8, 8]], dtype=dtype)
    index = np.array([0, 0, 1, 2, 0])
    for reduce in ("sum", "mean", "mul", "min", "max"):
        wanted = ref_scatter(src, index, 1, reduce=reduce)[0]
        result = ts.scatter(src, index, 1, reduce=reduce)
        assert result.dtype == dtype
        np.testing.assert_array_equal(result, wanted)
    np.testing.assert_array_equal(ts.scatter_mean(src, index, 1)[0], [-3, 5, 7])  # floor
    np.testing.assert_array_equal(ts.segment_mean_coo(src, index[None, :])[0], [-2, 5, 7])  # trunc


def test_empty_src_and_index():
    src = np.zeros((2, 0))
    index = np.zeros((0,), dtype=np.int64)
    np.testing.assert_array_equal(ts.scatter_sum(src, index), np.zeros((2, 0)))
    np.testing.assert_array_equal(ts.scatter_mul(src, index, dim_size=3), np.zeros((2, 3)))
    values, arg = ts.scatter_max(src, index, dim_size=2)
    np.testing.assert_array_equal(values, np.zeros((2, 2)))
    np.testing.assert_array_equal(arg, np.zeros((2, 2)))  # src.size(dim) = 0


# -- segment_coo ---------------------------------------------------------------------------------

COO_INDEX = np.array([0, 0, 1, 1, 1, 4])  # segments 2 and 3 empty
COO_SRC = RNG.integers(-9, 10, size=(2, 6, 3)).astype(np.float64)


@pytest.mark.parametrize("reduce", ["sum", "add", "mean", "min", "max"])
@pytest.mark.parametrize(
    ("src", "index"),
    [
        (COO_SRC[0, :, 0], COO_INDEX),  # 1-d
        (COO_SRC[0], COO_INDEX),  # along dim 0 of 2-d
        (COO_SRC, COO_INDEX[None, :]),  # (1, 6): broadcast over the first axis
        (COO_SRC, np.stack([COO_INDEX, np.sort(RNG.integers(0, 3, 6))])),  # one per row
    ],
    ids=["1d", "2d", "broadcast", "rows"],
)
def test_segment_coo(src, index, reduce):
    kind = "sum" if reduce == "add" else reduce
    wanted, wanted_arg = ref_segment_coo(src, index, reduce=kind)
    _close(ts.segment_coo(src, index, reduce=reduce), wanted)
    function = getattr(ts, f"segment_{reduce}_coo")
    if kind in ("min", "max"):
        values, arg = function(src, index)
        _close(values, wanted)
        np.testing.assert_array_equal(arg, wanted_arg)
    dim = index.ndim - 1
    shape = list(src.shape)
    shape[dim] = 7
    out = RNG.integers(-5, 6, size=shape).astype(np.float64)
    wanted = ref_segment_coo(src, index, out=out, reduce=kind)[0]
    _close(ts.segment_coo(src, index, out=out, reduce=reduce), wanted)
    wanted = ref_segment_coo(src, index, dim_size=7, reduce=kind)[0]
    _close(ts.segment_coo(src, index, dim_size=7, reduce=reduce), wanted)


# -- segment_csr ---------------------------------------------------------------------------------

CSR_PTR = np.array([0, 2, 2, 5, 6])  # segment 1 empty


@pytest.mark.parametrize("reduce", ["sum", "add", "mean", "min", "max"])
@pytest.mark.parametrize(
    ("src", "indptr"),
    [
        (COO_SRC[0, :, 0], CSR_PTR),
        (COO_SRC[0], CSR_PTR),
        (COO_SRC, CSR_PTR[None, :]),
        (COO_SRC, np.stack([CSR_PTR, np.array([1, 1, 3, 3, 4])])),  # rows outside every segment
        (COO_SRC.astype(np.int64), CSR_PTR[None, :]),
    ],
    ids=["1d", "2d", "broadcast", "rows", "int64"],
)
def test_segment_csr(src, indptr, reduce):
    kind = "sum" if reduce == "add" else reduce
    wanted, wanted_arg = ref_segment_csr(src, indptr, kind)
    result = ts.segment_csr(src, indptr, reduce=reduce)
    assert result.dtype == src.dtype
    _close(result, wanted)
    if kind in ("min", "max"):
        values, arg = getattr(ts, f"segment_{reduce}_csr")(src, indptr)
        _close(values, wanted)
        np.testing.assert_array_equal(arg, wanted_arg)
    out = np.full(wanted.shape, 7, dtype=src.dtype)  # overwritten
    _close(ts.segment_csr(src, indptr, out, reduce=reduce), wanted)


def test_segment_csr_integer_mean_truncates():
    src = np.array([-3, -4, 5, -7])
    np.testing.assert_array_equal(ts.segment_mean_csr(src, np.array([0, 2, 4])), [-3, -1])


# -- the gathers ---------------------------------------------------------------------------------


def test_gather_coo():
    index = np.array([0, 0, 2, 2, 3])
    np.testing.assert_array_equal(
        ts.gather_coo(SRC[0, :4], index), ref_gather_coo(SRC[0, :4], index)
    )
    index = np.array([[0, 1, 1], [2, 3, 4]])
    np.testing.assert_array_equal(ts.gather_coo(SRC, index), ref_gather_coo(SRC, index))
    out = np.zeros((2, 3, 3))
    np.testing.assert_array_equal(ts.gather_coo(SRC, index, out), ref_gather_coo(SRC, index))


def test_gather_csr():
    src = COO_SRC[:, :4]
    np.testing.assert_array_equal(ts.gather_csr(src[0], CSR_PTR), ref_gather_csr(src[0], CSR_PTR))
    np.testing.assert_array_equal(
        ts.gather_csr(src, CSR_PTR[None, :]), ref_gather_csr(src, CSR_PTR[None, :])
    )
    # the inverse of the sum: gather_csr(segment_csr(x)) repeats each sum over its segment
    sums = ts.segment_csr(COO_SRC[0], CSR_PTR)
    np.testing.assert_array_equal(ts.gather_csr(sums, CSR_PTR), ref_gather_csr(sums, CSR_PTR))


# -- the composite functions ---------------------------------------------------------------------

FLOAT_SRC = RNG.normal(size=(2, 5, 3))


@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
def test_softmax_and_log_softmax(index, dim):
    _close(ts.scatter_softmax(FLOAT_SRC, index, dim), ref_softmax(FLOAT_SRC, index, dim))
    wanted = ref_softmax(FLOAT_SRC, index, dim, log=True)
    _close(ts.scatter_log_softmax(FLOAT_SRC, index, dim), wanted)
    wanted = ref_softmax(FLOAT_SRC, index, dim, log=True, eps=0.5)
    _close(ts.scatter_log_softmax(FLOAT_SRC, index, dim, 0.5), wanted)


@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
def test_logsumexp(index, dim):
    size = int(np.max(index)) + 2  # one more: an empty segment, 0
    _close(ts.scatter_logsumexp(FLOAT_SRC, index, dim, dim_size=size),
           ref_logsumexp(FLOAT_SRC, index, dim, dim_size=size))  # fmt: skip
    _close(ts.scatter_logsumexp(FLOAT_SRC, index, dim, eps=0.25),
           ref_logsumexp(FLOAT_SRC, index, dim, eps=0.25))  # fmt: skip
    shape = list(FLOAT_SRC.shape)
    shape[dim] = size
    out = RNG.normal(size=shape)
    _close(ts.scatter_logsumexp(FLOAT_SRC, index, dim, out),
           ref_logsumexp(FLOAT_SRC, index, dim, out=out))  # fmt: skip


def test_logsumexp_extremes():
    src = np.array([np.inf, 1.0, -np.inf, -np.inf, np.nan, 2.0])
    index = np.array([0, 0, 1, 1, 2, 2])
    result = ts.scatter_logsumexp(src, index, dim_size=4)
    wanted = [np.finfo(np.float64).max, 0.0, math.log(1 + 1e-12) + 2.0, 0.0]
    np.testing.assert_allclose(result, wanted, rtol=1e-15)


@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("unbiased", [True, False])
def test_std(index, dim, unbiased):
    size = int(np.max(index)) + 2
    _close(ts.scatter_std(FLOAT_SRC, index, dim, None, size, unbiased),
           ref_std(FLOAT_SRC, index, dim, dim_size=size, unbiased=unbiased))  # fmt: skip
    shape = list(FLOAT_SRC.shape)
    shape[dim] = size
    out = np.abs(RNG.normal(size=shape))
    _close(ts.scatter_std(FLOAT_SRC, index, dim, out, unbiased=unbiased),
           ref_std(FLOAT_SRC, index, dim, out=out, unbiased=unbiased))  # fmt: skip


def test_softmax_of_minus_inf_segment_is_nan():
    """scatter_max gives 0 for a segment of -inf only, so exp(-inf - 0) / 0."""
    result = ts.scatter_softmax(np.array([-np.inf, -np.inf, 1.0]), np.array([0, 0, 1]))
    np.testing.assert_array_equal(result, [np.nan, np.nan, 1.0])


# -- errors --------------------------------------------------------------------------------------


def test_errors():
    with pytest.raises(IndexError, match=r"index\[2\] = 7 is out of range \[0, 3\)"):
        ts.scatter_sum(np.ones(4), np.array([0, 1, 7, 2]), dim_size=3)
    with pytest.raises(IndexError, match=r"index .* = -1 is out of range \[0, 3\)"):
        ts.scatter_sum(np.ones((2, 2)), np.array([[0, 1], [-1, 2]]), dim=1, dim_size=3)
    with pytest.raises(ValueError, match="reduce must be one of"):
        ts.scatter(np.ones(3), np.zeros(3, dtype=np.int64), reduce="prod")
    with pytest.raises(ValueError, match="reduce must be one of"):
        ts.segment_coo(np.ones(3), np.zeros(3, dtype=np.int64), reduce="mul")
    with pytest.raises(ValueError, match="floating point"):
        ts.scatter_softmax(np.ones(3, dtype=np.int64), np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="does not broadcast to src"):
        ts.scatter_sum(np.ones((2, 3)), np.zeros((3, 3), dtype=np.int64), dim=1)
    with pytest.raises(TypeError, match="index must have an integer dtype"):
        ts.scatter_sum(np.ones(3), np.zeros(3))
    with pytest.raises(IndexError, match="dim must be in"):
        ts.scatter_sum(np.ones(3), np.zeros(3, dtype=np.int64), dim=1)
    with pytest.raises(IndexError, match="indptr"):
        ts.segment_csr(np.ones(3), np.array([0, 2, 1]))
    with pytest.raises(ValueError, match="out must have src's shape"):
        ts.scatter_sum(np.ones((2, 3)), np.zeros(3, dtype=np.int64), out=np.zeros((3, 1)))


def test_no_torch_at_import():
    code = (
        "import sys, portagather.compat.torch_scatter as m; "
        "assert 'torch' not in sys.modules, 'torch imported'; print(len(m.__all__))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "25"


# -- PyTorch's autograd --------------------------------------------------------------------------


def _torch():
    return load_backend("torch").xp and __import__("torch")


@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
def test_gradients_against_finite_differences(index, dim):
    torch = _torch()
    src = torch.tensor(FLOAT_SRC, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor(index)
    size = int(np.max(index)) + 2
    functions = [
        lambda x: ts.scatter_softmax(x, idx, dim),
        lambda x: ts.scatter_log_softmax(x, idx, dim),
        lambda x: ts.scatter_logsumexp(x, idx, dim, dim_size=size),
        lambda x: ts.scatter_mean(x, idx, dim, dim_size=size),
    ]
    for function in functions:
        assert torch.autograd.gradcheck(function, (src,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize(
    ("index", "dim"),
    [(np.array([0, 0]), 0), (np.array([1, 0, 1, 0, 1]), 1), (np.array([0, 0, 0]), -1),
     (np.array([[1, 0, 1, 0, 1], [0, 0, 2, 2, 0]]), 1)],
)  # fmt: skip
def test_std_gradient(index, dim):
    """Every segment holds two values or more: the square root of a zero variance (a single
    value) has no derivative (NaN, in torch_scatter too)."""
    torch = _torch()
    src = torch.tensor(FLOAT_SRC, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor(index)
    for unbiased in (True, False):
        function = lambda x, u=unbiased: ts.scatter_std(x, idx, dim, None, None, u)  # noqa: E731
        assert torch.autograd.gradcheck(function, (src,), eps=1e-6, atol=1e-5)


def test_mul_gradient_at_a_zero():
    """The derivative: at a zero, the product of the others (torch_scatter gives 0 there)."""
    torch = _torch()
    src = torch.tensor([2.0, 0.0, 3.0, 4.0, 5.0], dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 0, 0, 1, 1])
    ts.scatter_mul(src, index).sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [0, 6, 0, 5, 4])
    assert torch.autograd.gradcheck(
        lambda x: ts.scatter_mul(x, index), (src.detach().requires_grad_(),)
    )


def test_min_max_gradient_goes_to_the_winner():
    """torch_scatter's backward scatters the gradient to the argindex alone (ties: the first)."""
    torch = _torch()
    src = torch.tensor([3.0, 1.0, 1.0, 5.0, 5.0, 2.0], dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 0, 0, 1, 1, 1])
    values, _ = ts.scatter_max(src, index, dim_size=3)
    values.sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [1, 0, 0, 1, 0, 0])
    src.grad = None
    values, _ = ts.scatter_min(src, index)
    (values * torch.tensor([1.0, 10.0])).sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [0, 1, 0, 0, 0, 10])


# -- every backend -------------------------------------------------------------------------------

BACKENDS = ["numpy", "torch", "jax", "dask", "array_api_strict", "ndonnx"]


def _calls(dim, size):
    """(name, call, reference) triples: each function on (src, index, indptr) with dim_size
    given, which Dask needs (``index.max()`` is read only where the values are at hand), and
    its loop reference on float64 NumPy data."""

    def scatter(reduce):
        def call(s, i, _p):
            return getattr(ts, f"scatter_{reduce}")(s, i, dim, dim_size=size)

        def reference(s, i, _p):
            result = ref_scatter(s, i, dim, dim_size=size, reduce=reduce)
            return result if reduce in ("min", "max") else result[0]

        return f"scatter_{reduce}", call, reference

    return [scatter(r) for r in ("sum", "mul", "mean", "min", "max")] + [
        ("scatter_std", lambda s, i, _p: ts.scatter_std(s, i, dim, dim_size=size),
         lambda s, i, _p: ref_std(s, i, dim, dim_size=size)),
        ("scatter_logsumexp", lambda s, i, _p: ts.scatter_logsumexp(s, i, dim, dim_size=size),
         lambda s, i, _p: ref_logsumexp(s, i, dim, dim_size=size)),
        ("scatter_softmax", lambda s, i, _p: ts.scatter_softmax(s, i, dim, dim_size=size),
         lambda s, i, _p: ref_softmax(s, i, dim)),
        ("scatter_log_softmax",
         lambda s, i, _p: ts.scatter_log_softmax(s, i, dim, dim_size=size),
         lambda s, i, _p: ref_softmax(s, i, dim, log=True)),
        ("segment_max_csr", lambda s, _i, p: ts.segment_max_csr(s, p),
         lambda s, _i, p: ref_segment_csr(s, p, "max")),
        ("segment_csr_mean", lambda s, _i, p: ts.segment_csr(s, p, reduce="mean"),
         lambda s, _i, p: ref_segment_csr(s, p, "mean")[0]),
    ]  # fmt: skip


def _numpy_result(backend, result):
    if isinstance(result, tuple):
        return tuple(backend.to_numpy(r) for r in result)
    return backend.to_numpy(result)


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize(("index", "dim"), CASES, ids=CASE_IDS)
def test_backends_agree(backend_name, index, dim):
    backend = load_backend(backend_name)
    src = FLOAT_SRC.astype(np.float32)
    indptr = np.array([[0, 2, 2, 5]])
    size = int(np.max(index)) + 2
    for label, function, reference in _calls(dim, size):
        wanted = reference(src.astype(np.float64), index, indptr)
        got = function(backend.asarray(src), backend.asarray(index), backend.asarray(indptr))
        got = _numpy_result(backend, got)
        if isinstance(wanted, tuple):
            np.testing.assert_allclose(got[0], wanted[0], rtol=1e-5, atol=1e-6, err_msg=label)
            np.testing.assert_array_equal(got[1], wanted[1], err_msg=label)
        else:
            np.testing.assert_allclose(got, wanted, rtol=1e-5, atol=1e-6, err_msg=label)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_backends_coo_gathers_and_out(backend_name):
    backend = load_backend(backend_name)
    src = COO_SRC.astype(np.float32)
    index = COO_INDEX[None, :]
    out = np.ones((2, 5, 3), dtype=np.float32)
    b = backend.asarray
    pairs = [
        (ts.segment_coo(b(src), b(index), dim_size=5, reduce="mean"),
         ref_segment_coo(src, index, dim_size=5, reduce="mean")[0]),
        (ts.segment_max_coo(b(src), b(index), b(out))[0],
         ref_segment_coo(src, index, out=out, reduce="max")[0]),
        (ts.scatter_sum(b(src), b(COO_INDEX), 1, b(out)),
         ref_scatter(src, COO_INDEX, 1, out=out)[0]),
        (ts.gather_coo(b(src), b(np.array([[0, 1, 1], [2, 3, 4]]))),
         ref_gather_coo(src, np.array([[0, 1, 1], [2, 3, 4]]))),
        (ts.gather_csr(b(src[:, :4]), b(CSR_PTR[None, :]), b(np.zeros((2, 6, 3), np.float32))),
         ref_gather_csr(src[:, :4], CSR_PTR[None, :])),
    ]  # fmt: skip
    for got, wanted in pairs:
        np.testing.assert_allclose(backend.to_numpy(got), wanted, rtol=1e-6)


def test_jax_grad_of_softmax_matches_torch():
    import jax
    import jax.numpy as jnp

    torch = _torch()
    src = FLOAT_SRC[0].astype(np.float32)
    weights = RNG.normal(size=src.shape).astype(np.float32)
    with jax.enable_x64(False):
        grad = jax.grad(
            lambda x: jnp.sum(ts.scatter_softmax(x, jnp.asarray(INDEX_1D), 0) * weights)
        )
        jax_grad = np.asarray(grad(jnp.asarray(src)))
    x = torch.tensor(src, requires_grad=True)
    (ts.scatter_softmax(x, torch.tensor(INDEX_1D), 0) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(jax_grad, x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_jax_jit_needs_checkify():
    """Under jax.jit the index check cannot read the values: the error says what to do, and
    under checkify a bad index comes back as its error."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    function = jax.jit(lambda x, i: ts.scatter_sum(x, i, dim_size=3))
    with pytest.raises(ValueError, match=r"compat\.torch_scatter\.scatter_sum needs to read index"):
        function(jnp.ones(4), jnp.array([0, 1, 2, 1]))
    checked = checkify.checkify(function)
    error, result = checked(jnp.ones(4), jnp.array([0, 1, 2, 1]))
    assert error.get() is None
    np.testing.assert_array_equal(np.asarray(result), [1.0, 2.0, 1.0])
    error, _ = checked(jnp.ones(4), jnp.array([0, 1, 5, 1]))
    assert "= 5 is out of range [0, 3)" in error.get()


def test_dask_checks_when_computed():
    import dask.array as da

    index = da.from_array(np.array([0, 1, 5, 1]), chunks=2)
    lazy = ts.scatter_sum(da.ones(4, chunks=2), index, dim_size=3)
    with pytest.raises(IndexError, match=r"\[2\] = 5 is out of range \[0, 3\)"):
        lazy.compute()
    with pytest.raises(ValueError, match="pass dim_size=N"):
        ts.scatter_sum(da.ones(4, chunks=2), index)


def test_segment_csr_segment_no_value_beats():
    """CSR's kernel writes its start value (the dtype's largest finite, for min) where a
    segment has rows but none beat it: inf or NaN only."""
    src = np.array([1.0, np.inf, np.nan, np.inf, 0.0])
    indptr = np.array([0, 2, 4, 4, 5])
    wanted, wanted_arg = ref_segment_csr(src, indptr, "min")
    values, arg = ts.segment_min_csr(src, indptr)
    np.testing.assert_array_equal(values, wanted)
    np.testing.assert_array_equal(values, [1.0, np.finfo(np.float64).max, 0.0, 0.0])
    np.testing.assert_array_equal(arg, wanted_arg)
    np.testing.assert_array_equal(arg, [0, 5, 5, 4])
