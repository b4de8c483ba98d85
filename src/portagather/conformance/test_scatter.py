"""The scatters (docs/contract.md, "Scatters"): drawn calls against the plain-loop reference,
duplicates, every policy, every error, inputs left alone, and the transformations."""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import portagather as pg

from . import strategies
from .backends import Backend
from .cases import (
    BFLOAT16_BACKENDS,
    POLICIES,
    REDUCTIONS,
    SCATTERS,
    ScatterCall,
    bfloat16_array,
    bfloat16_reference,
    bfloat16_values,
    check_broken_promise,
    check_call,
    check_result,
    raises_lazily,
    targets_are_sorted,
    targets_are_unique,
)
from .strategies import drawn

M23 = np.arange(1, 7, dtype=np.int32).reshape(2, 3)


@pytest.mark.cell("scatter {reduce}")
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("op", SCATTERS)
def test_valid_indices(backend, repro, op, reduce):
    @drawn(10)
    @given(strategies.scatter_calls(op, reduce))
    def check(call: ScatterCall) -> None:
        out, data = repro(call).run(backend)
        check_result(backend, out, call.expected(), data)

    check()


@pytest.mark.cell("scatter policy:{policy}")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("op", SCATTERS)
def test_bad_indices(backend, mode, repro, op, policy):
    """Every policy on drawn calls with bad indices, in every mode (eager; jit on JAX, where
    ``"error"`` asks for checkify; lazy on Dask, where nothing is computed by the call and
    ``"error"`` raises on compute)."""

    @drawn(6)
    @given(st.sampled_from(["update", "add", "max"]).flatmap(
        lambda reduce: strategies.scatter_calls(op, reduce, bad=True)
    ))  # fmt: skip
    def check(call: ScatterCall) -> None:
        call.kwargs["bad_indices"] = policy
        repro(call)
        if policy != "unchecked":
            check_call(backend, call, mode)
            return
        # Unchecked: what bad indices write is unspecified; the result is still params'.
        out, data = call.run(backend, mode=mode)
        values = backend.to_numpy(out)
        assert values.shape == call.data.shape and out.dtype == data.dtype

    check()


DUPLICATES = [
    # Four updates to element 1 across index chunks: the last in row-major order wins.
    ScatterCall(
        "scatter_nd", np.zeros(3, np.int32), np.array([[1], [1], [0], [1], [1]]),
        np.array([5, 6, 7, 8, 9], np.int32), {}, (((3,),), ((2, 3), (1,)), ((2, 3),)),
    ),
    ScatterCall(
        "scatter_d", np.zeros((2, 3), np.int32), np.array([[2, 2, 2], [0, 0, 1]]),
        np.array([[1, 2, 3], [4, 5, 6]], np.int32), {"dim": 1},
        (((1, 1), (2, 1)), ((1, 1), (1, 2)), ((1, 1), (2, 1))),
    ),
    ScatterCall(
        "put_along_axis", np.zeros((3, 2), np.int32), np.array([[1, 0], [1, 0], [2, 0]]),
        np.array([[1, 2], [3, 4], [5, 6]], np.int32), {"axis": 0},
        (((2, 1), (1, 1)), ((1, 2), (2,)), ((1, 1, 1), (1, 1))),
    ),
]  # fmt: skip


@pytest.mark.cell("scatter duplicates")
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("call", DUPLICATES, ids=[c.op for c in DUPLICATES])
def test_duplicates(backend, repro, call, reduce):
    call = ScatterCall(
        call.op, call.data + 2, call.indices, call.updates, {**call.kwargs, "reduce": reduce},
        call.chunks,
    )  # fmt: skip
    out, data = repro(call).run(backend)
    check_result(backend, out, call.expected(), data)


# Promises (docs/contract.md, S9): kept, the reference's answer; broken, the data's shape,
# nothing written where no update lands, and at the targets what S9 allows.

#: Each promise, and whether a call keeps it.
_KEEPS = {"unique_indices": targets_are_unique, "indices_are_sorted": targets_are_sorted}


def _check_promise(backend: Backend, call: ScatterCall, promise: str) -> None:
    out, data = call.run(backend)
    if _KEEPS[promise](call):
        check_result(backend, out, call.expected(), data)
    else:
        check_broken_promise(backend, call, out, data, promise)


@pytest.mark.cell("scatter {promise}")
@pytest.mark.parametrize("promise", list(_KEEPS))
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("op", SCATTERS)
def test_promises_drawn(backend, repro, op, reduce, promise):
    """Drawn calls (valid, or bad under a policy that writes) with the promise made: some
    keep it, many break it (small axes make duplicates and disorder common)."""

    @drawn(12)
    @given(
        st.sampled_from(["error", "ignore", "clip", "wrap"]).flatmap(
            lambda policy: st.tuples(
                st.just(policy), strategies.scatter_calls(op, reduce, bad=policy != "error")
            )
        )
    )
    def check(drawn_call: tuple[str, ScatterCall]) -> None:
        policy, call = drawn_call
        call.kwargs.update({"bad_indices": policy, promise: True})
        _check_promise(backend, repro(call), promise)

    check()


