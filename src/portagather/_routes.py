"""The repeat call: one dictionary lookup finds the whole prepared route of a call seen before.

Every check of steps 1-4 of ``_arguments`` (options, kinds, shapes, dtypes) depends only on
what a call's key holds: the operation, the options as the caller wrote them (each with its
type, so that ``1`` never stands in for ``True``), and for each array its type, shape, dtype
and, where the engine has devices, its device. So the first call of a key runs the checks;
what they found (the namespace, its engine, the plan, the policy, the fill, the reduction,
the promises) is kept as a data-only :class:`Route`; a later call of the same key skips
straight to the steps that remain (how the index values can be seen, the policy on them, one
engine call). This is the idea of einops' cached recipe, applied to the whole checked call.

Only arrays are keyed: a call with Python values (lists, scalars as updates), an argument
that cannot be hashed, or arrays of a type whose engine keeps no key (JAX, Dask, ndonnx,
array-api-strict, whose calls either compile once per shape already or are lazy) runs every
check each time. The values of the index are never part of a key: the policy reads them on
every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._plan import GatherPlan
from ._scatter import ScatterPromises
from .engines import KEYED_ENGINES, Engine

#: Routes by key. A program calls a bounded number of signatures; the bound keeps a program
#: that calls an unbounded number (shapes that grow) from holding on to every one.
_ROUTES: dict[tuple[Any, ...], Any] = {}
_MAX_ROUTES = 1024


@dataclass(frozen=True, slots=True)
class Route:
    """What the checks of one call signature found: nothing but data, the engine, and the
    engine's checked kernel for it.

    `policy` is the canonical policy (``"default"`` until the call knows how its index values
    can be seen); `fill` what ``check_fill_value`` made of ``fill_value`` (gathers);
    `reduction` the reduction the engine runs (scatters: ``"max"`` for ``"add"`` on bool).
    `kernel` is :meth:`Engine.checked_gather` or :meth:`Engine.checked_scatter` of the route:
    the whole call for a valid index, or None where it does not serve (the policy decides).
    Every field is given (no defaults): torch.compile traces a route's making, and cannot
    trace a default object's."""

    xp: Any
    engine: Engine
    plan: GatherPlan
    policy: str
    fill: Any
    reduction: str
    promises: ScatterPromises
    kernel: Callable[..., Any] | None


def kernel_applies(engine: Engine, plan: GatherPlan, policy: str) -> bool:
    """Whether a checked kernel may answer calls of `plan` under `policy`: the policy leaves
    every valid index as it is (TensorFlow's default is "error" wherever such a kernel
    applies, since it applies only where the values can be read now), and the pipeline has
    no answer of its own (an empty result, an empty axis)."""
    return (
        engine.gathers_checked
        and policy in ("error", "unchecked", "default")
        and not plan.reads_nothing
        and 0 not in plan.axis_sizes
    )


def call_key(options: tuple[Any, ...], *arrays: Any) -> tuple[Any, ...] | None:
    """The key of a call with these `options` (hashable values, each after its type where a
    value of another type could compare equal: ``0``, ``0.0``, ``False`` and ``np.int8(0)``
    compare equal and hash alike, yet the checks treat them differently) and these arrays,
    or None where the call cannot be keyed (arrays of two types, of a type with no keyed
    engine, Python values)."""
    kind = type(arrays[0])
    engine = KEYED_ENGINES.get(kind)
    if engine is None:
        return None
    for array in arrays:
        if type(array) is not kind:
            return None
    keys = engine.route_keys(arrays)
    return None if keys is None else (options, keys)


def find(key: tuple[Any, ...] | None) -> Any:
    """The route kept for `key` (a :class:`Route`, or a front end's own record), or None
    (also where a value of the key cannot be hashed)."""
    if key is None:
        return None
    try:
        return _ROUTES.get(key)
    except TypeError:  # an option that cannot be hashed (a list as bad_indices, an array)
        return None


def keep(key: tuple[Any, ...] | None, route: Any) -> None:
    """Keep `route` for later calls of `key` (where there is one, and it can be hashed)."""
    if key is None:
        return
    if len(_ROUTES) >= _MAX_ROUTES:
        _ROUTES.clear()
    try:
        _ROUTES[key] = route
    except TypeError:
        pass
