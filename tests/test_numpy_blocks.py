"""NumPy processes large indices in blocks of rows: the same answers as all at once.

The block size is made tiny here so that the conformance suite's drawn calls cross block
boundaries; the answers are checked against the plain-loop reference, errors included (a
bad index in a later block must still be reported at its position in the whole index).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from portagather._plan import plan_gather_d, plan_gather_nd
from portagather.conformance import strategies
from portagather.conformance.backends import load_backend
from portagather.conformance.cases import OPS, POLICIES, Call, check_call
from portagather.engines.numpy import NumPyEngine


@pytest.fixture
def tiny_blocks(monkeypatch):
    monkeypatch.setattr(NumPyEngine, "BLOCK", 1)


@pytest.mark.parametrize("policy", [p for p in POLICIES if p != "unchecked"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.usefixtures("tiny_blocks")
def test_blocks_give_the_reference_answers(op, policy):
    backend = load_backend("numpy")

    @settings(max_examples=25, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
    @given(strategies.calls(op, batch=False, bad=True))
    def check(call):
        call.kwargs.update(bad_indices=policy, fill_value=-7)
        check_call(backend, call)

    check()


@pytest.mark.usefixtures("tiny_blocks")
def test_error_in_a_later_block_names_its_whole_position():
    params = np.arange(12).reshape(3, 4)
    indices = np.zeros((6, 2), dtype=np.int64)
    indices[4] = [3, 0]
    with pytest.raises(IndexError, match=r"^indices\[4\] = \[3, 0\] does not index"):
        Call("gather_nd", params, indices).run_numpy()


def test_large_index_is_blocked_and_right():
    """At the real block size: 4 blocks of index vectors and more, compared with NumPy's own
    indexing."""
    rng = np.random.default_rng(0)
    params = rng.standard_normal((300, 200)).astype(np.float32)
    count = 4 * NumPyEngine.BLOCK + 3
    indices = np.stack([rng.integers(0, 300, count), rng.integers(0, 200, count)], axis=1)
    plan = plan_gather_nd(params.shape, indices.shape, 0)
    assert NumPyEngine(np).index_block_rows(params, indices, plan) > 0
    out = Call("gather_nd", params, indices).run_numpy()
    np.testing.assert_array_equal(out, params[indices[:, 0], indices[:, 1]])


@pytest.mark.parametrize("policy", ["error", "unchecked"])
def test_large_gather_d_is_blocked_and_right(policy):
    """W4's shape of call at the real block size, each block taken straight into the result;
    negatives count from the end. Compared with NumPy's own ``take_along_axis``."""
    rng = np.random.default_rng(1)
    side = 2 * math.isqrt(NumPyEngine.BLOCK) + 1
    x = rng.standard_normal((side, side)).astype(np.float32)
    index = rng.integers(-side, side, (side, side))
    plan = plan_gather_d(x.shape, index.shape, 1)
    assert NumPyEngine(np).index_block_rows(x, index, plan) > 0
    out = Call("gather_d", x, index, {"dim": 1, "bad_indices": policy}).run_numpy()
    np.testing.assert_array_equal(out, np.take_along_axis(x, index, axis=1))


def test_blocked_gather_from_a_view_peaks_at_its_result(monkeypatch):
    """Blocks from non-contiguous params are indexed along the original axes and copied into
    the result, so they are bounded by the result too: the peak stays the result's."""
    import tracemalloc

    monkeypatch.setattr(NumPyEngine, "BLOCK", 2**14)  # blocks of ~1 MB results
    params = np.asfortranarray(np.zeros((1000, 64), dtype=np.int8))
    rows = np.random.default_rng(0).integers(0, 1000, (140_000, 1))
    plan = plan_gather_nd(params.shape, rows.shape, 0)
    assert NumPyEngine(np).index_block_rows(params, rows, plan) > 0
    Call("gather_nd", params, rows).run_numpy()  # warm up
    tracemalloc.start()
    out = Call("gather_nd", params, rows).run_numpy()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 1.15 * out.nbytes, (peak, out.nbytes)


def test_string_fill_value_longer_than_the_dtype_holds_is_refused():
    with pytest.raises(ValueError, match=r"fill_value='abc' cannot be held exactly"):
        Call(
            "gather", np.array(["a", "b"]), [5], {"bad_indices": "ignore", "fill_value": "abc"}
        ).run_numpy()
