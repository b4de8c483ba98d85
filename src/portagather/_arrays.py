"""Arrays beside the caller's: their device, static shapes, index dtypes, the fill value, a
mean's division, and the deterministic tree's elements."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import array_api_compat as aac
import numpy as np


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


def argsort_positions(xp: Any, x: Any) -> Any:
    """``xp.argsort(x, stable=True)``, in the index dtype of `x`'s device."""
    home, dtype = _sorting_home(xp, x)
    if home is None:
        return xp.argsort(x, stable=True)
    return xp.astype(xp.argsort(x.to_device(home), stable=True), dtype).to_device(x.device)


def searchsorted_positions(xp: Any, sorted_line: Any, values: Any, side: str) -> Any:
    """``xp.searchsorted(sorted_line, values, side=side)``, in the index dtype of the
    device of `values`."""
    home, dtype = _sorting_home(xp, values)
    if home is None:
        return xp.searchsorted(sorted_line, values, side=side)
    found = xp.searchsorted(sorted_line.to_device(home), values.to_device(home), side=side)
    return xp.astype(found, dtype).to_device(values.device)


def _sorting_home(xp: Any, x: Any) -> tuple[Any, Any]:
    """``(None, None)``, or the device that ``argsort`` and ``searchsorted`` of `x` run on and
    the index dtype of `x`'s own device to bring their results back in.

    Why: array-api-strict 2.6 makes both results int64 on every device, and its devices
    without int64 (``Device("no_x64")``) refuse them (``array_api_strict/_sorting_functions.py``
    and ``_searching_functions.py`` wrap the NumPy result with ``device=x.device``; the
    standard asks for the device's default index dtype). So where a device's index dtype is
    narrower than the namespace's, they run on the namespace's default device."""
    try:
        info = xp.__array_namespace_info__()
    except AttributeError:  # a namespace older than the standard's inspection API
        return None, None
    device = device_for_new(x)
    if device is None:
        return None, None
    own = info.default_dtypes(device=device)["indexing"]
    if own == info.default_dtypes()["indexing"]:
        return None, None
    return info.default_device(), own


def unknown_sizes(names: str, given: str) -> ValueError:
    """The error for Dask arrays `names` with unknown (NaN) sizes, as boolean indexing makes
    them; `given` says what was seen."""
    msg = (
        f"{names} must have known sizes; {given}: NaN sizes are unknown (as after boolean "
        "indexing on Dask); call .compute_chunk_sizes() on them first"
    )
    return ValueError(msg)


def fill_array(xp: Any, fill: Any, data: Any) -> Any:
    """The fill as a 0-d array of data's dtype, from what ``_operands.check_fill_value`` returned
    for it; 0 stands for the dtype's zero ("" for strings)."""
    dtype, device = data.dtype, device_for_new(data)
    if isinstance(fill, Unread):
        return xp.astype(fill.array, dtype)
    value = fill
    if isinstance(value, int | float) and not isinstance(value, bool) and value == 0:
        return xp.zeros((), dtype=dtype, device=device)
    return xp.asarray(value, dtype=dtype, device=device)


@dataclass(frozen=True)
class Unread:
    """A 0-d array fill value whose value cannot be read now; it is cast when used."""

    array: Any


#: NumPy dtypes outside the standard that are real floating numbers with infinities: ml_dtypes'
#: ``bfloat16``, which JAX and TensorFlow hand NumPy users. NumPy's ``isdtype`` refuses them
#: (its ``kind`` is ``"V"``); its ufuncs (``ufunc.at`` too), ``finfo`` and casts take them.
EXTENSION_FLOATS = ("bfloat16",)


def dtype_kind(xp: Any, dtype: Any) -> str | None:
    """The standard's kind of `dtype` (``"bool"``, ``"signed integer"``, ``"unsigned
    integer"``, ``"real floating"``, ``"complex floating"``): what the reductions ask of a
    dtype, written once. NumPy's :data:`EXTENSION_FLOATS` are real floating; None for a dtype
    of no kind of the standard (NumPy's strings and objects, another library's)."""
    if isinstance(dtype, np.dtype) and dtype.kind == "V":
        return "real floating" if dtype.name in EXTENSION_FLOATS else None
    for kind in DTYPE_KINDS:
        try:
            if xp.isdtype(dtype, kind):
                return kind
        except (TypeError, ValueError):  # NumPy strings and objects, which isdtype does not know
            return None
    return None


