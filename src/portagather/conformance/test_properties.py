"""Calls drawn by hypothesis, checked against the plain-loop reference."""

from typing import Any

import pytest

from . import strategies
from .cases import OPS, POLICIES, Call, check_call, check_unchecked
from .runs import each_drawn, run_drawn

BATCHED = ("gather_nd", "gather")


# Every operation on drawn shapes ("shapes"); the batched ones again with batch_dims >= 1.
VALID = [(op, "shapes") for op in OPS] + [(op, "batch_dims") for op in BATCHED]


@pytest.mark.cell("{kind}")
@pytest.mark.parametrize(("op", "kind"), VALID)
def test_valid_indices(backend, repro, op, kind):
    run_drawn(backend, repro, strategies.calls(op, batch=kind == "batch_dims"), 12)


@pytest.mark.cell("policy:{policy}")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("op", OPS)
def test_bad_indices(backend, repro, op, policy):
    def check(call: Call) -> None:
        call.kwargs.update(bad_indices=policy, fill_value=-7)
        repro(call)
        if policy == "unchecked":
            check_unchecked(backend, call)
            return
        check_call(backend, call)

    each_drawn(5, strategies.calls(op, batch=op in BATCHED, bad=True), check)


@pytest.mark.cell("mixed")
@pytest.mark.parametrize("op", OPS)
def test_mixed_calls(backend, repro, op):
    """Ranks up to 5 with zero-size axes, negative and default axes and batch_dims, every
    policy and its aliases, data in float32, int16, bool and complex64 and indices in int8
    to uint32 (those the backend holds), mostly valid index values."""

    def check(drawn: tuple[Any, ...]) -> None:
        op, data, indices, options, policy = drawn
        check_call(backend, repro(Call(op, data, indices, {**options, "bad_indices": policy})))

    each_drawn(25, strategies.mixed_calls(op, backend.dtypes, backend.index_dtypes), check)
