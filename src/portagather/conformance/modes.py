"""One test body, three ways to run it: eagerly, under ``jax.jit``, and lazily on Dask.

In the spirit of array-api-extra's ``lazy_xp_function``: a test writes its call once, and
:func:`in_mode` runs it as the mode says. Under ``"jit"`` the call is ``jax.jit`` of it, so
every array argument is a tracer, as in a user's jitted function. Under ``"lazy"`` the call
runs on Dask with every computation refused, so it must only build a graph; the test computes
the result afterwards. The suite's plugin parametrizes a test that takes ``mode`` with the
modes of each selected backend (``modes_of``), narrowed by ``@pytest.mark.modes(...)``. It is
the one way a test runs one body eagerly and transformed, for the gathers, the scatters
(``ScatterCall.run``) and the segment reductions alike: no test takes a flag of its own (a
``jit`` boolean) or counts Dask's tasks itself, and the unit tests in ``tests/`` call
:func:`in_mode` and :func:`no_compute` too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])

#: Each mode and the one backend it applies to (None: every backend).
MODES: dict[str, str | None] = {"eager": None, "jit": "jax", "lazy": "dask"}


def modes_of(backend_name: str) -> tuple[str, ...]:
    """The modes a backend runs in: ``eager`` everywhere, ``jit`` on JAX, ``lazy`` on Dask."""
    return tuple(mode for mode, only in MODES.items() if only in (None, backend_name))


def effective_policy(policy: str, mode: str) -> str:
    """The policy a call keeps in `mode` (docs/contract.md, "Bad indices").

    TensorFlow's default (``""``, ``"DEFAULT"``) is ``"ignore"`` where index values are
    traced, as under ``jit``, and ``"error"`` elsewhere; names are case-insensitive.
    """
    name = policy.lower()
    if name in ("", "default"):
        return "ignore" if mode == "jit" else "error"
    return name


def _refuse_to_compute(*_args: object, **_kwargs: object) -> NoReturn:
    msg = "the call computed something: on Dask it must only build a graph"
    raise AssertionError(msg)


@contextmanager
def no_compute() -> Iterator[None]:
    """Inside, any Dask computation fails the test."""
    import dask

    with dask.config.set(scheduler=_refuse_to_compute):
        yield


def in_mode(function: _F, mode: str) -> _F:
    """`function` as `mode` runs it: as it is, ``jax.jit(function)``, or with Dask
    computations refused while it runs."""
    if mode == "eager":
        return function
    if mode == "jit":
        import jax

        return cast(_F, jax.jit(function))
    if mode == "lazy":

        @functools.wraps(function)
        def lazily(*args: Any, **kwargs: Any) -> Any:
            with no_compute():
                return function(*args, **kwargs)

        return cast(_F, lazily)
    msg = f"unknown mode {mode!r}; modes: {', '.join(MODES)}"
    raise ValueError(msg)
