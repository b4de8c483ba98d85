"""The segment toolkit (docs/contract.md, "The segment toolkit"): softmax, log-softmax,
logsumexp, argmax/argmin, var/std, counts and bincount, against the plain loops of
``reference.ref_segment_toolkit`` (float64, rounded once) and NumPy's own ``bincount``: drawn
calls in every mode, every policy, empty segments, NaN, infinities and ties, ``empty_value``,
every error, and gradients against finite differences of the reference."""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import portagather as pg

from . import reference, strategies
from .backends import Backend
from .cases import POLICIES, Call, raises_lazily
from .modes import effective_policy
from .runs import each_drawn, named_rows

#: The toolkit's functions of data and ids, by the name after ``segment_``.
FLOATING = ("softmax", "log_softmax", "logsumexp", "var", "std")
OPS = (*FLOATING, "argmax", "argmin")
#: Those that return one value per segment (and take ``empty_value``).
PER_SEGMENT = ("logsumexp", "var", "std", "argmax", "argmin")


def _expected(call: Call, mode: str = "eager") -> npt.NDArray[Any]:
    kwargs = {
        **call.kwargs,
        "bad_indices": effective_policy(call.kwargs.get("bad_indices", "error"), mode),
    }
    return reference.ref_segment_toolkit(call.data, call.indices, op=call.op[8:], **kwargs)


def _close(
    backend: Backend, out: Any, expected: npt.NDArray[Any], data: Any, op: str,
    values: npt.NDArray[Any] | None = None,
) -> None:  # fmt: skip
    """The result against the reference: positions exactly, floating values within a few
    units of rounding of the data's dtype (the backends' own exp and log differ in the last
    bits); namespace, device, shape and dtype as documented."""
    import array_api_compat as aac

    assert aac.array_namespace(out) is backend.xp
    assert aac.device(out) == aac.device(data)
    assert tuple(out.shape) == expected.shape, f"shape {tuple(out.shape)} != {expected.shape}"
    if values is None:
        values = backend.to_numpy(out)
    if op in ("argmax", "argmin"):
        assert values.dtype.kind == "i", values.dtype
        assert np.array_equal(values, expected), f"got {values.tolist()}\nwant {expected.tolist()}"
        return
    assert out.dtype == data.dtype, f"dtype {out.dtype} != {data.dtype}"
    tolerance = {4: 2e-5, 8: 1e-12}.get(values.dtype.itemsize, 4e-3)
    np.testing.assert_allclose(values, expected, rtol=tolerance, atol=tolerance, equal_nan=True)


def _float_call(call: Call, op: str, dtype: str, rng: np.random.Generator) -> Call:
    """`call` (a drawn ``segment_sum`` call) as a call of ``segment_<op>`` on floating data
    of `dtype`, spread over a range where exp neither overflows nor underflows."""
    data = rng.normal(scale=3.0, size=call.data.shape).astype(dtype)
    if op in ("argmax", "argmin"):  # ties on purpose: few distinct values
        data = rng.integers(-2, 3, size=call.data.shape).astype(dtype)
    out = Call(f"segment_{op}", data, call.indices, dict(call.kwargs))
    out.chunks = call.chunks
    return out


