"""Hypothesis strategies that draw valid calls of the four operations.

Each draws shapes that satisfy docs/contract.md and index values either all valid or (``bad=True``)
from a wider range that includes negatives and values past the end. Data values are distinct
(``arange``), so a wrong position never reads an equal value by chance.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from .cases import (
    REDUCTIONS,
    SCATTERS,
    Arr,
    Call,
    Chunks,
    Foreign,
    OddCall,
    ScatterCall,
    scatter_of,
)

SIZES = st.integers(1, 3)


#: The hypothesis profiles of the drawn tests (``--hypothesis-profile NAME``). A drawn test's
#: written count of examples is for hypothesis's own default of 100 examples; a run draws the
#: share of it that the loaded profile's ``max_examples`` is of 100 (:func:`examples`).
#: ``thorough`` draws every written example; ``portagather``, which the suite's plugin and
#: ``tests/conftest.py`` load unless a run names a profile, a third of each count above
#: :data:`FEWEST` (it keeps CI within its time).
PROFILES = {"thorough": 100, "portagather": 34}
for _name, _examples in PROFILES.items():
    settings.register_profile(_name, max_examples=_examples)
#: The fewest examples a profile leaves a drawn test (fewer where it is written with fewer).
FEWEST = 10


def examples(written: int) -> int:
    """How many of a drawn test's `written` examples this run draws (:data:`PROFILES`)."""
    current = settings.default
    share = (current.max_examples if current is not None else 100) / 100
    return max(min(written, FEWEST), round(written * share))


def load_profile(config: Any) -> None:
    """The ``portagather`` profile, unless the pytest run names one
    (``--hypothesis-profile``)."""
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("portagather")


def drawn(examples_written: int) -> settings:
    """Settings of a drawn test: derandomized, so that CI runs the same cases every time;
    :func:`examples` of the `examples_written`."""
    return settings(
        max_examples=examples(examples_written),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def _data(shape: tuple[int, ...]) -> npt.NDArray[np.int32]:
    return (np.arange(int(np.prod(shape)), dtype=np.int32) + 1).reshape(shape)


def _values(draw: st.DrawFn, shape: tuple[int, ...], low: int, high: int) -> npt.NDArray[np.int64]:
    count = int(np.prod(shape))
    values = draw(st.lists(st.integers(low, high), min_size=count, max_size=count))
    return np.asarray(values, dtype=np.int64).reshape(shape)


def _range(n: int, allow_negative: bool, bad: bool) -> tuple[int, int]:
    if bad:
        return -n - 2, n + 2
    return (-n if allow_negative else 0), n - 1


@st.composite
def gather_nd_calls(draw: st.DrawFn, batch: bool, bad: bool = False) -> Call:
    b = draw(st.integers(1, 2)) if batch else 0
    r = draw(st.integers(b + 1, b + 3))
    shape = tuple(draw(SIZES) for _ in range(r))
    depth = draw(st.integers(0 if not bad else 1, r - b))
    grid = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    index_shape = shape[:b] + grid + (depth,)
    index_dims = shape[b : b + depth]
    columns = [_values(draw, shape[:b] + grid + (1,), *_range(n, False, bad)) for n in index_dims]
    empty = np.zeros(index_shape, dtype=np.int64)
    indices = np.concatenate(columns, axis=-1) if columns else empty
    return Call("gather_nd", _data(shape), indices, {"batch_dims": b})


@st.composite
def gather_calls(draw: st.DrawFn, batch: bool, bad: bool = False) -> Call:
    b = draw(st.integers(1, 2)) if batch else 0
    r = draw(st.integers(b + 1, b + 3))
    shape = tuple(draw(SIZES) for _ in range(r))
    axis = draw(st.integers(b, r - 1))
    grid = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    indices = _values(draw, shape[:b] + grid, *_range(shape[axis], False, bad))
    q = indices.ndim
    kwargs = {"axis": draw(st.sampled_from([axis, axis - r]))}
    if batch:  # TensorFlow's negative batch_dims counts from indices.ndim
        kwargs["batch_dims"] = draw(st.sampled_from([b, b - q] if b < q else [b]))
    if axis == b and kwargs.get("batch_dims", 0) >= 0 and draw(st.booleans()):
        del kwargs["axis"]  # axis defaults to batch_dims (as given: a negative one is an axis)
    return Call("gather", _data(shape), indices, kwargs)


@st.composite
def gather_d_calls(draw: st.DrawFn, bad: bool = False) -> Call:
    r = draw(st.integers(1, 3))
    shape = tuple(draw(SIZES) for _ in range(r))
    dim = draw(st.integers(0, r - 1))
    index_shape = tuple(
        draw(st.integers(0, 3)) if d == dim else draw(st.integers(0, shape[d])) for d in range(r)
    )
    indices = _values(draw, index_shape, *_range(shape[dim], True, bad))
    return Call("gather_d", _data(shape), indices, {"dim": draw(st.sampled_from([dim, dim - r]))})


def _along_axis_shapes(
    draw: st.DrawFn, rank: int, sizes: st.SearchStrategy[int], most: int
) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """``(axis, x shape, indices shape)`` for take_along_axis: up to `most` indices along
    `axis`; on every other axis equal sizes, or either side broadcast from 1."""
    axis = draw(st.integers(0, rank - 1))
    shape, index_shape = [], []
    for d in range(rank):
        size = draw(sizes)
        if d == axis:
            shape.append(size)
            index_shape.append(draw(st.integers(0, most)))
        else:
            pair = draw(st.sampled_from([(size, size), (size, 1), (1, size)]))
            shape.append(pair[0])
            index_shape.append(pair[1])
    return axis, tuple(shape), tuple(index_shape)


@st.composite
def take_along_axis_calls(draw: st.DrawFn, bad: bool = False) -> Call:
    r = draw(st.integers(1, 3))
    axis, shape, index_shape = _along_axis_shapes(draw, r, SIZES, 3)
    indices = _values(draw, index_shape, *_range(shape[axis], True, bad))
    kwargs = {"axis": draw(st.sampled_from([axis, axis - r]))}
    return Call("take_along_axis", _data(shape), indices, kwargs)


@st.composite
def chunkings(draw: st.DrawFn, shape: tuple[int, ...]) -> Chunks:
    """Dask chunks for `shape`: up to three chunks per axis, zero-size and one-element
    chunks included."""
    chunks = []
    for n in shape:
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=2)))
        edges = [0, *cuts, n]
        chunks.append(tuple(b - a for a, b in itertools.pairwise(edges)))
    return tuple(chunks)


