"""``torch.export`` (docs/transformations.md, "torch.export"): every public function exported
with the leading sizes of its index and data dynamic (``torch.export.Dim``), then the
exported program run on inputs of other sizes, against the plain-loop references
(``reference.py``; NumPy's own ``bincount``). Under ``"ignore"``, ``"clip"``, ``"wrap"`` and
``"unchecked"`` nothing reads an index value, so the program holds the whole call; under
``"error"`` (which reads them) the export raises portagather's ``ValueError`` naming the
other policies, as ``torch.compile(fullgraph=True)`` does; TensorFlow's default ``""`` is
``"ignore"`` there, as wherever index values cannot be read."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import portagather as pg

from . import reference

Arrays = list[npt.NDArray[Any]]

#: Where each test traces its call (``n`` rows of the index, ``m`` of the data; for
#: ``segment_csr``, ``n`` rows into ``m + 1`` segments), and the other sizes its exported
#: program runs at: an empty index and one of one row among them (the data keeps a row:
#: nothing can be clipped or wrapped into an empty axis).
TRACED = (10, 7)
RUNS = ((13, 9), (2, 2), (31, 3), (1, 1), (0, 3))

#: Every policy, and TensorFlow's default; only ``"error"`` reads index values.
POLICIES = ("error", "ignore", "clip", "wrap", "unchecked", "")
POLICY_IDS = [p or "default" for p in POLICIES]

#: The text of portagather's error under ``"error"``.
REFUSED = r'bad_indices="error" reads index values.*torch\.export.*"clip"'

SEGMENT_REDUCTIONS = ("sum", "mean", "max", "min", "prod")
TOOLKIT = ("softmax", "log_softmax", "logsumexp", "argmax", "argmin", "var", "std")
NUM_SEGMENTS = 4


@dataclass
class Case:
    """One exported call: the function of the arrays, the arrays at sizes ``(n, m)`` with
    the dimension names of their dynamic axes, and the reference's answer for them."""

    function: Callable[..., Any]
    arrays: Arrays
    dims: list[dict[int, str]]
    expected: Callable[..., npt.NDArray[Any]]


def _resolved(policy: str) -> str:
    """The policy that `policy` is under ``torch.export``: ``""`` is ``"ignore"``."""
    return policy or "ignore"


def _indices(
    rng: np.random.Generator, shape: tuple[int, ...], n: int, policy: str
) -> npt.NDArray[np.int64]:  # fmt: skip
    """Index values for an axis of length `n`: some out of range on both sides where the
    policy decides what they do, none under ``"unchecked"`` and ``"error"``."""
    if policy in ("unchecked", "error"):
        return rng.integers(0, n, size=shape)
    values = rng.integers(-3, n + 3, size=shape)
    values.flat[:2] = [-1, n][: values.size]  # one bad value on each side, where there is room
    return values


def _data(rng: np.random.Generator, *shape: int) -> npt.NDArray[np.float64]:
    return rng.normal(size=shape)


def _gather_case(op: str, policy: str, n: int, m: int, rng: np.random.Generator) -> Case:
    """The gathers of `m` x 4 x 3 (``gather_nd``: 2-vectors) or `m` x 3 data along axis 0 at
    `n` rows of indices, with ``fill_value`` for ``"ignore"``."""
    options: dict[str, Any] = {"bad_indices": policy, "fill_value": -7.0}
    resolved = {**options, "bad_indices": _resolved(policy)}
    if op == "gather_nd":
        params = _data(rng, m, 4, 3)
        indices = np.stack(
            [_indices(rng, (n,), m, policy), _indices(rng, (n,), 4, policy)], axis=-1
        )
        return Case(
            lambda p, i: pg.gather_nd(p, i, **options), [params, indices], [{0: "m"}, {0: "n"}],
            lambda p, i: reference.ref_gather_nd(p, i, **resolved),
        )  # fmt: skip
    params = _data(rng, m, 3)
    if op == "gather":
        indices = _indices(rng, (n,), m, policy)
        return Case(
            lambda p, i: pg.gather(p, i, axis=0, **options), [params, indices],
            [{0: "m"}, {0: "n"}], lambda p, i: reference.ref_gather(p, i, axis=0, **resolved),
        )  # fmt: skip
    indices = _indices(rng, (n, 3), m, policy)
    if op == "gather_d":
        return Case(
            lambda p, i: pg.gather_d(p, 0, i, **options), [params, indices],
            [{0: "m"}, {0: "n"}], lambda p, i: reference.ref_gather_d(p, 0, i, **resolved),
        )  # fmt: skip
    return Case(
        lambda p, i: pg.take_along_axis(p, i, axis=0, **options), [params, indices],
        [{0: "m"}, {0: "n"}], lambda p, i: reference.ref_take_along_axis(p, i, axis=0, **resolved),
    )  # fmt: skip


