"""compat.torch's ``index_select``, ``index_add``, ``index_reduce``, ``index_put`` and
``segment_reduce``, and the core's ``segment_csr`` and autograd, against PyTorch itself, on
NumPy and PyTorch inputs: duplicates, empty segments, bad indices, every reduction,
``include_self``, ``accumulate``, ``alpha``, ``initial``, lengths and offsets along a batch
axis, NaN and infinities for the max and the min.

``index_put`` without ``accumulate`` leaves the winner among duplicates unspecified in
PyTorch; such calls are compared with the last write in row-major order.
"""

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import portagather as pg
from portagather.compat import torch as torch_compat

from .scatter_draws import on, to_numpy
from .segment_draws import SEGMENTS, compat_backends, same, segment_cases

# PyTorch's own warning about the oracle, torch.index_reduce; portagather's calls warn of nothing.
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")

TORCH_DTYPES = ("int32", "int64", "float32", "float64")


def _torch(f, *args, **kwargs):
    """PyTorch's result as NumPy, or None where it refuses the indices."""
    try:
        return f(*args, **kwargs).numpy()
    except (IndexError, RuntimeError) as err:
        if "out of" in str(err) or "out of range" in str(err):
            return None
        raise


def _check(name, compat_call, want):
    if want is None:
        with pytest.raises(IndexError):
            to_numpy(name, compat_call())
        return
    same(to_numpy(name, compat_call()), want)


@st.composite
def along(draw, dtypes=TORCH_DTYPES):
    """``(input, dim, index, source)``: a 1-d index along `dim` of a 1- to 3-d input, with
    duplicates, and now and then a bad value."""
    shape = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 3))))
    dim = draw(st.integers(0, len(shape) - 1))
    n = shape[dim]
    count = draw(st.integers(0, 5))
    bad = draw(st.booleans()) and draw(st.booleans())
    index = np.asarray(
        draw(st.lists(st.integers(-1 if bad else 0, n if bad else n - 1), min_size=count,
                      max_size=count)), dtype=np.int64)  # fmt: skip
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    source_shape = shape[:dim] + (count,) + shape[dim + 1 :]
    values = st.integers(-3, 3)
    data = np.asarray(draw(st.lists(values, min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))), dtype).reshape(shape)  # fmt: skip
    source = np.asarray(draw(st.lists(values, min_size=int(np.prod(source_shape)),
                                      max_size=int(np.prod(source_shape)))), dtype)  # fmt: skip
    return data, dim, index, source.reshape(source_shape)


@SEGMENTS
@given(along(), compat_backends)
def test_index_select(call, name):
    data, dim, index, _ = call
    want = _torch(torch.index_select, torch.asarray(data), dim, torch.asarray(index))
    data_b, index_b = on(name, data, index)
    _check(name, lambda: torch_compat.index_select(data_b, dim, index_b), want)


@SEGMENTS
@given(along(), st.sampled_from([1, 2, -3]), compat_backends)
def test_index_add(call, alpha, name):
    data, dim, index, source = call
    want = _torch(torch.index_add, torch.asarray(data), dim, torch.asarray(index),
                  torch.asarray(source), alpha=alpha)  # fmt: skip
    data_b, index_b, source_b = on(name, data, index, source)
    _check(name, lambda: torch_compat.index_add(data_b, dim, index_b, source_b, alpha=alpha), want)


@SEGMENTS
@given(along(), st.sampled_from(["prod", "mean", "amax", "amin"]), st.booleans(),
       compat_backends)  # fmt: skip
def test_index_reduce(call, reduce, include_self, name):
    data, dim, index, source = call
    want = _torch(torch.index_reduce, torch.asarray(data), dim, torch.asarray(index),
                  torch.asarray(source), reduce, include_self=include_self)  # fmt: skip
    data_b, index_b, source_b = on(name, data, index, source)
    compat_call = lambda: torch_compat.index_reduce(  # noqa: E731
        data_b, dim, index_b, source_b, reduce, include_self=include_self
    )
    _check(name, compat_call, want)


