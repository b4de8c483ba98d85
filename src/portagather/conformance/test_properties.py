"""Calls drawn by hypothesis, checked against the plain-loop reference."""

import pytest
from hypothesis import given

from . import strategies
from .cases import OPS, POLICIES, Call, check_call, check_result, check_unchecked
from .strategies import drawn

BATCHED = ("gather_nd", "gather")


# Every operation on drawn shapes ("shapes"); the batched ones again with batch_dims >= 1.
VALID = [(op, "shapes") for op in OPS] + [(op, "batch_dims") for op in BATCHED]


@pytest.mark.cell("{kind}")
@pytest.mark.parametrize(("op", "kind"), VALID)
def test_valid_indices(backend, repro, op, kind):
    @drawn(12)
    @given(strategies.calls(op, batch=kind == "batch_dims"))
    def check(call: Call) -> None:
        out, data = repro(call).run(backend)
        check_result(backend, out, call.expected(), data)

    check()


@pytest.mark.cell("policy:{policy}")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("op", OPS)
def test_bad_indices(backend, repro, op, policy):
    @drawn(5)
    @given(strategies.calls(op, batch=op in BATCHED, bad=True))
    def check(call):
        call.kwargs.update(bad_indices=policy, fill_value=-7)
        repro(call)
        if policy == "unchecked":
            check_unchecked(backend, call)
            return
        check_call(backend, call)

    check()
