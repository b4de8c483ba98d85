"""The bad-index policies, on any namespace: from the caller's index to valid components.

Everything here is written against the array API standard (``xp``), with the few
backend-specific steps (the index widths, a one-pass clamp, reading the value range) asked of
the engine. The result of :func:`normalize` is what every engine gathers from: one array per
index component, each in ``[0, n)`` unless the engine is told to keep reads inside the array.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ._arrays import device_for_new
from ._errors import raise_first_bad

if TYPE_CHECKING:
    from ._plan import GatherPlan

POLICIES = ("error", "ignore", "clip", "wrap", "unchecked")

# TensorFlow's spellings. "" and "DEFAULT" mean TensorFlow's documented default, which
# depends on whether index values can be inspected (see ``resolve_default``).
_ALIASES = {"ERROR": "error", "IGNORE": "ignore", "": "default", "DEFAULT": "default"}
_CANONICAL = {**{p: p for p in POLICIES}, **_ALIASES}

#: How an engine can see index values: now (eager), when a task graph runs (Dask), inside a
#: JAX trace (through ``checkify``), or never (a symbolic ONNX graph).
IndexAccess = Literal["now", "graph", "trace", "none"]


class IndexEngine(Protocol):
    """What the policies ask of an engine (``engines.Engine`` is one): the few steps that
    differ between backends."""

    def wide_index_dtype(self, like: Any = None) -> Any: ...
    def vector_components(self, values: Any, depth: int) -> list[Any]: ...
    def clamp(self, values: Any, low: int, high: int) -> Any: ...
    def reads_cheaply(self, x: Any) -> bool: ...
    def reads_range_freely(self, x: Any) -> bool: ...
    def keeps_reads_inside(self, values: Any) -> bool: ...
    def value_range(self, x: Any) -> tuple[int, int]: ...
    def read_int(self, value: Any) -> int: ...


def normalize_policy(bad_indices: object) -> str:
    """The canonical policy name, or ``"default"`` for TensorFlow's default."""
    if isinstance(bad_indices, str) and bad_indices in _CANONICAL:
        return _CANONICAL[bad_indices]
    valid = ", ".join(repr(p) for p in _CANONICAL)
    msg = f"bad_indices must be one of {valid}; got {bad_indices!r}"
    raise ValueError(msg)


def resolve_default(policy: str, access: IndexAccess) -> str:
    """TensorFlow's default: raise where index values can be checked, ignore where not."""
    if policy != "default":
        return policy
    return "error" if access in ("now", "graph") else "ignore"


@dataclass(slots=True)
class Components:
    """The index components an engine gathers from, and what is left for it to do.

    values
        One array per component, in ``[0, n)`` unless `keep_inside` or `keep` says otherwise.
    keep
        ``"ignore"``: True where the whole index vector is valid; the others are read from
        position 0 and replaced by the fill value after the gather.
    keep_inside
        Components may be out of range (``"unchecked"``, or ``"error"`` checked elsewhere):
        the engine must keep every read inside the data (one clamp of the flat position).
    bad
        ``"error"`` where values cannot be read now: True at bad positions, to be enforced
        by the engine when the graph runs or under ``checkify``.
    find_bad
        With `bad`: the function that computed it from the caller's index array, for an
        engine that reads the index again only on a rare path and wants the reads there.
    vectors
        The index vectors (the components along the last axis) where `values` are exactly
        their components, untouched by the policy; else None. An engine whose gather takes
        whole vectors reads them as they are, with no pass to take them apart and back.
    """

    values: list[Any]
    keep: Any = None
    keep_inside: bool = False
    bad: Any = None
    find_bad: Callable[[Any], Any] | None = None
    vectors: Any = None

    @property
    def valid(self) -> bool:
        """Whether every component is in ``[0, n)``: nothing is left to mask or clamp."""
        return self.keep is None and not self.keep_inside


#: What is done to each component once the checks are settled: its remainder modulo n,
#: clamped into [0, n), or nothing (bad values are then checked, filled or clamped
#: elsewhere). Where the operation allows it, negatives count from the end first.
Treatment = Literal["wrap", "clip", "none"]


