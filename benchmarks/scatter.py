"""The scatters against each backend's own idioms of the same semantics, side by side.

    python benchmarks/scatter.py            # writes the scatter section of RESULTS.md
    python benchmarks/scatter.py --quick    # small data, writes nothing

Workloads:
    S1  scatter_nd: 200k point updates into 2000 x 2000 float32 (duplicates included)
    S2  scatter_d / put_along_axis: 1000 x 1000 float32, index 1000 x 200 along axis 1

Each candidate is timed interleaved in one process (``run.measure``: median over rounds,
results checked against NumPy's on the warm-up call). The ratio is portagather over the
fastest native candidate of the same reduction. NumPy's and PyTorch's own "update" idioms
(fancy assignment, ``index_put_``, ``scatter``) resolve nothing: which duplicate wins is
their write order, which NumPy does not document and PyTorch documents as unspecified;
portagather's "update" checks its winners, which is what its ratio pays for.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from run import machine, measure  # noqa: E402
from workloads import Candidate  # noqa: E402

import portagather as pg  # noqa: E402

REDUCES = ("add", "max", "update")
START, END = "<!-- scatter -->", "<!-- /scatter -->"


def _s1(quick: bool) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    n, m = (200, 2000) if quick else (2000, 200_000)
    return {
        "params": rng.random((n, n), dtype=np.float32),
        "indices": rng.integers(0, n, (m, 2)),
        "updates": rng.random(m, dtype=np.float32),
    }


def _s2(quick: bool) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    rows, cols, k = (100, 100, 20) if quick else (1000, 1000, 200)
    return {
        "params": rng.random((rows, cols), dtype=np.float32),
        "indices": rng.integers(0, cols, (rows, k)),
        "updates": rng.random((rows, k), dtype=np.float32),
    }


def _numpy(work: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    p, i, u = data["params"], data["indices"], data["updates"]
    ufunc = {"add": np.add, "max": np.maximum}.get(reduce)
    if work == "S1":

        def at_pairs() -> Any:
            out = p.copy()
            if ufunc is None:
                out[i[:, 0], i[:, 1]] = u
            else:
                ufunc.at(out, (i[:, 0], i[:, 1]), u)
            return out

        def at_flat() -> Any:  # the hand-written flat form, positions computed in the call
            out = p.copy()
            positions = i[:, 0] * p.shape[1] + i[:, 1]
            if ufunc is None:
                out.reshape(-1)[positions] = u
            else:
                ufunc.at(out.reshape(-1), positions, u)
            return out

        natives = [Candidate("out[i0, i1] (op).at", "native", at_pairs),
                   Candidate("flat (op).at", "native", at_flat)]  # fmt: skip
        mine = Candidate("pg.scatter_nd", "pg", lambda: pg.scatter_nd(p, i, u, reduce=reduce))
        return [mine, *natives]
    rows = np.arange(p.shape[0])[:, None]

    def native() -> Any:
        out = p.copy()
        if ufunc is None:
            np.put_along_axis(out, i, u, axis=1)
        else:
            ufunc.at(out, (rows, i), u)
        return out

    name = "np.put_along_axis" if ufunc is None else "(op).at(out, (rows, i))"

    def mine() -> Any:
        return pg.put_along_axis(p, i, u, axis=1, reduce=reduce)

    return [Candidate("pg.put_along_axis", "pg", mine), Candidate(name, "native", native)]


def _torch(work: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import torch

    p, i, u = (torch.from_numpy(data[k]) for k in ("params", "indices", "updates"))
    torch_reduce = {"add": "sum", "max": "amax"}.get(reduce)
    if work == "S1":
        flat = i[:, 0] * p.shape[1] + i[:, 1]

        def native() -> Any:
            out = p.clone().reshape(-1)
            positions = i[:, 0] * p.shape[1] + i[:, 1]
            if torch_reduce is None:
                return out.index_put_((positions,), u).reshape(p.shape)
            return out.scatter_reduce_(0, positions, u, torch_reduce).reshape(p.shape)

        def index_put() -> Any:
            out = p.clone()
            if reduce == "max":
                return out.reshape(-1).scatter_reduce_(0, flat, u, "amax").reshape(p.shape)
            return out.index_put_((i[:, 0], i[:, 1]), u, accumulate=reduce == "add")

        return [
            Candidate("pg.scatter_nd", "pg", lambda: pg.scatter_nd(p, i, u, reduce=reduce)),
            Candidate("flat scatter_reduce_ / index_put_", "native", native),
            Candidate("index_put_(accumulate)", "native", index_put),
        ]

    def along() -> Any:
        out = p.clone()
        if torch_reduce is None:
            return out.scatter_(1, i, u)
        return out.scatter_reduce_(1, i, u, torch_reduce)

    return [
        Candidate("pg.scatter_d", "pg", lambda: pg.scatter_d(p, 1, i, u, reduce=reduce)),
        Candidate("torch scatter_ / scatter_reduce_", "native", along),
    ]


def _jax(work: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import jax
    import jax.numpy as jnp

    p, i, u = (jnp.asarray(data[k]) for k in ("params", "indices", "updates"))
    method = {"add": "add", "max": "max", "update": "set"}[reduce]
    if work == "S1":
        mine = jax.jit(lambda p, i, u: pg.scatter_nd(p, i, u, reduce=reduce, bad_indices="clip"))
        native = jax.jit(lambda p, i, u: getattr(p.at[i[:, 0], i[:, 1]], method)(u, mode="clip"))
    else:
        rows = jnp.arange(p.shape[0])[:, None]
        mine = jax.jit(
            lambda p, i, u: pg.put_along_axis(p, i, u, axis=1, reduce=reduce, bad_indices="clip")
        )
        native = jax.jit(lambda p, i, u: getattr(p.at[rows, i], method)(u, mode="clip"))
    return [
        Candidate("pg (jit, clip)", "pg", lambda: mine(p, i, u).block_until_ready()),
        Candidate(".at[...] (jit, clip)", "native", lambda: native(p, i, u).block_until_ready()),
    ]


def _tensorflow(work: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import tensorflow as tf

    if work != "S1":
        return []
    p, i, u = (tf.constant(data[k]) for k in ("params", "indices", "updates"))
    op = {"add": tf.tensor_scatter_nd_add, "max": tf.tensor_scatter_nd_max,
          "update": tf.tensor_scatter_nd_update}[reduce]  # fmt: skip

    def mine() -> Any:
        return pg.scatter_nd(data["params"], data["indices"], data["updates"], reduce=reduce)

    return [
        Candidate("pg.scatter_nd (NumPy)", "pg", mine),
        Candidate(f"tf.{op.__name__}", "native", lambda: op(p, i, u)),
    ]


BACKENDS: dict[str, Callable[[str, dict[str, Any], str], list[Candidate]]] = {
    "numpy": _numpy, "torch": _torch, "jax": _jax, "tensorflow": _tensorflow,
}  # fmt: skip


def _expected(work: str, data: dict[str, Any], reduce: str) -> Any:
    """NumPy's answer for the checks (duplicates under "update": the last one)."""
    p, i, u = data["params"], data["indices"], data["updates"]
    out = p.copy()
    if work == "S1":
        flat = i[:, 0] * p.shape[1] + i[:, 1]
        where: Any = flat
        out = out.reshape(-1)
    else:
        where = (np.arange(p.shape[0])[:, None], i)
    if reduce == "add":
        np.add.at(out, where, u)
    elif reduce == "max":
        np.maximum.at(out, where, u)
    else:
        out[where] = u  # NumPy writes in order, which the tests' reference checks elsewhere
    return out.reshape(p.shape)


