"""The conformance suite and its plain-loop references.

This package is also a pytest plugin, the ``pytest11`` entry point ``portagather``: for
``pytest --pyargs portagather.conformance --backend numpy`` it loads the suite's plugin
(``plugin.py``) before pytest parses ``--backend``, which a package's conftest is loaded too late
to add. In every other pytest session it does nothing.
"""

from __future__ import annotations

from typing import Any

SUITE_PLUGIN = f"{__name__}.plugin"


def _names_the_suite(arg: str) -> bool:
    """Whether a ``--pyargs`` argument is this package, a module in it, or portagather itself."""
    module = arg.split("::")[0]
    return module in (__name__, __name__.rpartition(".")[0]) or module.startswith(f"{__name__}.")


def pytest_load_initial_conftests(early_config: Any) -> None:
    namespace = early_config.known_args_namespace
    if getattr(namespace, "pyargs", False) and any(map(_names_the_suite, namespace.file_or_dir)):
        early_config.pluginmanager.import_plugin(SUITE_PLUGIN)
