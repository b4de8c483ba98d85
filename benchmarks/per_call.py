"""Per call: every public function of portagather on tiny inputs, against the native idiom.

    python benchmarks/per_call.py             # writes the per-call section and per_call.json
    python benchmarks/per_call.py --quick     # few rounds, a few seconds; writes nothing
    python benchmarks/per_call.py --backends numpy --functions gather_nd segment_sum
    python benchmarks/per_call.py --from-json # the section again from per_call.json
    python benchmarks/per_call.py --front-ends  # the per-call-torch section instead

What a loop of small calls pays (beam-search bookkeeping, per-step RL indexing, per-batch
graph updates): params 8 x 6 float32 with 5 index vectors (no duplicates), an 8 x 3 index
along axis 1, 10 rows of data into 6 segments (sorted ids, every segment non-empty; offsets
for ``segment_csr``). Every public function (each scatter with each reduction) under
``bad_indices="error"`` and ``"unchecked"``, on NumPy, PyTorch (CPU) and JAX without
``jit``, against the native idioms a user would write for the same inputs; every native's
result is first compared with portagather's (exactly, or ``allclose`` for sums, means and
products). Timing: ``harness.interleaved`` (rotating rounds of ``--inner`` calls each,
medians); the ratio is portagather / the fastest native of the same row in the same rounds,
median over ``--repeat`` repeats. Bounds of issue 29: at most 2.0x under ``"error"``, 1.5x
under ``"unchecked"`` on NumPy and PyTorch (JAX eager is reported).

The profile: ``cProfile`` over ``--profile-calls`` calls of each function under ``"error"``;
the functions of most own time (``tottime``) per call, in microseconds. The profiler's own
cost per Python call is in these figures, so they add up to more than the unprofiled time;
they show which steps remain and their order.

``--front-ends``: each front end of ``portagather.compat.torch`` on the same inputs as CPU
tensors (an 8 x 3 index along dim 1; 5 rows along dim 0; 5 index pairs for ``index_put``)
against the PyTorch function it imitates with the same arguments, whose result is first
compared with portagather's; the ratio portagather / PyTorch in the same rounds, bounded by
issue 29's bound under ``"error"`` (a front end checks every index as the core's ``"error"``
does). Writes the section ``per-call-torch``.
"""

from __future__ import annotations

import json
import statistics
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness
import numpy as np

import portagather as pg
from portagather.compat import torch as pgt

HERE = Path(__file__).resolve().parent
BACKENDS = ("numpy", "torch", "jax")
POLICIES = ("error", "unchecked")
BOUNDS = {"error": 2.0, "unchecked": 1.5}
BOUNDED = ("numpy", "torch")
SCATTER_REDUCES = ("update", "add", "multiply", "min", "max")
SEGMENT_REDUCES = ("sum", "mean", "max", "min", "prod")
ROWS, COLS, SEGMENTS = 8, 6, 6
#: Seconds a timed sample of `inner` calls lasts at most.
SAMPLE = 1e-3

Fn = Callable[[], Any]


