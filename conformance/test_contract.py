"""The suite's ``test_contract.py``, from the installed package (see README.md)."""

from portagather.conformance.test_contract import *  # noqa: F403
