"""The PyTorch front ends under ``torch.use_deterministic_algorithms(True)``: their floating
adds take the tree's order (docs/deterministic.md), so their bits are the plain-loop tree's
(``reference.ref_tree_scatter`` / ``ref_tree_segment``), on PyTorch tensors and on NumPy
arrays alike; with the switch off they take the backend's path as before."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

from portagather.compat import torch as pgt
from portagather.compat import torch_scatter as ts
from portagather.conformance import reference

RNG = np.random.default_rng(23)
#: Values over seven orders of magnitude, so that the order of the adds shows in the bits.
X = (RNG.normal(size=(3000, 3)) * 10.0 ** RNG.integers(-3, 4, size=(3000, 1))).astype(np.float32)
IDS = RNG.integers(0, 20, size=3000)
COLUMNS = np.broadcast_to(IDS[:, None], X.shape).copy()


@pytest.fixture
def deterministic() -> Iterator[None]:
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)


def _scatter_targets(index: np.ndarray, dim: int, shape: tuple[int, ...]) -> list[int | None]:
    """The flat position in a target of `shape` that each element of `index` writes."""
    targets = []
    for position in np.ndindex(*index.shape):
        place = list(position)
        place[dim] = int(index[position])
        targets.append(int(np.ravel_multi_index(place, shape)))
    return targets


def _tree_of_columns() -> np.ndarray:
    zeros = np.zeros((20, 3), np.float32)
    return reference.ref_tree_scatter(zeros, _scatter_targets(COLUMNS, 0, (20, 3)), X, "add")


CALLS = {
    "scatter_add": lambda a: pgt.scatter_add(a(np.zeros((20, 3), np.float32)), 0, a(COLUMNS), a(X)),
    "scatter-add": lambda a: pgt.scatter(
        a(np.zeros((20, 3), np.float32)), 0, a(COLUMNS), a(X), reduce="add"
    ),
    "scatter_reduce-sum": lambda a: pgt.scatter_reduce(
        a(np.zeros((20, 3), np.float32)), 0, a(COLUMNS), a(X), "sum"
    ),
}


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("convert", [np.asarray, torch.as_tensor], ids=["numpy", "torch"])
@pytest.mark.parametrize("call", list(CALLS))
def test_scatters_take_the_tree(call, convert):
    out = np.asarray(CALLS[call](convert))
    assert out.tobytes() == _tree_of_columns().tobytes()


@pytest.mark.usefixtures("deterministic")
def test_index_add_and_index_put_take_the_tree():
    zeros = np.zeros((20, 3), np.float32)
    # index_add / index_put write whole rows: each element's updates at their row-major
    # positions in the source (row k's element j at 3 k + j).
    targets = [int(IDS[k]) * 3 + j for k in range(3000) for j in range(3)]
    want = reference.ref_tree_scatter(zeros, targets, X, "add").tobytes()
    added = pgt.index_add(torch.zeros(20, 3), 0, torch.as_tensor(IDS), torch.as_tensor(X))
    assert added.numpy().tobytes() == want
    put = pgt.index_put(torch.zeros(20, 3), (torch.as_tensor(IDS),), torch.as_tensor(X), True)
    assert put.numpy().tobytes() == want


@pytest.mark.usefixtures("deterministic")
def test_torch_scatter_sum_takes_the_tree():
    out = ts.scatter_sum(torch.as_tensor(X), torch.as_tensor(IDS), dim=0, dim_size=20)
    assert out.numpy().tobytes() == reference.ref_tree_segment(X, IDS, 20).tobytes()


def test_without_the_switch_the_backend_adds():
    """The switch off: PyTorch's own index_add_, whose bits here differ from the tree's (so
    the tests above could fail)."""
    out = pgt.scatter_add(torch.zeros(20, 3), 0, torch.as_tensor(COLUMNS), torch.as_tensor(X))
    native = torch.zeros(20, 3).scatter_add_(0, torch.as_tensor(COLUMNS), torch.as_tensor(X))
    assert out.numpy().tobytes() == native.numpy().tobytes()
    assert out.numpy().tobytes() != _tree_of_columns().tobytes()


#: A target whose own values take part (``include_self``), and one left where none lands.
BASE = RNG.normal(size=(21, 3)).astype(np.float32)


def _landed_and_count() -> tuple[np.ndarray, np.ndarray]:
    count = np.zeros(BASE.size, np.int64)
    for target in _scatter_targets(COLUMNS, 0, BASE.shape):
        count[target] += 1
    return count.reshape(BASE.shape) > 0, count.reshape(BASE.shape)


def _scatter_reduce_tree(reduce: str, include_self: bool) -> np.ndarray:
    """PyTorch's ``scatter_reduce`` of X into BASE at COLUMNS, in the tree's order: the
    element's own value (or 0 without `include_self`) plus the tree of its updates
    (``ref_tree_scatter``), a mean divided once by the count (with 1 for the own value);
    elements no update reaches keep their value."""
    landed, count = _landed_and_count()
    start = BASE if include_self else np.zeros_like(BASE)
    targets = _scatter_targets(COLUMNS, 0, BASE.shape)
    total = reference.ref_tree_scatter(start, targets, X, "add")
    if reduce == "mean":
        total = total / (count + int(include_self)).astype(np.float32).clip(1)
    return np.where(landed, total, BASE).astype(np.float32)


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("convert", [np.asarray, torch.as_tensor], ids=["numpy", "torch"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_scatter_reduce_takes_the_tree(reduce, include_self, convert):
    out = pgt.scatter_reduce(convert(BASE), 0, convert(COLUMNS), convert(X), reduce,
                             include_self=include_self)  # fmt: skip
    assert np.asarray(out).tobytes() == _scatter_reduce_tree(reduce, include_self).tobytes()


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_scatter_reduce_without_the_switch(reduce, include_self):
    """The switch off: PyTorch's own scatter_reduce's bits, which differ from the tree's
    here (so that the test above could fail)."""
    args = (torch.as_tensor(BASE), 0, torch.as_tensor(COLUMNS), torch.as_tensor(X), reduce)
    out = pgt.scatter_reduce(*args, include_self=include_self)
    native = torch.scatter_reduce(*args, include_self=include_self)
    assert out.numpy().tobytes() == native.numpy().tobytes()
    assert out.numpy().tobytes() != _scatter_reduce_tree(reduce, include_self).tobytes()


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_mean_takes_the_tree(include_self):
    """index_reduce writes whole rows: row k's element j of the source lands on row
    ``IDS[k]``'s element j, as COLUMNS's scatter puts it."""
    out = pgt.index_reduce(torch.as_tensor(BASE), 0, torch.as_tensor(IDS), torch.as_tensor(X),
                           "mean", include_self=include_self)  # fmt: skip
    assert out.numpy().tobytes() == _scatter_reduce_tree("mean", include_self).tobytes()