def inputs() -> dict[str, np.ndarray]:
    """The tiny inputs, as NumPy arrays."""
    rng = np.random.default_rng(29)
    flat = rng.choice(ROWS * COLS, 5, replace=False)
    return {
        "p": rng.standard_normal((ROWS, COLS)).astype(np.float32),
        "nd": np.stack([flat // COLS, flat % COLS], axis=1).astype(np.int64),  # (5, 2)
        "rows": rng.choice(ROWS, 5, replace=False).astype(np.int64),  # (5,) along axis 0
        "along": np.stack([rng.choice(COLS, 3, replace=False) for _ in range(ROWS)]),  # (8, 3)
        "u_nd": rng.standard_normal(5).astype(np.float32),
        "u_along": rng.standard_normal((ROWS, 3)).astype(np.float32),
        "data": rng.standard_normal(10).astype(np.float32),
        "ids": np.array([0, 0, 1, 2, 2, 3, 4, 4, 5, 5], dtype=np.int64),
        "offsets": np.array([0, 2, 3, 5, 6, 8, 10], dtype=np.int64),
    }


def on_backend(backend: str, a: dict[str, np.ndarray]) -> dict[str, Any]:
    if backend == "torch":
        import torch

        return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in a.items()}
    if backend == "jax":
        import jax.numpy as jnp

        return {k: jnp.asarray(v) for k, v in a.items()}
    return {k: np.ascontiguousarray(v) for k, v in a.items()}


# ------------------------------------------------------------------------------ the calls


def portagather_calls(a: dict[str, Any]) -> dict[str, Callable[[str], Any]]:
    """Each row's portagather call, a function of the policy."""
    p, nd, rows, along = a["p"], a["nd"], a["rows"], a["along"]
    u_nd, u_along, data, ids, off = a["u_nd"], a["u_along"], a["data"], a["ids"], a["offsets"]
    calls: dict[str, Callable[[str], Any]] = {
        "gather": lambda b: pg.gather(p, rows, axis=0, bad_indices=b),
        "gather_nd": lambda b: pg.gather_nd(p, nd, bad_indices=b),
        "take_along_axis": lambda b: pg.take_along_axis(p, along, axis=1, bad_indices=b),
        "gather_d": lambda b: pg.gather_d(p, 1, along, bad_indices=b),
    }
    for r in SCATTER_REDUCES:
        calls[f'scatter_nd("{r}")'] = lambda b, r=r: pg.scatter_nd(
            p, nd, u_nd, reduce=r, bad_indices=b
        )
        calls[f'scatter_d("{r}")'] = lambda b, r=r: pg.scatter_d(
            p, 1, along, u_along, reduce=r, bad_indices=b
        )
        calls[f'put_along_axis("{r}")'] = lambda b, r=r: pg.put_along_axis(
            p, along, u_along, axis=1, reduce=r, bad_indices=b
        )
    for r in SEGMENT_REDUCES:
        seg = getattr(pg, f"segment_{r}")
        calls[f"segment_{r}"] = lambda b, seg=seg: seg(data, ids, SEGMENTS, bad_indices=b)
    for r in SEGMENT_REDUCES:
        calls[f'segment_csr("{r}")'] = lambda b, r=r: pg.segment_csr(
            data, off, reduce=r, bad_indices=b
        )
    return calls


def numpy_natives(a: dict[str, Any]) -> dict[str, dict[str, Fn]]:
    p, nd, rows, along = a["p"], a["nd"], a["rows"], a["along"]
    u_nd, u_along, data, ids, off = a["u_nd"], a["u_along"], a["data"], a["ids"], a["offsets"]
    f32 = np.float32

    def copy_then(f: Callable[[Any], Any]) -> Any:
        out = p.copy()
        f(out)
        return out

    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
    along_natives = {
        "np.take_along_axis": lambda: np.take_along_axis(p, along, axis=1),
        "p[arange[:, None], i]": lambda: p[np.arange(ROWS)[:, None], along],
    }
    out: dict[str, dict[str, Fn]] = {
        "gather": {"p[i]": lambda: p[rows], "np.take(axis=0)": lambda: np.take(p, rows, axis=0)},
        "gather_nd": {
            "p[i[:, 0], i[:, 1]]": lambda: p[nd[:, 0], nd[:, 1]],
            "p[tuple(i.T)]": lambda: p[tuple(nd.T)],
        },
        "take_along_axis": along_natives,
        "gather_d": along_natives,
    }
    nd_update = {"o[i[:, 0], i[:, 1]] = u": lambda: copy_then(
        lambda o: o.__setitem__((nd[:, 0], nd[:, 1]), u_nd))}  # fmt: skip
    along_update = {"np.put_along_axis": lambda: copy_then(
        lambda o: np.put_along_axis(o, along, u_along, axis=1))}  # fmt: skip
    out['scatter_nd("update")'] = nd_update
    out['scatter_d("update")'] = out['put_along_axis("update")'] = along_update
    for r, uf in ufunc.items():
        out[f'scatter_nd("{r}")'] = {
            f"np.{uf.__name__}.at": lambda uf=uf: copy_then(
                lambda o: uf.at(o, (nd[:, 0], nd[:, 1]), u_nd)
            )
        }
        out[f'scatter_d("{r}")'] = out[f'put_along_axis("{r}")'] = {
            f"np.{uf.__name__}.at": lambda uf=uf: copy_then(
                lambda o: uf.at(o, (np.arange(ROWS)[:, None], along), u_along)
            )
        }

    def at(uf: Any, start: float) -> Fn:
        def call() -> Any:
            o = np.full(SEGMENTS, start, dtype=f32)
            uf.at(o, ids, data)
            return o

        return call

    out["segment_sum"] = {
        "np.bincount(weights)": lambda: np.bincount(ids, data, SEGMENTS).astype(f32),
        "np.add.at": at(np.add, 0),
    }
    out["segment_mean"] = {
        "np.bincount / np.bincount": lambda: (
            np.bincount(ids, data, SEGMENTS) / np.bincount(ids, minlength=SEGMENTS)
        ).astype(f32),
    }
    out["segment_max"] = {"np.maximum.at": at(np.maximum, -np.inf)}
    out["segment_min"] = {"np.minimum.at": at(np.minimum, np.inf)}
    out["segment_prod"] = {"np.multiply.at": at(np.multiply, 1)}
    reduceat = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}
    for r, uf in reduceat.items():
        out[f'segment_csr("{r}")'] = {
            f"np.{uf.__name__}.reduceat": lambda uf=uf: uf.reduceat(data, off[:-1])
        }
    out['segment_csr("mean")'] = {
        "np.add.reduceat / np.diff": lambda: np.add.reduceat(data, off[:-1]) / np.diff(off)
    }
    return out