def run(quick: bool, backends: list[str]) -> list[dict[str, Any]]:
    rows = []
    for work, make in (("S1", _s1), ("S2", _s2)):
        data = make(quick)
        for backend in backends:
            for reduce in REDUCES:
                cands = BACKENDS[backend](work, data, reduce)
                if not cands:
                    continue
                for c in cands:
                    c.inner = 1 if not quick else 3
                expected = _expected(work, data, reduce) if reduce != "update" else None
                medians, rounds = measure(cands, 0.5 if quick else 4.0, min_rounds=5, expected=None)
                if expected is not None:
                    for c in cands:
                        got = np.asarray(c.fn())
                        assert np.allclose(got, expected, rtol=1e-5), (work, backend, c.name)
                mine = min(medians[c.name] for c in cands if c.kind == "pg")
                native = min(medians[c.name] for c in cands if c.kind == "native")
                fastest = min(
                    (c for c in cands if c.kind == "native"), key=lambda c: medians[c.name]
                )
                rows.append({
                    "workload": work, "backend": backend, "reduce": reduce,
                    "portagather_s": mine, "native_s": native, "native": fastest.name,
                    "ratio": mine / native, "rounds": rounds,
                })  # fmt: skip
                times = f"{mine * 1e3:8.2f} ms / {native * 1e3:8.2f} ms"
                print(f"{work} {backend:10} {reduce:7} {times} ({fastest.name}) = "
                      f"{mine / native:.2f}", flush=True)  # fmt: skip
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    info = machine()
    lines = [
        START,
        "## Scatters",
        "",
        f"`python benchmarks/scatter.py` on {info['cpu']} ({info['cores']} cores), Python "
        f"{info['python']}; " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()) + ".",
        "",
        "S1: `scatter_nd`, 200k point updates (duplicates included) into 2000 x 2000 float32. "
        "S2: `put_along_axis` (NumPy, JAX) / `scatter_d` (PyTorch) of a 1000 x 200 index into "
        "1000 x 1000 float32 along axis 1. Ratio: portagather / fastest native of the same "
        "reduction, median of interleaved rounds in one process. JAX under `jit` with "
        '`bad_indices="clip"` against `.at[...](mode="clip")`.',
        "",
        "| workload | backend | reduce | portagather | fastest native | native idiom | ratio |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['workload']} | {r['backend']} | {r['reduce']} "
            f"| {r['portagather_s'] * 1e3:.2f} ms | {r['native_s'] * 1e3:.2f} ms "
            f"| {r['native']} | {r['ratio']:.2f} |"
        )
    lines += [
        "",
        'Under "update" the native idioms resolve nothing (which duplicate wins is their '
        "write order); portagather writes the update positions, reads them back and checks "
        "that each target kept its last update, which is what its ratio pays for.",
        END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    args = parser.parse_args(argv)
    rows = run(args.quick, args.backends)
    if args.quick:
        return
    (HERE / "scatter.json").write_text(json.dumps({"machine": machine(), "rows": rows}, indent=1))
    results = HERE / "RESULTS.md"
    text = results.read_text() if results.exists() else ""
    section = report(rows)
    if START in text:
        text = re.sub(
            re.escape(START) + ".*?" + re.escape(END), lambda _: section, text, flags=re.S
        )
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    results.write_text(text)


if __name__ == "__main__":
    main()
