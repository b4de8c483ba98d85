"""The segment toolkit (issue 38) against the compositions a user writes from native calls.

    python benchmarks/segment_toolkit.py --rounds 5     # writes the segment-toolkit section
    python benchmarks/segment_toolkit.py --quick        # small data, writes nothing
    python benchmarks/segment_toolkit.py --backends torch --ops softmax  # a part, merged
    python benchmarks/segment_toolkit.py --from-json    # the section from the saved figures
    python benchmarks/segment_toolkit.py --profile      # where the time of the misses goes
    python benchmarks/segment_toolkit.py --dask         # argmax, var, std on a cluster
    python benchmarks/segment_toolkit.py --dask-once --dask-segments 1000000  # one call each

Workloads: 1M rows x 16 float32 features into 100k segments, ids sorted and unsorted
(``--rows``, ``--segments`` for a smaller run; the section names the size). For each
function of ``src/portagather/_segment_toolkit.py``, on NumPy, PyTorch (CPU) and JAX under
``jit``, against the fastest composition a user writes from native calls:

- ``segment_softmax``, ``segment_log_softmax``, ``segment_logsumexp``: each segment's
  maximum, ``exp`` of the shifted rows, their sum per segment and a take back to the rows.
  NumPy ``np.maximum.at`` + ``exp`` + ``np.add.at`` + ``x[ids]``, the same ``ufunc.at`` on
  flat positions (``ids * width + arange(width)``, built once per call) + ``take``, and,
  sorted, ``ufunc.reduceat`` + ``take`` (the same three for argmax and var); PyTorch
  ``scatter_reduce_("amax", include_self=False)`` + ``exp`` + ``index_add_`` +
  ``index_select``, as PyG's ``softmax``; JAX ``jax.ops.segment_max`` + ``exp`` +
  ``segment_sum`` + take (``indices_are_sorted=True`` where sorted). The maximum carries no
  gradient in the natives (``detach``, ``stop_gradient``), as in portagather. Beside them,
  today's four-call composition of portagather (``segment_max``, ``gather(axis=0)``,
  ``exp``, ``segment_sum``, ``gather``, as ``examples/message_passing.py`` writes it, the
  maximum not detached: portagather has no backend-neutral way to), which the one call must
  beat. Forward, and on PyTorch and JAX forward + backward (the sum of the output times a
  fixed cotangent, then ``torch.autograd.grad`` / ``jax.grad`` inside the ``jit``).
- ``segment_argmax`` / ``_argmin``: the maximum per segment, equality with it gathered, the
  minimum of the positions per segment (``np.minimum.at`` of ``where(eq, arange, N)``,
  ``scatter_reduce_("amin")``, ``jax.ops.segment_min``); an empty segment gets ``N``.
- ``segment_var`` / ``_std``: two passes (sums and counts, the mean, gathered, the squared
  deviations summed), an empty segment NaN.
- ``segment_count`` against ``np.bincount(ids, minlength=n)``, ``torch.bincount``,
  ``jnp.bincount(length=n)``; ``bincount`` (the 1M ids as values, 100k bins), with and
  without weights, against the same three.

portagather runs with its default ``bad_indices="error"`` on NumPy and PyTorch, and under
``jit`` with ``"clip"`` (the JAX natives do not check). ``pg.bincount`` takes no
``bad_indices``: under ``jit`` it runs inside ``checkify.checkify`` (its only way there), so
that row compares a checked call with an unchecked native. Every candidate's first result is
compared with NumPy's in float64 (positions and counts exactly; gradients with the analytic
ones), then the candidates of one block are timed in interleaved rounds
(``harness.repeated``); the ratio is portagather over the fastest native of the block, with
its bound from issue 38 (1.0 for the softmax family, 1.05 for the rest).

``--profile``: for every row over its bound (read from ``segment_toolkit.json``),
``harness.top_steps`` of the portagather call on NumPy and PyTorch; under ``jit`` the
count of scatters and gathers in the lowered program of portagather's call and of the
native's.

``--dask``: ``segment_argmax``, ``segment_var``, ``segment_std`` of 16M float32 rows in
chunks of 500k (``--dask-rows``) into 1,000 and 1,000,000 segments (``--dask-segments``) on
a ``distributed.LocalCluster`` (``harness.local_cluster``) against flox's
``groupby_reduce(..., method="map-reduce")`` (``nanargmax`` is flox's argmax; flox must be
importable: it is not a dependency), interleaved rounds in one cluster. ``--dask-once``:
one call of each, each in a cluster of its own, for a size where rounds do not finish.

Rounds: ``--rounds`` per candidate, more (up to 41) where a block's rounds take less than
``BUDGET`` seconds.
"""

from __future__ import annotations

import functools
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    NOTES,
    Candidate,
    WorkerMemory,
    arguments,
    cluster_data,
    cluster_rounds,
    code_commit,
    flox_reduce,
    header,
    local_cluster,
    machine,
    ratio_cell,
    repeated,
    setup,
    top_steps,
    write_section,
)

import portagather as pg

