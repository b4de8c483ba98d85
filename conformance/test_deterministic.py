"""The suite's ``test_deterministic.py``, from the installed package (see README.md)."""

from portagather.conformance.test_deterministic import *  # noqa: F403