def normalize(
    xp: Any, engine: IndexEngine, indices: Any, plan: GatherPlan, policy: str, access: IndexAccess
) -> Components:
    """Apply `policy` to `indices` (the caller's index array) as `plan` describes them."""
    wrap_sizes = plan.axis_sizes if policy == "wrap" else None
    values, parts = _wide_components(xp, engine, indices, plan, wrap_sizes)
    treatment: Treatment = "wrap" if policy == "wrap" else "clip" if policy == "clip" else "none"
    from_end = plan.allow_negative
    result = Components(parts)
    if policy == "error" and access != "now":
        # Checked apart (in the task graph, under checkify); read safely meanwhile.
        result.bad = ~in_range(xp, values, parts, plan)

        def find_bad(index_array: Any) -> Any:
            return ~in_range(xp, *_wide_components(xp, engine, index_array, plan, None), plan)

        result.find_bad = find_bad
        result.keep_inside = True
    elif policy == "ignore":
        result.keep = in_range(xp, values, parts, plan)
    elif access == "now" and (policy == "error" or _range_read_pays(engine, values, policy, plan)):
        found = read_range(engine, values, parts, plan)
        if not found.all_valid and policy == "error":
            raise_first_bad(
                xp, ~in_range(xp, values, parts, plan), indices, plan.report, engine.read_int
            )
        if found.all_valid:  # nothing to clamp or wrap, and maybe nothing from the end
            treatment, from_end = "none", plan.allow_negative and found.any_negative
        else:
            result.keep_inside = policy == "unchecked"
    else:
        result.keep_inside = policy == "unchecked"
    if treatment != "none" or from_end:
        result.values = [
            _treat_component(xp, engine, part, n, treatment, from_end)
            for part, n in zip(parts, plan.axis_sizes, strict=True)
        ]
    elif plan.vector:
        result.vectors = values
    return result


def _wide_components(
    xp: Any, engine: IndexEngine, indices: Any, plan: GatherPlan, wrap_sizes: tuple[int, ...] | None
) -> tuple[Any, list[Any]]:
    """The index in the wide dtype, and its components."""
    values = to_wide(xp, indices, engine.wide_index_dtype(indices), wrap_sizes, plan.vector)
    if plan.vector:
        return values, engine.vector_components(values, len(plan.axis_sizes))
    return values, [values]


def _treat_component(
    xp: Any, engine: IndexEngine, component: Any, n: int, treatment: Treatment, from_end: bool
) -> Any:
    """Map one component into ``[0, n)`` as `treatment` says, negatives first counted from
    the end where `from_end`."""
    if treatment == "wrap":
        # The array API's remainder takes the sign of the divisor, like Python's %.
        return xp.remainder(component, n)
    if from_end:
        component = xp.where(component < 0, component + n, component)
    if treatment == "clip":
        return engine.clamp(component, 0, n - 1)
    return component


def _range_read_pays(engine: IndexEngine, values: Any, policy: str, plan: GatherPlan) -> bool:
    """Whether reading the index range first saves passes under `policy`.

    Only where values read cheaply: ``"clip"``, ``"wrap"`` and ``"unchecked"`` never need to
    read them. Not for ``"unchecked"`` where the engine's gather clamps anyway and nothing
    counts from the end, unless the range reads for less than any pass (a small index).
    """
    if not engine.reads_cheaply(values):
        return False
    if policy != "unchecked" or plan.allow_negative or not engine.keeps_reads_inside(values):
        return True
    return engine.reads_range_freely(values)


@dataclass(frozen=True)
class IndexRange:
    """What one read of the index range found: whether every index is valid and, if so,
    whether any counts from the end."""

    all_valid: bool
    any_negative: bool = False


# The three findings, made once: a frozen dataclass is not free to construct on every call.
_SOME_BAD = IndexRange(all_valid=False)
_ALL_VALID = IndexRange(all_valid=True)
_ALL_VALID_SOME_NEGATIVE = IndexRange(all_valid=True, any_negative=True)


def read_range(engine: IndexEngine, values: Any, parts: list[Any], plan: GatherPlan) -> IndexRange:
    """Eager check with read-only reductions and no temporary arrays.

    One range of the whole index array settles the common case where it fits the shortest
    axis; otherwise each component is checked on its own.
    """
    if not plan.axis_sizes:
        return _ALL_VALID
    shortest = min(plan.axis_sizes)
    low, high = engine.value_range(values)
    if low >= (-shortest if plan.allow_negative else 0) and high < shortest:
        return _ALL_VALID_SOME_NEGATIVE if low < 0 else _ALL_VALID
    return judge_ranges((engine.value_range(part) for part in parts), plan)


