"""The suite's ``test_properties.py``, from the installed package (see README.md)."""

from portagather.conformance.test_properties import *  # noqa: F403
