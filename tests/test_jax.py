"""portagather under JAX beyond the conformance suite: checkify messages, the HLO of a
gradient, jvp, default policies under vmap, list and weak-typed indices, devices and sharding.

The values under jit, vmap, grad and vjp for every operation and policy are the conformance
suite's (``portagather.conformance.test_transforms``, run by ``portagather check``). Every
value here is compared with an independent answer: the plain-loop references of
``portagather.conformance.reference`` and gradients built with a scatter-add.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import portagather as pg
from helpers import run_portagather, run_reference
from portagather.conformance.cases import scatter_add
from portagather.conformance.reference import (
    ref_gather,
    ref_gather_nd,
    ref_scatter_nd,
    ref_take_along_axis,
)

X64 = pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])


@dataclass(frozen=True)
class Case:
    name: str
    shape: tuple[int, ...]
    valid: list  # in range, with duplicates (their gradients add up)
    bad: list  # some out of range; the first bad one in C order is `where` = `value`
    where: str
    value: str
    kwargs: dict

    def call(self, params, indices, policy, fill_value=0):
        options = dict(self.kwargs, bad_indices=policy, fill_value=fill_value)
        return run_portagather(self.op, params, indices, **options)

    def ref(self, params, indices, policy, fill_value=0):
        options = dict(self.kwargs, bad_indices=policy, fill_value=fill_value)
        return run_reference(self.op, params, indices, **options)

    @property
    def op(self) -> str:
        return self.name.split("[")[0]


CASES = [
    Case("gather_nd", (3, 4, 2),
         [[[0, 1], [2, 3]], [[0, 1], [1, 0]]],
         [[[0, 1], [3, 0]], [[0, 1], [1, -1]]], "[0, 1]", "[3, 0]", {}),
    Case("gather_nd[batch_dims=1]", (2, 3, 4),
         [[[2], [0], [2]], [[1], [1], [0]]],
         [[[2], [0], [3]], [[1], [-1], [0]]], "[0, 2]", "[3]", {"batch_dims": 1}),
    Case("gather", (3, 4, 2),
         [[3, 0, 3], [1, 2, 0]],
         [[3, 0, 4], [1, -1, 0]], "[0, 2]", "4", {"axis": 1}),
    Case("gather[batch_dims=1]", (2, 4, 3),
         [[0, 3, 3, 1], [2, 2, 1, 0]],
         [[0, 3, 5, 1], [2, 2, 1, -7]], "[0, 2]", "5", {"axis": 1, "batch_dims": 1}),
    Case("gather_d", (3, 4),
         [[0, 3, -1, 2, 2], [1, -4, 0, 0, 3]],
         [[0, 3, -1, 4, 2], [1, -5, 0, 0, 3]], "[0, 3]", "4", {"dim": 1}),
    Case("take_along_axis", (3, 4, 2),
         [[[0, 3], [-1, 1], [1, 1]]],
         [[[0, 3], [-1, 4], [1, 1]]], "[0, 1, 1]", "4", {"axis": 1}),
]  # fmt: skip
CASE_IDS = [c.name for c in CASES]
cases = pytest.mark.parametrize("case", CASES, ids=CASE_IDS)


def params_for(case: Case, x64: bool):
    """Distinct values, so that a read from the wrong position shows."""
    dtype = np.float64 if x64 else np.float32
    return (np.arange(np.prod(case.shape), dtype=dtype).reshape(case.shape) + 1) * 1.5


def index_array(values, x64: bool):
    return jnp.asarray(np.asarray(values, dtype=np.int64 if x64 else np.int32))


def read_positions(case: Case, indices, policy: str):
    """For every output element, the flat params position it reads (-1 where ignored)."""
    positions = np.arange(np.prod(case.shape), dtype=np.int64).reshape(case.shape)
    return case.ref(positions, np.asarray(indices), policy, fill_value=-1)


def scatter_add_reference(case: Case, indices, policy: str, cotangent):
    """TensorFlow's gradient: the cotangent added into zeros at the positions read."""
    positions = read_positions(case, indices, policy)
    return jnp.asarray(scatter_add(positions, np.asarray(cotangent), case.shape))


def indices_for(case: Case, policy: str):
    """`unchecked` promises valid indices; every other policy gets bad ones."""
    return case.valid if policy == "unchecked" else case.bad


