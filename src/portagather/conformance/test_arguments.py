"""Odd arguments (docs/contract.md, "Errors"): every call either returns NumPy's values or
raises portagather's own TypeError, ValueError or IndexError naming an argument, the same
type as on NumPy.

Each drawn call (strategies.odd_calls: lists, NumPy scalars, ints no dtype holds, ``None``,
dicts, strings, ragged lists, arrays of another namespace, wrong dtypes and shapes, odd
options, every policy, up to two faults at once) runs on NumPy and on the backend under test;
the two outcomes must agree. The same for the segment reductions and the compat front ends'
segment and index operations (strategies.odd_segment_calls: odd data, ids, offsets,
``num_segments``, promises and policies), by group (strategies.SEGMENT_GROUPS).
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import portagather as pg

from . import strategies
from .backends import Backend, load_backend
from .cases import PUBLIC, Arr, Call, Foreign, OddCall, ScatterCall, check_result
from .runs import each_drawn, named_rows

#: Drawn calls per public function and backend: 7 x 300 = 2100 per backend under the
#: hypothesis profile ``thorough``, the profile's share of them otherwise (strategies.PROFILES).
ODD_EXAMPLES = 300
#: Drawn calls per group of segment and compat functions: 11 x 200 = 2200 per backend.
ODD_SEGMENT_EXAMPLES = 200

#: portagather's own code, where every refusal must be raised (not this suite's).
_PACKAGE = Path(pg.__file__).resolve().parent
_SUITE = Path(__file__).resolve().parent


@dataclass
class Outcome:
    """What a call did: its values, or the exception it raised."""

    values: npt.NDArray[Any] | None = None
    error: BaseException | None = None

    def __str__(self) -> str:
        if self.error is None:
            assert self.values is not None
            return f"returned {self.values.tolist()!r}"
        return f"raised {type(self.error).__name__}: {self.error}"


def outcome(backend: Backend, call: OddCall) -> Outcome:
    try:
        return Outcome(values=call.run(backend))
    except AssertionError:
        raise
    except Exception as err:  # every other exception is checked by the caller
        return Outcome(error=err)


def raised_by_portagather(error: BaseException) -> bool:
    """Whether the last frame of the traceback (where it was raised) is portagather's."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return False
    where = Path(frames[-1].filename).resolve()
    return where.is_relative_to(_PACKAGE) and not where.is_relative_to(_SUITE)


def names_an_argument(call: OddCall, text: str) -> bool:
    return any(re.search(rf"(?<![\w]){name}(?![\w])", text) for name in call.names())


def check_refusal(call: OddCall, error: BaseException, backend: str) -> None:
    assert type(error) in (TypeError, ValueError, IndexError), (
        f"{backend}: {type(error).__name__} is none of TypeError, ValueError, IndexError: {error}"
    )
    assert raised_by_portagather(error), (
        f"{backend}: raised outside portagather: {type(error).__name__}: {error}\n"
        + "".join(traceback.format_tb(error.__traceback__)[-3:])
    )
    assert names_an_argument(call, str(error)), f"{backend}: names no argument: {error}"


#: What a lazy backend (Dask) says where ``num_segments=None`` would read the ids when called
#: (docs/contract.md, R1), as ``tf.math.segment_*`` does: documented, not a disagreement.
_UNREAD_COUNT = "num_segments=None reads max(segment_ids) + 1, which cannot be read"