def torch_natives(a: dict[str, Any]) -> dict[str, dict[str, Fn]]:
    import torch

    warnings.filterwarnings("ignore", message="index_reduce\\(\\) is in beta")

    p, nd, rows, along = a["p"], a["nd"], a["rows"], a["along"]
    u_nd, u_along, data, ids, off = a["u_nd"], a["u_along"], a["data"], a["ids"], a["offsets"]
    along_natives = {
        "torch.gather": lambda: torch.gather(p, 1, along),
        "torch.take_along_dim": lambda: torch.take_along_dim(p, along, 1),
    }
    out: dict[str, dict[str, Fn]] = {
        "gather": {
            "torch.index_select": lambda: torch.index_select(p, 0, rows),
            "p[i]": lambda: p[rows],
        },
        "gather_nd": {"p[i[:, 0], i[:, 1]]": lambda: p[nd[:, 0], nd[:, 1]]},
        "take_along_axis": along_natives,
        "gather_d": along_natives,
        'scatter_nd("update")': {
            "index_put": lambda: p.index_put((nd[:, 0], nd[:, 1]), u_nd),
        },
        'scatter_nd("add")': {
            "index_put(accumulate=True)": lambda: p.index_put(
                (nd[:, 0], nd[:, 1]), u_nd, accumulate=True
            ),
        },
    }
    along_update = {"scatter": lambda: p.scatter(1, along, u_along)}
    out['scatter_d("update")'] = out['put_along_axis("update")'] = along_update
    along_add = {"scatter_add": lambda: p.scatter_add(1, along, u_along)}
    out['scatter_d("add")'] = out['put_along_axis("add")'] = along_add
    names = {"multiply": "prod", "min": "amin", "max": "amax"}
    for r, how in names.items():
        out[f'scatter_nd("{r}")'] = {
            f'flat scatter_reduce("{how}")': lambda how=how: (
                p.reshape(-1)
                .scatter_reduce(0, nd[:, 0] * COLS + nd[:, 1], u_nd, how)
                .reshape(ROWS, COLS)
            )
        }
        out[f'scatter_d("{r}")'] = out[f'put_along_axis("{r}")'] = {
            f'scatter_reduce("{how}")': lambda how=how: p.scatter_reduce(1, along, u_along, how)
        }
    out["segment_sum"] = {
        "zeros.index_add_": lambda: torch.zeros(SEGMENTS).index_add_(0, ids, data),
        "zeros.scatter_add_": lambda: torch.zeros(SEGMENTS).scatter_add_(0, ids, data),
    }
    for r, how in (("mean", "mean"), ("max", "amax"), ("min", "amin"), ("prod", "prod")):
        out[f"segment_{r}"] = {
            f'zeros.index_reduce_("{how}")': lambda how=how: torch.zeros(SEGMENTS).index_reduce_(
                0, ids, data, how, include_self=False
            ),
            f'zeros.scatter_reduce_("{how}")': lambda how=how: torch.zeros(
                SEGMENTS
            ).scatter_reduce_(0, ids, data, how, include_self=False),
        }
    for r in SEGMENT_REDUCES:
        out[f'segment_csr("{r}")'] = {
            "torch.segment_reduce(offsets)": lambda r=r: torch.segment_reduce(data, r, offsets=off)
        }
    return out


