"""The suite's ``test_transforms.py``, from the installed package (see README.md)."""

from portagather.conformance.test_transforms import *  # noqa: F403
