"""compat.tensorflow's ``deterministic=True`` keyword and compat.mindspore's following of
``mindspore.set_context(deterministic="ON")``: their floating adds and products take the
tree's order (docs/deterministic.md), so their bits are the plain-loop tree's
(``reference.ref_tree_segment`` / ``ref_tree_scatter``) on every backend; and they stay
within rounding of TensorFlow's and MindSpore's own results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import dask.array as da
import jax.numpy as jnp
import mindspore
import numpy as np
import pytest
import torch

from portagather.compat import mindspore as ms_compat
from portagather.compat import tensorflow as tf_compat
from portagather.conformance import reference

RNG = np.random.default_rng(29)
#: Values over seven orders of magnitude, so that the order of the adds shows in the bits.
X = (RNG.normal(size=(3000, 3)) * 10.0 ** RNG.integers(-3, 4, size=(3000, 1))).astype(np.float32)
#: Ids with negative ones (dropped by the unsorted reductions).
IDS = RNG.integers(-2, 20, size=3000)
SORTED = np.sort(RNG.integers(0, 20, size=3000))
#: Factors near 1, so that a product of a segment's rows stays finite.
FACTORS = (1.0 + RNG.normal(size=(3000, 3)) * 0.01).astype(np.float32)
TENSOR = RNG.normal(size=(20, 3)).astype(np.float32)

CONVERTERS: dict[str, Callable[[np.ndarray], Any]] = {
    "numpy": np.asarray,
    "torch": torch.as_tensor,
    "jax": jnp.asarray,
}
DASK: Callable[[np.ndarray], Any] = lambda a: da.from_array(a, chunks=700)  # noqa: E731


def _bits(result: Any) -> bytes:
    return np.asarray(result).astype(np.float32).tobytes()


def _rows_targets(ids: np.ndarray, width: int) -> list[int | None]:
    """The flat target in a ``(20, width)`` result of each element of updates ``(n, width)``
    whose row ``k`` goes to row ``ids[k]`` (None where that id is negative: dropped)."""
    return [int(i) * width + j if i >= 0 else None for i in ids for j in range(width)]


def _count(ids: np.ndarray) -> np.ndarray:
    return np.bincount(ids[ids >= 0], minlength=20).astype(np.float32)[:, None]


SEGMENTS: dict[str, tuple[Callable[..., Any], np.ndarray, np.ndarray, np.ndarray]] = {
    "unsorted_segment_sum": (
        lambda c: tf_compat.math.unsorted_segment_sum(c(X), c(IDS), 20, deterministic=True),
        X, IDS, reference.ref_tree_segment(X, IDS, 20),
    ),
    "unsorted_segment_mean": (
        lambda c: tf_compat.math.unsorted_segment_mean(c(X), c(IDS), 20, deterministic=True),
        X, IDS, reference.ref_tree_segment(X, IDS, 20, "mean"),
    ),
    "unsorted_segment_prod": (
        lambda c: tf_compat.math.unsorted_segment_prod(
            c(FACTORS), c(IDS), 20, deterministic=True
        ),
        FACTORS, IDS, reference.ref_tree_segment(FACTORS, IDS, 20, "prod"),
    ),
    "unsorted_segment_sqrt_n": (
        lambda c: tf_compat.math.unsorted_segment_sqrt_n(c(X), c(IDS), 20, deterministic=True),
        X, IDS,
        reference.ref_tree_segment(X, IDS, 20) / np.sqrt(np.maximum(_count(IDS), 1)),
    ),
    "segment_sum": (
        lambda c: tf_compat.math.segment_sum(c(X), c(SORTED), deterministic=True),
        X, SORTED, reference.ref_tree_segment(X, SORTED, 20),
    ),
    "segment_mean": (
        lambda c: tf_compat.math.segment_mean(c(X), c(SORTED), deterministic=True),
        X, SORTED, reference.ref_tree_segment(X, SORTED, 20, "mean"),
    ),
    "segment_prod": (
        lambda c: tf_compat.math.segment_prod(c(FACTORS), c(SORTED), deterministic=True),
        FACTORS, SORTED, reference.ref_tree_segment(FACTORS, SORTED, 20, "prod"),
    ),
}  # fmt: skip

SCATTERS: dict[str, tuple[Callable[..., Any], np.ndarray]] = {
    "scatter_nd": (
        lambda c: tf_compat.scatter_nd(c(SORTED[:, None]), c(X), [20, 3], deterministic=True),
        reference.ref_tree_scatter(np.zeros((20, 3), np.float32), _rows_targets(SORTED, 3),
                                   X, "add"),
    ),
    "tensor_scatter_nd_add": (
        lambda c: tf_compat.tensor_scatter_nd_add(c(TENSOR), c(IDS[:, None] % 20), c(X),
                                                  deterministic=True),
        reference.ref_tree_scatter(TENSOR, _rows_targets(IDS % 20, 3), X, "add"),
    ),
    "tensor_scatter_nd_sub": (
        lambda c: tf_compat.tensor_scatter_nd_sub(c(TENSOR), c(IDS[:, None] % 20), c(X),
                                                  deterministic=True),
        reference.ref_tree_scatter(TENSOR, _rows_targets(IDS % 20, 3), -X, "add"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("backend", list(CONVERTERS))
@pytest.mark.parametrize("name", list(SEGMENTS))
def test_tensorflow_segments_take_the_tree(name, backend):
    call, *_, want = SEGMENTS[name]
    assert _bits(call(CONVERTERS[backend])) == want.tobytes()


@pytest.mark.parametrize("name", [n for n in SEGMENTS if n.startswith("unsorted")])
def test_tensorflow_unsorted_segments_take_the_tree_on_dask(name):
    call, *_, want = SEGMENTS[name]
    assert _bits(call(DASK).compute()) == want.tobytes()


@pytest.mark.parametrize("backend", [*CONVERTERS, "dask"])
@pytest.mark.parametrize("name", list(SCATTERS))
def test_tensorflow_scatters_take_the_tree(name, backend):
    call, want = SCATTERS[name]
    out = call(DASK if backend == "dask" else CONVERTERS[backend])
    assert _bits(out.compute() if backend == "dask" else out) == want.tobytes()


def test_without_the_keyword_the_backend_adds():
    """``deterministic=False`` (the default): NumPy's adds in index order, whose bits differ
    from the tree's here (so that the tests above could fail)."""
    out = tf_compat.math.unsorted_segment_sum(X, IDS, 20)
    assert out.tobytes() != reference.ref_tree_segment(X, IDS, 20).tobytes()
    scattered = tf_compat.tensor_scatter_nd_add(TENSOR, IDS[:, None] % 20, X)
    assert scattered.tobytes() != SCATTERS["tensor_scatter_nd_add"][1].tobytes()