@SEGMENTS
@given(st.data(), st.booleans(), compat_backends)
def test_index_put(draw, accumulate, name):
    """One to `ndim` index arrays, broadcast together, negatives counting from the end."""
    shape = tuple(draw.draw(st.integers(1, 3)) for _ in range(draw.draw(st.integers(1, 3))))
    depth = draw.draw(st.integers(1, len(shape)))
    grid = tuple(draw.draw(st.integers(1, 3)) for _ in range(draw.draw(st.integers(1, 2))))
    indices = []
    for n in shape[:depth]:
        index_shape = tuple(draw.draw(st.sampled_from([1, g])) for g in grid)
        values = draw.draw(st.lists(st.integers(-n - 1, n), min_size=int(np.prod(index_shape)),
                                    max_size=int(np.prod(index_shape))))  # fmt: skip
        indices.append(np.asarray(values, dtype=np.int64).reshape(index_shape))
    broadcast = np.broadcast_arrays(*indices)
    grid = broadcast[0].shape
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    values = -1.0 - np.arange(np.prod(grid + shape[depth:]), dtype=np.float32)
    values = values.reshape(grid + shape[depth:])
    valid = all(((i >= -n) & (i < n)).all() for i, n in zip(broadcast, shape, strict=False))
    positions = [tuple(int(i[k]) % n for i, n in zip(broadcast, shape, strict=False))
                 for k in np.ndindex(grid)] if valid else []  # fmt: skip
    if not accumulate and len(set(positions)) != len(positions):
        want = data.copy()
        for k in np.ndindex(grid):  # the last write in row-major order wins
            want[tuple(int(i[k]) for i in broadcast)] = values[k]
    else:
        want = _torch(torch.index_put, torch.asarray(data), tuple(map(torch.asarray, indices)),
                      torch.asarray(values), accumulate=accumulate)  # fmt: skip
    arrays = on(name, data, values, *indices)

    def compat_call():
        return torch_compat.index_put(arrays[0], tuple(arrays[2:]), arrays[1], accumulate)

    _check(name, compat_call, want)


