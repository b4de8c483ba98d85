"""Plain-loop references for the four operations, written from docs/contract.md and nothing else.

They walk every output position with Python loops over NumPy arrays and share no code with
portagather's implementation, so that tests compare against an independent answer. Each
returns a NumPy array or raises ``IndexError`` as the ``"error"`` policy should (``"unchecked"``
is not modelled: its values for bad indices are unspecified).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any, SupportsInt

import numpy as np
import numpy.typing as npt

_ALIASES = {"ERROR": "error", "IGNORE": "ignore", "": "error", "DEFAULT": "error"}


def _policy(bad_indices: str) -> str:
    return _ALIASES.get(bad_indices, bad_indices)


def _fix(value: SupportsInt, n: int, policy: str, allow_negative: bool) -> int | None:
    """The in-range value for one component, or None for a bad one under error/ignore."""
    value = int(value)
    low = -n if allow_negative else 0
    if policy in ("error", "ignore", "unchecked"):
        if not low <= value < n:
            return None
        return value + n if value < 0 else value
    if n == 0:
        return None
    if policy == "wrap":
        return value % n
    if allow_negative and value < 0:
        value += n
    return min(max(value, 0), n - 1)


def _fill(dtype: np.dtype[Any], fill_value: object) -> np.generic:
    # NumPy's stubs type ``a[()]`` as an array; on a 0-d array it is a NumPy scalar.
    if isinstance(fill_value, int | float) and not isinstance(fill_value, bool) and fill_value == 0:
        return np.zeros((), dtype=dtype)[()]  # type: ignore[return-value]
    return np.asarray(fill_value).astype(dtype)[()]  # type: ignore[return-value]


def _bad(policy: str, where: str) -> None:
    if policy == "ignore":
        return None
    raise IndexError(where)


def ref_gather_nd(
    params: npt.ArrayLike,
    indices: npt.ArrayLike,
    batch_dims: int = 0,
    bad_indices: str = "error",
    fill_value: object = 0,
) -> npt.NDArray[Any]:
    params, indices = np.asarray(params), np.asarray(indices)
    policy, b = _policy(bad_indices), batch_dims
    depth = indices.shape[-1]
    out_shape = params.shape[:b] + indices.shape[b:-1] + params.shape[b + depth :]
    out = np.empty(out_shape, dtype=params.dtype)
    if out.size == 0:
        return out
    fill = _fill(params.dtype, fill_value)
    for position in itertools.product(*(range(s) for s in indices.shape[:-1])):
        vector = indices[position]
        fixed = [
            _fix(vector[j], params.shape[b + j], policy, allow_negative=False) for j in range(depth)
        ]
        if any(c is None for c in fixed):
            _bad(policy, f"indices{list(position)} = {vector.tolist()}")
            out[position] = fill
        else:
            out[position] = params[position[:b] + tuple(fixed)]
    return out


def ref_gather(
    params: npt.ArrayLike,
    indices: npt.ArrayLike,
    axis: int | None = None,
    batch_dims: int = 0,
    bad_indices: str = "error",
    fill_value: object = 0,
) -> npt.NDArray[Any]:
    params, indices = np.asarray(params), np.asarray(indices)
    policy = _policy(bad_indices)
    axis = batch_dims if axis is None else axis  # TensorFlow: the raw batch_dims
    b = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    axis = axis + params.ndim if axis < 0 else axis
    n = params.shape[axis]
    out_shape = params.shape[:axis] + indices.shape[b:] + params.shape[axis + 1 :]
    out = np.empty(out_shape, dtype=params.dtype)
    if out.size == 0:
        return out
    fill = _fill(params.dtype, fill_value)
    q = indices.ndim
    for position in itertools.product(*(range(s) for s in out_shape)):
        batch = position[:b]
        outer = position[b:axis]
        grid = position[axis : axis + q - b]
        inner = position[axis + q - b :]
        value = _fix(indices[batch + grid], n, policy, allow_negative=False)
        if value is None:
            _bad(policy, f"indices{list(batch + grid)} = {int(indices[batch + grid])}")
            out[position] = fill
        else:
            out[position] = params[batch + outer + (value,) + inner]
    return out


def ref_gather_d(
    x: npt.ArrayLike,
    dim: int,
    index: npt.ArrayLike,
    bad_indices: str = "error",
    fill_value: object = 0,
) -> npt.NDArray[Any]:
    x, index = np.asarray(x), np.asarray(index)
    policy = _policy(bad_indices)
    dim = dim + x.ndim if dim < 0 else dim
    out = np.empty(index.shape, dtype=x.dtype)
    if out.size == 0:
        return out
    fill = _fill(x.dtype, fill_value)
    for position in itertools.product(*(range(s) for s in index.shape)):
        value = _fix(index[position], x.shape[dim], policy, allow_negative=True)
        if value is None:
            _bad(policy, f"index{list(position)} = {int(index[position])}")
            out[position] = fill
        else:
            out[position] = x[position[:dim] + (value,) + position[dim + 1 :]]
    return out


def _along_axis(
    x: npt.NDArray[Any], indices: npt.NDArray[Any], axis: int
) -> tuple[int, tuple[int, ...]]:
    """`axis` made non-negative, and the shape of take_along_axis's result (put_along_axis's
    values): the indices' size along `axis`, elsewhere the sizes of `x` and `indices`
    broadcast."""
    axis = axis + x.ndim if axis < 0 else axis
    shape = tuple(
        indices.shape[d]
        if d == axis
        else (x.shape[d] if indices.shape[d] == 1 else indices.shape[d])
        for d in range(x.ndim)
    )
    return axis, shape


def _along_axis_places(
    x: npt.NDArray[Any],
    indices: npt.NDArray[Any],
    axis: int,
    shape: tuple[int, ...],
    policy: str,
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...] | None]]:
    """Each position of `shape`, in row-major order, with the place in `x` its index
    addresses, or None for a bad index (after `_bad`)."""
    for position in itertools.product(*(range(s) for s in shape)):
        at_index = tuple(0 if indices.shape[d] == 1 else p for d, p in enumerate(position))
        value = _fix(indices[at_index], x.shape[axis], policy, allow_negative=True)
        if value is None:
            _bad(policy, f"indices{list(at_index)} = {int(indices[at_index])}")
            yield position, None
            continue
        place = tuple(0 if x.shape[d] == 1 else p for d, p in enumerate(position))
        yield position, place[:axis] + (value,) + place[axis + 1 :]


def ref_take_along_axis(
    x: npt.ArrayLike,
    indices: npt.ArrayLike,
    axis: int = -1,
    bad_indices: str = "error",
    fill_value: object = 0,
) -> npt.NDArray[Any]:
    x, indices = np.asarray(x), np.asarray(indices)
    policy = _policy(bad_indices)
    axis, out_shape = _along_axis(x, indices, axis)
    out = np.empty(out_shape, dtype=x.dtype)
    if out.size == 0:
        return out
    fill = _fill(x.dtype, fill_value)
    for position, source in _along_axis_places(x, indices, axis, out_shape, policy):
        out[position] = fill if source is None else x[source]
    return out


# The scatters: every update, in row-major order of the updates, combined into a copy of the
# data one at a time (so under "update" a later update overwrites an earlier one).


def _apply(out: npt.NDArray[Any], target: tuple[int, ...], value: Any, reduce: str) -> None:
    old = out[target]
    if out.dtype == bool and reduce != "update":  # OR and AND, as TensorFlow and PyTorch
        combined = {"add": old or value, "max": old or value}.get(reduce, old and value)
        out[target] = bool(combined)
        return
    if reduce == "add":
        value = old + value
    elif reduce == "multiply":
        value = old * value
    elif reduce == "min":
        value = min(old, value)
    elif reduce == "max":
        value = max(old, value)
    out[target] = value


def ref_scatter_nd(
    params: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    batch_dims: int = 0,
    reduce: str = "update",
    bad_indices: str = "error",
) -> npt.NDArray[Any]:
    params, indices = np.asarray(params), np.asarray(indices)
    out: npt.NDArray[Any] = params.copy()
    policy, b = _policy(bad_indices), batch_dims
    depth = indices.shape[-1]
    grid = indices.ndim - 1 - b
    updates = np.asarray(updates, dtype=params.dtype)
    for position in itertools.product(*(range(s) for s in updates.shape)):
        vector = indices[position[: b + grid]]
        fixed = [
            _fix(vector[j], params.shape[b + j], policy, allow_negative=False) for j in range(depth)
        ]
        if any(c is None for c in fixed):
            _bad(policy, f"indices{list(position[: b + grid])} = {vector.tolist()}")
            continue
        target = position[:b] + tuple(int(c) for c in fixed if c is not None) + position[b + grid :]
        _apply(out, target, updates[position], reduce)
    return out


def ref_scatter_d(
    x: npt.ArrayLike,
    dim: int,
    index: npt.ArrayLike,
    src: npt.ArrayLike,
    reduce: str = "update",
    bad_indices: str = "error",
) -> npt.NDArray[Any]:
    x, index = np.asarray(x), np.asarray(index)
    out: npt.NDArray[Any] = x.copy()
    src = np.asarray(src, dtype=x.dtype)
    policy = _policy(bad_indices)
    dim = dim + x.ndim if dim < 0 else dim
    for position in itertools.product(*(range(s) for s in index.shape)):
        value = _fix(index[position], x.shape[dim], policy, allow_negative=True)
        if value is None:
            _bad(policy, f"index{list(position)} = {int(index[position])}")
            continue
        _apply(out, position[:dim] + (value,) + position[dim + 1 :], src[position], reduce)
    return out


def ref_put_along_axis(
    x: npt.ArrayLike,
    indices: npt.ArrayLike,
    values: npt.ArrayLike,
    axis: int = -1,
    reduce: str = "update",
    bad_indices: str = "error",
) -> npt.NDArray[Any]:
    x, indices = np.asarray(x), np.asarray(indices)
    out: npt.NDArray[Any] = x.copy()
    policy = _policy(bad_indices)
    axis, shape = _along_axis(x, indices, axis)
    values = np.broadcast_to(np.asarray(values, dtype=x.dtype), shape)
    for position, target in _along_axis_places(x, indices, axis, shape, policy):
        if target is not None:
            _apply(out, target, values[position], reduce)
    return out


# The segment reductions (docs/contract.md, "Segment reductions"): each row of the data, in
# row-major order of the ids, combined into its segment one at a time, from the identity.


def _identity(reduce: str, dtype: np.dtype[Any]) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":  # max is any, min is all: False and True when empty (jax.ops)
        return reduce == "min"
    if dtype.kind == "f":
        return -np.inf if reduce == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "max" else info.max


def _combine(acc: npt.NDArray[Any], row: npt.NDArray[Any], reduce: str) -> npt.NDArray[Any]:
    # Whole-array operations: integers wrap around without a warning, as the dtype's do.
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "max": np.maximum}
    return np.asarray(ufunc.get(reduce, np.minimum)(acc, row))


def _finish_mean(total: npt.NDArray[Any], count: int) -> npt.NDArray[Any]:
    """The sum over the count: floor division for integers, else the exact quotient rounded
    once to the dtype (the float64 quotient of exact values is; complex parts alike)."""
    count = max(count, 1)
    if total.dtype.kind in "iu":
        return np.array([int(v) // count for v in total.reshape(-1).tolist()], dtype=object)
    return (total.astype(np.complex128 if total.dtype.kind == "c" else np.float64) / count).astype(
        total.dtype
    )


def ref_segment(
    data: npt.ArrayLike,
    segment_ids: npt.ArrayLike,
    num_segments: int | None = None,
    reduce: str = "sum",
    bad_indices: str = "error",
    indices_are_sorted: bool = False,  # noqa: ARG001 (a promise; changes no value)
) -> npt.NDArray[Any]:
    data, ids = np.asarray(data), np.asarray(segment_ids)
    policy = _policy(bad_indices)
    if num_segments is None:
        num_segments = max(0, int(ids.max()) + 1) if ids.size else 0
    inner = data.shape[ids.ndim :]
    out = np.empty((num_segments, *inner), dtype=data.dtype)
    totals = [np.full(inner, _identity(reduce, data.dtype), dtype=data.dtype)] * num_segments
    counts = [0] * num_segments
    if data.size:
        for position in itertools.product(*(range(s) for s in ids.shape)):
            segment = _fix(ids[position], num_segments, policy, allow_negative=False)
            if segment is None:
                _bad(policy, f"segment_ids{list(position)} = {int(ids[position])}")
                continue
            totals[segment] = _combine(totals[segment], data[position], reduce)
            counts[segment] += 1
    for segment in range(num_segments):
        total = np.asarray(totals[segment], dtype=data.dtype)
        if reduce == "mean":
            out[segment] = _finish_mean(total, counts[segment]).reshape(inner)
        else:
            out[segment] = total
    return out


def ref_segment_csr(
    data: npt.ArrayLike, offsets: npt.ArrayLike, reduce: str = "sum", bad_indices: str = "error"
) -> npt.NDArray[Any]:
    """``out[β, s] = reduce(data[β, offsets[β, s]:offsets[β, s + 1]])`` for the leading
    positions ``β`` of `offsets`; offsets outside ``[0, n]`` or falling raise IndexError
    under ``"error"``."""
    data, offsets = np.asarray(data), np.asarray(offsets)
    axis = offsets.ndim - 1
    n, segments = data.shape[axis], offsets.shape[-1] - 1
    out = np.empty((*data.shape[:axis], segments, *data.shape[axis + 1 :]), dtype=data.dtype)
    for batch in itertools.product(*(range(s) for s in offsets.shape[:-1])):
        line = [int(v) for v in offsets[batch]]
        for j, value in enumerate(line):
            if bad_indices == "error" and (not 0 <= value <= n or (j and value < line[j - 1])):
                msg = f"offsets{[*batch, j]} = {value}"
                raise IndexError(msg)
        for s in range(segments):
            rows = data[batch][line[s] : line[s + 1]]
            ids = np.zeros(rows.shape[:1], dtype=np.int64)
            out[batch + (s,)] = ref_segment(rows, ids, 1, reduce)[0]
    return out


# The segment toolkit (docs/contract.md, "The segment toolkit"): each segment's rows gathered
# in row-major order of the ids, then each function computed on Python floats (float64) per
# element of the inner axes, and rounded once to the data's dtype.


def _members(
    ids: npt.NDArray[Any], num_segments: int, policy: str
) -> tuple[list[list[int]], list[int | None]]:
    """The flat row positions of each segment, and each row's segment (None: dropped)."""
    members: list[list[int]] = [[] for _ in range(num_segments)]
    segment_of: list[int | None] = []
    for flat, position in enumerate(itertools.product(*(range(s) for s in ids.shape))):
        segment = _fix(ids[position], num_segments, policy, allow_negative=False)
        if segment is None:
            _bad(policy, f"segment_ids{list(position)} = {int(ids[position])}")
        else:
            members[segment].append(flat)
        segment_of.append(segment)
    return members, segment_of


