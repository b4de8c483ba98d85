"""Random shapes, depths, batch dims, dtypes and policies, checked against the loop reference."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import assert_same, call, expected
from portagather.conformance.strategies import mixed_calls

EXAMPLES = {
    "numpy": 300,
    "array_api_strict": 120,
    "jax": 80,
    "torch": 120,
    "dask": 60,
    "ndonnx": 40,
}


def _run_property(backend):
    @settings(
        max_examples=EXAMPLES[backend.name],
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def run(data_strategy):
        op, data, indices, options, policy = data_strategy.draw(
            mixed_calls(backend.dtypes, backend.dtypes)
        )
        kwargs = dict(options, bad_indices=policy)
        try:
            wanted = expected(backend, op, data, indices, index_dtype=indices.dtype, **kwargs)
        except IndexError:
            with pytest.raises(IndexError):
                call(backend, op, data, indices, index_dtype=indices.dtype, **kwargs)
            return
        actual = call(backend, op, data, indices, index_dtype=indices.dtype, **kwargs)
        assert_same(actual, wanted)

    run()


def test_matches_reference_on_random_cases(backend):
    _run_property(backend)