HERE = Path(__file__).resolve().parent
JSON = HERE / "segment_toolkit.json"
ROWS, FEATURES, SEGMENTS = 1_000_000, 16, 100_000
QUICK = (20_000, 2_000)
FAMILY = ("softmax", "log_softmax", "logsumexp")
OPS = (*FAMILY, "argmax", "argmin", "var", "std", "count", "bincount", "bincount_weighted")
BOUNDS = {op: 1.0 if op in FAMILY else 1.05 for op in OPS}
BACKENDS = ("numpy", "torch", "jax")
TINY = np.finfo(np.float32).tiny
#: Seconds of rounds a block may take: the fast blocks (counts) run more rounds than
#: `--rounds`, up to 41; the large ones `--rounds`.
BUDGET = 1.0


def data(rows: int, segments: int, sorted_ids: bool) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, segments, rows)
    if sorted_ids:
        ids = np.sort(ids)
    return {
        "x": rng.standard_normal((rows, FEATURES), dtype=np.float32),
        "ids": ids,
        "w": rng.standard_normal(rows, dtype=np.float32),
        "rows_cot": rng.standard_normal((rows, FEATURES), dtype=np.float32),
        "seg_cot": rng.standard_normal((segments, FEATURES), dtype=np.float32),
        "n": segments,
        "sorted": sorted_ids,
    }


# ---------------------------------------------------------------- the native steps of each backend


class NumpyKit:
    """NumPy's steps: ``ufunc.at`` of the rows into the identity and ``t[ids]`` (the plain
    spelling); with `flat`, ``ufunc.at`` on flat positions (``ids * width + arange(width)``,
    NumPy's fast scalar loop) and ``t.take(ids, axis=0)``; with `reduceat` (sorted ids),
    ``ufunc.reduceat`` at the first row of each segment that has one and ``take``."""

    xp = np

    def __init__(self, ids: Any, n: int, *, flat: bool = False, reduceat: bool = False) -> None:
        self.ids, self.n, self.rows = ids, n, ids.shape[0]
        self.flat, self.fast_take = flat, flat or reduceat
        self.starts = self.filled = None
        self._flat: dict[int, Any] = {}
        if reduceat:
            first = np.empty(ids.shape[0], bool)
            first[0], first[1:] = True, ids[1:] != ids[:-1]
            self.starts = np.flatnonzero(first)
            self.filled = ids[self.starts]

    def _positions(self, width: int) -> Any:
        if width not in self._flat:
            self._flat[width] = (self.ids[:, None] * width + np.arange(width)).reshape(-1)
        return self._flat[width]

    def _reduce(self, v: Any, ufunc: Any, fill: Any) -> Any:
        out = np.full((self.n, *v.shape[1:]), fill, v.dtype)
        if self.starts is not None:
            out[self.filled] = ufunc.reduceat(v, self.starts, axis=0)
        elif self.flat and v.ndim == 2:
            ufunc.at(out.reshape(-1), self._positions(v.shape[1]), v.reshape(-1))
        else:
            ufunc.at(out, self.ids, v)
        return out

    def max(self, v: Any) -> Any:
        return self._reduce(v, np.maximum, -np.inf)

    def min(self, v: Any, fill: Any = np.inf) -> Any:
        return self._reduce(v, np.minimum, fill)

    def sum(self, v: Any) -> Any:
        return self._reduce(v, np.add, 0)

    def take(self, t: Any) -> Any:
        return t.take(self.ids, axis=0) if self.fast_take else t[self.ids]

    def count(self) -> Any:
        return np.bincount(self.ids, minlength=self.n)

    def log(self, t: Any) -> Any:  # an empty segment's 0 without a division warning
        return np.log(np.maximum(t, TINY))

    def stop(self, t: Any) -> Any:
        return t

    def floats(self, t: Any, like: Any) -> Any:
        return t.astype(like.dtype)

    def positions(self) -> Any:
        return np.arange(self.rows)[:, None]


class TorchKit:
    """PyTorch's steps, as PyG's ``softmax``: ``scatter_reduce_`` of the ids expanded
    (``include_self=False``), ``index_add_``, ``index_select``."""

    def __init__(self, ids: Any, n: int) -> None:
        import torch

        self.xp, self.ids, self.n, self.rows = torch, ids, n, ids.shape[0]

    def _expanded(self, v: Any) -> Any:
        return self.ids.view(-1, *([1] * (v.ndim - 1))).expand_as(v)

    def max(self, v: Any) -> Any:
        out = v.new_full((self.n, *v.shape[1:]), -float("inf"))
        return out.scatter_reduce_(0, self._expanded(v), v, "amax", include_self=False)

    def min(self, v: Any, fill: Any = float("inf")) -> Any:
        out = v.new_full((self.n, *v.shape[1:]), fill)
        return out.scatter_reduce_(0, self._expanded(v), v, "amin")

    def sum(self, v: Any) -> Any:
        return v.new_zeros((self.n, *v.shape[1:])).index_add_(0, self.ids, v)

    def take(self, t: Any) -> Any:
        return t.index_select(0, self.ids)

    def count(self) -> Any:
        return self.xp.bincount(self.ids, minlength=self.n)

    def log(self, t: Any) -> Any:
        return self.xp.log(t)

    def stop(self, t: Any) -> Any:
        return t.detach()

    def floats(self, t: Any, like: Any) -> Any:
        return t.to(like.dtype)

    def positions(self) -> Any:
        return self.xp.arange(self.rows)[:, None]


