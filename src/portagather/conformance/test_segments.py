"""The segment reductions (docs/contract.md, "Segment reductions"): drawn calls against the
plain-loop reference, empty segments, every policy, every dtype, NaN and infinities, every
error, the CSR form, and the transformations (jit, vmap, grad, autograd, Dask laziness)."""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import strategies as st

import portagather as pg

from . import strategies
from .backends import Backend
from .cases import (
    BFLOAT16_BACKENDS,
    POLICIES,
    SEGMENTS,
    Call,
    bfloat16_array,
    bfloat16_reference,
    bfloat16_values,
    check_call,
    check_result,
    raises_lazily,
)
from .modes import in_mode
from .runs import each_drawn, named_rows

REDUCES = ("sum", "mean", "max", "min", "prod")


@pytest.mark.cell("segments {mode}")
@pytest.mark.parametrize("op", SEGMENTS)
def test_valid_ids(backend, mode, repro, op):
    """Every id valid, in every mode (eager; jit on JAX; lazy on Dask)."""

    # Under jit "error" asks for checkify (test_jit_error_through_checkify).
    _check_drawn(backend, mode, repro, strategies.segment_calls(op), 5, "clip")


def _check_drawn(
    backend: Backend, mode: str, repro: Any, strategy: Any, examples: int, jit_policy: str
) -> None:
    """Drawn calls checked against the reference in `mode`; under jit with `jit_policy`."""

    def check(call: Call) -> None:
        if mode == "jit":
            call.kwargs["bad_indices"] = jit_policy
        check_call(backend, repro(call), mode)

    each_drawn(examples, strategy, check)


@pytest.mark.cell("segments policy:{policy}")
@pytest.mark.parametrize("policy", [*POLICIES, "DEFAULT", "IGNORE"])
@pytest.mark.parametrize("op", ["segment_sum", "segment_mean", "segment_max"])
def test_bad_ids(backend, mode, repro, op, policy):
    """Negative and too-large ids under every policy: ``"error"`` raises naming the first
    (Dask: on compute; under jit: a ValueError that names checkify), ``"ignore"`` drops the
    row, ``"clip"`` and ``"wrap"`` move it; ``"unchecked"`` keeps the shape and dtype (where
    a bad id lands is unspecified), and with no segment at all it raises, as every policy
    but ``"ignore"`` does."""

    def check(call: Call) -> None:
        call.kwargs["bad_indices"] = policy
        repro(call)
        if call.kwargs["num_segments"] == 0 and call.data.size and call.policy(mode) != "ignore":
            # Known from the shapes alone, so raised when the function is called, even under jit.
            raises_lazily(backend, IndexError, call, "num_segments = 0", mode)
            return
        if not call.data.size:  # no rows: nothing is read, the identity under every policy
            out, data = call.run(backend, mode=mode)
            kwargs = {**call.kwargs, "bad_indices": "ignore"}
            check_result(backend, out, Call(op, call.data, call.indices, kwargs).expected(), data)
            return
        if policy != "unchecked":
            check_call(backend, call, mode)
            return
        out, data = call.run(backend, mode=mode)
        assert out.dtype == data.dtype
        assert tuple(out.shape) == (
            call.kwargs["num_segments"],
            *call.data.shape[call.indices.ndim :],
        )

    each_drawn(4, strategies.segment_calls(op, bad=True), check)


# Empty segments, all-equal ids, unsorted ids, 0-d ids, rows of several axes, no rows.
_M = np.array([[3, -1], [4, 1], [-5, 9], [2, 6]], dtype=np.int32)
EDGES = {
    "empty-segments": (_M, np.array([3, 3, 0, 3]), 5),
    "all-equal": (_M, np.array([1, 1, 1, 1]), 2),
    "unsorted": (_M, np.array([2, 0, 1, 0]), 3),
    "0-d-ids": (_M, np.array(1), 3),
    "2-d-ids": (_M, np.array([[0, 2], [2, 1], [0, 0], [1, 2]]), 3),
    "no-rows": (np.zeros((0, 2), np.int32), np.zeros(0, np.int64), 3),
    "no-segments-no-rows": (np.zeros((0, 2), np.int32), np.zeros(0, np.int64), 0),
    "rows-of-no-elements": (np.zeros((2, 0, 3), np.int32), np.array([1, 0]), 3),
}


