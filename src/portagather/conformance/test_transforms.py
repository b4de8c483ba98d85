"""JAX transformations, PyTorch autograd, Dask laziness (docs/contract.md, "Transformations").

The policy tests are one body run in each transformed mode (``modes.py``): under ``jax.jit``
on JAX and lazily on Dask; the contract's tests run the same calls eagerly. Gradients are
compared with a scatter-add of the cotangent at the positions the loop reference reads.
"""

import numpy as np
import numpy.typing as npt
import pytest

import portagather as pg

from . import cases
from .cases import BAD, OPS, Call, check_call, check_unchecked, expected_gradient
from .modes import in_mode

TRACED = ("ignore", "clip", "wrap", "unchecked", "")
X64 = pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])


def _with(op: str, **kwargs: object) -> Call:
    base = BAD[op]
    return Call(op, base.data, base.indices, {**base.kwargs, **kwargs})


def _resolved(call: Call, mode: str) -> Call:
    """`call` with the policy it keeps in `mode` spelled out."""
    return Call(call.op, call.data, call.indices, {**call.kwargs, "bad_indices": call.policy(mode)})


@pytest.mark.cell("{mode}")
@pytest.mark.modes("jit", "lazy")
@pytest.mark.parametrize("policy", [*cases.POLICIES, *cases.ALIASES])
@pytest.mark.parametrize("op", OPS)
def test_policy(backend, mode, repro, op, policy):
    """Every policy under jit (``"error"`` asks for checkify) and on Dask (nothing computed
    by the call; ``"error"`` raises on compute), against the loop reference."""
    call = repro(_with(op, bad_indices=policy, fill_value=-7))
    if policy == "unchecked":
        check_unchecked(backend, call, mode)
    else:
        check_call(backend, call, mode)


@pytest.mark.cell("jit")
@pytest.mark.only("jax")
@X64
@pytest.mark.parametrize("policy", ["error", *TRACED])
@pytest.mark.parametrize("op", OPS)
def test_jit_lowers_to_one_gather(backend, repro, op, policy, x64):
    """docs/transformations.md, "One gather": one ``stablehlo.gather`` and no loop, scatter or
    callback, in 32- and 64-bit JAX; ``"error"`` under checkify."""
    import jax
    from jax.experimental import checkify

    call = repro(_with(op, bad_indices=policy))
    f = call.function()
    if policy == "error":
        f = checkify.checkify(f)
    with jax.enable_x64(x64):
        data, indices = backend.asarray(call.data), backend.asarray(call.indices)
        text = jax.jit(f).lower(data, indices).as_text()
    # `#stablehlo.gather<` is the attribute; `"stablehlo.gather"(` the operation.
    assert text.count('"stablehlo.gather"(') == 1, "not exactly one XLA gather"
    for absent in ("stablehlo.while", "stablehlo.scatter", "custom_call", "callback"):
        assert absent not in text, absent


@pytest.mark.cell("jit")
@pytest.mark.only("jax")
@pytest.mark.parametrize("op", OPS)
def test_jit_error_policy(backend, repro, op):
    import jax
    from jax.experimental import checkify

    call = repro(_with(op, bad_indices="error"))
    call.indices = call.indices.copy()
    call.indices.flat[-1] = 7  # out of range for every operation here
    f = call.function()
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
@pytest.mark.parametrize("over", ["params", "indices", "both", "nested"])
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap"])
@pytest.mark.parametrize("op", OPS)
def test_vmap(backend, repro, op, policy, over):
    """Batched over params, over indices, over both, and over each in turn (two levels)."""
    import jax

    call = repro(_with(op, bad_indices=policy))
    f = call.function()
    datas = np.stack([call.data, call.data + 100])
    indices = np.stack([call.indices, np.flip(call.indices)])

    def ref(d: npt.NDArray[np.int32], i: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
        return Call(op, d, i, call.kwargs).expected()

    if over == "params":
        g, args = jax.vmap(f, in_axes=(0, None)), (datas, indices[0])
        expected = np.stack([ref(d, indices[0]) for d in datas])
    elif over == "indices":
        g, args = jax.vmap(f, in_axes=(None, 0)), (datas[0], indices)
        expected = np.stack([ref(datas[0], i) for i in indices])
    elif over == "both":
        g, args = jax.vmap(f), (datas, indices)
        expected = np.stack([ref(d, i) for d, i in zip(datas, indices, strict=True)])
    else:  # params vary on the outer axis, indices on the inner one
        g, args = jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None)), (datas, indices)
        expected = np.stack([np.stack([ref(d, i) for i in indices]) for d in datas])
    out = g(*map(backend.asarray, args))
    assert np.array_equal(np.asarray(out), expected)