def jax_natives(a: dict[str, Any]) -> dict[str, dict[str, Fn]]:
    import jax
    import jax.numpy as jnp

    p, nd, rows, along = a["p"], a["nd"], a["rows"], a["along"]
    u_nd, u_along, data, ids, off = a["u_nd"], a["u_along"], a["data"], a["ids"], a["offsets"]
    along_natives = {"jnp.take_along_axis": lambda: jnp.take_along_axis(p, along, axis=1)}
    out: dict[str, dict[str, Fn]] = {
        "gather": {"p[i]": lambda: p[rows], "jnp.take(axis=0)": lambda: jnp.take(p, rows, 0)},
        "gather_nd": {"p[i[:, 0], i[:, 1]]": lambda: p[nd[:, 0], nd[:, 1]]},
        "take_along_axis": along_natives,
        "gather_d": along_natives,
    }
    methods = {"update": "set", "add": "add", "multiply": "multiply", "min": "min", "max": "max"}
    for r, m in methods.items():
        out[f'scatter_nd("{r}")'] = {
            f"p.at[i[:, 0], i[:, 1]].{m}": lambda m=m: getattr(p.at[nd[:, 0], nd[:, 1]], m)(u_nd)
        }
        out[f'scatter_d("{r}")'] = out[f'put_along_axis("{r}")'] = {
            f"p.at[arange[:, None], i].{m}": lambda m=m: getattr(
                p.at[jnp.arange(ROWS)[:, None], along], m
            )(u_along)
        }
    ops = {r: getattr(jax.ops, f"segment_{r}") for r in ("sum", "max", "min", "prod")}
    for r, op in ops.items():
        out[f"segment_{r}"] = {f"jax.ops.segment_{r}": lambda op=op: op(data, ids, SEGMENTS)}
    out["segment_mean"] = {
        "segment_sum / segment_sum(ones)": lambda: (
            jax.ops.segment_sum(data, ids, SEGMENTS)
            / jax.ops.segment_sum(jnp.ones_like(data), ids, SEGMENTS)
        )
    }

    def csr_ids() -> Any:
        return jnp.repeat(jnp.arange(SEGMENTS), jnp.diff(off), total_repeat_length=data.shape[0])

    for r, op in ops.items():
        out[f'segment_csr("{r}")'] = {
            f"jax.ops.segment_{r}(repeat)": lambda op=op: op(data, csr_ids(), SEGMENTS)
        }
    out['segment_csr("mean")'] = {
        "segment_sum(repeat) / diff": lambda: (
            jax.ops.segment_sum(data, csr_ids(), SEGMENTS) / jnp.diff(off)
        )
    }
    return out


NATIVES = {"numpy": numpy_natives, "torch": torch_natives, "jax": jax_natives}


def ready(backend: str, f: Fn) -> Fn:
    """`f`, waiting for its result on JAX (dispatch is asynchronous)."""
    if backend == "jax":
        return lambda: f().block_until_ready()
    return f


def agrees(got: Any, want: Any, exact: bool) -> bool:
    got, want = harness.to_numpy(got), harness.to_numpy(want)
    if got.shape != want.shape:
        return False
    if exact:
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got, want, rtol=1e-5, atol=1e-6))


# ------------------------------------------------------------------------------ measure