# --------------------------------------------------------------------------------------- jit


@pytest.mark.parametrize(
    ("case", "x64"),
    [(c, False) for c in CASES] + [(CASES[0], True), (CASES[4], True)],
    ids=[*CASE_IDS, "gather_nd-x64", "gather_d-x64"],
)
def test_jit_error_under_checkify(case, x64):
    with jax.enable_x64(x64):
        params = jnp.asarray(params_for(case, x64))
        f = jax.jit(checkify.checkify(lambda p, i: case.call(p, i, "error")))
        err, out = f(params, index_array(case.valid, x64))
        assert err.get() is None
        np.testing.assert_array_equal(out, case.ref(params, case.valid, "error"))

        err, _ = f(params, index_array(case.bad, x64))
        message = err.get()
        assert message is not None
        assert f"[{case.where[1:-1]}] = {case.value} " in message
        # The same words as the eager IndexError.
        with pytest.raises(IndexError) as eager:
            case.call(params, index_array(case.bad, x64), "error")
        assert message == f"{eager.value} (`check` failed)"
        with pytest.raises(checkify.JaxRuntimeError, match=r"\(`check` failed\)"):
            err.throw()


@cases
def test_error_unwrapped_names_both_ways_out(case):
    params = jnp.asarray(params_for(case, False))
    indices = index_array(case.valid, False)
    f = lambda p, i: case.call(p, i, "error")  # noqa: E731
    for g, args in [
        (jax.jit(f), (params, indices)),
        (jax.vmap(f, in_axes=(None, 0)), (params, indices[None])),
        (jax.jit(jax.vmap(f)), (params[None], indices[None])),
        (jax.grad(lambda p, i: jnp.sum(jax.jit(f)(p, i))), (params, indices)),
        (lambda p, i: jax.eval_shape(f, p, i), (params, indices)),
    ]:
        message = r'(?s)checkify\.checkify.*bad_indices="ignore", "clip", "wrap" or "unchecked"'
        with pytest.raises(ValueError, match=message):
            g(*args)


# The checked gather marks bad reads (NaN, the least or greatest integer) and checks the result
# for marks first; data holding the marker itself must neither raise nor hide a bad index.
MARKED = [
    (np.float32, np.nan),
    (np.float32, np.inf),
    (np.int32, np.iinfo(np.int32).min),
    (np.uint8, 255),
    (np.bool_, True),
]
MARKED_IDS = ["nan", "inf", "int32-min", "uint8-max", "bool"]
MARKED_CALLS = {
    # op: (call, valid index, bad index ("B": the bad value), its position and value)
    "gather_nd": (
        lambda x, i: pg.gather_nd(x, i),
        [[0, 0], [2, 3], [1, 1], [0, 0]],
        [[0, 0], [1, "B"], [2, 3], [-1, 0]],
        "[1] = [1, {bad}]",
    ),
    "gather_d": (
        lambda x, i: pg.gather_d(x, 1, i),
        [[0, 1], [2, 3], [3, -1]],
        [[0, 1], [2, 3], ["B", -5]],
        "[2, 0] = {bad}",
    ),
}


@pytest.mark.parametrize("bad", [4, 2**32 + 1], ids=["past-end", "past-int32"])
@pytest.mark.parametrize("op", list(MARKED_CALLS))
@pytest.mark.parametrize(("dtype", "marker"), MARKED, ids=MARKED_IDS)
def test_checkify_with_data_holding_the_marker(dtype, marker, op, bad):
    call, valid, bad_rows, where = MARKED_CALLS[op]
    data = np.arange(12).reshape(3, 4).astype(dtype)
    data[0, 0] = data[2, 3] = marker
    bad_rows = [[bad if v == "B" else v for v in row] for row in bad_rows]
    with jax.enable_x64(True):
        f = jax.jit(checkify.checkify(call))
        err, out = f(jnp.asarray(data), jnp.asarray(valid, dtype=jnp.int64))
        assert err.get() is None
        np.testing.assert_array_equal(np.asarray(out), call(data, np.asarray(valid)))
        err, _ = f(jnp.asarray(data), jnp.asarray(bad_rows, dtype=jnp.int64))
        with pytest.raises(IndexError) as eager:
            call(data, np.asarray(bad_rows, dtype=np.int64))
    assert err.get() == f"{eager.value} (`check` failed)"
    assert where.format(bad=bad) in err.get()


