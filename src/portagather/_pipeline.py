"""What every operation shares once its shapes are planned: the bad-index policy and flat indices.

Each public operation validates its arguments, describes its gather as a :class:`Plan`, and
hands over here. This module turns the caller's index components into one flat index array
(applying the policy on the way), lets the plan's ``compose`` do the single gather, and masks
ignored slices.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import array_api_compat as aac

from ._arrays import fill_array, to_wide
from ._backends import (
    clamp,
    enforce_lazily,
    flat_index_dtype,
    is_symbolic,
    is_traced,
    reads_cheaply,
    take_clamps,
    value_range,
    wide_index_dtype,
)
from ._errors import BadIndex, raise_first_bad
from ._policy import component_in_range, fix_component, resolve_default


@dataclass(frozen=True)
class Plan:
    """One gather, as planned from static shapes.

    sizes
        Length of the axis each index component addresses (one entry per component).
    strides
        Flat stride of each component within the gathered block.
    vector
        True when the components lie along the index array's last axis (``gather_nd``).
    allow_negative
        Whether ``[-n, 0)`` counts from the end (``gather_d``, ``take_along_axis``).
    out_shape
        Shape of the result.
    keep_shape
        Shape that the per-index-vector mask takes to broadcast against the result.
    largest
        Largest flat position ``compose`` may be handed; it sets the index width.
    compose
        Takes the flat indices (shape of the index grid) and returns the gathered result.
    report
        How a bad index is described.
    """

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    vector: bool
    allow_negative: bool
    out_shape: tuple[int, ...]
    keep_shape: tuple[int, ...]
    largest: int
    compose: Callable
    report: BadIndex


def run(xp, data, indices, plan: Plan, policy: str, fill_value):
    """Apply `policy` to `indices`, gather as `plan` says, and return the result."""
    device = aac.device(data)
    if math.prod(plan.out_shape) == 0:
        # Nothing is read, so nothing can be out of range, even when data is empty.
        return xp.zeros(plan.out_shape, dtype=data.dtype, device=device)
    traced = is_traced(indices) or is_symbolic(indices)
    policy = resolve_default(policy, values_visible=not traced)
    if 0 in plan.sizes:
        if policy == "ignore":
            fill = fill_array(xp, fill_value, data.dtype, device)
            return xp.asarray(xp.broadcast_to(fill, plan.out_shape), copy=True)
        raise IndexError(plan.report.empty_axis_text())
    flat_dtype = flat_index_dtype(xp, plan.largest)

    wrap_sizes = plan.sizes if policy == "wrap" else None
    values = to_wide(xp, indices, wide_index_dtype(xp), wrap_sizes, plan.vector)
    if plan.vector:
        components = [values[..., j] for j in range(len(plan.sizes))]
    else:
        components = [values]
    lazy_bad = keep = None
    # Whether some value is negative, once a range read has shown every index valid (None:
    # not known). Valid indices need no clamp or wrap, and no negatives need no three-pass
    # count from the end; the range costs read-only reductions and no temporaries.
    negatives = None
    eager = not (traced or aac.is_dask_array(values))
    if policy == "error" and not eager:
        bad = ~_in_range(xp, values, components, plan)
        if aac.is_dask_array(bad):
            lazy_bad = bad
        else:
            enforce_lazily(xp, bad, indices, plan.report, None)
        policy = "unchecked"  # the check stands apart; compute safely meanwhile
    elif policy == "ignore":
        keep = _in_range(xp, values, components, plan)
    elif eager and (policy == "error" or _range_read_pays(xp, values, policy, plan)):
        negatives = _check_range(xp, values, components, plan)
        if negatives is not None:
            policy = "error"  # every index is valid: nothing to clamp or wrap
        elif policy == "error":
            raise_first_bad(xp, ~_in_range(xp, values, components, plan), indices, plan.report)
    allow_negative = plan.allow_negative and negatives is not False

    flat = None
    for component, n, stride in zip(components, plan.sizes, plan.strides, strict=True):
        term = fix_component(xp, component, n, policy, allow_negative)
        term = term if stride == 1 else term * stride
        flat = term if flat is None else flat + term
    if flat is None:  # index depth 0: every index vector selects the whole block
        grid = values.shape[:-1] if plan.vector else values.shape
        flat = xp.zeros(grid, dtype=values.dtype, device=device)
    if keep is not None:
        flat = xp.where(keep, flat, 0)
    elif policy == "unchecked" and not take_clamps(xp):
        # One clamp of the flat index keeps every read inside the array.
        flat = clamp(xp, flat, 0, math.prod(plan.sizes) - 1)
    flat = xp.astype(flat, flat_dtype, copy=False)

    out = plan.compose(flat)
    if keep is not None:
        fill = fill_array(xp, fill_value, data.dtype, device)
        out = xp.where(xp.reshape(keep, plan.keep_shape), out, fill)
    if lazy_bad is not None:
        out = enforce_lazily(xp, lazy_bad, indices, plan.report, out)
    return out


def _range_read_pays(xp, values, policy: str, plan: Plan) -> bool:
    """Whether reading the index range first saves passes under `policy`.

    Only where values read cheaply (``reads_cheaply``): ``"clip"``, ``"wrap"`` and
    ``"unchecked"`` never need to read them. Not for ``"unchecked"`` where the backend's
    ``take`` clamps anyway and nothing counts from the end.
    """
    if not reads_cheaply(values):
        return False
    return policy != "unchecked" or plan.allow_negative or not take_clamps(xp)


def _check_range(xp, values, components, plan: Plan):
    """Eager check with read-only reductions and no temporary arrays.

    Returns None when some index is bad, else whether any value is negative. One range of the
    whole (contiguous) index array settles the common case where it fits the shortest axis;
    otherwise each component is checked on its own.
    """
    if not plan.sizes:
        return False
    shortest = min(plan.sizes)
    low, high = value_range(xp, values)
    if low >= (-shortest if plan.allow_negative else 0) and high < shortest:
        return low < 0
    negative = False
    for component, n in zip(components, plan.sizes, strict=True):
        low, high = value_range(xp, component)
        if low < (-n if plan.allow_negative else 0) or high >= n:
            return None
        negative = negative or low < 0
    return negative


def _in_range(xp, values, components, plan: Plan):
    """Boolean array over index vectors: True where every component is valid."""
    mask = None
    for component, n in zip(components, plan.sizes, strict=True):
        valid = component_in_range(xp, component, n, plan.allow_negative)
        mask = valid if mask is None else mask & valid
    if mask is None:
        grid = values.shape[:-1] if plan.vector else values.shape
        mask = xp.ones(grid, dtype=xp.bool, device=aac.device(values))
    return mask
