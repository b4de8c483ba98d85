"""How a JAX gather keeps its reads inside, and how ``checkify`` finds the bad ones.

A checked gather (``"error"`` under ``checkify``) either puts a marker of the dtype at its
bad reads and checks the result by one reduction, reading the index again only where a
marker is seen (:func:`marks_bad_reads`), or reads with ``mode="fill"`` and checks the index
(:func:`read_mode`); the message it raises prints like the eager one
(:func:`checkify_message`).
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._errors import BadIndex
from .._indices import Components
from .._plan import GatherPlan


def read_mode(components: Components, plan: GatherPlan, dtype: Any) -> str:
    """How the gather keeps out-of-range reads inside.

    Nothing to do where every index is valid; a clamp where reads may be out of range (the
    gather's own, or one fused before it: :func:`kept_inside`); ``"fill"`` where
    ``checkify`` reports them and no marker is put there instead (those reads hold JAX's
    fill value and get no gradient; XLA on CPU runs "fill" faster than its own "clip").
    """
    if components.valid:
        return "promise_in_bounds"
    if components.bad is not None and not marks_bad_reads(components, plan, dtype):
        return "fill"
    return "clip"


def kept_inside(index: Any, largest: int, mode: str, elements: bool) -> tuple[Any, str]:
    """`index` and the gather mode that keep its reads inside ``[0, largest]``.

    Where `mode` is ``"clip"`` and each index value reads one element (`elements`), the
    index is clamped by one elementwise clip, fused into the gather's index computation,
    and the gather is told that every read is in bounds: XLA on CPU runs that faster than
    the gather's own clamp. Where each value reads a slice, the fused clip would be computed
    again for every element of it, and the gather's own clamp stays (both measured in
    benchmarks/RESULTS.md, "JAX engine choices").
    """
    if mode != "clip" or not elements:
        return index, mode

    return jnp.clip(index, 0, largest), "promise_in_bounds"


def marks_bad_reads(components: Components, plan: GatherPlan, dtype: Any) -> bool:
    """Whether the gather of `plan` puts markers at its bad reads for ``checkify``."""
    if components.bad is None:
        return False
    index_values = math.prod(components.bad.shape) * len(components.values)
    return result_is_read(dtype, math.prod(plan.out_shape), index_values)


def result_is_read(dtype: Any, result_size: int, index_size: int) -> bool:
    """Whether the check of a gather's bad reads looks for markers in its result: where the
    dtype has a marker and the result has no more elements than the index has values, so
    that reading it costs no more than reading the index again (W1: 1M results against 2M
    index values)."""
    return bad_marker(dtype) is not None and result_size <= index_size


def bad_marker(dtype: Any) -> Any:
    """The value a checked gather puts at bad reads, for the check to find: NaN, or the
    least (signed) or greatest (unsigned) integer; None for booleans, which have none.

    The caller's data may hold it too; the check then reads the index to be sure.
    """

    if jnp.issubdtype(dtype, jnp.inexact):
        return math.nan
    if jnp.issubdtype(dtype, jnp.signedinteger):
        return np.iinfo(dtype).min
    if jnp.issubdtype(dtype, jnp.unsignedinteger):
        return np.iinfo(dtype).max
    return None


def marker_seen(result: Any) -> Any:
    """Whether `result` holds the marker of its dtype anywhere: one reduction of it.

    For floats a plain sum, NaN wherever a marker is (XLA on CPU sums faster than it
    reduces ``isnan`` or ``result * 0``; infinities of both signs, or partial sums that
    overflow both ways, also sum to NaN, which only costs the index read that settles it);
    for integers a min or max.
    """

    if jnp.issubdtype(result.dtype, jnp.inexact):
        return jnp.isnan(jnp.sum(result))
    if jnp.issubdtype(result.dtype, jnp.signedinteger):
        return jnp.min(result) == np.iinfo(result.dtype).min
    return jnp.max(result) == np.iinfo(result.dtype).max


def checkify_message(report: BadIndex, coords: list[Any], value: Any) -> tuple[str, dict[str, Any]]:
    """The eager path's IndexError text, as a ``checkify`` format string and its arguments.

    One scalar argument per coordinate and per component, so that the message prints like
    the eager one (``indices[2, 0] = [7, 1] ...``), not as NumPy arrays (``[2 0]``).
    """
    # Private-use characters stand for the fields while the rest of the text is escaped.
    field = "\ue000{}\ue001"
    position = tuple(field.format(f"p{k}") for k in range(len(coords)))
    components = [field.format(f"v{j}") for j in range(value.shape[0])]
    shown = "[" + ", ".join(components) + "]" if report.vector else components[0]
    text = report.text(position, shown).replace("{", "{{").replace("}", "}}")
    text = text.replace("\ue000", "{").replace("\ue001", "}")
    arguments = {f"p{k}": c for k, c in enumerate(coords)}
    arguments.update({f"v{j}": value[j] for j in range(value.shape[0])})
    return text, arguments