# ------------------------------------------------------------------------------------- HLO


def test_grad_lowers_to_one_gather_and_one_scatter():
    case = CASES[0]
    params = jnp.asarray(params_for(case, False))
    indices = index_array(case.valid, False)
    loss = jax.grad(lambda p, i: jnp.sum(case.call(p, i, "ignore") ** 2))
    text = jax.jit(loss).lower(params, indices).as_text()
    assert text.count('"stablehlo.gather"(') == 1
    assert text.count('"stablehlo.scatter"(') == 1


def test_one_device_gathers_flat_positions_from_params_as_they_lie():
    """On one device, index vectors of several components become one flat position each,
    into params viewed (not copied) as (gathered, inner): one gather, no copy of params and
    no stacking of the components. Several devices keep the gather along the original axes
    (DEVICE_SCRIPT, test_scale_out)."""
    params, indices = jnp.zeros((20, 30, 4)), jnp.zeros((50, 2), jnp.int32)
    f = jax.jit(lambda p, i: pg.gather_nd(p, i, bad_indices="unchecked"))
    text = f.lower(params, indices).compile().as_text()
    assert text.count(" gather(") == 1
    assert re.search(r"\[600,4\]\S* bitcast\(", text)  # params as 600 rows of 4, a view
    assert " copy(" not in text and "concatenate(" not in text
    values = np.arange(2400.0).reshape(20, 30, 4)
    np.testing.assert_array_equal(
        f(jnp.asarray(values), jnp.asarray([[19, 29], [0, 1]])), values[[19, 0], [29, 1]]
    )


def test_checked_gather_without_markers_fills_bad_reads():
    """Under checkify, where no marker is put (a slice gather whose result is larger than its
    index), a bad read holds JAX's fill value and gets no gradient, as JAX's own fill-mode
    gather: never a real element, even where its flat position would be in range."""
    params = jnp.arange(120.0).reshape(3, 4, 10)
    indices = jnp.asarray([[0, 5], [1, 1]])  # [0, 5]: flat position 5, which is p[1, 1]
    f = jax.jit(checkify.checkify(lambda p, i: pg.gather_nd(p, i)))
    err, out = f(params, indices)
    assert "indices[0] = [0, 5] does not index" in err.get()
    assert np.isnan(np.asarray(out[0])).all()
    np.testing.assert_array_equal(out[1], np.asarray(params)[1, 1])
    loss = checkify.checkify(jax.grad(lambda p, i: jnp.sum(pg.gather_nd(p, i))))
    _, grad = jax.jit(loss)(params, indices)
    wanted = np.zeros((3, 4, 10))
    wanted[1, 1] = 1.0
    np.testing.assert_array_equal(grad, wanted)


def test_checked_gather_reads_the_index_again_only_in_the_failure_branch():
    """Under checkify: the gather (bad reads marked), one reduction of the result, and the
    bad mask of the index computed only inside the branch taken where a mark is seen."""
    params, indices = jnp.zeros((20, 30)), jnp.zeros((1000, 2), jnp.int32)
    f = jax.jit(checkify.checkify(lambda p, i: pg.gather_nd(p, i)))
    assert f.lower(params, indices).as_text().count('"stablehlo.gather"(') == 1
    text = f.lower(params, indices).compile().as_text()
    entry = text[text.index("\nENTRY") :]
    assert "conditional(" in entry
    assert "pred[1000]" not in entry


# -------------------------------------------------------------------------------------- vmap


def batched_indices(case: Case, policy: str, batch: int = 3):
    """A batch of index arrays: the case's own, then the valid ones, then the bad ones."""
    first = np.asarray(indices_for(case, policy))
    return np.stack([first, np.asarray(case.valid), first][:batch])