def _shift(values: list[float]) -> float:
    """The softmax's shift: the largest value where it is finite, else 0."""
    largest = max(values) if values else 0.0
    return largest if math.isfinite(largest) else 0.0


def _exp(x: float) -> float:
    return math.inf if x > 709.0 else math.exp(x)


def _log(x: float) -> float:
    return -math.inf if x == 0 else math.log(x)


def _div(a: float, b: float) -> float:
    with np.errstate(all="ignore"):
        return float(np.float64(a) / np.float64(b))


def _per_segment(op: str, values: list[float], correction: float) -> float:
    """What `op` gives one segment whose values (one inner element) are `values`."""
    if op == "logsumexp":
        if any(math.isnan(v) for v in values):
            return math.nan
        shift = _shift(values)
        with np.errstate(all="ignore"):
            total = math.fsum(_exp(v - shift) for v in values)
            return float(np.float64(_log(total)) + np.float64(shift))
    if not values:
        return math.nan
    mean = _div(math.fsum(values), len(values))
    squares = math.fsum((v - mean) ** 2 for v in values)
    freedom = len(values) - correction
    var = _div(squares, freedom) if freedom > 0 else math.nan
    return math.sqrt(var) if op == "std" and not math.isnan(var) else var


def _first_extreme(values: list[Any], op: str) -> int:
    """The position in `values` of the first largest (``argmax``) or smallest one, a NaN
    counting as both."""
    for j, v in enumerate(values):
        if isinstance(v, float) and math.isnan(v):
            return j
    best = max(values) if op == "argmax" else min(values)
    return values.index(best)


