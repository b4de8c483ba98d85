"""Exact "last update wins" resolutions, and reductions without extra passes, side by side.

    cd benchmarks && python -m decisions.last_wins          # full sizes, writes its section
    cd benchmarks && python -m decisions.last_wins --quick  # small data; writes nothing
    cd benchmarks && python -m decisions.last_wins --backends numpy torch --parts update

The decision record of issue 22: every candidate is a pure function ``f(data, flat, updates)``
of a 1-d data array, 1-d flat positions into it (duplicates allowed) and 1-d updates, which
returns a new 1-d array. Before any timing each candidate's result is compared, element for
element, with a plain Python loop over the updates in order (so the last update of each
position wins; the reductions against ``ufunc.at``). Then all candidates of one block are
timed interleaved (``harness.repeated``: median over rotating rounds), and each is divided by the
block's fastest native: a plain indexed assignment, which resolves nothing (``out[flat] = u``,
``index_put_``/``scatter_``, ``.at[].set``; the 1.5x bound of issue 22 is against that), or
for the reductions the native reduction on a copy.

Workloads (the flat positions of ``benchmarks/scatter.py``'s S1 and S2):
    S1  200k points into 2000 x 2000 float32: positions i0 * 2000 + i1 (~5k duplicates)
    S2  1000 x 200 index along axis 1 of 1000 x 1000: positions row * 1000 + i (~18k)
    S1u, S2u  the same sizes without duplicates (for the proofs that there are none)

Parts: ``update`` (the resolutions), ``proof`` (ways to prove that there are no duplicates,
on data with and without them) and ``reduce`` (add, max, min and multiply on the flat target
against the data copied into a buffer one element longer, as the engines did before).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import harness
import numpy as np
from harness import (
    TORCH_REDUCE,
    Candidate,
    arguments,
    in_a_row,
    repeated,
    setup,
    torch_deterministic,
    ufunc,
    write_section,
)

PARTS = ("update", "proof", "reduce")
#: The resolutions that prove there are no duplicates first, timed with the proofs too.
PROOF_RESOLUTIONS = ("in place + skip", "values first", "scratch max, duplicates")
BACKENDS = ("numpy", "torch", "jax")
REDUCES = ("add", "max", "min", "multiply")


# ------------------------------------------------------------------------------ the data


def workloads(quick: bool) -> dict[str, dict[str, Any]]:
    """Flat positions, updates and data of S1, S2 (duplicates) and S1u, S2u (none)."""
    rng = np.random.default_rng(22)
    side, points = (200, 2000) if quick else (2000, 200_000)
    rows, cols, k = (100, 100, 20) if quick else (1000, 1000, 200)
    s1 = rng.integers(0, side, (points, 2))
    s2 = rng.integers(0, cols, (rows, k))
    s2u = np.argsort(rng.random((rows, cols)), axis=1)[:, :k]  # k distinct columns a row
    along = np.arange(rows)[:, None] * cols
    flats = {
        "S1": (side * side, s1[:, 0] * side + s1[:, 1]),
        "S2": (rows * cols, (along + s2).reshape(-1)),
        "S1u": (side * side, rng.choice(side * side, points, replace=False)),
        "S2u": (rows * cols, (along + s2u).reshape(-1)),
    }
    out = {}
    for key, (size, flat) in flats.items():
        out[key] = {
            "data": rng.random(size, dtype=np.float32),
            "flat": flat.astype(np.int64),
            "updates": rng.random(flat.shape[0], dtype=np.float32),
        }
    return out


def last_wins_loop(data: Any, flat: Any, updates: Any) -> Any:
    """The reference: a plain Python loop over the updates in order."""
    out = data.tolist()
    for position, value in zip(flat.tolist(), updates.tolist(), strict=True):
        out[position] = value
    return np.asarray(out, dtype=data.dtype)


def reduce_reference(reduce: str, data: Any, flat: Any, updates: Any) -> Any:
    out = data.copy()
    ufunc(reduce).at(out, flat, updates)
    return out


# ------------------------------------------------------------------------------ NumPy


def np_plain(data: Any, flat: Any, updates: Any) -> Any:
    """The native idiom, which resolves nothing (its write order is not documented)."""
    out = data.copy()
    out[flat] = updates
    return out


def np_copy(data: Any, flat: Any, updates: Any) -> Any:  # noqa: ARG001
    """The floor: the copy every candidate makes."""
    return data.copy()


def np_scratch(data: Any, flat: Any, updates: Any) -> Any:
    """The engine before issue 22: positions written into a new data-sized scratch and read
    back, ``maximum.at`` where one reads back less than its own; winners into a buffer one
    element longer (losers at the extra element)."""
    size = data.shape[0]
    buffer = np.empty(size + 1, dtype=data.dtype)
    buffer[:size] = data
    buffer[size] = buffer[0]
    positions = np.arange(flat.shape[0], dtype=np.int32)
    winner = np.empty(size + 1, dtype=np.int32)
    winner[flat] = positions
    won = winner[flat]
    if (won < positions).any():
        np.maximum.at(winner, flat, positions)
        won = winner[flat]
    buffer[np.where(won == positions, flat, size)] = updates
    return buffer[:size]


def _np_winners_in_place(out: Any, flat: Any) -> Any:
    """Each update's winner (the last position at its target), found in `out` itself viewed
    as integers of its width: every target is overwritten by an update afterwards, so its old
    value is not needed. Positions written, read back, and ``maximum.at`` (documented to
    combine every update) only where some position reads back less than its own."""
    ints = out.view(np.int32)
    positions = np.arange(flat.shape[0], dtype=np.int32)
    ints[flat] = positions
    won = ints[flat]
    if (won < positions).any():
        np.maximum.at(ints, flat, positions)
        won = ints[flat]
    return won


def np_in_place(data: Any, flat: Any, updates: Any) -> Any:
    """Winners found in the result; every update then writes its winner's value, so that
    duplicates write equal values and the write order cannot matter."""
    out = data.copy()
    won = _np_winners_in_place(out, flat)
    out[flat] = updates[won]
    return out


def np_in_place_proof(data: Any, flat: Any, updates: Any) -> Any:
    """:func:`np_in_place`, and where every position reads back its own (no duplicates,
    proved) the updates are written as they are: no gather of the winners' values."""
    out = data.copy()
    ints = out.view(np.int32)
    positions = np.arange(flat.shape[0], dtype=np.int32)
    ints[flat] = positions
    won = ints[flat]
    if np.array_equal(won, positions):
        out[flat] = updates
        return out
    if (won < positions).any():
        np.maximum.at(ints, flat, positions)
        won = ints[flat]
    out[flat] = updates[won]
    return out