def _exact(base: np.ndarray, ids: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sum, sum of magnitudes)`` of `base` plus the rows of `x` at `ids` (negative ones
    dropped), in float64 by NumPy's ``add.at``."""
    kept = ids >= 0
    total, magnitude = base.astype(np.float64), np.abs(base).astype(np.float64)
    np.add.at(total, ids[kept], x[kept].astype(np.float64))
    np.add.at(magnitude, ids[kept], np.abs(x[kept]).astype(np.float64))
    return total, magnitude


#: The tree's bound (docs/deterministic.md): ceil(log2 N) roundings of float32, to first
#: order (the small factor covers the second); adding in index order: N - 1 roundings.
TREE_BOUND = np.ceil(np.log2(X.shape[0])) * 2.0**-24 * 1.01
IN_ORDER_BOUND = (X.shape[0] - 1) * 2.0**-24


def test_within_rounding_of_tensorflow():
    """The tree's sums are within its bound of the exact sum, TensorFlow's within that of
    adding in index order: the same sums, rounded in two orders."""
    import tensorflow as tf

    exact, magnitude = _exact(np.zeros((20, 3), np.float32), IDS, X)
    mine = tf_compat.math.unsorted_segment_sum(X, IDS, 20, deterministic=True)
    theirs = tf.math.unsorted_segment_sum(X, IDS, 20).numpy()
    assert np.all(np.abs(mine - exact) <= TREE_BOUND * magnitude)
    assert np.all(np.abs(theirs - exact) <= IN_ORDER_BOUND * magnitude)
    exact, magnitude = _exact(TENSOR, IDS % 20, -X)
    mine = tf_compat.tensor_scatter_nd_sub(TENSOR, IDS[:, None] % 20, X, deterministic=True)
    theirs = tf.tensor_scatter_nd_sub(TENSOR, IDS[:, None] % 20, X).numpy()
    assert np.all(np.abs(mine - exact) <= TREE_BOUND * magnitude)
    assert np.all(np.abs(theirs - exact) <= IN_ORDER_BOUND * magnitude)