def measure_row(
    backend: str, name: str, mine: Callable[[str], Any], natives: dict[str, Fn],
    rounds: int, inner: int, repeat: int,
) -> dict[str, Any]:  # fmt: skip
    exact = not any(s in name for s in ("sum", "mean", "prod", "add", "multiply"))
    want = mine("error")
    for policy in POLICIES[1:]:
        if not agrees(mine(policy), want, exact=True):
            msg = f"{backend} {name}: {policy!r} differs from 'error'"
            raise AssertionError(msg)
    for n, f in natives.items():
        if not agrees(f(), want, exact):
            msg = f"{backend} {name}: the native {n} differs from portagather"
            raise AssertionError(msg)
    calls = {f"pg {b}": ready(backend, lambda b=b: mine(b)) for b in POLICIES}
    calls |= {n: ready(backend, f) for n, f in natives.items()}
    # Samples of about a millisecond at most: a long sample on a shared machine is more
    # likely to hold a preemption than a short one.
    slowest = max(harness.in_a_row(f, 0.0, least=3, most=3) for f in calls.values())
    inner = max(1, min(inner, int(SAMPLE / slowest)))
    runs = [harness.interleaved(calls, rounds, inner=inner) for _ in range(repeat)]
    seconds = {n: float(np.median([r[n] for r in runs])) for n in calls}
    fastest = min(natives, key=seconds.__getitem__)
    row: dict[str, Any] = {"backend": backend, "function": name, "native": fastest,
                           "native_s": seconds[fastest], "seconds": seconds,
                           "inner": inner}  # fmt: skip
    for b in POLICIES:
        per = [r[f"pg {b}"] / min(r[n] for n in natives) for r in runs]
        row[b] = {"seconds": seconds[f"pg {b}"], "ratio": float(np.median(per)),
                  "low": min(per), "high": max(per)}  # fmt: skip
    return row


def run(backends: list[str], functions: list[str] | None, rounds: int, inner: int,
        repeat: int, profile_calls: int, top: int) -> dict[str, Any]:  # fmt: skip
    a = inputs()
    rows, profiles = [], []
    for backend in backends:
        arrays = on_backend(backend, a)
        mine = portagather_calls(arrays)
        natives = NATIVES[backend](arrays)
        for name, call in mine.items():
            if functions and not any(name.split("(")[0] == f for f in functions):
                continue
            row = measure_row(backend, name, call, natives[name], rounds, inner, repeat)
            rows.append(row)
            e, u = row["error"], row["unchecked"]
            print(
                f"{backend:6s} {name:28s} error {e['seconds'] * 1e6:7.1f} µs {e['ratio']:5.2f}x"
                f"  unchecked {u['seconds'] * 1e6:7.1f} µs {u['ratio']:5.2f}x"
                f"  native {row['native_s'] * 1e6:6.1f} µs ({row['native']})",
                flush=True,
            )
            if profile_calls:
                steps = harness.top_steps(ready(backend, lambda call=call: call("error")),
                                profile_calls, top)  # fmt: skip
                profiles.append({"backend": backend, "function": name, "steps": steps})
    return {"rows": rows, "profiles": profiles}


# ------------------------------------------------------------------------------ report