def np_values_first(data: Any, flat: Any, updates: Any) -> Any:
    """The updates written as they are, then read back: where every update reads back its
    own bits, each target holds a value that every update to it wrote, so the last one's
    too (proved, whatever the write order); otherwise resolved in place as
    :func:`np_in_place`. Bits, not values: NaN and -0.0 compare as values do not."""
    out = data.copy()
    out[flat] = updates
    if np.array_equal(out.view(np.int32)[flat], updates.view(np.int32)):
        return out
    won = _np_winners_in_place(out, flat)
    out[flat] = updates[won]
    return out


def np_in_place_winners(data: Any, flat: Any, updates: Any) -> Any:
    """Winners found in the result (a buffer one element longer); only the winners write,
    the losers at the extra element."""
    size = data.shape[0]
    buffer = np.empty(size + 1, dtype=data.dtype)
    buffer[:size] = data
    won = _np_winners_in_place(buffer, flat)
    positions = np.arange(flat.shape[0], dtype=np.int32)
    buffer[np.where(won == positions, flat, size)] = updates
    return buffer[:size]


def np_in_place_max_at(data: Any, flat: Any, updates: Any) -> Any:
    """Winners by ``maximum.at`` into the result always (no read-back check first)."""
    out = data.copy()
    ints = out.view(np.int32)
    positions = np.arange(flat.shape[0], dtype=np.int32)
    ints[flat] = positions
    np.maximum.at(ints, flat, positions)
    out[flat] = updates[ints[flat]]
    return out


def np_argsort(data: Any, flat: Any, updates: Any) -> Any:
    """A stable argsort of the positions; the last of each run of equal ones wins."""
    out = data.copy()
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    last = np.empty(ordered.shape, dtype=bool)
    last[-1:] = True
    np.not_equal(ordered[:-1], ordered[1:], out=last[:-1])
    out[ordered[last]] = updates[order[last]]
    return out


def np_lexsort(data: Any, flat: Any, updates: Any) -> Any:
    """``lexsort`` by position, then by update number; the last of each run wins."""
    out = data.copy()
    order = np.lexsort((np.arange(flat.shape[0]), flat))
    ordered = flat[order]
    last = np.empty(ordered.shape, dtype=bool)
    last[-1:] = True
    np.not_equal(ordered[:-1], ordered[1:], out=last[:-1])
    out[ordered[last]] = updates[order[last]]
    return out


