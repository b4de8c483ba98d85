"""Which update wins each target of a last-wins ``"update"`` with duplicate targets:
``engines.base.winning_positions`` itself, and NumPy's and PyTorch's engines through it,
against plain Python loops in which the last update in row-major order wins.

NumPy and torch's CPU kernels happen to write duplicates in order, so the reads back alone
would settle every call; the ``calls`` fixture also runs each call as if the backend had
left an earlier position at every target (0), which only the maximum settles."""

from __future__ import annotations

import numpy as np
import pytest

import portagather as pg
from portagather.engines import base
from portagather.engines import numpy as numpy_engine


def loop_winners(targets: list[int]) -> list[int]:
    """The position of the last update to each update's target."""
    last = {}
    for position, target in enumerate(targets):
        last[target] = position
    return [last[target] for target in targets]


class Slots:
    """A storage of one slot per target that writes duplicates in the `order` it is given
    (indices into the updates), with what ``winning_positions`` called on it."""

    def __init__(self, targets: list[int], order: list[int]) -> None:
        self.targets, self.order = targets, order
        self.held = dict.fromkeys(targets, 10**9)  # junk, which no settle may count unwritten
        self.written = False
        self.settled = 0

    def write(self, positions: np.ndarray) -> None:
        for k in self.order:
            self.held[self.targets[k]] = int(positions[k])
        self.written = True

    def read(self) -> np.ndarray:
        return np.array([self.held[t] for t in self.targets])

    def settle(self, positions: np.ndarray) -> None:
        self.settled += 1
        largest = {t: self.held[t] if self.written else -1 for t in self.targets}
        for target, position in zip(self.targets, positions.tolist(), strict=True):
            largest[target] = max(largest[target], position)
        self.held.update(largest)


TARGETS = {
    "unique": [3, 0, 4, 1, 2],
    "duplicates": [2, 0, 2, 2, 1, 0, 3, 2],
    "one target": [1] * 6,
}


@pytest.mark.parametrize("order", ["in order", "reversed", "shuffled"])
@pytest.mark.parametrize("targets", list(TARGETS), ids=str)
@pytest.mark.parametrize("reads_values", [True, False])
def test_winning_positions(targets, order, reads_values):
    """Every write order a backend may take, with and without reading values."""
    targets = TARGETS[targets]
    count = len(targets)
    writes = {
        "in order": list(range(count)),
        "reversed": list(range(count))[::-1],
        "shuffled": np.random.default_rng(7).permutation(count).tolist(),
    }[order]
    slots = Slots(targets, writes)
    won = base.winning_positions(
        np.arange(count), slots.write, slots.read, slots.settle,
        reads_values=reads_values, unique=np.array_equal,
    )  # fmt: skip
    assert slots.written == reads_values
    if reads_values and len(set(targets)) == count:
        assert won is None  # proved unique, whatever the order
        assert not slots.settled
        return
    assert won.tolist() == loop_winners(targets)
    # The maximum runs where the read back cannot settle it: an earlier position landed.
    landed = {targets[k]: k for k in writes}
    earlier = any(landed[t] < k for k, t in enumerate(targets))
    assert slots.settled == (not reads_values or earlier)


def test_winning_positions_without_unique_returns_every_winner():
    """Without `unique`, unique targets come back as positions, as any other winners."""
    slots = Slots([2, 0, 1], [0, 1, 2])
    won = base.winning_positions(np.arange(3), slots.write, slots.read, slots.settle)
    assert won.tolist() == [0, 1, 2]


def test_position_bytes():
    """int32 positions while the last one fits, int64 after."""
    assert base.position_bytes(0) == base.position_bytes(2**31) == 4
    assert base.position_bytes(2**31 + 1) == 8


@pytest.fixture(params=["as written", "earliest left"])
def calls(request, monkeypatch):
    """The engines' calls of ``winning_positions``, each as ``[reads_values, settled]``; with
    "earliest left", every write leaves position 0 at each target, as a backend that wrote
    an earlier update last would leave one there: only the maximum settles the winners."""
    modules = [numpy_engine]
    try:
        from portagather.engines import torch_scatter
    except ImportError:
        pass
    else:
        modules.append(torch_scatter)
    seen: list[list[bool]] = []
    original = base.winning_positions

    def recorded(positions, write, read, settle, **options):
        call = [options.get("reads_values", True), False]
        seen.append(call)

        def earliest_left(p):
            write(p)
            write(p * 0)

        def settled(p):
            call[1] = True
            settle(p)

        written = earliest_left if request.param == "earliest left" else write
        return original(positions, written, read, settled, **options)

    for module in modules:
        monkeypatch.setattr(module, "winning_positions", recorded)
    return seen, request.param


COUNT, SIZE, WIDTH = 48, 6, 3  # many duplicates into few targets