def ref_segment_toolkit(
    data: npt.ArrayLike,
    segment_ids: npt.ArrayLike,
    num_segments: int | None = None,
    op: str = "softmax",
    bad_indices: str = "error",
    indices_are_sorted: bool = False,  # noqa: ARG001 (a promise; changes no value)
    correction: float = 0,
    empty_value: Any = None,
) -> npt.NDArray[Any]:
    """``segment_<op>`` for the toolkit's ops: softmax, log_softmax (data-shaped: a dropped
    row is 0 and -inf), logsumexp (empty: -inf), argmax and argmin (empty: the number of
    rows), var and std (empty, or no degree of freedom left: NaN); `empty_value` where given
    replaces an empty segment's value."""
    data, ids = np.asarray(data), np.asarray(segment_ids)
    policy = _policy(bad_indices)
    if num_segments is None:
        num_segments = max(0, int(ids.max()) + 1) if ids.size else 0
    if ids.size and data.size and not num_segments and policy != "ignore":
        msg = "num_segments = 0"
        raise IndexError(msg)
    rows = int(np.prod(ids.shape))
    inner = data.shape[ids.ndim :]
    flat = data.reshape((rows, *inner))
    members, segment_of = (
        _members(ids, num_segments, policy) if data.size else ([[]] * num_segments, [])
    )
    if op in ("softmax", "log_softmax"):
        out = np.empty(flat.shape, dtype=np.float64)
        for element in np.ndindex(*inner):
            for row in range(rows):
                segment = segment_of[row] if segment_of else None
                if segment is None:
                    out[((row,) + element)] = 0.0 if op == "softmax" else -math.inf
                    continue
                values = [float(flat[((j,) + element)]) for j in members[segment]]
                x = float(flat[((row,) + element)])
                if any(math.isnan(v) for v in values):
                    out[((row,) + element)] = math.nan
                    continue
                shift = _shift(values)
                with np.errstate(all="ignore"):
                    total = math.fsum(_exp(v - shift) for v in values)
                    if op == "softmax":
                        out[((row,) + element)] = _div(_exp(x - shift), total)
                    else:
                        out[((row,) + element)] = float(
                            np.float64(x - shift) - np.float64(_log(total))
                        )
        return out.reshape(data.shape).astype(data.dtype)
    result_dtype = np.int64 if op in ("argmax", "argmin") else data.dtype
    out = np.empty((num_segments, *inner), dtype=np.float64 if result_dtype != np.int64 else object)
    for segment in range(num_segments):
        for element in np.ndindex(*inner):
            raw = [flat[((j,) + element)].item() for j in members[segment]]
            if op in ("argmax", "argmin"):
                value: Any = members[segment][_first_extreme(raw, op)] if raw else rows
            else:
                value = _per_segment(op, [float(v) for v in raw], correction)
            if not raw and empty_value is not None:
                value = empty_value
            out[((segment,) + element)] = value
    return out.astype(result_dtype)


