"""Turning the caller's arguments into arrays of one namespace, and checking them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import array_api_compat as aac
import numpy as np


def _namespace_name(x: Any) -> str:
    module = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax", "array_api_strict": "array_api_strict"}.get(module, module)


def _index_list_to_numpy(indices: Any, index_name: str) -> Any:
    try:
        values = np.asarray(indices)
    except ValueError:  # a ragged nested list
        msg = f"{index_name} must be an array or a rectangular nested list of ints; got {indices!r}"
        raise ValueError(msg) from None
    if values.size == 0 and values.dtype.kind == "f":
        # np.asarray([]) is float64; an empty index list means no indices, not floats.
        return values.astype(np.int64)
    leaves = list(_leaves(indices)) if values.dtype.kind in "fO" else []
    if leaves and all(type(v) is int for v in leaves):
        # Python ints past int64: NumPy makes uint64, float64 ([1, 2**64 - 1]) or object.
        if min(leaves) >= 0 and max(leaves) < 2**64:
            return np.asarray(indices, dtype=np.uint64)
        unheld = next(v for v in leaves if not -(2**63) <= v < 2**63)
        msg = (
            f"{index_name} holds {unheld}, which no integer dtype holds together with the "
            "other values (int64 holds [-2**63, 2**63), uint64 [0, 2**64)); no array has "
            "that many elements: pass valid indices, or an array"
        )
        raise ValueError(msg)
    return values


def _leaves(nested: Any) -> Any:
    if isinstance(nested, list | tuple):
        for item in nested:
            yield from _leaves(item)
    else:
        yield nested


#: The namespace of each array type seen, for the common call with two arrays of one type.
_NAMESPACES: dict[type, Any] = {}


def as_arrays(data: Any, indices: Any, data_name: str, index_name: str) -> tuple[Any, Any, Any]:
    """Return ``(xp, data, indices)`` as arrays of one array-API namespace.

    Python lists, tuples and scalars are converted with the namespace of the other argument,
    or with NumPy when neither is an array.
    """
    kind = type(data)
    if kind is type(indices):  # the common path: one dictionary lookup (never a masked array)
        xp = _NAMESPACES.get(kind)
        if xp is not None:
            return xp, data, indices
    if isinstance(indices, np.ma.MaskedArray):
        msg = (
            f"{index_name} must not be a NumPy masked array: a gather reads every value, the "
            f"masked ones too; pass {index_name}.filled(value) with a valid or a bad index "
            "for the masked entries"
        )
        raise TypeError(msg)
    data_is_array = aac.is_array_api_obj(data)
    index_is_array = aac.is_array_api_obj(indices)
    if data_is_array and index_is_array:
        if kind is type(indices):
            xp = aac.array_namespace(data)
            if not aac.is_array_api_strict_namespace(xp):  # its namespace follows its flags
                _NAMESPACES[kind] = xp
            return xp, data, indices
        data_ns = aac.array_namespace(data)
        index_ns = aac.array_namespace(indices)
        if data_ns is not index_ns:
            msg_0 = (
                f"{data_name} and {index_name} must be arrays of one namespace; got a "
                f"{_namespace_name(data)} array for {data_name} and a "
                f"{_namespace_name(indices)} array for {index_name}"
            )
            raise TypeError(msg_0)
        return data_ns, data, indices
    if not data_is_array and not index_is_array:
        data = np.asarray(data)
        return aac.array_namespace(data), data, _index_list_to_numpy(indices, index_name)
    if data_is_array:
        xp = aac.array_namespace(data)
        values = _index_list_to_numpy(indices, index_name)
        indices = _convert_list(xp, values, data, index_name)
        return xp, data, indices
    xp = aac.array_namespace(indices)
    return xp, xp.asarray(data, device=device_for_new(indices)), indices


def device_for_new(x: Any) -> Any:
    """Where a new array made to go with `x` (index values, a fill value, positions, a mask)
    is put: `x`'s device, or None (the backend's default placement) where `x` is laid out
    over several devices. Such a layout (a JAX ``NamedSharding`` over a mesh, which
    array-api-compat's ``device`` returns for it) fits `x`'s shape only: an array of
    another shape is refused it (a scalar, an axis the mesh does not divide), while one
    left on the default placement follows `x` into the computation."""
    device = aac.device(x)
    spread = getattr(device, "device_set", None)
    return None if spread is not None and len(spread) > 1 else device


def _convert_list(xp: Any, values: Any, data: Any, index_name: str) -> Any:
    """NumPy index values as an array of `xp` beside `data`, refusing values it cannot hold
    (JAX without ``jax_enable_x64`` makes int32 of every integer, which would wrap)."""
    try:
        indices = xp.asarray(values, device=device_for_new(data))
    except TypeError:
        if values.dtype != np.uint64:
            raise
        # PyTorch's asarray refuses some uint64 NumPy arrays: the same bits as int64, cast
        # back (the cast keeps the bits).
        signed = xp.asarray(values.view(np.int64), device=device_for_new(data))
        indices = xp.astype(signed, xp.uint64)
    if values.size and values.dtype.kind in "iu":
        info = xp.iinfo(indices.dtype)
        low, high = int(values.min()), int(values.max())
        if low < int(info.min) or high > int(info.max):
            unheld = low if low < int(info.min) else high
            msg = (
                f"{index_name} holds {unheld}, which this namespace's index dtype "
                f"({indices.dtype}) cannot hold; JAX holds 64-bit integers only with "
                "jax.config.update('jax_enable_x64', True)"
            )
            raise ValueError(msg)
    return indices


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
        msg = f"{index_name} must have an integer dtype; got {dtype}"
        raise TypeError(msg)


#: Whether a dtype of a namespace is an integer dtype, per (namespace id, dtype).
_INTEGRAL: dict[tuple[int, Any], bool] = {}


def static_shape(x: Any, name: str) -> tuple[int, ...]:
    """The shape as Python ints; every gather here is planned from static shapes."""
    shape = tuple(x.shape)
    if all(type(s) is int for s in shape):
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


def unknown_sizes(names: str, given: str) -> ValueError:
    """The error for Dask arrays `names` with unknown (NaN) sizes, as boolean indexing makes
    them; `given` says what was seen."""
    msg = (
        f"{names} must have known sizes; {given}: NaN sizes are unknown (as after boolean "
        "indexing on Dask); call .compute_chunk_sizes() on them first"
    )
    return ValueError(msg)


def fill_array(xp: Any, fill: Any, data: Any) -> Any:
    """The fill as a 0-d array of data's dtype, from what :func:`check_fill_value` returned
    for it; 0 stands for the dtype's zero ("" for strings)."""
    dtype, device = data.dtype, device_for_new(data)
    if isinstance(fill, Unread):
        return xp.astype(fill.array, dtype)
    value = fill
    if isinstance(value, int | float) and not isinstance(value, bool) and value == 0:
        return xp.zeros((), dtype=dtype, device=device)
    return xp.asarray(value, dtype=dtype, device=device)


def check_fill_value(xp: Any, fill_value: object, dtype: Any) -> Any:
    """The Python scalar `fill_value` stands for, checked against `dtype` (or an
    :class:`Unread` for a 0-d array whose value cannot be read now: traced, lazy, symbolic).

    One rule on every backend: only scalars (Python scalars or 0-d arrays); ``None`` and
    other non-numbers are a TypeError, and a value that the dtype cannot hold exactly (300
    into int8, 0.5 or NaN into an integer dtype, 2**24 + 1 or 1e300 into float32, "abc"
    into a 1-character string dtype) is a ValueError naming the value and the dtype. Floats
    round to the nearest value of a floating dtype.
    """
    if type(fill_value) is int and fill_value == 0:  # the default: the dtype's zero
        return 0
    value = _fill_scalar(fill_value)
    if value is _UNKNOWN:
        return Unread(fill_value)
    return _fitted(xp, value, fill_value, dtype)


@dataclass(frozen=True)
class Unread:
    """A 0-d array fill value whose value cannot be read now; it is cast when used."""

    array: Any


_UNKNOWN = object()


def _fill_scalar(fill_value: object) -> Any:
    """The Python scalar of `fill_value`, or ``_UNKNOWN`` for a 0-d array without values."""
    if isinstance(fill_value, bool | int | float | complex | str | np.generic):
        return fill_value.item() if isinstance(fill_value, np.generic) else fill_value
    if fill_value is None or not hasattr(fill_value, "shape"):
        msg = (
            "fill_value must be a scalar (a Python bool, int, float, complex or str, or a 0-d "
            f"array); got {fill_value!r}"
        )
        raise TypeError(msg)
    shape = tuple(fill_value.shape)
    if shape != ():
        msg = (
            "fill_value must be a scalar (a Python scalar or a 0-d array); got an array of "
            f"shape {shape}"
        )
        raise ValueError(msg)
    if aac.is_lazy_array(fill_value):  # reading it would compute or fail
        return _UNKNOWN
    try:
        return np.asarray(fill_value).item()
    except Exception:  # a tracer or a symbolic array: its value is not known here
        return _UNKNOWN


def dtype_name(dtype: Any) -> str:
    """A dtype's name as every backend would print it: ``int32``, not ``torch.int32``,
    ``array_api_strict.int32`` or ndonnx's ``Int32``."""
    return str(getattr(dtype, "name", dtype)).rsplit(".", 1)[-1].lower()


def _fitted(xp: Any, value: Any, fill_value: object, dtype: Any) -> Any:
    """`value` as the Python scalar to cast to `dtype`, or a ValueError if it does not fit."""

    def refuse() -> None:
        msg = (
            f"fill_value={fill_value!r} cannot be held exactly by the data's dtype "
            f"{dtype_name(dtype)}"
        )
        raise ValueError(msg)

    if isinstance(value, str):
        try:
            numeric = any(xp.isdtype(dtype, k) for k in _KINDS)
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
        kind = next(k for k in _KINDS if xp.isdtype(dtype, k))
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


_KINDS = ("bool", "signed integer", "unsigned integer", "real floating", "complex floating")
