"""Shared hypothesis settings of the oracle tests: 300 cases each under the hypothesis profile
``thorough``, the profile's share of them otherwise (``strategies.examples``; the tests load
the ``portagather`` profile unless a run names one), the same on every run."""

from hypothesis import HealthCheck, settings

from portagather.conformance.strategies import examples

ORACLE = settings(
    max_examples=examples(300),
    derandomize=True,  # a fixed seed: a failure reproduces on the next run and in CI
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
