"""Segment reductions: ``segment_sum`` / ``_mean`` / ``_max`` / ``_min`` / ``_prod``, on the
scatters' plans, policies and engines.

A segment reduction is a scatter: ``segment_sum(data, ids, n)`` is ``scatter_nd`` into an
array of shape ``(n,) + data.shape[ids.ndim:]`` filled with the reduction's identity, with
``ids[..., None]`` as the index vectors and `data` as the updates. So every function here hands
its arguments to one pipeline, ``_api.segment_reduce``: the call checked once per call
signature (``_routes.segment_call``), then the scatter's steps (``_api.scatter_route``)
with ``_plan.plan_segments``, the plan of ``gather(result, ids, axis=0)`` whose bad index is
described as a segment id, or a plan of the engine's own (Dask's). The mean is the sum over
a count, an add of ones at the same ids made valid once for both (``scatter_with_count``).
This module holds the public functions and what their docstrings share.

The CSR form ``segment_csr`` is in ``_segment_csr``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ._api import segment_reduce
from ._options import SEGMENT_REDUCTIONS

__all__ = [
    "SEGMENT_REDUCTIONS",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_reduce",
    "segment_sum",
]


# -- the public functions


def _reduced(
    data: Any, segment_ids: Any, num_segments: object, reduce: str, indices_are_sorted: object,
    bad_indices: object, empty_value: object, deterministic: object = False,
) -> Any:  # fmt: skip
    """``segment_<reduce>``, with `empty_value` in the empty segments where given (their
    count then comes from the same ids, made valid once for both), in one order where
    `deterministic` (the sum, the mean and the product): one core call."""
    return segment_reduce(
        data, segment_ids, num_segments, reduce, indices_are_sorted=indices_are_sorted,
        bad_indices=bad_indices, function=f"segment_{reduce}", deterministic=deterministic,
        empty_value=empty_value,
    )  # fmt: skip


#: What every segment reduction's docstring says of its parameters and its result, with the
#: data's dtypes and the value of an empty segment filled in by :func:`_documented`.
_PARAMETERS = """    Parameters
    ----------
    data : array
        The rows to reduce, of a numeric dtype{kinds}.
    segment_ids : array of integers, or nested lists of ints
        The segment of each row: its shape is a leading part of ``data.shape`` (as in
        TensorFlow's ``unsorted_segment_*``), so each id takes the slice
        ``data[i_0, ..., i_k]`` of the remaining axes. Valid ids are ``[0, num_segments)``.
    num_segments : int, optional
        The number of segments, the result's length. None means ``max(segment_ids) + 1``,
        read when the function is called: under ``jax.jit`` (and other JAX
        transformations), on Dask and on symbolic ndonnx arrays it must be given.
    indices_are_sorted : bool, optional
        A promise, as in JAX, that the ids are sorted (non-decreasing), which lets an engine
        use a sorted kernel. With an unsorted id under the promise the result is unspecified,
        but nothing outside the arrays is read or written.
    bad_indices : {{"error", "ignore", "clip", "wrap", "unchecked"}}, optional
        What an id outside ``[0, num_segments)`` does: ``"error"`` raises ``IndexError``
        naming it (eagerly, when a Dask result is computed, under ``checkify``);
        ``"ignore"`` drops its row (TensorFlow's rule for negative ids); ``"clip"`` and
        ``"wrap"`` move it into range; ``"unchecked"`` promises there is none.
    empty_value : scalar, optional
        The value of an empty segment, a Python or NumPy real scalar that the result's dtype
        holds exactly (None: the reduction's identity, below).{deterministic}

    Returns
    -------
    array
        Shape ``(num_segments,) + data.shape[segment_ids.ndim:]``, with data's namespace,
        dtype and device. {empty}"""


_F = TypeVar("_F", bound=Callable[..., Any])


#: The parameter of the reductions that add or multiply (:func:`_documented`'s `tree`).
_DETERMINISTIC = """
    deterministic : bool, optional
        True: floating rows are combined in one order fixed by the ids alone, a pairwise
        tree over the rows' positions (docs/deterministic.md), so the result has the same
        bits on every backend, mode and chunking, in every run; float16 and bfloat16
        accumulate in float32 and round once. Integer results are exact either way."""


def _documented(empty: str, kinds: str = "", tree: bool = False) -> Callable[[_F], _F]:
    """The decorated function's docstring with its ``{parameters}`` filled in: the shared
    parameters of the segment reductions, the data's dtypes (`kinds`), what an empty
    segment holds (`empty`) and, for a reduction that adds or multiplies (`tree`),
    ``deterministic``."""

    def document(function: _F) -> _F:
        deterministic = _DETERMINISTIC if tree else ""
        parameters = _PARAMETERS.format(kinds=kinds, empty=empty, deterministic=deterministic)
        parameters = parameters.strip()
        function.__doc__ = (function.__doc__ or "").replace("{parameters}", parameters)
        return function

    return document


@_documented(empty="An empty segment is 0.", tree=True)
def segment_sum(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
    deterministic: bool = False,
) -> Any:  # fmt: skip
    """The sum of the rows of `data` in each segment, like ``jax.ops.segment_sum`` and
    ``tf.math.unsorted_segment_sum``: ``out[s] = sum(data[i] for i where segment_ids[i] == s)``.

    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_sum(np.array([1, 2, 3, 4]), [0, 0, 2, 0])
    array([7, 0, 3])
    >>> pg.segment_sum(np.ones((3, 2)), [1, 1, 0], num_segments=3)
    array([[1., 1.],
           [2., 2.],
           [0., 0.]])
    >>> pg.segment_sum(np.array([1, 2, 3]), [0, -1, 1], 2, bad_indices="ignore")
    array([1, 3])
    """
    return _reduced(
        data,
        segment_ids,
        num_segments,
        "sum",
        indices_are_sorted,
        bad_indices,
        empty_value,
        deterministic,
    )


@_documented(empty="An empty segment is 0.", tree=True)
def segment_mean(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
    deterministic: bool = False,
) -> Any:  # fmt: skip
    """The mean of the rows of `data` in each segment (their sum over their count).

    Integer data is floor-divided (as ``//``, and PyTorch's ``index_reduce``), after a
    sum in the data's dtype (wrapping around as its ``+`` does).

    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_mean(np.array([1.0, 2.0, 6.0]), [0, 0, 2])
    array([1.5, 0. , 6. ])
    >>> pg.segment_mean(np.array([-3, -4, 5]), [0, 0, 1])
    array([-4,  5])
    """
    return _reduced(
        data,
        segment_ids,
        num_segments,
        "mean",
        indices_are_sorted,
        bad_indices,
        empty_value,
        deterministic,
    )


@_documented(
    empty="An empty segment holds the dtype's lowest value (``-inf`` for floating dtypes).",
    kinds=" (real: no complex), or bool (the max is any, the min all)",
)
def segment_max(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
) -> Any:  # fmt: skip
    """The largest row of `data` in each segment, elementwise, like ``jax.ops.segment_max``.

    A NaN in a segment makes its maximum NaN.

    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_max(np.array([1.0, 5.0, 3.0]), [0, 0, 2])
    array([  5., -inf,   3.])
    >>> pg.segment_max(np.array([1, 5, 3], dtype=np.int8), [0, 0, 2])
    array([   5, -128,    3], dtype=int8)
    """
    return _reduced(
        data, segment_ids, num_segments, "max", indices_are_sorted, bad_indices, empty_value
    )


@_documented(
    empty="An empty segment holds the dtype's highest value (``inf`` for floating dtypes).",
    kinds=" (real: no complex), or bool (the max is any, the min all)",
)
def segment_min(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
) -> Any:  # fmt: skip
    """The smallest row of `data` in each segment, elementwise, like ``jax.ops.segment_min``.

    A NaN in a segment makes its minimum NaN.

    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_min(np.array([1.0, 5.0, 3.0]), [0, 0, 2])
    array([ 1., inf,  3.])
    """
    return _reduced(
        data, segment_ids, num_segments, "min", indices_are_sorted, bad_indices, empty_value
    )


@_documented(empty="An empty segment is 1.", tree=True)
def segment_prod(
    data: Any, segment_ids: Any, num_segments: int | None = None, *,
    indices_are_sorted: bool = False, bad_indices: Any = "error", empty_value: Any = None,
    deterministic: bool = False,
) -> Any:  # fmt: skip
    """The product of the rows of `data` in each segment, like ``jax.ops.segment_prod``.

    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> import portagather as pg
    >>> pg.segment_prod(np.array([2, 3, 4]), [1, 1, 0], num_segments=3)
    array([4, 6, 1])
    """
    return _reduced(
        data,
        segment_ids,
        num_segments,
        "prod",
        indices_are_sorted,
        bad_indices,
        empty_value,
        deterministic,
    )