def report(res: dict[str, Any]) -> str:
    info, repeat = res["machine"], res["repeat"]
    met = {b: [0, 0] for b in POLICIES}
    for row in res["rows"]:
        if row["backend"] in BOUNDED:
            for b in POLICIES:
                met[b][0] += row[b]["ratio"] <= BOUNDS[b]
                met[b][1] += 1
    lines = [
        "<!-- per-call -->",
        "## Per call: every public function on tiny inputs",
        "",
        harness.header(f"python benchmarks/per_call.py --repeat {repeat}",
                       res.get("threads", 1), res["commit"], info),
        "",
        "Params 8 x 6 float32 with 5 index vectors (no duplicates); an 8 x 3 index along axis "
        "1 (`take_along_axis`, `gather_d`, `scatter_d`, `put_along_axis`); `gather` takes 5 "
        "rows; 10 rows of data into 6 segments (sorted ids, none empty; `segment_csr` by "
        "offsets). Each native was first compared with portagather's result. Times: medians "
        f"of {res['rounds']} interleaved rounds of up to {res['inner']} calls each (fewer where "
        "they would last over a millisecond)"
        + (f", median over {repeat} repeats (range of the ratio in brackets)" if repeat > 1
           else "")
        + "; ratio: portagather / the fastest native listed for the row, in the same rounds. "
        f'Bounds of issue 29 on NumPy and PyTorch: `"error"` at most {BOUNDS["error"]}x, '
        f'`"unchecked"` at most {BOUNDS["unchecked"]}x; JAX without `jit` is reported. '
        f'Met: `"error"` {met["error"][0]} of {met["error"][1]}, `"unchecked"` '
        f'{met["unchecked"][0]} of {met["unchecked"][1]}.',
        "",
        '| backend | function | `"error"` µs | `"unchecked"` µs | native µs | fastest native '
        '| `"error"` ratio | `"unchecked"` ratio |',
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]  # fmt: skip
    for row in res["rows"]:
        bounded = row["backend"] in BOUNDED
        e, u = row["error"], row["unchecked"]
        cells = [harness.ratio_cell(row[b], BOUNDS[b] if bounded else None, repeat, words=True)
                 for b in POLICIES]  # fmt: skip
        lines.append(
            f"| {row['backend']} | `{row['function']}` | {e['seconds'] * 1e6:.1f} "
            f"| {u['seconds'] * 1e6:.1f} | {row['native_s'] * 1e6:.1f} | `{row['native']}` "
            f"| {cells[0]} | {cells[1]} |"
        )
    if res["profiles"]:
        lines += [
            "",
            '### Profile: what remains in a call (`"error"`)',
            "",
            f"`cProfile` over {res['profile_calls']} calls of each function; the "
            f"{res['top']} functions of most own time, in µs per call (own time; the "
            "profiler's own cost per Python call is included, so a "
            "row adds up to more than the unprofiled time above). Built-ins are the "
            "backend's own operations.",
            "",
            "| backend | function | profiled µs per call | top steps: own µs per call |",
            "| --- | --- | --- | --- |",
        ]
        for prof in res["profiles"]:
            total, *steps = prof["steps"]
            text = harness.steps_text(steps)
            lines.append(
                f"| {prof['backend']} | `{prof['function']}` | {total['us']:.1f} | {text} |"
            )
    lines.append("<!-- /per-call -->")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ front ends