@cases
def test_vmap_default_policy(case):
    """`""` is "ignore" once the indices are batched (traced), "error" while they are concrete."""
    params = jnp.asarray(params_for(case, False))
    indices_b = batched_indices(case, "ignore")
    out = jax.vmap(lambda i: case.call(params, i, ""))(index_array(indices_b, False))
    expected = np.stack([case.ref(params, i, "ignore") for i in indices_b])
    np.testing.assert_array_equal(np.asarray(out), expected)
    # Batched params, concrete indices: the indices are checked when the call is made.
    with pytest.raises(IndexError, match=r"out of range|does not index"):
        jax.vmap(lambda p: case.call(p, index_array(case.bad, False), ""))(params[None])


@cases
def test_vmap_error_under_checkify(case):
    params = jnp.asarray(params_for(case, False))
    indices_b = index_array(np.stack([case.valid, case.valid, case.bad]), False)
    f = lambda i: case.call(params, i, "error")  # noqa: E731

    outer = jax.jit(checkify.checkify(jax.vmap(f)))
    err, _ = outer(indices_b)
    message = err.get()
    assert message is not None and f"{case.where[:-1]}] = {case.value} " in message

    err, _ = jax.jit(jax.vmap(checkify.checkify(f)))(indices_b)
    message = err.get()
    assert message.startswith("at mapped index 2: ")
    assert f"{case.where[:-1]}] = {case.value} " in message

    err, out = outer(indices_b.at[2].set(indices_b[1]))
    assert err.get() is None
    np.testing.assert_array_equal(np.asarray(out[1]), case.ref(params, case.valid, "error"))


def test_vmap_checkify_scalar_index_message():
    """Per-example 0-d indices: the position prints as the eager path prints it."""
    params = jnp.asarray(params_for(CASES[2], False))
    f = lambda i: pg.gather(params, i, axis=1)  # noqa: E731
    err, _ = checkify.checkify(jax.vmap(f))(jnp.asarray([0, 2, 9, 1]))
    message = err.get()
    with pytest.raises(IndexError) as eager:
        f(jnp.asarray(9))
    assert message == f"{eager.value} (`check` failed)"
    assert "= 9 is out of range [0, 4) for axis 1" in message


# ------------------------------------------------------------------------------------ grad


@cases
@pytest.mark.parametrize("policy", ["ignore", "clip", "wrap"])
def test_jvp_is_gather_of_tangent(case, policy):
    params = jnp.asarray(params_for(case, False))
    tangent = jnp.asarray(np.cos(np.arange(np.prod(case.shape))).reshape(case.shape), jnp.float32)
    indices = index_array(case.bad, False)
    primal, out_tangent = jax.jvp(lambda p: case.call(p, indices, policy, 5), (params,), (tangent,))
    np.testing.assert_array_equal(np.asarray(primal), case.ref(params, case.bad, policy, 5))
    # The ignored slices are constants: their tangent is zero, not the fill value.
    np.testing.assert_allclose(
        np.asarray(out_tangent), case.ref(np.asarray(tangent), case.bad, policy, 0), rtol=1e-6
    )


@cases
def test_grad_with_traced_indices_and_checkify(case):
    params = jnp.asarray(params_for(case, False))
    cotangent = jnp.ones(case.ref(params, case.valid, "error").shape, jnp.float32)

    def loss(p, i):
        return jnp.sum(case.call(p, i, "error"))

    g = jax.jit(checkify.checkify(jax.grad(loss)))
    err, grad = g(params, index_array(case.valid, False))
    assert err.get() is None
    expected = scatter_add_reference(case, case.valid, "error", cotangent)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(expected))
    err, _ = g(params, index_array(case.bad, False))
    assert f"{case.where[:-1]}] = {case.value} " in err.get()


def test_grad_error_concrete_bad_index_raises():
    case = CASES[0]
    params = jnp.asarray(params_for(case, False))
    with pytest.raises(IndexError, match=r"indices\[0, 1\] = \[3, 0\]"):
        jax.grad(lambda p: jnp.sum(case.call(p, index_array(case.bad, False), "error")))(params)


# ----------------------------------------------------- list indices, weak types, devices


@pytest.mark.parametrize("policy", ["clip", "ignore", "wrap"])
def test_python_list_indices_inside_jit(policy):
    params = jnp.asarray(params_for(CASES[0], False))

    @jax.jit
    def f(p):
        return pg.gather_nd(p, [[0, 1], [5, 0]], bad_indices=policy)

    expected = ref_gather_nd(np.asarray(params), [[0, 1], [5, 0]], bad_indices=policy)
    np.testing.assert_array_equal(np.asarray(f(params)), expected)