GRADIENT_POLICIES = ["error", "ignore", "clip", "wrap", "unchecked", ""]


def _gradient_case(op: str, policy: str, mode: str) -> tuple[Call, Call, npt.NDArray[np.float32]]:
    """The call, the same with its policy spelled out for `mode`, and a cotangent of
    distinct values. Policies that read no bad index ("error", "unchecked") get valid ones."""
    call = _with(op, bad_indices=policy)
    call.data = call.data.astype(np.float32)
    if call.policy(mode) in ("error", "unchecked"):
        call.indices = np.clip(call.indices, 0, 1)
    resolved = _resolved(call, mode)
    shape = resolved.expected().shape
    cotangent = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return call, resolved, cotangent


@pytest.mark.cell("grad")
@pytest.mark.only("jax")
@pytest.mark.modes("eager", "jit")
@X64
@pytest.mark.parametrize("policy", GRADIENT_POLICIES)
@pytest.mark.parametrize("op", OPS)
def test_grad(backend, mode, repro, op, policy, x64):
    """``grad`` and ``vjp`` are the scatter-add of the cotangent, eagerly and under jit."""
    import jax
    import jax.numpy as jnp

    call, resolved, cotangent = _gradient_case(op, policy, mode)
    repro(call)
    f = call.function()
    dtype = np.float64 if x64 else np.float32
    with jax.enable_x64(x64):
        data = backend.asarray(call.data.astype(dtype))
        indices, w = backend.asarray(call.indices), backend.asarray(cotangent.astype(dtype))
        grad = in_mode(jax.grad(lambda d, i: jnp.sum(f(d, i) * w)), mode)
        if resolved.policy() == "error" and mode == "jit":
            with pytest.raises(ValueError, match="checkify"):  # traced indices
                grad(data, indices)
            return
        expected = expected_gradient(resolved, cotangent).astype(dtype)
        out = grad(data, indices)
        assert out.dtype == data.dtype
        assert np.array_equal(np.asarray(out), expected)
        pullback = in_mode(lambda d, i, c: jax.vjp(lambda e: f(e, i), d)[1](c)[0], mode)
        assert np.array_equal(np.asarray(pullback(data, indices, w)), expected)


@pytest.mark.cell("autograd")
@pytest.mark.only("torch")
@pytest.mark.parametrize("policy", GRADIENT_POLICIES)
@pytest.mark.parametrize("op", OPS)
def test_autograd(backend, repro, op, policy):
    import torch

    call, resolved, cotangent = _gradient_case(op, policy, "eager")
    repro(call)
    data = torch.asarray(call.data).requires_grad_(True)
    indices = torch.asarray(call.indices)
    call.function()(data, indices).backward(torch.asarray(cotangent))
    assert data.grad is not None
    assert not indices.requires_grad
    assert np.array_equal(backend.to_numpy(data.grad), expected_gradient(resolved, cotangent))


@pytest.mark.cell("lazy")
@pytest.mark.only("dask")
@pytest.mark.parametrize("op", ["gather"])
@pytest.mark.usefixtures("backend")
def test_lazy_chunks_follow_indices(repro, op):
    import dask.array as da

    call = repro(Call(op, np.arange(40, dtype=np.int32).reshape(10, 4), np.arange(9) % 10))
    data = da.from_array(call.data, chunks=(3, 2))
    indices = da.from_array(call.indices, chunks=4)
    out = in_mode(pg.gather, "lazy")(data, indices)
    assert out.chunks[0] == indices.chunks[0]
    assert np.array_equal(out.compute(), call.expected())


@pytest.mark.cell("unchecked")
@pytest.mark.parametrize("op", OPS)
def test_unchecked_reads_inside(backend, repro, op):
    check_unchecked(backend, repro(_with(op, bad_indices="unchecked", fill_value=-7)))