@pytest.mark.cell("segments edges")
@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("op", SEGMENTS)
def test_edges(backend, repro, op, edge):
    data, ids, n = EDGES[edge]
    check_call(backend, repro(Call(op, data, ids, {"num_segments": n})))


def _extremes(dtype: str) -> npt.NDArray[Any]:
    """Five values of `dtype` with its extremes (uint64 above 2**53, which float64 would
    round); floats exact, so that sums and products in any order agree."""
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.max, info.min, 1, info.max - 1, 3], dtype=dtype)
    values = np.array([1.5, -2.25, 0.0, 3.0, -0.5])
    return (
        (values + 1j * values[::-1]).astype(dtype)
        if dtype.startswith("c")
        else values.astype(dtype)
    )


@pytest.mark.cell("segments dtypes")
@pytest.mark.per_dtype("data")
@pytest.mark.parametrize("op", SEGMENTS)
def test_data_dtype(backend, repro, op, dtype):
    """Every numeric dtype the backend holds, extremes included (integers wrap around), with
    an empty segment (its identity: 0, 1, the dtype's lowest or highest value) and a
    dropped row, and with no rows at all; bool, strings and (for max and min) complex
    numbers are a TypeError, but bool for the max (any) and the min (all), as jax.ops takes
    it (docs/contract.md, R3)."""
    ordered = op in ("segment_max", "segment_min")
    if (
        (dtype == "bool" and not ordered)
        or dtype == "str"
        or (ordered and dtype.startswith("complex"))
    ):
        values = np.array(["a", "b"]) if dtype == "str" else np.zeros(2, dtype=dtype)
        call = Call(op, values, np.array([0, 1]), {"num_segments": 2})
        pattern = r"needs data of a (real )?numeric( or bool)? dtype; got "
        raises_lazily(backend, TypeError, repro(call), pattern)
        return
    ids = np.array([3, 0, 3, -1, 0])
    values = np.array([True, False, False, True, True]) if dtype == "bool" else _extremes(dtype)
    call = Call(op, values, ids, {"num_segments": 4, "bad_indices": "ignore"})
    check_call(backend, repro(call))
    no_rows = Call(op, values[:0], ids[:0], {"num_segments": 2})
    check_call(backend, repro(no_rows))


@pytest.mark.cell("segments dtypes")
@pytest.mark.per_dtype("index")
def test_id_dtype(backend, repro, dtype):
    ids = np.array([2, 0, 2, 1], dtype=dtype)
    call = Call("segment_sum", _M, ids, {"num_segments": 4})
    check_call(backend, repro(call))


@pytest.mark.cell("segments NaN and infinities")
@pytest.mark.parametrize("op", ["segment_max", "segment_min"])
def test_nan_and_infinities(backend, repro, op):
    """A NaN anywhere in a segment makes its max and min NaN, whatever its position; a
    segment of only -inf (inf) has max (min) -inf (inf), not the dtype's finite extreme."""
    nan, inf = np.nan, np.inf
    data = np.array(
        [[nan, 1.0], [2.0, nan], [-inf, inf], [-inf, inf], [1.0, -inf], [inf, 0.0]], np.float32
    )
    call = Call(op, data, np.array([0, 0, 1, 1, 2, 2]), {"num_segments": 4})
    check_call(backend, repro(call))


@pytest.mark.cell("segments num_segments=None")
@pytest.mark.parametrize("op", ["segment_sum", "segment_max"])
def test_num_segments_read_from_ids(backend, mode, repro, op):
    """None means max(segment_ids) + 1, read when the function is called; where it cannot
    be (jit, Dask), a ValueError that says to pass it."""
    call = repro(Call(op, _M, np.array([1, 4, 1, 0])))
    if mode == "eager" and not backend.lazy:
        check_call(backend, call)
        out, _ = call.run(backend)
        assert tuple(out.shape) == (5, 2)
        return
    with pytest.raises(ValueError, match=r"num_segments=None reads max\(segment_ids\) \+ 1"):
        call.run(backend, mode=mode)