class JaxKit:
    """JAX's steps under ``jit``: ``jax.ops.segment_*`` (``indices_are_sorted`` where the ids
    are), the take ``t[ids]``."""

    def __init__(self, ids: Any, n: int, sorted_ids: bool) -> None:
        import jax.numpy as jnp

        self.xp, self.ids, self.n, self.sorted = jnp, ids, n, sorted_ids
        self.rows = ids.shape[0]

    def _ops(self, name: str, v: Any) -> Any:
        import jax

        return getattr(jax.ops, name)(v, self.ids, self.n, indices_are_sorted=self.sorted)

    def max(self, v: Any) -> Any:
        return self._ops("segment_max", v)

    def min(self, v: Any, fill: Any = None) -> Any:
        out = self._ops("segment_min", v)
        return out if fill is None else self.xp.minimum(out, fill)  # empty: the dtype's max

    def sum(self, v: Any) -> Any:
        return self._ops("segment_sum", v)

    def take(self, t: Any) -> Any:
        return t[self.ids]

    def count(self) -> Any:
        return self.xp.bincount(self.ids, length=self.n)

    def log(self, t: Any) -> Any:
        return self.xp.log(t)

    def stop(self, t: Any) -> Any:
        import jax

        return jax.lax.stop_gradient(t)

    def floats(self, t: Any, like: Any) -> Any:
        return t.astype(like.dtype)

    def positions(self) -> Any:
        return self.xp.arange(self.rows)[:, None]


# ---------------------------------------------------------------- the compositions


def composed(k: Any, op: str, x: Any) -> Any:
    """`op` composed from the native steps of kit `k`."""
    xp = k.xp
    if op in FAMILY:
        peak = k.stop(k.max(x))
        shifted = x - k.take(peak)
        weights = xp.exp(shifted)
        total = k.sum(weights)
        if op == "softmax":
            return weights / k.take(total)
        if op == "log_softmax":
            return shifted - k.take(k.log(total))
        return k.log(total) + peak
    if op in ("argmax", "argmin"):
        extreme = k.max(x) if op == "argmax" else k.min(x)
        hit = x == k.take(extreme)
        return k.min(xp.where(hit, k.positions(), k.rows), k.rows)
    if op in ("var", "std"):
        count = k.count()[:, None]
        some = count > 0
        count = k.floats(count + ~some, x)  # 1 for an empty segment: no 0 / 0
        mean = k.sum(x) / count
        deviation = x - k.take(mean)
        var = xp.where(some, k.sum(deviation * deviation) / count, float("nan"))
        return xp.sqrt(var) if op == "std" else var
    raise ValueError(op)


def four_calls(op: str, x: Any, ids: Any, n: int, sorted_ids: bool, policy: str) -> Any:
    """Today's composition of portagather calls (``examples/message_passing.py``)."""
    from array_api_compat import array_namespace

    xp = array_namespace(x)
    kw = {"indices_are_sorted": sorted_ids, "bad_indices": policy}
    peak = pg.segment_max(x, ids, n, **kw)
    shifted = x - pg.gather(peak, ids, axis=0, bad_indices=policy)
    weights = xp.exp(shifted)
    total = pg.segment_sum(weights, ids, n, **kw)
    if op == "softmax":
        return weights / pg.gather(total, ids, axis=0, bad_indices=policy)
    logs = xp.log(xp.maximum(total, xp.asarray(TINY, dtype=total.dtype)))
    if op == "log_softmax":
        return shifted - pg.gather(logs, ids, axis=0, bad_indices=policy)
    return logs + peak


def mine(op: str, x: Any, ids: Any, n: int, sorted_ids: bool, policy: str) -> Any:
    """portagather's one call of `op`."""
    if op == "count":
        return pg.segment_count(ids, n, indices_are_sorted=sorted_ids, bad_indices=policy)
    return getattr(pg, f"segment_{op}")(
        x, ids, n, indices_are_sorted=sorted_ids, bad_indices=policy
    )


# ---------------------------------------------------------------- the reference (NumPy, float64)


def reference(op: str, mode: str, d: dict[str, Any]) -> Any:
    x, ids, n = d["x"].astype(np.float64), d["ids"], d["n"]
    k = NumpyKit(ids, n)
    if op == "count":
        return np.bincount(ids, minlength=n)
    if op == "bincount":
        return np.bincount(ids, minlength=n)
    if op == "bincount_weighted":
        return np.bincount(ids, weights=d["w"].astype(np.float64), minlength=n)
    if op in ("argmax", "argmin"):
        return composed(k, op, d["x"])  # positions: the float32 data's own ties
    out = composed(k, op, x)
    if mode == "forward":
        return out
    # The gradient of sum(out * cotangent) with respect to x.
    if op == "logsumexp":
        soft = composed(k, "softmax", x)
        return k.take(d["seg_cot"].astype(np.float64)) * soft
    cot = d["rows_cot"].astype(np.float64)
    if op == "softmax":
        return out * (cot - k.take(k.sum(out * cot)))
    soft = composed(k, "softmax", x)
    return cot - soft * k.take(k.sum(cot))