@pytest.mark.cell("segment toolkit {mode}")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
def test_valid_ids(backend, mode, repro, op):
    """Drawn calls with every id valid, in every mode (eager; jit on JAX; lazy on Dask)."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    dtype = "float64" if "float64" in backend.dtypes else "float32"
    rng = np.random.default_rng(len(op))

    def check(drawn: Call) -> None:
        call = repro(_float_call(drawn, op, dtype, rng))
        if mode == "jit":
            call.kwargs["bad_indices"] = "clip"
        out, data = call.run(backend, mode=mode)
        _close(backend, out, _expected(call, mode), data, op)

    each_drawn(6, strategies.segment_calls("segment_sum"), check)


@pytest.mark.cell("segment toolkit policy:{policy}")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "op", [f"segment_{o}" for o in ("softmax", "log_softmax", "logsumexp", "argmax", "var")]
)
def test_bad_ids(backend, mode, repro, op, policy):
    """Negative and too-large ids under every policy: ``"error"`` raises naming the first
    (when computed on Dask; under jit it asks for checkify), ``"ignore"`` drops the row (a
    dropped row's softmax is 0, its log-softmax -inf), the others move it into range."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    data = np.array([[0.5, -1.0], [2.0, 0.25], [-3.0, 1.5], [1.0, 1.0], [0.0, 4.0]])
    ids = np.array([0, -1, 2, 5, 0])
    call = repro(Call(f"segment_{op}", data, ids, {"num_segments": 3, "bad_indices": policy}))
    if policy == "unchecked":
        call.indices = np.array([0, 1, 2, 2, 0])
    if mode == "jit" and policy == "error":
        raises_lazily(backend, ValueError, call, "checkify", mode)
        return
    if policy == "error":
        raises_lazily(backend, IndexError, call, r"segment_ids\[1\] = -1 is out of range", mode)
        return
    out, array = call.run(backend, mode=mode)
    _close(backend, out, _expected(call, mode), array, op)


_SPECIAL = np.array([1.0, np.nan, 3.0, -np.inf, -np.inf, np.inf, 2.0, 2.0, 7.0, 5.0])
_SPECIAL_IDS = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3, 3])


@pytest.mark.cell("segment toolkit NaN and infinities")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
def test_nan_infinities_ties(backend, repro, op):
    """A NaN makes its segment NaN (argmax: its position); a segment of -inf only, or with
    +inf, follows the reference's definitions; ties go to the first position; segment 4
    is empty."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    call = repro(Call(f"segment_{op}", _SPECIAL, _SPECIAL_IDS, {"num_segments": 5}))
    # inf - inf and inf / inf, which these inputs ask for, warn on NumPy (and Dask's NumPy
    # blocks) as in any NumPy expression: expected here, so not reported.
    with np.errstate(invalid="ignore"):
        out, data = call.run(backend)
        values = backend.to_numpy(out)
    _close(backend, out, _expected(call), data, op, values)


@pytest.mark.cell("segment toolkit empty_value")
@pytest.mark.parametrize(
    "op", [f"segment_{o}" for o in (*PER_SEGMENT, "sum", "mean", "max", "min", "prod")]
)
def test_empty_value(backend, repro, op):
    """``empty_value`` in the empty segments only (1 and 3), on every per-segment function."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    data = np.array([[1.0, -2.0], [3.0, 4.0], [0.5, 8.0]])
    call = repro(Call(f"segment_{op}", data, np.array([0, 2, 0]), {"num_segments": 4,
                                                                   "empty_value": -7}))  # fmt: skip
    out, array = call.run(backend)
    if op in PER_SEGMENT:
        expected = _expected(call)
    else:
        expected = reference.ref_segment(data, np.array([0, 2, 0]), 4, op)
        expected[[1, 3]] = -7
    _close(backend, out, expected, array, op)