# Each scatter with duplicates in order (sorted, not unique), without duplicates out of
# order (unique, not sorted), and both kept; a bad index dropped by "ignore" is no target.
PROMISE_CASES = [
    ("nd-sorted-duplicates", ScatterCall(
        "scatter_nd", np.arange(8, dtype=np.int32).reshape(4, 2), np.array([[0], [2], [2], [3]]),
        np.array([[10, 11], [12, 13], [14, 15], [16, 17]], np.int32),
    )),
    ("nd-unique-unsorted", ScatterCall(
        "scatter_nd", np.arange(8, dtype=np.int32).reshape(4, 2), np.array([[3], [0], [2]]),
        np.array([[10, 11], [12, 13], [14, 15]], np.int32),
    )),
    ("nd-batch-sorted-unique", ScatterCall(
        "scatter_nd", np.arange(12, dtype=np.int32).reshape(2, 3, 2),
        np.array([[[0], [2]], [[1], [2]]]), np.arange(20, 28, dtype=np.int32).reshape(2, 2, 2),
        {"batch_dims": 1},
    )),
    ("nd-batch-sorted-duplicates", ScatterCall(
        "scatter_nd", np.arange(12, dtype=np.int32).reshape(2, 3, 2),
        np.array([[[1], [1]], [[0], [2]]]), np.arange(20, 28, dtype=np.int32).reshape(2, 2, 2),
        {"batch_dims": 1},
    )),
    ("nd-ignore-dropped-sorted", ScatterCall(
        "scatter_nd", np.arange(6, dtype=np.int32), np.array([[1], [9], [0], [4], [4]]),
        np.array([5, 6, 7, 8, 9], np.int32), {"bad_indices": "ignore"},
    )),
    ("nd2-ignore-dropped-sorted", ScatterCall(
        "scatter_nd", np.arange(12, dtype=np.int32).reshape(3, 4),
        np.array([[0, 1], [0, 9], [1, -1], [2, 3], [2, 3]]), np.array([5, 6, 7, 8, 9], np.int32),
        {"bad_indices": "ignore"},
    )),
    ("d-sorted-duplicates", ScatterCall(
        "scatter_d", np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[0, 0, 2], [1, 1, 1]]),
        np.arange(10, 16, dtype=np.int32).reshape(2, 3), {"dim": 1},
    )),
    ("d-unique-unsorted", ScatterCall(
        "scatter_d", np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[2, 0], [-2, 0]]),
        np.arange(10, 14, dtype=np.int32).reshape(2, 2), {"dim": 1},
    )),
    ("d-dim0-unique-unsorted", ScatterCall(
        "scatter_d", np.arange(6, dtype=np.int32).reshape(3, 2), np.array([[2, 0], [0, 2]]),
        np.arange(10, 14, dtype=np.int32).reshape(2, 2), {"dim": 0},
    )),
    ("put-sorted-unique", ScatterCall(
        "put_along_axis", np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[0, 2]]),
        np.arange(10, 14, dtype=np.int32).reshape(2, 2), {"axis": 1},
    )),
    ("put-broadcast-duplicates", ScatterCall(
        "put_along_axis", np.arange(3, dtype=np.int32).reshape(1, 3), np.array([[2], [0], [2]]),
        np.arange(10, 13, dtype=np.int32).reshape(3, 1), {"axis": 1},
    )),
    ("put-broadcast-sorted-duplicates", ScatterCall(
        "put_along_axis", np.arange(3, dtype=np.int32).reshape(1, 3), np.array([[0], [0], [2]]),
        np.arange(10, 13, dtype=np.int32).reshape(3, 1), {"axis": 1},
    )),
]  # fmt: skip


@pytest.mark.cell("scatter {promise}")
@pytest.mark.parametrize("promise", list(_KEEPS))
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("call", [c for _, c in PROMISE_CASES], ids=[n for n, _ in PROMISE_CASES])
def test_promises(backend, repro, call, reduce, promise):
    """Each case with either promise: kept (the reference's answer) or broken (S9)."""
    call = ScatterCall(
        call.op, call.data, call.indices, call.updates,
        {**call.kwargs, "reduce": reduce, promise: True},
    )  # fmt: skip
    _check_promise(backend, repro(call), promise)


def test_promise_cases_keep_and_break():
    """The fixed cases above keep and break each promise, so both branches are tested."""
    for keeps in _KEEPS.values():
        kept = [keeps(call) for _, call in PROMISE_CASES]
        assert any(kept) and not all(kept)


