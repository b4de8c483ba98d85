"""The suite's ``test_export.py``, from the installed package (see README.md)."""

from portagather.conformance.test_export import *  # noqa: F403
