"""``tf.math``'s segment reductions with TensorFlow's signatures: ``unsorted_segment_sum`` /
``_mean`` / ``_max`` / ``_min`` / ``_prod`` / ``_sqrt_n`` and the sorted ``segment_sum`` /
``_mean`` / ``_max`` / ``_min`` / ``_prod``; reached as ``tensorflow.math`` of
:mod:`portagather.compat.tensorflow`::

    from portagather.compat import tensorflow as tf
    tf.math.unsorted_segment_sum(data, segment_ids, num_segments)

TensorFlow's conventions, checked against TensorFlow 2.21 (``tests/oracles``):

- ``unsorted_segment_*``: a negative id drops its row; an id ``>= num_segments`` raises
  :class:`IndexError` where the values can be checked (eagerly; on Dask when computed) and
  drops its row under JAX tracing (TensorFlow's CPU and GPU behaviour). An empty segment is
  0 (sum, mean, sqrt_n), 1 (prod), or the dtype's lowest (max) or highest (min) *finite*
  value, which a segment of only ``-inf`` (``inf``) also gets, as TensorFlow starts from it.
  ``unsorted_segment_mean`` of integers is a float (float32 for 8- and 16-bit integers,
  float64 for wider ones), the sum (in the integers' dtype) over the count.
- ``segment_*`` (sorted ids): `segment_ids` is 1-d and sorted; the result has
  ``segment_ids[-1] + 1`` rows, so the ids are read when the function is called (on Dask
  and under ``jax.jit`` call :func:`portagather.segment_sum` and friends with
  ``num_segments``). An empty segment is 0, for the max and the min too (1 for the
  product); ``segment_mean`` of integers truncates toward zero, in the integers' dtype.

What differs from TensorFlow:

- A NaN makes its segment's max and min NaN wherever it is (TensorFlow's result depends on
  its position in the segment).
- A bad id raises :class:`IndexError` (TensorFlow: ``InvalidArgumentError``); unsorted ids
  in ``segment_*`` raise :class:`ValueError`. Ids of any integer dtype are accepted
  (TensorFlow: int16, int32 and int64 for the unsorted ones, int32 and int64 for the
  sorted ones), and so is ``unsorted_segment_mean`` of complex numbers (TensorFlow 2.21
  refuses it), bool data for the max and the min (any and all, as ``jax.ops`` takes it)
  and NumPy's ``bfloat16`` (from ``ml_dtypes``) for every reduction.
- A ``num_segments`` that no array of the data's device can hold is a :class:`ValueError`
  naming its valid range (TensorFlow: ``InvalidArgumentError``).
- ``name`` is accepted and ignored.
- The reductions that add or multiply floats (``unsorted_segment_sum`` / ``_prod`` /
  ``_mean`` / ``_sqrt_n``, ``segment_sum`` / ``_prod`` / ``_mean``) take a keyword-only
  ``deterministic=False``: ``True`` adds (multiplies) in one order fixed by the ids
  (docs/deterministic.md), the same bits on every backend and in every run. TensorFlow's
  own switch, ``tf.config.experimental.enable_op_determinism()``, is not followed: it has
  no reader without importing TensorFlow, which a port does not import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._api import segment_reduce
from .._arrays import divided_mean, divisor, dtype_kind, mean_division
from .._operands import is_array, namespace_of
from ..engines import engine_for
from ._common import floating_array, unsorted_segment

__all__ = [
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_sum",
    "unsorted_segment_max",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
    "unsorted_segment_sum",
]


# The unsorted forms.


def unsorted_segment_sum(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.unsorted_segment_sum``: the sum of the rows of each segment (0 if empty).

    ``deterministic=True`` (portagather's keyword) adds floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.unsorted_segment_sum(np.array([[1, 2], [5, 6], [3, 4]]), [0, 1, 0], 2)
    array([[4, 6],
           [5, 6]])
    >>> tf.math.unsorted_segment_sum(np.array([1.0, 2.0, 3.0]), [-1, 2, 2], 3)
    array([0., 0., 5.])
    """
    return unsorted_segment(data, segment_ids, num_segments, "sum", "unsorted_segment_sum",
                            deterministic=deterministic)  # fmt: skip


