"""The suite's ``test_examples.py``, from the installed package (see README.md)."""

from portagather.conformance.test_examples import *  # noqa: F403