@st.composite
def segmented(draw):
    """``(data, lengths, axis)``: lengths along the last axis of a batch of 0 or 1 axes,
    adding up to the data's length there, with empty segments; small values, with
    infinities and now and then a NaN for the max and the min."""
    axis = draw(st.integers(0, 1))
    batch = tuple(draw(st.integers(1, 3)) for _ in range(axis))
    segments = draw(st.integers(1, 4))
    lengths = np.asarray(draw(st.lists(st.integers(0, 3), min_size=int(np.prod(batch)) * segments,
                                       max_size=int(np.prod(batch)) * segments)))  # fmt: skip
    lengths = lengths.reshape(batch + (segments,))
    n = int(lengths.sum(axis=-1).max()) if lengths.size else 0
    lengths[..., -1] += n - lengths.sum(axis=-1)  # every row adds up to n
    inner = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, 1))))
    shape = batch + (n,) + inner
    dtype = draw(st.sampled_from(["float32", "float64"]))
    data = np.asarray(draw(st.lists(st.sampled_from([-2.0, -1.0, 0.0, 1.0, 2.0, np.inf, -np.inf,
                                                     np.nan]),
                                    min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                      dtype).reshape(shape)  # fmt: skip
    return data, lengths, axis


@SEGMENTS
@given(segmented(), st.sampled_from(["sum", "mean", "max", "min", "prod"]), st.booleans(),
       st.sampled_from([None, 1.5, -2.0]), compat_backends)  # fmt: skip
def test_segment_reduce(case, reduce, use_offsets, initial, name):
    data, lengths, axis = case
    if reduce in ("sum", "mean", "prod"):
        assume(np.isfinite(data).all())  # inf - inf is NaN in any order, but NaN * 0 is not
    offsets = np.concatenate([np.zeros(lengths.shape[:-1] + (1,), np.int64),
                              np.cumsum(lengths, axis=-1)], axis=-1)  # fmt: skip
    given_as = {"offsets": offsets} if use_offsets else {"lengths": lengths}
    want = torch.segment_reduce(torch.asarray(data), reduce, axis=axis, initial=initial,
                                **{k: torch.asarray(v) for k, v in given_as.items()}).numpy()  # fmt: skip
    arrays = on(name, data, *given_as.values())
    got = torch_compat.segment_reduce(arrays[0], reduce, axis=axis, initial=initial,
                                      **dict(zip(given_as, arrays[1:], strict=True)))  # fmt: skip
    same(to_numpy(name, got), want)


@SEGMENTS
@given(segmented(), st.sampled_from(["sum", "max", "min", "prod"]), compat_backends)
def test_core_segment_csr(case, reduce, name):
    """``pg.segment_csr`` is ``torch.segment_reduce(offsets=...)``: the same empty-segment
    identities (0, -inf, inf, 1)."""
    data, lengths, axis = case
    if reduce in ("sum", "prod"):
        assume(np.isfinite(data).all())
    offsets = np.concatenate([np.zeros(lengths.shape[:-1] + (1,), np.int64),
                              np.cumsum(lengths, axis=-1)], axis=-1)  # fmt: skip
    want = torch.segment_reduce(torch.asarray(data), reduce, offsets=torch.asarray(offsets),
                                axis=axis).numpy()  # fmt: skip
    data_b, offsets_b = on(name, data, offsets)
    same(to_numpy(name, pg.segment_csr(data_b, offsets_b, reduce=reduce)), want)


def test_segment_reduce_refusals():
    """What PyTorch refuses, compat refuses with a ValueError that says why."""
    data = torch.tensor([1.0, 2.0, 3.0, 4.0])
    for kwargs, pattern in [
        ({"lengths": torch.tensor([2, 1])}, "lengths must add up to data.shape"),
        ({"lengths": torch.tensor([-1, 5])}, "lengths contains negative value"),
        ({"indices": torch.tensor([0, 0, 1, 1])}, "indices= is not supported"),
        ({}, "lengths= or offsets="),
    ]:
        with pytest.raises(RuntimeError):
            torch.segment_reduce(data, "sum", **kwargs)
        with pytest.raises(ValueError, match=pattern):
            torch_compat.segment_reduce(data, "sum", **kwargs)


@SEGMENTS
@given(segment_cases(("float64",), one_d=True), st.sampled_from(["sum", "mean", "amax", "amin"]))
def test_autograd(case, reduce):
    """The gradients of ``pg.segment_*`` on tensors equal those of PyTorch's own
    ``scatter_reduce`` of the same rows: a gather for the sum and the mean (over the count),
    the arg-max (arg-min) for the max (min), split between ties."""
    data, ids, n = case
    kept = (ids >= 0) & (ids < n)
    inner = data.shape[1:]
    weights = torch.arange(1.0, 1.0 + n * int(np.prod(inner)), dtype=torch.float64)
    weights = weights.reshape((n, *inner))
    mine = torch.tensor(data, requires_grad=True)
    core = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min"}[reduce]
    out = getattr(pg, f"segment_{core}")(mine, torch.tensor(ids), n, bad_indices="ignore")
    theirs = torch.tensor(data, requires_grad=True)
    index = (
        torch.tensor(ids[kept]).reshape((-1,) + (1,) * len(inner)).expand((int(kept.sum()), *inner))
    )
    # The max and min start from the identity, as portagather's: with include_self=False
    # PyTorch's backward still splits a tie with the (excluded) starting value.
    start = {"amax": -np.inf, "amin": np.inf}.get(reduce, 0.0)
    base = torch.full((n, *inner), start, dtype=torch.float64)
    native = base.scatter_reduce(0, index, theirs[torch.tensor(kept)], reduce,
                                 include_self=start != 0.0)  # fmt: skip
    finite = torch.isfinite(out) & torch.isfinite(native)
    (weights * torch.where(finite, out, 0.0)).sum().backward()
    (weights * torch.where(finite, native, 0.0)).sum().backward()
    same(mine.grad.numpy(), theirs.grad.numpy())


def test_index_reduce_mean_on_dask_keeps_negative_zero():
    # An element no update reaches keeps its value, -0.0 too (the count, not a division by
    # one, says which elements those are).
    import dask.array as da

    x = np.array([[1.0, np.nan], [4.0, 5.0], [-0.0, 2.0]])
    index, source = np.array([0, 0]), np.array([[np.nan, 0.0], [2.0, np.inf]])
    for include_self in (True, False):
        want = torch.index_reduce(
            torch.from_numpy(x), 0, torch.from_numpy(index), torch.from_numpy(source), "mean",
            include_self=include_self,
        ).numpy()  # fmt: skip
        got = torch_compat.index_reduce(
            da.from_array(x, chunks=1), 0, da.from_array(index, chunks=1),
            da.from_array(source, chunks=1), "mean", include_self=include_self,
        ).compute()  # fmt: skip
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 kept


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("include_self", [True, False])
def test_mean_of_many_updates_counts_as_pytorch(dtype, include_self):
    # PyTorch's scatter_reduce counts a mean's values in the input's dtype, as it sums them:
    # with thousands of updates on one element both saturate alike in float16 and bfloat16,
    # and their quotient is PyTorch's (an exact count would divide a saturated sum by more).
    # (torch.index_reduce counts otherwise there; compat.index_reduce counts as
    # scatter_reduce does.)
    torch_dtype = getattr(torch, dtype)
    n = 3000
    x = torch.zeros((2, 3), dtype=torch_dtype)
    src = torch.ones((n, 3), dtype=torch_dtype)
    index = torch.zeros((n, 3), dtype=torch.long)
    want = torch.scatter_reduce(x, 0, index, src, "mean", include_self=include_self)
    got = torch_compat.scatter_reduce(x, 0, index, src, "mean", include_self=include_self)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
