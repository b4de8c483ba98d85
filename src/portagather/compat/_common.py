"""Helpers shared by the compat modules: turning negative indices into positive ones."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import array_api_compat as aac

from .._arrays import as_arrays


def count_from_end(
    data: Any,
    indices: Any,
    sizes_of: Callable[..., Any],
    vector: bool,
    names: tuple[str, str] = ("data", "indices"),
) -> tuple[Any, Any]:
    """Return ``(data, indices)`` as arrays, with each negative index component plus its size.

    ``sizes_of(data.shape, indices.shape)`` gives the lengths of the axes the components
    index: one size for a scalar index (``vector=False``), one per component along the last
    axis of `indices` (``vector=True``), or None when the arguments do not fit (the core
    then raises its own error). Values below ``-size`` stay negative, so the core still
    reports them as bad. Unsigned and non-integer indices are returned unchanged.
    """
    xp, data, indices = as_arrays(data, indices, *names)
    try:
        signed = xp.isdtype(indices.dtype, "signed integer")
    except (TypeError, ValueError):
        signed = False
    sizes = sizes_of(tuple(data.shape), tuple(indices.shape))
    if not signed or sizes is None or None in sizes:
        return data, indices
    if vector and (indices.ndim == 0 or indices.shape[-1] != len(sizes)):
        return data, indices
    if sizes and max(sizes) > int(xp.iinfo(indices.dtype).max):
        indices = xp.astype(indices, xp.int64)
    size = xp.asarray(
        sizes if vector else sizes[0], dtype=indices.dtype, device=aac.device(indices)
    )
    return data, xp.where(indices < 0, indices + size, indices)


def axis_size(axis: Any) -> Callable[..., Any]:
    """``sizes_of`` for a gather along `axis`: ``(shape[axis],)``, or None if out of range."""

    axis = as_int(axis)

    def sizes_of(shape: tuple[int, ...], _index_shape: tuple[int, ...]) -> Any:
        if (
            not isinstance(axis, int)
            or isinstance(axis, bool)
            or not -len(shape) <= axis < len(shape)
        ):
            return None
        return (shape[axis],)

    return sizes_of


def as_int(value: Any) -> Any:
    """A NumPy integer means what the Python int means; other values go to the core as given
    (which names them in its error)."""
    if isinstance(value, bool):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value