#: Each reduction's name in the scatters (``reduce=``) and the front ends' names for it.
_REDUCTION_NAMES = {
    "sum": "add", "mean": "add", "sqrt_n": "add", "add": "add", "prod": "multiply",
    "multiply": "multiply", "max": "max", "amax": "max", "min": "min", "amin": "min",
}  # fmt: skip


def reduction_identity(xp: Any, reduce: str, dtype: Any) -> int | float | bool:
    """The identity of `reduce` (a scatter's name, ``"add"``, ``"multiply"``, ``"max"``,
    ``"min"``, or a segment's or PyTorch's for it) in `dtype`, as a Python scalar: 0, 1, the
    lowest or the highest value of the dtype (minus and plus infinity for floating dtypes,
    False and True for bool). Written once: an empty segment, a Dask partial and PyTorch's
    ``include_self=False`` all start from it. Complex has no order, so no max or min: 0."""
    reduce = _REDUCTION_NAMES[reduce]
    if reduce in ("add", "multiply"):
        return int(reduce == "multiply")
    kind = dtype_kind(xp, dtype)
    if kind == "bool":
        return reduce == "min"
    if kind == "real floating":
        return -math.inf if reduce == "max" else math.inf
    if kind not in ("signed integer", "unsigned integer"):
        return 0
    info = xp.iinfo(dtype)
    return int(info.min) if reduce == "max" else int(info.max)


def per_segment(xp: Any, count: Any, like: Any, gathered: bool = False) -> Any:
    """`count` (one value per segment, shape ``like.shape[:count.ndim]``) repeated along the
    inner axes of `like`, to its shape: broadcast, or where `gathered` (a divisor in a traced
    call) gathered. XLA turns a division by a broadcast divisor into a product with its
    reciprocal, which is not rounded once (5 / 3 in float32 would give 1.6666667), so that
    ``jax.jit`` would give other bits than the eager call, whose division by a broadcast
    array is one rounding (at fewer dispatches than a gather). Without inner axes, as it is."""
    if count.ndim == like.ndim:
        return count
    if not gathered:
        shaped = xp.reshape(count, tuple(count.shape) + (1,) * (like.ndim - count.ndim))
        return xp.broadcast_to(shaped, tuple(like.shape))
    shape = tuple(like.shape)
    segments, width = math.prod(count.shape), math.prod(shape[count.ndim :])
    row = xp.arange(segments * width, dtype=count.dtype, device=device_for_new(count)) // width
    return xp.reshape(xp.take(xp.reshape(count, (segments,)), row), shape)


def divisor(xp: Any, count: Any, like: Any, gathered: bool = False) -> Any:
    """What a segment's total is divided by: its count, at least 1 (an empty segment's total
    stays as it is), along the inner axes of `like` (:func:`per_segment`, `gathered` where
    the call is traced)."""
    return per_segment(xp, xp.maximum(count, xp.ones_like(count)), like, gathered)


def mean_division(xp: Any, engine: Any, data: Any) -> tuple[str, Any]:
    """How a mean of `data`'s dtype divides its sum by its count, and in which dtype: integers are
    floor-divided (``"floor"``, as ``//``) in the widest signed integer dtype (the widest
    unsigned one for those it cannot hold); float16 and bfloat16 are divided in float32
    (``"widened"``); the others in their own dtype (``"plain"``)."""
    dtype = data.dtype
    if dtype_kind(xp, dtype) in ("signed integer", "unsigned integer"):
        wide = engine.wide_index_dtype(data)
        if int(xp.iinfo(dtype).max) > int(xp.iinfo(wide).max):  # uint64 (uint32 on 32-bit JAX)
            wide = _unsigned_wide(xp)
        return "floor", wide
    if dtype_name(dtype) in ("float16", "bfloat16"):
        return "widened", xp.float32
    return "plain", dtype