def check_agreement(call: OddCall, got: Outcome, want: Outcome, backend: Backend) -> None:
    """The backend's outcome against NumPy's: the same exception type, or equal values."""
    if backend.lazy and type(got.error) is ValueError and _UNREAD_COUNT in str(got.error):
        # Where NumPy answered or refused a value: a kind, shape or dtype refused by NumPy
        # comes first in the one order, and the lazy backend must refuse it alike.
        if want.error is None or isinstance(want.error, IndexError | ValueError):
            return
    if want.error is not None:
        assert got.error is not None, f"NumPy {want}, {backend.name} {got}"
        assert type(got.error) is type(want.error), f"NumPy {want}, {backend.name} {got}"
        return
    assert got.error is None, f"NumPy {want}, {backend.name} {got}"
    assert got.values is not None and want.values is not None
    assert got.values.shape == want.values.shape, f"NumPy {want}, {backend.name} {got}"
    unspecified = (  # the values at bad indices, or under a broken promise
        call.kwargs.get("bad_indices") == "unchecked"
        or call.kwargs.get("unsafe") is True
        or call.sorted_promise_broken()
    )
    if not unspecified:
        wanted = want.values
        if got.values.dtype.kind == wanted.dtype.kind == "f" and (
            got.values.dtype.itemsize < wanted.dtype.itemsize
        ):
            # A device without float64 (JAX without x64) divides in float32 where NumPy
            # divides in float64 (TensorFlow's true division of integers): NumPy's values at
            # the backend's precision (rounding a float64 quotient to float32 gives the
            # float32 quotient: 53 >= 2 * 24 + 2 bits).
            wanted = wanted.astype(got.values.dtype)
        if call.op in strategies.TOOLKIT_FLOATING:  # (each backend's own exp and log)
            np.testing.assert_allclose(got.values, wanted, rtol=1e-5, atol=1e-6, equal_nan=True)
            return
        assert np.array_equal(got.values, wanted, equal_nan=True), (
            f"NumPy {want}, {backend.name} {got}"
        )


@pytest.mark.cell("odd arguments")
@pytest.mark.parametrize("op", [*PUBLIC, *strategies.SEGMENT_GROUPS])
def test_odd_arguments(backend, repro, op):
    numpy = load_backend("numpy")
    count = 0
    examples = ODD_EXAMPLES if op in PUBLIC else ODD_SEGMENT_EXAMPLES
    drawn = strategies.odd_calls(op) if op in PUBLIC else strategies.odd_segment_calls(op)

    def check(call: OddCall) -> None:
        nonlocal count
        count += 1
        repro(call)
        want = outcome(numpy, call)
        if want.error is not None:
            check_refusal(call, want.error, "numpy")
        got = want if backend.name == "numpy" else outcome(backend, call)
        if got.error is not None:
            check_refusal(call, got.error, backend.name)
        check_agreement(call, got, want, backend)

    each_drawn(examples, drawn, check)
    assert count >= strategies.examples(examples), f"only {count} drawn calls"


# -- each class of argument that portagather used to leave to a backend ---------------------

M23 = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
F23 = M23.astype(np.float32)
I21 = np.array([[0], [2]], dtype=np.int32)


def _refused(backend: Backend, call: OddCall, error: type[BaseException], match: str) -> None:
    """`call` raises `error`, from portagather's own code, matching `match` (on Dask, at
    compute where the check is lazy)."""
    with pytest.raises(error, match=match) as info:
        call.run(backend)
    assert type(info.value) is error
    check_refusal(call, info.value, backend.name)


# (argument, odd value, exception, message): docs/contract.md, "Errors", kinds.
ODD_KINDS = [
    ("data", None, TypeError, r"^x must be an array, a scalar or a rectangular nested list of "
     r"scalars; got None$"),
    ("data", {"a": 1}, TypeError, r"^x must be an array.*; got \{'a': 1\}$"),
    ("data", object(), TypeError, r"^x must be an array.*; got <object object at"),
    ("data", [[1, 2], [3]], ValueError, r"^x must be an array or a rectangular nested list of "
     r"scalars; got \[\[1, 2\], \[3\]\]$"),
    ("index", None, TypeError, r"^indices must be an array, an int or a rectangular nested list "
     r"of ints; got None$"),
    ("index", "ab", TypeError, r"^indices must be an array, an int .*; got 'ab'$"),
    ("index", {0: 1}, TypeError, r"^indices must be an array, an int .*; got \{0: 1\}$"),
    ("index", [[0], [None]], TypeError, r"^indices must be .*; got \[\[0\], \[None\]\], which "
     r"holds None$"),
    ("index", [[0], [2, 1]], ValueError, r"^indices must be an array or a rectangular nested "
     r"list of ints; got \[\[0\], \[2, 1\]\]$"),
    ("values", None, TypeError, r"^values must be an array, a scalar or a rectangular nested "
     r"list of scalars; got None$"),
    ("values", {"a": 1}, TypeError, r"^values must be an array.*; got \{'a': 1\}$"),
    ("values", "ab", TypeError, r"^values must be values that x\.dtype = float32 holds exactly"),
    ("values", [[1.0], [2.0, 3.0]], ValueError, r"^values must be an array or a rectangular "
     r"nested list of scalars"),
    ("fill_value", None, TypeError, r"^fill_value must be a scalar .*; got None$"),
    ("fill_value", {"a": 1}, TypeError, r"^fill_value must be a scalar .*; got \{'a': 1\}$"),
]  # fmt: skip


