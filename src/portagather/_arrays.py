"""Turning the caller's arguments into arrays of one namespace, and checking them."""

from __future__ import annotations

import array_api_compat as aac
import numpy as np


def _namespace_name(x) -> str:
    module = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax", "array_api_strict": "array_api_strict"}.get(module, module)


def _index_list_to_numpy(indices):
    values = np.asarray(indices)
    if values.size == 0 and values.dtype.kind == "f":
        # np.asarray([]) is float64; an empty index list means no indices, not floats.
        values = values.astype(np.int64)
    return values


def as_arrays(data, indices, data_name: str, index_name: str):
    """Return ``(xp, data, indices)`` as arrays of one array-API namespace.

    Python lists, tuples and scalars are converted with the namespace of the other argument,
    or with NumPy when neither is an array.
    """
    data_is_array = aac.is_array_api_obj(data)
    index_is_array = aac.is_array_api_obj(indices)
    if data_is_array and index_is_array:
        if type(data) is type(indices):  # one lookup on the common path
            return aac.array_namespace(data), data, indices
        data_ns = aac.array_namespace(data)
        index_ns = aac.array_namespace(indices)
        if data_ns is not index_ns:
            raise TypeError(
                f"{data_name} and {index_name} must be arrays of one namespace; got a "
                f"{_namespace_name(data)} array for {data_name} and a "
                f"{_namespace_name(indices)} array for {index_name}"
            )
        return data_ns, data, indices
    if not data_is_array and not index_is_array:
        data = np.asarray(data)
        return aac.array_namespace(data), data, _index_list_to_numpy(indices)
    if data_is_array:
        xp = aac.array_namespace(data)
        indices = xp.asarray(_index_list_to_numpy(indices), device=aac.device(data))
        return xp, data, indices
    xp = aac.array_namespace(indices)
    return xp, xp.asarray(data, device=aac.device(indices)), indices


def check_index_dtype(xp, indices, index_name: str) -> None:
    """Reject boolean, floating and other non-integer index arrays."""
    dtype = indices.dtype
    is_integer = False
    try:
        is_integer = xp.isdtype(dtype, "integral")
    except (TypeError, ValueError):  # e.g. NumPy strings, which isdtype does not know
        pass
    if not is_integer:
        raise TypeError(f"{index_name} must have an integer dtype; got {dtype}")


def static_shape(x, name: str) -> tuple[int, ...]:
    """The shape as Python ints; every gather here is planned from static shapes."""
    shape = tuple(x.shape)
    if any(s is None for s in shape):
        raise ValueError(
            f"{name} must have a static shape (every size known when the call is made); "
            f"got shape {shape}"
        )
    return tuple(int(s) for s in shape)


def fill_array(xp, fill_value, dtype, device):
    """`fill_value` as a 0-d array of `dtype`; 0 stands for the dtype's zero ("" for strings)."""
    if isinstance(fill_value, int | float) and not isinstance(fill_value, bool) and fill_value == 0:
        return xp.zeros((), dtype=dtype, device=device)
    return xp.astype(xp.asarray(fill_value, device=device), dtype)


def to_wide(xp, indices, wide, wrap_sizes=None, vector=False):
    """Cast integer indices to the signed dtype `wide` without wrapping big unsigned values.

    Unsigned values that `wide` cannot hold come out of the cast negative. They are out of
    range for any array that fits in memory, so they become `wide`'s maximum; under ``"wrap"``
    (`wrap_sizes` given, one per component along the last axis when `vector`) they become
    their true remainder instead. Only casts and signed arithmetic are used: PyTorch has no
    comparison or remainder for uint64.
    """
    if indices.dtype == wide:
        return indices
    too_big = not xp.isdtype(indices.dtype, "signed integer") and int(
        xp.iinfo(indices.dtype).max
    ) > int(xp.iinfo(wide).max)
    values = xp.astype(indices, wide)
    if not too_big:
        return values
    if wrap_sizes is None:
        return xp.where(values < 0, int(xp.iinfo(wide).max), values)
    # A value v >= 2**(bits-1) arrives as v - 2**bits, and v % n == (w % n + 2**bits % n) % n.
    span = 2 ** int(xp.iinfo(indices.dtype).bits)
    if vector:
        device = aac.device(indices)
        sizes = xp.asarray(wrap_sizes, dtype=wide, device=device)
        offsets = xp.asarray([span % n for n in wrap_sizes], dtype=wide, device=device)
    else:
        sizes, offsets = wrap_sizes[0], span % wrap_sizes[0]
    wrapped = xp.remainder(xp.remainder(values, sizes) + offsets, sizes)
    return xp.where(values < 0, wrapped, values)