@pytest.mark.cell("segments num_segments=None")
def test_num_segments_read_from_ids_no_array_holds(backend):
    """An id array whose largest value is the widest integer's own: max(segment_ids) + 1
    segments, which no array of the device holds, is refused as a given num_segments is,
    with portagather's ValueError (where the ids cannot be read now, the one that says to
    pass num_segments)."""
    wide = backend.to_numpy(backend.asarray(np.array([0, 1]))).dtype  # int32: JAX without x64
    top = int(np.iinfo(wide).max)
    ids = backend.asarray(np.array([0, 1, 1, top], dtype=wide))
    if backend.lazy:
        pattern = r"num_segments=None reads max\(segment_ids\) \+ 1"
    else:
        pattern = (
            rf"^num_segments=None, read as max\(segment_ids\) \+ 1, must be in \[0, \d+\] "
            rf"\(.*\); got {top + 1}$"
        )
    with pytest.raises(ValueError, match=pattern):
        backend.to_numpy(pg.segment_sum(backend.asarray(_M), ids))


# (id, call, exception, message pattern): docs/contract.md, "Segment reductions", errors.
ERRORS = [
    ("bad-id", Call("segment_sum", _M, np.array([0, 4, 1, 0]), {"num_segments": 4}),
     IndexError, r"^segment_ids\[1\] = 4 is out of range \[0, 4\) \(num_segments = 4\)$"),
    ("negative-id", Call("segment_max", _M, np.array([[0, 1], [1, 1], [-1, 0], [0, 0]]),
                         {"num_segments": 2}),
     IndexError, r"^segment_ids\[2, 0\] = -1 is out of range \[0, 2\)"),
    ("no-segments", Call("segment_sum", _M, np.array([0, 0, 0, 0]), {"num_segments": 0}),
     IndexError, r"num_segments = 0, so every value of segment_ids is out of range"),
    ("shape", Call("segment_sum", _M, np.array([0, 1, 1]), {"num_segments": 2}),
     ValueError, r"segment_ids\.shape must be a leading part of data\.shape; got "
     r"segment_ids\.shape = \(3,\) and data\.shape = \(4, 2\)"),
    ("negative-num_segments", Call("segment_sum", _M, np.zeros(4, np.int64), {"num_segments": -1}),
     ValueError, r"num_segments must be an int >= 0; got -1"),
    ("float-num_segments", Call("segment_sum", _M, np.zeros(4, np.int64), {"num_segments": 2.0}),
     TypeError, r"num_segments must be an int >= 0.*got 2\.0"),
    ("float-ids", Call("segment_sum", _M, np.zeros(4), {"num_segments": 2}),
     TypeError, r"segment_ids must have an integer dtype"),
    ("num_segments-past-every-integer",
     Call("segment_sum", _M, np.zeros(4, np.int64), {"num_segments": 10**20}),
     ValueError, r"^num_segments must be in \[0, \d+\] \(.*\); got 100000000000000000000$"),
    ("num_segments-past-every-array",  # TensorFlow's test: no array of so many rows exists
     Call("segment_max", _M, np.zeros(4, np.int64), {"num_segments": 8327099846119777499}),
     ValueError, r"^num_segments must be in \[0, \d+\] \(.*\); got 8327099846119777499$"),
    ("policy", Call("segment_sum", _M, np.zeros(4, np.int64), {"bad_indices": "drop"}),
     ValueError, r"bad_indices must be one of.*'drop'"),
    ("sorted-flag", Call("segment_sum", _M, np.zeros(4, np.int64), {"indices_are_sorted": 1}),
     TypeError, r"indices_are_sorted must be True or False; got 1"),
    ("csr-falling", Call("segment_csr", _M, np.array([0, 3, 2])),
     IndexError, r"^offsets\[2\] = 2 is outside \[0, 4\] or smaller than the offset before it"),
    ("csr-past-end", Call("segment_csr", _M, np.array([0, 5])),
     IndexError, r"^offsets\[1\] = 5 is outside \[0, 4\]"),
    ("csr-shape", Call("segment_csr", _M, np.zeros((3, 2), np.int64)),
     ValueError, r"offsets must have at least 1 dimension and, before its last one"),
    ("csr-reduce", Call("segment_csr", _M, np.array([0, 4]), {"reduce": "add"}),
     ValueError, r"reduce must be one of 'sum', 'mean', 'max', 'min', 'prod', 'logsumexp', "
     r"'argmax', 'argmin', 'var', 'std', 'softmax', 'log_softmax'; got 'add'"),
    ("csr-policy", Call("segment_csr", _M, np.array([0, 4]), {"bad_indices": "clip"}),
     ValueError, r"bad_indices must be 'error' or 'unchecked' for offsets"),
]  # fmt: skip


