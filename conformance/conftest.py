"""``pytest conformance --backend NAME``: the suite's pytest plugin, loaded in time for
``--backend``.

This folder holds no tests of its own: each ``test_*.py`` here brings in one module of the
installed ``portagather.conformance`` package (see README.md). ``--ignore=conformance`` in
pyproject.toml keeps ``pytest .`` from collecting it; naming it on the command line does.
"""

pytest_plugins = ["portagather.conformance.plugin"]