def _scatter_case(
    op: str, reduce: str, policy: str, n: int, m: int, rng: np.random.Generator
) -> Case:  # fmt: skip
    """The scatters of `n` rows of updates into `m` x 4 x 3 (``scatter_nd``: 2-vectors) or
    `m` x 3 data along axis 0."""
    options: dict[str, Any] = {"reduce": reduce, "bad_indices": policy}
    resolved = {**options, "bad_indices": _resolved(policy)}
    dims = [{0: "m"}, {0: "n"}, {0: "n"}]
    if op == "scatter_nd":
        params, updates = _data(rng, m, 4, 3), _data(rng, n, 3)
        indices = np.stack(
            [_indices(rng, (n,), m, policy), _indices(rng, (n,), 4, policy)], axis=-1
        )
        return Case(
            lambda p, i, u: pg.scatter_nd(p, i, u, **options), [params, indices, updates], dims,
            lambda p, i, u: reference.ref_scatter_nd(p, i, u, **resolved),
        )  # fmt: skip
    x, indices, updates = _data(rng, m, 3), _indices(rng, (n, 3), m, policy), _data(rng, n, 3)
    if op == "scatter_d":
        return Case(
            lambda p, i, u: pg.scatter_d(p, 0, i, u, **options), [x, indices, updates], dims,
            lambda p, i, u: reference.ref_scatter_d(p, 0, i, u, **resolved),
        )  # fmt: skip
    return Case(
        lambda p, i, u: pg.put_along_axis(p, i, u, axis=0, **options), [x, indices, updates],
        dims, lambda p, i, u: reference.ref_put_along_axis(p, i, u, axis=0, **resolved),
    )  # fmt: skip


def _segment_case(op: str, policy: str, n: int, rng: np.random.Generator) -> Case:
    """``segment_<op>`` of `n` rows of 3 (ids and data sharing the dynamic size) into 4
    segments; ``segment_count`` of the ids alone."""
    options: dict[str, Any] = {"bad_indices": policy}
    resolved = _resolved(policy)
    ids = _indices(rng, (n,), NUM_SEGMENTS, policy)
    if op == "count":
        return Case(
            lambda i: pg.segment_count(i, NUM_SEGMENTS, **options), [ids], [{0: "n"}],
            lambda i: reference.ref_segment_count(i, NUM_SEGMENTS, resolved),
        )  # fmt: skip
    function = getattr(pg, f"segment_{op}")
    if op in TOOLKIT:

        def expected(d: Any, i: Any) -> npt.NDArray[Any]:
            return reference.ref_segment_toolkit(d, i, NUM_SEGMENTS, op, resolved)

    else:

        def expected(d: Any, i: Any) -> npt.NDArray[Any]:
            return reference.ref_segment(d, i, NUM_SEGMENTS, op, resolved)

    return Case(
        lambda d, i: function(d, i, NUM_SEGMENTS, **options), [_data(rng, n, 3), ids],
        [{0: "n"}, {0: "n"}], expected,
    )  # fmt: skip


def _csr_case(reduce: str, policy: str, n: int, m: int, rng: np.random.Generator) -> Case:
    """``segment_csr`` of `n` rows of 3 split into ``m + 1`` segments by sorted offsets, both
    sizes dynamic: rows before the first offset and after the last are in no segment, and
    repeated offsets make empty segments."""
    offsets = np.sort(rng.integers(0, n + 1, size=m + 2))
    expected = reference.ref_segment_csr if reduce in SEGMENT_REDUCTIONS else None

    def want(d: Any, o: Any) -> npt.NDArray[Any]:
        if expected is not None:
            return expected(d, o, reduce)
        return reference.ref_csr_toolkit(d, o, reduce)

    return Case(
        lambda d, o: pg.segment_csr(d, o, reduce=reduce, bad_indices=policy),
        [_data(rng, n, 3), offsets], [{0: "n"}, {0: "k"}], want,
    )  # fmt: skip


