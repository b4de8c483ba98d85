"""The one place that reads PyTorch's private ``torch._C._functorch``.

Why: an index tensor batched by ``torch.func.vmap`` holds no storage, so reading its values
(``tolist``, ``item``) fails deep inside PyTorch, and an in-place write of batched values
into an unbatched tensor is refused. PyTorch has no public way to ask whether a tensor is
batched, or whether a vmap is running: ``torch.func`` exposes none, and PyTorch's own Python
side asks these same private bindings (``torch/_functorch/vmap.py`` and
``torch/_functorch/pyfunctorch.py``,
https://github.com/pytorch/pytorch/blob/main/torch/_functorch/pyfunctorch.py; Dynamo lists
``torch._C._functorch.is_batchedtensor`` as a traced builtin,
https://github.com/pytorch/pytorch/pull/149541).

``tests/test_private_shims.py`` fails loudly when PyTorch moves or renames any name used here.
"""

from __future__ import annotations

from typing import Any

from torch._C import _functorch

#: The names of ``torch._C._functorch`` read here (the shim test checks each exists).
USED = (
    "maybe_current_level",
    "is_functorch_wrapped_tensor",
    "is_batchedtensor",
    "get_unwrapped",
    "get_interpreter_stack",
    "TransformType",
)


def batched_by_vmap(x: Any) -> bool:
    """Whether tensor `x` is batched by ``torch.func.vmap`` at some level (under ``grad``
    too). A tensor that vmap does not map (closed over) is not."""
    if _functorch.maybe_current_level() is None:  # no torch.func transform is running
        return False
    while _functorch.is_functorch_wrapped_tensor(x):
        if _functorch.is_batchedtensor(x):
            return True
        x = _functorch.get_unwrapped(x)  # a grad or jvp level: look beneath it
    return False


def vmap_running() -> bool:
    """Whether a ``torch.func.vmap`` is running (at any level of the transform stack)."""
    return _functorch.maybe_current_level() is not None and any(
        level.key() == _functorch.TransformType.Vmap for level in _functorch.get_interpreter_stack()
    )
