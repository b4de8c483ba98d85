"""The suite's ``test_arguments.py``, from the installed package (see README.md)."""

from portagather.conformance.test_arguments import *  # noqa: F403
