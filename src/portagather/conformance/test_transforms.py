"""JAX transformations, PyTorch autograd, Dask laziness (docs/contract.md, "Transformations")."""

import re
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt
import pytest

import portagather as pg

from .cases import BAD, OPS, Call, check_unchecked, expected_gradient

TRACED = ("ignore", "clip", "wrap", "unchecked", "")


def _function(call: Call) -> Callable[[Any, Any], Any]:
    def f(data: Any, indices: Any) -> Any:
        args, kwargs = call.args(data, indices)
        return getattr(pg, call.op)(*args, **kwargs)

    return f


def _with(op: str, **kwargs: Any) -> Call:
    base = BAD[op]
    return Call(op, base.data, base.indices, {**base.kwargs, **kwargs})


@pytest.mark.cell("jit")
@pytest.mark.only("jax")
@pytest.mark.parametrize("policy", TRACED)
@pytest.mark.parametrize("op", OPS)
def test_jit(backend, repro, op, policy):
    import jax

    call = repro(_with(op, bad_indices=policy, fill_value=-7))
    f = jax.jit(_function(call))
    data, indices = backend.asarray(call.data), backend.asarray(call.indices)
    hlo = f.lower(data, indices).as_text()
    assert len(re.findall(r"\"stablehlo\.gather\"", hlo)) == 1, "not exactly one XLA gather"
    out = f(data, indices)
    if policy == "unchecked":
        values = np.asarray(out)
        assert np.isin(values, call.data).all()
        return
    # Under tracing, TensorFlow's default is "ignore" (as on GPU).
    expected_call = _with(op, bad_indices=policy or "ignore", fill_value=-7)
    assert out.dtype == data.dtype
    assert np.array_equal(np.asarray(out), expected_call.expected())


@pytest.mark.cell("jit")
@pytest.mark.only("jax")
@pytest.mark.parametrize("op", OPS)
def test_jit_error_policy(backend, repro, op):
    import jax
    from jax.experimental import checkify

    call = repro(_with(op, bad_indices="error"))
    call.indices = call.indices.copy()
    call.indices.flat[-1] = 7  # out of range for every operation here
    f = _function(call)
    data, indices = backend.asarray(call.data), backend.asarray(call.indices)
    with pytest.raises(ValueError, match="checkify"):
        jax.jit(f)(data, indices)
    err, _ = checkify.checkify(jax.jit(f))(data, indices)
    with pytest.raises(checkify.JaxRuntimeError, match=r"out of range|does not index"):
        err.throw()
    valid = np.clip(call.indices, 0, 1)  # every operation accepts 0 and 1 here
    err, out = checkify.checkify(jax.jit(f))(data, backend.asarray(valid))
    assert err.get() is None
    assert np.array_equal(np.asarray(out), Call(op, call.data, valid, call.kwargs).expected())


@pytest.mark.cell("vmap")
@pytest.mark.only("jax")
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap"])
@pytest.mark.parametrize("op", OPS)
def test_vmap(backend, repro, op, policy):
    import jax

    call = repro(_with(op, bad_indices=policy))
    datas = np.stack([call.data, call.data + 100])
    indices = np.stack([call.indices, np.flip(call.indices)])
    out = jax.vmap(_function(call))(backend.asarray(datas), backend.asarray(indices))
    expected = np.stack(
        [Call(op, d, i, call.kwargs).expected() for d, i in zip(datas, indices, strict=True)]
    )
    assert np.array_equal(np.asarray(out), expected)


def _gradient_case(op: str, policy: str) -> tuple[Call, npt.NDArray[np.float32]]:
    call = _with(op, bad_indices=policy)
    call.data = call.data.astype(np.float32)
    if policy == "error":
        call.indices = np.clip(call.indices, 0, 1)
    shape = call.expected().shape
    cotangent = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return call, cotangent


@pytest.mark.cell("grad")
@pytest.mark.only("jax")
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap"])
@pytest.mark.parametrize("op", OPS)
def test_grad(backend, repro, op, policy):
    import jax
    import jax.numpy as jnp

    call, cotangent = _gradient_case(op, policy)
    repro(call)
    f = _function(call)
    indices, w = backend.asarray(call.indices), jnp.asarray(cotangent)
    grad = jax.grad(lambda d: jnp.sum(f(d, indices) * w))(backend.asarray(call.data))
    assert np.array_equal(np.asarray(grad), expected_gradient(call, cotangent))


@pytest.mark.cell("autograd")
@pytest.mark.only("torch")
@pytest.mark.parametrize("policy", ["error", "ignore", "clip", "wrap"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.usefixtures("backend")
def test_autograd(repro, op, policy):
    import torch

    call, cotangent = _gradient_case(op, policy)
    repro(call)
    data = torch.asarray(call.data).requires_grad_(True)
    _function(call)(data, torch.asarray(call.indices)).backward(torch.asarray(cotangent))
    assert data.grad is not None
    assert np.array_equal(data.grad.numpy(), expected_gradient(call, cotangent))


def _refuse_to_compute(*_args: object, **_kwargs: object) -> NoReturn:
    msg = "the call computed something"
    raise AssertionError(msg)


@pytest.mark.cell("lazy")
@pytest.mark.only("dask")
@pytest.mark.parametrize("policy", ["error", "ignore", "clip", "wrap", ""])
@pytest.mark.parametrize("op", OPS)
def test_lazy(backend, repro, op, policy):
    import dask

    call = repro(_with(op, bad_indices=policy, fill_value=-7))
    data, indices = backend.asarray(call.data), backend.asarray(call.indices)
    with dask.config.set(scheduler=_refuse_to_compute):
        out = _function(call)(data, indices)
    try:
        expected = call.expected()
    except IndexError:
        with pytest.raises(IndexError, match=r"out of range|does not index"):
            out.compute()
        return
    assert np.array_equal(out.compute(), expected)


@pytest.mark.cell("lazy")
@pytest.mark.only("dask")
@pytest.mark.parametrize("op", ["gather"])
@pytest.mark.usefixtures("backend")
def test_lazy_chunks_follow_indices(repro, op):
    import dask.array as da

    call = repro(Call(op, np.arange(40, dtype=np.int32).reshape(10, 4), np.arange(9) % 10))
    data = da.from_array(call.data, chunks=(3, 2))
    indices = da.from_array(call.indices, chunks=4)
    out = pg.gather(data, indices)
    assert out.chunks[0] == indices.chunks[0]
    assert np.array_equal(out.compute(), call.expected())


@pytest.mark.cell("unchecked")
@pytest.mark.parametrize("op", OPS)
def test_unchecked_reads_inside(backend, repro, op):
    check_unchecked(backend, repro(_with(op, bad_indices="unchecked", fill_value=-7)))