@st.composite
def _laid_out(draw: st.DrawFn, calls: st.SearchStrategy[Call]) -> Call:
    call = draw(calls)
    call.chunks = (draw(chunkings(call.data.shape)), draw(chunkings(np.shape(call.indices))))
    return call


def calls(op: str, *, batch: bool = False, bad: bool = False) -> st.SearchStrategy[Call]:
    """Calls of `op`, with data and indices in drawn chunks (used by backends with chunks)."""
    if op == "gather_nd":
        drawn = gather_nd_calls(batch, bad)
    elif op == "gather":
        drawn = gather_calls(batch, bad)
    elif op == "gather_d":
        drawn = gather_d_calls(bad)
    else:
        drawn = take_along_axis_calls(bad)
    return _laid_out(drawn)


# Mixed calls: ranks up to 5, zero-size axes, every policy and alias, several dtypes, index
# values mostly valid; (operation, data, indices, options, policy).
MIXED_POLICIES = ["error", "ignore", "clip", "wrap", "unchecked", "", "IGNORE"]
dims = st.integers(0, 3)


@st.composite
def _mixed_gather_nd_case(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 5))
    batch_dims = draw(st.integers(0, rank - 1))
    depth = draw(st.integers(0, rank - batch_dims))
    shape = tuple(draw(dims) for _ in range(rank))
    grid = tuple(draw(dims) for _ in range(draw(st.integers(0, 5 - batch_dims))))
    index_shape = shape[:batch_dims] + grid + (depth,)
    return (
        "gather_nd",
        shape,
        index_shape,
        {"batch_dims": batch_dims},
        [*shape[batch_dims : batch_dims + depth]],
    )


@st.composite
def _mixed_gather_case(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 5))
    axis = draw(st.integers(0, rank - 1))
    batch_dims = draw(st.integers(0, axis))
    shape = tuple(draw(dims) for _ in range(rank))
    grid = tuple(draw(dims) for _ in range(draw(st.integers(0, 3))))
    index_rank = batch_dims + len(grid)
    options: dict[str, int | None] = {
        "batch_dims": draw(st.sampled_from([batch_dims, batch_dims - index_rank]))
    }
    # axis=None means batch_dims as given, so only a non-negative batch_dims names this axis.
    given_batch_dims = options["batch_dims"]
    defaults = [None] if axis == batch_dims and (given_batch_dims or 0) >= 0 else []
    options["axis"] = draw(st.sampled_from([axis, axis - rank, *defaults]))
    return "gather", shape, shape[:batch_dims] + grid, options, [shape[axis]]


@st.composite
def _mixed_gather_d_case(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 4))
    dim = draw(st.integers(0, rank - 1))
    shape = tuple(draw(dims) for _ in range(rank))
    index_shape = tuple(
        draw(st.integers(0, 4)) if d == dim else draw(st.integers(0, s))
        for d, s in enumerate(shape)
    )
    return (
        "gather_d",
        shape,
        index_shape,
        {"dim": draw(st.sampled_from([dim, dim - rank]))},
        [shape[dim]],
    )


@st.composite
def _mixed_take_along_axis_case(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 4))
    axis, shape, index_shape = _along_axis_shapes(draw, rank, dims, 4)
    kwargs = {"axis": draw(st.sampled_from([axis, axis - rank]))}
    return "take_along_axis", shape, index_shape, kwargs, [shape[axis]]


_MIXED_CASES = {
    "gather_nd": _mixed_gather_nd_case,
    "gather": _mixed_gather_case,
    "gather_d": _mixed_gather_d_case,
    "take_along_axis": _mixed_take_along_axis_case,
}