@pytest.mark.cell("segment toolkit integers")
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "bool"])
@pytest.mark.parametrize("op", ["segment_argmax", "segment_argmin"])
def test_arg_integers(backend, repro, op, dtype):
    """argmax and argmin of integer and bool data, with ties and an empty segment."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    if dtype not in backend.dtypes:
        dtype = "int32"  # (every backend holds int32: the dtype row is then a repeat)
    data = np.array([[3, 1], [5, 1], [5, 0], [0, 0], [1, 1]]).astype(dtype)
    call = repro(Call(f"segment_{op}", data, np.array([1, 1, 1, 3, 3]), {"num_segments": 4}))
    out, array = call.run(backend)
    _close(backend, out, _expected(call), array, op)


@pytest.mark.cell("segment toolkit counts")
@pytest.mark.parametrize("op", ["segment_count"])
@pytest.mark.parametrize("policy", ["error", "ignore", "clip"])
def test_segment_count(backend, op, policy):
    """Rows per segment, in the widest integer dtype, against a loop."""
    del op  # names the matrix row only
    ids = np.array([[3, 0], [3, 9], [1, 3]]) if policy != "error" else np.array([[3, 0], [3, 1]])
    out = pg.segment_count(backend.asarray(ids), 5, bad_indices=policy)
    expected = reference.ref_segment_count(ids, 5, policy)
    assert backend.to_numpy(out).tolist() == expected.tolist()


@pytest.mark.cell("segment toolkit bincount")
@named_rows(
    ("x", "weights", "minlength", "length"),
    [
        ("counts", [0, 1, 1, 3, 1], None, 0, None),
        ("minlength", [0, 1, 1, 3, 1], None, 7, None),
        ("weights", [0, 1, 1, 3, 1], [0.5, 1.0, -2.0, 3.0, 0.25], 0, None),
        ("length", [2, 2], [1.5, 2.0], 0, 6),
        ("empty-minlength", [], None, 3, None),
        ("empty", [], None, 0, None),
    ],
)
@pytest.mark.parametrize("op", ["bincount"])
def test_bincount(backend, op, x, weights, minlength, length):
    """Against NumPy's ``bincount`` itself (the counts, or the weighted sums in the weights'
    dtype: NumPy's are float64)."""
    del op  # names the matrix row only
    x_array = backend.asarray(
        np.array(x, dtype=np.int64 if "int64" in backend.dtypes else np.int32)
    )
    w = None
    if weights is not None:
        dtype = "float64" if "float64" in backend.dtypes else "float32"
        w = backend.asarray(np.array(weights, dtype=dtype))
    if backend.name in ("dask", "ndonnx") and length is None:  # sizes fixed in advance
        length = max(max(x, default=-1) + 1, minlength)
    out = pg.bincount(x_array, w, minlength, length=length)
    want = np.bincount(np.array(x, dtype=np.int64), weights, minlength)
    if length is not None:
        want = np.concatenate([want, np.zeros(length - want.size, want.dtype)])
    got = backend.to_numpy(out)
    assert got.dtype.kind == ("f" if weights is not None else "i")
    np.testing.assert_allclose(got, want, rtol=1e-6)


_D = np.array([[1.0, 2.0], [3.0, 4.0]])

#: Each bad call and what it raises, in the documented order (kinds, shapes, dtypes, values).
ERRORS = [
    ("softmax-int-data", Call("segment_softmax", np.array([1, 2]), np.array([0, 0])),
     TypeError, r"^segment_softmax needs data of a real floating dtype; got int"),
    ("var-bool-data", Call("segment_var", np.array([True, False]), np.array([0, 0])),
     TypeError, r"^segment_var needs data of a real floating dtype; got bool"),
    ("var-correction-kind", Call("segment_var", _D, np.array([0, 0]), {"correction": "1"}),
     TypeError, r"correction must be a real number >= 0 \(an int or a float\); got '1'"),
    ("var-correction-value", Call("segment_std", _D, np.array([0, 0]), {"num_segments": 1,
                                                                         "correction": -1}),
     ValueError, r"correction must be a real number >= 0; got -1"),
    ("empty_value-kind", Call("segment_logsumexp", _D, np.array([0, 0]), {"empty_value": "x"}),
     TypeError, r"empty_value must be None or a real scalar"),
    ("empty_value-fit", Call("segment_argmax", _D, np.array([0, 0]), {"num_segments": 3,
                                                                     "empty_value": 0.5}),
     ValueError, r"empty_value=0\.5 cannot be held exactly by the result's dtype int"),
    ("empty_value-fit-max", Call("segment_max", np.array([1, 2], dtype=np.int32),
                                 np.array([0, 0]), {"num_segments": 2, "empty_value": 2**40}),
     ValueError, r"empty_value=1099511627776 cannot be held exactly by the result's dtype int32"),
    ("ids-shape", Call("segment_softmax", _D, np.array([0, 0, 1])),
     ValueError, r"segment_ids\.shape must be a leading part of data\.shape"),
    ("bad-id", Call("segment_argmin", _D, np.array([0, 4]), {"num_segments": 2}),
     IndexError, r"segment_ids\[1\] = 4 is out of range \[0, 2\) \(num_segments = 2\)"),
]  # fmt: skip


