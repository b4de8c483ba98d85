"""Per call: every public function of portagather on tiny inputs, against the native idiom.

    python benchmarks/per_call.py             # writes the per-call section and per_call.json
    python benchmarks/per_call.py --quick     # few rounds, a few seconds; writes nothing
    python benchmarks/per_call.py --backends numpy --functions gather_nd segment_sum
    python benchmarks/per_call.py --from-json # the section again from per_call.json

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
cost (about a microsecond per Python call) is in these figures, so they add up to more than
the unprofiled time; they show which steps remain and their order.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import numpy as np  # noqa: E402

import portagather as pg  # noqa: E402

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


def code_commit() -> str:
    """The commit of the portagather source imported (``-dirty`` with uncommitted changes)."""
    src = Path(pg.__file__).resolve().parent
    try:

        def git(*args: str) -> str:
            out = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True,
                                 check=True)  # fmt: skip
            return out.stdout.strip()

        head, dirty = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--", ".")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


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


def _ratio_cell(r: dict[str, Any], bound: float | None, repeat: int) -> str:
    text = harness.marked(r["ratio"], bound) if bound else f"{r['ratio']:.2f}"
    if bound:
        text = text.replace("✅", "met").replace("❌", "missed")
    if repeat > 1:
        text += f" ({r['low']:.2f}-{r['high']:.2f})"
    return text


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
        f"`python benchmarks/per_call.py --repeat {repeat}` on {info['cpu']} "
        f"({info['cores']} cores), one intra-op thread; {harness.versions_text(info)}. "
        f"Measured on the portagather source at commit `{res['commit']}`, as the run "
        "imported it.",
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
        lines.append(
            f"| {row['backend']} | `{row['function']}` | {e['seconds'] * 1e6:.1f} "
            f"| {u['seconds'] * 1e6:.1f} | {row['native_s'] * 1e6:.1f} | `{row['native']}` "
            f"| {_ratio_cell(e, BOUNDS['error'] if bounded else None, repeat)} "
            f"| {_ratio_cell(u, BOUNDS['unchecked'] if bounded else None, repeat)} |"
        )
    if res["profiles"]:
        lines += [
            "",
            '### Profile: what remains in a call (`"error"`)',
            "",
            f"`cProfile` over {res['profile_calls']} calls of each function; the "
            f"{res['top']} functions of most own time, in µs per call (own time; the "
            "profiler's cost of about a microsecond per Python call is included, so a "
            "row adds up to more than the unprofiled time above). Built-ins are the "
            "backend's own operations.",
            "",
            "| backend | function | profiled µs per call | top steps: own µs per call |",
            "| --- | --- | --- | --- |",
        ]
        for prof in res["profiles"]:
            total, *steps = prof["steps"]
            text = ", ".join(f"`{s['step']}` {s['us']:.1f}" for s in steps)
            lines.append(
                f"| {prof['backend']} | `{prof['function']}` | {total['us']:.1f} | {text} |"
            )
    lines.append("<!-- /per-call -->")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = harness.arguments(__doc__, quick="few rounds; writes nothing", repeat=True,
                               rounds=21, threads=True, backends=BACKENDS)  # fmt: skip
    parser.add_argument("--inner", type=int, default=100, help="calls per timed sample, at most")
    parser.add_argument("--functions", nargs="+", default=None, help="e.g. gather_nd scatter_d")
    parser.add_argument("--profile-calls", type=int, default=2000, help="0: no profile")
    parser.add_argument("--top", type=int, default=5, help="steps shown per profile")
    parser.add_argument("--from-json", action="store_true", help="the section from per_call.json")
    parser.add_argument(
        "--commit", default=None,
        help="the commit the measured source stands at, for the section (default: the HEAD of "
        "the imported source's checkout, -dirty where it has changes)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.from_json:
        harness.write_section("per-call", report(json.loads((HERE / "per_call.json").read_text())))
        return
    if args.quick:
        args.rounds, args.inner, args.profile_calls = 3, 5, min(args.profile_calls, 50)
    harness.setup(args.threads, args.backends)
    res = run(args.backends, args.functions, args.rounds, args.inner, args.repeat,
              args.profile_calls, args.top)  # fmt: skip
    res |= {
        "machine": harness.machine(), "commit": args.commit or code_commit(),
        "rounds": args.rounds, "inner": args.inner, "repeat": args.repeat,
        "profile_calls": args.profile_calls, "top": args.top,
    }  # fmt: skip
    text = report(res)
    print("\n" + text)
    if args.quick:
        return
    (HERE / "per_call.json").write_text(json.dumps(res, indent=1))
    harness.write_section("per-call", text)


if __name__ == "__main__":
    main()