def np_unique(data: Any, flat: Any, updates: Any) -> Any:
    """``np.unique(return_index=True)`` of the reversed positions: the first of the reversed
    (documented: the indices of the first occurrences) is the last update."""
    out = data.copy()
    targets, first = np.unique(flat[::-1], return_index=True)
    out[targets] = updates[::-1][first]
    return out


def numpy_update(data: Any, flat: Any, updates: Any) -> list[Candidate]:
    fns = [
        ("out[flat] = u (native, resolves nothing)", np_plain, "native"),
        ("copy only (floor)", np_copy, "floor"),
        ("scratch read-back (engine before #22)", np_scratch, "exact"),
        ("in place: winners in the result, duplicates write equal values", np_in_place, "exact"),
        ("in place + skip the gather where proved unique", np_in_place_proof, "exact"),
        ("values first, read back; in place where they differ", np_values_first, "exact"),
        ("in place, winners only (buffer one longer)", np_in_place_winners, "exact"),
        ("in place, maximum.at always", np_in_place_max_at, "exact"),
        ("stable argsort, last of each run", np_argsort, "exact"),
        ("lexsort, last of each run", np_lexsort, "exact"),
        ("np.unique(return_index) of reversed", np_unique, "exact"),
    ]
    return [Candidate(name, kind, lambda f=f: f(data, flat, updates)) for name, f, kind in fns]


def numpy_proof(data: Any, flat: Any, updates: Any) -> list[Candidate]:
    """Ways to learn whether `flat` has duplicates; each returns True where it has none."""
    size = data.shape[0]

    def read_back() -> bool:  # into the result's copy, as np_in_place_proof does
        ints = data.copy().view(np.int32)
        positions = np.arange(flat.shape[0], dtype=np.int32)
        ints[flat] = positions
        return bool(np.array_equal(ints[flat], positions))

    def values_read_back() -> bool:  # the write itself, read back: proves the result right
        out = data.copy()
        out[flat] = updates
        return bool(np.array_equal(out.view(np.int32)[flat], updates.view(np.int32)))

    def sort() -> bool:
        ordered = np.sort(flat)
        return not bool((ordered[1:] == ordered[:-1]).any())

    def bincount() -> bool:
        return bool(np.bincount(flat, minlength=size).max() <= 1)

    def increasing() -> bool:  # proves it only for strictly increasing positions
        return bool((flat[1:] > flat[:-1]).all())

    fns = [
        ("out[flat] = u (native, resolves nothing)", "native",
         lambda: np_plain(data, flat, updates)),
        ("in place + skip the gather where proved unique", "exact",
         lambda: np_in_place_proof(data, flat, updates)),
        ("values first, read back; in place where they differ", "exact",
         lambda: np_values_first(data, flat, updates)),
        ("proof: copy, write positions, read back", "proof", read_back),
        ("proof: write the values, read back their bits", "proof", values_read_back),
        ("proof: np.sort + adjacent equal", "proof", sort),
        ("proof: bincount(minlength=size).max()", "proof", bincount),
        ("proof: strictly increasing (sorted input only)", "proof", increasing),
    ]  # fmt: skip
    return [Candidate(name, kind, f) for name, kind, f in fns]


def numpy_reduce(reduce: str, data: Any, flat: Any, updates: Any) -> list[Candidate]:
    uf = ufunc(reduce)
    size = data.shape[0]

    def longer() -> Any:  # the engine before #22
        buffer = np.empty(size + 1, dtype=data.dtype)
        buffer[:size] = data
        buffer[size] = buffer[0]
        uf.at(buffer, flat, updates)
        return buffer[:size]

    def flat_view() -> Any:
        out = data.copy()
        uf.at(out, flat, updates)
        return out

    return [
        Candidate(f"{uf.__name__}.at on a copy (flat view)", "native", flat_view),
        Candidate(f"{uf.__name__}.at on a buffer one longer (engine before #22)", "pg", longer),
    ]


# ------------------------------------------------------------------------------ PyTorch