@pytest.mark.cell("segment toolkit errors")
@named_rows(("op", "call", "error", "pattern"), [(e[0], e[1].op, *e[1:]) for e in ERRORS])
def test_errors(backend, repro, op, call, error, pattern):
    del op  # names the matrix row only
    if call.data.dtype == np.float64 and "float64" not in backend.dtypes:
        call = Call(call.op, call.data.astype(np.float32), call.indices, call.kwargs)
    raises_lazily(backend, error, repro(call), match=pattern)


_BINCOUNT_ERRORS = [
    ("x-dtype", (np.array([0.0, 1.0]),), {}, TypeError, r"^x must have an integer dtype"),
    ("x-2d", (np.array([[0, 1]]),), {}, ValueError, r"^x must be 1-dimensional"),
    ("weights-shape", (np.array([0, 1]), np.ones(3)), {}, ValueError,
     r"^x\.shape must be a leading part of weights\.shape"),
    ("negative", (np.array([1, -1]),), {"length": 3}, IndexError,
     r"^x\[1\] = -1 is out of range \[0, 3\) \(the result's length is 3\)"),
    ("past-length", (np.array([1, 5]),), {"length": 3}, IndexError, r"^x\[1\] = 5 is out of"),
    ("minlength", (np.array([1]),), {"minlength": -1}, ValueError, r"^minlength must be >= 0"),
    ("length-kind", (np.array([1]),), {"length": 2.5}, TypeError, r"^length must be an int"),
    ("length-below-minlength", (np.array([1]),), {"minlength": 4, "length": 2}, ValueError,
     r"^length must be >= minlength; got length=2 and minlength=4"),
]  # fmt: skip


@pytest.mark.cell("segment toolkit errors")
@named_rows(("args", "kwargs", "error", "pattern"), _BINCOUNT_ERRORS)
@pytest.mark.parametrize("op", ["bincount"])
def test_bincount_errors(backend, op, args, kwargs, error, pattern):
    del op  # names the matrix row only
    arrays = []
    for a in args:
        if a.dtype == np.float64 and "float64" not in backend.dtypes:
            a = a.astype(np.float32)
        if a.dtype == np.int64 and "int64" not in backend.dtypes:
            a = a.astype(np.int32)
        arrays.append(backend.asarray(a))
    if backend.name in ("dask", "ndonnx"):  # sizes fixed in advance
        kwargs = {"length": 4, **kwargs}
    with pytest.raises(error, match=pattern):
        backend.to_numpy(pg.bincount(*arrays, **kwargs))


# -- gradients, against central finite differences of the reference in float64

_GRAD_DATA = np.array([[0.3, -1.2], [2.0, 0.5], [-0.7, 1.1], [1.4, -0.2], [0.9, 0.8]])
_GRAD_IDS = np.array([1, 0, 1, 1, 0])


def _numerical_gradient(op: str, cotangent: npt.NDArray[Any], **kwargs: Any) -> npt.NDArray[Any]:
    def f(data: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return reference.ref_segment_toolkit(data, _GRAD_IDS, 2, op, **kwargs)

    grad = np.zeros_like(_GRAD_DATA)
    eps = 1e-6
    for position in np.ndindex(*_GRAD_DATA.shape):
        up, down = _GRAD_DATA.copy(), _GRAD_DATA.copy()
        up[position] += eps
        down[position] -= eps
        grad[position] = np.sum((f(up) - f(down)) * cotangent) / (2 * eps)
    return grad


def _cotangent(op: str) -> npt.NDArray[Any]:
    shape = _GRAD_DATA.shape if op in ("softmax", "log_softmax") else (2, 2)
    return np.random.default_rng(3).normal(size=shape)


@pytest.mark.cell("segment toolkit grad")
@pytest.mark.only("jax")
@pytest.mark.modes("eager", "jit")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in FLOATING])
def test_grad_jax(backend, mode, op):
    op = op[len("segment_") :]  # the matrix's row is the function's name
    import jax

    kwargs = {"correction": 1} if op in ("var", "std") else {}
    cotangent = _cotangent(op)
    with jax.enable_x64(True):
        ids = jax.numpy.asarray(_GRAD_IDS)

        def loss(data: Any) -> Any:
            out = getattr(pg, f"segment_{op}")(data, ids, 2, bad_indices="clip", **kwargs)
            return (out * jax.numpy.asarray(cotangent)).sum()

        grad = jax.grad(loss)
        if mode == "jit":
            grad = jax.jit(grad)
        got = backend.to_numpy(grad(jax.numpy.asarray(_GRAD_DATA)))
    np.testing.assert_allclose(
        got, _numerical_gradient(op, cotangent, **kwargs), rtol=1e-6, atol=1e-8
    )


