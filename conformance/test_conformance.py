"""The conformance suite lives in ``portagather.conformance``, so that an installed copy can
run it (``portagather check``); this folder runs the same tests from a checkout."""

from portagather.conformance.test_contract import *  # noqa: F403
from portagather.conformance.test_examples import *  # noqa: F403
from portagather.conformance.test_properties import *  # noqa: F403
from portagather.conformance.test_transforms import *  # noqa: F403
