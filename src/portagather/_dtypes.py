"""The dtypes of a call's arrays, checked after their kinds and before their values: an
integer index, a reduction the data's dtype has (the scatters' and the segment reductions'
one rule), updates that cast safely."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._arrays import dtype_kind, dtype_name
from ._options import SEGMENT_SCATTERS

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
