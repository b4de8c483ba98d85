"""Loads the suite's pytest plugin (``portagather check``, ``pytest --pyargs
portagather.conformance``), by name, so that it is registered once even when the ``pytest11``
entry point loaded it first."""

pytest_plugins = ["portagather.conformance.plugin"]