def unsorted_segment_max(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.math.unsorted_segment_max``: the largest row of each segment; an empty one is
    the dtype's lowest finite value.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.unsorted_segment_max(np.array([1.0, 5.0, 3.0], np.float32), [0, 0, 2], 3)
    array([ 5.0000000e+00, -3.4028235e+38,  3.0000000e+00], dtype=float32)
    """
    return unsorted_segment(data, segment_ids, num_segments, "max", "unsorted_segment_max")


def unsorted_segment_min(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.math.unsorted_segment_min``: the smallest row of each segment; an empty one is
    the dtype's highest finite value.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.unsorted_segment_min(np.array([4, 2, 7], np.int32), [1, 1, 0], 3)
    array([         7,          2, 2147483647], dtype=int32)
    """
    return unsorted_segment(data, segment_ids, num_segments, "min", "unsorted_segment_min")


def unsorted_segment_prod(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.unsorted_segment_prod``: the product of the rows of each segment (1 if empty).

    ``deterministic=True`` (portagather's keyword) multiplies floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.unsorted_segment_prod(np.array([2, 3, 4]), [1, 1, 0], 3)
    array([4, 6, 1])
    """
    return unsorted_segment(data, segment_ids, num_segments, "prod", "unsorted_segment_prod",
                            deterministic=deterministic)  # fmt: skip


def unsorted_segment_mean(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.unsorted_segment_mean``: the sum of each segment over its count (0 if
    empty); for integer data a float (float32 for 8- and 16-bit integers, else float64).

    ``deterministic=True`` (portagather's keyword) adds floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.unsorted_segment_mean(np.array([1, 2, 4], np.int32), [0, 0, 2], 3)
    array([1.5, 0. , 4. ])
    """
    return _unsorted_mean(data, segment_ids, num_segments, "unsorted_segment_mean", deterministic)


def unsorted_segment_sqrt_n(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.unsorted_segment_sqrt_n``: the sum of each segment over the square root of
    its count (0 if empty); floating and complex data only, as in TensorFlow.

    ``deterministic=True`` (portagather's keyword) adds floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.unsorted_segment_sqrt_n(np.array([3.0, 1.0, 4.0, 1.0]), [0, 0, 0, 0], 2)
    array([4.5, 0. ])
    """
    return _unsorted_sqrt_n(
        data, segment_ids, num_segments, "unsorted_segment_sqrt_n", deterministic
    )


def _unsorted_mean(
    data: Any, segment_ids: Any, num_segments: Any, function: str, deterministic: bool = False
) -> Any:
    """The sum and the count of one core call, divided as the core's mean divides (the data's
    dtype; float16 and bfloat16 in float32), but integers truly, into a float (TensorFlow's
    ``/``: :func:`_float_for`). Floating data's is the core's mean, one core call."""
    if _floating(data):
        return unsorted_segment(
            data, segment_ids, num_segments, "mean", function, deterministic=deterministic
        )
    total, count = unsorted_segment(data, segment_ids, num_segments, "sum", function,
                                    with_count=True, deterministic=deterministic)  # fmt: skip
    xp = namespace_of(total)
    division = _float_division(xp, total)
    if division is None:  # integers
        real = _float_for(xp, total.dtype)
        return xp.astype(total, real) / xp.astype(divisor(xp, count, total), real)
    return divided_mean(xp, total, count, *division)


def _floating(data: Any) -> bool:
    """Whether `data` is an array of a floating or complex dtype, whose TensorFlow mean is
    the core's (the same checks and messages as the sum's)."""
    if isinstance(data, np.generic) or not is_array(data):  # (a NumPy scalar: a Python value)
        return False
    return floating_array(data)


def _float_division(xp: Any, total: Any) -> tuple[str, Any] | None:
    """The core's :func:`~portagather._arrays.mean_division` of `total`'s dtype where it is
    no integer dtype (it then depends on the dtype alone), kept per namespace and dtype;
    None for integers (whose division depends on the widest integer, which JAX's x64 flag
    may change)."""
    key: tuple[Any, Any] | None = (xp, total.dtype)
    try:
        if key in _FLOAT_DIVISIONS:
            return _FLOAT_DIVISIONS[key]
    except TypeError:  # a dtype that cannot be hashed
        key = None
    division = None
    if dtype_kind(xp, total.dtype) not in ("signed integer", "unsigned integer"):
        division = mean_division(xp, engine_for(xp), total)
    if key is not None:
        _FLOAT_DIVISIONS[key] = division
    return division


#: How TensorFlow's integer mean of a namespace and dtype divides in floats, or None. Why:
#: every integer mean asks, and ``mean_division`` asks the namespace's dtype functions.
#: Bound: the namespaces and integer dtypes a program uses.
_FLOAT_DIVISIONS: dict[tuple[Any, Any], tuple[str, Any] | None] = {}


def _unsorted_sqrt_n(
    data: Any, segment_ids: Any, num_segments: Any, function: str, deterministic: bool = False
) -> Any:
    """One core call (floating and complex data only): the sum over its count's square root
    (at least 1: an empty segment's 0 stays 0), divided by the core as its mean is
    (``Engine.divided_by_root``)."""
    return unsorted_segment(data, segment_ids, num_segments, "sqrt_n", function, floating=True,
                            deterministic=deterministic)  # fmt: skip


def _float_for(xp: Any, dtype: Any) -> Any:
    """TensorFlow's true division's dtype for integers: float32 up to 16 bits, else float64
    (where the namespace has it: not JAX without x64)."""
    if int(xp.iinfo(dtype).bits) <= 16:
        return xp.float32
    try:
        floats = xp.__array_namespace_info__().dtypes(kind="real floating")
    except AttributeError:
        return xp.float64
    return floats.get("float64", xp.float32)


# The sorted forms.


def segment_sum(
    data: Any,
    segment_ids: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.segment_sum``: the sum of each segment of sorted ids (0 if empty).

    ``deterministic=True`` (portagather's keyword) adds floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.segment_sum(np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]]), [0, 0, 1])
    array([[5, 5, 5, 5],
           [5, 6, 7, 8]])
    """
    return _sorted_reduction(data, segment_ids, "sum", "segment_sum", deterministic)


def segment_prod(
    data: Any,
    segment_ids: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.segment_prod``: the product of each segment of sorted ids (1 if empty).

    ``deterministic=True`` (portagather's keyword) multiplies floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.segment_prod(np.array([2, 3, 4]), [0, 0, 2])
    array([6, 1, 4])
    """
    return _sorted_reduction(data, segment_ids, "prod", "segment_prod", deterministic)


def segment_max(
    data: Any,
    segment_ids: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.math.segment_max``: the largest row of each segment of sorted ids (0 if empty).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.segment_max(np.array([-1.0, -3.0, -2.0]), [0, 0, 2])
    array([-1.,  0., -2.])
    """
    return _sorted_reduction(data, segment_ids, "max", "segment_max")


def segment_min(
    data: Any,
    segment_ids: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
) -> Any:
    """``tf.math.segment_min``: the smallest row of each segment of sorted ids (0 if empty).

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.segment_min(np.array([1, 3, 2]), [0, 0, 2])
    array([1, 0, 2])
    """
    return _sorted_reduction(data, segment_ids, "min", "segment_min")


def segment_mean(
    data: Any,
    segment_ids: Any,
    name: str | None = None,  # noqa: ARG001 (TensorFlow's signature; names nothing here)
    *,
    deterministic: bool = False,
) -> Any:
    """``tf.math.segment_mean``: the mean of each segment of sorted ids (0 if empty); for
    integers the sum (in their dtype) over the count, truncated toward zero.

    ``deterministic=True`` (portagather's keyword) adds floats in one order fixed by the
    ids (docs/deterministic.md): the same bits on every backend and in every run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import tensorflow as tf
    >>> tf.math.segment_mean(np.array([1.0, 2.0, 6.0]), [0, 0, 2])
    array([1.5, 0. , 6. ])
    >>> tf.math.segment_mean(np.array([-3, -4, 5], np.int32), [0, 0, 1])
    array([-3,  5], dtype=int32)
    """
    return _segment_mean(data, segment_ids, "segment_mean", deterministic)


def _sorted_reduction(
    data: Any, segment_ids: Any, reduce: str, function: str, deterministic: bool = False
) -> Any:
    """``tf.math.<function>``: the core's sorted reduction `reduce`; an empty segment of the
    max or the min is 0 (the core's ``empty_value``; the others' empty segments are their
    identity, 0 and 1, already)."""
    empty = 0 if reduce in ("max", "min") else None
    return _sorted(data, segment_ids, reduce, function, False, deterministic, empty)


def _sorted(
    data: Any, segment_ids: Any, reduce: str, function: str, with_count: bool = True,
    deterministic: bool = False, empty_value: object = None,
) -> Any:  # fmt: skip
    """``(result, count)`` of a sorted segment reduction, as one checked call of the core:
    ids 1-d and sorted (checked where they can be read: ``sorted_vector``), ``max + 1``
    segments, negative ids an error; the count one per segment. Without `with_count`, the
    result alone; `empty_value` the value of an empty segment."""
    return segment_reduce(
        data, segment_ids, None, reduce, indices_are_sorted=True, with_count=with_count,
        function=function, sorted_vector=True, deterministic=deterministic,
        empty_value=empty_value,
    )  # fmt: skip


def _segment_mean(data: Any, segment_ids: Any, function: str, deterministic: bool = False) -> Any:
    """The sum and the count of one core call, divided as the core's mean divides, but signed
    integers toward zero (TensorFlow's integer division), in their own dtype. Floating
    data's is the core's mean, one core call."""
    if _floating(data):
        return _sorted(data, segment_ids, "mean", function, False, deterministic)
    total, count = _sorted(data, segment_ids, "sum", function, True, deterministic)
    xp = namespace_of(total)
    division = _float_division(xp, total)
    if division is not None:
        return divided_mean(xp, total, count, *division)
    engine = engine_for(xp)
    if dtype_kind(xp, total.dtype) != "signed integer":
        return divided_mean(xp, total, count, *mean_division(xp, engine, total))
    dtype, wide = total.dtype, engine.wide_index_dtype(total)
    total, count = xp.astype(total, wide), xp.astype(divisor(xp, count, total), wide)
    quotient = xp.floor_divide(total, count)
    remainder = total - quotient * count
    # Toward zero: a negative quotient that left a remainder is one above the floor.
    truncated = xp.where((total < 0) & (remainder != 0), quotient + 1, quotient)
    return xp.astype(truncated, dtype)