def torch_update(data: Any, flat: Any, updates: Any) -> list[Candidate]:
    import torch

    size = data.shape[0]
    count = flat.shape[0]
    positions64 = torch.arange(count)
    positions = torch.arange(count, dtype=torch.int32)
    bits = updates.view(torch.int32)

    def index_put() -> Any:
        return data.clone().index_put_((flat,), updates)

    def scatter() -> Any:
        return data.clone().scatter_(0, flat, updates)

    def copy() -> Any:
        return data.clone()

    def before() -> Any:  # TorchEngine.scatter_at / _last_writes before issue 22
        line = torch.cat([data, data.new_zeros(1)])
        winner = torch.full((size + 1,), -1, dtype=torch.int64)
        winner.scatter_reduce_(0, flat, positions64, "amax")
        won = winner[flat] == positions64
        line.index_put_((torch.where(won, flat, size),), updates)
        return line[:size]

    def winners_in(ints: Any) -> Any:
        """Positions written at `flat` into `ints` (scatter_: one of the values lands, as
        documented) and read back; amax (a reduction: exact) where one reads back less."""
        ints.scatter_(0, flat, positions)
        won = ints.index_select(0, flat)
        if bool((won < positions).any()):
            ints.scatter_reduce_(0, flat, positions, "amax")  # include_self: each holds one
            won = ints.index_select(0, flat)
        return won

    def in_place() -> Any:
        out = data.clone()
        won = winners_in(out.view(torch.int32))
        return out.scatter_(0, flat, updates.index_select(0, won))

    def in_place_proof() -> Any:
        out = data.clone()
        ints = out.view(torch.int32)
        ints.scatter_(0, flat, positions)
        won = ints.index_select(0, flat)
        if bool(torch.equal(won, positions)):
            return out.scatter_(0, flat, updates)
        if bool((won < positions).any()):
            ints.scatter_reduce_(0, flat, positions, "amax")
            won = ints.index_select(0, flat)
        return out.scatter_(0, flat, updates.index_select(0, won))

    def values_first() -> Any:  # see np_values_first
        out = data.clone()
        out.scatter_(0, flat, updates)
        if bool(torch.equal(out.view(torch.int32).index_select(0, flat), bits)):
            return out
        won = winners_in(out.view(torch.int32))
        return out.scatter_(0, flat, updates.index_select(0, won))

    def in_place_winners() -> Any:  # losers at an extra element: exact gradients too
        line = torch.cat([data, data.new_zeros(1)])
        won = winners_in(line.view(torch.int32))
        line.scatter_(0, torch.where(won == positions, flat, size), updates)
        return line[:size]

    def scratch_read_back() -> Any:  # a separate scratch (for tensors autograd records)
        won = winners_in(torch.empty(size, dtype=torch.int32))
        return data.clone().scatter_(0, flat, updates.index_select(0, won))

    def scratch_amax() -> Any:  # scatter_reduce amax, include_self=False: no fill needed
        winner = torch.empty(size, dtype=torch.int32)
        winner.scatter_reduce_(0, flat, positions, "amax", include_self=False)
        won = winner.index_select(0, flat)
        return data.clone().scatter_(0, flat, updates.index_select(0, won))

    def sort() -> Any:
        ordered, order = torch.sort(flat, stable=True)
        last = torch.ones(count, dtype=torch.bool)
        torch.ne(ordered[:-1], ordered[1:], out=last[:-1])
        return data.clone().index_put_((ordered[last],), updates[order[last]])

    def unique() -> Any:
        targets, inverse = torch.unique(flat, return_inverse=True)
        winner = torch.empty(targets.shape[0], dtype=torch.int64)
        winner.scatter_reduce_(0, inverse, positions64, "amax", include_self=False)
        return data.clone().index_put_((targets,), updates.index_select(0, winner))

    def deterministic_index_put() -> Any:
        with torch_deterministic():
            return data.clone().index_put_((flat,), updates)

    fns = [
        ("index_put_ (native, resolves nothing)", index_put, "native"),
        ("scatter_ (native, resolves nothing)", scatter, "native"),
        ("clone only (floor)", copy, "floor"),
        ("full amax scratch + index_put_ (engine before #22)", before, "exact"),
        ("in place: winners in the result, duplicates write equal values", in_place, "exact"),
        ("in place + skip the gather where proved unique", in_place_proof, "exact"),
        ("values first, read back; in place where they differ", values_first, "exact"),
        ("in place, winners only (buffer one longer)", in_place_winners, "exact"),
        ("empty scratch, write + read back", scratch_read_back, "exact"),
        ("empty scratch, amax include_self=False", scratch_amax, "exact"),
        ("stable sort, last of each run, index_put_", sort, "exact"),
        ("unique(return_inverse) + amax over the unique set", unique, "exact"),
        ("index_put_ under use_deterministic_algorithms (undocumented order)",
         deterministic_index_put, "undocumented"),
    ]  # fmt: skip
    return [Candidate(name, kind, f) for name, f, kind in fns]