@pytest.mark.cell("argument kinds")
@pytest.mark.parametrize(
    ("argument", "value", "error", "match"),
    ODD_KINDS,
    ids=[f"{a}-{type(v).__name__}-{e.__name__}" for a, v, e, _ in ODD_KINDS],
)
def test_argument_kinds(backend, repro, argument, value, error, match):
    """Objects no argument takes are refused by portagather, naming the argument and what
    it got, before any backend sees them: take_along_axis for the data and the index,
    put_along_axis for its values."""
    index = np.array([[0], [2]], dtype=np.int32)
    if argument == "values":
        call = OddCall("put_along_axis", (Arr(F23), Arr(index), value), {"axis": 1})
    else:
        args = [Arr(F23), Arr(index)]
        if argument != "fill_value":
            args[0 if argument == "data" else 1] = value
        kwargs = {"axis": 1, "fill_value": value} if argument == "fill_value" else {"axis": 1}
        call = OddCall("take_along_axis", tuple(args), kwargs)
    _refused(backend, repro(call), error, match)


@pytest.mark.cell("argument kinds")
@pytest.mark.parametrize("op", ["put_along_axis", "scatter_nd", "scatter_d"])
def test_none_is_never_a_value(backend, repro, op):
    """``None`` as the updates writes no NaN (NumPy's ``asarray(None, float32)``): a
    TypeError everywhere."""
    name = {"put_along_axis": "values", "scatter_nd": "updates", "scatter_d": "src"}[op]
    if op == "scatter_nd":
        call = OddCall(op, (Arr(F23), Arr(np.array([[0, 1]], np.int32)), None))
    elif op == "scatter_d":
        call = OddCall(op, (Arr(F23), 1, Arr(I21), None))
    else:
        call = OddCall(op, (Arr(F23), Arr(I21), None), {"axis": 1})
    _refused(backend, repro(call), TypeError, rf"^{name} must be an array.*; got None$")


