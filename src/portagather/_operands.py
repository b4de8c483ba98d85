"""The operands of a call, argument by argument: the data, the index, a scatter's updates,
``fill_value`` and ``empty_value``.

Their kinds as given (arrays, or Python values, kept as NumPy arrays with exact ints until
every check has passed; Python index values that no integer of the data's device holds, by
the policy's one rule); their namespace, one for all; their static shapes and the plan of
the call; their dtypes, checked after their kinds and before their values (an integer index,
a reduction the data's dtype has, the scatters' and the segment reductions' one rule,
updates that cast safely); the scalars the result's dtype must hold exactly; and the arrays
of the namespace they become."""

from __future__ import annotations

import math
import operator
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import (
    DTYPE_KINDS,
    Unread,
    device_for_new,
    dtype_kind,
    dtype_name,
    numpy_dtype,
    unknown_sizes,
)
from ._errors import raise_first_bad
from ._indices import resolve_default, to_wide
from ._options import SEGMENT_SCATTERS
from ._plan import GatherPlan, Offsets, symbolic_size
from .engines import Engine

# -- the kinds ------------------------------------------------------------------------------


#: Python and NumPy scalars that are numbers (bool included: its dtype is checked later).
_NUMBERS = (bool, int, float, complex, np.bool_, np.number)


#: Text scalars, which a data array or updates may hold (NumPy's and ndonnx's strings).
_TEXT = (str, bytes, np.str_, np.bytes_)


_NESTED = (list, tuple, range)


_INDEX_KIND = "an array, an int or a rectangular nested list of ints"


_VALUES_KIND = "an array, a scalar or a rectangular nested list of scalars"