@st.composite
def mixed_calls(
    draw: st.DrawFn, op: str, dtypes: tuple[str, ...], index_dtypes: tuple[str, ...]
) -> tuple[str, np.ndarray, np.ndarray, dict[str, Any], str]:
    """Calls of gather `op` as in the comment above, in those of `dtypes` (data) and
    `index_dtypes` the backend holds."""
    op, shape, index_shape, options, sizes = draw(_MIXED_CASES[op]())
    policy = draw(st.sampled_from(MIXED_POLICIES))
    index_dtype = draw(
        st.sampled_from(
            [d for d in ("int8", "int16", "int32", "int64", "uint8", "uint32") if d in index_dtypes]
        )
    )
    data_dtype = draw(
        st.sampled_from([d for d in ("float32", "int16", "bool", "complex64") if d in dtypes])
    )
    size = int(np.prod(shape))
    data = (np.arange(size) * 7 % 11).reshape(shape).astype(data_dtype)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    indices = rng.integers(-5, 6, size=index_shape)
    # Mostly valid values; component j of a gather_nd vector ranges over its own axis.
    limits = (
        np.maximum(np.array(sizes, dtype=np.int64), 1) if op == "gather_nd" else max(sizes[0], 1)
    )
    valid = indices % limits
    if policy == "unchecked":  # only valid indices have specified values
        indices = valid
    else:
        indices = np.where(rng.random(index_shape) < 0.85, valid, indices)
    if index_dtype.startswith("uint"):
        indices = np.abs(indices)
    return op, data, indices.astype(index_dtype), options, policy


@st.composite
def scatter_calls(draw: st.DrawFn, op: str, reduce: str, *, bad: bool = False) -> ScatterCall:
    """Calls of scatter `op`: the inverse gather's drawn call, with updates of its result's
    shape: distinct values (a wrong winner under "update" shows), small ones for "multiply"."""
    gather_op = SCATTERS[op]
    call = draw(calls(gather_op, batch=gather_op == "gather_nd" and draw(st.booleans()), bad=bad))
    shape = Call(call.op, call.data, call.indices, {**call.kwargs, "bad_indices": "ignore"})
    out_shape = shape.expected().shape
    count = int(np.prod(out_shape))
    if reduce == "multiply":
        updates = _values(draw, out_shape, -2, 2).astype(np.int32)
    else:
        order = draw(st.permutations(range(count))) if count else []
        updates = (np.asarray(order, dtype=np.int32) * 7 - 50).reshape(out_shape)
    scatter = scatter_of(call, updates, reduce=reduce)
    assert call.chunks is not None
    scatter.chunks = (*call.chunks, draw(chunkings(out_shape)))
    return scatter


# Calls with odd arguments (test_arguments.py): a drawn call of one of the seven public
# functions, then its arguments in other valid forms (Python lists, NumPy scalars, Python
# ints no integer dtype holds, TensorFlow's policy names) and up to two faults (kinds, ragged
# lists, dtypes, shapes, arrays of another namespace, options, values). Every array holds a
# dtype that every backend keeps as it is (int32, int8, uint8, float32, bool), so that a call
# means the same on every backend.

ODD_POLICIES = ("error", "ignore", "clip", "wrap", "unchecked", "", "DEFAULT", "ERROR", "IGNORE")
#: Objects of no kind that an argument takes.
ODD_OBJECTS = (None, {"a": 1}, object(), {1, 2}, print)
#: Python ints that no integer dtype, or no 32-bit one, holds.
HUGE_INTS = (2**31, 2**40, -(2**40), 2**63 + 5, 2**64, -(2**70))


def _index_dtype(draw: st.DrawFn, indices: npt.NDArray[Any]) -> npt.NDArray[Any]:
    dtype = draw(st.sampled_from(["int32", "int8", "uint8"]))
    if dtype == "uint8":  # negative values become large ones: out of range, never from the end
        return np.where(indices < 0, 200, indices).astype(dtype)
    return indices.astype(dtype)


def _data_dtype(draw: st.DrawFn, data: npt.NDArray[Any]) -> npt.NDArray[Any]:
    dtype = draw(st.sampled_from(["int32", "float32", "bool"]))
    return (data % 2 if dtype == "bool" else data).astype(dtype)


def _huge(draw: st.DrawFn, indices: npt.NDArray[Any], negative: bool = False) -> Any:
    """The index as a Python list with one value no (32-bit) integer dtype holds (a negative
    one where `negative`)."""
    values = indices.astype(object)
    if values.size:
        flat = values.reshape(-1)
        huge = [v for v in HUGE_INTS if v < 0] if negative else list(HUGE_INTS)
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from(huge))
    return values.tolist()


#: A few calls of each gather (data shape, index shape, options), the same in every drawn
#: odd call, so that backends which compile per shape (JAX) compile each once: the shapes
#: are not what these calls vary.
ODD_BASES: dict[str, list[tuple[tuple[int, ...], tuple[int, ...], dict[str, int]]]] = {
    "gather_nd": [((2, 3), (2, 2), {}), ((2, 3, 2), (2, 1, 1), {"batch_dims": 1}),
                  ((3,), (0, 1), {})],
    "gather": [((2, 3), (4,), {"axis": 1}), ((2, 3, 2), (2, 2), {"axis": 1, "batch_dims": 1}),
               ((3,), (), {})],
    "gather_d": [((2, 3), (2, 2), {"dim": 1}), ((3,), (4,), {"dim": 0}),
                 ((2, 3), (1, 0), {"dim": -2})],
    "take_along_axis": [((2, 3), (2, 1), {"axis": 1}), ((2, 3), (1, 3), {"axis": 0}),
                        ((3,), (4,), {"axis": -1})],
}  # fmt: skip


