"""Loads the suite's pytest plugin (``pytest --pyargs portagather.conformance``)."""

from portagather.conformance.plugin import *  # noqa: F403