# Edge shapes: 0-d data with index depth 0 (every update lands on the one element), and
# no updates at all, given as an empty Python list.
EDGES = [
    ScatterCall("scatter_nd", np.array(1.0, np.float32), np.zeros((2, 0), np.int64),
                np.array([5.0, 7.0], np.float32)),
    ScatterCall("scatter_d", np.zeros((2, 3), np.int32), np.zeros((1, 0), np.int64), [[]],
                {"dim": 1}),
    ScatterCall("put_along_axis", np.ones((2, 3), bool), np.zeros((2, 0), np.int64), [],
                {"axis": 1}),
]  # fmt: skip


# Only "update" is defined for bool (test_errors holds the others to their error).
_EDGE_CASES = [
    pytest.param(call, reduce, id=f"{call.op}-{reduce}")
    for call in EDGES
    for reduce in (("update",) if call.data.dtype == bool else ("update", "add"))
]


@pytest.mark.cell("scatter edges")
@pytest.mark.parametrize(("call", "reduce"), _EDGE_CASES)
def test_edge_shapes(backend, repro, call, reduce):
    call = ScatterCall(call.op, call.data, call.indices, call.updates,
                       {**call.kwargs, "reduce": reduce})  # fmt: skip
    out, data = repro(call).run(backend)
    check_result(backend, out, call.expected(), data)


def _scatter(op: str, x: Any, indices: Any, updates: Any, **kwargs: Any) -> ScatterCall:
    """A call on NumPy data and indices; `updates` as given (arrays, or Python values)."""
    return ScatterCall(op, np.asarray(x), np.asarray(indices), updates, kwargs)


# (id, call, exception, message pattern): docs/contract.md, "Scatters", errors.
ERRORS = [
    ("nd-updates-shape", _scatter("scatter_nd", M23, [[0, 1]], np.zeros(2, np.int32)),
     ValueError, r"updates\.shape must be \(1,\); got \(2,\)"),
    ("nd-updates-unsafe-dtype", _scatter("scatter_nd", M23, [[0, 1]], np.zeros(1, np.float32)),
     TypeError, r"updates must have a dtype that casts safely to params\.dtype = int32; got "
     r"float32"),
    ("nd-bad-index", _scatter("scatter_nd", M23, [[0, 0], [1, 3]], np.zeros(2, np.int32)),
     IndexError, r"indices\[1\] = \[1, 3\]"),
    ("nd-reduce", _scatter("scatter_nd", M23, [[0, 0]], np.zeros(1, np.int32), reduce="sum"),
     ValueError, r"reduce must be one of 'update', 'add', 'multiply', 'min', 'max'; got 'sum'"),
    ("nd-complex-max", _scatter("scatter_nd", M23.astype(np.complex64), [[0, 0]], [1j],
                                reduce="max"),
     TypeError, r'reduce="max" needs params of a real numeric or bool dtype; got complex64'),
    ("nd-float-indices", _scatter("scatter_nd", M23, [[0.0, 1.0]], np.zeros(1, np.int32)),
     TypeError, "indices must have an integer dtype"),
    ("nd-depth", _scatter("scatter_nd", M23, np.zeros((1, 3), np.int64), np.zeros(1, np.int32)),
     ValueError, r"index depth.*got 3"),
    ("d-src-small", _scatter("scatter_d", M23, [[0, 1]], np.zeros((1, 1), np.int32), dim=1),
     ValueError, r"src\.shape must be at least \(1, 2\) on every axis"),
    ("d-bad-index", _scatter("scatter_d", M23, [[0, -4]], np.zeros((1, 2), np.int32), dim=1),
     IndexError, r"index\[0, 1\] = -4"),
    ("d-dim", _scatter("scatter_d", M23, [[0, 1]], np.zeros((1, 2), np.int32), dim=2),
     ValueError, r"dim must be in \[-x\.ndim, x\.ndim\) = \[-2, 2\); got 2"),
    ("put-values-shape", _scatter("put_along_axis", M23, [[0], [1]], np.zeros(3, np.int32), axis=1),
     ValueError, r"values\.shape must be broadcastable to \(2, 1\); got \(3,\)"),
    ("put-bad-index", _scatter("put_along_axis", M23, [[0], [3]], np.zeros(1, np.int32), axis=1),
     IndexError, r"indices\[1, 0\] = 3"),
    ("nd-python-float", _scatter("scatter_nd", M23, [[0, 0]], [1.5]),
     TypeError, r"updates must be values that params\.dtype = int32 holds exactly.*\[1\.5\]"),
    ("nd-python-int-range", _scatter("scatter_nd", M23, [[0, 0]], [2**40]),
     TypeError, r"updates must be values that params\.dtype = int32 holds exactly"),
    ("nd-empty-axis",
     _scatter("scatter_nd", np.zeros((0, 2), np.int32), [[0]], np.zeros((1, 2), np.int32)),
     IndexError, r"axis of length 0.*only bad_indices=\"ignore\" \(which drops the updates\)"),
    ("put-policy", _scatter("put_along_axis", M23, [[0]], [1], axis=1, bad_indices="drop"),
     ValueError, r"bad_indices must be one of.*'drop'"),
    ("nd-unique-indices", _scatter("scatter_nd", M23, [[0, 0]], [1], unique_indices="yes"),
     TypeError, r"unique_indices must be True or False; got 'yes'"),
    ("d-sorted-indices", _scatter("scatter_d", M23, [[0, 1]], [[1, 2]], dim=1,
                                  indices_are_sorted=1),
     TypeError, r"indices_are_sorted must be True or False; got 1"),
    ("put-promise-before-index",
     _scatter("put_along_axis", M23, [[0], [9]], [1], axis=1, unique_indices=None),
     TypeError, r"unique_indices must be True or False; got None"),
]  # fmt: skip