def torch_proof(data: Any, flat: Any, updates: Any) -> list[Candidate]:
    import torch

    size = data.shape[0]
    positions = torch.arange(flat.shape[0], dtype=torch.int32)

    def plain() -> Any:
        return data.clone().scatter_(0, flat, updates)

    def read_back() -> bool:
        ints = data.clone().view(torch.int32)
        ints.scatter_(0, flat, positions)
        return bool(torch.equal(ints.index_select(0, flat), positions))

    def values_read_back() -> bool:
        out = data.clone().scatter_(0, flat, updates)
        return bool(
            torch.equal(out.view(torch.int32).index_select(0, flat), updates.view(torch.int32))
        )

    def sort() -> bool:
        ordered = torch.sort(flat).values
        return not bool((ordered[1:] == ordered[:-1]).any())

    def bincount() -> bool:
        return bool(torch.bincount(flat, minlength=size).max() <= 1)

    def unique() -> bool:
        return bool(torch.unique(flat).shape[0] == flat.shape[0])

    def increasing() -> bool:
        return bool((flat[1:] > flat[:-1]).all())

    resolutions = [
        c for c in torch_update(data, flat, updates) if c.name.startswith(PROOF_RESOLUTIONS)
    ]
    fns = [
        ("scatter_ (native, resolves nothing)", "native", plain),
        *((c.name, c.kind, c.fn) for c in resolutions),
        ("proof: clone, write positions, read back", "proof", read_back),
        ("proof: write the values, read back their bits", "proof", values_read_back),
        ("proof: torch.sort + adjacent equal", "proof", sort),
        ("proof: bincount(minlength=size).max()", "proof", bincount),
        ("proof: torch.unique size", "proof", unique),
        ("proof: strictly increasing (sorted input only)", "proof", increasing),
    ]
    return [Candidate(name, kind, f) for name, kind, f in fns]


def torch_reduce(reduce: str, data: Any, flat: Any, updates: Any) -> list[Candidate]:
    import torch

    size = data.shape[0]
    how = TORCH_REDUCE[reduce]

    def longer() -> Any:  # TorchEngine.scatter_at before issue 22
        line = torch.cat([data, data.new_zeros(1)])
        if reduce == "add":
            line.scatter_add_(0, flat, updates)
        else:
            line.scatter_reduce_(0, flat, updates, how, include_self=True)
        return line[:size]

    def flat_target() -> Any:
        out = data.clone()
        if reduce == "add":
            return out.scatter_add_(0, flat, updates)
        return out.scatter_reduce_(0, flat, updates, how, include_self=True)

    cands = [
        Candidate(
            "scatter_add_ on a clone" if reduce == "add" else f"scatter_reduce_({how}) on a clone",
            "native",
            flat_target,
        ),
        Candidate("cat + scatter_reduce_ + [:size] (engine before #22)", "pg", longer),
    ]
    if reduce == "add":
        cands.append(
            Candidate("index_add_", "native", lambda: data.clone().index_add_(0, flat, updates))
        )
        cands.append(
            Candidate(
                "index_put_(accumulate=True)",
                "native",
                lambda: data.clone().index_put_((flat,), updates, accumulate=True),
            )
        )
    return cands


# ------------------------------------------------------------------------------ JAX