def ref_segment_count(
    segment_ids: npt.ArrayLike, num_segments: int | None = None, bad_indices: str = "error"
) -> npt.NDArray[np.int64]:
    """The rows of each segment."""
    ids = np.asarray(segment_ids)
    if num_segments is None:
        num_segments = max(0, int(ids.max()) + 1) if ids.size else 0
    members, _ = _members(ids, num_segments, _policy(bad_indices))
    return np.array([len(m) for m in members], dtype=np.int64)


def ref_csr_toolkit(
    data: npt.ArrayLike, offsets: npt.ArrayLike, op: str, **options: Any
) -> npt.NDArray[Any]:
    """``segment_csr(reduce=op)`` for the toolkit's ops: each batch's rows with the segment
    the offsets give them (a row in none dropped), through :func:`ref_segment_toolkit`."""
    data, offsets = np.asarray(data), np.asarray(offsets)
    axis = offsets.ndim - 1
    n, segments = data.shape[axis], offsets.shape[-1] - 1
    row_shaped = op in ("softmax", "log_softmax")
    dtype = np.int64 if op in ("argmax", "argmin") else data.dtype
    shape = data.shape if row_shaped else (*data.shape[:axis], segments, *data.shape[axis + 1 :])
    out = np.empty(shape, dtype=dtype)
    for batch in itertools.product(*(range(s) for s in offsets.shape[:-1])):
        line = [int(v) for v in offsets[batch]]
        ids = np.full(n, -1, dtype=np.int64)
        for s in range(segments):
            ids[line[s] : line[s + 1]] = s
        out[batch] = ref_segment_toolkit(data[batch], ids, segments, op, "ignore", **options)
    return out