@pytest.mark.cell("scatter errors")
@pytest.mark.parametrize(
    ("call", "error", "pattern"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors(backend, repro, call, error, pattern):
    if call.data.dtype.name not in backend.dtypes:
        pytest.fail(f"{backend.name} holds no {call.data.dtype}")
    raises_lazily(backend, error, repro(call), match=pattern)


@pytest.mark.cell("scatter inputs")
@pytest.mark.parametrize("op", SCATTERS)
def test_inputs_are_left_alone(backend, op):
    """The result is a new array: data, indices and updates are unchanged afterwards."""
    call = DUPLICATES[list(SCATTERS).index(op)]
    data, indices, updates = (backend.asarray(a) for a in (call.data, call.indices, call.updates))
    args, kwargs = call.args(data, indices, updates)
    out = getattr(pg, op)(*args, **kwargs, reduce="add")
    backend.to_numpy(out)
    for array, original in ((data, call.data), (indices, call.indices), (updates, call.updates)):
        assert np.array_equal(backend.to_numpy(array), original)


@pytest.mark.cell("scatter inputs")
@pytest.mark.only("numpy")
def test_read_only_and_view_inputs(backend):
    x = backend.asarray(np.arange(12, dtype=np.float64).reshape(4, 3)).T  # a view
    x.flags.writeable = False
    indices = np.array([[0, 1], [2, 3]])
    indices.flags.writeable = False
    out = pg.scatter_nd(x, indices, np.array([-1.0, -2.0]))
    expected = x.copy()
    expected[0, 1], expected[2, 3] = -1.0, -2.0
    assert np.array_equal(out, expected) and out.flags.writeable
    assert not np.shares_memory(out, x)


# Transformations: JAX jit (one XLA scatter), vmap and grad; PyTorch autograd. Every policy
# under jit and lazily on Dask is test_bad_indices in those modes (modes.py).

TRACED = ("ignore", "clip", "wrap", "unchecked")
# Duplicates, a dropped (ignored) or clipped bad index: each scatter's gradient case.
_M32 = np.arange(1.0, 7.0).reshape(3, 2)
_GRADIENTS = {
    "scatter_nd": ScatterCall(
        "scatter_nd", _M32, np.array([[2], [0], [2], [-1]]),
        np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]), {"bad_indices": "ignore"},
    ),
    "scatter_d": ScatterCall(
        "scatter_d", _M32, np.array([[2, 0], [2, 5]]), np.array([[1.0, 2.0], [3.0, 4.0]]),
        {"dim": 0, "bad_indices": "clip"},
    ),
    "put_along_axis": ScatterCall(
        "put_along_axis", _M32, np.array([[1, 1], [0, -1], [1, 0]]),
        np.array([[1.0], [2.0], [3.0]]), {"axis": 1},
    ),
}  # fmt: skip


def _many_duplicates(op: str) -> ScatterCall:
    """`op` writing a dozen updates into the 3 x 2 data, most of them duplicates."""
    rng = np.random.default_rng(len(op))
    if op == "scatter_nd":
        index, updates = rng.integers(0, 3, (12, 1)), rng.random((12, 2))
        return ScatterCall(op, _M32, index, updates)
    index, updates = rng.integers(0, 3, (6, 2)), rng.random((6, 2))
    key = "dim" if op == "scatter_d" else "axis"
    return ScatterCall(op, _M32, index, updates, {key: 0})


#: The gradient cases of each scatter: a few duplicates with a dropped or clipped index
#: (_GRADIENTS), many duplicates, and unique targets under their promise (kept).
_GRADIENT_KINDS = ("few", "many", "unique")
_UNIQUE_GRADIENTS = {
    "scatter_nd": ScatterCall("scatter_nd", _M32, np.array([[2], [0]]),
                              np.array([[1.0, 2.0], [3.0, 4.0]]), {"unique_indices": True}),
    "scatter_d": ScatterCall("scatter_d", _M32, np.array([[2, 0], [1, 2]]),
                             np.array([[1.0, 2.0], [3.0, 4.0]]),
                             {"dim": 0, "unique_indices": True}),
    "put_along_axis": ScatterCall("put_along_axis", _M32, np.array([[1], [0], [1]]),
                                  np.array([[1.0], [2.0], [3.0]]),
                                  {"axis": 1, "unique_indices": True}),
}  # fmt: skip


