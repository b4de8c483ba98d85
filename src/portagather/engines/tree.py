"""The deterministic tree's arithmetic on arrays (docs/deterministic.md):
:func:`tree_partials`, each segment's rows combined in the pairwise tree over their
positions (its elements, the padding, the widened dtype and the one operation, are
``_arrays``'), on any namespace, with the engine's steps (``Engine.merge_rows``,
``Engine.compiled``). The engines' own code: it names no backend and imports nothing of the
pipeline, which calls it through ``Engine.tree_partials`` (``_deterministic``)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from .._arrays import (
    argsort_positions,
    combine,
    device_for_new,
    padding,
    searchsorted_positions,
)


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
    if engine.merge_rows is not None and engine.index_access(slots) == "now":
        return _eager_partials(xp, engine, values, slots, segments, op, in_order)
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
    if engine.compiles_eager_calls and engine.index_access(slots) == "now":
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


def _eager_partials(
    xp: Any, engine: Any, values: Any, slots: Any, segments: int, op: str, in_order: bool
) -> tuple[Any, Any]:  # fmt: skip
    """:func:`tree_partials` where the engine runs each step as it comes and merges rows in
    place (``Engine.merge_rows``): the integer work in the namespace of
    ``Engine.tree_index_engine``. Sorted slots (promised, or found sorted by one comparison
    of neighbours) take :func:`_contiguous_tree`, which moves no row; others are sorted by
    segment, then position, and merged by :func:`_linked_merges`."""
    n = values.shape[0]
    index_engine, slots = engine.tree_index_engine(slots)
    ixp = index_engine.xp
    wide = index_engine.wide_index_dtype(slots)
    levels = (n - 1).bit_length()
    in_order = in_order or _found_sorted(ixp, slots)
    if in_order:
        seg, order = slots, None
    elif _keys_fit(ixp, wide, segments, levels):  # one sort of distinct keys: no stable sort
        keys = index_engine.sorted_keys(slots, levels, wide)
        order = ixp.bitwise_and(keys, (1 << levels) - 1)
        seg = ixp.bitwise_right_shift(keys, levels)
    else:
        order = ixp.astype(argsort_positions(ixp, slots), wide, copy=False)
        seg = ixp.take(slots, order)
    count = _sorted_counts(ixp, index_engine, seg, segments, wide)
    first = ixp.cumulative_sum(count) - count
    start = ixp.minimum(first, n - 1)
    padded = False  # whether an empty segment's row holds the padding already
    if order is None:
        found, padded = _contiguous_tree(xp, engine, ixp, values, seg, start, count, op)
    else:
        rows = engine.take_rows(values, engine.tree_indices(order))
        rows = _linked_merges(ixp, index_engine, engine, rows, order, seg, levels, op)
        found = engine.take_rows(rows, engine.tree_indices(start))
    empty = count == 0
    if padded or not bool(ixp.any(empty)):
        return found, engine.tree_indices(count)
    pad = xp.asarray(padding(xp, op, values.dtype), dtype=values.dtype,
                     device=device_for_new(values))  # fmt: skip
    empty = engine.tree_indices(ixp.reshape(empty, (segments, 1)))
    return xp.where(empty, pad, found), engine.tree_indices(count)


def _found_sorted(ixp: Any, slots: Any) -> bool:
    """Whether the 1-d `slots` are sorted (a look at the first few first: most unsorted ids
    are unsorted there)."""
    head = slots[:_LOOK]
    if not bool(ixp.all(head[:-1] <= head[1:])):
        return False
    return slots.shape[0] <= _LOOK or bool(ixp.all(slots[:-1] <= slots[1:]))


#: The slots :func:`_found_sorted` looks at first.
_LOOK = 256


def _sorted_counts(ixp: Any, index_engine: Any, seg: Any, segments: int, wide: Any) -> Any:
    """The rows of each of the `segments` segments in the sorted `seg` (whose values lie in
    ``[0, segments]``): the backend's ``bincount`` where it has one, else by ``searchsorted``."""
    counted = None
    if index_engine.counts:
        counted = index_engine.counted(seg, segments + 1, segments + 1, None)
    if counted is not None:
        return ixp.astype(counted[:segments], wide, copy=False)
    targets = ixp.arange(segments, dtype=seg.dtype, device=device_for_new(seg))
    first = searchsorted_positions(ixp, seg, targets, "left")
    stop = searchsorted_positions(ixp, seg, targets, "right")
    return ixp.astype(stop - first, wide, copy=False)