@pytest.mark.cell("segment toolkit grad")
@pytest.mark.only("torch")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in FLOATING])
def test_autograd_torch(backend, op):
    op = op[len("segment_") :]  # the matrix's row is the function's name
    import torch

    kwargs = {"correction": 1} if op in ("var", "std") else {}
    cotangent = _cotangent(op)
    data = torch.asarray(_GRAD_DATA, requires_grad=True)
    out = getattr(pg, f"segment_{op}")(data, torch.asarray(_GRAD_IDS), 2, **kwargs)
    (out * torch.asarray(cotangent)).sum().backward()
    got = backend.to_numpy(data.grad)
    np.testing.assert_allclose(
        got, _numerical_gradient(op, cotangent, **kwargs), rtol=1e-6, atol=1e-8
    )


@pytest.mark.cell("segment toolkit CSR")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
@named_rows(
    ("offsets", "options"),
    [
        ("vector", [1, 3, 3, 6], {}),
        ("batched", [[0, 2, 2], [1, 1, 4]], {}),
        ("empty_value", [0, 0, 2, 5], {"empty_value": -3}),
    ],
)
def test_csr(backend, op, offsets, options):
    """``segment_csr(reduce=op)``: the toolkit over CSR offsets, with rows before the first
    offset and after the last, empty segments and a batch axis."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    offsets = np.array(offsets)
    rng = np.random.default_rng(7)
    dtype = "float64" if "float64" in backend.dtypes else "float32"
    data = rng.integers(-2, 3, size=(*offsets.shape[:-1], 6, 2)).astype(dtype)
    if op in ("softmax", "log_softmax") and "empty_value" in options:
        options = {}  # (no value per segment)
    if op in ("var", "std"):
        options = {**options, "correction": 1}
    index_dtype = np.int64 if "int64" in backend.dtypes else np.int32
    out = pg.segment_csr(backend.asarray(data), backend.asarray(offsets.astype(index_dtype)),
                         reduce=op, **options)  # fmt: skip
    expected = reference.ref_csr_toolkit(data, offsets, op, **options)
    _close(backend, out, expected, backend.asarray(data), op)


@pytest.mark.cell("segment toolkit torch.compile")
@pytest.mark.only("torch")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
def test_torch_compile(backend, op):
    """Each function under ``torch.compile(fullgraph=True)`` (no graph break under a policy
    that reads no value; ``aot_eager``, which traces forward and backward as Inductor's
    front does), against the reference, with a gradient for the floating ones."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    import warnings

    import torch
    import torch._dynamo

    function = getattr(pg, f"segment_{op}")
    torch._dynamo.reset()
    compiled = torch.compile(lambda d, i: function(d, i, 2, bad_indices="clip"), fullgraph=True,
                             backend="aot_eager")  # fmt: skip
    data = torch.asarray(_GRAD_DATA, requires_grad=op in FLOATING)
    with warnings.catch_warnings():
        # Dynamo warns that it traces through array_api_compat's lru_cache wrappers.
        warnings.filterwarnings("ignore", message=".*lru_cache.*", category=UserWarning)
        out = compiled(data, torch.asarray(_GRAD_IDS))
        expected = reference.ref_segment_toolkit(_GRAD_DATA, _GRAD_IDS, 2, op)
        _close(backend, out, expected, data, op)
        if op in FLOATING:
            cotangent = _cotangent(op)
            (out * torch.asarray(cotangent)).sum().backward()
            want = _numerical_gradient(op, cotangent)
            np.testing.assert_allclose(backend.to_numpy(data.grad), want, rtol=1e-6, atol=1e-8)
    torch._dynamo.reset()