def _gradient_case(
    op: str, reduce: str, kind: str = "few"
) -> tuple[ScatterCall, npt.NDArray[Any], tuple[npt.NDArray[Any], npt.NDArray[Any]]]:
    """The gradient call of `op` under `reduce` (of `kind`, one of _GRADIENT_KINDS), its
    loss weights, the expected gradients."""
    if kind == "many":
        base = _many_duplicates(op)
    else:
        base = (_GRADIENTS if kind == "few" else _UNIQUE_GRADIENTS)[op]
    call = ScatterCall(op, base.data, base.indices, base.updates, {**base.kwargs, "reduce": reduce})
    weights = np.arange(1.0, 7.0).reshape(3, 2) ** 2
    return call, weights, _linear_gradients(call, weights)


def _linear_gradients(
    call: ScatterCall, weights: npt.NDArray[Any]
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """d sum(weights * scatter) / d data and / d updates, from the reference: for "update"
    and "add" the scatter is linear in both, so one unit step per element gives each."""

    def total(data: npt.NDArray[Any], updates: npt.NDArray[Any]) -> float:
        changed = ScatterCall(call.op, data, call.indices, updates, call.kwargs)
        return float(np.sum(weights * changed.expected()))

    base = total(call.data, call.updates)
    grads = []
    for which in (0, 1):
        arrays = [call.data, call.updates]
        grad = np.zeros_like(arrays[which])
        for k in np.ndindex(grad.shape):
            stepped = [a.copy() for a in arrays]
            stepped[which][k] += 1.0
            grad[k] = total(*stepped) - base
        grads.append(grad)
    return grads[0], grads[1]


@pytest.mark.cell("scatter jit")
@pytest.mark.only("jax")
@pytest.mark.parametrize("policy", TRACED)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_jit_one_scatter(backend, repro, reduce, policy):
    import re

    import jax

    call = repro(DUPLICATES[0])
    bad = np.array([[1], [3], [0], [-2], [1]])
    kwargs = {"reduce": reduce, "bad_indices": policy}

    def f(x: Any, i: Any, u: Any) -> Any:
        return pg.scatter_nd(x, i, u, **kwargs)

    x, i, u = (backend.asarray(a) for a in (call.data + 3, bad, call.updates))
    hlo = jax.jit(f).lower(x, i, u).as_text()
    assert len(re.findall(r"\"?stablehlo\.scatter\"?\(", hlo)) == 1, "not exactly one scatter"
    out = np.asarray(jax.jit(f)(x, i, u))
    if policy == "unchecked":
        assert out.shape == call.data.shape
        return
    expected = ScatterCall("scatter_nd", call.data + 3, bad, call.updates, kwargs).expected()
    assert np.array_equal(out, expected)


def _with_promise(call: ScatterCall, reduce: str, promise: str, policy: str) -> ScatterCall:
    """`call` under `reduce` and `promise`, and `policy` where it names none."""
    kwargs = {"bad_indices": policy, **call.kwargs, "reduce": reduce, promise: True}
    return ScatterCall(call.op, call.data, call.indices, call.updates, kwargs)


@pytest.mark.cell("scatter jit")
@pytest.mark.only("jax")
@pytest.mark.parametrize("promise", list(_KEEPS))
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("call", [c for _, c in PROMISE_CASES], ids=[n for n, _ in PROMISE_CASES])
def test_jit_promises(backend, repro, call, reduce, promise):
    """Under jit, a promise still makes one XLA scatter; ``indices_are_sorted`` reaches it
    where XLA's index vectors are the promised order (not where "ignore" moves its drops
    past the end, nor for scatter_nd with batch dims and inner axes), ``unique_indices``
    never (S9)."""
    import inspect

    import jax

    call = repro(_with_promise(call, reduce, promise, "clip"))

    def f(x: Any, i: Any, u: Any) -> Any:
        args, kwargs = call.args(x, i, u)
        return getattr(pg, call.op)(*args, **kwargs)

    x, i, u = (backend.asarray(a) for a in (call.data, call.indices, call.updates))
    hlo = jax.jit(f).lower(x, i, u).as_text()
    scatters = [line for line in hlo.splitlines() if "stablehlo.scatter" in line]
    assert len(scatters) == 1, "not exactly one scatter"
    assert "unique_indices = false" in scatters[0]
    batch_dims = call.kwargs.get("batch_dims", 0)
    inner = call.op == "scatter_nd" and call.data.ndim > batch_dims + 1
    # "ignore" leaves its drops in place, for XLA to drop, where each index vector writes
    # one slice at one coordinate (scatter_nd without batch dims, index depth 1; deeper
    # vectors become flat positions, which move them) and JAX can be told not to count
    # negatives from the end; "update" then still resolves its winners with moved positions.
    drops_in_place = (
        call.op == "scatter_nd" and not batch_dims and call.indices.shape[-1] == 1
        and reduce != "update"
        and "wrap_negative_indices" in inspect.signature(jax.numpy.zeros(0).at[0].add).parameters
    )  # fmt: skip
    passed_on = (
        promise == "indices_are_sorted"
        and (call.kwargs["bad_indices"] != "ignore" or drops_in_place)
        and not (batch_dims and inner)
    )
    assert ("indices_are_sorted = true" in scatters[0]) == passed_on
    out = jax.jit(f)(x, i, u)
    if _KEEPS[promise](call):
        check_result(backend, out, call.expected(), x)
    else:
        check_broken_promise(backend, call, out, x, promise)


@pytest.mark.cell("scatter vmap")
@pytest.mark.only("jax", "torch")
@pytest.mark.parametrize("promise", [None, "unique_indices", "indices_are_sorted"])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("op", SCATTERS)
def test_vmap_promises(backend, op, reduce, promise):
    """``jax.vmap`` and ``torch.func.vmap`` over the updates and the index: each batch
    member as the reference computes it, many duplicates (no promise), or unique and sorted
    targets under either promise (kept)."""
    if promise is None:
        calls = [_many_duplicates(op), _many_duplicates(op)]
        calls[1] = ScatterCall(op, calls[1].data, calls[1].indices[::-1].copy(),
                               -calls[1].updates, calls[1].kwargs)  # fmt: skip
    else:
        base = next(c for name, c in PROMISE_CASES if name == {
            "scatter_nd": "nd-batch-sorted-unique", "scatter_d": "d-unique-unsorted",
            "put_along_axis": "put-sorted-unique"}[op])  # fmt: skip
        if op == "scatter_d":  # sorted too: each row of the index in order
            base = ScatterCall(op, base.data, np.sort(base.indices % 3, axis=1), base.updates,
                               base.kwargs)  # fmt: skip
        calls = [base, ScatterCall(op, base.data, base.indices, base.updates * 3, base.kwargs)]
    calls = [
        ScatterCall(c.op, c.data.astype(np.float32), c.indices, c.updates.astype(np.float32),
                    {**c.kwargs, "reduce": reduce, "bad_indices": "clip",
                     **({promise: True} if promise else {})})
        for c in calls
    ]  # fmt: skip
    for c in calls:
        assert promise is None or _KEEPS[promise](c)
    first = calls[0]

    def f(i: Any, u: Any) -> Any:
        args, kwargs = first.args(backend.asarray(first.data), i, u)
        return getattr(pg, op)(*args, **kwargs)

    vmap: Any
    if backend.name == "jax":
        import jax

        vmap = jax.vmap
    else:
        import torch

        vmap = torch.func.vmap
    indices = backend.asarray(np.stack([c.indices for c in calls]))
    updates = backend.asarray(np.stack([c.updates for c in calls]))
    out = backend.to_numpy(vmap(f)(indices, updates))
    for k, c in enumerate(calls):
        want = c.expected()
        rounding = 1e-6 if reduce in ("add", "multiply") else 0.0  # float sums: any order
        assert np.allclose(out[k], want, rtol=rounding, atol=0.0), (
            f"batch member {k}: got {out[k].tolist()}, want {want.tolist()}"
        )


@pytest.mark.cell("scatter jit")
@pytest.mark.only("jax")
def test_jit_error_through_checkify(backend):
    import jax
    from jax.experimental import checkify

    def f(x: Any, i: Any, u: Any) -> Any:
        return pg.scatter_nd(x, i, u)

    checked = checkify.checkify(jax.jit(f))
    x, u = backend.asarray(M23), backend.asarray(np.array([5, 6], np.int32))
    error, _ = checked(x, backend.asarray(np.array([[0, 0], [1, 3]])), u)
    message = error.get()
    assert message is not None and "indices[1] = [1, 3]" in message
    error, out = checked(x, backend.asarray(np.array([[0, 0], [1, 2]])), u)
    assert error.get() is None
    expected = M23.copy()
    expected[0, 0], expected[1, 2] = 5, 6
    assert np.array_equal(np.asarray(out), expected)


@pytest.mark.cell("scatter vmap")
@pytest.mark.only("jax")
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_vmap(backend, reduce):
    import jax

    call = DUPLICATES[1]
    stack = np.stack([call.data, call.data + 5])
    updates = np.stack([call.updates, -call.updates])

    def f(x: Any, u: Any) -> Any:
        return pg.scatter_d(x, 1, backend.asarray(call.indices), u, reduce=reduce)

    out = jax.vmap(f)(backend.asarray(stack), backend.asarray(updates))
    for k in range(2):
        one = ScatterCall(
            "scatter_d", stack[k], call.indices, updates[k], {"dim": 1, "reduce": reduce}
        )
        assert np.array_equal(np.asarray(out[k]), one.expected())


@pytest.mark.cell("scatter grad")
@pytest.mark.only("jax")
@pytest.mark.parametrize("kind", _GRADIENT_KINDS)
@pytest.mark.parametrize("reduce", ["update", "add"])
@pytest.mark.parametrize("op", SCATTERS)
def test_jax_gradients(backend, op, reduce, kind):
    import jax
    import jax.numpy as jnp

    call, weights, (want_data, want_updates) = _gradient_case(op, reduce, kind)
    i, w = backend.asarray(call.indices), backend.asarray(weights)

    def loss(x: Any, u: Any) -> Any:
        args, kwargs = call.args(x, i, u)
        return jnp.sum(w * getattr(pg, op)(*args, **kwargs))

    got_data, got_updates = jax.grad(loss, argnums=(0, 1))(
        backend.asarray(call.data, "float32"), backend.asarray(call.updates, "float32")
    )
    assert np.allclose(np.asarray(got_data), want_data)
    assert np.allclose(np.asarray(got_updates), want_updates)


@pytest.mark.cell("scatter grad")
@pytest.mark.only("torch")
@pytest.mark.parametrize("kind", _GRADIENT_KINDS)
@pytest.mark.parametrize("reduce", ["update", "add"])
@pytest.mark.parametrize("op", SCATTERS)
def test_torch_autograd(backend, op, reduce, kind):
    import torch

    call, weights, (want_data, want_updates) = _gradient_case(op, reduce, kind)
    x = torch.tensor(call.data, requires_grad=True)
    u = torch.tensor(call.updates, requires_grad=True)
    args, kwargs = call.args(x, backend.asarray(call.indices), u)
    out = getattr(pg, op)(*args, **kwargs)
    (torch.tensor(weights) * out).sum().backward()
    assert x.grad is not None and u.grad is not None
    assert np.allclose(backend.to_numpy(x.grad), want_data)
    assert np.allclose(backend.to_numpy(u.grad), want_updates)


def _extremes(dtype: str) -> npt.NDArray[Any]:
    """Four values of `dtype` with its extremes where it has them (uint64 above 2**53, which
    float64 would round), and a fifth that is only the same as another's under "update"."""
    if dtype == "str":
        return np.array(["a", "bc", "", "zz", "q"])
    if dtype == "bool":
        return np.array([True, False, True, False, False])
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.max, info.min, 1, info.max - 1, 0], dtype=dtype)
    return np.array([1.5, -2.25, 0.0, 3.0, -0.5], dtype=dtype)


