"""The scatters against each backend's own idioms of the same semantics, side by side.

    python benchmarks/scatter.py            # writes the scatter section of RESULTS.md
    python benchmarks/scatter.py --quick    # small data, a few minutes; writes nothing
    python benchmarks/scatter.py --backends numpy torch --reduces update add --repeat 3
    python benchmarks/scatter.py --profile --workloads S2 S2u  # where the time goes

Workloads:
    S1  scatter_nd: 200k point updates into 2000 x 2000 float32 (duplicates included)
    S2  scatter_d / put_along_axis: 1000 x 1000 float32, index 1000 x 200 along axis 1
    S1u, S2u  the same sizes, every target written once (no duplicates)

Each block (one workload, backend and reduction) times its candidates interleaved in one
process (``harness.measure``: median over rotating rounds), after comparing every candidate's
result with a reference: a plain Python loop over the updates in order for ``"update"`` (the
last update wins), ``ufunc.at`` for the reductions. The ratio is portagather over the fastest
native candidate of the same reduction. NumPy's and PyTorch's own ``"update"`` idioms (fancy
assignment, ``index_put_``, ``scatter_``) resolve nothing: which duplicate wins is their write
order, which NumPy does not document and PyTorch documents as unspecified, so they are not
compared on data with duplicates; portagather's ``"update"`` resolves its winners, which is
what its ratio pays for. On S1u and S2u the natives include the idioms that are only right
without duplicates (``out[idx] = op(out[idx], u)``, ``unique_indices=True``), and portagather
runs with and without ``unique_indices=True`` where its functions take the keyword (found by
``inspect.signature``, so the script runs before and after they do).

JAX runs under ``jit`` (``bad_indices="clip"`` against ``mode="clip"``) and eagerly on
concrete arrays (``"error"`` and ``"clip"`` against the same idioms outside ``jit``): warm
calls, and first calls on a new shape (the median over several index shapes that no candidate
has seen). TensorFlow's ``tensor_scatter_nd_*`` (no multiply) is compared with portagather on
NumPy, on S1.

PyTorch's own last-wins path on S1 ``"update"``: ``index_put_`` under
``torch.use_deterministic_algorithms(True)`` (switched off again after each call), timed in
the same rounds but not counted as a native of the block (the fastest native stays the plain
idioms). Its result must equal the reference and portagather's, element for element, before
any timing; the section shows portagather / that path and that path / the plain
``index_put_``, median over the repeats.

``--profile`` (NumPy and PyTorch): where the time of a large call goes, for the rows that
miss issue 29's 1.05x bound. The same candidates, each result first compared with the
reference; ``harness.interleaved`` medians over ``--rounds`` rounds, then ``cProfile`` over
``--calls`` calls of portagather under each policy: the functions of most own time, in
microseconds per call. The C calls (``ufunc.at``, ``scatter_add_``, the copy of the data) are
the work a native does too; what else is listed is portagather's own. Writes the section
``scatter-profile``.
"""

from __future__ import annotations

import inspect
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    JAX_METHOD,
    TORCH_REDUCE,
    Candidate,
    arguments,
    header,
    interleaved,
    jax_at,
    machine,
    marked,
    ratio_cell,
    repeated,
    rotated,
    setup,
    steps_text,
    table,
    top_steps,
    torch_deterministic,
    ufunc,
    write_section,
)

import portagather as pg

HERE = Path(__file__).resolve().parent
REDUCES = ("update", "add", "max", "min", "multiply")
WORKLOADS = ("S1", "S1u", "S2", "S2u")
BACKENDS = ("numpy", "torch", "jax", "jax-eager", "tensorflow")
#: The bounds of issue 22: "update" with last-wins against the plain indexed assignment;
#: every reduction, and "update" under unique_indices=True, against the fastest native.
UPDATE_BOUND, REDUCE_BOUND = 1.5, 1.05
EAGER_WARM_BOUND, EAGER_FIRST_BOUND = 1.2, 1.5

PG, NATIVE = "pg", "native"
#: PyTorch's index_put_ under use_deterministic_algorithms: timed beside the block, not a
#: native of it (its ratios are reported apart).
DETERMINISTIC = "deterministic"
DET_NAME = "index_put_((i0, i1)) deterministic"
PLAIN_INDEX_PUT = "index_put_((i0, i1))"