def agrees(got: Any, want: Any) -> bool:
    got = np.asarray(got)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "iu":
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got.astype(np.float64), want, rtol=1e-3, atol=1e-4, equal_nan=True))


# ---------------------------------------------------------------- the candidates of each backend


def _numpy(op: str, _mode: str, d: dict[str, Any]) -> list[Candidate]:
    x, ids, n, srt, w = d["x"], d["ids"], d["n"], d["sorted"], d["w"]
    if op == "count":
        return [
            Candidate("pg.segment_count", "pg", lambda: mine(op, x, ids, n, srt, "error")),
            Candidate("np.bincount(ids, minlength=n)", "native",
                      lambda: np.bincount(ids, minlength=n)),
        ]  # fmt: skip
    if op.startswith("bincount"):
        weights = w if op == "bincount_weighted" else None
        return [
            Candidate("pg.bincount", "pg", lambda: pg.bincount(ids, weights, minlength=n)),
            Candidate("np.bincount", "native", lambda: np.bincount(ids, weights, minlength=n)),
        ]
    cands = [Candidate(f"pg.segment_{op}", "pg", lambda: mine(op, x, ids, n, srt, "error"))]
    if op in FAMILY:
        cands.append(Candidate("pg, four calls", "pg4",
                               lambda: four_calls(op, x, ids, n, srt, "error")))  # fmt: skip
    cands.append(Candidate("ufunc.at + x[ids]", "native",
                           lambda: composed(NumpyKit(ids, n), op, x)))  # fmt: skip
    cands.append(Candidate("ufunc.at (flat positions) + take", "native",
                           lambda: composed(NumpyKit(ids, n, flat=True), op, x)))  # fmt: skip
    if srt:
        sorted_kit = lambda: NumpyKit(ids, n, reduceat=True)  # noqa: E731
        cands.append(Candidate("ufunc.reduceat + take", "native",
                               lambda: composed(sorted_kit(), op, x)))  # fmt: skip
    return cands


def _torch(op: str, mode: str, d: dict[str, Any]) -> list[Candidate]:
    import torch

    x, ids, w = (torch.from_numpy(d[k]) for k in ("x", "ids", "w"))
    n, srt = d["n"], d["sorted"]
    if op == "count":
        return [
            Candidate("pg.segment_count", "pg", lambda: mine(op, x, ids, n, srt, "error")),
            Candidate("torch.bincount(ids, minlength=n)", "native",
                      lambda: torch.bincount(ids, minlength=n)),
        ]  # fmt: skip
    if op.startswith("bincount"):
        weights = w if op == "bincount_weighted" else None
        return [
            Candidate("pg.bincount", "pg", lambda: pg.bincount(ids, weights, minlength=n)),
            Candidate("torch.bincount", "native",
                      lambda: torch.bincount(ids, weights, minlength=n)),
        ]  # fmt: skip
    kit = TorchKit(ids, n)
    fns: list[tuple[str, str, Callable[[Any], Any]]] = [
        (f"pg.segment_{op}", "pg", lambda v: mine(op, v, ids, n, srt, "error"))
    ]
    if op in FAMILY:
        fns.append(("pg, four calls", "pg4", lambda v: four_calls(op, v, ids, n, srt, "error")))
    fns.append(("scatter_reduce_ / index_add_ / index_select", "native",
                lambda v: composed(kit, op, v)))  # fmt: skip
    if mode == "forward":
        return [Candidate(name, kind, lambda f=f: f(x)) for name, kind, f in fns]
    cot = torch.from_numpy(d["seg_cot" if op == "logsumexp" else "rows_cot"])

    def backward(f: Callable[[Any], Any]) -> Callable[[], Any]:
        def run() -> Any:
            v = x.detach().requires_grad_(True)
            return torch.autograd.grad((f(v) * cot).sum(), v)[0]

        return run

    return [Candidate(name, kind, backward(f)) for name, kind, f in fns]