def drawn(policy: str, seed: int, size: int, shape: tuple[int, ...] = (COUNT,)) -> np.ndarray:
    """Targets in ``[0, size)``, and under "ignore" some past the end (dropped)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, size + (2 if policy == "ignore" else 0), shape)


def values(dtype: str, shape: tuple[int, ...], start: int = 0) -> np.ndarray:
    """Values of `dtype` in which neighbours differ (duplicates write different bits)."""
    ks = [k % 100 for k in range(start, start + int(np.prod(shape)))]  # int8 holds them
    if dtype == "bool":
        flat = np.array([k % 3 == 0 for k in ks])
    elif dtype in ("str", "object"):  # objects: never viewed as ints, always a scratch
        flat = np.array([f"v{k}" for k in ks], dtype="U3" if dtype == "str" else object)
    elif np.dtype(dtype).kind == "c":
        flat = np.array([k + 0.5 + 1j * (k % 7) for k in ks], dtype=dtype)
    else:
        flat = np.array([k + (0.5 if np.dtype(dtype).kind == "f" else 0) for k in ks], dtype)
    return flat.reshape(shape)


def loop_points(data: list, targets: list[int], updates: list) -> list:
    out = list(data)
    for target, update in zip(targets, updates, strict=True):
        if target < len(out):  # past the end: dropped
            out[target] = update
    return out


def loop_rows(data: list, rows: list[int], updates: list) -> list:
    out = [list(row) for row in data]
    for row, update in zip(rows, updates, strict=True):
        if row < len(out):
            out[row] = list(update)
    return out


def loop_along(data: list, index: list, src: list) -> list:
    """Along axis 1, row by row."""
    out = [list(row) for row in data]
    for row, targets, updates in zip(out, index, src, strict=True):
        for target, update in zip(targets, updates, strict=True):
            if target < len(row):
                row[target] = update
    return out


def check_scatters(make, as_index, policy: str, seen: list, mode: str) -> None:
    """scatter_nd at points of 1-d data and at rows (slices) of 2-d data, and scatter_d
    along axis 1, each against its loop and settled by ``winning_positions``; `make(shape,
    start)` makes the backend's values, `as_index` its index."""
    data1, data2 = make((SIZE,), 100), make((SIZE, WIDTH), 100)
    targets, rows = drawn(policy, 1, SIZE), drawn(policy, 2, SIZE)
    index = drawn(policy, 3, WIDTH, (SIZE, COUNT))
    runs = [
        (pg.scatter_nd(data1, as_index(targets[:, None]), make((COUNT,)), bad_indices=policy),
         loop_points(data1.tolist(), targets.tolist(), make((COUNT,)).tolist())),
        (pg.scatter_nd(data2, as_index(rows[:, None]), make((COUNT, WIDTH)), bad_indices=policy),
         loop_rows(data2.tolist(), rows.tolist(), make((COUNT, WIDTH)).tolist())),
        (pg.scatter_d(data2, 1, as_index(index), make((SIZE, COUNT)), bad_indices=policy),
         loop_along(data2.tolist(), index.tolist(), make((SIZE, COUNT)).tolist())),
    ]  # fmt: skip
    for k, (out, want) in enumerate(runs):
        assert out.tolist() == want, k
    assert len(seen) >= len(runs), seen  # each settled its winners
    if mode == "earliest left":
        assert all(settled for _, settled in seen), seen


NUMPY_DTYPES = [
    "float32", "int32", "uint32", "float64", "int64", "complex64",  # viewed as ints
    "complex128", "float16", "int16", "int8", "uint8", "bool", "str", "object",  # a scratch
]  # fmt: skip


@pytest.mark.parametrize("policy", ["error", "ignore"])
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_last_wins(calls, dtype, policy):
    seen, _ = calls
    check_scatters(lambda shape, start=0: values(dtype, shape, start), np.asarray, policy, *calls)
    assert all(reads for reads, _ in seen)


TORCH_DTYPES = [
    "float32", "int32", "float64", "int64", "complex64", "uint32",  # the result's own storage
    "float16", "bfloat16", "int16", "int8", "uint8", "bool", "uint16", "uint64",  # a scratch
]  # fmt: skip


@pytest.mark.parametrize("policy", ["error", "ignore"])
@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_last_wins(calls, dtype, policy):
    import torch

    seen, _ = calls

    def make(shape, start=0):
        if dtype == "bfloat16":
            return torch.from_numpy(values("float32", shape, start)).to(torch.bfloat16)
        return torch.from_numpy(values(dtype, shape, start))

    check_scatters(make, torch.from_numpy, policy, *calls)
    assert all(reads for reads, _ in seen)


@pytest.mark.parametrize("policy", ["error", "ignore"])
def test_torch_last_wins_gradients(calls, policy):
    """Autograd records the scatter: the winners in a scratch; each target's gradient goes
    to its last update alone (a dropped one gets none), the data's to what no update wrote."""
    import torch

    seen, mode = calls
    targets = drawn(policy, 4, SIZE)
    data = torch.arange(float(SIZE), requires_grad=True)
    updates = torch.arange(float(COUNT), requires_grad=True)
    out = pg.scatter_nd(data, torch.from_numpy(targets[:, None]), updates, bad_indices=policy)
    assert out.tolist() == loop_points(data.tolist(), targets.tolist(), updates.tolist())
    out.sum().backward()
    last = {t: k for k, t in enumerate(targets.tolist()) if t < SIZE}
    assert updates.grad.tolist() == [float(last.get(t) == k) for k, t in enumerate(targets)]
    assert data.grad.tolist() == [float(t not in last) for t in range(SIZE)]
    assert seen
    if mode == "earliest left":
        assert all(settled for _, settled in seen), seen


def test_torch_last_wins_under_vmap(calls):
    """A batched index reads no values: the maximum alone, into a scratch, out of place."""
    import torch

    seen, _ = calls
    x = torch.arange(float(SIZE))
    targets = np.stack([drawn("ignore", 5, SIZE), drawn("ignore", 6, SIZE)])
    updates = torch.arange(2.0 * COUNT).reshape(2, COUNT)
    out = torch.func.vmap(
        lambda i, u: pg.scatter_nd(x, i, u, bad_indices="ignore")
    )(torch.from_numpy(targets[..., None]), updates)  # fmt: skip
    for k in range(2):
        want = loop_points(x.tolist(), targets[k].tolist(), updates[k].tolist())
        assert out[k].tolist() == want
    assert seen
    assert all(not reads and settled for reads, settled in seen), seen