# Two faults at once: the first in the order of docs/contract.md ("Errors") is reported, the
# same on every backend. (id, call, exception, message).
TWO_FAULTS = [
    ("depth-and-updates-dtype",
     OddCall("scatter_nd", (Arr(M23), Arr(np.zeros((1, 3), np.int32)), Arr(F23[0, :1]))),
     ValueError, r"^indices\.shape\[-1\] \(the index depth\) must be at most"),
    ("index-dtype-and-rank",
     OddCall("take_along_axis", (Arr(M23), Arr(np.zeros(2, np.float32))), {"axis": 1}),
     ValueError, r"^indices must have the same rank as x"),
    ("policy-and-data-kind",
     OddCall("gather", (None, Arr(I21)), {"bad_indices": "raise"}),
     ValueError, r"^bad_indices must be one of"),
    ("index-kind-and-fill-shape",
     OddCall("gather", (Arr(M23), None), {"fill_value": Arr(np.zeros(2, np.int32))}),
     TypeError, r"^indices must be an array"),
    ("fill-shape-and-index-dtype",
     OddCall("gather", (Arr(M23), Arr(np.zeros(2, np.float32))),
             {"fill_value": Arr(np.zeros(2, np.int32))}),
     ValueError, r"^fill_value must be a scalar .*shape \(2,\)"),
    ("index-dtype-and-fill-value",
     OddCall("gather", (Arr(M23), Arr(np.zeros(2, np.float32))), {"fill_value": 0.5}),
     TypeError, r"^indices must have an integer dtype; got float32$"),
    ("updates-shape-and-dtype",
     OddCall("scatter_nd", (Arr(M23), Arr(np.zeros((1, 2), np.int32)), Arr(F23[0, :2]))),
     ValueError, r"^updates\.shape must be \(1,\); got \(2,\)$"),
    ("updates-dtype-and-bad-index",
     OddCall("scatter_nd", (Arr(M23), Arr(np.array([[5, 0]], np.int32)),
                            Arr(np.ones(1, np.float32))), {"reduce": "max"}),
     TypeError, r"^updates must have a dtype that casts safely to params\.dtype = int32; got "
     r"float32$"),
    ("updates-values-and-bad-index",
     OddCall("put_along_axis", (Arr(M23), Arr(np.array([[7]], np.int32)), 1.5), {"axis": 1}),
     TypeError, r"^values must be values that x\.dtype = int32 holds exactly, or an array; "
     r"got 1\.5$"),
    ("foreign-index-and-ragged-updates",
     OddCall("scatter_d", (Arr(M23), 1, Foreign(np.zeros((2, 1), np.int32)), [[1], [2, 3]])),
     TypeError, r"one namespace|same library"),
]  # fmt: skip


@pytest.mark.cell("two faults")
@named_rows(("call", "error", "match"), TWO_FAULTS)
def test_two_faults_one_answer(backend, repro, call, error, match):
    _refused(backend, repro(call), error, match)


@pytest.mark.cell("argument kinds")
@pytest.mark.parametrize(
    "index",
    [np.int64(1), np.int8(-1), np.uint64(1), [np.int64(1), 0], [[np.int32(2)]]],
    ids=["int64", "int8", "uint64", "list", "nested"],
)
def test_numpy_integer_scalars_are_python_ints(backend, repro, index):
    """A NumPy integer means the Python int it holds, beside any backend's data."""
    plain = np.asarray(index).tolist() if isinstance(index, list) else int(index)
    call = repro(OddCall("gather", (Arr(M23), index), {"axis": 1, "bad_indices": "wrap"}))
    want = Call("gather", M23, np.asarray(plain), {"axis": 1, "bad_indices": "wrap"}).expected()
    np.testing.assert_array_equal(call.run(backend), want)


@pytest.mark.cell("argument kinds")
@pytest.mark.parametrize("argument", ["index", "data", "updates"])
def test_foreign_arrays_are_refused(backend, repro, argument):
    """An array of another namespace (NumPy's beside another backend's, a foreign one beside
    NumPy's) is a TypeError naming both arguments."""
    index = Arr(np.array([[0, 1]], np.int32))
    args: list[Any] = [Arr(M23), index, Arr(np.ones(1, np.int32))]
    position = {"data": 0, "index": 1, "updates": 2}[argument]
    args[position] = Foreign(args[position].values)
    match = r"must be an array of the same library" if argument == "updates" else "one namespace"
    _refused(backend, repro(OddCall("scatter_nd", tuple(args))), TypeError, match)


# -- arrays on a device that holds no 64-bit types ------------------------------------------

#: array-api-strict's devices that hold no int64 and float64 ("no_x64") or no float64.
NARROW_DEVICES = ("no_x64", "no_float64")
_GATHERS = [
    ("gather_nd", np.array([[1, 2], [0, 5]]), {}),
    ("gather", np.array([2, -1, 0]), {"axis": 1}),
    ("gather_d", np.array([[0, 4], [-1, 1]]), {"dim": 1}),
    ("take_along_axis", np.array([[2], [-4]]), {"axis": 1}),
]


def _on_device(values: npt.NDArray[Any], device: str) -> Any:
    import array_api_strict as xp

    values = values.astype(np.int32 if values.dtype.kind in "iu" else np.float32)
    return xp.asarray(values, device=xp.Device(device))