def ref_tree_segment(
    data: npt.ArrayLike, segment_ids: npt.ArrayLike, num_segments: int, reduce: str = "sum"
) -> npt.NDArray[Any]:
    """``segment_<reduce>(..., deterministic=True, bad_indices="ignore")`` as the order of
    docs/deterministic.md defines it, one element at a time with NumPy scalars: each
    segment's rows (at their positions in the flattened ids; a negative id or one past the
    end drops its row) combined by the recursion over aligned power-of-two blocks of
    positions, in float32 for float16 and bfloat16, then a zero sum or mean made +0 (for
    complex, where both parts are zero), the mean's division by the count, and one rounding
    to the data's dtype. An empty segment is 0 (1 for a product)."""
    data, ids = np.asarray(data), np.asarray(segment_ids)
    n = ids.size
    flat_ids = ids.reshape(-1).tolist()
    inner = data.shape[ids.ndim :]
    rows = data.reshape(n, -1)
    low = data.dtype.itemsize == 2 and data.dtype.kind not in "iu"  # float16, bfloat16
    acc = np.dtype(np.float32) if low else data.dtype
    span = 1 << max(n - 1, 0).bit_length()
    out = np.empty((num_segments, rows.shape[1]), dtype=acc)

    def tree(positions: list[int], start: int, size: int, column: int) -> Any:
        if len(positions) == 1:
            return acc.type(rows[positions[0], column])
        middle = start + size // 2
        left = [p for p in positions if p < middle]
        right = [p for p in positions if p >= middle]
        if not left:
            return tree(right, middle, size // 2, column)
        if not right:
            return tree(left, start, size // 2, column)
        a, b = tree(left, start, size // 2, column), tree(right, middle, size // 2, column)
        return a * b if reduce == "prod" else a + b

    for segment in range(num_segments):
        positions = [p for p in range(n) if flat_ids[p] == segment]
        for column in range(rows.shape[1]):
            if not positions:
                value = acc.type(1 if reduce == "prod" else 0)
            else:
                value = tree(positions, 0, span, column)
            if reduce != "prod" and value == 0:  # -0.0 is +0.0 (complex: both parts 0)
                value = acc.type(0)
            if reduce == "mean" and positions:
                value = value / acc.type(len(positions))
            out[segment, column] = value
    return out.astype(data.dtype).reshape((num_segments, *inner))


def ref_tree_scatter(
    data: npt.ArrayLike, targets: list[int | None], updates: npt.ArrayLike, reduce: str
) -> npt.NDArray[Any]:
    """A scatter ``"add"`` or ``"multiply"`` with ``deterministic=True`` as
    docs/deterministic.md defines it: `targets` holds the flat (row-major) position in
    `data` of each element of the row-major `updates` (None: dropped); each element's
    updates are combined by the tree over their positions in the updates, then with the
    element's value (``out = data op tree``), in float32 for float16 and bfloat16, rounded
    once. Plain loops of NumPy scalars."""
    data, updates = np.asarray(data), np.asarray(updates).reshape(-1)
    low = data.dtype.itemsize == 2 and data.dtype.kind not in "iu"
    acc = np.dtype(np.float32) if low else data.dtype
    span = 1 << max(len(targets) - 1, 0).bit_length()
    flat = data.reshape(-1).astype(acc)

    def tree(positions: list[int], start: int, size: int) -> Any:
        if len(positions) == 1:
            return acc.type(updates[positions[0]])
        middle = start + size // 2
        left = [p for p in positions if p < middle]
        right = [p for p in positions if p >= middle]
        if not left:
            return tree(right, middle, size // 2)
        if not right:
            return tree(left, start, size // 2)
        a, b = tree(left, start, size // 2), tree(right, middle, size // 2)
        return a * b if reduce == "multiply" else a + b

    by_target: dict[int, list[int]] = {}
    for position, target in enumerate(targets):
        if target is not None:
            by_target.setdefault(target, []).append(position)
    for target, positions in by_target.items():
        value = tree(positions, 0, span)
        flat[target] = flat[target] * value if reduce == "multiply" else flat[target] + value
    return flat.astype(data.dtype).reshape(data.shape)