# ------------------------------------------------------------------------------ data


def make_workload(key: str, quick: bool, points: int | None = None) -> dict[str, Any]:
    """params, indices, updates of `key`; `points` (S1) or index columns (S2) replace the
    default count, for first calls on new shapes."""
    rng = np.random.default_rng({"S1": 0, "S1u": 2, "S2": 1, "S2u": 3}[key])
    if key.startswith("S1"):
        side, m = (200, 2000) if quick else (2000, 200_000)
        m = points or m
        if key == "S1u":
            flat = rng.choice(side * side, m, replace=False)
            indices = np.stack([flat // side, flat % side], axis=1)
        else:
            indices = rng.integers(0, side, (m, 2))
        return {
            "params": rng.random((side, side), dtype=np.float32),
            "indices": indices,
            "updates": rng.random(m, dtype=np.float32),
        }
    rows, cols, k = (100, 100, 20) if quick else (1000, 1000, 200)
    k = points or k
    if key == "S2u":
        indices = np.argsort(rng.random((rows, cols)), axis=1)[:, :k]
    else:
        indices = rng.integers(0, cols, (rows, k))
    return {
        "params": rng.random((rows, cols), dtype=np.float32),
        "indices": indices,
        "updates": rng.random((rows, k), dtype=np.float32),
    }


def flat_positions(key: str, params: Any, indices: Any) -> Any:
    if key.startswith("S1"):
        return indices[:, 0] * params.shape[1] + indices[:, 1]
    return (np.arange(params.shape[0])[:, None] * params.shape[1] + indices).reshape(-1)


def expected(key: str, data: dict[str, Any], reduce: str) -> Any:
    """The reference: a Python loop over the updates in order ("update": the last wins),
    ``ufunc.at`` for the reductions."""
    p = data["params"]
    flat = flat_positions(key, p, data["indices"])
    updates = data["updates"].reshape(-1)
    if reduce == "update":
        out = p.reshape(-1).tolist()
        for position, value in zip(flat.tolist(), updates.tolist(), strict=True):
            out[position] = value
        return np.asarray(out, dtype=p.dtype).reshape(p.shape)
    line = p.copy().reshape(-1)
    ufunc(reduce).at(line, flat, updates)
    return line.reshape(p.shape)


def promise_kwargs(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """``{"unique_indices": True}`` where `fn` takes the keyword; None where not (yet)."""
    if "unique_indices" in inspect.signature(fn).parameters:
        return {"unique_indices": True}
    return None


def pg_call(key: str, p: Any, i: Any, u: Any, reduce: str, policy: str, **extra: Any) -> Any:
    if key.startswith("S1"):
        return pg.scatter_nd(p, i, u, reduce=reduce, bad_indices=policy, **extra)
    return pg.put_along_axis(p, i, u, axis=1, reduce=reduce, bad_indices=policy, **extra)


def pg_candidates(
    key: str, args: tuple[Any, ...], reduce: str, policies: tuple[str, ...],
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None,
    scatter_d: bool = False,
) -> list[Candidate]:  # fmt: skip
    """portagather under each policy, and under the last with ``unique_indices=True`` on
    S1u/S2u (where the functions take it). `wrap` turns ``f(p, i, u)`` into what is timed
    (``jax.jit``); the candidate's ``policy`` is the column its ratio goes in. `scatter_d`:
    S2 through ``scatter_d`` (PyTorch's argument order), as PyTorch's users call it."""
    function = pg.scatter_nd if key.startswith("S1") else pg.put_along_axis
    variants = [(policy, policy, {}) for policy in policies]
    promise = promise_kwargs(pg.scatter_d if scatter_d else function)
    if key.endswith("u") and promise is not None:
        variants.append(("promise", policies[-1], promise))
    out = []
    for column, policy, extra in variants:

        def f(p: Any, i: Any, u: Any, policy: str = policy, extra: Any = extra) -> Any:
            if scatter_d:
                return pg.scatter_d(p, 1, i, u, reduce=reduce, bad_indices=policy, **extra)
            return pg_call(key, p, i, u, reduce, policy, **extra)

        g = wrap(f) if wrap is not None else f
        label = ("pg.scatter_d " if scatter_d else "pg ") + policy
        label += " unique_indices=True" if extra else ""
        out.append(Candidate(label, PG, lambda g=g: g(*args), policy=column))
    return out


# ------------------------------------------------------------------------------ natives


def _numpy(key: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    p, i, u = data["params"], data["indices"], data["updates"]
    uf = None if reduce == "update" else ufunc(reduce)
    unique = key.endswith("u")
    s1 = key.startswith("S1")
    where = (i[:, 0], i[:, 1]) if s1 else (np.arange(p.shape[0])[:, None], i)
    line = u.reshape(-1)

    def at_axes() -> Any:
        out = p.copy()
        if uf is None:
            out[where] = u
        else:
            uf.at(out, where, u)
        return out

    def at_flat() -> Any:  # the hand-written flat form, positions computed in the call
        out = p.copy()
        flat = flat_positions(key, p, i)
        if uf is None:
            out.reshape(-1)[flat] = line
        else:
            uf.at(out.reshape(-1), flat, line)
        return out

    def gather_op_scatter() -> Any:  # right only without duplicates
        out = p.copy()
        flat = flat_positions(key, p, i)
        view = out.reshape(-1)
        assert uf is not None
        view[flat] = uf(view[flat], line)
        return out

    op = "assign" if uf is None else f"{uf.__name__}.at"
    natives = [
        Candidate(f"out[{'i0, i1' if s1 else 'rows, i'}] {op}", NATIVE, at_axes),
        Candidate(f"flat {op}", NATIVE, at_flat),
    ]
    if not s1 and uf is None:
        natives.append(Candidate("np.put_along_axis", NATIVE, lambda: _put_along(p, i, u)))
    if unique and uf is not None:
        natives.append(Candidate("flat out[f] = op(out[f], u)", NATIVE, gather_op_scatter))
    return pg_candidates(key, (p, i, u), reduce, ("error", "unchecked")) + natives


def _put_along(p: Any, i: Any, u: Any) -> Any:
    out = p.copy()
    np.put_along_axis(out, i, u, axis=1)
    return out


TORCH_OP = {"add": "add", "max": "maximum", "min": "minimum", "multiply": "mul"}


def _torch(key: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import torch

    p, i, u = (torch.from_numpy(data[k]) for k in ("params", "indices", "updates"))
    how = TORCH_REDUCE.get(reduce)
    s1 = key.startswith("S1")
    unique = key.endswith("u")
    line = u.reshape(-1)

    def positions() -> Any:
        if s1:
            return i[:, 0] * p.shape[1] + i[:, 1]
        return (torch.arange(p.shape[0])[:, None] * p.shape[1] + i).reshape(-1)

    def flat_scatter() -> Any:
        out = p.clone()
        flat = out.view(-1)
        if how is None:
            flat.scatter_(0, positions(), line)
        elif reduce == "add":
            flat.scatter_add_(0, positions(), line)
        else:
            flat.scatter_reduce_(0, positions(), line, how)
        return out

    def flat_index() -> Any:  # index_put_ / index_add_ on the flat view
        out = p.clone()
        if reduce == "add":
            out.view(-1).index_add_(0, positions(), line)
        else:
            out.view(-1).index_put_((positions(),), line)
        return out

    def gather_op_scatter() -> Any:  # right only without duplicates
        out = p.clone()
        flat, view = positions(), out.view(-1)
        old = view.index_select(0, flat)
        view.scatter_(0, flat, getattr(torch, TORCH_OP[reduce])(old, line))
        return out

    natives = [Candidate("flat scatter_/scatter_add_/scatter_reduce_", NATIVE, flat_scatter)]
    if reduce in ("update", "add"):
        natives.append(Candidate("flat index_put_ / index_add_", NATIVE, flat_index))
    if s1:
        if reduce in ("update", "add"):

            def index_put() -> Any:
                return p.clone().index_put_((i[:, 0], i[:, 1]), u, accumulate=reduce == "add")

            natives.append(Candidate(PLAIN_INDEX_PUT, NATIVE, index_put))
        if key == "S1" and reduce == "update":

            def deterministic_index_put() -> Any:  # torch's own last-wins path
                with torch_deterministic():
                    return p.clone().index_put_((i[:, 0], i[:, 1]), u)

            natives.append(Candidate(DET_NAME, DETERMINISTIC, deterministic_index_put))
        mine = pg_candidates(key, (p, i, u), reduce, ("error", "unchecked"))
    else:

        def along() -> Any:
            out = p.clone()
            if how is None:
                return out.scatter_(1, i, u)
            if reduce == "add":
                return out.scatter_add_(1, i, u)
            return out.scatter_reduce_(1, i, u, how)

        natives.append(Candidate("scatter_/scatter_add_/scatter_reduce_(1)", NATIVE, along))
        mine = pg_candidates(key, (p, i, u), reduce, ("error", "unchecked"), scatter_d=True)
    if unique and how is not None:
        natives.append(Candidate("flat out[f] = op(out[f], u)", NATIVE, gather_op_scatter))
    return mine + natives


def _jax_natives(key: str, p: Any, reduce: str) -> list[tuple[str, Callable[..., Any]]]:
    """JAX's own idioms as functions of (p, i, u), for ``jit`` or eager calls."""
    import jax.numpy as jnp

    method = JAX_METHOD[reduce]
    s1 = key.startswith("S1")
    rows = None if s1 else jnp.arange(p.shape[0])[:, None]

    def at_flat(p: Any, i: Any, u: Any) -> Any:  # flat positions: no clamp per component
        if s1:
            flat = i[:, 0] * p.shape[1] + i[:, 1]
        else:
            flat = (rows * p.shape[1] + i).reshape(-1)
        line = getattr(p.reshape(-1).at[flat], method)(u.reshape(-1), mode="promise_in_bounds")
        return line.reshape(p.shape)

    where_name = "i0, i1" if s1 else "rows, i"
    natives = [
        (f'.at[{where_name}].{method}(mode="clip")', jax_at(reduce, rows, mode="clip")),
        (f".at[flat].{method}", at_flat),
    ]
    if key.endswith("u"):
        natives.append(
            (
                f".at[{where_name}].{method}(unique_indices=True)",
                jax_at(reduce, rows, mode="clip", unique_indices=True),
            )
        )
    return natives


def _jax(key: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import jax
    import jax.numpy as jnp

    p, i, u = (jnp.asarray(data[k]) for k in ("params", "indices", "updates"))

    def jit(f: Callable[..., Any]) -> Callable[..., Any]:
        jitted = jax.jit(f)
        return lambda *a: jitted(*a).block_until_ready()

    mine = pg_candidates(key, (p, i, u), reduce, ("clip",), wrap=jit)
    natives = []
    for name, f in _jax_natives(key, p, reduce):
        jitted = jit(f)
        natives.append(Candidate(f"{name} (jit)", NATIVE, lambda f=jitted: f(p, i, u)))
    return mine + natives


def _jax_eager(key: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import jax.numpy as jnp

    p, i, u = (jnp.asarray(data[k]) for k in ("params", "indices", "updates"))

    def ready(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *a: f(*a).block_until_ready()

    mine = pg_candidates(key, (p, i, u), reduce, ("error", "clip"), wrap=ready)
    natives = []
    for name, f in _jax_natives(key, p, reduce):
        eager = ready(f)
        natives.append(Candidate(f"{name} (eager)", NATIVE, lambda f=eager: f(p, i, u)))
    return mine + natives


def _tensorflow(key: str, data: dict[str, Any], reduce: str) -> list[Candidate]:
    import tensorflow as tf

    ops = {"update": tf.tensor_scatter_nd_update, "add": tf.tensor_scatter_nd_add,
           "max": tf.tensor_scatter_nd_max, "min": tf.tensor_scatter_nd_min}  # fmt: skip
    if key != "S1" or reduce not in ops:
        return []
    p, i, u = (tf.constant(data[k]) for k in ("params", "indices", "updates"))
    op = ops[reduce]
    mine = pg_candidates(key, (data["params"], data["indices"], data["updates"]), reduce,
                         ("error", "unchecked"))  # fmt: skip
    return mine + [Candidate(f"tf.{op.__name__}", NATIVE, lambda: op(p, i, u))]


BACKEND_CANDIDATES: dict[str, Callable[[str, dict[str, Any], str], list[Candidate]]] = {
    "numpy": _numpy, "torch": _torch, "jax": _jax, "jax-eager": _jax_eager,
    "tensorflow": _tensorflow,
}  # fmt: skip


# ------------------------------------------------------------------------------ running


def check(cands: list[Candidate], want: Any, key: str, reduce: str, backend: str) -> None:
    """Every candidate against the reference, before any timing. Natives of "update" are
    not checked where there are duplicates (their write order decides), and none is
    checked on data they are only right for without duplicates unless it has none."""
    for c in cands:
        if c.kind == NATIVE and reduce == "update" and not key.endswith("u"):
            continue
        got = c.fn()
        got = got.numpy() if hasattr(got, "numpy") and not isinstance(got, np.ndarray) else got
        got = np.asarray(got)
        if reduce in ("add", "multiply"):  # float sums and products depend on the order
            same = np.allclose(got, want, rtol=1e-5)
        else:
            same = np.array_equal(got, want)
        if not same:
            msg = f"{key} {backend} {reduce}: {c.name} differs from the reference"
            raise AssertionError(msg)
    det = [c for c in cands if c.kind == DETERMINISTIC]
    if det:  # torch's deterministic path gives exactly portagather's answer
        import torch

        theirs = det[0].fn().numpy()
        assert not torch.are_deterministic_algorithms_enabled()
        for c in cands:
            if c.kind == PG and not np.array_equal(c.fn().numpy(), theirs):
                msg = f"{key} {backend} {reduce}: {c.name} differs from {det[0].name}"
                raise AssertionError(msg)


def run_block(
    key: str, data: dict[str, Any], backend: str, reduce: str, want: Any, budget: float,
    repeat: int,
) -> dict[str, Any] | None:  # fmt: skip
    cands = BACKEND_CANDIDATES[backend](key, data, reduce)
    if not cands:
        return None
    check(cands, want, key, reduce, backend)
    blk = repeated(
        cands, budget, repeat, lambda c: c.kind == NATIVE,
        remake=lambda: BACKEND_CANDIDATES[backend](key, data, reduce),
    )  # fmt: skip
    seconds, rounds, fastest = blk["seconds"], blk["rounds"], blk["fastest"]
    ratios: dict[str, dict[str, float]] = {}
    for c in cands:
        if c.kind == PG:
            ratios[c.policy or c.name] = {**blk["ratios"][c.name], "name": c.name,
                                          "seconds": seconds[c.name]}  # fmt: skip
    det = [c.name for c in cands if c.kind == DETERMINISTIC]
    deterministic = {}
    if det:  # portagather / the deterministic path, that path / plain index_put_, per repeat
        pairs = {c.policy: (c.name, det[0]) for c in cands if c.kind == PG}
        pairs["deterministic / plain"] = (det[0], PLAIN_INDEX_PUT)
        for column, (num, den) in pairs.items():
            per = [m[num] / m[den] for m in blk["runs"]]
            deterministic[column] = {"ratio": statistics.median(per), "low": min(per),
                                     "high": max(per)}  # fmt: skip
        deterministic["seconds"] = {n: seconds[n] for n in (det[0], PLAIN_INDEX_PUT)}
    return {
        "workload": key, "backend": backend, "reduce": reduce, "native": fastest,
        "native_s": seconds[fastest], "ratios": ratios, "rounds": rounds, "seconds": seconds,
        **({"deterministic": deterministic} if deterministic else {}),
    }  # fmt: skip


def first_calls(
    key: str, reduce: str, quick: bool, shapes: int, policies: tuple[str, ...],
) -> dict[str, Any]:  # fmt: skip
    """Eager JAX: the first call on an index shape no candidate has seen, for each candidate
    and `shapes` shapes (each candidate its own), interleaved; medians."""
    import jax.numpy as jnp

    base = 2000 if quick else 200_000
    step = 1 if key.startswith("S2") else 7
    if key.startswith("S2"):
        base = 20 if quick else 200
    sample = make_workload(key, quick)
    native_fns = _jax_natives(key, jnp.asarray(sample["params"]), reduce)[:1]
    names = [f"pg {policy}" for policy in policies] + [n for n, _ in native_fns]
    times: dict[str, list[float]] = {n: [] for n in names}
    serial = 0
    for s in range(-1, shapes):  # round -1 is discarded: it pays what is paid once a process
        for name in rotated(names, s):
            serial += 1
            data = make_workload(key, quick, points=base - step * serial)
            p, i, u = (jnp.asarray(data[k]) for k in ("params", "indices", "updates"))
            p.block_until_ready()
            t0 = time.perf_counter()
            if name.startswith("pg "):
                result = pg_call(key, p, i, u, reduce, name[3:])
            else:
                result = native_fns[0][1](p, i, u)
            result.block_until_ready()
            if s >= 0:
                times[name].append(time.perf_counter() - t0)
    return {n: statistics.median(ts) for n, ts in times.items()}


def run(
    quick: bool, backends: list[str], reduces: list[str], keys: list[str], repeat: int,
    shapes: int,
) -> dict[str, Any]:  # fmt: skip
    budget = 0.3 if quick else 3.0
    blocks, firsts = [], []
    for key in keys:
        data = make_workload(key, quick)
        for reduce in reduces:
            want = expected(key, data, reduce)
            for backend in backends:
                blk = run_block(key, data, backend, reduce, want, budget, repeat)
                if blk is None:
                    continue
                blocks.append(blk)
                cells = ", ".join(f"{col} {ratio_cell(r, None, repeat)}"
                                  for col, r in blk["ratios"].items())  # fmt: skip
                print(
                    f"{key:3} {backend:10} {reduce:8} native {blk['native_s'] * 1e3:8.2f} ms "
                    f"({blk['native']}): {cells}",
                    flush=True,
                )
                if "deterministic" in blk:
                    print("    " + ", ".join(
                        f"{col} {ratio_cell(r, None, 2)}"
                        for col, r in blk["deterministic"].items() if col != "seconds"
                    ), flush=True)  # fmt: skip
            if "jax-eager" in backends and not key.endswith("u"):
                first = first_calls(key, reduce, quick, shapes, ("error", "clip"))
                firsts.append({"workload": key, "reduce": reduce, "seconds": first})
                print(f"{key:3} jax first {reduce:8} " + ", ".join(
                    f"{n} {t * 1e3:.0f} ms" for n, t in first.items()), flush=True)  # fmt: skip
    return {"blocks": blocks, "first_calls": firsts}


# ------------------------------------------------------------------------------ report


def report(res: dict[str, Any], repeat: int, shapes: int, threads: int) -> str:
    promised = promise_kwargs(pg.scatter_nd) is not None
    lines = [
        "<!-- scatter -->",
        "## Scatters",
        "",
        header(f"python benchmarks/scatter.py --repeat {repeat}", threads)
        + " The machine is shared with other work: the ranges in brackets are the spread over "
        "the repeats.",
        "",
        "S1: `scatter_nd`, 200k point updates (duplicates included) into 2000 x 2000 float32. "
        "S2: `put_along_axis` (NumPy, JAX) / `scatter_d` (PyTorch) of a 1000 x 200 index into "
        "1000 x 1000 float32 along axis 1. S1u, S2u: the same sizes without duplicates. Ratio: "
        "portagather / fastest native of the same reduction, median of interleaved rounds in "
        "one process (each result first compared with a Python loop, or `ufunc.at`). JAX "
        'under `jit` with `bad_indices="clip"` against `.at[...](mode="clip")` and the flat '
        "`.at[flat]`. Bounds of issue 22: `\"update\"` with duplicates at most "
        f"{UPDATE_BOUND}x (the natives resolve nothing: their write order decides which "
        f"duplicate wins); every reduction, and `unique_indices=True`, at most {REDUCE_BOUND}x."
        + ("" if promised else " portagather takes no `unique_indices` yet: that column is "
           "empty."),
        "",
        "| workload | backend | reduce | fastest native | idiom | `\"error\"` "
        '| `"unchecked"` (JAX jit: `"clip"`) | `unique_indices=True` |',
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]  # fmt: skip
    for b in res["blocks"]:
        if b["backend"] in ("jax-eager", "tensorflow"):
            continue
        bound = UPDATE_BOUND if b["reduce"] == "update" else REDUCE_BOUND
        r = b["ratios"]
        cells = [
            ratio_cell(r.get("error"), None, repeat),
            ratio_cell(r.get("unchecked", r.get("clip")), bound, repeat),
            ratio_cell(r.get("promise"), REDUCE_BOUND, repeat),
        ]
        lines.append(
            f"| {b['workload']} | {b['backend']} | {b['reduce']} | {b['native_s'] * 1e3:.2f} ms "
            f"| `{b['native']}` | " + " | ".join(cells) + " |"
        )
    det_rows = [b for b in res["blocks"] if "deterministic" in b]
    if det_rows:
        lines += [
            "",
            "### PyTorch: last wins against `index_put_` under deterministic algorithms",
            "",
            "`index_put_((i0, i1))` under `torch.use_deterministic_algorithms(True)` (PyTorch's "
            "own last-wins path; switched off again after each call) gave exactly the "
            "reference's and portagather's result before the timing, and ran in the same "
            "interleaved rounds as the block above without counting as its native. Ratios "
            "per repeat, median over the repeats, range in brackets.",
            "",
            "| workload | deterministic `index_put_` | plain `index_put_` | deterministic / plain "
            '| `"error"` / deterministic | `"unchecked"` / deterministic |',
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for b in det_rows:
            d = b["deterministic"]
            lines.append(
                f"| {b['workload']} | {d['seconds'][DET_NAME] * 1e3:.2f} ms "
                f"| {d['seconds'][PLAIN_INDEX_PUT] * 1e3:.2f} ms "
                f"| {ratio_cell(d['deterministic / plain'], None, repeat)} "
                f"| {ratio_cell(d.get('error'), None, repeat)} "
                f"| {ratio_cell(d.get('unchecked'), None, repeat)} |"
            )
    eager = [b for b in res["blocks"] if b["backend"] == "jax-eager"]
    if eager:
        lines += [
            "",
            "### JAX without `jit`",
            "",
            "Eager calls on concrete JAX arrays against the same idioms outside `jit`. Warm: "
            "median of interleaved rounds; bound "
            f"{EAGER_WARM_BOUND}x. First call: one call on an index shape not seen before "
            f"(compilations included), the median over {shapes} such shapes per candidate, "
            f'against `.at[...](mode="clip")`; bound {EAGER_FIRST_BOUND}x.',
            "",
            '| workload | reduce | fastest native (warm) | idiom | `"error"` warm | `"clip"` '
            'warm | `unique_indices=True` warm | native first call | `"error"` first '
            '| `"clip"` first |',
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        firsts = {(f["workload"], f["reduce"]): f["seconds"] for f in res["first_calls"]}
        for b in eager:
            r = b["ratios"]
            first = firsts.get((b["workload"], b["reduce"]))
            cells = ["-", "-", "-"]
            if first:
                native = next(v for n, v in first.items() if not n.startswith("pg "))
                cells = [f"{native * 1e3:.0f} ms"] + [
                    marked(first[f"pg {pol}"] / native, EAGER_FIRST_BOUND)
                    for pol in ("error", "clip")
                ]
            lines.append(
                f"| {b['workload']} | {b['reduce']} | {b['native_s'] * 1e3:.2f} ms "
                f"| `{b['native']}` | {ratio_cell(r.get('error'), EAGER_WARM_BOUND, repeat)} "
                f"| {ratio_cell(r.get('clip'), EAGER_WARM_BOUND, repeat)} "
                f"| {ratio_cell(r.get('promise'), EAGER_WARM_BOUND, repeat)} | "
                + " | ".join(cells)
                + " |"
            )
    tf_rows = [b for b in res["blocks"] if b["backend"] == "tensorflow"]
    if tf_rows:
        lines += [
            "",
            "### Against TensorFlow",
            "",
            "portagather on NumPy against TensorFlow's `tensor_scatter_nd_*` (no multiply) "
            "on the same data (S1).",
            "",
            '| reduce | TensorFlow | `"error"` | `"unchecked"` |',
            "| --- | --- | --- | --- |",
        ]
        for b in tf_rows:
            r = b["ratios"]
            lines.append(
                f"| {b['reduce']} | {b['native_s'] * 1e3:.2f} ms (`{b['native']}`) "
                f"| {ratio_cell(r.get('error'), None, repeat)} "
                f"| {ratio_cell(r.get('unchecked'), None, repeat)} |"
            )
    lines.append("<!-- /scatter -->")
    return "\n".join(lines)


def profile(keys: list[str], backends: list[str], reduces: list[str], quick: bool,
            rounds: int, calls: int, threads: int) -> str:  # fmt: skip
    """The section ``scatter-profile``: per portagather policy of each block, its time, the
    fastest native's, the ratio, and the functions of most own time (`calls` calls)."""
    rows = []
    for key in keys:
        data = make_workload(key, quick)
        for backend in backends:
            for reduce in reduces:
                cands = BACKEND_CANDIDATES[backend](key, data, reduce)
                check(cands, expected(key, data, reduce), key, reduce, backend)
                seconds = interleaved({c.name: c.fn for c in cands}, rounds)
                fastest = min((c.name for c in cands if c.kind == NATIVE), key=seconds.get)
                for c in cands:
                    if c.kind == PG:
                        _total, *top = top_steps(c.fn, calls, 6)
                        steps = steps_text(top, digits=0)
                        t, native = seconds[c.name], seconds[fastest]
                        rows.append([key, backend, reduce, c.name, f"{t * 1e6:.0f}",
                                     f"{native * 1e6:.0f} (`{fastest}`)", f"{t / native:.2f}",
                                     steps])  # fmt: skip
    command = (f"python benchmarks/scatter.py --profile --workloads {' '.join(keys)} "
               f"--reduces {' '.join(reduces)}")  # fmt: skip
    header_row = ["workload", "backend", "reduce", "portagather", "µs", "native µs", "ratio",
                  "top steps: own µs per call"]  # fmt: skip
    lines = [
        "<!-- scatter-profile -->",
        "## Scatters: where the time of a large call goes",
        "",
        header(command, threads) + f" Medians of {rounds} interleaved rounds; steps: `cProfile` "
        f"own time over {calls} calls, µs per call (the profiler's own cost per Python call "
        "included). The copy of the data and the backend's scatter (`ufunc.at`, "
        "`scatter_add_`, `scatter_reduce_`) are what the native runs too.",
        "",
        table(header_row, rows),
        "<!-- /scatter-profile -->",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, repeat=True, rounds=15, threads=True, backends=BACKENDS)
    parser.add_argument("--reduces", nargs="+", default=None, choices=REDUCES)
    parser.add_argument("--workloads", nargs="+", default=None, choices=WORKLOADS)
    parser.add_argument("--shapes", type=int, default=None, help="new shapes per first call")
    parser.add_argument("--profile", action="store_true",
                        help="where the time goes (NumPy, PyTorch; default S2, add and max; "
                        "--rounds, --calls): the scatter-profile section")  # fmt: skip
    parser.add_argument("--calls", type=int, default=100, help="profiled calls of each")
    args = parser.parse_args(argv)
    shapes = args.shapes or (1 if args.quick else 3)
    if args.profile:
        backends = [b for b in args.backends if b in ("numpy", "torch")]
        setup(args.threads, backends)
        text = profile(args.workloads or ["S2"], backends, args.reduces or ["add", "max"],
                       args.quick, args.rounds, args.calls, args.threads)  # fmt: skip
        print(text)
        if not args.quick:
            write_section("scatter-profile", text, after="scatter")
        return
    setup(args.threads, [b.split("-")[0] for b in args.backends])
    res = run(args.quick, args.backends, args.reduces or list(REDUCES),
              args.workloads or list(WORKLOADS), args.repeat, shapes)  # fmt: skip
    if args.quick:
        return
    (HERE / "scatter.json").write_text(json.dumps({"machine": machine(), **res}, indent=1))
    write_section("scatter", report(res, args.repeat, shapes, args.threads))


if __name__ == "__main__":
    main()
