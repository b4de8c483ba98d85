"""Calls drawn by hypothesis, checked against the plain-loop reference."""

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