def test_python_list_indices_inside_jit_error_policy():
    """Inside jit even constant indices are staged: "error" needs checkify, as for tracers."""
    params = jnp.asarray(params_for(CASES[0], False))
    f = lambda p: pg.gather_nd(p, [[0, 1], [5, 0]])  # noqa: E731
    with pytest.raises(ValueError, match="checkify"):
        jax.jit(f)(params)
    err, _ = jax.jit(checkify.checkify(f))(params)
    assert "indices[1] = [5, 0] does not index into params of shape (3, 4, 2)" in err.get()


@X64
def test_weak_typed_scalar_indices(x64):
    with jax.enable_x64(x64):
        params = jnp.asarray(params_for(CASES[2], x64))
        f = jax.jit(lambda p, i: pg.gather(p, i, axis=1, bad_indices="clip"))
        for i in (2, jnp.asarray(2), 9):  # a Python int arrives as a weak-typed tracer
            np.testing.assert_array_equal(
                np.asarray(f(params, i)),
                ref_gather(np.asarray(params), np.asarray(i), axis=1, bad_indices="clip"),
            )
        weak = jnp.asarray(3)
        assert weak.weak_type
        out = pg.gather(params, weak, axis=1)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(params)[:, 3])
        out = pg.gather_d(params[:, :, 0], 1, jnp.full((3, 2), -1))
        np.testing.assert_array_equal(np.asarray(out), np.asarray(params)[:, [3, 3], 0])


