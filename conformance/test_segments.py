"""The suite's ``test_segments.py``, from the installed package (see README.md)."""

from portagather.conformance.test_segments import *  # noqa: F403