def jax_update(data: Any, flat: Any, updates: Any) -> list[Candidate]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    size = data.shape[0]
    count = flat.shape[0]

    def plain(d: Any, f: Any, u: Any) -> Any:
        return d.at[f].set(u, mode="promise_in_bounds")

    def before(d: Any, f: Any, u: Any) -> Any:  # JaxEngine.scatter before issue 22
        positions = jnp.arange(count, dtype=jnp.int32)
        winner = jnp.full(d.shape, -1, dtype=jnp.int32).at[f].max(positions, mode="clip")
        picked = jnp.take(u, jnp.maximum(winner, 0), mode="clip")
        return jnp.where(winner >= 0, picked, d)

    def _winners(f: Any) -> Any:
        positions = jnp.arange(count, dtype=jnp.int32)
        winner = jnp.full((size,), -1, dtype=jnp.int32)
        return winner.at[f].max(positions, mode="promise_in_bounds")[f]

    def scratch_equal_values(d: Any, f: Any, u: Any) -> Any:
        # every update writes its winner's value: duplicates write equal values, so the
        # order XLA applies them in ("implementation-defined") cannot matter
        return d.at[f].set(u[_winners(f)], mode="promise_in_bounds")

    def scratch_drop_losers(d: Any, f: Any, u: Any) -> Any:
        won = _winners(f) == jnp.arange(count, dtype=jnp.int32)
        return d.at[jnp.where(won, f, size)].set(u, mode="drop")

    def in_place(d: Any, f: Any, u: Any) -> Any:  # positions into the result's bits
        positions = jnp.arange(count, dtype=jnp.int32)
        ints = lax.bitcast_convert_type(d, jnp.int32)
        ints = ints.at[f].set(positions, mode="promise_in_bounds")  # one of them lands
        ints = ints.at[f].max(positions, mode="promise_in_bounds")  # then the largest
        won = ints[f]
        back = lax.bitcast_convert_type(ints, d.dtype)
        return back.at[f].set(u[won], mode="promise_in_bounds")

    def values_first(d: Any, f: Any, u: Any) -> Any:  # see np_values_first; lax.cond
        written = d.at[f].set(u, mode="promise_in_bounds")
        same = jnp.array_equal(
            lax.bitcast_convert_type(written[f], jnp.int32), lax.bitcast_convert_type(u, jnp.int32)
        )
        return lax.cond(same, lambda: written, lambda: scratch_equal_values(d, f, u))

    def packed(d: Any, f: Any, u: Any) -> Any:
        """One scatter-max of (position << 32 | the update's bits) into the data's bits
        widened to int64 below every update's key (x64 and 32-bit data only)."""
        bits = lax.bitcast_convert_type(d, jnp.uint32).astype(jnp.int64)
        keys = lax.bitcast_convert_type(u, jnp.uint32).astype(jnp.int64)
        keys = keys | (jnp.arange(count, dtype=jnp.int64) << 32)
        merged = (bits | jnp.int64(-(2**32))).at[f].max(keys, mode="promise_in_bounds")
        return lax.bitcast_convert_type(merged.astype(jnp.uint32), d.dtype)

    def segment_max(d: Any, f: Any, u: Any) -> Any:
        positions = jnp.arange(count, dtype=jnp.int32)
        winner = jax.ops.segment_max(positions, f, num_segments=size)
        return d.at[f].set(u[winner[f]], mode="promise_in_bounds")

    def _sorted_runs(f: Any) -> tuple[Any, Any, Any]:
        positions = jnp.arange(count, dtype=jnp.int32)
        ordered, order = lax.sort((f, positions), num_keys=1, is_stable=True)
        last = jnp.concatenate([ordered[:-1] != ordered[1:], jnp.ones(1, dtype=bool)])
        return ordered, order, last

    def sort_unique(d: Any, f: Any, u: Any) -> Any:
        ordered, order, last = _sorted_runs(f)
        # the winners are unique and sorted; the losers go out of range and are dropped
        return d.at[jnp.where(last, ordered, size)].set(
            u[order], mode="drop", indices_are_sorted=True, unique_indices=True
        )

    def sort_equal_values(d: Any, f: Any, u: Any) -> Any:
        ordered, order, last = _sorted_runs(f)
        places = jnp.arange(count, dtype=jnp.int32)
        run_end = lax.cummin(jnp.where(last, places, count), axis=0, reverse=True)
        return d.at[ordered].set(
            u[order][run_end], mode="promise_in_bounds", indices_are_sorted=True
        )

    fns = [
        (".at[].set (native, resolves nothing)", plain, "native"),
        ("full scratch + take + where (engine before #22)", before, "exact"),
        ("scratch max, duplicates write equal values", scratch_equal_values, "exact"),
        ("scratch max, losers dropped (mode=drop)", scratch_drop_losers, "exact"),
        ("values first, read back; cond to scratch max", values_first, "exact"),
        ("in place (bitcast): set, max, read back", in_place, "exact"),
        ("packed (position, bits) in int64: one scatter-max", packed, "exact"),
        ("segment_max winners", segment_max, "exact"),
        ("lax.sort + unique sorted winners", sort_unique, "exact"),
        ("lax.sort + equal values, indices_are_sorted", sort_equal_values, "exact"),
    ]
    out = []
    for name, f, kind in fns:
        jitted = jax.jit(f)
        out.append(
            Candidate(name, kind, lambda j=jitted: j(data, flat, updates).block_until_ready())
        )
    return out


