"""The one place that walks the call stack to see whether JAX's ``checkify`` is tracing.

Why: a traced ``checkify.check`` outside ``checkify.checkify`` fails only when the function is
lowered, with JAX's own message, and the tracers look the same either way; JAX has no public
way to ask whether a ``checkify`` transformation is running (its state lives in
``jax/_src/checkify.py``, https://github.com/jax-ml/jax/blob/main/jax/_src/checkify.py).
``checkify`` is on the call stack whenever it is tracing the caller's function, so this looks
for a frame of that file.

``tests/test_private_shims.py`` fails loudly when JAX moves that file, or when a function
under ``checkify`` is no longer seen as such here.
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: The file of JAX whose frames mean that ``checkify`` is tracing.
CHECKIFY_SOURCE = os.path.join("jax", "_src", "checkify.py")


def under_checkify() -> bool:
    """Whether the current trace runs inside ``checkify.checkify``."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith(CHECKIFY_SOURCE):
            return True
        frame = frame.f_back
    return False