@pytest.mark.cell("segment toolkit vmap")
@pytest.mark.only("jax")
@pytest.mark.parametrize("over", ["data", "ids", "both"])
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
def test_vmap(backend, op, over):
    """``jax.vmap`` over a batch of data, of ids, or of both: each slice as the reference
    computes it alone (``"clip"``: values under vmap are traced)."""
    import jax

    op = op[len("segment_") :]  # the matrix's row is the function's name
    rng = np.random.default_rng(5)
    data = rng.integers(-2, 3, size=(3, *_GRAD_DATA.shape)).astype(np.float32)
    ids = np.stack([_GRAD_IDS, _GRAD_IDS[::-1], np.zeros_like(_GRAD_IDS)])
    function = getattr(pg, f"segment_{op}")
    axes = {"data": (0, None), "ids": (None, 0), "both": (0, 0)}[over]
    batched = jax.vmap(lambda d, i: function(d, i, 2, bad_indices="clip"), in_axes=axes)
    d = data if over != "ids" else data[0]
    i = ids if over != "data" else ids[0]
    out = backend.to_numpy(batched(backend.asarray(d), backend.asarray(i)))
    for k in range(3):
        want = reference.ref_segment_toolkit(
            data[k] if over != "ids" else data[0], ids[k] if over != "data" else ids[0], 2, op
        )
        if op in ("argmax", "argmin"):
            assert np.array_equal(out[k], want)
        else:
            np.testing.assert_allclose(out[k], want, rtol=2e-5, atol=2e-5, equal_nan=True)


@pytest.mark.cell("segment toolkit checkify")
@pytest.mark.only("jax")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
def test_checkify(backend, op):
    """``"error"`` under ``jit`` through ``checkify``: a bad id comes back as its error, named
    as eagerly; valid ids give the reference's answer."""
    import jax
    from jax.experimental import checkify

    op = op[len("segment_") :]  # the matrix's row is the function's name
    function = getattr(pg, f"segment_{op}")
    checked = checkify.checkify(jax.jit(lambda d, i: function(d, i, 2)))
    data = backend.asarray(_GRAD_DATA.astype(np.float32))
    error, out = checked(data, backend.asarray(_GRAD_IDS))
    assert error.get() is None
    want = reference.ref_segment_toolkit(_GRAD_DATA.astype(np.float32), _GRAD_IDS, 2, op)
    _close(backend, out, want, data, op)
    bad = _GRAD_IDS.copy()
    bad[3] = 7
    error, _ = checked(data, backend.asarray(bad))
    assert "segment_ids[3] = 7 is out of range [0, 2) (num_segments = 2)" in str(error.get())


@pytest.mark.cell("segment toolkit Dask plans")
@pytest.mark.only("dask")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in OPS])
@pytest.mark.parametrize("policy", ["error", "ignore"])
def test_dask_one_pass(backend, op, policy):
    """On Dask, rows in several blocks (the inner axes whole): the statistics in one pass
    (argmax and argmin as (extreme, first position) pairs, var and std as (count, mean,
    squared deviations), the softmax family as (shift, sum of exps)), combined across
    blocks in a tree, against the reference; ties and NaN across block boundaries."""
    import dask.array as da

    op = op[len("segment_") :]  # the matrix's row is the function's name
    rng = np.random.default_rng(11)
    data = rng.integers(-3, 4, size=(40, 3)).astype(np.float64)
    data[[5, 27], 1] = np.nan
    ids = rng.integers(0, 6, size=40)
    if policy == "ignore":
        ids[[3, 30]] = [-1, 9]
    x = da.from_array(data, chunks=((7, 13, 1, 19), (3,)))
    i = da.from_array(ids, chunks=((7, 13, 1, 19),))
    out = getattr(pg, f"segment_{op}")(x, i, 6, bad_indices=policy)
    names = {str(key[0] if isinstance(key, tuple) else key) for key in out.__dask_graph__()}
    assert any(name.startswith("_partial") for name in names), sorted(names)[:8]
    want = reference.ref_segment_toolkit(data, ids, 6, op, policy)
    _close(backend, out, want, x, op)