@st.composite
def _odd_base(draw: st.DrawFn, op: str) -> Call:
    """One of ``ODD_BASES[op]`` with drawn index values, valid or (maybe) bad ones."""
    shape, index_shape, kwargs = draw(st.sampled_from(ODD_BASES[op]))
    b, bad = kwargs.get("batch_dims", 0), draw(st.booleans())
    if op == "gather_nd":
        sizes = [shape[b + j] for j in range(index_shape[-1])]
        columns = [_values(draw, index_shape[:-1] + (1,), *_range(n, False, bad)) for n in sizes]
        indices = np.concatenate(columns, axis=-1) if columns else np.zeros(index_shape, int)
    else:
        axis = kwargs.get("axis", kwargs.get("dim", b))
        negative = op in ("gather_d", "take_along_axis")
        indices = _values(draw, index_shape, *_range(shape[axis], negative, bad))
    return Call(op, _data(shape), indices, dict(kwargs))


@st.composite
def odd_calls(draw: st.DrawFn, op: str) -> OddCall:
    """A call of public function `op` with arguments in odd forms and up to two faults."""
    scatter = op in SCATTERS
    base: Call | ScatterCall = draw(_odd_base(SCATTERS.get(op, op)))
    if isinstance(base, Call) and scatter:
        reduce = draw(st.sampled_from(REDUCTIONS))
        shaped = Call(base.op, base.data, base.indices, {**base.kwargs, "bad_indices": "ignore"})
        shape = shaped.expected().shape
        count = int(np.prod(shape))
        values = np.arange(count) % 5 - 2 if reduce == "multiply" else np.arange(count) * 7 - 50
        base = scatter_of(base, values.reshape(shape), reduce=reduce)
        updates: Any = base.updates
    kwargs = dict(base.kwargs)
    data = _data_dtype(draw, base.data)
    indices: Any = _index_dtype(draw, np.asarray(base.indices))
    if scatter:
        updates = Arr(_data_dtype(draw, updates).astype(data.dtype))
    kwargs["bad_indices"] = draw(st.sampled_from(ODD_POLICIES))
    if not scatter and draw(st.booleans()):
        kwargs["fill_value"] = draw(st.sampled_from([1, -1, True, np.int8(1), 0.0]))
        if data.dtype == bool:
            kwargs["fill_value"] = True
    data_arg: Any = Arr(data)
    index_arg: Any = Arr(indices)
    # Valid forms the arguments also take.
    form = draw(st.sampled_from(["arrays", "index list", "huge", "data list", "numpy ints"]))
    if form == "index list":
        index_arg = indices.tolist()
    elif form == "huge":
        index_arg = _huge(draw, indices.astype(np.int64))
    elif form == "data list" and data.dtype != np.float32:  # a float list: float64 on NumPy
        data_arg = data.tolist()
        kwargs.pop("fill_value", None)
    elif form == "numpy ints":
        for key in ("axis", "dim", "batch_dims"):
            if isinstance(kwargs.get(key), int):
                kwargs[key] = np.int64(kwargs[key])
        if (op == "gather" and indices.ndim == 0) or (op == "gather" and draw(st.booleans())):
            index_arg = np.int64(draw(st.integers(-2, 4)))  # a 0-d index: the axis goes
            kwargs.pop("batch_dims", None)
    if scatter and draw(st.booleans()):
        updates = updates.values.tolist()  # Python values of the data's kind
    spec = {"data": data_arg, "index": index_arg, "kwargs": kwargs}
    if scatter:
        spec["updates"] = updates
    for _ in range(draw(st.sampled_from([2, 1, 2, 1, 0, 2]))):  # mostly refused calls
        fault = draw(st.sampled_from(_FAULTS["scatter" if scatter else "gather"]))
        fault(draw, spec, op)
    return _odd_call(op, spec)


def _odd_call(op: str, spec: dict[str, Any]) -> OddCall:
    kwargs = dict(spec["kwargs"])
    arrays = (Arr, Foreign)
    if "updates" in spec and not isinstance(spec["data"], arrays):
        if not isinstance(spec["index"], arrays) and isinstance(spec["updates"], Arr):
            # Python data and index make NumPy arrays, whose updates are NumPy's: the
            # backend's array would be another library's, on that backend only.
            spec["updates"] = spec["updates"].values.tolist()
    if op in ("gather_d", "scatter_d"):
        dim = kwargs.pop("dim")
        args: tuple[Any, ...] = (spec["data"], dim, spec["index"])
    else:
        args = (spec["data"], spec["index"])
    if "updates" in spec:
        args = (*args, spec["updates"])
    return OddCall(op, args, kwargs)


