"""Helpers shared by the compat modules: turning negative indices into positive ones, the
compat names in error messages, and the zeros a ``scatter_nd(indices, updates, shape)`` fills."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import array_api_compat as aac
import numpy as np

from .._arguments import arrays, namespace_name, python_values, shown
from .._arrays import dtype_kind
from ..engines import engine_for


def count_from_end(
    data: Any,
    indices: Any,
    sizes_of: Callable[..., Any],
    vector: bool,
    names: tuple[str, str] = ("data", "indices"),
) -> tuple[Any, Any]:
    """Return ``(data, indices)`` with each negative index component plus its size.

    ``sizes_of(data.shape, indices.shape)`` gives the lengths of the axes the components
    index: one size for a scalar index (``vector=False``), one per component along the last
    axis of `indices` (``vector=True``), or None when the arguments do not fit (the core
    then raises its own error). Values below ``-size`` stay negative, so the core still
    reports them as bad. Unsigned and non-integer indices are returned unchanged. The
    arguments' kinds are checked first (the core's first step); an index given as Python
    values is shifted in NumPy and returned as Python values.
    """
    xp, data, indices, as_values = arrays(data, indices, *names)
    work = aac.array_namespace(np.empty(0)) if as_values else xp
    try:
        signed = work.isdtype(indices.dtype, "signed integer")
    except (TypeError, ValueError):  # Python ints past int64 (objects), strings, ...
        signed = False
    sizes = sizes_of(tuple(data.shape), tuple(indices.shape))
    if not signed or sizes is None or None in sizes:
        return data, indices.tolist() if as_values else indices
    if vector and (indices.ndim == 0 or indices.shape[-1] != len(sizes)):
        return data, indices.tolist() if as_values else indices
    if sizes and max(sizes) > int(work.iinfo(indices.dtype).max):
        wide = engine_for(work).wide_index_dtype(indices)
        indices = work.astype(indices, wide)
    size = work.asarray(
        sizes if vector else sizes[0], dtype=indices.dtype, device=aac.device(indices)
    )
    shifted = work.where(indices < 0, indices + size, indices)
    return data, shifted.tolist() if as_values else shifted


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


# -- the scatters' helpers ------------------------------------------------------------------

#: Exceptions whose message is rewritten with the compat signature's argument names; any
#: other type (a subclass with its own fields, a JAX or Dask error) goes through unchanged.
_RENAMED_TYPES = (TypeError, ValueError, IndexError)


def rename_text(text: str, renames: Mapping[str, str]) -> str:
    """`text` with each core argument name (a whole word, not after a ``.``) replaced.

    Keys may be phrases (``"params of shape"``); the longest key matching at a place wins.
    """
    if not renames:
        return text
    keys = sorted(renames, key=len, reverse=True)
    pattern = r"(?<![\w.])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])"
    return re.sub(pattern, lambda m: renames[m.group(1)], text)


#: The words of the core's message where it cannot check index values (under JAX tracing
#: without ``checkify``, ``torch.compile(fullgraph=True)``, ``torch.func.vmap``, symbolic
#: ndonnx arrays): the policy it cannot enforce, and the ways out it names.
_CORE_POLICY = 'bad_indices="error"'
_CORE_WAYS_OUT = 'pass bad_indices="ignore", "clip", "wrap" or "unchecked"'


def ways_out(front_end: str, core: str, policy: str | None = None) -> dict[str, str]:
    """Renames for the core's message where index values cannot be checked, so that it
    names only ways out the front end has: `policy`, the front end's own policy argument
    (TensorFlow's ``bad_indices_policy``), or else the core function `core` with a policy.
    The message keeps its other ways out (``checkify`` under JAX). Made once per front end
    and kept (do not change the dictionary): in a plain dictionary, which torch.compile's
    Dynamo traces without the warning a ``functools`` cache draws."""
    key = (front_end, core, policy)
    ways = _WAYS.get(key)
    if ways is None:
        ways = _WAYS[key] = _ways_out(front_end, core, policy)
    return ways


_WAYS: dict[tuple[str, str, str | None], dict[str, str]] = {}


def _ways_out(front_end: str, core: str, policy: str | None) -> dict[str, str]:
    if policy is not None:
        return {
            _CORE_POLICY: f'the index check of {front_end} ({policy}="" or "ERROR")',
            _CORE_WAYS_OUT: f'pass {policy}="IGNORE"',
        }
    return {
        _CORE_POLICY: f"the index check of {front_end}",
        _CORE_WAYS_OUT: (
            f'call portagather.{core} with bad_indices="ignore", "clip", "wrap" or "unchecked"'
            f" ({front_end} has no bad_indices)"
        ),
    }


class renamed:  # (lower case: used as a context manager, as contextlib's functions are)
    """Re-raise the core's eager argument and index errors with the compat names.

    The core names its arguments as its own signatures do (``params``, ``x``, ``index``,
    ``src``, ...); a compat function wraps its core call in this so that a message names the
    argument as the imitated signature spells it. Where the core cannot check index values
    (its message names its ``bad_indices`` ways out), `ways` (:func:`ways_out`) rewrites
    those instead. Errors raised later (a Dask graph when it runs, ``checkify`` under JAX)
    keep the core's names. A class, not a ``contextmanager`` generator: every compat call
    enters one, and a generator's frames cost a small call about a microsecond.
    """

    __slots__ = ("renames", "ways")

    def __init__(self, renames: Mapping[str, str], ways: Mapping[str, str] | None = None) -> None:
        self.renames, self.ways = renames, ways

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, err: BaseException | None, traceback: Any) -> None:
        if kind not in _RENAMED_TYPES or err is None or len(err.args) != 1:
            return  # no error, or one that is not renamed: it goes on as it is
        text = err.args[0]
        if not isinstance(text, str):
            return
        ways = self.ways
        if ways is not None and _CORE_WAYS_OUT in text:
            new = rename_text(text, ways)
        else:
            new = rename_text(text, self.renames)
        if new != text:
            raise kind(new).with_traceback(traceback) from None


def output_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    """`shape` (a sequence of ints, or a 1-d integer array) as a tuple of ints >= 0."""
    values = shape.tolist() if hasattr(shape, "tolist") else shape
    msg = f"{name} must be a sequence of ints; got {shape!r}"
    if not isinstance(values, Iterable) or isinstance(values, str | bytes):
        raise TypeError(msg)
    sizes = []
    for value in values:
        if isinstance(value, bool):
            raise TypeError(msg)
        try:
            sizes.append(operator.index(value))
        except TypeError:
            raise TypeError(msg) from None
    if any(s < 0 for s in sizes):
        msg = f"{name} must have no negative sizes; got {tuple(sizes)}"
        raise ValueError(msg)
    return tuple(sizes)


def zeros_of(shape: Any, updates: Any, indices: Any, shape_name: str = "shape") -> tuple[Any, Any]:
    """``(zeros, updates)``: zeros of `shape` with the namespace, dtype and device of
    `updates` (of `indices`, or NumPy, where `updates` is no array: then Python values take
    that namespace's default dtype), and `updates` as an array of that namespace."""
    sizes = output_shape(shape, shape_name)
    if aac.is_array_api_obj(updates) and not isinstance(updates, np.generic):
        xp = aac.array_namespace(updates)
    else:
        values = python_values(updates, "updates", text=True)  # its kind, checked first
        if values.dtype == object:  # Python ints past int64: no dtype to make zeros of
            msg = f"updates must hold values of one dtype; got {updates!r}"
            raise ValueError(msg)
        if aac.is_array_api_obj(indices) and not isinstance(indices, np.generic):
            xp = aac.array_namespace(indices)
            try:
                updates = xp.asarray(updates, device=aac.device(indices))
            except (TypeError, ValueError) as err:  # strings, which PyTorch and JAX hold not
                library = namespace_name(indices)
                msg = (
                    f"updates must be an array, or values that the namespace of indices "
                    f"({library}) holds; got {shown(updates)} ({err})"
                )
                raise TypeError(msg) from None
        else:
            xp = aac.array_namespace(np.empty(0))
            updates = values
    zeros = xp.zeros(sizes, dtype=updates.dtype, device=aac.device(updates))
    return zeros, updates


# -- the segment reductions' helpers ----------------------------------------------------------


def unsorted_segment(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    reduce: str,
    function: str,
    renames: Mapping[str, str] | None = None,
    with_count: bool = False,
    floating: bool = False,
) -> Any:
    """TensorFlow's and MindSpore's ``unsorted_segment_<reduce>``: a negative id drops its
    row; an id past the end is an error where the values can be checked (eagerly, in a
    Dask graph) and drops its row under JAX tracing (TensorFlow's ``""`` default, its CPU
    and GPU behaviour); an empty segment's max (min) is the dtype's lowest (highest)
    finite value, and so is a segment of -inf (inf) only, as both libraries start from it.

    With `with_count`, ``(result, count)``: the rows each segment received. With
    `floating`, integer data is refused (TensorFlow's ``unsorted_segment_sqrt_n``).
    """
    from .._api import segment_reduce

    with renamed(renames or {}):
        result, count = segment_reduce(
            data, segment_ids, num_segments, reduce, bad_indices="", drop_negative=True,
            with_count=True, function=function, floating=floating,
        )  # fmt: skip
    if reduce in ("max", "min"):
        xp = aac.array_namespace(result)
        if dtype_kind(xp, result.dtype) == "real floating":
            info = xp.finfo(result.dtype)
            if reduce == "max":
                result = xp.maximum(result, xp.full_like(result, float(info.min)))
            else:
                result = xp.minimum(result, xp.full_like(result, float(info.max)))
    return (result, count) if with_count else result
