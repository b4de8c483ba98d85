"""The shims over other libraries' private modules fail here, loudly, when the library
moves what they read (``engines/_torch_private.py``, ``engines/_jax_private.py``)."""

from __future__ import annotations

import os


def test_torch_functorch_names_are_where_the_shim_reads_them():
    from torch._C import _functorch

    from portagather.engines import _torch_private

    missing = [name for name in _torch_private.USED if not hasattr(_functorch, name)]
    assert not missing, f"torch._C._functorch no longer has {missing}: update the shim"
    assert hasattr(_functorch.TransformType, "Vmap")


def test_torch_shim_sees_vmap_and_its_batched_tensors():
    import torch

    from portagather.engines import _torch_private

    outside = torch.arange(3)
    seen = []

    def probe(row):
        seen.append(
            (_torch_private.vmap_running(), _torch_private.batched_by_vmap(row),
             _torch_private.batched_by_vmap(outside))
        )  # fmt: skip
        return row * 2

    torch.func.vmap(probe)(torch.ones(2, 3))
    assert seen == [(True, True, False)]
    assert not _torch_private.vmap_running()
    assert not _torch_private.batched_by_vmap(outside)


def test_jax_checkify_source_is_where_the_shim_looks():
    import jax.experimental.checkify as checkify_module

    from portagather.engines import _jax_private

    source = os.path.normpath(checkify_module.checkify.__code__.co_filename)
    assert source.endswith(_jax_private.CHECKIFY_SOURCE), (
        f"jax's checkify now lives in {source}: update the shim"
    )


def test_jax_shim_sees_checkify_and_only_checkify():
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    from portagather.engines import _jax_private

    seen = []

    def probe(x):
        seen.append(_jax_private.under_checkify())
        return x + 1

    checkify.checkify(probe)(jnp.ones(2))
    jax.jit(probe)(jnp.ones(3))
    assert seen == [True, False]


def test_jax_shim_sees_every_trace_and_no_trace_only_outside_them():
    import jax
    import jax.numpy as jnp

    from portagather.engines import _jax_private

    assert _jax_private._trace_state_clean is not None, (
        "jax._src.core.trace_state_clean is gone: update the shim"
    )
    assert _jax_private.no_trace_active()
    seen = []

    def probe(x):
        seen.append(_jax_private.no_trace_active())
        return (x * 2).sum()

    jax.jit(probe)(jnp.ones(3))
    jax.grad(probe)(jnp.ones(3))
    jax.vmap(probe)(jnp.ones((2, 3)))
    assert seen == [False, False, False]
    assert _jax_private.no_trace_active()
