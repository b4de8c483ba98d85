"""portagather under PyTorch: autograd beyond the conformance suite, torch.compile, device
and dtype.

The gradient of every operation and policy is the conformance suite's
(``portagather.conformance.test_transforms``, run by ``portagather check``). Gradients here
are compared with a scatter-add of the cotangent at the positions the plain-loop reference
reads.

torch.compile runs with the ``aot_eager`` backend: Dynamo captures the graph exactly as it
does for Inductor (``fullgraph=True`` fails on any graph break) and AOTAutograd traces the
forward and backward, but no C++ is generated, which keeps these tests to seconds on two
cores. One test compiles with Inductor, the default backend, to show the graph lowers there too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from helpers import run_portagather, run_reference
from portagather.conformance.cases import scatter_add

# (name, op, params shape, kwargs, valid indices with duplicates, indices with bad ones)
CASES = [
    ("gather_nd", (3, 4, 2), {},
     [[[0, 1], [2, 3]], [[0, 1], [1, 0]]], [[[0, 1], [3, 0]], [[0, 1], [1, -1]]]),
    ("gather_nd[batch_dims=1]", (2, 3, 4), {"batch_dims": 1},
     [[[2], [0], [2]], [[1], [1], [0]]], [[[2], [0], [3]], [[1], [-1], [0]]]),
    ("gather", (3, 4, 2), {"axis": 1},
     [[3, 0, 3], [1, 2, 0]], [[3, 0, 4], [1, -1, 0]]),
    ("gather[batch_dims=1]", (2, 4, 3), {"axis": 1, "batch_dims": 1},
     [[0, 3, 3, 1], [2, 2, 1, 0]], [[0, 3, 5, 1], [2, 2, 1, -7]]),
    ("gather_d", (3, 4), {"dim": 1},
     [[0, 3, -1, 2, 2], [1, -4, 0, 0, 3]], [[0, 3, -1, 4, 2], [1, -5, 0, 0, 3]]),
    ("take_along_axis", (3, 4, 2), {"axis": 1},
     [[[0, 3], [-1, 1], [1, 1]]], [[[0, 3], [-1, 4], [1, 1]]]),
]  # fmt: skip
CASE_IDS = [c[0] for c in CASES]
cases = pytest.mark.parametrize("case", CASES, ids=CASE_IDS)


def call(case, params, indices, policy, fill_value=0):
    name, _, kwargs, _, _ = case
    op = name.split("[")[0]
    return run_portagather(op, params, indices, bad_indices=policy, fill_value=fill_value, **kwargs)


def ref(case, params, indices, policy, fill_value=0):
    name, _, kwargs, _, _ = case
    op = name.split("[")[0]
    return run_reference(op, params, indices, bad_indices=policy, fill_value=fill_value, **kwargs)


def indices_for(case, policy):
    """Bad indices only where the policy defines their result without raising."""
    return case[4] if policy in ("ignore", "clip", "wrap") else case[3]


def params_for(case, dtype=torch.float64):
    shape = case[1]
    values = (np.arange(np.prod(shape)).reshape(shape) + 1) * 1.5
    return torch.tensor(values, dtype=dtype)


def scatter_add_reference(case, indices, policy, cotangent):
    """The cotangent added into zeros at the flat positions the loop reference reads."""
    shape = case[1]
    positions = ref(case, np.arange(np.prod(shape)).reshape(shape), indices, policy, -1)
    return torch.as_tensor(scatter_add(positions, cotangent.numpy(), shape))


# ---------------------------------------------------------------------------------- autograd


@cases
def test_indices_never_require_grad(case):
    """Gradients flow to params only; an index tensor never joins the autograd graph."""
    params = params_for(case).requires_grad_(True)
    indices = torch.as_tensor(np.asarray(case[3]))
    out = call(case, params, indices, "clip")
    assert out.requires_grad
    (grad_params,) = torch.autograd.grad(out.sum(), [params])
    assert grad_params.shape == params.shape
    out = call(case, params.detach(), indices, "clip")
    assert not out.requires_grad


def test_autograd_double_backward():
    case = CASES[0]
    params = params_for(case).requires_grad_(True)
    indices = torch.as_tensor(np.asarray(case[3]))
    out = call(case, params, indices, "ignore")
    (grad,) = torch.autograd.grad((out**2).sum(), [params], create_graph=True)
    (second,) = torch.autograd.grad(grad.sum(), [params])
    expected = 2 * scatter_add_reference(case, case[3], "ignore", torch.ones_like(out))
    torch.testing.assert_close(second, expected)


# ---------------------------------------------------------------------------- torch.compile


@pytest.fixture
def dynamo():
    import torch._dynamo

    torch._dynamo.reset()
    with warnings.catch_warnings():
        # Dynamo warns that it traces through array_api_compat's lru_cache wrappers.
        warnings.filterwarnings("ignore", message=".*lru_cache.*", category=UserWarning)
        yield torch._dynamo
    torch._dynamo.reset()


COMPILE_CASES = [CASES[0], CASES[3], CASES[4], CASES[5]]  # one per operation


def _compile_params():
    for case in COMPILE_CASES:
        for policy in ("ignore", "clip", "wrap", "unchecked"):
            yield pytest.param(case, policy, id=f"{case[0]}-{policy}")


@pytest.mark.parametrize(("case", "policy"), list(_compile_params()))
@pytest.mark.usefixtures("dynamo")
def test_compile_fullgraph_non_error_policies(case, policy):
    """No graph break for ignore/clip/wrap/unchecked: fullgraph=True raises on any."""
    indices_np = indices_for(case, policy)
    f = torch.compile(
        lambda p, i: call(case, p, i, policy, fill_value=-3), fullgraph=True, backend="aot_eager"
    )
    params = params_for(case).requires_grad_(True)
    out = f(params, torch.as_tensor(np.asarray(indices_np)))
    np.testing.assert_array_equal(
        out.detach().numpy(), ref(case, params.detach(), indices_np, policy, -3)
    )
    out.backward(torch.ones_like(out))
    expected = scatter_add_reference(case, indices_np, policy, torch.ones_like(out))
    torch.testing.assert_close(params.grad, expected, rtol=0, atol=0)


@pytest.mark.usefixtures("dynamo")
def test_compile_inductor_one_case():
    case = CASES[1]
    f = torch.compile(lambda p, i: call(case, p, i, "ignore"), fullgraph=True)
    out = f(params_for(case, torch.float32), torch.as_tensor(np.asarray(case[4])))
    np.testing.assert_array_equal(
        out.numpy(), ref(case, params_for(case, torch.float32), case[4], "ignore")
    )


@pytest.mark.parametrize("policy", ["error"])  # "" takes the same path: values are concrete
def test_compile_error_policy_breaks_graph_and_still_raises(dynamo, policy):
    """ "error" reads index values to decide whether to raise: Dynamo breaks the graph there
    (documented), and the compiled function raises the same IndexError as the eager one."""
    case = CASES[0]
    params = params_for(case)
    f = lambda p, i: call(case, p, i, policy)  # noqa: E731
    compiled = torch.compile(f, backend="aot_eager")
    out = compiled(params, torch.as_tensor(np.asarray(case[3])))
    np.testing.assert_array_equal(out.numpy(), ref(case, params, case[3], "error"))
    with pytest.raises(IndexError, match=r"indices\[0, 1\] = \[3, 0\] does not index"):
        compiled(params, torch.as_tensor(np.asarray(case[4])))
    dynamo.reset()  # Dynamo caches per code object: forget the graphs compiled above
    # fullgraph=True cannot break the graph: Dynamo reports portagather's message, which
    # says what to use instead.
    message = r'bad_indices="error" reads index values.*without\s+fullgraph=True.*"clip"'
    with pytest.raises(torch._dynamo.exc.TorchDynamoException, match=message):
        torch.compile(f, fullgraph=True, backend="aot_eager")(
            params, torch.as_tensor(np.asarray(case[3]))
        )


# --------------------------------------------------------------------------- device, dtype


@cases
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap", "unchecked"])
def test_result_keeps_device_of_params(case, policy):
    """The meta device stands in for an accelerator: results must stay where params are."""
    params = params_for(case, torch.float16).to("meta")
    indices = torch.as_tensor(np.asarray(indices_for(case, policy))).to("meta")
    out = call(case, params, indices, policy)
    assert out.device == params.device
    assert out.dtype == torch.float16
    assert tuple(out.shape) == ref(case, np.zeros(case[1]), indices_for(case, policy),
                                   policy).shape  # fmt: skip


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.float16, torch.int8, torch.bool, torch.complex64]
)
@pytest.mark.parametrize("policy", ["error", "ignore", "clip"])
def test_result_keeps_dtype(dtype, policy):
    case = CASES[4]
    values = np.arange(np.prod(case[1])).reshape(case[1]) % 5
    params = torch.tensor(values).to(dtype)
    values = params.numpy() if dtype in (torch.bool, torch.complex64) else values
    indices = indices_for(case, policy)
    out = call(case, params, torch.as_tensor(np.asarray(indices)), policy)
    assert out.dtype == dtype and out.device == params.device
    expected = ref(case, values, indices, policy)
    if dtype in (torch.bfloat16, torch.float16):
        out = out.to(torch.float64)
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("op", ["gather_nd", "gather", "gather_d", "take_along_axis"])
def test_empty_result_stays_in_the_autograd_graph(op):
    """As torch's own indexing: an empty result of a params that requires grad requires
    grad too, and its gradient is zeros."""
    params = torch.arange(6.0).reshape(2, 3).requires_grad_(True)
    empty = torch.zeros((0, 2) if op == "gather_nd" else (2, 0), dtype=torch.int64)
    args = (params, 1, empty) if op == "gather_d" else (params, empty)
    kwargs = {"axis": 1} if op in ("gather", "take_along_axis") else {}
    import portagather

    out = getattr(portagather, op)(*args, **kwargs)
    assert out.requires_grad and out.numel() == 0
    out.sum().backward()
    assert torch.equal(params.grad, torch.zeros(2, 3))


# ------------------------------------------------------------------------- torch.func.vmap
#
# A tensor that vmap batches has no values to read: the policies run without a range read,
# "error" cannot decide and says so, and TensorFlow's default ("") resolves to "ignore", as
# it does wherever values cannot be read. A closed-over index reads as usual.


@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap", "unchecked", ""])
@cases
def test_vmap_over_indices(case, policy):
    resolved = policy or "ignore"
    stack = [case[3], indices_for(case, resolved)]  # valid, then bad where defined
    params = params_for(case)
    batch = torch.as_tensor(np.asarray(stack))
    out = torch.func.vmap(lambda i: call(case, params, i, policy, fill_value=-3))(batch)
    for k, indices in enumerate(stack):
        np.testing.assert_array_equal(out[k].numpy(), ref(case, params, indices, resolved, -3))


@cases
def test_vmap_over_indices_refuses_error_policy(case):
    batch = torch.as_tensor(np.asarray([case[3], case[3]]))
    message = r'bad_indices="error" reads index values.*torch\.func\.vmap cannot.*"unchecked"'
    with pytest.raises(ValueError, match=message):
        torch.func.vmap(lambda i: call(case, params_for(case), i, "error"))(batch)


@cases
def test_vmap_over_params_checks_a_closed_over_index(case):
    params = torch.stack([params_for(case), -params_for(case)])
    valid, bad = (torch.as_tensor(np.asarray(case[k])) for k in (3, 4))
    out = torch.func.vmap(lambda p: call(case, p, valid, "error"))(params)
    for k in range(2):
        np.testing.assert_array_equal(out[k].numpy(), ref(case, params[k], case[3], "error"))
    with pytest.raises(IndexError) as eager:
        call(case, params[0], bad, "error")
    with pytest.raises(IndexError) as mapped:
        torch.func.vmap(lambda p: call(case, p, bad, "error"))(params)
    assert str(mapped.value) == str(eager.value)


def test_vmap_of_grad_over_indices():
    """Per-example gradients: vmap(grad) with the index batched beneath the grad level."""
    case = CASES[0]
    params = params_for(case)
    stack = [case[3], case[4]]

    def loss(p, i):
        return call(case, p, i, "clip").sum()

    grads = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(
        params, torch.as_tensor(np.asarray(stack))
    )
    for k, indices in enumerate(stack):
        ones = torch.ones(ref(case, params, indices, "clip").shape, dtype=params.dtype)
        torch.testing.assert_close(
            grads[k], scatter_add_reference(case, indices, "clip", ones), rtol=0, atol=0
        )


@pytest.mark.parametrize("reduce", ["update", "add", "min", "max"])
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap", "unchecked"])
def test_vmap_scatters(policy, reduce):
    """Batched updates and indices into one unbatched tensor: every scatter writes out of
    place under vmap (torch refuses in-place writes of batched values into it)."""
    import portagather as pg
    from portagather.conformance.reference import ref_scatter_d, ref_scatter_nd

    x = torch.arange(12.0).reshape(3, 4)
    vectors = [[[0, 1], [2, 3], [0, 1]], [[1, 1], [5, 0], [2, -1]]]  # duplicates, then bad
    updates = [[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]]
    if policy == "unchecked":
        vectors[1] = [[1, 1], [2, 0], [2, 3]]
    out = torch.func.vmap(lambda i, u: pg.scatter_nd(x, i, u, reduce=reduce, bad_indices=policy))(
        torch.as_tensor(vectors), torch.as_tensor(updates)
    )
    for k in range(2):
        wanted = ref_scatter_nd(x, vectors[k], updates[k], reduce=reduce, bad_indices=policy)
        np.testing.assert_array_equal(out[k].numpy(), wanted)

    index = [[[0, 3, 0], [1, 1, 2], [2, 0, 2]], [[-1, 4, 0], [1, -5, 2], [3, 3, 3]]]
    if policy == "unchecked":
        index[1] = [[-1, 2, 0], [1, -4, 2], [3, 3, 3]]
    src = torch.arange(18.0).reshape(2, 3, 3) + 100
    out = torch.func.vmap(lambda i, s: pg.scatter_d(x, 1, i, s, reduce=reduce, bad_indices=policy))(
        torch.as_tensor(index), src
    )
    for k in range(2):
        wanted = ref_scatter_d(x, 1, index[k], src[k], reduce=reduce, bad_indices=policy)
        np.testing.assert_array_equal(out[k].numpy(), wanted)


@pytest.mark.parametrize("chunk_bytes", [64, 1024, 2**22])
@pytest.mark.parametrize("reduce", ["sum", "prod"])
def test_deterministic_sorted_wide_rows_every_chunking(monkeypatch, chunk_bytes, reduce):
    """Sorted ids with rows of 16 bytes or more (``engines.tree._full_block_tree``): the bits
    of the plain-loop tree at chunks of one row pair, of a few rows and of all the rows, so
    that the pyramid's blocks come from one chunk, from several and from above the chunks
    (segments longer than a chunk), with empty segments, single rows and -0.0."""
    import portagather as pg
    from portagather.conformance.reference import ref_tree_segment
    from portagather.engines import tree

    monkeypatch.setattr(tree, "CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(5)
    lengths = [1, 1, 0, 2, 3, 0, 7, 64, 1, 5, 200, 33, 0, 1, 129, 16, 17]
    ids = np.repeat(np.arange(len(lengths) - 1), lengths[:-1])
    if reduce == "prod":
        data = rng.uniform(0.9, 1.1, (ids.size, 4)) * rng.choice([-1.0, 1.0], (ids.size, 4))
    else:
        data = rng.standard_normal((ids.size, 4)) * 10.0 ** rng.integers(-3, 4, (ids.size, 1))
        data[rng.random(data.shape) < 0.05] = -0.0
    data = data.astype(np.float32)
    segments = len(lengths)
    want = ref_tree_segment(data, ids, segments, reduce)
    function = pg.segment_sum if reduce == "sum" else pg.segment_prod
    got = function(torch.from_numpy(data), torch.from_numpy(ids), segments, deterministic=True)
    assert np.array_equal(got.numpy().view(np.uint32), want.view(np.uint32))