@pytest.mark.cell("scatter dtypes")
@pytest.mark.per_dtype("data")
@pytest.mark.parametrize("op", SCATTERS)
def test_data_dtype(backend, repro, op, dtype):
    """Every dtype the backend holds, extremes included, under "update" (and "max", which
    needs an order, for the real ones), with a dropped bad index."""
    values = _extremes(dtype)
    data, updates = values[:3], values[[3, 4, 0]]
    index = {"scatter_nd": np.array([[2], [0], [5]]), "scatter_d": np.array([2, 0, 5]),
             "put_along_axis": np.array([2, 0, 5])}[op]  # fmt: skip
    kwargs: dict[str, Any] = {"dim": 0} if op == "scatter_d" else {}
    ordered = dtype not in ("str", "bool") and not dtype.startswith("complex")
    for reduce in ("update", "max") if ordered else ("update",):
        call = ScatterCall(
            op, data, index, updates, {**kwargs, "reduce": reduce, "bad_indices": "ignore"}
        )
        out, data_array = repro(call).run(backend)
        check_result(backend, out, call.expected(), data_array)


def _bit_patterns(dtype: str) -> npt.NDArray[Any]:
    """Values of `dtype` that only their bits tell apart where it has them: 0.0 and -0.0,
    NaNs of two payloads and both signs, the infinities (floats; complex from them), the
    extremes (integers), and for uint64 values above 2**53."""
    if dtype == "str":
        return np.array(["a", "bc", "", "zz", "q", "bcd"])
    if dtype == "bool":
        return np.array([True, False])
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.max, info.min, 1, info.max - 1, 0, 3], dtype=dtype)
    if kind == "c":
        parts = _bit_patterns("float64" if dtype == "complex128" else "float32")
        values = np.empty((parts.size, parts.size), dtype=dtype)
        values.real, values.imag = parts[:, None], parts[None, ::-1]  # no arithmetic on NaN
        return values.reshape(-1)
    width = np.dtype(dtype).itemsize * 8
    bits = np.dtype(f"uint{width}")
    exponent = (1 << (width - 1)) - (1 << (width - 1 - {16: 5, 32: 8, 64: 11}[width]))
    quiet = exponent | (1 << (width - 1 - {16: 5, 32: 8, 64: 11}[width] - 1))
    sign = 1 << (width - 1)
    nans = np.array([quiet | 1, quiet | 2, sign | quiet], dtype=bits).view(dtype)
    return np.concatenate([np.array([0.0, -0.0, np.inf, -np.inf, 1.5], dtype=dtype), nans])


