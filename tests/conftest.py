"""The unit tests' ``backend``: each known backend of the conformance suite in turn.

What a backend holds (its dtypes, whether it is lazy) and how NumPy data goes in and out are
the conformance suite's (``portagather.conformance.backends``), one source for both. JAX runs
with its default configuration (no ``jax_enable_x64``), as most users run it; the tests that
need 64-bit JAX switch it on locally with ``jax.enable_x64``.
"""

from __future__ import annotations

import pytest

from portagather.conformance.backends import KNOWN, Backend, load_backend


@pytest.fixture(params=list(KNOWN))
def backend(request: pytest.FixtureRequest) -> Backend:
    try:
        return load_backend(request.param)
    except ImportError as err:  # the test extra installs every backend
        pytest.fail(str(err))
