"""The deterministic tree's arithmetic on arrays (docs/deterministic.md): the padding of a
position outside a segment, the widened dtype of float16 and bfloat16, and
:func:`tree_partials`, each segment's rows combined in the pairwise tree over their
positions, on any namespace, with the engine's steps (``Engine.merge_rows``,
``Engine.compiled``). The engines' own code: it names no backend and imports nothing of the
pipeline, which calls it through ``Engine.tree_partials`` (``_deterministic``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from .._arrays import argsort_positions, device_for_new, dtype_name, searchsorted_positions

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


def tree_partials(
    xp: Any, engine: Any, values: Any, slots: Any, segments: int, op: str,
    in_order: bool = False,
) -> tuple[Any, Any]:  # fmt: skip
    """``(partial, count)``: for `values` of shape ``(N, F)`` in segments `slots` (``(N,)``,
    in ``[0, segments]``, where `segments` marks a row of no segment), each segment's rows
    combined by `op` in the tree over their positions ``0 .. N - 1``, with the padding
    (:data:`PADDING`) for an empty segment; and the rows of each segment (in the widest
    integer dtype of the slots' device). The generic plan of ``Engine.tree_partials``.
    `in_order`: the caller promised sorted slots (``indices_are_sorted``), so no sort (with
    unsorted ones the result is unspecified: the rows out of order are not merged right)."""
    n = values.shape[0]
    wide = engine.wide_index_dtype(slots)
    device = device_for_new(slots)
    levels = (n - 1).bit_length()
    keyed = _keys_fit(xp, wide, segments, levels)
    if in_order:
        order = xp.arange(n, dtype=wide, device=device)
        seg = slots
    elif keyed:  # one sort of distinct keys (by segment, then position): no stable argsort
        positions = xp.arange(n, dtype=wide, device=device)
        keys = xp.sort(xp.bitwise_left_shift(xp.astype(slots, wide), levels) + positions)
        order = xp.bitwise_and(keys, (1 << levels) - 1)
        seg = xp.astype(xp.bitwise_right_shift(keys, levels), slots.dtype)
    else:
        order = xp.astype(argsort_positions(xp, slots), wide, copy=False)
        seg = xp.take(slots, order)
    targets = xp.arange(segments, dtype=slots.dtype, device=device)
    first = xp.astype(searchsorted_positions(xp, seg, targets, "left"), wide, copy=False)
    stop = xp.astype(searchsorted_positions(xp, seg, targets, "right"), wide, copy=False)
    count = stop - first
    at = xp.minimum(first, n - 1)
    pad = padding(xp, op, values.dtype)
    # Sorted, a segment's merges touch nearby rows; and the merges write a new array.
    rows = engine.copy(values) if in_order else xp.take(values, order, axis=0)
    merge = engine.merge_rows
    if merge is not None and engine.index_access(slots) == "now" and keyed:
        merged = _merge_by_level(xp, merge, rows, order, seg, levels, op)
    elif engine.compiles_eager_calls and engine.index_access(slots) == "now":
        merged = engine.compiled(_fixed_steps, (xp, engine, levels, op), rows, order, seg)
    else:
        merged = _merge_fixed(xp, engine, rows, order, seg, levels, op)
    found = xp.take(merged, at, axis=0)
    empty = xp.reshape(count == 0, (segments, 1))
    partial = xp.where(empty, xp.asarray(pad, dtype=values.dtype, device=device), found)
    return partial, count


def _fixed_steps(static: tuple[Any, ...], rows: Any, order: Any, seg: Any) -> Any:
    """:func:`_merge_fixed` as ``Engine.compiled`` calls it (an eager JAX call: one program)."""
    xp, engine, levels, op = static
    return _merge_fixed(xp, engine, rows, order, seg, levels, op)


def _keys_fit(xp: Any, wide: Any, segments: int, levels: int) -> bool:
    """Whether ``segment * 2**levels + position`` fits `wide` for every row."""
    return (segments + 1) << levels <= int(xp.iinfo(wide).max)


def bit_length(xp: Any, x: Any) -> Any:
    """``int.bit_length`` of each value of the non-negative integer array `x` (below
    ``2**53``), in its dtype: the exponent of its float64 value where the namespace has
    ``frexp`` (exact: such an integer is a float64), else by halving shifts."""
    frexp = getattr(xp, "frexp", None)
    if frexp is not None and _holds_float64(xp):
        return xp.astype(frexp(xp.astype(x, xp.float64))[1], x.dtype)
    return bit_length_by_shifts(xp, x)


def _holds_float64(xp: Any) -> bool:
    """Whether the namespace holds float64 now (JAX without x64 makes it float32, where
    ``frexp`` would round integers past ``2**24``), as its inspection API says."""
    try:
        return "float64" in xp.__array_namespace_info__().dtypes(kind="real floating")
    except AttributeError:  # a namespace older than the standard's inspection API
        return False


def bit_length_by_shifts(xp: Any, x: Any) -> Any:
    """``int.bit_length`` of each value of the non-negative integer array `x`."""
    bits = int(xp.iinfo(x.dtype).bits)
    length = xp.zeros_like(x)
    shift = bits // 2
    while shift:
        high = xp.bitwise_right_shift(x, shift)
        above = high > 0
        x = xp.where(above, high, x)
        length = length + xp.where(above, shift, 0)
        shift //= 2
    return length + xp.astype(x > 0, x.dtype)


def _merge_by_level(
    xp: Any, merge: Callable[[Any, Any, Any, str], Any], rows: Any, order: Any, seg: Any,
    levels: int, op: str,
) -> Any:  # fmt: skip
    """The tree's merges, level by level, on `rows` (a new array, in sorted order: by segment,
    then position `order`; written in place by `merge`, ``Engine.merge_rows``). Two rows
    ``j`` and ``j + 1`` of one segment are the first rows of the two halves of a block of
    ``2**l`` positions, ``l = bit_length(p_j ^ p_{j+1})``; at level ``l`` the first row of the
    block (found among the keys ``segment * 2**levels + position``) takes ``left op right``,
    both holding their halves' values. Each level's merges touch distinct rows."""
    if levels == 0:
        return rows
    pairs = xp.nonzero(seg[:-1] == seg[1:])[0]
    if not pairs.shape[0]:
        return rows
    here, after = xp.take(order, pairs), xp.take(order, pairs + 1)
    pair_level = bit_length(xp, xp.bitwise_xor(here, after))
    keys = xp.bitwise_left_shift(seg, levels) + order  # sorted: by segment, then position
    block = xp.bitwise_left_shift(xp.bitwise_right_shift(xp.take(keys, pairs), pair_level),
                                  pair_level)  # fmt: skip
    left = searchsorted_positions(xp, keys, block, "left")  # (sorted queries: the fastest)
    by_level = argsort_positions(xp, xp.astype(pair_level, xp.uint8))  # (a radix sort)
    left, right = xp.take(left, by_level), xp.take(pairs, by_level) + 1
    pair_level = xp.take(pair_level, by_level)
    steps = xp.arange(1, levels + 2, dtype=pair_level.dtype, device=device_for_new(order))
    bounds = [int(b) for b in searchsorted_positions(xp, pair_level, steps, "left")]
    for start, stop in itertools.pairwise(bounds):
        if stop > start:
            rows = merge(rows, left[start:stop], right[start:stop], op)
    return rows


def _merge_fixed(
    xp: Any, engine: Any, rows: Any, order: Any, seg: Any, levels: int, op: str
) -> Any:  # fmt: skip
    """The tree's merges over `rows` in sorted order (by segment, then position `order`),
    with fixed shapes: at level ``l`` each row that is the first of its block of ``2**(l-1)``
    positions takes the value of the next such block where both lie in one block of ``2**l``
    (``following``: where the block after each row's begins). The levels are
    ``Engine.repeat``'s (a loop that JAX compiles once)."""
    n = rows.shape[0]
    pad = xp.asarray(padding(xp, op, rows.dtype), dtype=rows.dtype, device=device_for_new(rows))
    following = xp.arange(1, n + 1, dtype=order.dtype, device=device_for_new(order))
    same_segment = seg[1:] == seg[:-1]
    no = xp.zeros((1,), dtype=xp.bool, device=device_for_new(order))

    def level_step(level: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        rows, following = state
        below = xp.bitwise_right_shift(order, level)
        continues = xp.concat([no, same_segment & (below[1:] == below[:-1])])
        at = xp.minimum(following, n - 1)
        block = xp.bitwise_right_shift(order, level + 1)
        joins = (
            ~continues & (following < n) & (xp.take(seg, at) == seg) & (xp.take(block, at) == block)
        )

        def merged(rows: Any) -> Any:
            taken = xp.where(xp.reshape(joins, (n, 1)), xp.take(rows, at, axis=0), pad)
            return combine(op, rows, taken)

        rows = engine.unless_none(xp.any(joins), merged, rows)  # (a level with no merge)
        return rows, xp.where(joins, xp.take(following, at), following)

    return engine.repeat(levels, level_step, (rows, following))[0]