def _same_bits(got: npt.NDArray[Any], want: npt.NDArray[Any]) -> bool:
    if got.shape != want.shape:
        return False
    if got.dtype.kind in "fc":
        if got.dtype != want.dtype:
            return False
        unit = np.dtype(f"uint{got.dtype.itemsize * 8 // (2 if got.dtype.kind == 'c' else 1)}")
        return bool(np.array_equal(got.view(unit), want.view(unit)))
    return bool(np.array_equal(got, want))


@pytest.mark.cell("scatter last wins")
@pytest.mark.per_dtype("data")
@pytest.mark.parametrize("policy", ["error", "ignore"])
@pytest.mark.parametrize("op", SCATTERS)
def test_last_wins_bit_for_bit(backend, repro, op, dtype, policy):
    """Many duplicates of values that differ only in their bits (-0.0 and 0.0, NaN
    payloads), and under "ignore" dropped updates among them: each element holds its last
    update bit for bit (docs/contract.md, S3)."""
    values = _bit_patterns(dtype)
    rng = np.random.default_rng(sum(map(ord, op + dtype + policy)))
    count = 60
    targets = rng.integers(-2 if policy == "ignore" else 0, 3, count)
    updates = values[rng.integers(0, values.size, count)]
    data = values[rng.integers(0, values.size, 6)]
    if values.dtype.kind in "fc":  # the last update of the first target is -0.0
        targets[-1], updates[-1] = 0, -0.0
    if op == "scatter_nd":
        call = ScatterCall(op, data, targets[:, None], updates)
    elif op == "scatter_d":
        call = ScatterCall(op, data.reshape(2, 3), targets.reshape(2, 30), updates.reshape(2, 30),
                           {"dim": 1})  # fmt: skip
    else:
        call = ScatterCall(op, data.reshape(3, 2), targets.reshape(30, 2), updates.reshape(30, 2),
                           {"axis": 0})  # fmt: skip
    call.kwargs["bad_indices"] = policy
    out, array = repro(call).run(backend)
    assert out.dtype == array.dtype
    got, want = backend.to_numpy(out), call.expected()
    assert _same_bits(got, want), f"got {got.tolist()}\nwant {want.tolist()}"