DEVICE_SCRIPT = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import portagather as pg

    devices = jax.devices()
    assert len(devices) == 2, devices
    other = devices[1]
    params = jax.device_put(jnp.arange(24.0).reshape(2, 3, 4), other)
    for policy in ("error", "ignore", "clip"):
        out = pg.gather_nd(params, [[1, 2], [0, 1]], bad_indices=policy)
        assert out.devices() == {other}, (policy, out.devices())
        np.testing.assert_array_equal(out, np.asarray(params)[[1, 0], [2, 1]])
        idx = jax.device_put(jnp.asarray([[2], [0]]), other)
        out = jax.jit(lambda p, i: pg.gather_nd(p, i, batch_dims=1, bad_indices="clip"))(
            params, idx)
        assert out.devices() == {other}, out.devices()
        out = pg.gather(params, idx[:, 0], axis=1, batch_dims=1, bad_indices=policy)
        assert out.devices() == {other}
        np.testing.assert_array_equal(out, np.asarray(params)[[0, 1], [2, 0]])

    # Traced on two devices, params may be sharded: the gather runs along the original axes
    # under every policy, and reads the caller's index vectors as they are.
    from portagather.conformance.reference import ref_gather_nd
    values = np.arange(7 * 5 * 2.0).reshape(7, 5, 2)
    points = np.asarray([[6, 4], [0, 0], [7, 1], [2, -1], [3, 2]])
    for policy in ("ignore", "clip", "wrap", "unchecked"):
        f = jax.jit(lambda p, i: pg.gather_nd(p, i, bad_indices=policy, fill_value=-1))
        text = f.lower(values, points).compile().as_text()
        assert text.count(" gather(") == 1 and "[35,2]" not in text, policy  # not flat
        if policy == "unchecked":  # the caller's vectors, untouched by the policy
            assert "concatenate(" not in text and " slice(" not in text
        out = np.asarray(f(values, points))
        if policy == "unchecked":  # valid vectors only; bad ones read inside
            assert np.isin(out[[2, 3]], values).all()
            out, points_read = out[[0, 1, 4]], points[[0, 1, 4]]
        else:
            points_read = points
        wanted = ref_gather_nd(values, points_read, bad_indices=policy, fill_value=-1)
        np.testing.assert_array_equal(out, wanted, err_msg=policy)

    mesh = Mesh(np.array(devices), ("b",))
    row = NamedSharding(mesh, P("b"))
    params = jax.device_put(jnp.arange(2 * 6 * 5.0).reshape(2, 6, 5), row)
    indices = jax.device_put(jnp.asarray([[[5], [1], [1]], [[0], [2], [9]]]), row)
    f = jax.jit(lambda p, i: pg.gather_nd(p, i, batch_dims=1, bad_indices="ignore"))
    out = f(params, indices)
    expected = np.asarray(params)[[[0, 0, 0], [1, 1, 1]], [[5, 1, 1], [0, 2, 0]]]
    expected[1, 2] = 0
    np.testing.assert_array_equal(out, expected)
    assert out.sharding.device_set == set(devices)
    compiled = f.lower(params, indices).compile().as_text()
    for collective in ("all-gather", "all-to-all", "all-reduce", "collective-permute"):
        assert collective not in compiled, collective

    # "error" under checkify, index sharded: where nothing is marked, no index is moved.
    from jax.experimental import checkify
    params = jax.device_put(jnp.arange(24.0).reshape(6, 4), NamedSharding(mesh, P()))
    points = np.asarray([[1, 2], [0, 1], [5, 3], [2, 2]], dtype=np.int32)
    f = jax.jit(checkify.checkify(lambda p, i: pg.gather_nd(p, i)))
    err, out = f(params, jax.device_put(points, row))
    assert err.get() is None
    np.testing.assert_array_equal(out, np.asarray(params)[points[:, 0], points[:, 1]])
    compiled = f.lower(params, jax.device_put(points, row)).compile().as_text()
    assert "all-gather" not in compiled[compiled.index("\\nENTRY") :]
    points[2, 1] = 9
    err, _ = f(params, jax.device_put(points, row))
    assert "indices[2] = [5, 9] does not index" in err.get(), err.get()

    # Eager calls on params split over the mesh: the arrays portagather makes to go with
    # them (index lists, fill values, positions, updates) take the default placement, since
    # the mesh's layout fits params' shape only (a scalar or a 3-row index would be refused).
    from portagather.conformance.reference import ref_gather_d, ref_scatter_nd
    values = np.arange(6.0).reshape(2, 3)
    split = jax.device_put(values, row)
    vectors = [[0, 0], [1, 7], [1, 1]]
    for policy, fill in (("ignore", 0), ("ignore", -1), ("clip", 0), ("wrap", 0)):
        out = pg.gather_nd(split, vectors, bad_indices=policy, fill_value=fill)
        wanted = ref_gather_nd(values, vectors, bad_indices=policy, fill_value=fill)
        np.testing.assert_array_equal(out, wanted, err_msg=(policy, fill))
    out = pg.gather_nd(split, jnp.zeros((3, 0), jnp.int32), bad_indices="wrap")
    np.testing.assert_array_equal(out, ref_gather_nd(values, np.zeros((3, 0), int), bad_indices="wrap"))
    out = pg.gather_d(split, 1, [[2], [-4]], bad_indices="wrap")
    np.testing.assert_array_equal(out, ref_gather_d(values, 1, [[2], [-4]], bad_indices="wrap"))
    out = pg.scatter_nd(split, vectors, [10.0, 20.0, 30.0], reduce="add", bad_indices="ignore")
    wanted = ref_scatter_nd(values, vectors, [10.0, 20.0, 30.0], reduce="add", bad_indices="ignore")
    np.testing.assert_array_equal(out, wanted)
    print("OK")
    """
)


def test_non_default_device_and_sharding():
    """Two host devices need XLA_FLAGS before JAX starts, hence a fresh interpreter."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    env["JAX_PLATFORMS"] = "cpu"
    result = subprocess.run(
        [sys.executable, "-c", DEVICE_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")


# Eager calls: one compiled computation per plan.


def _eager_calls(module):
    """Each operation's call with (data, index, updates, policy) on `module` (portagather, or
    the plain-loop references on NumPy)."""
    gather_nd, take_along_axis, scatter_nd = (
        (pg.gather_nd, pg.take_along_axis, pg.scatter_nd)
        if module is pg
        else (ref_gather_nd, ref_take_along_axis, ref_scatter_nd)
    )
    return {
        "gather_nd": lambda p, i, _u, policy: gather_nd(p, i, bad_indices=policy),
        "take_along_axis": lambda p, i, _u, policy: take_along_axis(
            p, i, axis=1, bad_indices=policy
        ),
        "scatter_nd": lambda p, i, u, policy: scatter_nd(p, i, u, reduce="add", bad_indices=policy),
    }


def _compilations(caplog, call):
    """The names of the computations that JAX compiled while `call` ran."""
    caplog.clear()
    with caplog.at_level("WARNING"), jax.log_compiles():
        jax.block_until_ready(call())
    found = [re.search(r"Compiling (\S+)", r.getMessage()) for r in caplog.records]
    return [m.group(1) for m in found if m]


def _eager_arguments(op, rows, policy, rng):
    """NumPy params, index and updates for `op` on `rows` rows; some index values bad or
    negative, except where `policy` needs them valid."""
    params = rng.random((rows, 4)).astype(np.float32)
    low = 0 if policy in ("error", "unchecked") else -1  # a bad index raises, or reads anything
    high = 4 if policy in ("error", "unchecked") else 5
    if op == "take_along_axis":
        return params, rng.integers(low, high, (rows, 1)), None
    indices = rng.integers(low, high, (rows + 3, 2))
    return params, indices, np.arange(rows + 3, dtype=np.float32)


_EAGER_POLICIES = ["error", "ignore", "clip", "wrap", "unchecked"]


@pytest.mark.parametrize("policy", _EAGER_POLICIES)
@pytest.mark.parametrize("op", ["gather_nd", "take_along_axis", "scatter_nd"])
def test_an_eager_call_compiles_once_per_shape_and_then_never(caplog, op, policy):
    call, reference_call = _eager_calls(pg)[op], _eager_calls(None)[op]
    rng = np.random.default_rng(7)
    # The first call in a process also compiles the scalar probes that ask whether a trace
    # is running; they are made once per process, not per shape.
    call(
        *[None if a is None else jnp.asarray(a) for a in _eager_arguments(op, 4, policy, rng)],
        policy,
    )
    # Each a new shape, for this policy too: "error" on the CPU runs "clip"'s computation
    # (its index read on the host), which an earlier case may have compiled.
    for rows in (r + 10 * _EAGER_POLICIES.index(policy) for r in (5, 6, 9)):
        arguments = _eager_arguments(op, rows, policy, rng)
        reference = reference_call(*arguments, policy)
        arrays = [None if a is None else jnp.asarray(a) for a in arguments]
        compiled = _compilations(caplog, lambda a=arrays: call(*a, policy))
        assert len(compiled) == 1 and compiled[0].startswith("jit(_compiled_"), compiled
        again = _compilations(caplog, lambda a=arrays: call(*a, policy))
        assert again == [], f"a warm call compiled {again}"
        np.testing.assert_allclose(np.asarray(call(*arrays, policy)), reference, rtol=1e-6)


def test_an_eager_bad_index_still_names_its_position():
    params = jnp.zeros((3, 4))
    with pytest.raises(IndexError, match=r"indices\[2\] = \[1, 4\] does not index into"):
        pg.gather_nd(params, jnp.asarray([[0, 0], [2, 3], [1, 4]]))
    with pytest.raises(IndexError, match=r"indices\[0, 0\] = -5 is out of range \[-4, 4\)"):
        pg.put_along_axis(params, jnp.asarray([[-5], [0], [1]]), 1.0, axis=1)


#: The reductions that divide by a count, and their float64 loop (of a segment's rows).
DIVIDED = {
    "segment_mean": lambda rows: rows.mean(axis=0),
    "segment_var": lambda rows: rows.var(axis=0),
    "segment_std": lambda rows: rows.std(axis=0),
}


@pytest.mark.parametrize("name", DIVIDED)
@pytest.mark.parametrize("inner", [(), (3,), (2, 4)], ids=["rows", "3", "2x4"])
def test_a_division_by_counts_under_jit_has_the_eager_bits(name, inner):
    """A division by each segment's count is one rounding under ``jax.jit`` too: XLA turns a
    division by a broadcast count into a product with its reciprocal (other last bits), so
    a traced call gathers the count along the inner axes. The values: the float64 loop's,
    rounded; an empty segment 0 (the mean) or NaN (no degree of freedom)."""
    function, reference = getattr(pg, name), DIVIDED[name]
    rng = np.random.default_rng(7)
    data = rng.standard_normal((50, *inner)).astype(np.float32)
    ids = rng.integers(0, 8, 50)
    ids[ids == 5] = 6  # segment 5 empty
    eager = np.asarray(function(jnp.asarray(data), jnp.asarray(ids), 8))
    jitted = jax.jit(lambda d, i: function(d, i, 8, bad_indices="unchecked"))
    traced = np.asarray(jitted(jnp.asarray(data), jnp.asarray(ids)))
    assert traced.tobytes() == eager.tobytes()
    expected = np.full((8, *inner), 0.0 if name == "segment_mean" else np.nan)
    for s in range(8):
        rows = data[ids == s].astype(np.float64)
        if len(rows):
            expected[s] = reference(rows)
    np.testing.assert_allclose(eager, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["segment_sum", "segment_prod"])
@pytest.mark.parametrize("order", ["unsorted", "sorted"])
def test_deterministic_tree_under_vmap_and_jit_is_the_reference_tree(op, order):
    """JAX's own tree (``JaxEngine.tree_partials``: a halving over ids found in order at
    run time, else a sort and merges by level in chunks) under ``vmap`` of batched data
    and ids, and under ``jit``, has the bits of the plain-loop tree of each batch."""
    from portagather.conformance.reference import ref_tree_segment

    rng = np.random.default_rng(39)
    batch, rows, segments = 3, 300, 20
    ids = rng.integers(0, segments, (batch, rows))
    if order == "sorted":
        ids = np.sort(ids, axis=1)
    scale = 10.0 ** rng.integers(-3, 4, (batch, rows, 2))
    data = (rng.standard_normal((batch, rows, 2)) * scale).astype(np.float32)
    if op == "segment_prod":
        data = (1 + data / 1e4).astype(np.float32)
    want = np.stack(
        [
            ref_tree_segment(data[b], ids[b], segments, op.removeprefix("segment_"))
            for b in range(batch)
        ]
    )

    def tree(d, i):
        return getattr(pg, op)(d, i, segments, deterministic=True, bad_indices="unchecked")

    for run in (jax.vmap(tree), jax.jit(jax.vmap(tree))):
        got = np.asarray(run(jnp.asarray(data), jnp.asarray(ids)))
        assert got.tobytes() == want.tobytes()
    got = np.asarray(jax.jit(tree)(jnp.asarray(data[0]), jnp.asarray(ids[0])))
    assert got.tobytes() == want[0].tobytes()


@pytest.mark.parametrize(
    ("name", "deterministic"),
    [*((name, False) for name in DIVIDED), ("segment_mean", True)],
)
def test_a_division_by_counts_under_vmap_of_the_data_has_the_eager_bits(name, deterministic):
    """Under ``jax.vmap`` over the data alone the counts (of ids that are not batched) are not
    batched, and a division by them would be by a broadcast divisor, which XLA turns into a
    product with its reciprocal; the divisor is tied to the data (``_arrays.tied``), so each
    example has the bits of its own NumPy call (a mean's infinity included)."""
    function = getattr(pg, name)
    options = {"deterministic": True} if deterministic else {}
    rng = np.random.default_rng(11)
    data = rng.standard_normal((3, 40, 4)).astype(np.float32)
    if name == "segment_mean":  # (a variance of an infinity is NaN, with NumPy's warning)
        data[1, 3, 2] = np.inf
    ids = rng.integers(0, 6, 40)
    ids[ids == 4] = 5  # segment 4 empty
    ids_jax = jnp.asarray(ids)

    def reduced(d):
        return function(d, ids_jax, 6, bad_indices="unchecked", **options)

    own = np.stack([np.asarray(function(data[b], ids, 6, **options)) for b in range(3)])
    for run in (jax.vmap(reduced), jax.jit(jax.vmap(reduced))):
        assert np.asarray(run(jnp.asarray(data))).tobytes() == own.tobytes()
    expected = np.full((3, 6, 4), 0.0 if name == "segment_mean" else np.nan)
    for b in range(3):  # the float64 loop, rounded: NumPy's bits are no reference of their own
        for s in range(6):
            rows = data[b, ids == s].astype(np.float64)
            if len(rows):
                expected[b, s] = DIVIDED[name](rows)
    np.testing.assert_allclose(own, expected, rtol=1e-5, atol=1e-6)
