"""The suite's ``test_segment_toolkit.py``, from the installed package (see README.md)."""

from portagather.conformance.test_segment_toolkit import *  # noqa: F403
