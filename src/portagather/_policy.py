"""Bad-index policies: names, and what each does to one index component."""

from __future__ import annotations

from ._backends import clamp

POLICIES = ("error", "ignore", "clip", "wrap", "unchecked")

# TensorFlow's spellings. "" and "DEFAULT" mean TensorFlow's documented default, which
# depends on whether index values can be inspected (see ``resolve_default``).
_ALIASES = {"ERROR": "error", "IGNORE": "ignore", "": "default", "DEFAULT": "default"}


def normalize_policy(bad_indices: object) -> str:
    """Return the canonical policy name, or ``"default"`` for TensorFlow's default.

    Raises
    ------
    ValueError
        If `bad_indices` is not one of the policies or TensorFlow's spellings.
    """
    if isinstance(bad_indices, str):
        if bad_indices in POLICIES:
            return bad_indices
        if bad_indices in _ALIASES:
            return _ALIASES[bad_indices]
    valid = ", ".join(repr(p) for p in (*POLICIES, *_ALIASES))
    raise ValueError(f"bad_indices must be one of {valid}; got {bad_indices!r}")


def resolve_default(policy: str, values_visible: bool) -> str:
    """TensorFlow's default: raise where index values can be checked, ignore where not.

    ``values_visible`` is False only under JAX tracing and for symbolic ndonnx arrays; Dask
    arrays count as visible because the check runs inside the task graph.
    """
    if policy != "default":
        return policy
    return "error" if values_visible else "ignore"


def component_in_range(xp, component, n: int, allow_negative: bool):
    """Boolean array: where `component` is a valid index into an axis of length `n`."""
    low = -n if allow_negative else 0
    return (component >= low) & (component < n)


def fix_component(xp, component, n: int, policy: str, allow_negative: bool):
    """Map one index component into ``[0, n)`` as `policy` says.

    ``error`` and ``ignore`` only count negatives from the end (their checks happen
    elsewhere); ``unchecked`` does too, and the caller clamps the final flat index instead
    of each component, which is one pass instead of one per component.
    """
    if policy == "wrap":
        # The array API's remainder takes the sign of the divisor, like Python's %.
        return xp.remainder(component, n)
    if allow_negative:
        component = xp.where(component < 0, component + n, component)
    if policy == "clip":
        return clamp(xp, component, 0, n - 1)
    return component