@pytest.mark.cell("devices")
@pytest.mark.only("array_api_strict")
@pytest.mark.parametrize("as_list", [False, True], ids=["array", "list"])
@pytest.mark.parametrize("policy", ["error", "ignore", "clip", "wrap", "unchecked"])
@pytest.mark.parametrize(("op", "indices", "kwargs"), _GATHERS, ids=[g[0] for g in _GATHERS])
@pytest.mark.parametrize("device", NARROW_DEVICES)
@pytest.mark.usefixtures("backend")
def test_gathers_on_a_device_without_64_bit_types(device, op, indices, kwargs, policy, as_list):
    """The index and fill dtypes come from what the data's own device holds; the result
    stays on that device, in the data's dtype."""
    import array_api_compat as aac

    data = _on_device(F23, device)
    index = indices.tolist() if as_list else _on_device(indices, device)
    call = Call(op, F23, indices, {**kwargs, "bad_indices": policy, "fill_value": -7})
    args, options = call.args(data, index)
    if policy == "error":
        with pytest.raises(IndexError, match=r"^ind\w+\[\d"):
            getattr(pg, op)(*args, **options)
        return
    out = getattr(pg, op)(*args, **options)
    assert aac.device(out) == aac.device(data) and out.dtype == data.dtype
    values = np.asarray(out._array)  # array-api-strict's own NumPy array
    if policy == "unchecked":
        assert np.isin(values, F23).all()
        return
    np.testing.assert_array_equal(values, call.expected())


@pytest.mark.cell("devices")
@pytest.mark.only("array_api_strict")
@pytest.mark.parametrize("reduce", ["update", "add"])
@pytest.mark.parametrize("device", NARROW_DEVICES)
@pytest.mark.usefixtures("backend")
def test_scatters_on_a_device_without_64_bit_types(device, reduce):
    """As the gathers. The generic scatter sorts with ``argsort`` and ``searchsorted``, whose
    int64 results array-api-strict 2.6's ``no_x64`` device refuses: portagather runs them
    where int64 is held and brings the positions back in the device's own index dtype."""
    import array_api_compat as aac

    data = _on_device(F23, device)
    index = _on_device(np.array([[1, 2], [1, 2], [0, 0]]), device)
    updates = _on_device(np.array([5.0, 6.0, 7.0]), device)
    out = pg.scatter_nd(data, index, updates, reduce=reduce)
    assert aac.device(out) == aac.device(data) and out.dtype == data.dtype
    want = ScatterCall(
        "scatter_nd", F23, np.array([[1, 2], [1, 2], [0, 0]]), np.array([5.0, 6.0, 7.0]),
        {"reduce": reduce},
    ).expected()  # fmt: skip
    np.testing.assert_array_equal(np.asarray(out._array), want)


_SEGMENT_DATA = np.array([[1.0, -2.0], [4.0, 0.5], [-3.0, 8.0], [2.0, 2.0], [0.0, -1.0]])
_SEGMENT_IDS = np.array([2, 0, 2, 3, 0])


def _segments_by_loop(reduce: str, ids: npt.NDArray[Any], count: int) -> npt.NDArray[Any]:
    """The reference: each segment's rows reduced one by one (0 for an empty sum or mean,
    -inf for an empty max)."""
    out = np.zeros((count, 2), dtype=np.float32)
    for segment in range(count):
        rows = _SEGMENT_DATA[ids == segment].astype(np.float32)
        if reduce == "max":
            out[segment] = rows.max(axis=0) if len(rows) else -np.inf
        elif len(rows):
            out[segment] = rows.sum(axis=0) / (len(rows) if reduce == "mean" else 1)
    return out


