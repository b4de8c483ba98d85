"""The scalar arguments that the result's dtype must hold: ``fill_value`` (a gather's) and
``empty_value`` (a segment reduction's), each by its kind, its shape and its value."""

from __future__ import annotations

import math
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import DTYPE_KINDS, Unread, dtype_name
from ._values import shown

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