@pytest.mark.cell("segments errors")
@named_rows(("op", "call", "error", "pattern"), [(e[0], e[1].op, *e[1:]) for e in ERRORS])
def test_errors(backend, repro, op, call, error, pattern):
    del op  # names the matrix row only
    raises_lazily(backend, error, repro(call), match=pattern)


@pytest.mark.cell("segments errors")
@pytest.mark.only("torch", "jax", "dask", "ndonnx", "array_api_strict")
def test_two_namespaces(backend):
    with pytest.raises(TypeError, match="data and segment_ids must be arrays of one namespace"):
        pg.segment_sum(backend.asarray(_M), np.array([0, 1, 1, 0]), 2)


# The CSR form.


@pytest.mark.cell("segments {mode}")
@pytest.mark.parametrize("op", ["segment_csr"])
def test_csr(backend, mode, repro, op):
    del op  # names the matrix row only

    # Under jit "error" asks for checkify (test_csr_bad_offsets).
    strategy = st.sampled_from(REDUCES).flatmap(strategies.csr_calls)
    _check_drawn(backend, mode, repro, strategy, 8, "unchecked")


@pytest.mark.cell("segments bad offsets")
@pytest.mark.parametrize("op", ["segment_csr"])
def test_csr_bad_offsets(backend, mode, repro, op):
    """A bad offset raises under "error" (Dask: on compute; under jit: a ValueError naming
    checkify); "unchecked" keeps the shape."""
    del op  # names the matrix row only

    def check(call: Call) -> None:
        repro(call)
        if mode == "jit":
            raises_lazily(backend, ValueError, call, "checkify", mode)
        else:
            raises_lazily(backend, IndexError, call, r"is outside \[0, \d+\]", mode)
        unchecked = Call(
            call.op, call.data, call.indices, {**call.kwargs, "bad_indices": "unchecked"}
        )
        out, _ = unchecked.run(backend, mode=mode)
        want = call.data.shape[: call.indices.ndim - 1] + (call.indices.shape[-1] - 1,)
        assert tuple(out.shape)[: len(want)] == want

    each_drawn(4, strategies.csr_calls("sum", bad=True), check)


# Transformations: the gradients of JAX (grad, under jit) and PyTorch (autograd), vmap, Dask.

_GRAD_DATA = np.array([[1.0, 4.0], [3.0, 4.0], [2.0, -1.0], [3.0, 0.5], [7.0, 7.0]])
_GRAD_IDS = np.array([0, 0, 2, 0, -1])  # segment 0 ties on both columns, 1 is empty, -1 dropped
_WEIGHTS = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]])


def _expected_gradient(reduce: str) -> npt.NDArray[np.float64]:
    """d sum(weights * segment_<reduce>(data)) / d data, from the reference: the sum's and
    the mean's are the weight (over the count) of the row's segment, a gather; the max's
    and min's flow to the rows that reach the extreme, split evenly between ties (as
    ``jax.ops.segment_max`` and ``torch.scatter_reduce`` do)."""
    from .reference import ref_segment

    out = ref_segment(_GRAD_DATA, _GRAD_IDS, 3, reduce, "ignore")
    grad = np.zeros_like(_GRAD_DATA)
    for row, segment in enumerate(_GRAD_IDS):
        if segment < 0:
            continue
        members = _GRAD_IDS == segment
        if reduce == "sum":
            grad[row] = _WEIGHTS[segment]
        elif reduce == "mean":
            grad[row] = _WEIGHTS[segment] / members.sum()
        else:
            hit = _GRAD_DATA[row] == out[segment]
            ties = (_GRAD_DATA[members] == out[segment]).sum(axis=0)
            grad[row] = np.where(hit, _WEIGHTS[segment] / np.maximum(ties, 1), 0.0)
    return grad


@pytest.mark.cell("segments grad")
@pytest.mark.only("jax")
@pytest.mark.modes("eager", "jit")
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_jax_grad(backend, mode, reduce):
    import jax
    import jax.numpy as jnp

    f = getattr(pg, f"segment_{reduce}")
    ids, weights = backend.asarray(_GRAD_IDS), backend.asarray(_WEIGHTS, "float32")

    def loss(x: Any) -> Any:
        return jnp.sum(weights * f(x, ids, 3, bad_indices="ignore"))

    grad = in_mode(jax.grad(loss), mode)(backend.asarray(_GRAD_DATA, "float32"))
    assert np.allclose(np.asarray(grad), _expected_gradient(reduce))