def _bits(values: npt.NDArray[Any]) -> tuple[Any, ...]:
    """The bits of a float array, NaN's payload left out (docs/deterministic.md)."""
    nan = np.isnan(values)
    return nan.tolist(), np.where(nan, 0, values).tobytes()


@pytest.mark.cell("segment toolkit deterministic")
@pytest.mark.parametrize("op", [f"segment_{o}" for o in FLOATING])
def test_deterministic(backend, op):
    """``deterministic=True``: the sums in the tree's order (docs/deterministic.md, "The
    segment toolkit"). The same bits in two runs (on Dask, at two chunkings); var, made of
    ``+ - * /`` only, the bits of its two passes over the plain-loop tree
    (:func:`_tree_var`); the others within rounding of the float64 loops (each backend's own
    exp, log and sqrt)."""
    op = op[len("segment_") :]  # the matrix's row is the function's name
    rng = np.random.default_rng(13)
    dtype = "float64" if "float64" in backend.dtypes else "float32"
    data = (rng.normal(size=(600, 2)) * 10.0 ** rng.integers(-3, 4, size=(600, 1))).astype(dtype)
    ids = rng.integers(0, 7, size=600)
    function = getattr(pg, f"segment_{op}")
    runs = []
    for chunk in (64, 256):
        x = backend.asarray(data, chunks=((chunk,) * (600 // chunk) + (600 % chunk,), (2,)))
        i = backend.asarray(ids, chunks=((chunk,) * (600 // chunk) + (600 % chunk,),))
        runs.append(backend.to_numpy(function(x, i, 8, deterministic=True)))
    assert _bits(runs[0]) == _bits(runs[1])
    if op == "var":
        assert _bits(runs[0]) == _bits(_tree_var(data, ids, 8))
    else:
        want = reference.ref_segment_toolkit(data, ids, 8, op)
        tolerance = 2e-5 if dtype == "float32" else 1e-12  # (as _close's)
        np.testing.assert_allclose(runs[0], want, rtol=tolerance, atol=tolerance, equal_nan=True)


def _tree_var(data: npt.NDArray[Any], ids: npt.NDArray[Any], n: int) -> npt.NDArray[Any]:
    """``segment_var(deterministic=True)`` from the plain-loop tree
    (``reference.ref_tree_segment``): the mean from the tree's sum over the count, then the
    tree's sum of the squared deviations over the count (NaN for an empty segment), each
    step rounded in the data's dtype."""
    count = np.bincount(ids, minlength=n).astype(data.dtype)[:, None]
    some = count > 0
    mean = reference.ref_tree_segment(data, ids, n) / np.where(some, count, 1)
    deviation = data - mean[ids]
    squares = reference.ref_tree_segment(deviation * deviation, ids, n)
    with np.errstate(invalid="ignore"):
        return np.where(some, squares / np.where(some, count, 1), np.nan).astype(data.dtype)


@pytest.mark.cell("segment toolkit deterministic")
@pytest.mark.parametrize("op", ["bincount"])
def test_deterministic_bincount(backend, op):
    """A weighted ``bincount(deterministic=True)``: the plain-loop tree's bits
    (``reference.ref_tree_segment`` of the weights) on every backend."""
    del op  # names the matrix row only
    rng = np.random.default_rng(17)
    dtype = "float64" if "float64" in backend.dtypes else "float32"
    x = rng.integers(0, 9, size=500)
    w = (rng.normal(size=500) * 10.0 ** rng.integers(-3, 4, size=500)).astype(dtype)
    want = reference.ref_tree_segment(w, x, 9)
    index_dtype = np.int64 if "int64" in backend.dtypes else np.int32
    got = pg.bincount(backend.asarray(x.astype(index_dtype)), backend.asarray(w), length=9,
                      deterministic=True)  # fmt: skip
    assert _bits(backend.to_numpy(got)) == _bits(want)
