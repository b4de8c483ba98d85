"""All-gathered bytes of a point gather from params sharded on both axes of a 4 x 2 mesh.

Runs on 8 virtual CPU devices and prints one JSON line: for the native ``params[i0, i1]`` and
for ``pg.gather_nd`` under each policy, the bytes the compiled program all-gathers and whether
the values are right. Used by tests/test_scale_out.py and benchmarks/scale_out.py.

    python benchmarks/mesh_all_gathers.py
"""

from __future__ import annotations

import argparse
import json
import os
import re

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import portagather as pg

ITEMSIZE = {"f32": 4, "s32": 4, "u32": 4, "s64": 8, "pred": 1}


def gathered_bytes(hlo: str) -> int:
    """Bytes of every all-gather's result in a compiled HLO text."""
    total = 0
    for dtype, dims in re.findall(r"= (\w+)\[([\d,]*)\][^ ]* all-gather\(", hlo):
        total += ITEMSIZE.get(dtype, 8) * int(np.prod([int(d) for d in dims.split(",") if d]))
    return total


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    values = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    params = jax.device_put(values, NamedSharding(mesh, PartitionSpec("x", "y")))
    points = jnp.asarray(np.random.default_rng(0).integers(0, 32, (100, 2)).astype(np.int32))
    wanted = values[np.asarray(points)[:, 0], np.asarray(points)[:, 1]]
    calls = {"native": lambda p, i: p[i[:, 0], i[:, 1]]}
    for policy in ("clip", "ignore", "unchecked", "wrap"):
        calls[policy] = lambda p, i, policy=policy: pg.gather_nd(p, i, bad_indices=policy)
    report = {}
    for name, f in calls.items():
        hlo = jax.jit(f).lower(params, points).compile().as_text()
        out = np.asarray(jax.jit(f)(params, points))
        report[name] = {
            "all_gather_bytes": gathered_bytes(hlo),
            "correct": bool(np.array_equal(out, wanted)),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