@pytest.mark.cell("segments grad")
@pytest.mark.only("jax")
def test_jax_grad_of_sum_is_one_gather(backend):
    """The gradient of the sum is a gather of the cotangent: one XLA gather, no scatter."""
    import jax
    import jax.numpy as jnp

    ids, weights = backend.asarray(np.array([0, 0, 2, 1])), backend.asarray(_WEIGHTS, "float32")

    def loss(x: Any) -> Any:
        return jnp.sum(weights * pg.segment_sum(x, ids, 3, bad_indices="unchecked"))

    data = backend.asarray(_GRAD_DATA[:4], "float32")
    text = jax.jit(jax.grad(loss)).lower(data).as_text()
    assert text.count('"stablehlo.gather"(') == 1 and "stablehlo.scatter" not in text
    assert np.allclose(np.asarray(jax.grad(loss)(data)), _WEIGHTS[[0, 0, 2, 1]])


@pytest.mark.cell("segments grad")
@pytest.mark.only("torch")
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_torch_autograd(backend, reduce):
    import torch

    x = torch.tensor(_GRAD_DATA, requires_grad=True)
    out = getattr(pg, f"segment_{reduce}")(x, backend.asarray(_GRAD_IDS), 3, bad_indices="ignore")
    (torch.tensor(_WEIGHTS) * out).sum().backward()
    assert x.grad is not None
    assert np.allclose(backend.to_numpy(x.grad), _expected_gradient(reduce))


@pytest.mark.cell("segments vmap")
@pytest.mark.only("jax")
@pytest.mark.parametrize("op", SEGMENTS)
def test_vmap(backend, op):
    import jax

    datas = np.stack([_M, _M * 2 + 1])
    ids = np.stack([np.array([2, 0, 2, -1]), np.array([1, 1, 0, 5])])

    def f(d: Any, i: Any) -> Any:
        return getattr(pg, op)(d, i, 3, bad_indices="ignore")

    out = jax.vmap(f)(backend.asarray(datas), backend.asarray(ids))
    for k in range(2):
        want = Call(op, datas[k], ids[k], {"num_segments": 3, "bad_indices": "ignore"}).expected()
        assert np.array_equal(np.asarray(out[k]), want)


@pytest.mark.cell("segments jit")
@pytest.mark.only("jax")
def test_jit_error_through_checkify(backend):
    import jax
    from jax.experimental import checkify

    checked = checkify.checkify(jax.jit(lambda d, i: pg.segment_mean(d, i, 3)))
    error, _ = checked(backend.asarray(_M), backend.asarray(np.array([0, 2, 3, 1])))
    message = error.get()
    assert message is not None and "segment_ids[2] = 3 is out of range [0, 3)" in message
    error, out = checked(backend.asarray(_M), backend.asarray(np.array([0, 2, 2, 1])))
    assert error.get() is None
    want = Call("segment_mean", _M, np.array([0, 2, 2, 1]), {"num_segments": 3}).expected()
    assert np.array_equal(np.asarray(out), want)


@pytest.mark.cell("segments lazy")
@pytest.mark.only("dask")
def test_dask_routes_rows_to_result_blocks(backend: Backend):
    """Nothing is computed by the call; the result is chunked along the segments (Dask's
    automatic chunk size); no task reads more than one chunk of the data; the rows of the
    twenty data chunks reach each result block through a tree of tasks that each combine at
    most four chunks' rows (each row with its flat position and its position in the data: three
    times its bytes, for float64), so that no task holds more than that plus one result
    block; a bad id raises on compute."""
    import dask

    from .dask_costs import measure
    from .modes import no_compute

    rng = np.random.default_rng(0)
    values = rng.integers(-5, 5, (400, 3)).astype(np.float64)
    ids = rng.integers(0, 50, 400)
    data = backend.asarray(values, chunks=((20,) * 20, (3,))).persist()
    lazy_ids = backend.asarray(ids, chunks=((20,) * 20,)).persist()
    with no_compute(), dask.config.set({"array.chunk-size": "400B"}):
        out = in_mode(lambda d, i: pg.segment_sum(d, i, 50), "lazy")(data, lazy_ids)
    assert len(out.chunks[0]) > 1 and out.chunks[1] == (3,)
    got, costs = measure(out, data.name)
    assert np.array_equal(got, Call("segment_sum", values, ids, {"num_segments": 50}).expected())
    assert costs.most_params_blocks == 1
    assert any("combine" in str(key) for key in costs.inputs), "no tree"
    block = max(out.chunks[0]) * 3 * 8
    assert costs.largest_input <= block + 4 * 3 * (20 * 3 * 8)
    bad = backend.asarray(np.where(ids == 7, 60, ids), chunks=((20,) * 20,))
    with pytest.raises(IndexError, match=r"= 60 is out of range \[0, 50\)"):
        pg.segment_max(data, bad, 50).compute()


