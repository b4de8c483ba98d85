"""The engines: one per backend, each in a module of its own over the generic base.

:func:`engine_for` picks the engine of a namespace once and keeps it. A backend's module is
imported only here, and only when an array of that backend is already in hand, so that
importing portagather imports no backend but NumPy (a dependency). Any other namespace that
follows the array API standard runs on the generic :class:`~.base.Engine`.
"""

from __future__ import annotations

from typing import Any

import array_api_compat as aac

from .base import Engine

__all__ = ["KEYED_ENGINES", "Engine", "engine_for"]

#: The engine of each namespace, by its id: one per namespace, made when its first array
#: arrives (a namespace is a module, alive as long as the program, so its id is never
#: another's). Why: a route keeps its engine, and a call without a route asks for it.
_ENGINES: dict[int, Engine] = {}

#: The engine of each array type whose calls are keyed (``Engine.array_type``, read by
#: ``_routes.call_key``): filled as engines are made, so a type is keyed from the second
#: call of its backend on.
KEYED_ENGINES: dict[type, Engine] = {}


def engine_for(xp: Any) -> Engine:
    """The engine of namespace `xp`, made once per namespace."""
    engine = _ENGINES.get(id(xp))
    if engine is None:
        engine = _ENGINES[id(xp)] = _make_engine(xp)
        if engine.array_type is not None:
            KEYED_ENGINES[engine.array_type] = engine
    return engine


def _make_engine(xp: Any) -> Engine:
    if aac.is_numpy_namespace(xp):
        from .numpy import NumPyEngine

        return NumPyEngine(xp)
    if aac.is_torch_namespace(xp):
        from .torch import TorchEngine

        return TorchEngine(xp)
    if aac.is_jax_namespace(xp):
        from .jax import JaxEngine

        return JaxEngine(xp)
    if aac.is_dask_namespace(xp):
        from .dask import DaskEngine

        return DaskEngine(xp)
    if aac.is_ndonnx_namespace(xp):
        from .ndonnx import NdonnxEngine

        return NdonnxEngine(xp)
    return Engine(xp)
