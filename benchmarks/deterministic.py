"""Deterministic segment sums (``deterministic=True``, docs/deterministic.md) against each
backend's native, non-deterministic idiom: ``np.add.at``, PyTorch's ``index_add_`` and
``jax.ops.segment_sum`` under ``jit``, with portagather's ``deterministic=False`` beside them.

1M rows into 100k segments, 16 float32 features and a vector, ids sorted and unsorted, on
the CPU with one thread; interleaved rounds, medians (``harness.interleaved``). Prints one
table: seconds per call, the ratio of ``deterministic=True`` to the native idiom, and the
largest error of each against the float64 sum, relative to the segment's sum of magnitudes.
``--cpu-time`` times by the process's CPU time instead of the wall clock: on a loaded machine
a long call is preempted more often than a short one, which inflates the wall-clock ratio of
a slow call to a fast one; with one thread, the CPU time is the work each call does.

    python benchmarks/deterministic.py --rounds 3
    python benchmarks/deterministic.py --rounds 3 --cpu-time --backends numpy torch
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from harness import fmt_t, interleaved, rotated, set_threads, table, to_numpy

BACKENDS = ("numpy", "torch", "jax")


def cases(rows: int, segments: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, data, ids)``: 16 features and a vector, ids unsorted and sorted."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, segments, rows)
    found = []
    for width in (16, 1):
        shape = (rows, width) if width > 1 else (rows,)
        data = rng.standard_normal(shape).astype(np.float32)
        for order in ("unsorted", "sorted"):
            found.append(
                (f"{width} features, {order}", data, np.sort(ids) if order == "sorted" else ids)
            )
    return found


def calls(
    backend: str, data: np.ndarray, ids: np.ndarray, segments: int
) -> dict[str, Callable[[], Any]]:
    """The native idiom, portagather's default and its deterministic sum, for `backend`."""
    import portagather as pg

    out_shape = (segments, *data.shape[1:])
    if backend == "numpy":

        def native() -> Any:
            out = np.zeros(out_shape, np.float32)
            np.add.at(out, ids, data)
            return out

        d, i = data, ids
        return {
            "native": native,
            "pg": lambda: pg.segment_sum(d, i, segments),
            "pg deterministic": lambda: pg.segment_sum(d, i, segments, deterministic=True),
        }
    if backend == "torch":
        import torch

        d, i = torch.from_numpy(data), torch.from_numpy(ids)

        def native_torch() -> Any:
            return torch.zeros(out_shape, dtype=torch.float32).index_add_(0, i, d)

        return {
            "native": native_torch,
            "pg": lambda: pg.segment_sum(d, i, segments),
            "pg deterministic": lambda: pg.segment_sum(d, i, segments, deterministic=True),
        }
    import jax
    import jax.numpy as jnp

    d, i = jnp.asarray(data), jnp.asarray(ids)
    native_jax = jax.jit(lambda a, b: jax.ops.segment_sum(a, b, segments))
    plain = jax.jit(lambda a, b: pg.segment_sum(a, b, segments, bad_indices="unchecked"))
    tree = jax.jit(
        lambda a, b: pg.segment_sum(a, b, segments, bad_indices="unchecked", deterministic=True)
    )
    return {
        "native": lambda: native_jax(d, i).block_until_ready(),
        "pg": lambda: plain(d, i).block_until_ready(),
        "pg deterministic": lambda: tree(d, i).block_until_ready(),
    }


def accuracy(out: Any, data: np.ndarray, ids: np.ndarray) -> float:
    """The largest error of a segment of `out` against its sum in float64 (exact to well
    below float32's rounding), relative to the segment's sum of magnitudes."""
    got = np.asarray(to_numpy(out), dtype=np.float64)
    exact = np.zeros(got.shape)
    np.add.at(exact, ids, data.astype(np.float64))
    scale = np.zeros(got.shape)
    np.add.at(scale, ids, np.abs(data.astype(np.float64)))
    return float(np.max(np.abs(got - exact) / np.maximum(scale, np.finfo(np.float64).tiny)))


def interleaved_cpu(calls: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """``harness.interleaved`` (one warm-up call each, rounds in a rotating order, medians)
    by the process's CPU time."""
    for f in calls.values():
        f()
    names = list(calls)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in rotated(names, r):
            t0 = time.process_time()
            calls[name]()
            times[name].append(time.process_time() - t0)
    return {n: statistics.median(ts) for n, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--segments", type=int, default=100_000)
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    set_threads(1, args.backends)
    rows = []
    timed = ("native", "pg", "pg deterministic")
    for backend in args.backends:
        for name, data, ids in cases(args.rows, args.segments):
            made = calls(backend, data, ids, args.segments)
            errors = [accuracy(made[k](), data, ids) for k in timed[::2]]
            if args.cpu_time:
                times = interleaved_cpu(made, args.rounds)
            else:
                times = interleaved(made, args.rounds, warmup=1)
            ratio = times["pg deterministic"] / times["native"]
            cells = [fmt_t(times[k]) for k in timed] + [f"{ratio:.2f}x"]
            rows.append([backend, name, *cells, *(f"{e:.1e}" for e in errors)])
            print(*rows[-1], sep=" | ", flush=True)
    header = ["backend", "case", *timed, "deterministic / native", "error native",
              "error deterministic"]  # fmt: skip
    print(table(header, rows))


if __name__ == "__main__":
    main()