#: The bytes of rows that :func:`_contiguous_tree` takes at a time: its temporaries stay in
#: cache and come from the allocator's free memory instead of fresh pages.
CHUNK_BYTES = 2**22


def _contiguous_tree(
    xp: Any, engine: Any, ixp: Any, values: Any, seg: Any, start: Any, count: Any, op: str
) -> tuple[Any, bool]:  # fmt: skip
    """``(found, padded)``: each segment's value (``(segments, F)``; any value for an empty
    one, but the padding where `padded`, as :func:`_full_block_tree` leaves it) where its rows
    are contiguous and in position order (`seg` sorted: ``ixp``'s, as are `start`, each
    segment's first row, and `count`): the tree over positions by dense passes over aligned
    blocks (:func:`_block_levels`), first within each chunk of ``2**k`` rows, then over the
    chunks' blocks. A segment of rows ``s .. e`` lies whole in one block first at level
    ``L = bit_length(s ^ e)``, where it crosses that block's middle: its value is that
    block's merge (its one row where ``L = 0``). No row moves."""
    n = values.shape[0]
    row_bytes = _row_bytes(values)
    if (engine.full_blocks and row_bytes >= INDEXED_ROW_BYTES
            and engine.level_buffer(values, 0) is not None):  # fmt: skip
        return _full_block_tree(xp, engine, ixp, values, start, count, op), True
    pad = xp.asarray(padding(xp, op, values.dtype), dtype=values.dtype,
                     device=device_for_new(values))  # fmt: skip
    width = math.prod(values.shape[1:])
    k = max(1, min((n - 1).bit_length(), (CHUNK_BYTES // max(row_bytes, 1)).bit_length() - 1))
    size = 1 << k
    stop = ixp.maximum(start + count - 1, start)
    level = bit_length(ixp, ixp.bitwise_xor(start, stop))
    flat = values if width != 1 else xp.reshape(values, (n,))
    found = engine.take_rows(flat, engine.tree_indices(start))
    chunks = (n + size - 1) // size
    edges = ixp.arange(0, (chunks + 1) * size, size, dtype=start.dtype)
    bounds = [int(b) for b in searchsorted_positions(ixp, start, edges, "left")]
    indexed = row_bytes >= INDEXED_ROW_BYTES and engine.level_buffer(values, 0) is not None
    pieces, heads, tails, singles, firsts, lasts = [], [], [], [], [], []
    for c in range(chunks):
        low = c * size
        if indexed:
            part = _indexed_levels(engine, ixp, flat[low : low + size],
                                   seg[low : low + size], op, start.dtype)  # fmt: skip
        else:
            part = _block_levels(xp, engine, ixp, flat[low : low + size], None,
                                 seg[low : low + size], op, pad)  # fmt: skip
        heads.append(part.head)
        tails.append(part.tail)
        singles.append(part.single)
        firsts.append(part.firsts)
        lasts.append(part.lasts)
        here = slice(bounds[c], bounds[c + 1])
        if bounds[c + 1] > bounds[c]:
            pieces.append(_finished(xp, engine, ixp, part, found[here], start[here] - low,
                                    level[here], 0))  # fmt: skip
    found = xp.concat(pieces) if len(pieces) > 1 else pieces[0]
    if chunks > 1:
        part = _block_levels(xp, engine, ixp, xp.concat(heads), xp.concat(tails),
                             ixp.concat(firsts), op, pad, ixp.concat(singles),
                             ixp.concat(lasts))  # fmt: skip
        found = _finished(xp, engine, ixp, part, found, start, level, k)
    return (found if width != 1 else xp.reshape(found, (found.shape[0], 1))), False


def _row_bytes(values: Any) -> int:
    """The bytes of one row of the 2-d `values` (4 per element where its dtype says none)."""
    width = math.prod(values.shape[1:])
    return int(width * values.dtype.itemsize) if hasattr(values.dtype, "itemsize") else 4 * width


def _small_ints(ixp: Any, x: Any, largest: int) -> Any:
    """The integer array `x`, whose values lie in ``[-largest, largest]``, as int16 where they
    fit (NumPy's stable sort of 16-bit integers is a radix sort)."""
    return ixp.astype(x, ixp.int16) if largest < 2**15 else x


def _full_block_tree(
    xp: Any, engine: Any, ixp: Any, values: Any, start: Any, count: Any, op: str
) -> Any:  # fmt: skip
    """:func:`_contiguous_tree` from full blocks (where the engine sets
    ``Engine.full_blocks``): a segment of rows ``s .. e`` whose block of level ``L =
    bit_length(s ^ e)`` has its middle at ``m`` is ``left op right``, ``left`` the tree over
    ``s .. m - 1`` (a suffix of the block's left half) and ``right`` over ``m .. e`` (a prefix
    of its right half). The suffix is made of the aligned full blocks of the set bits of its
    length ``m - s``, from ``s`` the smallest first, and its tree is ``((f0 op f1) op f2)
    ...``; the prefix of those of ``e + 1 - m``, the largest first, and its tree is ``g0 op
    (g1 op (... g_last))``. Both fold from their smallest block up (``op`` commutes bit for
    bit), one block of each side a round; the segments run sorted by their rounds, so that a
    round combines a prefix of them, and a side with fewer blocks takes the padding, which
    changes no bit. A single row (``L = 0``) is its left side, its right side the padding.

    A full block's tree is a perfect pairwise tree, ``P[l][b] = P[l - 1][2b] op P[l -
    1][2b + 1]``: the pyramid is made densely chunk by chunk in one reused chunk-sized buffer
    (blocks across two segments are made too and never read), and the blocks that the
    rounds read are copied out of it into one array (:func:`_needed_blocks`). Returns
    ``(segments, F)``, an empty segment's row the padding. The integer work runs in int32
    where the rows' numbers fit."""
    segments = start.shape[0]
    inner = tuple(values.shape[1:])
    if values.shape[0] < 2**31:
        start, count = ixp.astype(start, ixp.int32), ixp.astype(count, ixp.int32)
    pad = xp.full((1, *inner), padding(xp, op, values.dtype), dtype=values.dtype,
                  device=device_for_new(values))  # fmt: skip
    stop = start + ixp.maximum(count, ixp.ones_like(count)) - 1
    level = bit_length(ixp, ixp.bitwise_xor(start, stop))
    half = ixp.maximum(level - 1, ixp.zeros_like(level))
    middle = ixp.where(level > 0,
                       ixp.bitwise_left_shift(ixp.bitwise_right_shift(stop, half), half),
                       stop + 1)  # fmt: skip
    left, right = middle - start, stop + 1 - middle
    rounds = ixp.zeros_like(left)
    bits_left, bits_right = left, right
    while True:  # rounds: the larger number of set bits of the two sides
        busy = (bits_left | bits_right) != 0
        if not bool(ixp.any(busy)):
            break
        rounds = rounds + ixp.astype(busy, rounds.dtype)
        bits_left = bits_left & (bits_left - 1)
        bits_right = bits_right & (bits_right - 1)
    rounds = ixp.where(count > 0, rounds, ixp.zeros_like(rounds))
    by_rounds = ixp.argsort(_small_ints(ixp, -rounds, 64), stable=True)
    rounds = ixp.take(rounds, by_rounds)
    active = [int(ixp.sum(rounds > j)) for j in range(int(rounds[0]) if segments else 0)]
    if not active:
        return xp.full((segments, *inner), padding(xp, op, values.dtype), dtype=values.dtype,
                       device=device_for_new(values))  # fmt: skip
    live = by_rounds[: active[0]]
    position, middle = ixp.take(start, live), ixp.take(middle, live)
    left, right = ixp.take(left, live), ixp.take(right, live)
    levels, blocks = [], []  # each slot's block (-1: the padding): its level and number
    for c in active:
        position, middle, left, right = position[:c], middle[:c], left[:c], right[:c]
        low_left, low_right = left & -left, right & -right
        at_right = middle + right - low_right
        size = ixp.concat([low_left, low_right])
        lev = bit_length(ixp, size) - 1
        at = ixp.bitwise_right_shift(ixp.concat([position, at_right]),
                                     ixp.maximum(lev, ixp.zeros_like(lev)))  # fmt: skip
        levels.append(lev)
        blocks.append(at)
        position = position + low_left
        left, right = left - low_left, right - low_right
    store, row = _needed_blocks(engine, ixp, values, ixp.concat(levels),
                                ixp.concat(blocks), op, pad)  # fmt: skip
    first = 2 * active[0]
    rounds_buffer = engine.level_buffer(values, first + 1)  # (then the padding)
    engine.take_rows_into(store, engine.tree_indices(row[:first]), rounds_buffer[:first])
    engine.copy_into(pad, rounds_buffer[first:])
    acc = xp.reshape(rounds_buffer[:first], (2, active[0], *inner))
    if len(active) > 1:
        taken = engine.level_buffer(values, 2 * active[1])
        base = first
        for c in active[1:]:
            part = taken[: 2 * c]
            engine.take_rows_into(store, engine.tree_indices(row[base : base + 2 * c]), part)
            both = acc[:, :c]
            engine.combine_into(op, both, xp.reshape(part, (2, c, *inner)), both)
            base += 2 * c
    engine.combine_into(op, acc[0], acc[1], acc[0])
    # each segment's row of `rounds_buffer`: its total, or the padding after the rounds
    rank = ixp.full(segments, first, dtype=start.dtype)
    rank[live] = ixp.arange(active[0], dtype=start.dtype)
    found = engine.level_buffer(values, segments)
    engine.take_rows_into(rounds_buffer, engine.tree_indices(rank), found)
    return found


def _needed_blocks(
    engine: Any, ixp: Any, values: Any, level: Any, block: Any, op: str, pad: Any
) -> tuple[Any, Any]:  # fmt: skip
    """``(store, row)``: the full blocks of `level` and number `block` (each slot's; level
    -1 the padding) in one array `store`, the slot's at ``store[row]``: the padding first,
    then single rows straight from `values`, then the blocks of each chunk of ``2**k`` rows
    (:data:`CHUNK_BYTES`) from its pyramid (:func:`_chunk_pyramid`), then those of levels
    above ``k`` from the pyramid over the chunks' tops."""
    n = values.shape[0]
    top = int(ixp.max(level))
    k = max(1, min((n - 1).bit_length(),
                   (CHUNK_BYTES // max(_row_bytes(values), 1)).bit_length() - 1))  # fmt: skip
    size = 1 << k
    chunks, full = (n + size - 1) // size, n // size
    # Each slot's place: the padding, single rows, each chunk's blocks, the blocks above k.
    place = ixp.bitwise_left_shift(block, ixp.maximum(level, ixp.zeros_like(level)))
    group = ixp.where(level <= 0, level + 1, ixp.bitwise_right_shift(place, k) + 2)
    group = ixp.where(level > k, chunks + 2, group)
    order = ixp.argsort(_small_ints(ixp, group, chunks + 3), stable=True)
    group = ixp.take(group, order)
    bounds = [int(b) for b in searchsorted_positions(
        ixp, group, ixp.arange(chunks + 4, dtype=group.dtype), "left")]  # fmt: skip
    # a block's row in its chunk's pyramid: levels 1 .. k one after another
    offsets = ixp.asarray([0, 0] + [size - (size >> (lev - 1)) for lev in range(1, k + 1)],
                          dtype=level.dtype)  # fmt: skip
    slots = ixp.take(block, order)
    kept = bounds[1]  # one padding row for all the padded slots
    row = ixp.empty_like(order)
    row[order] = ixp.where(group == 0, 0, ixp.arange(order.shape[0], dtype=order.dtype)
                           - (kept - min(kept, 1)))  # fmt: skip
    store = engine.level_buffer(values, order.shape[0] - kept + min(kept, 1))
    base = min(kept, 1)
    if kept:
        engine.copy_into(pad, store[:1])
    if bounds[2] > bounds[1]:
        engine.take_rows_into(values, engine.tree_indices(slots[bounds[1] : bounds[2]]),
                              store[base : base + bounds[2] - bounds[1]])  # fmt: skip
    pyramid = engine.level_buffer(values, size)
    tops = engine.level_buffer(values, full) if top > k else None
    first, last = bounds[2], bounds[chunks + 2]
    lev = ixp.take(level, order[first:last])  # (levels 1 .. k)
    chunk = group[first:last] - 2
    within = ixp.take(offsets, lev + 1) + (
        slots[first:last] - ixp.bitwise_left_shift(chunk, k - lev)
    )
    for c in range(chunks):
        low, high = bounds[c + 2], bounds[c + 3]
        if high == low and (tops is None or c >= full):
            continue
        made = _chunk_pyramid(engine, values[c * size : (c + 1) * size], pyramid, k,
                              min(top, k), op)  # fmt: skip
        if high > low:
            into = store[base + low - bounds[1] : base + high - bounds[1]]
            engine.take_rows_into(made, engine.tree_indices(within[low - first : high - first]),
                                  into)  # fmt: skip
        if tops is not None and c < full:
            engine.copy_into(made[size - 2 : size - 1], tops[c : c + 1])
    low, high = bounds[chunks + 2], bounds[chunks + 3]
    if tops is None or high == low:
        return store, row
    lev = ixp.take(level, order[low:high])
    upper = [0]  # levels k + 1 .. top of the pyramid over the tops
    for lev_ in range(k + 1, top + 1):
        upper.append(upper[-1] + (n >> lev_))
    above = engine.level_buffer(values, upper[-1])
    below = tops
    for lev_ in range(k + 1, top + 1):
        m = n >> lev_
        here = above[upper[lev_ - k - 1] : upper[lev_ - k - 1] + m]
        below = engine.combine_into(op, below[0 : 2 * m : 2], below[1 : 2 * m : 2], here)
    at = ixp.take(ixp.asarray(upper[:-1], dtype=level.dtype), lev - k - 1) + slots[low:high]
    engine.take_rows_into(above, engine.tree_indices(at),
                          store[base + low - bounds[1] : base + high - bounds[1]])  # fmt: skip
    return store, row


def _chunk_pyramid(engine: Any, rows: Any, pyramid: Any, k: int, top: int, op: str) -> Any:
    """The levels ``1 .. top`` of the pyramid over `rows` (at most ``2**k``), one after
    another in `pyramid` (level ``l`` from row ``2**k - 2**(k - l + 1)``), as far as `rows`
    fill them."""
    size = 1 << k
    below = rows
    for lev in range(1, top + 1):
        m = rows.shape[0] >> lev
        if not m:
            break
        low = size - (size >> (lev - 1))
        below = engine.combine_into(op, below[0 : 2 * m : 2], below[1 : 2 * m : 2],
                                    pyramid[low : low + m])  # fmt: skip
    return pyramid


#: Rows of at least this many bytes take :func:`_indexed_levels` (where the engine writes
#: merges in place): a gather of a wide row costs less than the selections of its values.
INDEXED_ROW_BYTES = 16


class _Levels:
    """What :func:`_block_levels` and :func:`_indexed_levels` leave: each level's merges in
    one array (`merged`; level ``l``'s merge of block ``b`` at row ``offsets[l - 1] + b``, or
    at the row that `rows` holds there), and the one block left at the top: its `head` and
    `tail` values (1 row each), whether it holds one segment (`single`) and its first and
    last segments (`firsts`, `lasts`, 1 element each)."""

    def __init__(self, merged: Any, offsets: list[int], head: Any, tail: Any, single: Any,
                 firsts: Any, lasts: Any, rows: Any = None) -> None:  # fmt: skip
        self.merged, self.offsets, self.rows = merged, offsets, rows
        self.head, self.tail, self.single = head, tail, single
        self.firsts, self.lasts = firsts, lasts


def _indexed_levels(
    engine: Any, ixp: Any, values: Any, seg: Any, op: str, wide: Any
) -> _Levels:  # fmt: skip
    """:func:`_block_levels` from rows (`values`, in segments `seg`) where the heads and tails
    are row numbers into one array (`store`: the rows, then the merges), so that the values
    are touched by the merges alone: level 1 merges every pair of rows at once (those of two
    segments unused), each later level gathers the pairs that merge; row numbers in `wide`."""
    n = values.shape[0]
    store = engine.level_buffer(values, 2 * n - 1)
    engine.copy_into(values, store[:n])
    m = n // 2
    if m:
        engine.combine_into(op, values[0 : 2 * m : 2], values[1 : 2 * m : 2], store[n : n + m])
    pair = ixp.arange(m, dtype=wide, device=device_for_new(seg))
    same = seg[0 : 2 * m : 2] == seg[1 : 2 * m : 2]
    merged_at = pair + n
    head = ixp.where(same, merged_at, 2 * pair)
    tail = ixp.where(same, merged_at, 2 * pair + 1)
    single, firsts, lasts = same, seg[0 : 2 * m : 2], seg[1 : 2 * m : 2]
    rows, offsets, filled = [merged_at], [0, m], n + m
    if n % 2:
        last_row = ixp.asarray([n - 1], dtype=wide)
        head, tail = ixp.concat([head, last_row]), ixp.concat([tail, last_row])
        single = ixp.concat([single, ixp.ones((1,), dtype=ixp.bool)])
        firsts, lasts = ixp.concat([firsts, seg[-1:]]), ixp.concat([lasts, seg[-1:]])
    if n == 1:
        head = tail = ixp.asarray([0], dtype=wide)
        single, firsts, lasts = ixp.ones((1,), dtype=ixp.bool), seg, seg
    blocks = head.shape[0]
    while blocks > 1:
        m = blocks // 2
        same = lasts[0 : 2 * m : 2] == firsts[1 : 2 * m : 2]
        chosen = ixp.nonzero(same)[0]
        count = chosen.shape[0]
        if count:
            left = engine.take_rows(
                store, engine.tree_indices(ixp.take(tail[0 : 2 * m : 2], chosen))
            )
            right = engine.take_rows(
                store, engine.tree_indices(ixp.take(head[1 : 2 * m : 2], chosen))
            )
            engine.combine_into(op, left, right, store[filled : filled + count])
        merged_at = ixp.cumulative_sum(ixp.astype(same, wide)) + (filled - 1)
        single_left, single_right = single[0 : 2 * m : 2], single[1 : 2 * m : 2]
        goes_on = single_right & same
        new_head = ixp.where(single_left & same, merged_at, head[0 : 2 * m : 2])
        new_tail = ixp.where(goes_on, merged_at, tail[1 : 2 * m : 2])
        new_single = single_left & goes_on
        new_firsts, new_lasts = firsts[0 : 2 * m : 2], lasts[1 : 2 * m : 2]
        if blocks % 2:  # the last block has no partner at this level: it stays as it is
            new_head, new_tail = (
                ixp.concat([new_head, head[-1:]]),
                ixp.concat([new_tail, tail[-1:]]),
            )
            new_single = ixp.concat([new_single, single[-1:]])
            new_firsts = ixp.concat([new_firsts, firsts[-1:]])
            new_lasts = ixp.concat([new_lasts, lasts[-1:]])
        head, tail, single, firsts, lasts = new_head, new_tail, new_single, new_firsts, new_lasts
        rows.append(merged_at)
        offsets.append(offsets[-1] + m)
        filled += count
        blocks = head.shape[0]
    top_head = engine.take_rows(store, engine.tree_indices(head))
    top_tail = engine.take_rows(store, engine.tree_indices(tail))
    return _Levels(store, offsets, top_head, top_tail, single, firsts, lasts, ixp.concat(rows))


def _block_levels(
    xp: Any, engine: Any, ixp: Any, head: Any, tail: Any, firsts: Any, op: str, pad: Any,
    single: Any = None, lasts: Any = None,
) -> _Levels:  # fmt: skip
    """The levels of the tree over aligned blocks, from blocks (level 0 here) whose `head`
    and `tail` hold the values of their first and last segments' rows in them (one value
    where the block holds one segment, `single`; each row its own block where `tail` and
    `single` are None), `firsts` and `lasts` their first and last segments, up to one block.
    At each level blocks ``2b`` and ``2b + 1`` make block ``b``: where the left block's last
    segment goes on into the right one, ``merged = tail(2b) op head(2b + 1)`` (else
    ``tail(2b)`` with the padding); it is the new head where the left block is single, the
    new tail where the right one is and the segment goes on."""
    if tail is None:
        tail = head
    if lasts is None:
        lasts = firsts
    blocks = head.shape[0]
    buffer = engine.level_buffer(head, max(blocks - 1, 1))
    levels: list[Any] = []
    offsets = [0]
    while blocks > 1:
        m = blocks // 2
        same = lasts[0 : 2 * m : 2] == firsts[1 : 2 * m : 2]
        joins = _row_mask(xp, engine, same, head)
        right = xp.where(joins, head[1 : 2 * m : 2], pad)
        left = tail[0 : 2 * m : 2]
        if buffer is None:
            merged = combine(op, left, right)
            levels.append(merged)
        else:
            merged = engine.combine_into(op, left, right, buffer[offsets[-1] : offsets[-1] + m])
        offsets.append(offsets[-1] + m)
        if single is None:
            new_head = merged
            new_tail = xp.where(joins, merged, tail[1 : 2 * m : 2])
            new_single = same
        else:
            single_left, single_right = single[0 : 2 * m : 2], single[1 : 2 * m : 2]
            new_head = xp.where(_row_mask(xp, engine, single_left, head), merged,
                                head[0 : 2 * m : 2])  # fmt: skip
            goes_on = single_right & same
            new_tail = xp.where(_row_mask(xp, engine, goes_on, head), merged,
                                tail[1 : 2 * m : 2])  # fmt: skip
            new_single = single_left & goes_on
        new_firsts, new_lasts = firsts[0 : 2 * m : 2], lasts[1 : 2 * m : 2]
        if blocks % 2:  # the last block has no partner at this level: it stays as it is
            new_head = xp.concat([new_head, head[-1:]])
            new_tail = xp.concat([new_tail, tail[-1:]])
            last = ixp.ones((1,), dtype=ixp.bool) if single is None else single[-1:]
            new_single = ixp.concat([new_single, last])
            new_firsts = ixp.concat([new_firsts, firsts[-1:]])
            new_lasts = ixp.concat([new_lasts, lasts[-1:]])
        head, tail, single, firsts, lasts = new_head, new_tail, new_single, new_firsts, new_lasts
        blocks = head.shape[0]
    if single is None:
        single = ixp.ones((1,), dtype=ixp.bool)
    if buffer is None:
        buffer = xp.concat(levels) if levels else head
    return _Levels(buffer, offsets, head, tail, single, firsts, lasts)


def _row_mask(xp: Any, engine: Any, mask: Any, like: Any) -> Any:
    """The 1-d `mask` (of the integer work's namespace) over the rows of `like`."""
    mask = engine.tree_indices(mask)
    return mask if like.ndim == 1 else xp.reshape(mask, (mask.shape[0], 1))


def _finished(
    xp: Any, engine: Any, ixp: Any, part: _Levels, found: Any, start: Any, level: Any, low: int
) -> Any:  # fmt: skip
    """`found` with the values of the segments (first rows `start` counted from the first
    row of `part`'s level-0 blocks, each of size ``2**low``) that lie whole in one of
    `part`'s blocks from level ``low + 1``: the merge of level `level` at block ``start >>
    level``."""
    top = len(part.offsets) - 1 + low
    inside = (level > low) & (level <= top)
    offsets = ixp.asarray(part.offsets, dtype=start.dtype)
    at = ixp.take(offsets, ixp.clip(level - low - 1, 0, max(top - low - 1, 0)))
    at = ixp.where(inside, at + ixp.bitwise_right_shift(start, level), 0)
    if part.rows is not None and part.rows.shape[0]:
        at = ixp.take(part.rows, at)
    taken = engine.take_rows(part.merged, engine.tree_indices(at))
    return xp.where(_row_mask(xp, engine, inside, found), taken, found)


def _linked_merges(
    ixp: Any, index_engine: Any, engine: Any, rows: Any, order: Any, seg: Any, levels: int,
    op: str,
) -> Any:  # fmt: skip
    """The tree's merges on `rows` (a new array, in sorted order: by segment `seg`, then
    position `order`; written in place by ``Engine.merge_rows``), each segment's value left
    in its first row. Two rows ``j`` and ``j + 1`` of one segment are the last row of the
    left half and the first of the right half of a block of level ``bit_length(p_j ^
    p_{j+1})``. The levels run in increasing order; the rows merged so far form runs, each
    run's value in its first row, and each run's first and last row name each other
    (`other`), so the merge at ``j`` finds the left run's first row ``a = other[j]`` and the
    right run's last row ``b = other[j + 1]``: ``rows[a] = rows[a] op rows[j + 1]``, and ``a``
    and ``b`` name each other. Each level's merges touch distinct runs."""
    n = order.shape[0]
    if n < 2:
        return rows
    pair_level = index_engine.byte_bit_length(ixp.bitwise_xor(order[:-1], order[1:]), n)
    pair_level = ixp.where(seg[:-1] == seg[1:], pair_level, ixp.zeros_like(pair_level))
    by_level = argsort_positions(ixp, pair_level)  # (stable: a radix sort of bytes)
    per_level = _sorted_counts(ixp, index_engine, pair_level, levels + 1, order.dtype)
    bounds = [int(b) for b in ixp.cumulative_sum(per_level)]  # (level 0: no merge)
    other = ixp.arange(n, dtype=order.dtype, device=device_for_new(order))
    for start, stop in itertools.pairwise(bounds):
        if stop > start:
            here = by_level[start:stop]
            after = here + 1
            first, last = ixp.take(other, here), ixp.take(other, after)
            rows = engine.merge_rows(rows, engine.tree_indices(first),
                                     engine.tree_indices(after), op)  # fmt: skip
            other[first] = last
            other[last] = first
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
