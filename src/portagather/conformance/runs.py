"""How the suite's tests run their cases, written once: the calls hypothesis draws, and
tables of named rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis.strategies import SearchStrategy

from .backends import Backend
from .cases import check_result
from .strategies import drawn

C = TypeVar("C")


def each_drawn(examples: int, strategy: SearchStrategy[C], check: Callable[[C], None]) -> None:
    """`check` run on `examples` cases drawn from `strategy` (derandomized: see
    :func:`~.strategies.drawn`); hypothesis shrinks and reports the first that fails."""
    drawn(examples)(given(strategy)(check))()


def run_drawn(
    backend: Backend, repro: Callable[[Any], Any], strategy: SearchStrategy[Any], examples: int
) -> None:
    """The drawn valid calls: each (kept by `repro` for the report) run on `backend` and
    its result compared exactly with the reference's."""

    def check(call: Any) -> None:
        out, data = repro(call).run(backend)
        check_result(backend, out, call.expected(), data)

    each_drawn(examples, strategy, check)


def named_rows(names: str | Sequence[str], rows: Sequence[tuple[Any, ...]]) -> Any:
    """``pytest.mark.parametrize`` over `rows` whose first item is the row's id and the
    rest are the values of `names`."""
    return pytest.mark.parametrize(names, [r[1:] for r in rows], ids=[r[0] for r in rows])