def shown(value: Any) -> str:
    """``repr(value)``, shortened where it is long (a large list)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:72] + " ... " + text[-3:]


def is_array(x: Any) -> bool:
    """An array of some namespace; a NumPy scalar is a Python value here."""
    return not isinstance(x, np.generic) and aac.is_array_api_obj(x)


def python_values(value: Any, name: str, *, text: bool) -> Any:
    """`value`, given where an array is expected, as a NumPy array, or a TypeError naming
    `name` and what it got (a ValueError for ragged nested lists).

    Accepted: a Python or NumPy number (and, where `text`, a string), rectangular nested
    lists and tuples of them, and objects NumPy converts to numbers (``__array__``). Python
    ints past int64 are kept as ints (an object array): whether a dtype holds them is a
    question about values, asked later.
    """
    kind = _VALUES_KIND if text else _INDEX_KIND
    if isinstance(value, np.generic) and not text:
        value = value.item()  # a NumPy integer index means the Python int it holds
    if isinstance(value, _NUMBERS) or (text and isinstance(value, _TEXT)):
        return np.asarray(value)
    if isinstance(value, _NESTED):
        try:
            array = np.asarray(value)
        except ValueError:
            odd = _odd_leaf(value, text)
            if not odd:
                scalars = "scalars" if text else "ints"
                msg = (
                    f"{name} must be an array or a rectangular nested list of {scalars}; "
                    f"got {shown(value)}"
                )
                raise ValueError(msg) from None
        except Exception:
            odd = _odd_leaf(value, text) or [value]
        else:
            odd = _odd_leaf(value, text) if array.dtype.kind in "OUS" else []
        if odd:
            msg = f"{name} must be {kind}; got {shown(value)}, which holds {shown(odd[0])}"
            raise TypeError(msg)
        if array.dtype.kind in "fO":
            return _exact(value, array)
        return array
    if not aac.is_array_api_obj(value) and hasattr(value, "__array__"):
        array = np.asarray(value)
        if array.dtype.kind in "biufc" or (text and array.dtype.kind in "US"):
            return array
    msg = f"{name} must be {kind}; got {shown(value)}"
    raise TypeError(msg)


def _leaves(nested: Any) -> Any:
    if isinstance(nested, _NESTED):
        for item in nested:
            yield from _leaves(item)
    else:
        yield nested


def _odd_leaf(nested: Any, text: bool) -> list[Any]:
    """``[leaf]``: the first leaf that is no scalar of the accepted kinds; ``[]`` if none."""
    for leaf in _leaves(nested):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in ("biufcUS" if text else "biufc"):
            continue
        if not (isinstance(leaf, _NUMBERS) or (text and isinstance(leaf, _TEXT))):
            return [leaf]
    return []


def _exact(nested: Any, array: Any) -> Any:
    """Integers that NumPy made floats or objects (past int64: ``[1, 2**64 - 1]`` is float64,
    ``[2**64]`` object) as an object array of the Python ints, exact; other numbers as they
    are (an object array of mixed floats and huge ints: as floats)."""
    leaves = list(_leaves(nested))
    if leaves and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in leaves):
        exact = np.empty(len(leaves), dtype=object)
        exact[:] = [int(v) for v in leaves]
        return exact.reshape(array.shape)
    if array.dtype == object:
        return array.astype(complex if any(isinstance(v, complex) for v in leaves) else float)
    return array


# -- index values ---------------------------------------------------------------------------


def index_array(
    xp: Any, engine: Engine, values: Any, data: Any, policy: str,
    plan: GatherPlan | Offsets | None = None,
) -> Any:  # fmt: skip
    """Index values given as Python values (a NumPy array of checked integers; an object
    array of the Python ints past int64) as an array of `xp` beside `data`, in the widest
    signed integer dtype of data's device: the one converter of every argument that holds
    index values (an index, segment ids, ``segment_csr``'s offsets, a front end's index).

    A value that dtype cannot hold is out of range for every array of that device (no axis
    is longer than its widest integer), so it is bad under every policy, and the policy
    decides what it becomes, by one rule:

    - ``"error"`` raises the IndexError of the first bad value of `plan` now, naming the
      value as written (it is known, even under a trace or on Dask); TensorFlow's default is
      ``"error"`` where the device's values are checked, ``"ignore"`` elsewhere;
    - ``"wrap"`` takes its true remainder by the axis's length;
    - ``"clip"`` clips it into the dtype: to the edge on its side, where the clamp takes it
      to the same edge of the axis;
    - ``"ignore"`` and ``"unchecked"`` put it past the end (the dtype's largest value),
      where ``"ignore"`` drops it; so do ``"error"`` and ``"wrap"`` where `plan` reads
      nothing or addresses an empty axis (the pipeline answers those without a value).

    `plan` is the call's :class:`~._plan.GatherPlan`, or the :class:`~._plan.Offsets` report
    of CSR offsets (bad: outside ``[0, n]`` or smaller than the one before); None under
    ``"clip"``, ``"ignore"`` and ``"unchecked"``, which read no plan. A front end that applies
    its own index rule next passes ``"clip"``: each value clipped into the dtype keeps its
    sign and stays out of range, so that its rule treats it alike on every device.
    """
    held = numpy_dtype(engine.wide_index_dtype(data))
    device = device_for_new(data)
    if values.size and values.dtype != held:
        info = np.iinfo(held)
        if int(values.min()) < int(info.min) or int(values.max()) > int(info.max):
            values = _held(xp, engine, values, held, device, policy, plan)
    return xp.asarray(values.astype(held, copy=False), device=device)


def _held(
    xp: Any, engine: Engine, values: Any, held: Any, device: Any, policy: str,
    plan: GatherPlan | Offsets | None,
) -> Any:  # fmt: skip
    """The values of :func:`index_array`, some of which dtype `held` cannot hold, by its
    rule: the IndexError under ``"error"``, else values `held` holds that the policy treats
    alike."""
    info = np.iinfo(held)
    exact = np.asarray(values, dtype=object)  # exact Python ints from here on
    if policy == "default":  # TensorFlow's: "error" where values are checked, else "ignore"
        probe = xp.asarray(np.zeros((), dtype=held), device=device)
        policy = resolve_default(policy, engine.index_access(probe))
    if isinstance(plan, GatherPlan) and (plan.reads_nothing or 0 in plan.axis_sizes):
        plan = None  # the pipeline's own answer, which reads no value
    if policy == "error" and plan is not None:
        report = plan if isinstance(plan, Offsets) else plan.report
        raise_first_bad(np, _bad(exact, plan), exact, report)
    low, high = int(info.min), int(info.max)
    if policy == "clip":
        return np.clip(exact, low, high).astype(held)
    big = np.asarray((exact < low) | (exact > high), dtype=bool)
    fitted = np.where(big, high, exact)
    if policy == "wrap" and isinstance(plan, GatherPlan):
        sizes = plan.axis_sizes
        if plan.vector:
            for j, n in enumerate(sizes):
                fitted[..., j] = np.where(big[..., j], exact[..., j] % n, fitted[..., j])
        else:
            fitted = np.where(big, exact % sizes[0], fitted)
    return fitted.astype(held)


def _bad(values: Any, plan: GatherPlan | Offsets) -> Any:
    """Where the index values (Python ints, as an object array) are bad: per index vector of
    a gather's plan, or per offset (outside ``[0, n]``, or smaller than the one before)."""
    if isinstance(plan, Offsets):
        n = plan.data_shape[plan.axis]
        bad = np.asarray((values < 0) | (values > n), dtype=bool)
        if values.shape[-1] > 1:
            bad[..., 1:] |= np.asarray(values[..., 1:] < values[..., :-1], dtype=bool)
        return bad
    parts = [values[..., j] for j in range(values.shape[-1])] if plan.vector else [values]
    bad = np.zeros(parts[0].shape, dtype=bool)
    for part, n in zip(parts, plan.axis_sizes, strict=True):
        low = -n if plan.allow_negative else 0
        bad |= np.asarray((part < low) | (part >= n), dtype=bool)
    return bad


# -- values a dtype holds exactly -----------------------------------------------------------


def check_exact_values(given: Any, dtype: Any, name: str, data_name: str, written: object) -> None:
    """Python values (`written`, as the NumPy array `given`) must be held exactly by
    `dtype`: no float into an integer dtype, no complex into a real one, no integer outside
    the dtype's range, no string into a number (backends would truncate, wrap or refuse them,
    each differently)."""
    target = dtype_name(dtype)
    try:
        wanted = np.dtype(target)
    except TypeError:
        return  # a dtype outside the standard's: the namespace decides
    if given.size == 0:
        return  # no values, whatever dtype NumPy guessed for them
    kind = given.dtype.kind  # "O": Python ints past int64
    refused = (
        (kind == "f" and wanted.kind in "biu")
        or (kind == "c" and wanted.kind != "c")
        or (kind in "iuO" and wanted.kind == "b")
        or (kind in "US" and wanted.kind in "biufc")
    )
    if kind in "iuO" and wanted.kind in "iu":
        info = np.iinfo(wanted)
        refused = int(given.min()) < int(info.min) or int(given.max()) > int(info.max)
    if refused:
        msg = (
            f"{name} must be values that {data_name}.dtype = {target} holds exactly, or an "
            f"array; got {shown(written)}"
        )
        raise TypeError(msg)


def check_python_values(values: Any, dtype: Any, name: str, data_name: str) -> None:
    """Python `values` (a scalar or nested lists) must be held exactly by `dtype`."""
    check_exact_values(python_values(values, name, text=True), dtype, name, data_name, values)


# -- fill_value -----------------------------------------------------------------------------
#
# A gather's fill_value, in three steps that gather_call takes where the call's order puts
# them: its kind among the kinds, its shape after the plan, its value after the dtypes; each
# checked once (the default, the int 0, by none of them: it is the dtype's zero).


_SCALARS = (bool, int, float, complex, str, np.generic)


def fill_value_kind(fill_value: object) -> None:
    """A TypeError unless `fill_value` is a Python or NumPy scalar or has a shape."""
    if isinstance(fill_value, _SCALARS):
        return
    if fill_value is None or not hasattr(fill_value, "shape"):
        msg = (
            "fill_value must be a scalar (a Python bool, int, float, complex or str, or a 0-d "
            f"array); got {fill_value!r}"
        )
        raise TypeError(msg)


def fill_value_shape(fill_value: object) -> None:
    """A ValueError for an array `fill_value` that is not 0-d (its kind checked already)."""
    scalar = isinstance(fill_value, _SCALARS)
    shape = () if scalar else tuple(fill_value.shape)  # type: ignore[attr-defined]
    if shape != ():
        msg = (
            "fill_value must be a scalar (a Python scalar or a 0-d array); got an array of "
            f"shape {shape}"
        )
        raise ValueError(msg)


def check_fill_value(xp: Any, fill_value: object, dtype: Any) -> Any:
    """The Python scalar `fill_value` (its kind and shape checked already) stands for,
    checked against `dtype`, or an :class:`Unread` for a 0-d array whose value cannot be
    read now (traced, lazy, symbolic).

    One rule on every backend: a value that the dtype cannot hold exactly (300 into int8,
    0.5 or NaN into an integer dtype, 2**24 + 1 or 1e300 into float32, "abc" into a
    1-character string dtype) is a ValueError naming the value and the dtype. Floats round
    to the nearest value of a floating dtype.
    """
    if isinstance(fill_value, _SCALARS):
        value = fill_value.item() if isinstance(fill_value, np.generic) else fill_value
    elif aac.is_lazy_array(fill_value):  # reading it would compute or fail
        return Unread(fill_value)
    else:
        try:
            value = np.asarray(fill_value).item()
        except Exception:  # a tracer or a symbolic array: its value is not known here
            return Unread(fill_value)
    return _fitted(xp, value, fill_value, dtype)


# -- empty_value ----------------------------------------------------------------------------


def empty_value_kind(empty_value: object) -> None:
    """A TypeError unless `empty_value` (the value of an empty segment) is None or a Python
    or NumPy real scalar; checked among the kinds, before the arrays are touched."""
    if empty_value is None or isinstance(empty_value, _REAL_SCALARS):
        return
    msg = (
        "empty_value must be None or a real scalar (a Python or NumPy bool, int or float); "
        f"got {shown(empty_value)}"
    )
    raise TypeError(msg)


_REAL_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def check_empty_value(xp: Any, empty_value: object, dtype: Any) -> Any:
    """The Python scalar that `empty_value` (of :func:`empty_value_kind`) stands for,
    checked against the result's `dtype` as ``fill_value`` is (:func:`check_fill_value`)."""
    if type(empty_value) is int and empty_value == 0:  # (TensorFlow's sorted max and min)
        return 0  # every dtype a segment reduction returns (numbers, bool) holds it exactly
    empty_value_kind(empty_value)
    value = empty_value.item() if isinstance(empty_value, np.generic) else empty_value
    return _fitted(xp, value, empty_value, dtype, "empty_value", "result")


# -- both: a Python scalar the dtype holds exactly ------------------------------------------


def _fitted(
    xp: Any, value: Any, fill_value: object, dtype: Any, name: str = "fill_value",
    whose: str = "data",
) -> Any:  # fmt: skip
    """`value` as the Python scalar to cast to `dtype`, or a ValueError if it does not fit
    (naming the argument `name` and `whose` dtype it is)."""

    def refuse() -> None:
        msg = (
            f"{name}={fill_value!r} cannot be held exactly by the {whose}'s dtype "
            f"{dtype_name(dtype)}"
        )
        raise ValueError(msg)

    if isinstance(value, str):
        try:
            numeric = any(xp.isdtype(dtype, k) for k in DTYPE_KINDS)
        except (TypeError, ValueError):  # a string dtype, which the standard does not name
            numeric = False
        if numeric:
            refuse()
        try:
            text = np.dtype(dtype)
        except TypeError:  # another library's string dtype: it keeps what it can
            return value
        if text.kind == "U" and len(value) > text.itemsize // 4:
            refuse()
        return value
    try:
        kind = next(k for k in DTYPE_KINDS if xp.isdtype(dtype, k))
    except (StopIteration, TypeError, ValueError):
        return value  # a dtype the standard does not name (strings of a backend)
    if kind == "complex floating":
        return value
    if isinstance(value, complex):
        if value.imag != 0:
            refuse()
        value = value.real
    if kind == "bool":
        if value not in (0, 1) or (isinstance(value, float) and not math.isfinite(value)):
            refuse()
        return value
    if kind == "real floating":
        info = xp.finfo(dtype)
        if isinstance(value, float):
            if math.isfinite(value) and abs(value) > float(info.max):
                refuse()
        elif not _int_fits_float(int(value), float(info.eps), float(info.max)):
            refuse()
        return value
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        refuse()
    info = xp.iinfo(dtype)
    if not int(info.min) <= int(value) <= int(info.max):
        refuse()
    return int(value)


def _int_fits_float(value: int, eps: float, largest: float) -> bool:
    """Whether a floating dtype with machine epsilon `eps` holds the int `value` exactly."""
    if abs(value) > largest:
        return False
    significand = abs(value)
    while significand and significand % 2 == 0:
        significand //= 2
    return significand.bit_length() <= round(-math.log2(eps)) + 1


# -- num_segments ---------------------------------------------------------------------------
#
# The bound of the segment ids: its kind, whether an array of the data's device holds it,
# its value read from the ids where it is not given; all of its checks.


def num_segments_argument(value: object) -> int | None:
    """`num_segments` as a Python int >= 0 (a symbolic size as it is), or None (read from the
    ids)."""
    if value is None:
        return None
    if symbolic_size(value):  # a dynamic size under torch.export: kept, as the shapes are
        return value  # type: ignore[return-value]
    if not isinstance(value, bool):
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            number = None
        if number is not None:
            if number < 0:
                msg = f"num_segments must be an int >= 0; got {number}"
                raise ValueError(msg)
            return int(number)
    msg = (
        "num_segments must be an int >= 0 (known when the function is called: under jax.jit, "
        f"a Python int, not a traced value), or None; got {value!r}"
    )
    raise TypeError(msg)


def check_num_segments(
    count: int, xp: Any, engine: Engine, data: Any, id_rank: int, name: str = "num_segments"
) -> None:
    """A ValueError for a `num_segments` (given, as the Python int `count`) that no array of
    the data's device can hold: more than the widest integer of that device (int64; int32 on
    JAX without x64), or more result rows than ``2**63 - 1`` bytes hold (NumPy's and
    PyTorch's limit on an array's size), counting each row at least 8 bytes (the count of
    the mean, the sorts' positions)."""
    if symbolic_size(count):  # torch.export's dynamic size: an array of it exists already
        return
    info = xp.iinfo(engine.wide_index_dtype(data))
    largest = int(info.max)
    inner = tuple(data.shape[id_rank:])
    row = max(math.prod(inner) * _itemsize(data.dtype), 8)
    by_bytes = (2**63 - 1) // row
    if count <= min(largest, by_bytes):
        return
    if largest <= by_bytes:
        why = f"the largest {dtype_name(info.dtype)}, the widest integer of the data's device"
    else:
        why = (
            f"the most segments that 2**63 - 1 bytes hold at {row} bytes each: rows of "
            f"data.shape[{id_rank}:] = {inner} in {dtype_name(data.dtype)}, 8 bytes at least"
        )
    msg = f"{name} must be in [0, {min(largest, by_bytes)}] ({why}); got {count}"
    raise ValueError(msg)


def _itemsize(dtype: Any) -> int:
    """The bytes of one element of `dtype` (8 where no library says)."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    try:
        return int(np.dtype(dtype_name(dtype)).itemsize)
    except TypeError:
        return 8


def read_num_segments(
    xp: Any, engine: Engine, ids: Any, access: Any, data: Any, checked: int | None = None
) -> int:  # fmt: skip
    """`num_segments=None`: max(segment_ids) + 1, read now (0 for no ids), and checked as a
    given one is (:func:`check_num_segments`), since an array of that many rows beside
    `data` must exist too; but not where it is `checked`, the count a route of this call's
    signature (so of data of this shape, dtype and device) was made for."""
    if access != "now":
        msg = (
            "num_segments=None reads max(segment_ids) + 1, which cannot be read when the "
            "function is called here (under jax.jit or another JAX transformation, on Dask, on "
            "symbolic ndonnx arrays, under torch.func.vmap); pass num_segments=N, a Python int"
        )
        raise ValueError(msg)
    if not math.prod(ids.shape):
        return 0
    wide = to_wide(xp, ids, engine.wide_index_dtype(ids), None, False)
    count = max(0, engine.value_range(wide)[1] + 1)
    if count != checked:
        read = "num_segments=None, read as max(segment_ids) + 1,"
        check_num_segments(count, xp, engine, data, len(ids.shape), read)
    return count


# -- the dtypes -----------------------------------------------------------------------------


#: Whether a dtype of a namespace is an integer dtype, per (namespace id, dtype).
#: Why: every call without a route checks its index's dtype, and ``isdtype`` (through
#: array_api_compat) costs several lookups (benchmarks/RESULTS.md, "The memo tables of the
#: checks"). Bound: the dtypes of the namespaces a program uses, a few dozen; a namespace
#: is a module, alive as long as the program, so its id is never another's.
_INTEGRAL: dict[tuple[int, Any], bool] = {}


def check_index_dtype(xp: Any, indices: Any, index_name: str) -> None:
    """Reject boolean, floating and other non-integer index arrays."""
    dtype = indices.dtype
    key = (id(xp), dtype)
    is_integer = _INTEGRAL.get(key)
    if is_integer is None:
        try:
            is_integer = bool(xp.isdtype(dtype, "integral"))
        except (TypeError, ValueError):  # e.g. NumPy strings, which isdtype does not know
            is_integer = False
        _INTEGRAL[key] = is_integer
    if not is_integer:
        shown = dtype if isinstance(dtype, np.dtype) else dtype_name(dtype)  # NumPy's: "<U1"
        msg = f"{index_name} must have an integer dtype; got {shown}"
        raise TypeError(msg)


#: What each reduction is on bool: OR (max) or AND (min).
_BOOL_REDUCTIONS = {"add": "max", "multiply": "min", "min": "min", "max": "max"}


def reduction_for(xp: Any, reduce: str, dtype: Any) -> str | None:
    """The reduction the engines run for `reduce` (``"add"``, ``"multiply"``, ``"min"``,
    ``"max"``) on `dtype`, or None where the dtype has none: the one dtype rule of the
    scatters and the segment reductions (docs/contract.md, S6 and R3).

    Numbers (NumPy's ``bfloat16`` included: :func:`~._arrays.dtype_kind`) and bool; on bool
    ``"add"`` and ``"max"`` are a logical OR and ``"multiply"`` and ``"min"`` a logical AND
    (False < True), as TensorFlow and PyTorch combine bools: the engines run ``"max"`` and
    ``"min"`` for them. ``"min"`` and ``"max"`` need an order, so not complex.
    """
    kind = dtype_kind(xp, dtype)
    if kind == "bool":
        return _BOOL_REDUCTIONS[reduce]
    if kind is None or (kind == "complex floating" and reduce in ("min", "max")):
        return None
    return reduce


def reducible_kinds(reduce: str, bools: bool = True) -> str:
    """What :func:`reduction_for` takes for `reduce`, in words, for an error message."""
    kind = "a real numeric" if reduce in ("min", "max") else "a numeric"
    return f"{kind} or bool" if bools else kind


def check_reduce_dtype(xp: Any, reduce: str, dtype: Any, data_name: str) -> str:
    """The reduction the engines run for `reduce` on `dtype` (:func:`reduction_for`), or a
    TypeError. ``"update"`` is defined for every dtype (NumPy's strings too)."""
    if reduce == "update":
        return reduce
    found = reduction_for(xp, reduce, dtype)
    if found is not None:
        return found
    kinds = reducible_kinds(reduce)
    msg = f'reduce="{reduce}" needs {data_name} of {kinds} dtype; got {dtype_name(dtype)}'
    raise TypeError(msg)


def check_segment_dtype(
    xp: Any, reduce: str, dtype: Any, function: str, floating: bool = False
) -> None:
    """The scatters' dtype rule (:func:`reduction_for`) for the reduction's
    scatter: numbers for every reduction (NumPy's ``bfloat16`` too), but no complex numbers
    for ``max`` and ``min``; bool for ``max`` and ``min`` (any, all), not for the sum, the
    mean and the product, whose results are no bools. With `floating`, no integers either
    (TensorFlow's ``unsorted_segment_sqrt_n``, which divides by a square root); with
    `floating` and ``max`` or ``min``, real floating dtypes only (the toolkit's softmax,
    logsumexp, var and std, which take each segment's maximum)."""
    bools = reduce in ("max", "min")
    found = reduction_for(xp, SEGMENT_SCATTERS[reduce], dtype)
    kind = dtype_kind(xp, dtype)
    if floating and bools and kind != "real floating":
        kinds = "a real floating"
    elif found is None or (kind == "bool" and not bools):
        kinds = reducible_kinds(SEGMENT_SCATTERS[reduce], bools)
    elif floating and kind in ("signed integer", "unsigned integer"):
        kinds = "a floating"
    else:
        return
    msg = f"{function} needs data of {kinds} dtype; got {dtype_name(dtype)}"
    raise TypeError(msg)


def casts_safely(xp: Any, source: Any, target: Any) -> bool:
    """NumPy's "safe" casting between the standard's dtypes, by name (backends differ:
    ndonnx lets float32 cast to int32); the namespace's ``can_cast`` for any other dtype."""
    names = dtype_name(source), dtype_name(target)
    try:
        return bool(np.can_cast(np.dtype(names[0]), np.dtype(names[1]), casting="safe"))
    except TypeError:
        pass
    try:
        return bool(xp.can_cast(source, target))
    except TypeError:
        return False


# -- the data and the index -----------------------------------------------------------------


#: The namespace of each array type seen, for the common call with two arrays of one type.
#: Why: every call without a route (JAX, Dask, ndonnx; a NumPy or PyTorch call with an
#: option that keys nothing) finds its namespace, and ``array_namespace`` asks every library
#: it knows where one lookup answers (benchmarks/RESULTS.md, "The memo tables of the
#: checks"). Bound: one entry per array type a program passes, a handful; never
#: array-api-strict's, whose namespace follows its flags.
_NAMESPACES: dict[type, Any] = {}


def namespace_of(x: Any) -> Any:
    """The namespace of the array `x` (``array_namespace``), kept per array type in
    :data:`_NAMESPACES` (the checks' and the front ends', for their steps on the core's
    result), but array-api-strict's, whose namespace follows its flags."""
    kind = type(x)
    xp = _NAMESPACES.get(kind)
    if xp is None:
        xp = aac.array_namespace(x)
        if not aac.is_array_api_strict_namespace(xp):  # its namespace follows its flags
            _NAMESPACES[kind] = xp
    return xp


def namespace_name(x: Any) -> str:
    module = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax", "array_api_strict": "array_api_strict"}.get(module, module)


class _Pair:
    """The data and the index of one call, as arrays of one namespace or as checked Python
    values (kept as NumPy arrays: their shapes and dtypes are checked like an array's, and
    they become arrays of the namespace once every check has passed)."""

    __slots__ = ("data", "data_given", "data_name", "from_values", "index_name", "indices", "xp")

    def __init__(self, data: Any, indices: Any, data_name: str, index_name: str) -> None:
        self.data_name, self.index_name = data_name, index_name
        self.data, self.indices, self.data_given = data, indices, data
        #: Which of the two are Python values: the data, the index.
        self.from_values = (False, False)
        kind = type(data)
        if kind is type(indices):  # the common path: one dictionary lookup
            xp = _NAMESPACES.get(kind)
            if xp is not None:
                self.xp = xp
                return
        self.xp = self._sort(data, indices)

    def _sort(self, data: Any, indices: Any) -> Any:
        data_name, index_name = self.data_name, self.index_name
        if isinstance(indices, np.ma.MaskedArray):
            msg = (
                f"{index_name} must not be a NumPy masked array: a gather reads every value, "
                f"the masked ones too; pass {index_name}.filled(value) with a valid or a bad "
                "index for the masked entries"
            )
            raise TypeError(msg)
        data_is_array, index_is_array = is_array(data), is_array(indices)
        if data_is_array and index_is_array:
            if type(data) is type(indices):
                return namespace_of(data)
            data_ns, index_ns = aac.array_namespace(data), aac.array_namespace(indices)
            if data_ns is not index_ns:
                msg = (
                    f"{data_name} and {index_name} must be arrays of one namespace; got a "
                    f"{namespace_name(data)} array for {data_name} and a "
                    f"{namespace_name(indices)} array for {index_name}"
                )
                raise TypeError(msg)
            return data_ns
        if not data_is_array:
            self.data = python_values(data, data_name, text=True)
        if not index_is_array:
            values = python_values(indices, index_name, text=False)
            if values.size == 0 and values.dtype.kind == "f":
                values = values.astype(np.int64)  # [] is float64 in NumPy: no indices, not floats
            self.indices = values
        self.from_values = (not data_is_array, not index_is_array)
        if data_is_array:
            return aac.array_namespace(data)
        if index_is_array:
            return aac.array_namespace(indices)
        return aac.array_namespace(self.data)  # NumPy's, for two sets of Python values

    # -- 4. dtypes

    def check_index_dtype(self) -> None:
        if not self.from_values[1]:
            check_index_dtype(self.xp, self.indices, self.index_name)
        elif self.indices.dtype != object:  # object: Python ints past every NumPy integer
            check_index_dtype(np, self.indices, self.index_name)

    # -- 5. values, and the arrays

    def data_array(self) -> Any:
        """The data as an array of the namespace, kept as :attr:`data` (Python values: on
        the index's device, in the namespace's own default dtypes, as its ``asarray`` makes
        them; NumPy's where neither argument is an array)."""
        if self.from_values[0]:
            if self.data.dtype == object:  # Python ints past every NumPy integer
                msg = f"{self.data_name} holds integers that no integer dtype holds"
                raise ValueError(msg + f"; got {shown(self.data_given)}")
            # Values beside an index array become arrays of its namespace, unless the index
            # is of the kind they are already (NumPy's arrays: :func:`python_values`' own).
            if not self.from_values[1] and not isinstance(self.indices, type(self.data)):
                device = device_for_new(self.indices)
                try:
                    self.data = self.xp.asarray(self.data_given, device=device)
                except (TypeError, ValueError, OverflowError) as err:
                    msg = (
                        f"{self.data_name} must be an array, or values that the "
                        f"{namespace_name(self.indices)} namespace holds; got "
                        f"{shown(self.data_given)} ({err})"
                    )
                    raise TypeError(msg) from None
            self.from_values = (False, self.from_values[1])
        return self.data

    def index_array(
        self, data: Any, engine: Engine, plan: GatherPlan | Offsets | None, policy: str
    ) -> Any:  # fmt: skip
        """The index as an array of the namespace beside `data`: Python values by the one
        rule of :func:`~._operands.index_array` (`plan` and `policy` deciding the values that
        the widest integer of data's device cannot hold)."""
        if not self.from_values[1]:
            return self.indices
        return index_array(self.xp, engine, self.indices, data, policy, plan)


# -- a scatter's updates --------------------------------------------------------------------


class Updates:
    """The updates of a scatter: an array of the data's namespace, or checked Python values."""

    __slots__ = ("data_name", "given", "name", "values", "xp")

    def __init__(self, xp: Any, data: Any, data_name: str, updates: Any, name: str) -> None:
        self.xp, self.name, self.data_name = xp, name, data_name
        self.given = updates
        if is_array(updates):
            # `data` as the caller gave it: data given as Python values takes the index's
            # library, whose arrays the updates must then be (not NumPy's, which holds them).
            if type(updates) is not type(data) and aac.array_namespace(updates) is not xp:
                library = (
                    f"{type(data).__module__}.{type(data).__name__}"
                    if is_array(data)
                    else f"the index's library, {getattr(xp, '__name__', xp)}"
                )
                msg = (
                    f"{name} must be an array of the same library as {data_name}; got "
                    f"{type(updates).__module__}.{type(updates).__name__} and {library}"
                )
                raise TypeError(msg)
            self.values: Any = None
        else:
            self.values = python_values(updates, name, text=True)

    @property
    def shape(self) -> tuple[int, ...]:
        source = self.given if self.values is None else self.values
        return tuple(source.shape)

    def check_shape(self, plan: GatherPlan, mode: str) -> None:
        """A ValueError unless the updates fit the gather's result shape as `mode` (an
        :class:`Operation`'s ``updates_fit``) says."""
        given, shape = self.shape, plan.out_shape
        if mode == "block":
            fits = len(given) == len(shape) and all(
                g >= s for g, s in zip(given, shape, strict=True)
            )
            wanted = f"at least {shape} on every axis (index.shape)"
        elif mode in ("broadcast", "slices, broadcast"):
            fits = len(given) <= len(shape) and all(
                g in (1, s) for g, s in zip(given[::-1], shape[::-1], strict=False)
            )
            wanted = f"broadcastable to {shape}"
        else:
            fits = given == shape
            wanted = f"{shape}"
        if mode.startswith("slices"):  # PyTorch's index_add and index_reduce say it so
            index, axis = plan.report.index_name, plan.axis
            wanted = (
                f"{self.data_name}.shape with len({index}) = {shape[axis]} along dim {axis}, "
                f"{shape}"
            )
        if not fits:
            msg = f"{self.name}.shape must be {wanted}; got {given}"
            raise ValueError(msg)

    def check_dtype(self, dtype: Any) -> None:
        if self.values is not None:
            return
        xp, updates = self.xp, self.given
        if updates.dtype != dtype and not casts_safely(xp, updates.dtype, dtype):
            msg = (
                f"{self.name} must have a dtype that casts safely to {self.data_name}.dtype = "
                f"{dtype_name(dtype)}; got {dtype_name(updates.dtype)}"
            )
            raise TypeError(msg)

    def array(self, data: Any, shape: tuple[int, ...], mode: str) -> Any:
        """The updates as an array of data's namespace and dtype, of the gather's result
        `shape` (Python values checked to be held exactly by data's dtype first)."""
        xp = self.xp
        if self.values is None:
            updates = self.given
        else:
            check_exact_values(self.values, data.dtype, self.name, self.data_name, self.given)
            values = self.values
            if values.dtype == object:  # huge ints into a floating dtype: as Python floats
                values = values.astype(float)
            try:
                updates = xp.asarray(values, dtype=data.dtype, device=device_for_new(data))
            except (TypeError, ValueError, OverflowError) as err:
                wanted = dtype_name(data.dtype)
                msg = (
                    f"{self.name} must be values that {self.data_name}.dtype = {wanted} holds "
                    f"exactly, or an array; got {shown(self.given)} ({err})"
                )
                raise TypeError(msg) from None
        return fitted_updates(xp, updates, data.dtype, shape, mode)


def fitted_updates(xp: Any, updates: Any, dtype: Any, shape: tuple[int, ...], mode: str) -> Any:
    """The array `updates` (checked already) in `dtype`, of the gather's result `shape`, as
    `mode` (an :class:`Operation`'s ``updates_fit``) says they fit it."""
    if updates.dtype != dtype:
        updates = xp.astype(updates, dtype)
    if tuple(updates.shape) != shape:
        if mode == "block":  # its leading block, as torch.scatter reads src
            updates = updates[tuple(slice(0, s) for s in shape)]
        else:
            updates = xp.broadcast_to(updates, shape)
    return updates


# -- shapes ---------------------------------------------------------------------------------


#: Plans by call signature (the planner's name, both shapes as the arrays give them, the
#: integer arguments) where those shapes are static: one dictionary lookup for a call in a
#: loop, and the one cache of the gathers' and scatters' plans (the planners keep none; a
#: segment reduction's plan is kept in its route). Names, not the functions, as
#: keys: torch.compile traces a dictionary of strings.
#: Why: a call without a route (JAX, Dask, ndonnx, Python values) plans on every call, and
#: a plan (its checks, the shape arithmetic, the report) costs many lookups
#: (benchmarks/RESULTS.md, "The memo tables of the checks"). Bound: :data:`_MAX_PLANS`,
#: cleared when full, so that a program whose shapes grow without end holds no more.
_PLANS: dict[tuple[Any, ...], GatherPlan] = {}
_MAX_PLANS = 512


def plan_for(
    planner: Any,
    data: Any,
    indices: Any,
    data_name: str,
    index_name: str,
    arguments: tuple[Any, ...],
) -> GatherPlan:
    """The plan of the call, from the shapes (checked static) and the integer arguments."""
    key: tuple[Any, ...] = (planner.__name__, data.shape, indices.shape, arguments)
    try:
        plan = _PLANS.get(key)
    except TypeError:  # a size that cannot be hashed (symbolic)
        plan, key = None, ()
    if plan is None:
        shapes = static_shape(data, data_name), static_shape(indices, index_name)
        plan = planner(*shapes, *arguments)
        if key and shapes == key[1:3]:  # kept where the shapes were Python ints as given
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


def static_shape(x: Any, name: str) -> tuple[int, ...]:
    """The shape as Python ints, where a symbolic size (``torch.export``'s dynamic
    dimension) stays one; every gather here is planned from these shapes."""
    shape = tuple(x.shape)
    if all(type(s) is int or symbolic_size(s) for s in shape):
        return shape
    if any(s is None for s in shape):
        msg = (
            f"{name} must have a static shape (every size known when the call is made); "
            f"got shape {shape}"
        )
        raise ValueError(msg)
    if any(s != s for s in shape):  # NaN: Dask's unknown sizes, after boolean indexing
        raise unknown_sizes(name, f"got shape {shape}")
    return tuple(int(s) for s in shape)


def check_sorted_vector(xp: Any, engine: Engine, ids: Any, function: str) -> None:
    """TensorFlow's sorted ``segment_*`` (`function`): a ValueError unless `ids` is 1-d and,
    where its values can be read now, sorted (non-decreasing), naming the first pair that
    falls. Run first among the shapes: the sorted form has always checked both before the
    others. Ids whose values cannot be read now (Dask, a JAX trace) are not checked for
    order."""
    if ids.ndim != 1:
        msg = f"segment_ids must be 1-d (a vector) for {function}; got shape {tuple(ids.shape)}"
        raise ValueError(msg)
    if engine.index_access(ids) != "now" or ids.shape[0] <= 1:
        return
    falls = ids[1:] < ids[:-1]
    if engine.value_range(xp.astype(falls, xp.int8))[1]:
        (where,) = xp.nonzero(falls)
        k = int(where[0]) + 1
        msg = (
            f"segment_ids must be sorted (non-decreasing) for {function}; got "
            f"segment_ids[{k}] = {engine.read_int(ids[k])} after segment_ids[{k - 1}] = "
            f"{engine.read_int(ids[k - 1])} (unsorted_segment_{function[8:]} takes any order)"
        )
        raise ValueError(msg)