def tied(xp: Any, divisor: Any, like: Any) -> Any:
    """`divisor` (floating, of `like`'s shape and dtype) made to depend on `like` with no bit
    changed, for a traced division (JAX): under ``jax.vmap`` a divisor that depends only on
    ids that are not batched stays unbatched and is broadcast over the batch, and XLA turns a
    division by a broadcast into a product with its reciprocal (not one rounding). Adding
    ``like * 0`` where `like` is finite (``+-0``; 0 elsewhere) leaves every divisor as it is
    (``+0 + -0`` is ``+0``) and ties it to the batched data. Traced values only: NumPy would
    warn at ``inf * 0``, which the ``where`` discards."""
    zero = xp.where(xp.isfinite(like), like * 0, xp.zeros_like(like))
    return divisor + zero


def divided_mean(
    xp: Any, total: Any, count: Any, division: str, divide_in: Any, gathered: bool = False
) -> Any:  # fmt: skip
    """`total` (a segment sum) over `count` (its rows per segment, along the inner axes too:
    :func:`divisor`, `gathered` where the call is traced), in `total`'s dtype; 0 where
    nothing was counted; divided as :func:`mean_division` says (`division`, in dtype
    `divide_in`). The core's mean, and the front ends' that match it."""
    dtype = total.dtype
    count = divisor(xp, count, total, gathered)
    if division == "floor":
        quotient = xp.floor_divide(xp.astype(total, divide_in), xp.astype(count, divide_in))
        return xp.astype(quotient, dtype)
    if division == "widened":
        total = xp.astype(total, divide_in)
        count = xp.astype(count, divide_in)
        return xp.astype(total / (tied(xp, count, total) if gathered else count), dtype)
    count = xp.astype(count, dtype)
    return total / (tied(xp, count, total) if gathered else count)


def _unsigned_wide(xp: Any) -> Any:
    """The widest unsigned integer dtype of the namespace (uint32 on JAX without x64)."""
    try:
        found = xp.__array_namespace_info__().dtypes(kind="unsigned integer")
    except AttributeError:
        return xp.uint64
    return found.get("uint64", found.get("uint32"))


def numpy_dtype(dtype: Any) -> Any:
    """NumPy's dtype of the name of a namespace's integer `dtype`."""
    try:
        return np.dtype(dtype)  # NumPy's, JAX's and Dask's dtypes (and NumPy's scalar types)
    except TypeError:
        return np.dtype(dtype_name(dtype))


def dtype_name(dtype: Any) -> str:
    """A dtype's name as every backend would print it: ``int32``, not ``torch.int32``,
    ``array_api_strict.int32`` or ndonnx's ``Int32``."""
    return str(getattr(dtype, "name", dtype)).rsplit(".", 1)[-1].lower()


DTYPE_KINDS = ("bool", "signed integer", "unsigned integer", "real floating", "complex floating")


# -- the deterministic tree's elements (docs/deterministic.md) -------------------------------
#
# What the pipeline's deterministic steps (``_deterministic``) and the engines' trees
# (``engines/tree.py``, ``engines/dask_deterministic.py``) share.


#: The scatter reductions that the tree runs, and what a position outside a segment holds.
PADDING = {"add": -0.0, "multiply": 1.0}


def padding(xp: Any, op: str, dtype: Any) -> float | complex:
    """What a position outside a segment holds for `op` in `dtype` (:data:`PADDING`; for a
    complex sum, ``-0.0`` in both parts: a Python ``-0.0`` would become ``-0.0 + 0.0j``,
    whose ``+0.0`` turns an imaginary ``-0.0`` into ``+0.0``)."""
    if op == "add" and xp.isdtype(dtype, "complex floating"):
        return complex(-0.0, -0.0)
    return PADDING[op]


#: The dtypes that accumulate in float32 and round once at the end.
_WIDENED = ("float16", "bfloat16")


def widened(xp: Any, dtype: Any) -> Any:
    """The dtype a tree over `dtype` accumulates in: float32 for float16 and bfloat16."""
    return xp.float32 if dtype_name(dtype) in _WIDENED else dtype


def combine(op: str, left: Any, right: Any) -> Any:
    """``left op right``, elementwise: the one operation that touches the values."""
    return left + right if op == "add" else left * right
