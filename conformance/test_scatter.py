"""The suite's ``test_scatter.py``, from the installed package (see README.md)."""

from portagather.conformance.test_scatter import *  # noqa: F403
