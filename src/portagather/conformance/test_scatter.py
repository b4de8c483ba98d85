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
    POLICIES,
    REDUCTIONS,
    SCATTERS,
    ScatterCall,
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
def test_bad_indices(backend, repro, op, policy):
    @drawn(6)
    @given(st.sampled_from(["update", "add", "max"]).flatmap(
        lambda reduce: strategies.scatter_calls(op, reduce, bad=True)
    ))  # fmt: skip
    def check(call: ScatterCall) -> None:
        call.kwargs["bad_indices"] = policy
        repro(call)
        if policy != "unchecked":
            check_call(backend, call)
            return
        # Unchecked: what bad indices write is unspecified; the result is still params'.
        out, data = call.run(backend)
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
    ("nd-bool-add", _scatter("scatter_nd", M23 > 2, [[0, 0]], [True], reduce="add"),
     TypeError, r'reduce="add" needs params of a numeric dtype; got bool'),
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
    if call.data.dtype == bool and "bool" not in backend.dtypes:
        pytest.fail(f"{backend.name} holds no bool")
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


# Transformations: JAX jit (one XLA scatter), vmap and grad; PyTorch autograd; Dask laziness.

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


def _gradient_case(
    op: str, reduce: str
) -> tuple[ScatterCall, npt.NDArray[Any], tuple[npt.NDArray[Any], npt.NDArray[Any]]]:
    """The gradient call of `op` under `reduce`, its loss weights, the expected gradients."""
    base = _GRADIENTS[op]
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
@pytest.mark.parametrize("reduce", ["update", "add"])
@pytest.mark.parametrize("op", SCATTERS)
def test_jax_gradients(backend, op, reduce):
    import jax
    import jax.numpy as jnp

    call, weights, (want_data, want_updates) = _gradient_case(op, reduce)
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
@pytest.mark.parametrize("reduce", ["update", "add"])
@pytest.mark.parametrize("op", SCATTERS)
def test_torch_autograd(backend, op, reduce):
    import torch

    call, weights, (want_data, want_updates) = _gradient_case(op, reduce)
    x = torch.tensor(call.data, requires_grad=True)
    u = torch.tensor(call.updates, requires_grad=True)
    args, kwargs = call.args(x, backend.asarray(call.indices), u)
    out = getattr(pg, op)(*args, **kwargs)
    (torch.tensor(weights) * out).sum().backward()
    assert x.grad is not None and u.grad is not None
    assert np.allclose(x.grad.numpy(), want_data)
    assert np.allclose(u.grad.numpy(), want_updates)


@pytest.mark.cell("scatter lazy")
@pytest.mark.only("dask")
@pytest.mark.parametrize("op", SCATTERS)
def test_dask_stays_lazy_until_computed(backend: Backend, op):
    """Nothing runs at call time; a bad index raises when the result is computed."""
    from dask.callbacks import Callback

    call = DUPLICATES[list(SCATTERS).index(op)]
    bad = np.where(call.indices == 0, 7, call.indices)
    ran: list[Any] = []
    with Callback(pretask=lambda key, *_: ran.append(key)):
        data, indices, updates = (backend.asarray(a) for a in (call.data, bad, call.updates))
        args, kwargs = call.args(data, indices, updates)
        lazy = getattr(pg, op)(*args, **kwargs)
    assert ran == [], "the call computed something"
    with pytest.raises(IndexError, match=r"= \[?7\]? "):
        lazy.compute()


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
