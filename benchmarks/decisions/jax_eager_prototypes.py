"""The prototypes of issue 22's plan for JAX without ``jit``: one cached ``jax.jit`` per
function and static arguments, and four ways of keeping ``"error"`` exact eagerly (a flag
computed with the result, a jitted range read, a range read on the host, ``checkify``).

A decision record: portagather's JAX engine now compiles one computation per plan and reads
the index on the host for an eager ``"error"`` on the CPU (``engines/jax.py``, ``_api.py``),
the choices these prototypes measured. ``benchmarks/jax_eager.py`` times them beside
portagather and the native idioms (its section of ``RESULTS.md``, "JAX without `jit`").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

_PLANS: dict[tuple[Any, ...], Callable[..., Any]] = {}


def planned(fn: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """One ``jax.jit`` of `fn` per function and static arguments; ``jit`` caches one
    compilation per shape and dtype of the arrays (which decide the plan)."""
    key = (fn, tuple(sorted(static.items())))
    jitted = _PLANS.get(key)
    if jitted is None:
        jitted = _PLANS[key] = jax_jit(functools.partial(fn, **static))
    return jitted


def jax_jit(f: Callable[..., Any]) -> Callable[..., Any]:
    import jax

    return jax.jit(f)


def flagged(fn: Callable[..., Any], bad: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """``"error"`` by a flag: one jitted computation of the ``"clip"`` result and of whether
    any index is bad (`bad` of the arguments); where the flag is set, today's eager call,
    which raises the exact IndexError."""
    key = (fn, "flag", tuple(sorted(static.items())))
    jitted = _PLANS.get(key)
    if jitted is None:
        import jax.numpy as jnp

        def both(*args: Any) -> Any:
            return fn(*args, bad_indices="clip", **static), jnp.any(bad(*args))

        jitted = _PLANS[key] = jax_jit(both)

    def call(*args: Any) -> Any:
        result, any_bad = jitted(*args)
        if bool(any_bad):
            return fn(*args, bad_indices="error", **static)  # raises, naming the first
        return result

    return call


def ranged(fn: Callable[..., Any], bad: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """``"error"`` by a range read: one jitted check (read on the host), then the jitted
    ``"unchecked"`` pipeline."""
    key = (fn, "range", tuple(sorted(static.items())))
    check = _PLANS.get(key)
    if check is None:
        import jax.numpy as jnp

        check = _PLANS[key] = jax_jit(lambda *args: jnp.any(bad(*args)))
    run = planned(fn, bad_indices="unchecked", **static)

    def call(*args: Any) -> Any:
        if bool(check(*args)):
            return fn(*args, bad_indices="error", **static)
        return run(*args)

    return call


def host_ranged(
    fn: Callable[..., Any], bad_host: Callable[..., bool], **static: Any
) -> Callable[..., Any]:
    """``"error"`` by a range read on the host: the index of a CPU array read through a
    NumPy view (``np.asarray`` does not copy it), so the check compiles nothing; then the
    jitted ``"unchecked"`` pipeline (every value known valid)."""
    run = planned(fn, bad_indices="unchecked", **static)

    def call(*args: Any) -> Any:
        if bad_host(args[0], np.asarray(args[1])):
            return fn(*args, bad_indices="error", **static)
        return run(*args)

    return call


def checkified(fn: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    from jax.experimental import checkify

    key = (fn, "checkify", tuple(sorted(static.items())))
    jitted = _PLANS.get(key)
    if jitted is None:
        jitted = _PLANS[key] = jax_jit(
            checkify.checkify(functools.partial(fn, bad_indices="error", **static))
        )

    def call(*args: Any) -> Any:
        err, result = jitted(*args)
        err.throw()
        return result

    return call