def _values_of(argument: Any) -> Any:
    """The numbers of an argument as a NumPy array; an empty object array for anything else
    (odd objects, text, ragged lists), which the faults below leave alone."""
    if isinstance(argument, Arr | Foreign):
        return argument.values
    nothing = np.empty(0, dtype=object)
    try:
        values = np.asarray(argument)
    except ValueError:
        return nothing
    if values.dtype.kind not in "biuf":
        return nothing
    if values.dtype.kind in "iu" and values.size:  # as int32, which every backend keeps
        if int(values.min()) < -(2**31) or int(values.max()) >= 2**31:
            return nothing
        return values.astype(np.int32)
    return values.astype(np.float32) if values.dtype.kind == "f" else values


def _data_kind(draw: st.DrawFn, spec: dict[str, Any], op: str) -> None:
    odd = [*ODD_OBJECTS, [[1, 2], [3]]]
    if op not in ("gather_nd", "scatter_nd"):  # 0-d text data: a rank error everywhere
        odd += ["ab", b"ab"]
    spec["data"] = draw(st.sampled_from(odd))


def _index_kind(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["index"] = draw(st.sampled_from([*ODD_OBJECTS, "ab", [[0, 1], [2]], [None], ["a"]]))


def _index_dtype_fault(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    values = _values_of(spec["index"])
    if values.dtype == object:
        return
    dtype = draw(st.sampled_from(["float32", "bool"]))
    spec["index"] = draw(
        st.sampled_from([Arr(values.astype(dtype)), values.astype(dtype).tolist()])
    )


def _index_shape(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    values = _values_of(spec["index"])
    if values.dtype == object:
        return
    longer = draw(st.booleans()) or values.ndim == 0 or values.shape[-1] == 0
    values = values[..., None] if longer else values[..., 0]
    spec["index"] = Arr(values)


def _foreign(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    """An array of another namespace beside an array of the backend's."""
    targets = []
    if isinstance(spec["data"], Arr):
        targets.append("index")
        if "updates" in spec:
            targets.append("updates")
    if isinstance(spec["index"], Arr) and _values_of(spec["data"]).dtype != object:
        targets.append("data")
    if targets:
        target = draw(st.sampled_from(targets))
        spec[target] = Foreign(_values_of(spec[target]))


def _policy(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["kwargs"]["bad_indices"] = draw(st.sampled_from(["raise", None, 3, "Error", "ignore "]))


def _option(draw: st.DrawFn, spec: dict[str, Any], op: str) -> None:
    kwargs = spec["kwargs"]
    keys = [k for k in ("axis", "dim", "batch_dims") if k in kwargs] or ["batch_dims"]
    if op in ("take_along_axis", "put_along_axis"):
        keys = ["axis"]
    if op == "gather_nd" or op == "scatter_nd":
        keys = ["batch_dims"]
    key = draw(st.sampled_from(keys))
    kwargs[key] = draw(st.sampled_from(["1", 1.0, True, object(), 7, -7]))


def _fill(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    if not isinstance(spec["data"], Arr):  # a fill value's fit depends on the data's dtype
        return
    odd = [None, [1], {"a": 1}, Arr(np.zeros(2, np.int32)), 2**40, 0.5, "x", 1e300, 2, 1j]
    spec["kwargs"]["fill_value"] = draw(st.sampled_from(odd))


def _updates_kind(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["updates"] = draw(st.sampled_from([*ODD_OBJECTS, "ab", [[1, 2], [3]], [None]]))


def _updates_misfit(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    values = _values_of(spec["updates"])
    if values.dtype == object:
        return
    choice = draw(st.sampled_from(["float array", "float values", "huge", "shape", "scalar"]))
    if choice == "float array":
        spec["updates"] = Arr((values + 0.5).astype(np.float32))
    elif choice == "float values":
        spec["updates"] = (values + 0.5).tolist()
    elif choice == "huge" and isinstance(spec["data"], Arr):  # the fit depends on the dtype
        spec["updates"] = np.full(values.shape, 2**40).tolist()
    elif choice == "shape":
        spec["updates"] = Arr(np.concatenate([values.reshape(-1), values.reshape(-1)[:1]]))
    else:
        spec["updates"] = 1


def _reduce(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["kwargs"]["reduce"] = draw(st.sampled_from(["sum", None, "ADD", 1]))


_COMMON = [_data_kind, _index_kind, _index_dtype_fault, _index_shape, _foreign, _policy, _option]
_FAULTS = {
    "gather": [*_COMMON, _fill],
    "scatter": [*_COMMON, _updates_kind, _updates_misfit, _reduce],
}


# The segment reductions: ids of rank 0 to 2 over data with up to 2 more axes, some segments
# empty, some ids repeated. Data values are small integers (in int32, or in a drawn dtype by
# the caller), so that every sum and product is exact and independent of the order in which
# a backend combines the rows; products use -2..2.


@st.composite
def segment_calls(draw: st.DrawFn, op: str, *, bad: bool = False) -> Call:
    """Calls of segment reduction `op` with ``num_segments`` given, data and ids in drawn
    chunks."""
    id_shape = tuple(draw(st.integers(0, 4)) for _ in range(draw(st.integers(0, 2))))
    inner = tuple(draw(SIZES) for _ in range(draw(st.integers(0, 2))))
    num_segments = draw(st.integers(0 if bad else 1, 4))
    low, high = (-2, num_segments + 1) if bad else (0, num_segments - 1)
    ids = _values(draw, id_shape, low, high)
    shape = id_shape + inner
    count = int(np.prod(shape))
    if op == "segment_prod":
        data = _values(draw, shape, -2, 2).astype(np.int32)
    else:
        data = (np.asarray(draw(st.permutations(range(count))), dtype=np.int32) * 3 - 7).reshape(
            shape
        )
    kwargs: dict[str, Any] = {"num_segments": num_segments}
    if draw(st.booleans()):
        kwargs["indices_are_sorted"] = False
    call = Call(op, data, ids, kwargs)
    call.chunks = (draw(chunkings(shape)), draw(chunkings(id_shape)))
    return call


@st.composite
def csr_calls(draw: st.DrawFn, reduce: str, bad: bool = False) -> Call:
    """Calls of ``segment_csr``: offsets of 1 or 2 dimensions (a batch axis first), sorted,
    with empty segments and rows before the first offset and after the last; with `bad`,
    one offset out of ``[0, n]`` or below the one before it."""
    batch = tuple(draw(SIZES) for _ in range(draw(st.integers(0, 1))))
    n = draw(st.integers(0, 5))
    inner = tuple(draw(SIZES) for _ in range(draw(st.integers(0, 1))))
    segments = draw(st.integers(0, 3))
    line = (*batch, segments + 1)
    offsets = np.sort(_values(draw, line, 0, n), axis=-1)
    if bad:
        position = tuple(draw(st.integers(0, s - 1)) for s in line)
        offsets[position] = draw(st.sampled_from([-1, n + 1, -5]))
    shape = (*batch, n, *inner)
    data = _values(draw, shape, -2, 2).astype(np.int32) if reduce == "prod" else _data(shape)
    call = Call("segment_csr", data, offsets, {"reduce": reduce})
    call.chunks = (draw(chunkings(shape)), draw(chunkings(line)))
    return call


# Odd calls of the segment reductions and of the compat front ends' segment and index
# operations (test_arguments.py): a drawn valid call of one function of a group, then its
# arguments in other forms and up to two faults, as for the gathers. An op named
# ``compat.<module>.<path>`` is that function of ``portagather.compat``.

_TF_REDUCES = ("sum", "mean", "max", "min", "prod")
#: Each group of the odd-argument test and the functions it draws from.
SEGMENT_GROUPS: dict[str, tuple[str, ...]] = {
    **{f"segment_{r}": (f"segment_{r}",) for r in _TF_REDUCES},
    "segment_csr": ("segment_csr",),
    "tf.math.unsorted_segment": tuple(
        f"compat.tensorflow.math.unsorted_segment_{r}" for r in (*_TF_REDUCES, "sqrt_n")
    ),
    "tf.math.segment": tuple(f"compat.tensorflow.math.segment_{r}" for r in _TF_REDUCES),
    "mindspore.unsorted_segment": tuple(
        f"compat.mindspore.unsorted_segment_{r}" for r in ("sum", "max", "min", "prod")
    ),
    "torch.index": tuple(f"compat.torch.index_{n}" for n in ("select", "add", "reduce", "put")),
    "torch.segment_reduce": ("compat.torch.segment_reduce",),
    "segment_toolkit": tuple(
        f"segment_{f}"
        for f in ("softmax", "log_softmax", "logsumexp", "argmax", "argmin", "var", "std")
    ),
}

#: The toolkit's functions that take floating data only (and whose values are compared
#: within rounding: each backend's exp and log may differ in the last bit).
TOOLKIT_FLOATING = tuple(
    f"segment_{f}" for f in ("softmax", "log_softmax", "logsumexp", "var", "std")
)

#: (data shape, ids shape): a few, so that JAX compiles each once.
_SEGMENT_BASES = [((4,), (4,)), ((4, 2), (4,)), ((2, 3), (2, 3)), ((2, 3, 2), (2, 3)),
                  ((0, 2), (0,))]  # fmt: skip
#: num_segments no array holds, and odd kinds of it.
_ODD_COUNTS = (-1, 2.0, "3", None, True, object(), 10**20, 8327099846119777499, 2**63 + 5)


def _small_data(draw: st.DrawFn, shape: tuple[int, ...], product: bool) -> npt.NDArray[Any]:
    """Small integers (exact sums and products in every dtype and order), in a drawn dtype."""
    if product:
        values = _values(draw, shape, -2, 2)
    else:
        values = (np.arange(int(np.prod(shape))) * 3 % 11 - 4).reshape(shape)
    return _data_dtype(draw, values)


def _ids(draw: st.DrawFn, shape: tuple[int, ...], n: int, sort: bool) -> npt.NDArray[Any]:
    bad = draw(st.booleans())
    values = _values(draw, shape, -2 if bad else 0, n + 1 if bad else max(n - 1, 0))
    if sort:
        values = np.sort(values.reshape(-1)).reshape(shape)
    return _index_dtype(draw, values)


def _index_forms(draw: st.DrawFn, indices: npt.NDArray[Any], negative: bool = False) -> Any:
    """The index as an array, a (nested) list, a list with an int no (32-bit) dtype holds
    (a negative one where `negative`: ids whose largest value may size the result)."""
    form = draw(st.sampled_from(["array", "array", "list", "huge"]))
    if form == "list":
        return indices.tolist()
    if form == "huge":
        return _huge(draw, indices, negative)
    return Arr(indices)


@st.composite
def odd_segment_calls(draw: st.DrawFn, group: str) -> OddCall:
    """A call of a function of `group` (:data:`SEGMENT_GROUPS`) with odd arguments."""
    op = draw(st.sampled_from(SEGMENT_GROUPS[group]))
    if group == "segment_csr":
        return _odd_csr(draw)
    if group.startswith("torch.index"):
        return _odd_torch_index(draw, op)
    if group == "torch.segment_reduce":
        return _odd_torch_segment_reduce(draw)
    shape, id_shape = draw(st.sampled_from(_SEGMENT_BASES))
    n = draw(st.sampled_from([3, 3, 1, 0, 5]))
    sort = group == "tf.math.segment" or draw(st.booleans())
    data = _small_data(draw, shape, op.endswith("prod"))
    if op in TOOLKIT_FLOATING and draw(st.integers(0, 3)):  # mostly data they take
        data = data.astype(np.float32)
    # Never a huge positive id: under num_segments=None it would size a result no memory holds.
    ids = _index_forms(draw, _ids(draw, id_shape, n, sort), negative=True)
    spec: dict[str, Any] = {"data": Arr(data), "index": ids}
    kwargs: dict[str, Any] = {}
    count: Any = draw(st.sampled_from([n, n, np.int64(n)]))
    if group.startswith("segment_"):
        kwargs = {"num_segments": count, "bad_indices": draw(st.sampled_from(ODD_POLICIES))}
        if draw(st.booleans()):
            kwargs["indices_are_sorted"] = draw(st.sampled_from([True, False, np.True_]))
    # A float list is float64 on NumPy; an int list the namespace's default integer, whose
    # extremes an empty segment of the max and the min holds.
    ordered = op.endswith(("max", "min"))
    if draw(st.booleans()) and data.dtype != np.float32 and (data.dtype == bool or not ordered):
        spec["data"] = data.tolist()
    spec["kwargs"] = kwargs
    faults = [_data_kind, _index_kind, _index_dtype_fault, _index_shape, _foreign]
    if group.startswith("segment_"):
        faults += [_policy, _num_segments_fault, _promise_fault]
    elif group != "tf.math.segment":
        faults.append(_num_segments_fault)
    spec["count"] = count
    for _ in range(draw(st.sampled_from([2, 1, 2, 1, 0, 2]))):
        draw(st.sampled_from(faults))(draw, spec, op)
    args: tuple[Any, ...] = (spec["data"], spec["index"])
    kwargs = dict(spec["kwargs"])
    if group.startswith("segment_"):
        kwargs["num_segments"] = spec["count"]
    elif group != "tf.math.segment":
        args = (*args, spec["count"])
    return OddCall(op, args, kwargs)


def _num_segments_fault(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["count"] = draw(st.sampled_from(_ODD_COUNTS))


def _promise_fault(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["kwargs"]["indices_are_sorted"] = draw(st.sampled_from([1, "yes", None, 0.0]))


#: (data shape, offsets shape) of segment_csr and torch.segment_reduce's offsets.
_CSR_BASES = [((5,), (4,)), ((5, 2), (3,)), ((2, 4), (2, 3)), ((0,), (2,))]


def _offsets(draw: st.DrawFn, shape: tuple[int, ...], line: tuple[int, ...]) -> Any:
    n = shape[len(line) - 1]
    offsets = np.sort(_values(draw, line, 0, n), axis=-1)
    if draw(st.booleans()):  # a bad one: outside [0, n] or falling
        position = tuple(draw(st.integers(0, s - 1)) for s in line)
        offsets[position] = draw(st.sampled_from([-1, n + 1, 0]))
    return _index_dtype(draw, offsets)


def _odd_csr(draw: st.DrawFn) -> OddCall:
    shape, line = draw(st.sampled_from(_CSR_BASES))
    reduce = draw(st.sampled_from(_TF_REDUCES))
    spec: dict[str, Any] = {
        "data": Arr(_small_data(draw, shape, reduce == "prod")),
        "index": _index_forms(draw, _offsets(draw, shape, line)),
        "kwargs": {"reduce": reduce,
                   "bad_indices": draw(st.sampled_from(["error", "unchecked", "ERROR"]))},
    }  # fmt: skip
    faults = [_data_kind, _index_kind, _index_dtype_fault, _index_shape, _foreign, _csr_option]
    for _ in range(draw(st.sampled_from([2, 1, 2, 1, 0, 2]))):
        draw(st.sampled_from(faults))(draw, spec, "segment_csr")
    return OddCall("segment_csr", (spec["data"], spec["index"]), spec["kwargs"])


def _csr_option(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    key = draw(st.sampled_from(["reduce", "bad_indices"]))
    odd = {"reduce": ["add", None, 1, "SUM"], "bad_indices": ["ignore", "clip", None, 3, ""]}
    spec["kwargs"][key] = draw(st.sampled_from(odd[key]))


#: (input shape, dim) of the torch index operations.
_TORCH_BASES = [((3, 2), 0), ((3, 2), 1), ((2, 3, 2), -2), ((3,), 0)]


def _odd_torch_index(draw: st.DrawFn, op: str) -> OddCall:
    shape, dim = draw(st.sampled_from(_TORCH_BASES))
    name = op.rsplit(".", 1)[1]
    n = shape[dim]
    bad = draw(st.booleans())
    length = draw(st.integers(0, 4))
    low, high = (-n - 1, n + 1) if bad else (-n if name == "index_put" else 0, n - 1)
    index = _index_dtype(draw, _values(draw, (length,), low, high))
    reduce = draw(st.sampled_from(["prod", "mean", "amax", "amin"]))
    data = _small_data(draw, shape, name == "index_reduce" and reduce == "prod")
    spec: dict[str, Any] = {"data": Arr(data), "index": _index_forms(draw, index), "kwargs": {}}
    faults = [_data_kind, _index_kind, _index_dtype_fault, _index_shape, _foreign, _torch_dim]
    if name == "index_put":
        source_shape: tuple[int, ...] = (length, *shape[1:])
    else:
        source_shape = tuple(length if d == dim % len(shape) else s for d, s in enumerate(shape))
    source = (np.arange(int(np.prod(source_shape))) % 3 - 1).reshape(source_shape)
    if name != "index_select":
        spec["updates"] = Arr(source.astype(data.dtype))
        if draw(st.booleans()):
            spec["updates"] = spec["updates"].values.tolist()
        faults += [_updates_kind, _updates_misfit]
    if name == "index_add" and draw(st.booleans()):
        spec["kwargs"]["alpha"] = draw(st.sampled_from([2, -1, 0.5, True, "a", None]))
    if name == "index_reduce":
        spec["kwargs"]["include_self"] = draw(st.booleans())
        spec["reduce"] = draw(st.sampled_from([reduce, reduce, "sum", None]))
    if name == "index_put":
        spec["kwargs"]["accumulate"] = draw(st.booleans())
    spec["dim"] = dim
    for _ in range(draw(st.sampled_from([2, 1, 2, 1, 0, 2]))):
        draw(st.sampled_from(faults))(draw, spec, op)
    if "updates" in spec and not isinstance(spec["data"], Arr | Foreign):
        if not isinstance(spec["index"], Arr | Foreign) and isinstance(spec["updates"], Arr):
            spec["updates"] = spec["updates"].values.tolist()
    if name == "index_put":
        tuple_ = draw(st.booleans())
        indices = (spec["index"],) if tuple_ else [spec["index"]]
        return OddCall(op, (spec["data"], indices, spec["updates"]), spec["kwargs"])
    args: tuple[Any, ...] = (spec["data"], spec["dim"], spec["index"])
    if name != "index_select":
        args = (*args, spec["updates"])
    if name == "index_reduce":
        args = (*args, spec["reduce"])
    return OddCall(op, args, spec["kwargs"])


def _torch_dim(draw: st.DrawFn, spec: dict[str, Any], _op: str) -> None:
    spec["dim"] = draw(st.sampled_from(["1", 1.0, True, 5, -5, None, np.int64(0)]))


def _odd_torch_segment_reduce(draw: st.DrawFn) -> OddCall:
    op = "compat.torch.segment_reduce"
    shape, line = draw(st.sampled_from(_CSR_BASES))
    axis = len(line) - 1
    reduce = draw(st.sampled_from(_TF_REDUCES))
    data = _small_data(draw, shape, reduce == "prod")
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        offsets = _offsets(draw, shape, line)
        kwargs["offsets"] = _index_forms(draw, offsets)
    else:
        n = shape[axis]
        cuts = np.sort(_values(draw, (*line[:-1], line[-1] - 2), 0, n), axis=-1)
        zeros = np.zeros((*line[:-1], 1), np.int64)
        edges = np.concatenate([zeros, cuts, zeros + n], axis=-1)
        lengths = np.diff(edges, axis=-1)
        if draw(st.booleans()):
            lengths.reshape(-1)[0] += draw(st.sampled_from([1, -1, -5]))  # a bad one
        kwargs["lengths"] = _index_forms(draw, _index_dtype(draw, lengths))
    if draw(st.booleans()):
        kwargs["axis"] = draw(st.sampled_from([axis, axis - len(shape), 5, "0", 1.0]))
    if draw(st.booleans()):
        kwargs["unsafe"] = draw(st.booleans())
    if draw(st.booleans()):
        kwargs["initial"] = draw(st.sampled_from([0, 1, -2]))
    spec: dict[str, Any] = {"data": Arr(data), "reduce": reduce, "kwargs": kwargs}
    for _ in range(draw(st.sampled_from([1, 1, 0, 2]))):
        fault = draw(st.sampled_from(["data", "reduce", "both", "neither", "indices"]))
        if fault == "data":
            _data_kind(draw, spec, op)
        elif fault == "reduce":
            spec["reduce"] = draw(st.sampled_from(["add", None, "amax", 1]))
        elif fault == "both":
            kwargs["offsets"] = kwargs["lengths"] = Arr(np.array([0, 5], np.int32))
        elif fault == "neither":
            kwargs.pop("offsets", None)
            kwargs.pop("lengths", None)
        else:
            kwargs["indices"] = Arr(np.zeros(5, np.int32))
    return OddCall(op, (spec["data"], spec["reduce"]), kwargs)
