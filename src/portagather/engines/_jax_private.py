"""The two questions JAX has no public answer for: is ``checkify`` tracing, is any trace active.

``under_checkify`` walks the call stack to see whether JAX's ``checkify`` is tracing.

Why: a traced ``checkify.check`` outside ``checkify.checkify`` fails only when the function is
lowered, with JAX's own message, and the tracers look the same either way; JAX has no public
way to ask whether a ``checkify`` transformation is running (its state lives in
``jax/_src/checkify.py``, https://github.com/jax-ml/jax/blob/main/jax/_src/checkify.py).
``checkify`` is on the call stack whenever it is tracing the caller's function, so this looks
for a frame of that file.

``no_trace_active`` reads JAX's trace context (``jax._src.core.trace_ctx``,
https://github.com/jax-ml/jax/blob/main/jax/_src/core.py) to answer, without running anything,
that an eager call runs outside every transformation. Why: the public way to ask, creating a
small array and looking whether it came back a tracer, is a dispatch of its own on every eager
call. It only ever says "no trace" when JAX says so; when the name has moved it answers False
and the caller asks the public way.

``tests/test_private_shims.py`` fails loudly when JAX moves either, or when a function
under ``checkify`` (or under ``jit`` or ``grad``) is no longer seen as such here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

_trace_state_clean: Callable[[], bool] | None
try:  # the private trace context; absent means "ask the public way"
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # pragma: no cover - only when JAX moves it; the shim test fails then
    _trace_state_clean = None

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


def no_trace_active() -> bool:
    """True only when JAX says that no transformation (``jit``, ``grad``, ``vmap``, ...) is
    tracing here, so that every operation on a concrete array runs now."""
    return _trace_state_clean is not None and bool(_trace_state_clean())
