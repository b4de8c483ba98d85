"""``pytest conformance --backend numpy --backend jax``: the suite shipped in the package."""

from portagather.conformance.plugin import *  # noqa: F403