#: The smallest size of each dynamic axis: any, but for the offsets' ``k``, from 3 (two
#: segments): torch's own check that a new array of ``k - 1`` rows is contiguous would fix a
#: size of one row.
SMALLEST = {"n": 0, "m": 0, "k": 3}


def _export(case: Case) -> Any:
    """The exported program of `case`'s call, each named axis a ``Dim`` (:data:`SMALLEST`)."""
    import torch
    from torch.export import Dim, export

    class Call(torch.nn.Module):
        def forward(self, *arrays: Any) -> Any:
            return case.function(*arrays)

    dims = {name: Dim(name, min=smallest) for name, smallest in SMALLEST.items()}
    dynamic = tuple({axis: dims[name] for axis, name in d.items()} for d in case.dims)
    return export(Call(), tuple(map(torch.asarray, case.arrays)), dynamic_shapes=(dynamic,))


def _check(make: Callable[[int, int, np.random.Generator], Case], refused: bool) -> None:
    """Export the call of `make` at :data:`TRACED` sizes, then run the program at each of
    :data:`RUNS` against the reference; where `refused` (``"error"``), the export raises."""
    import torch

    rng = np.random.default_rng(38)
    traced = make(*TRACED, rng)
    if refused:
        with pytest.raises(ValueError, match=REFUSED):
            _export(traced)
        return
    program = _export(traced).module()
    for n, m in RUNS:
        case = make(n, m, rng)
        out = program(*map(torch.asarray, case.arrays))
        expected = case.expected(*case.arrays)
        got = out.numpy()
        assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape} at {n, m}"
        assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.cell("torch.export policy:{policy}")
@pytest.mark.only("torch")
@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("op", ["gather_nd", "gather", "gather_d", "take_along_axis"])
@pytest.mark.usefixtures("backend")
def test_gathers(op, policy):
    _check(lambda n, m, rng: _gather_case(op, policy, n, m, rng), policy == "error")


@pytest.mark.cell("torch.export policy:{policy}")
@pytest.mark.only("torch")
@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("reduce", ["update", "add", "max"])
@pytest.mark.parametrize("op", ["scatter_nd", "scatter_d", "put_along_axis"])
@pytest.mark.usefixtures("backend")
def test_scatters(op, reduce, policy):
    _check(lambda n, m, rng: _scatter_case(op, reduce, policy, n, m, rng), policy == "error")


@pytest.mark.cell("torch.export policy:{policy}")
@pytest.mark.only("torch")
@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("op", [*SEGMENT_REDUCTIONS, *TOOLKIT, "count"])
@pytest.mark.usefixtures("backend")
def test_segments(op, policy):
    _check(lambda n, _, rng: _segment_case(op, policy, n, rng), policy == "error")


@pytest.mark.cell("torch.export policy:{policy}")
@pytest.mark.only("torch")
@pytest.mark.parametrize("policy", ["error", "unchecked"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "softmax", "argmax", "std"])
@pytest.mark.usefixtures("backend")
def test_segment_csr(reduce, policy):
    """Offsets always valid (under ``"unchecked"`` they must be), their number dynamic."""
    _check(lambda n, m, rng: _csr_case(reduce, policy, n, m, rng), policy == "error")


@pytest.mark.cell("torch.export")
@pytest.mark.only("torch")
@pytest.mark.xfail(
    raises=ValueError,
    strict=True,
    reason='bincount has no policy but "error" (a value of x at or past length raises), whose '
    "check reads x, which torch.export cannot; the export raises portagather's ValueError. "
    "segment_count(x, length, bad_indices=...) and segment_sum(weights, x, length, "
    "bad_indices=...) export",
)
@pytest.mark.parametrize("weighted", [False, True], ids=["counts", "weights"])
@pytest.mark.usefixtures("backend")
def test_bincount(weighted):
    """``bincount(length=6)``, against NumPy's own."""

    def make(n: int, _: int, rng: np.random.Generator) -> Case:
        x, weights = rng.integers(0, 6, size=n), _data(rng, n)

        def expected(x: Any, w: Any = None) -> npt.NDArray[Any]:
            return np.bincount(x, w, minlength=6)

        if weighted:
            return Case(lambda x, w: pg.bincount(x, w, length=6), [x, weights],
                        [{0: "n"}, {0: "n"}], expected)  # fmt: skip
        return Case(lambda x: pg.bincount(x, length=6), [x], [{0: "n"}], expected)

    _check(make, refused=False)