@pytest.mark.cell("devices")
@pytest.mark.only("array_api_strict")
@pytest.mark.parametrize("sorted_ids", [False, True], ids=["unsorted", "sorted"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
@pytest.mark.parametrize("device", NARROW_DEVICES)
@pytest.mark.usefixtures("backend")
def test_segments_on_a_device_without_64_bit_types(device, reduce, sorted_ids):
    """The segment reductions (ids and CSR offsets) on a device without int64 or float64: the
    counts, the sums of lengths and the sorted kernels' positions in the device's own index
    dtype; the result stays on the device, in the data's dtype."""
    import array_api_compat as aac

    ids = np.sort(_SEGMENT_IDS) if sorted_ids else _SEGMENT_IDS
    data = _on_device(_SEGMENT_DATA, device)
    function = getattr(pg, f"segment_{reduce}")
    out = function(data, _on_device(ids, device), 5, indices_are_sorted=sorted_ids)
    assert aac.device(out) == aac.device(data) and out.dtype == data.dtype
    np.testing.assert_allclose(np.asarray(out._array), _segments_by_loop(reduce, ids, 5))
    if sorted_ids:  # the same segments as CSR offsets, through the core and compat.torch
        from portagather.compat import torch as pgt

        lengths = np.bincount(ids, minlength=5)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        want = _segments_by_loop(reduce, ids, 5)
        by_offsets = pg.segment_csr(data, _on_device(offsets, device), reduce=reduce)
        np.testing.assert_allclose(np.asarray(by_offsets._array), want)
        by_lengths = pgt.segment_reduce(data, reduce, lengths=_on_device(lengths, device))
        assert aac.device(by_lengths) == aac.device(data)
        if reduce == "mean":  # torch.segment_reduce's mean of an empty segment is NaN
            want[lengths == 0] = np.nan
        np.testing.assert_allclose(np.asarray(by_lengths._array), want)


# -- bool reductions -------------------------------------------------------------------------

_BOOL_SCATTERS = [
    ScatterCall("scatter_nd", np.array([True, False, False, True]),
                np.array([[1], [1], [2], [3], [3]]), np.array([True, False, False, False, False])),
    ScatterCall("scatter_d", np.array([[False, True, True]]), np.array([[0, 0, 1, 1]]),
                np.array([[True, True, False, True]]), {"dim": 1}),
    ScatterCall("put_along_axis", np.array([[True, False], [True, True]]),
                np.array([[1, 1, 0]]), np.array([[False, True, True]]), {"axis": 1}),
]  # fmt: skip


@pytest.mark.cell("scatter bool")
@pytest.mark.parametrize("reduce", ["add", "multiply", "min", "max"])
@pytest.mark.parametrize(("op", "call"), [(c.op, c) for c in _BOOL_SCATTERS])
def test_bool_reductions(backend, repro, op, call, reduce):
    """On bool, ``"add"`` and ``"max"`` are a logical OR of the element and its updates,
    ``"multiply"`` and ``"min"`` a logical AND, as TensorFlow and PyTorch combine bools."""
    del op  # names the matrix row only
    call = ScatterCall(call.op, call.data, call.indices, call.updates,
                       {**call.kwargs, "reduce": reduce})  # fmt: skip
    out, data = repro(call).run(backend)
    check_result(backend, out, call.expected(), data)


@pytest.mark.cell("scatter bool")
@pytest.mark.parametrize("front_end", ["tensorflow", "mindspore"])
def test_compat_scatter_nd_of_bools(backend, front_end):
    """``tf.scatter_nd`` with bool updates ORs duplicates (TensorFlow 2.21 does; ported
    code builds masks with it); MindSpore's ``scatter_nd`` sums as TensorFlow's does."""
    from portagather import compat

    indices = np.array([[0], [0], [2], [3], [3]])
    updates = np.array([True, False, True, False, False])
    module = getattr(compat, front_end)
    out = module.scatter_nd(backend.asarray(indices), backend.asarray(updates), [5])
    want = ScatterCall("scatter_nd", np.zeros(5, bool), indices, updates, {"reduce": "add"})
    np.testing.assert_array_equal(backend.to_numpy(out), want.expected())
    assert backend.to_numpy(out).dtype == bool


@pytest.mark.cell("scatter bool")
def test_compat_tensorflow_scatter_nd_of_strings(backend):
    """``tf.scatter_nd`` joins the strings of duplicate index vectors; the front end refuses
    strings with a TypeError of its own that names `updates` (and, where the strings reach
    the reduction, says why), on every backend (docs/porting/tensorflow.md)."""
    from portagather.compat import tensorflow

    indices = backend.asarray(np.array([[4], [3], [3], [7]]))
    given: list[Any] = [[b"a", b"b", b"b", b"c"], ["a", "b", "b", "c"]]
    if backend.strings:
        given.append(backend.asarray(np.array(["a", "b", "b", "c"])))
    for updates in given:
        refused = r"^updates must be|^scatter_nd adds the updates"
        with pytest.raises(TypeError, match=refused) as info:
            tensorflow.scatter_nd(indices, updates, [8])
        assert raised_by_portagather(info.value), info.value
        text = str(info.value)
        assert "tf.scatter_nd joins strings" in text or "holds; got" in text, text


# -- compat front ends where index values cannot be read -------------------------------------


def _jit_calls() -> list[tuple[str, Any, str]]:
    """(front end, function of (x, index), the core function its message names)."""
    from portagather.compat import mindspore, onnx, torch

    return [
        ("torch.gather", lambda x, i: torch.gather(x, 1, i), "gather_d"),
        ("torch.take_along_dim", lambda x, i: torch.take_along_dim(x, i, 1), "take_along_axis"),
        ("torch.scatter", lambda x, i: torch.scatter(x, 1, i, x), "scatter_d"),
        ("torch.scatter_add", lambda x, i: torch.scatter_add(x, 1, i, x), "scatter_d"),
        ("torch.scatter_reduce",
         lambda x, i: torch.scatter_reduce(x, 1, i, x, "amax"), "scatter_d"),
        ("mindspore.gather_d", lambda x, i: mindspore.gather_d(x, 1, i), "gather_d"),
        ("mindspore.gather", lambda x, i: mindspore.gather(x, i[:, 0], 1), "gather"),
        ("mindspore.tensor_scatter_elements",
         lambda x, i: mindspore.tensor_scatter_elements(x, i, x, 1), "scatter_d"),
        ("onnx.gather_elements", lambda x, i: onnx.gather_elements(x, i, 1), "gather_d"),
        ("onnx.gather_nd", lambda x, i: onnx.gather_nd(x, i), "gather_nd"),
        ("onnx.scatter_elements", lambda x, i: onnx.scatter_elements(x, i, x, 1), "scatter_d"),
    ]  # fmt: skip


@pytest.mark.cell("transformations")
@pytest.mark.only("jax")
@pytest.mark.parametrize("k", range(len(_jit_calls())), ids=[c[0] for c in _jit_calls()])
@pytest.mark.usefixtures("backend")
def test_compat_under_jit_names_only_its_ways_out(k):
    """Under ``jax.jit`` (no ``checkify``) a front end without a ``bad_indices`` argument
    names ``checkify`` and the core function with a policy, never ``bad_indices=`` alone."""
    import jax
    import jax.numpy as jnp

    name, function, core = _jit_calls()[k]
    x, index = jnp.ones((2, 2), jnp.float32), jnp.zeros((2, 2), jnp.int32)
    with pytest.raises(ValueError, match="checkify") as info:
        jax.jit(function)(x, index)
    text = str(info.value)
    assert f"portagather.compat.{name}" in text, text
    assert f'call portagather.{core} with bad_indices="ignore"' in text, text
    assert "pass bad_indices=" not in text, text


@pytest.mark.cell("transformations")
@pytest.mark.only("jax")
@pytest.mark.usefixtures("backend")
def test_compat_tensorflow_under_jit_names_its_policy_argument():
    import jax
    import jax.numpy as jnp

    from portagather.compat import tensorflow

    def f(x: Any, i: Any) -> Any:
        return tensorflow.gather_nd(x, i, bad_indices_policy="ERROR")

    with pytest.raises(ValueError, match="checkify") as info:
        jax.jit(f)(jnp.ones((2, 2)), jnp.zeros((2, 2), jnp.int32))
    text = str(info.value)
    assert 'pass bad_indices_policy="IGNORE"' in text and "pass bad_indices=" not in text, text