def _jax(op: str, mode: str, d: dict[str, Any]) -> list[Candidate]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    x, ids, w = (jnp.asarray(d[k]) for k in ("x", "ids", "w"))
    n, srt = d["n"], d["sorted"]

    def timed(f: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        return lambda: f(*args).block_until_ready()

    if op == "count":
        return [
            Candidate("pg.segment_count (jit)", "pg",
                      timed(jax.jit(lambda i: mine(op, None, i, n, srt, "clip")), ids)),
            Candidate("jnp.bincount(ids, length=n) (jit)", "native",
                      timed(jax.jit(lambda i: jnp.bincount(i, length=n)), ids)),
        ]  # fmt: skip
    if op.startswith("bincount"):
        args = (ids, w) if op == "bincount_weighted" else (ids,)
        checked = jax.jit(checkify.checkify(lambda *a: pg.bincount(*a, length=n)))

        def mine_checked() -> Any:
            err, out = checked(*args)
            err.throw()
            return out.block_until_ready()

        return [
            Candidate("pg.bincount (jit, checkify)", "pg", mine_checked),
            Candidate("jnp.bincount(length=n) (jit)", "native",
                      timed(jax.jit(lambda *a: jnp.bincount(*a, length=n)), *args)),
        ]  # fmt: skip
    fns: list[tuple[str, str, Callable[..., Any]]] = [
        (f"pg.segment_{op} (jit)", "pg", lambda v, i: mine(op, v, i, n, srt, "clip"))
    ]
    if op in FAMILY:
        fns.append(("pg, four calls (jit)", "pg4",
                    lambda v, i: four_calls(op, v, i, n, srt, "clip")))  # fmt: skip
    fns.append(("jax.ops.segment_* + take (jit)", "native",
                lambda v, i: composed(JaxKit(i, n, srt), op, v)))  # fmt: skip
    if mode == "forward":
        return [Candidate(name, kind, timed(jax.jit(f), x, ids)) for name, kind, f in fns]
    cot = jnp.asarray(d["seg_cot" if op == "logsumexp" else "rows_cot"])

    def backward(f: Callable[..., Any]) -> Callable[..., Any]:
        return jax.jit(jax.grad(lambda v, i: jnp.sum(f(v, i) * cot)))

    return [Candidate(name, kind, timed(backward(f), x, ids)) for name, kind, f in fns]


MAKERS = {"numpy": _numpy, "torch": _torch, "jax": _jax}


def blocks(ops: list[str], backends: list[str]) -> list[tuple[str, str, str]]:
    """(op, mode, backend) of every block: forward everywhere, forward + backward of the
    softmax family on PyTorch and JAX."""
    out = []
    for op in ops:
        for backend in backends:
            out.append((op, "forward", backend))
            if op in FAMILY and backend != "numpy":
                out.append((op, "forward+backward", backend))
    return out


# ---------------------------------------------------------------- measuring


def first_results(cands: list[Candidate], store: dict[str, Any]) -> None:
    """Each candidate keeps its first result in `store` (then runs as it is)."""
    for c in cands:

        def first(c: Candidate = c, fn: Callable[[], Any] = c.fn) -> Any:
            out = fn()
            store[c.name] = out
            c.fn = fn
            return out

        c.fn = first


def run(args: Any) -> list[dict[str, Any]]:
    rows_n, segments = QUICK if args.quick else (args.rows, args.segments)
    out = []
    for sorted_ids in (False, True):
        d = data(rows_n, segments, sorted_ids)
        for op, mode, backend in blocks(args.ops, args.backends):
            want = reference(op, mode, d)
            cands = MAKERS[backend](op, mode, d)
            firsts: dict[str, Any] = {}
            first_results(cands, firsts)
            start = time.perf_counter()
            res = repeated(cands, BUDGET, args.repeat, lambda c: c.kind == "native",
                           min_rounds=args.rounds)  # fmt: skip
            wall = time.perf_counter() - start
            for c in cands:
                if not agrees(firsts[c.name], want):
                    msg = f"{op} {mode} {backend} sorted={sorted_ids}: {c.name} differs"
                    raise AssertionError(msg)
            del firsts
            pg_name = next(c.name for c in cands if c.kind == "pg")
            four = next((c.name for c in cands if c.kind == "pg4"), None)
            runs = res["runs"]
            per_four = [m[pg_name] / m[four] for m in runs] if four else None
            row = {
                "op": op, "mode": mode, "backend": backend, "sorted": sorted_ids,
                "rows": rows_n, "segments": segments, "seconds": res["seconds"],
                "pg": pg_name, "four": four, "fastest": res["fastest"],
                "ratio": res["ratios"][pg_name],
                "vs_four": None if per_four is None else {
                    "ratio": statistics.median(per_four), "low": min(per_four),
                    "high": max(per_four)},
                "rounds": res["rounds"], "repeat": args.repeat,
            }  # fmt: skip
            out.append(row)
            times = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in res["seconds"].items())
            print(f"{op:17} {mode:16} {backend:5} {'sorted' if sorted_ids else 'unsorted':8} "
                  f"ratio {row['ratio']['ratio']:.2f} (bound {BOUNDS[op]}) [{times}] "
                  f"{wall:.0f} s", flush=True)  # fmt: skip
    return out


def key(row: dict[str, Any]) -> str:
    return f"{row['op']}|{row['mode']}|{row['backend']}|{row['sorted']}"


# ---------------------------------------------------------------- where the time goes


def misses(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["ratio"]["ratio"] > BOUNDS[r["op"]]]


def profile(saved: dict[str, Any], calls: int, top: int) -> dict[str, Any]:
    """For each row over its bound: the portagather call's top steps (NumPy, PyTorch), or
    the scatters and gathers of the lowered programs (JAX)."""
    rows = saved["rows"]
    found: dict[str, Any] = {}
    cache: dict[bool, dict[str, Any]] = {}
    for r in misses(rows):
        if r["op"] not in OPS:
            continue
        d = cache.setdefault(r["sorted"], data(r["rows"], r["segments"], r["sorted"]))
        cands = MAKERS[r["backend"]](r["op"], r["mode"], d)
        if r["backend"] == "jax":
            found[key(r)] = {"hlo": jax_op_counts(r, d)}
        else:
            mine_fn = next(c.fn for c in cands if c.kind == "pg")
            found[key(r)] = {"steps": top_steps(mine_fn, calls, top)}
        print(key(r), json.dumps(found[key(r)])[:2000], flush=True)
    return found