@pytest.mark.cell("segments inputs")
@pytest.mark.parametrize("op", SEGMENTS)
def test_inputs_are_left_alone(backend, op):
    data, ids = backend.asarray(_M), backend.asarray(np.array([2, 0, 2, 1]))
    out = getattr(pg, op)(data, ids, 3)
    backend.to_numpy(out)
    assert np.array_equal(backend.to_numpy(data), _M)
    assert np.array_equal(backend.to_numpy(ids), [2, 0, 2, 1])


@pytest.mark.cell("segments inputs")
def test_id_lists(backend):
    """Python lists for the ids, and for both (as NumPy arrays)."""
    out = pg.segment_sum(backend.asarray(_M), [[0, 1], [1, 1], [1, 0], [0, 0]], 2)
    ids = np.array([[0, 1], [1, 1], [1, 0], [0, 0]])
    want = Call("segment_sum", _M, ids, {"num_segments": 2}).expected()
    check_result(backend, out, want, backend.asarray(_M))
    assert np.array_equal(pg.segment_sum([1, 2, 3], [1, 1, 0]), [3, 3])


@pytest.mark.cell("segments inputs")
@pytest.mark.parametrize("ids", [[0.5, 1.0, 1.0, 1.0], [[0.0], [1.0], [1.0], [2.0]], 1.0],
                         ids=["list", "nested", "scalar"])  # fmt: skip
@pytest.mark.parametrize("op", [*SEGMENTS, "segment_csr"])
def test_float_id_lists(backend, op, ids):
    """Python floats as ids (or offsets) are refused as the gathers refuse them, never
    truncated: the same TypeError as ``gather(data, [0.0, 1.0])``."""
    data = backend.asarray(_M)
    with pytest.raises(TypeError) as gathered:
        pg.gather(data, ids)
    name = "offsets" if op == "segment_csr" else "segment_ids"
    want = str(gathered.value).replace("indices", name)
    assert want == f"{name} must have an integer dtype; got float64", want
    if op == "segment_csr":
        with pytest.raises(TypeError) as info:
            pg.segment_csr(data, ids)
    else:
        with pytest.raises(TypeError) as info:
            getattr(pg, op)(data, ids, 3)
    assert str(info.value) == want


# Python ints past every integer dtype (2**64, -2**70), or past the widest one of the data's
# device (2**40 on JAX without jax_enable_x64), as ids and as offsets: bad under every
# policy, by the gathers' one rule (docs/contract.md, "Segment reductions"). Expected values
# by a plain loop over Python's own arithmetic: "clip" takes an id to the edge on its side,
# "wrap" to its true remainder, "ignore" drops its row.
_BEYOND_IDS = [1, 2**64, -(2**70), 2**40]


@pytest.mark.cell("segments inputs")
@pytest.mark.parametrize("policy", POLICIES)
def test_id_lists_past_every_integer_dtype(backend, policy):
    data = backend.asarray(_M)
    call = lambda: pg.segment_sum(data, _BEYOND_IDS, 3, bad_indices=policy)  # noqa: E731
    if policy == "error":  # the first bad id, as written
        with pytest.raises(IndexError, match=r"^segment_ids\[1\] = 18446744073709551616 is "):
            backend.to_numpy(call())
        return
    out = call()
    if policy == "unchecked":
        assert tuple(out.shape) == (3, 2)
        return
    want = np.zeros((3, 2), dtype=np.int32)
    for row, v in enumerate(_BEYOND_IDS):
        if policy == "ignore" and not 0 <= v < 3:
            continue
        want[min(max(v, 0), 2) if policy == "clip" else v % 3] += _M[row]
    check_result(backend, out, want, data)