def test_integers_are_exact_with_the_keyword():
    ints = RNG.integers(-1000, 1000, size=(3000, 3))
    out = tf_compat.math.unsorted_segment_sum(ints, IDS, 20, deterministic=True)
    want = np.zeros((20, 3), np.int64)
    for row, i in zip(ints, IDS, strict=True):
        if i >= 0:
            want[i] += row
    assert out.dtype == ints.dtype
    np.testing.assert_array_equal(out, want)


# compat.mindspore: MindSpore's own switch.


@pytest.fixture
def mindspore_deterministic() -> Iterator[None]:
    mindspore.set_context(deterministic="ON")
    try:
        yield
    finally:
        mindspore.set_context(deterministic="OFF")


MINDSPORE: dict[str, tuple[Callable[..., Any], np.ndarray]] = {
    "unsorted_segment_sum": (
        lambda c: ms_compat.unsorted_segment_sum(c(X), c(IDS), 20),
        reference.ref_tree_segment(X, IDS, 20),
    ),
    "UnsortedSegmentSum": (
        lambda c: ms_compat.UnsortedSegmentSum()(c(X), c(IDS), 20),
        reference.ref_tree_segment(X, IDS, 20),
    ),
    "unsorted_segment_prod": (
        lambda c: ms_compat.unsorted_segment_prod(c(FACTORS), c(IDS), 20),
        reference.ref_tree_segment(FACTORS, IDS, 20, "prod"),
    ),
    "scatter_nd": (
        lambda c: ms_compat.scatter_nd(c(SORTED[:, None]), c(X), (20, 3)),
        SCATTERS["scatter_nd"][1],
    ),
    "tensor_scatter_elements": (
        lambda c: ms_compat.tensor_scatter_elements(
            c(TENSOR), c(np.broadcast_to(IDS[:, None] % 20, X.shape).copy()), c(X), 0, "add"
        ),
        reference.ref_tree_scatter(TENSOR, _rows_targets(IDS % 20, 3), X, "add"),
    ),
}


@pytest.mark.usefixtures("mindspore_deterministic")
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("name", list(MINDSPORE))
def test_mindspore_switch_takes_the_tree(name, backend):
    call, want = MINDSPORE[name]
    assert _bits(call(CONVERTERS[backend])) == want.tobytes()


def test_mindspore_switch_off_the_backend_adds():
    """The switch off: NumPy's own adds, whose bits differ from the tree's here."""
    assert mindspore.get_context("deterministic") == "OFF"
    call, want = MINDSPORE["unsorted_segment_sum"]
    assert _bits(call(np.asarray)) != want.tobytes()


@pytest.mark.usefixtures("mindspore_deterministic")
def test_mindspore_switch_within_rounding_of_mindspore():
    exact, magnitude = _exact(np.zeros((20, 3), np.float32), IDS, X)
    mine = ms_compat.unsorted_segment_sum(X, IDS, 20)
    ids = mindspore.Tensor(IDS.astype(np.int32))
    theirs = mindspore.ops.unsorted_segment_sum(mindspore.Tensor(X), ids, 20).asnumpy()
    assert np.all(np.abs(mine - exact) <= TREE_BOUND * magnitude)
    assert np.all(np.abs(theirs - exact) <= IN_ORDER_BOUND * magnitude)