def jax_op_counts(r: dict[str, Any], d: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The scatters, gathers, sorts and while loops in the optimised program of the
    portagather call and of the native composition (JAX's time is XLA's: no Python steps)."""
    import jax
    import jax.numpy as jnp

    x, ids = jnp.asarray(d["x"]), jnp.asarray(d["ids"])
    n, srt, op = d["n"], d["sorted"], r["op"]
    fns = {
        "pg": lambda v, i: mine(op, v, i, n, srt, "clip"),
        "native": lambda v, i: composed(JaxKit(i, n, srt), op, v),
    }
    if op == "count":
        fns["native"] = lambda _v, i: jnp.bincount(i, length=n)
    elif op.startswith("bincount"):
        from jax.experimental import checkify

        x = jnp.asarray(d["w"])
        weighted = op == "bincount_weighted"
        fns = {
            "pg": checkify.checkify(lambda w, i: pg.bincount(i, w if weighted else None, length=n)),
            "native": lambda w, i: jnp.bincount(i, w if weighted else None, length=n),
        }
    out = {}
    for name, f in fns.items():
        g = f
        if r["mode"] != "forward":
            cot = jnp.asarray(d["seg_cot" if op == "logsumexp" else "rows_cot"])
            g = jax.grad(lambda v, i, f=f, cot=cot: jnp.sum(f(v, i) * cot))
        text = jax.jit(g).lower(x, ids).compile().as_text()
        out[name] = {
            word: text.count(f" {word}(")
            for word in ("scatter", "gather", "sort", "while", "select", "compare", "fusion")
        }
    return out


# ---------------------------------------------------------------- Dask


#: The toolkit's functions measured on Dask, each with flox's function of the same work.
DASK_OPS = {"argmax": "nanargmax", "var": "var", "std": "std"}


def dask_rows(rows: int, chunk: int, segments: int, rounds: int) -> list[dict[str, Any]]:
    """argmax, var and std on a LocalCluster, portagather against flox, medians of
    interleaved rounds (``harness.cluster_rounds``); every result compared with flox's."""
    out = []
    with local_cluster() as client:
        x, ids = cluster_data(rows, chunk, segments)
        for op, func in DASK_OPS.items():
            mine, flox = getattr(pg, f"segment_{op}"), flox_reduce(func, segments)
            cands = {"portagather": functools.partial(mine, x, ids, segments),
                     "flox": functools.partial(flox, x, ids)}  # fmt: skip
            times, results = cluster_rounds(client, cands, rounds)
            a, b = results["portagather"], results["flox"]
            seen = np.isfinite(a.astype(np.float64)) & np.isfinite(b.astype(np.float64))
            if op == "argmax":
                seen &= a < rows
            agree = bool(np.allclose(a[seen], b[seen], rtol=1e-4, atol=1e-4))
            row = {"op": op, "rows": rows, "chunk": chunk, "segments": segments,
                   "agrees": agree, **{k: statistics.median(v) for k, v in times.items()},
                   "all": times}  # fmt: skip
            print({k: v for k, v in row.items() if k != "all"}, flush=True)
            out.append(row)
    return out


def dask_once(rows: int, chunk: int, segments: int) -> list[dict[str, Any]]:
    """argmax, var and std, each candidate computed once in a ``LocalCluster`` of its own
    (fresh workers, nothing left from another call): seconds, the workers' peak memory
    (``harness.WorkerMemory``) and how many workers the nannies restarted (addresses that
    changed), for a size where repeated rounds in one cluster do not finish."""
    from distributed import wait

    out = []
    for op, func in DASK_OPS.items():
        row: dict[str, Any] = {"op": op, "rows": rows, "chunk": chunk, "segments": segments}
        for name in ("portagather", "flox"):
            with local_cluster() as client:
                x, ids = cluster_data(rows, chunk, segments)
                if name == "portagather":
                    lazy = getattr(pg, f"segment_{op}")(x, ids, segments)
                else:
                    lazy = flox_reduce(func, segments)(x, ids)
                before = set(client.scheduler_info()["workers"])
                with WorkerMemory(client) as memory:
                    start = time.perf_counter()
                    future = client.compute(lazy)
                    wait(future)
                    row[name] = time.perf_counter() - start
                after = set(client.scheduler_info()["workers"])
                row[f"{name}_peak_mb"] = max(memory.peak.values(), default=0) / 1e6
                row[f"{name}_restarts"] = len(after - before)
                del future
        print(row, flush=True)
        out.append(row)
    return out


# ---------------------------------------------------------------- the section


def section(saved: dict[str, Any], command: str) -> str:
    rows = sorted(saved["rows"], key=lambda r: (OPS.index(r["op"]), r["mode"] != "forward",
                  BACKENDS.index(r["backend"]), r["sorted"]))  # fmt: skip
    sizes = sorted({(r["rows"], r["segments"]) for r in rows})
    size = "; ".join(f"{a:_} rows x {FEATURES} float32 features into {b:_} segments"
                     for a, b in sizes)  # fmt: skip
    repeat = max((r["repeat"] for r in rows), default=1)
    lines = [
        "<!-- segment-toolkit -->",
        "## The segment toolkit against native compositions",
        "",
        header(command, saved.get("threads", 1), saved.get("commit"), saved.get("machine")),
        "",
        f"{size}, int64 ids sorted and unsorted; `bincount` counts the same ids into as "
        "many bins (weights: one float32 per row). portagather's one call (`bad_indices="
        '"error"` on NumPy and PyTorch, `"clip"` under `jit`) against the fastest '
        "composition of native calls of the block: NumPy `ufunc.at` of the rows + `x[ids]`, "
        "`ufunc.at` on flat positions + `take` (and, sorted, `ufunc.reduceat` + `take`), "
        "PyTorch `scatter_reduce_` / `index_add_` / `index_select` (PyG's "
        "softmax), JAX `jax.ops.segment_*` + take under `jit` (`indices_are_sorted` where "
        "sorted); counts against `np.bincount` / `torch.bincount` / `jnp.bincount(length=)`. "
        "`pg.bincount` has no `bad_indices`, so under `jit` it runs in `checkify` (checked) "
        "against the unchecked `jnp.bincount`. Forward+backward: the gradient of "
        "`sum(out * cotangent)` (`torch.autograd.grad`, `jax.grad` in the `jit`); the natives "
        'detach the maximum, as portagather does. "4 calls": today\'s composition '
        "`segment_max`, `gather`, `exp`, `segment_sum`, `gather` of portagather (maximum not "
        "detached), which the one call must beat (ratio below 1). Medians of interleaved "
        f"rounds ({saved.get('rounds', 5)} per candidate, more where a block's rounds are "
        "short (up to 41 in its second), after two warm-up calls"
        f"{f'; {repeat} repeats where a ratio shows its range' if repeat > 1 else ''}) in "
        "one process, on a 2-core machine shared with other work while it ran; every first result "
        "checked against NumPy's in float64. Bounds (issue 38): 1.0 for softmax, "
        "log_softmax and logsumexp, 1.05 for the rest. The backends ran one after another "
        "(the commands above) while the machine's load changed: compare times within a "
        "block, not across backends.",
        "",
        "| function | pass | backend | ids | portagather | 4 calls | fastest native | "
        "native | pg / native | pg / 4 calls |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["seconds"]
        fmt = lambda t: f"{t * 1e3:.1f} ms"  # noqa: E731
        lines.append(
            f"| {r['op']} | {r['mode']} | {r['backend']} | "
            f"{'sorted' if r['sorted'] else 'unsorted'} | {fmt(s[r['pg']])} | "
            f"{fmt(s[r['four']]) if r['four'] else '-'} | {fmt(s[r['fastest']])} | "
            f"{r['fastest']} | {ratio_cell(r['ratio'], BOUNDS[r['op']], r['repeat'])} | "
            f"{ratio_cell(r['vs_four'], 1.0, r['repeat']) if r['vs_four'] else '-'} |"
        )
    over = misses(rows)
    lines += ["", f"{len(over)} of {len(rows)} rows over their bound."]
    if saved.get("profile"):
        lines += ["", *profile_lines(saved["profile"])]
    if saved.get("dask"):
        dk = saved["dask"]
        lines += [
            "",
            f"Dask (`--dask`): {dk[0]['rows']:_} float32 rows in chunks of {dk[0]['chunk']:_}"
            " (ids int64 in the same chunks), made on the workers and persisted, on a "
            "`distributed.LocalCluster` "
            "(`harness.local_cluster`: 3 single-thread workers, 500 MB each), against flox "
            f'{saved.get("flox", "")} `groupby_reduce(..., method="map-reduce")` '
            "(`nanargmax` for argmax). Medians of "
            f"{saved.get('dask_rounds', '')} interleaved rounds (after one warm-up round) of "
            f"the graph's construction and computation. Bound 1.05. {saved.get('dask_note', '')}",
            "",
            "| segments | function | portagather | flox | pg / flox | results agree |",
            "|---|---|---|---|---|---|",
        ]
        for r in dk:
            ratio = r["portagather"] / r["flox"]
            note = " (workers restarted for memory during the block)" if r.get("restarts") else ""
            lines.append(f"| {r['segments']:_} | {r['op']} | {r['portagather']:.2f} s | "
                         f"{r['flox']:.2f} s | {ratio_cell({'ratio': ratio}, 1.05)} | "
                         f"{'yes' if r['agrees'] else 'no'}{note} |")  # fmt: skip
    if saved.get("dask_single"):
        once = saved["dask_single"]
        lines += [
            "",
            f"At {once[0]['segments']:_} segments the interleaved rounds did not finish: "
            "workers passed their memory limit again and again and were restarted by their "
            "nannies. One call of each candidate, each in a cluster of its own "
            "(`--dask-once`; single calls, not medians; results not compared; a restart's "
            "lost work is computed again inside the time):",
            "",
            "| segments | function | portagather | flox | pg / flox | peak worker memory "
            "(pg / flox) | workers restarted (pg / flox) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in once:
            ratio = r["portagather"] / r["flox"]
            peak = (f"{r['portagather_peak_mb']:.0f} / {r['flox_peak_mb']:.0f} MB"
                    if "flox_peak_mb" in r else "-")  # fmt: skip
            lines.append(f"| {r['segments']:_} | {r['op']} | {r['portagather']:.2f} s | "
                         f"{r['flox']:.2f} s | {ratio_cell({'ratio': ratio}, 1.05)} | {peak} | "
                         f"{r.get('portagather_restarts', '-')} / "
                         f"{r.get('flox_restarts', '-')} |")  # fmt: skip
    lines.append("<!-- /segment-toolkit -->")
    return "\n".join(lines)


def profile_lines(found: dict[str, Any]) -> list[str]:
    """The profiles of `--profile` as tables, after the reading of them (``harness.NOTES``:
    written by hand in ``RESULTS.md``, step by step of ``_segment_toolkit.py``)."""
    lines = ["### Where the time goes", "", NOTES, ""]
    steps = {k: v["steps"] for k, v in found.items() if "steps" in v}
    if steps:
        lines += [
            "The portagather call's functions of most own time (`harness.top_steps`, "
            "cProfile over `--calls` calls, ms per call, `xN` where a function ran N times in "
            "one call; `total` is the sum over every function):",
            "",
        ]
        for k, rows in steps.items():
            op, mode, backend, srt = k.split("|")
            order = "sorted" if srt == "True" else "unsorted"
            cells = ", ".join(
                f"{r['step']} {r['us'] / 1e3:.1f} ms"
                + (f" x{r['calls']:.0f}" if r["calls"] > 1.5 else "")
                for r in rows
            )
            lines.append(f"- {op} {mode}, {backend}, {order}: {cells}")
        lines.append("")
    hlo = {k: v["hlo"] for k, v in found.items() if v.get("hlo")}
    if hlo:
        lines += [
            "Under `jit`, the instructions of the optimised programs (portagather / native):",
            "",
            "| function | pass | ids | scatter | gather | select | compare | fusion |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for k, counts in hlo.items():
            op, mode, _backend, srt = k.split("|")
            order = "sorted" if srt == "True" else "unsorted"
            cells = " | ".join(
                f"{counts['pg'][w]} / {counts['native'][w]}"
                for w in ("scatter", "gather", "select", "compare", "fusion")
            )
            lines.append(f"| {op} | {mode} | {order} | {cells} |")
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, quick="small data; writes nothing", repeat=True, rounds=5,
                       threads=True, backends=BACKENDS)  # fmt: skip
    parser.add_argument("--ops", nargs="+", default=list(OPS), choices=OPS)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--segments", type=int, default=SEGMENTS)
    parser.add_argument("--from-json", action="store_true", help="rewrite the section only")
    parser.add_argument("--profile", action="store_true", help="where the misses' time goes")
    parser.add_argument("--calls", type=int, default=3, help="profiled calls (--profile)")
    parser.add_argument("--dask", action="store_true", help="argmax, var, std against flox")
    parser.add_argument("--dask-once", action="store_true",
                        help="--dask, one call each in a cluster of its own")  # fmt: skip
    parser.add_argument("--dask-rows", type=int, default=16_000_000)
    parser.add_argument("--dask-segments", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    args = parser.parse_args(argv)
    dask_run = args.dask or args.dask_once
    setup(args.threads, [*args.backends, "dask"] if dask_run else args.backends)
    saved = json.loads(JSON.read_text()) if JSON.exists() and not args.quick else {"rows": []}
    command = f"python benchmarks/segment_toolkit.py --rounds {args.rounds}"
    command += f" --repeat {args.repeat}" if args.repeat > 1 else ""
    command += f" --backends {' '.join(args.backends)}" if len(args.backends) < 3 else ""
    command += f" --ops {' '.join(args.ops)}" if len(args.ops) < len(OPS) else ""
    if args.profile:
        saved["profile"] = profile(saved, args.calls, 8)
    elif args.dask or args.dask_once:
        import flox

        saved["flox"], field = flox.__version__, "dask_single" if args.dask_once else "dask"
        kept = {(r["op"], r["segments"]): r for r in saved.get(field, [])}
        for segments in args.dask_segments:
            if args.dask_once:
                new = dask_once(args.dask_rows, 500_000, segments)
            else:
                new = dask_rows(args.dask_rows, 500_000, segments, args.rounds)
                saved["dask_rounds"] = args.rounds
            kept |= {(r["op"], r["segments"]): r for r in new}
            saved[field] = sorted(kept.values(), key=lambda r: (r["segments"], r["op"]))
            JSON.write_text(json.dumps(saved, indent=1))  # kept if a later size fails
    elif not args.from_json:
        new = run(args)
        if args.quick:
            print(section({"rows": new, "commit": code_commit()}, command + " --quick"))
            return
        kept = {key(r): r for r in saved["rows"]}
        kept |= {key(r): {**r, "command": command} for r in new}
        saved |= {"rows": list(kept.values()), "machine": machine(), "threads": args.threads,
                  "rounds": args.rounds,
                  "commit": args.commit or code_commit()}  # fmt: skip
    JSON.write_text(json.dumps(saved, indent=1))
    commands = list(dict.fromkeys(r.get("command", command) for r in saved["rows"]))
    text = section(saved, "`, `".join(commands) or command)
    if args.no_write:
        print(text)
    else:
        write_section("segment-toolkit", text, after="segments")


if __name__ == "__main__":
    main()