def jax_proof(data: Any, flat: Any, updates: Any) -> list[Candidate]:
    """Under jit a proof only pays where ``lax.cond`` then skips the resolution."""
    import jax
    import jax.numpy as jnp

    count = flat.shape[0]
    size = data.shape[0]

    def plain(d: Any, f: Any, u: Any) -> Any:
        return d.at[f].set(u, mode="promise_in_bounds")

    def unique_promise(d: Any, f: Any, u: Any) -> Any:
        return d.at[f].set(u, mode="promise_in_bounds", unique_indices=True)

    def count_proof(f: Any) -> Any:
        return jnp.zeros((size,), dtype=jnp.int32).at[f].add(1).max() <= 1

    def sort_proof(f: Any) -> Any:
        ordered = jnp.sort(f)
        return ~jnp.any(ordered[1:] == ordered[:-1])

    def increasing(f: Any) -> Any:
        return jnp.all(f[1:] > f[:-1])

    def cond_resolve(d: Any, f: Any, u: Any) -> Any:
        def resolve(d: Any, f: Any, u: Any) -> Any:
            positions = jnp.arange(count, dtype=jnp.int32)
            winner = jnp.full((size,), -1, dtype=jnp.int32)
            won = winner.at[f].max(positions, mode="promise_in_bounds")[f]
            return d.at[f].set(u[won], mode="promise_in_bounds")

        return jax.lax.cond(increasing(f), unique_promise, resolve, d, f, u)

    resolutions = [
        c for c in jax_update(data, flat, updates) if c.name.startswith(PROOF_RESOLUTIONS)
    ]
    fns = [
        (".at[].set (native, resolves nothing)", "native", plain, (data, flat, updates)),
        (".at[].set(unique_indices=True)", "promise", unique_promise, (data, flat, updates)),
        ("proof: count scatter-add, max <= 1", "proof", count_proof, (flat,)),
        ("proof: sort + adjacent equal", "proof", sort_proof, (flat,)),
        ("proof: strictly increasing (sorted input only)", "proof", increasing, (flat,)),
        ("cond(increasing, unique set, scratch max)", "exact", cond_resolve, (data, flat, updates)),
    ]  # fmt: skip
    out = []
    for name, kind, f, args in fns:
        jitted = jax.jit(f)
        out.append(Candidate(name, kind, lambda j=jitted, a=args: j(*a).block_until_ready()))
    return out + resolutions


# ------------------------------------------------------------------------------ running


def as_backend(backend: str, block: dict[str, Any]) -> tuple[Any, Any, Any]:
    data, flat, updates = block["data"], block["flat"], block["updates"]
    if backend == "torch":
        import torch

        return torch.from_numpy(data), torch.from_numpy(flat), torch.from_numpy(updates)
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.asarray(data), jnp.asarray(flat), jnp.asarray(updates)
    return data, flat, updates


MAKERS: dict[tuple[str, str], Callable[..., list[Candidate]]] = {
    ("numpy", "update"): numpy_update,
    ("torch", "update"): torch_update,
    ("jax", "update"): jax_update,
    ("numpy", "proof"): numpy_proof,
    ("torch", "proof"): torch_proof,
    ("jax", "proof"): jax_proof,
    ("numpy", "reduce"): numpy_reduce,
    ("torch", "reduce"): torch_reduce,
}


def check(cands: list[Candidate], expected: Any, exact: bool) -> dict[str, str]:
    """Each candidate's result against `expected`: "ok", or what differs. A proof answers
    whether there are no duplicates; it is checked against `no_duplicates`."""
    verdicts = {}
    for c in cands:
        got = c.fn()
        if c.kind == "floor":
            verdicts[c.name] = "-"
            continue
        if c.kind == "proof":  # True: proved that there are none; False: found some, or
            # (a test of sorted input only) cannot tell
            answer, none = bool(np.asarray(got)), expected["no_duplicates"]
            verdicts[c.name] = "ok" if answer == none else "cannot tell" if none else "wrong"
            continue
        if c.kind == "promise":  # unique_indices=True: unspecified where broken
            verdicts[c.name] = "-"
            continue
        want = expected["result"]
        got = np.asarray(got)
        same = np.array_equal(got, want) if exact else np.allclose(got, want, rtol=1e-5)
        verdicts[c.name] = "ok" if same else f"{int(np.count_nonzero(got != want))} differ"
    return verdicts