_BF16_SCATTERS = [
    ScatterCall("scatter_nd", np.array([1.5, -2.0, 0.5, 3.0], np.float32),
                np.array([[1], [1], [2], [3], [3], [7]]),
                np.array([2.0, -0.5, 6.0, 0.25, 4.0, 1.0], np.float32)),
    ScatterCall("scatter_d", np.array([[1.5, -2.0, 0.5]], np.float32), np.array([[0, 0, 2, 2]]),
                np.array([[2.0, -0.5, 0.25, 4.0]], np.float32), {"dim": 1}),
    ScatterCall("put_along_axis", np.array([[1.5, -2.0], [0.5, 3.0]], np.float32),
                np.array([[1, 1, 0]]), np.array([[2.0, -0.5, 0.25]], np.float32), {"axis": 1}),
]  # fmt: skip


@pytest.mark.cell("scatter dtypes")
@pytest.mark.only(*BFLOAT16_BACKENDS)
@pytest.mark.parametrize("reduce", ["update", "add", "multiply", "min", "max"])
@pytest.mark.parametrize(("op", "call"), [(c.op, c) for c in _BF16_SCATTERS])
def test_bfloat16_reductions(backend, op, call, reduce):
    """bfloat16 data and updates (NumPy's from ml_dtypes, JAX's, PyTorch's) under every
    reduction, with duplicates (and a dropped bad index): the float32 reference rounded to
    bfloat16."""
    del op  # names the matrix row only
    kwargs = {**call.kwargs, "reduce": reduce, "bad_indices": "ignore"}
    call = ScatterCall(call.op, call.data, call.indices, call.updates, kwargs)
    data = bfloat16_array(backend, call.data)
    updates = bfloat16_array(backend, call.updates)
    args, options = call.args(data, backend.asarray(call.indices), updates)
    out = getattr(pg, call.op)(*args, **options)
    assert out.dtype == data.dtype, f"{out.dtype} is not {data.dtype}"
    got, want = bfloat16_values(backend, out), bfloat16_reference(call.expected())
    assert np.array_equal(got, want, equal_nan=True), (got, want)