def front_ends(a: dict[str, Any]) -> dict[str, tuple[Fn, Fn]]:
    """Each front end of ``compat.torch``: (portagather's call, PyTorch's call)."""
    import torch

    p, along, u_along, rows, nd, u_nd = (a[k] for k in ("p", "along", "u_along", "rows", "nd",
                                                         "u_nd"))  # fmt: skip
    source = torch.ones((rows.shape[0], p.shape[1]), dtype=p.dtype)
    pair = (nd[:, 0], nd[:, 1])
    calls: dict[str, tuple[str, tuple[Any, ...], dict[str, Any]]] = {
        "gather": ("gather", (1, along), {}),
        "take_along_dim": ("take_along_dim", (along, 1), {}),
        "index_select": ("index_select", (0, rows), {}),
        "scatter": ("scatter", (1, along, u_along), {}),
        "scatter_add": ("scatter_add", (1, along, u_along), {}),
        "index_add": ("index_add", (0, rows, source), {}),
        "index_put": ("index_put", (pair, u_nd), {}),
        "index_put(accumulate)": ("index_put", (pair, u_nd), {"accumulate": True}),
    }
    reductions = (("scatter_reduce", (1, along, u_along), ("sum", "amax", "mean")),
                  ("index_reduce", (0, rows, source), ("amax", "mean")))  # fmt: skip
    for name, args, reduces in reductions:
        for reduce in reduces:
            for include_self in (True, False):
                calls[f'{name}("{reduce}", include_self={include_self})'] = (
                    name,
                    (*args, reduce),
                    {"include_self": include_self},
                )

    def both(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[Fn, Fn]:
        mine, theirs = getattr(pgt, name), getattr(torch, name)
        return lambda: mine(p, *args, **kw), lambda: theirs(p, *args, **kw)

    return {label: both(*call) for label, call in calls.items()}


def run_front_ends(rounds: int, inner: int, repeat: int, profile_calls: int,
                   top: int) -> dict[str, Any]:  # fmt: skip
    import torch

    warnings.filterwarnings("ignore", message="index_reduce\\(\\) is in beta")
    results = []
    for name, (mine, theirs) in front_ends(on_backend("torch", inputs())).items():
        torch.testing.assert_close(mine(), theirs())
        times = [harness.interleaved({"pg": mine, "torch": theirs}, rounds, inner=inner)
                 for _ in range(repeat)]  # fmt: skip
        ratios = [t["pg"] / t["torch"] for t in times]
        row = {"function": name, "portagather_s": statistics.median(t["pg"] for t in times),
               "torch_s": statistics.median(t["torch"] for t in times), "low": min(ratios),
               "ratio": statistics.median(ratios), "high": max(ratios)}  # fmt: skip
        if profile_calls:
            row["steps"] = harness.top_steps(mine, profile_calls, top)
        results.append(row)
    return {"rows": results}


def report_front_ends(res: dict[str, Any]) -> str:
    bound, repeat = BOUNDS["error"], res["repeat"]
    met = sum(r["ratio"] <= bound for r in res["rows"])
    lines = [
        "<!-- per-call-torch -->",
        "## Per call: PyTorch's front ends against PyTorch",
        "",
        harness.header(
            f"python benchmarks/per_call.py --front-ends --repeat {repeat}",
            res["threads"],
            res["commit"],
            res["machine"],
        ),
        "",
        "`portagather.compat.torch` against the PyTorch function it imitates, with the same "
        "arguments: CPU tensors, params 8 x 6 float32, an 8 x 3 index along dim 1 (`gather`, "
        "the scatters), 5 rows along dim 0 (`index_*`), 5 index pairs (`index_put`). Each "
        "result was first compared with PyTorch's. Times: medians of "
        f"{res['rounds']} interleaved rounds of {res['inner']} calls each, median over "
        f"{repeat} repeats (range of the ratio in brackets); ratio: portagather / PyTorch. "
        f'Bound (issue 29\'s under `"error"`): {bound}x. Met: {met} of {len(res["rows"])}.',
        "",
        "| function | portagather µs | PyTorch µs | ratio | top steps: own µs per call "
        "(profiled) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in res["rows"]:
        steps = harness.steps_text(r.get("steps", [])[1:])
        lines.append(
            f"| `{r['function']}` | {r['portagather_s'] * 1e6:.1f} | {r['torch_s'] * 1e6:.1f} "
            f"| {harness.ratio_cell(r, bound, max(repeat, 2), words=True)} | {steps} |"
        )
    lines.append("<!-- /per-call-torch -->")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = harness.arguments(__doc__, quick="few rounds; writes nothing", repeat=True,
                               rounds=21, threads=True, backends=BACKENDS)  # fmt: skip
    parser.add_argument("--inner", type=int, default=100, help="calls per timed sample, at most")
    parser.add_argument("--functions", nargs="+", default=None, help="e.g. gather_nd scatter_d")
    parser.add_argument("--profile-calls", type=int, default=2000, help="0: no profile")
    parser.add_argument("--top", type=int, default=None, help="steps per profile (5; 4 front ends)")
    parser.add_argument("--from-json", action="store_true", help="the section from per_call.json")
    parser.add_argument(
        "--front-ends",
        action="store_true",
        help="compat.torch's front ends against PyTorch: section per-call-torch",
    )
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    args = parser.parse_args(argv)
    if args.from_json:
        harness.write_section("per-call", report(json.loads((HERE / "per_call.json").read_text())))
        return
    if args.quick:
        args.rounds, args.inner, args.profile_calls = 3, 5, min(args.profile_calls, 50)
    args.top = args.top or (4 if args.front_ends else 5)
    harness.setup(args.threads, ["torch"] if args.front_ends else args.backends)
    if args.front_ends:
        res = run_front_ends(args.rounds, args.inner, args.repeat, args.profile_calls, args.top)
    else:
        res = run(args.backends, args.functions, args.rounds, args.inner, args.repeat,
                  args.profile_calls, args.top)  # fmt: skip
    res |= {
        "machine": harness.machine(), "commit": args.commit or harness.code_commit(),
        "threads": args.threads, "rounds": args.rounds, "inner": args.inner,
        "repeat": args.repeat, "profile_calls": args.profile_calls, "top": args.top,
    }  # fmt: skip
    text = report_front_ends(res) if args.front_ends else report(res)
    print("\n" + text)
    if args.quick or args.no_write:
        return
    if args.front_ends:
        harness.write_section("per-call-torch", text, after="per-call")
        return
    (HERE / "per_call.json").write_text(json.dumps(res, indent=1))
    harness.write_section("per-call", text)


if __name__ == "__main__":
    main()