@pytest.mark.cell("segments bad offsets")
def test_offset_lists_past_every_integer_dtype(backend):
    """An offset no integer dtype holds: "error" names it as written, as a gather's index."""
    with pytest.raises(IndexError, match=r"^offsets\[1\] = 18446744073709551616 is outside"):
        backend.to_numpy(pg.segment_csr(backend.asarray(_M), [0, 2**64, 4]))
    with pytest.raises(IndexError, match=r"^offsets\[0\] = -1180591620717411303424 is out"):
        backend.to_numpy(pg.segment_csr(backend.asarray(_M), [-(2**70), 2, 4]))


@pytest.mark.cell("segments edges")
@pytest.mark.only("dask")
@pytest.mark.parametrize("op", [*SEGMENTS, "segment_csr"])
def test_dask_rows_of_no_elements(backend, repro, op):
    """Dask data with a zero-size inner axis, in chunks of 2 (the automatic chunks of the
    result would divide by its row size): NumPy's (3, 0, 3) result."""
    ids = np.array([[0, 0], [0, 0]]) if op == "segment_csr" else np.array([1, 0])
    kwargs = {} if op == "segment_csr" else {"num_segments": 3}
    call = Call(op, np.zeros((2, 0, 3)), ids, kwargs)
    call.chunks = (((2,), (0,), (2, 1)), ((2,),) * ids.ndim)
    check_call(backend, repro(call))


# bfloat16: rows of values exact in bfloat16, with a NaN, an empty segment and a dropped row.
_BF16_DATA = np.array(
    [[1.5, -2.0], [4.0, 0.5], [-3.0, np.nan], [2.0, 2.0], [0.25, -1.0], [3.0, 1.0]], np.float32
)
_BF16_IDS = np.array([2, 0, 2, 3, -1, 0])


@pytest.mark.cell("segments dtypes")
@pytest.mark.only(*BFLOAT16_BACKENDS)
@pytest.mark.parametrize("op", [*SEGMENTS, "segment_csr"])
def test_bfloat16(backend, op):
    """bfloat16 data (NumPy's from ml_dtypes, which JAX and TensorFlow hand NumPy users;
    JAX's and PyTorch's own): every reduction, valued as the float32 reference rounded to
    bfloat16 (the mean divided in float32 and rounded once)."""
    if op == "segment_csr":
        offsets = np.array([0, 2, 2, 5])
        data = bfloat16_array(backend, _BF16_DATA[:5])
        out = pg.segment_csr(data, backend.asarray(offsets), reduce="mean")
        want = Call(op, _BF16_DATA[:5], offsets, {"reduce": "mean"}).expected()
    else:
        kwargs = {"num_segments": 5, "bad_indices": "ignore"}
        data = bfloat16_array(backend, _BF16_DATA)
        out = getattr(pg, op)(data, backend.asarray(_BF16_IDS), **kwargs)
        want = Call(op, _BF16_DATA, _BF16_IDS, kwargs).expected()
    assert out.dtype == data.dtype, f"{out.dtype} is not {data.dtype}"
    got = bfloat16_values(backend, out)
    assert np.array_equal(got, bfloat16_reference(want), equal_nan=True), (got, want)


@pytest.mark.cell("segments errors")
@pytest.mark.parametrize("count", [10**20, 8327099846119777499], ids=["10**20", "tf-test"])
@pytest.mark.parametrize(
    "front_end",
    ["tensorflow.math.unsorted_segment_sum", "tensorflow.math.unsorted_segment_mean",
     "tensorflow.math.unsorted_segment_sqrt_n", "mindspore.unsorted_segment_max",
     "mindspore.UnsortedSegmentSum"],
)  # fmt: skip
def test_compat_num_segments_no_array_holds(backend, front_end, count):
    """TensorFlow's own test (``num_segments=8327099846119777499``) and a count past every
    integer, through the compat front ends: portagather's ValueError naming num_segments,
    its valid range and the value, on every backend."""
    import importlib

    module, *path = front_end.split(".")
    function: Any = importlib.import_module(f"portagather.compat.{module}")
    for name in path:
        function = getattr(function, name)
    if front_end.endswith("UnsortedSegmentSum"):
        function = function()
    data = backend.asarray(np.ones((3, 2), np.float32))
    pattern = rf"^num_segments must be in \[0, \d+\] \(.*\); got {count}$"
    with pytest.raises(ValueError, match=pattern):
        function(data, backend.asarray(np.array([0, 1, 1])), count)