def run_block(
    backend: str, part: str, key: str, block: dict[str, Any], reduce: str | None,
    budget: float, repeat: int,
) -> dict[str, Any]:  # fmt: skip
    data, flat, updates = as_backend(backend, block)
    args = (block["data"], block["flat"], block["updates"])
    expected = {"no_duplicates": np.unique(args[1]).shape[0] == args[1].shape[0]}
    if part == "reduce":
        assert reduce is not None
        cands = MAKERS[(backend, part)](reduce, data, flat, updates)
        expected["result"] = reduce_reference(reduce, *args)
    else:
        cands = MAKERS[(backend, part)](data, flat, updates)
        expected["result"] = last_wins_loop(*args)
    # Float sums and products depend on the order of the terms.
    verdicts = check(cands, expected, exact=reduce not in ("add", "multiply"))
    bad = [
        f"{c.name}: {verdicts[c.name]}"
        for c in cands
        if c.kind in ("exact", "proof", "pg") and verdicts[c.name] not in ("ok", "cannot tell")
    ]
    if bad:
        msg = f"{backend} {part} {key}: wrong results: {bad}"
        raise AssertionError(msg)
    natives = [c.name for c in cands if c.kind == "native"]
    blk = repeated(cands, budget, repeat, lambda c: c.kind == "native")
    alone = []
    for _ in range(repeat):
        in_row = {c.name: in_a_row(c.fn, budget / len(cands)) for c in cands}
        alone.append({n: t / min(in_row[m] for m in natives) for n, t in in_row.items()})
    base = blk["fastest"]
    rows = []
    for c in cands:
        rows.append({
            "candidate": c.name, "kind": c.kind, "check": verdicts.get(c.name, ""),
            "seconds": blk["seconds"][c.name], **blk["ratios"][c.name],
            "alone": statistics.median(a[c.name] for a in alone),
        })  # fmt: skip
    return {
        "backend": backend, "part": part, "workload": key, "reduce": reduce, "base": base,
        "rows": rows, "rounds": blk["rounds"],
    }  # fmt: skip


def run(quick: bool, backends: list[str], parts: list[str], repeat: int) -> list[dict[str, Any]]:
    data = workloads(quick)
    budget = 0.3 if quick else 3.0
    blocks = []
    for part in parts:
        keys = ["S1u", "S1", "S2u", "S2"] if part == "proof" else ["S1", "S2"]
        for backend in backends:
            if (backend, part) not in MAKERS:
                continue
            for key in keys:
                for reduce in REDUCES if part == "reduce" else (None,):
                    blk = run_block(backend, part, key, data[key], reduce, budget, repeat)
                    blocks.append(blk)
                    print(f"\n{backend} {part} {key} {reduce or ''} ({blk['rounds']} rounds)")
                    for r in blk["rows"]:
                        print(
                            f"  {r['candidate'][:66]:66s} {r['seconds'] * 1e3:8.2f} ms "
                            f"{harness.ratio_cell(r, None, repeat)} alone {r['alone']:5.2f}  "
                            f"{r['check']}",
                            flush=True,
                        )
    return blocks


def report(blocks: list[dict[str, Any]], repeat: int, threads: int) -> str:
    lines = [
        "<!-- last-wins -->",
        '## "update": exact last-wins resolutions, and reductions without extra passes',
        "",
        harness.header(f"cd benchmarks && python -m decisions.last_wins --repeat {repeat}", threads)
        + " Each candidate is a pure function of (data, flat positions, updates) on the flat "
        "positions of S1 (200k points into 2000 x 2000 float32) and S2 (1000 x 200 along axis "
        "1 of 1000 x 1000); S1u, S2u have no duplicates. Every exact candidate was first "
        "compared with a plain Python loop (last update wins). Ratio: time / the fastest "
        "native of its block (a plain assignment, which resolves nothing), median over "
        f"{repeat} repeat(s) of interleaved rounds, range in brackets. *alone*: the same "
        "ratio with each candidate called again and again, nothing in between (as in a loop "
        "of scatters; the allocator's reuse of freed buffers differs), median over the "
        "repeats; noisier, since a burst of other work on the machine hits one candidate.",
    ]
    for blk in blocks:
        title = f"{blk['backend']} {blk['part']} {blk['workload']}"
        if blk["reduce"]:
            title += f' "{blk["reduce"]}"'
        lines += [
            "",
            f"### {title}",
            "",
            "| candidate | check | median | ratio | alone |",
            "|---|---|---|---|---|",
        ]
        for r in blk["rows"]:
            lines.append(
                f"| {r['candidate']} | {r['check']} | {r['seconds'] * 1e3:.2f} ms "
                f"| {harness.ratio_cell(r, None, repeat)} | {r['alone']:.2f} |"
            )
    lines.append("<!-- /last-wins -->")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, repeat=True, threads=True, backends=BACKENDS)
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    args = parser.parse_args(argv)
    setup(args.threads, args.backends)
    blocks = run(args.quick, args.backends, args.parts, args.repeat)
    if not args.quick:
        write_section("last-wins", report(blocks, args.repeat, args.threads))


if __name__ == "__main__":
    main()
