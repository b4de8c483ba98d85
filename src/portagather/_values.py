"""The values a caller writes in Python: where an array is expected (the data, an index,
updates, offsets), the kinds accepted, as NumPy arrays with exact ints; Python index values
that no integer of the data's device holds; whether a dtype holds Python values exactly; and
the scalar arguments that the result's dtype must hold, ``fill_value`` (a gather's) and
``empty_value`` (a segment reduction's), each by its kind, its shape and its value."""

from __future__ import annotations

import math
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import DTYPE_KINDS, Unread, device_for_new, dtype_name, numpy_dtype
from ._errors import raise_first_bad
from ._indices import resolve_default
from ._plan import GatherPlan, Offsets
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