def judge_ranges(ranges: Iterable[tuple[int, int]], plan: GatherPlan) -> IndexRange:
    """What the ``(min, max)`` of each component (taken in order, and only as far as needed:
    `ranges` may read them lazily) say of the index."""
    any_negative = False
    for (low, high), n in zip(ranges, plan.axis_sizes, strict=True):
        if low < (-n if plan.allow_negative else 0) or high >= n:
            return _SOME_BAD
        any_negative = any_negative or low < 0
    return _ALL_VALID_SOME_NEGATIVE if any_negative else _ALL_VALID


def all_in_range(xp: Any, indices: Any, plan: GatherPlan) -> Any:
    """A 0-d int8: 1 where every component of the caller's `indices` (not empty) is in
    range for `plan` (as :func:`judge_ranges` judges), else 0. One reduction of the flat
    mask, inside a compiled computation: XLA compiles that faster than a reduction along
    some of the index's axes (the per-component minima and maxima), which a first call on a
    new shape pays (benchmarks/RESULTS.md, "JAX engine choices")."""
    signed = xp.isdtype(indices.dtype, "signed integer")
    parts = [indices[..., k] for k in range(plan.depth)] if plan.vector else [indices]
    mask = None
    for part, n in zip(parts, plan.axis_sizes, strict=True):
        valid = part < n
        if signed:  # an unsigned value is never below the lower bound
            valid = valid & (part >= (-n if plan.allow_negative else 0))
        mask = valid if mask is None else mask & valid
    return xp.min(xp.astype(xp.reshape(mask, (-1,)), xp.int8))


def in_range(xp: Any, values: Any, parts: list[Any], plan: GatherPlan) -> Any:
    """Boolean array over index vectors: True where every component is valid."""
    mask = None
    for part, n in zip(parts, plan.axis_sizes, strict=True):
        low = -n if plan.allow_negative else 0
        valid = (part >= low) & (part < n)
        mask = valid if mask is None else mask & valid
    if mask is None:
        grid = values.shape[:-1] if plan.vector else values.shape
        mask = xp.ones(grid, dtype=xp.bool, device=device_for_new(values))
    return mask


def flat_positions(components: list[Any], strides: tuple[int, ...]) -> Any:
    """Row-major flat positions within the gathered block, from one array per axis and the
    axes' strides (None for no components: index depth 0, where every vector selects the
    whole block)."""
    flat = None
    for component, stride in zip(components, strides, strict=True):
        term = component if stride == 1 else component * stride
        flat = term if flat is None else flat + term
    return flat


def to_wide(
    xp: Any, indices: Any, wide: Any, wrap_sizes: tuple[int, ...] | None, vector: bool
) -> Any:
    """Cast integer indices to the signed dtype `wide` without wrapping big unsigned values.

    Unsigned values that `wide` cannot hold come out of the cast negative. They are out of
    range for any array that fits in memory, so they become `wide`'s maximum; under ``"wrap"``
    (`wrap_sizes` given, one per component along the last axis when `vector`) they become
    their true remainder instead. Only casts and signed arithmetic are used: PyTorch has no
    comparison or remainder for uint64.
    """
    if indices.dtype == wide:
        return indices
    too_big = not xp.isdtype(indices.dtype, "signed integer") and int(
        xp.iinfo(indices.dtype).max
    ) > int(xp.iinfo(wide).max)
    values = xp.astype(indices, wide)
    if not too_big:
        return values
    if wrap_sizes is None:
        return xp.where(values < 0, int(xp.iinfo(wide).max), values)
    # A value v >= 2**(bits-1) arrives as v - 2**bits, and v % n == (w % n + 2**bits % n) % n.
    span = 2 ** int(xp.iinfo(indices.dtype).bits)
    sizes: Any
    offsets: Any
    if vector:
        device = device_for_new(indices)
        sizes = xp.asarray(wrap_sizes, dtype=wide, device=device)
        offsets = xp.asarray([span % n for n in wrap_sizes], dtype=wide, device=device)
    else:
        sizes, offsets = wrap_sizes[0], span % wrap_sizes[0]
    wrapped = xp.remainder(xp.remainder(values, sizes) + offsets, sizes)
    return xp.where(values < 0, wrapped, values)
