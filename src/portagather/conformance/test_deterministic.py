"""Deterministic sums and products (docs/deterministic.md): with ``deterministic=True`` every
backend, in every mode and run and at every Dask chunking, gives the bits of the plain-loop
tree (``reference.ref_tree_segment``), so every backend the bits of NumPy; the error against
an exact sum stays within the tree's bound; gradients are those of ``deterministic=False``."""

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import strategies as st

import portagather as pg

from .backends import Backend
from .cases import BFLOAT16_BACKENDS, bfloat16_array, bfloat16_values
from .modes import in_mode
from .reference import ref_tree_scatter, ref_tree_segment
from .runs import each_drawn

OPS = ("segment_sum", "segment_mean", "segment_prod")
SCATTERS = ("scatter_nd", "scatter_d", "put_along_axis")

#: The kinds of drawn case: many rows in few segments, many segments of a row or two,
#: cancelling magnitudes, -0.0 / infinities / NaN with empty segments, segments of -0.0
#: only, ids of two axes, and ids dropped (negative or past the end, under "ignore").
FAMILIES = ("duplicated", "tiny", "cancellation", "specials", "zeros", "two-d", "dropped")


def _case(family: str, seed: int, op: str) -> tuple[npt.NDArray[Any], npt.NDArray[Any], int]:
    """``(data, ids, num_segments)`` of one drawn case, as float64 values."""
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 300))
    width = int(rng.integers(1, 4))
    segments = {"duplicated": 3, "tiny": max(1, rows - 5)}.get(family, 20)
    ids = rng.integers(0, segments, rows)
    if op == "segment_prod":  # factors near 1: no overflow, every bit still in play
        data = rng.uniform(0.8, 1.25, (rows, width)) * rng.choice([-1.0, 1.0], (rows, width))
    else:
        scale = 10.0 ** rng.integers(-4, 5, (rows, 1))
        data = rng.standard_normal((rows, width)) * scale
    if family == "cancellation":
        big = rng.choice([-1.0, 1.0], (rows, 1)) * 2.0 ** rng.integers(20, 30, (rows, 1))
        data = data + big
    elif family == "specials":
        segments += 5  # the last five are empty
        data[rng.random((rows, width)) < 0.1] = -0.0
        data[(ids == 1)[:, None] & (rng.random((rows, width)) < 0.2)] = np.inf
        data[(ids == 2)[:, None] & (rng.random((rows, width)) < 0.2)] = -np.inf
        data[(ids == 3)[:, None] & (rng.random((rows, width)) < 0.2)] = np.nan
    elif family == "zeros":
        data[ids % 2 == 0] = -0.0
    elif family == "two-d":
        rows -= rows % 2
        data, ids = data[:rows].reshape(2, rows // 2, width), ids[:rows].reshape(2, rows // 2)
    elif family == "dropped":
        ids = np.where(rng.random(rows) < 0.2, rng.choice([-3, segments + 2], rows), ids)
    return data, ids, segments


def _dtypes(backend: Backend, op: str) -> list[str]:
    """The floating dtypes `backend` holds (complex: sums)."""
    names = ["float16", "float32", "float64"]
    if op == "segment_sum":
        names.append("complex64")
    held = [name for name in names if name in backend.dtypes]
    return held + (["bfloat16"] if backend.name in BFLOAT16_BACKENDS else [])


def _in_dtype(data: npt.NDArray[Any], dtype: str) -> npt.NDArray[Any]:
    if dtype == "bfloat16":
        import ml_dtypes

        return data.astype(ml_dtypes.bfloat16)
    if dtype.startswith("complex"):
        parts = np.empty(data.shape, dtype=dtype)
        parts.real, parts.imag = data, data[..., ::-1]
        return parts
    return data.astype(dtype)


def _to_backend(backend: Backend, data: npt.NDArray[Any], chunks: Any = None) -> Any:
    if data.dtype.name == "bfloat16":
        return bfloat16_array(backend, data.astype(np.float32), chunks)
    return backend.asarray(data, chunks=chunks)


def _from_backend(backend: Backend, out: Any, dtype: str) -> npt.NDArray[Any]:
    if dtype == "bfloat16":
        return bfloat16_values(backend, out)
    return backend.to_numpy(out)


def assert_same_bits(got: npt.NDArray[Any], want: npt.NDArray[Any]) -> None:
    """Every bit equal, but a NaN's (its payload is no part of the contract)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind == "c":
        got, want = got.view(got.real.dtype), want.view(want.real.dtype)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"NaN differ:\n got {got}\nwant {want}"
    bits = f"u{want.dtype.itemsize}"
    same = got.view(bits) == want.view(bits)
    assert np.all(same | nan), f"bits differ:\n got {got[~same]}\nwant {want[~same]}"


@pytest.mark.cell("deterministic {mode}")
@pytest.mark.parametrize("op", OPS)
def test_bits_of_the_tree(backend, mode, repro, op):
    """The drawn cases, in every floating dtype the backend holds, twice each (a second
    run gives the same bits), against the plain-loop tree."""

    def check(drawn: tuple[str, int]) -> None:
        family, seed = drawn
        values, ids, segments = _case(family, seed, op)
        function = getattr(pg, op)

        def run(d: Any, i: Any) -> Any:
            return function(d, i, segments, deterministic=True, bad_indices="ignore")

        run_in_mode = in_mode(run, mode)
        for dtype in _dtypes(backend, op):
            data = _in_dtype(values, dtype)
            repro.text = f"pg.{op}({dtype} {family} seed={seed}, deterministic=True)"
            want = ref_tree_segment(data, ids, segments, op.removeprefix("segment_"))
            if dtype == "bfloat16":
                want = want.astype(np.float32)
            for _ in range(2):
                out = run_in_mode(_to_backend(backend, data), backend.asarray(ids))
                assert_same_bits(_from_backend(backend, out, dtype), want)

    each_drawn(6, st.tuples(st.sampled_from(FAMILIES), st.integers(0, 2**20)), check)


@pytest.mark.cell("deterministic sorted {mode}")
@pytest.mark.parametrize("op", OPS)
def test_sorted_promise(backend, mode, repro, op):
    """Sorted ids under ``indices_are_sorted=True`` (no sort is made), and the CSR form."""
    values, ids, segments = _case("duplicated", 11, op)
    ids = np.sort(ids)
    data = values.astype(np.float32)
    function = getattr(pg, op)

    def run(d: Any, i: Any) -> Any:
        return function(d, i, segments, deterministic=True, indices_are_sorted=True,
                        bad_indices="unchecked")  # fmt: skip

    repro.text = f"pg.{op}(sorted ids, indices_are_sorted=True, deterministic=True)"
    want = ref_tree_segment(data, ids, segments, op.removeprefix("segment_"))
    out = in_mode(run, mode)(backend.asarray(data), backend.asarray(ids))
    assert_same_bits(backend.to_numpy(out), want)
    offsets = np.searchsorted(ids, np.arange(segments + 1))
    csr = pg.segment_csr(backend.asarray(data), backend.asarray(offsets),
                         reduce=op.removeprefix("segment_"), deterministic=True)  # fmt: skip
    assert_same_bits(backend.to_numpy(csr), want)


def _scatter_case(
    op: str, seed: int, reduce: str
) -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], list[int | None], dict[str, Any]]:
    """``(x, index, updates, targets, kwargs)``: a scatter with many updates per element (a
    few index values out of range, dropped under "ignore"), and the flat target of each
    update element, found by plain loops."""
    rng = np.random.default_rng(seed)
    rows, width = int(rng.integers(1, 12)), int(rng.integers(1, 4))
    count = int(rng.integers(1, 400))
    if reduce == "multiply":
        x = rng.uniform(0.5, 2.0, (rows, width))
        updates = rng.uniform(0.95, 1.05, (count, width))
    else:
        x = rng.standard_normal((rows, width))
        updates = rng.standard_normal((count, width)) * 10.0 ** rng.integers(-3, 4, (count, 1))
        updates[rng.random((count, width)) < 0.05] = -0.0
    targets: list[int | None] = []
    if op == "scatter_nd":
        index = rng.integers(-1, rows + 1, (count, 1))
        for k in range(count):
            for j in range(width):
                valid = 0 <= index[k, 0] < rows
                targets.append(int(index[k, 0]) * width + j if valid else None)
        return x, index, updates, targets, {}
    index = rng.integers(0, rows, (count, width))  # along axis 0, each column its own
    for k in range(count):
        for j in range(width):
            targets.append(int(index[k, j]) * width + j)
    kwargs = {"axis": 0} if op == "put_along_axis" else {}
    return x, index, updates, targets, kwargs


@pytest.mark.cell("deterministic scatters {mode}")
@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("op", SCATTERS)
def test_scatter_bits_of_the_tree(backend, mode, repro, op, reduce):
    """``out = x op tree(updates)`` per element, against the plain-loop tree, in every
    floating dtype the backend holds, twice each."""

    def check(seed: int) -> None:
        x, index, updates, targets, kwargs = _scatter_case(op, seed, reduce)

        def run(a: Any, i: Any, u: Any) -> Any:
            options = {"reduce": reduce, "bad_indices": "ignore", "deterministic": True}
            if op == "scatter_d":
                return pg.scatter_d(a, 0, i, u, **options)
            return getattr(pg, op)(a, i, u, **options, **kwargs)

        run_in_mode = in_mode(run, mode)
        for dtype in _dtypes(backend, "segment_prod" if reduce == "multiply" else "segment_sum"):
            data, values = _in_dtype(x, dtype), _in_dtype(updates, dtype)
            repro.text = f"pg.{op}({dtype} seed={seed}, reduce={reduce!r}, deterministic=True)"
            want = ref_tree_scatter(data, targets, values, reduce)
            if dtype == "bfloat16":
                want = want.astype(np.float32)
            for _ in range(2):
                out = run_in_mode(
                    _to_backend(backend, data), backend.asarray(index), _to_backend(backend, values)
                )
                assert_same_bits(_from_backend(backend, out, dtype), want)

    each_drawn(4, st.integers(0, 2**20), check)


@pytest.mark.cell("deterministic chunks")
@pytest.mark.only("dask")
@pytest.mark.parametrize("op", OPS)
def test_dask_chunkings(backend, repro, op):
    """Rows past Dask's chunk of the tree (4096 rows), at chunkings that do not align with
    it: the bits of NumPy's, which are the reference's."""
    rng = np.random.default_rng(7)
    rows, segments = 9000, 40
    if op == "segment_prod":
        data = rng.uniform(0.8, 1.25, (rows, 2)).astype(np.float32)
    else:
        data = rng.standard_normal((rows, 2)).astype(np.float32)
    ids = rng.integers(0, segments, rows)
    function = getattr(pg, op)
    want = ref_tree_segment(data, ids, segments, op.removeprefix("segment_"))
    assert_same_bits(function(data, ids, segments, deterministic=True), want)
    for chunk in (700, 4096, 3001, rows):
        repro.text = f"pg.{op}(dask chunks={chunk}, deterministic=True)"
        sizes = (chunk,) * (rows // chunk) + ((rows % chunk,) if rows % chunk else ())
        out = function(
            backend.asarray(data, chunks=(sizes, (1, 1))), backend.asarray(ids, chunks=(sizes,)),
            segments, deterministic=True,
        )  # fmt: skip
        assert_same_bits(backend.to_numpy(out), want)


@pytest.mark.cell("deterministic accuracy")
def test_error_within_the_bound(backend, repro):
    """A float32 sum's error against the exact sum (``math.fsum`` of the rows) is at most
    ``ceil(log2 n) * 2**-24 * sum(|x|)`` (the pairwise tree's bound, rounded up by a
    little), with ``n`` the number of rows: each row's value meets at most that many
    roundings."""
    rng = np.random.default_rng(3)
    rows, segments = 5000, 7
    data = (rng.standard_normal(rows) * 10.0 ** rng.integers(-3, 4, rows)).astype(np.float32)
    ids = rng.integers(0, segments, rows)
    repro.text = "pg.segment_sum(float32 5000 rows, 7 segments, deterministic=True)"
    out = backend.to_numpy(pg.segment_sum(backend.asarray(data), backend.asarray(ids), segments,
                                          deterministic=True))  # fmt: skip
    depth = math.ceil(math.log2(rows))
    for segment in range(segments):
        values = data[ids == segment].astype(np.float64)
        exact = math.fsum(values.tolist())
        bound = depth * 2.0**-24 * float(np.abs(values).sum()) * 1.001
        assert abs(float(out[segment]) - exact) <= bound


@pytest.mark.cell("deterministic integers")
def test_integers_exact(backend, repro):
    """Integers have no order to fix: the same values as without the keyword."""
    data = np.array([[3, -1], [4, 1], [-5, 9], [2, 6]], dtype=np.int32)
    ids = np.array([2, 0, 2, 0])
    repro.text = "pg.segment_sum(int32, deterministic=True)"
    out = pg.segment_sum(backend.asarray(data), backend.asarray(ids), 3, deterministic=True)
    assert np.array_equal(backend.to_numpy(out), np.array([[6, 7], [0, 0], [-2, 8]], np.int32))


@pytest.mark.cell("deterministic errors")
@pytest.mark.parametrize("op", [*OPS, "segment_csr", *SCATTERS])
def test_keyword_must_be_a_bool(backend, op):
    data, ids = backend.asarray(np.ones(3, np.float32)), backend.asarray(np.zeros(3, np.int64))
    yes: Any = "yes"  # (not a bool: the type checker agrees it is wrong)
    index = backend.asarray(np.zeros((3, 1) if op == "scatter_nd" else 3, np.int64))
    calls = {
        "scatter_nd": lambda: pg.scatter_nd(data, index, data, reduce="add", deterministic=yes),
        "scatter_d": lambda: pg.scatter_d(data, 0, index, data, reduce="add", deterministic=yes),
        "put_along_axis": lambda: pg.put_along_axis(data, index, data, deterministic=yes),
        "segment_csr": lambda: pg.segment_csr(
            data, backend.asarray(np.array([0, 3])), deterministic=yes
        ),
    }
    call = calls.get(op, lambda: getattr(pg, op)(data, ids, 2, deterministic=yes))
    with pytest.raises(TypeError, match="deterministic must be True or False; got 'yes'"):
        call()


@pytest.mark.cell("deterministic errors")
@pytest.mark.only("numpy", "array_api_strict", "jax", "torch", "dask")  # (ndonnx: no complex)
@pytest.mark.parametrize("op", ["segment_mean", "segment_prod"])
def test_complex_sums_only(backend, op):
    """Backends divide and multiply complex numbers by formulas of their own."""
    data = backend.asarray(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match=rf"{op}\(deterministic=True\) takes real data"):
        getattr(pg, op)(data, backend.asarray(np.zeros(3, np.int64)), 2, deterministic=True)


@pytest.mark.cell("deterministic errors")
@pytest.mark.only("numpy", "array_api_strict", "jax", "torch", "dask")  # (ndonnx: no complex)
def test_complex_scatter_products_refused(backend):
    x = backend.asarray(np.ones(3, np.complex64))
    index = backend.asarray(np.zeros(3, np.int64))
    with pytest.raises(TypeError, match='reduce="multiply" with deterministic=True takes real'):
        pg.scatter_d(x, 0, index, x, reduce="multiply", deterministic=True)


def _gradient_case() -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]]:
    rng = np.random.default_rng(5)
    data = rng.standard_normal((50, 3)).astype(np.float32)
    ids = rng.integers(0, 6, 50)
    cotangent = rng.standard_normal((6, 3)).astype(np.float32)
    return data, ids, cotangent


@pytest.mark.cell("deterministic grad")
@pytest.mark.only("jax")
@pytest.mark.modes("eager", "jit")
@pytest.mark.usefixtures("backend")
def test_grad_is_the_gather(mode, repro):
    """The backward of a sum is a gather of the cotangent, whatever the order: the same
    gradient as ``deterministic=False``'s, ``cotangent[ids]``."""
    import jax
    import jax.numpy as jnp

    data, ids, cotangent = _gradient_case()
    repro.text = "jax.grad(pg.segment_sum(..., deterministic=True))"
    w = jnp.asarray(cotangent)

    def loss(d: Any, i: Any) -> Any:
        return jnp.sum(pg.segment_sum(d, i, 6, deterministic=True, bad_indices="clip") * w)

    grad = in_mode(jax.grad(loss), mode)(jnp.asarray(data), jnp.asarray(ids))
    assert np.array_equal(np.asarray(grad), cotangent[ids])


@pytest.mark.cell("deterministic autograd")
@pytest.mark.only("torch")
def test_autograd_is_the_gather(backend, repro):
    import torch

    data, ids, cotangent = _gradient_case()
    repro.text = "pg.segment_sum(..., deterministic=True).backward(cotangent)"
    tensor = torch.asarray(data).requires_grad_(True)
    pg.segment_sum(tensor, torch.asarray(ids), 6, deterministic=True).backward(
        torch.asarray(cotangent)
    )
    assert tensor.grad is not None
    assert np.array_equal(backend.to_numpy(tensor.grad), cotangent[ids])
