"""JAX without ``jit``: portagather's eager calls beside the prototypes that decided them.

    cd benchmarks && python -m decisions.jax_eager            # writes the jax-eager section
    cd benchmarks && python -m decisions.jax_eager --quick    # small data; writes nothing

The decision record of issue 22. Eager calls on concrete JAX arrays ran the pipeline op by op
(each operation a dispatch, and on a new shape a compilation). The choice made: one cached
``jax.jit`` per function and static arguments (the plan follows from the shapes, which
``jit`` keys its own cache on), so that a warm call pays one dispatch and a first call one
compilation, and ``"error"`` kept exact on the CPU by reading the index on the host
(``engines/jax.py``, ``_api.py``). The prototypes here are those choices built from outside
(``jax.jit`` of the portagather function itself), with the three other ways of keeping
``"error"`` exact that were measured against the host read:

flag
    One jitted computation returns the ``"clip"`` result and whether any index is bad; the
    host reads the flag, and only where it is set runs the eager path, which raises.
range
    A jitted range read of the index (one dispatch, read on the host), then the jitted
    ``"unchecked"`` pipeline (a second dispatch).
host range
    The range read with NumPy on the host, through a view of the CPU array (no copy, and
    nothing to compile), then the jitted ``"unchecked"`` pipeline: the choice made.
checkify
    ``jax.jit(checkify.checkify(f))`` and ``err.throw()``.

Against JAX's own idioms outside ``jit`` (``p.at[i0, i1].get(mode="clip")``,
``jnp.take_along_axis``, ``.at[].add``/``.set``), and ``jax.jit`` of those idioms (the floor:
one dispatch of the native work). Warm: interleaved rounds, medians (``harness.repeated``).
First call: one call on an index shape that no candidate has seen, the median over several
shapes (each candidate its own; a first round is discarded), with the number of compilations
it triggered (``jax.monitoring``).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import harness
import numpy as np
from harness import Candidate, arguments, jax_at, repeated, rotated, setup, write_section

import portagather as pg
from portagather.compat import torch as pgt

# ------------------------------------------------------------------------------ prototypes

_PLANS: dict[tuple[Any, ...], Callable[..., Any]] = {}


def _cached(fn: Callable[..., Any], kind: str, static: dict[str, Any],
            make: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:  # fmt: skip
    """``jax.jit`` of what `make` builds, once per function, `kind` and static arguments;
    ``jit`` caches one compilation per shape and dtype of the arrays (which decide the plan)."""
    key = (fn, kind, tuple(sorted(static.items())))
    if key not in _PLANS:
        _PLANS[key] = jax_jit(make())
    return _PLANS[key]


def planned(fn: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """One ``jax.jit`` of `fn` per function and static arguments."""
    return _cached(fn, "plan", static, lambda: functools.partial(fn, **static))


def jax_jit(f: Callable[..., Any]) -> Callable[..., Any]:
    import jax

    return jax.jit(f)


def flagged(fn: Callable[..., Any], bad: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """``"error"`` by a flag: one jitted computation of the ``"clip"`` result and of whether
    any index is bad (`bad` of the arguments); where the flag is set, today's eager call,
    which raises the exact IndexError."""
    import jax.numpy as jnp

    def both(*args: Any) -> Any:
        return fn(*args, bad_indices="clip", **static), jnp.any(bad(*args))

    jitted = _cached(fn, "flag", static, lambda: both)

    def call(*args: Any) -> Any:
        result, any_bad = jitted(*args)
        if bool(any_bad):
            return fn(*args, bad_indices="error", **static)  # raises, naming the first
        return result

    return call


def ranged(fn: Callable[..., Any], bad: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """``"error"`` by a range read: one jitted check (read on the host), then the jitted
    ``"unchecked"`` pipeline."""
    import jax.numpy as jnp

    check = _cached(fn, "range", static, lambda: lambda *args: jnp.any(bad(*args)))
    run = planned(fn, bad_indices="unchecked", **static)

    def call(*args: Any) -> Any:
        if bool(check(*args)):
            return fn(*args, bad_indices="error", **static)
        return run(*args)

    return call


def host_ranged(
    fn: Callable[..., Any], bad_host: Callable[..., bool], **static: Any
) -> Callable[..., Any]:
    """``"error"`` by a range read on the host: the index of a CPU array read through a
    NumPy view (``np.asarray`` does not copy it), so the check compiles nothing; then the
    jitted ``"unchecked"`` pipeline (every value known valid)."""
    run = planned(fn, bad_indices="unchecked", **static)

    def call(*args: Any) -> Any:
        if bad_host(args[0], np.asarray(args[1])):
            return fn(*args, bad_indices="error", **static)
        return run(*args)

    return call


def checkified(fn: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    from jax.experimental import checkify

    jitted = _cached(fn, "checkify", static, lambda: checkify.checkify(
        functools.partial(fn, bad_indices="error", **static)))  # fmt: skip

    def call(*args: Any) -> Any:
        err, result = jitted(*args)
        err.throw()
        return result

    return call


PG, PROTO, NATIVE = "pg", "prototype", "native"

# ------------------------------------------------------------------------------ workloads


def _points(side: int, count: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {
        "p": rng.random((side, side), dtype=np.float32),
        "i": rng.integers(0, side, (count, 2)),
        "u": rng.random(count, dtype=np.float32),
    }


def _along(rows: int, k: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {
        "p": rng.random((rows, rows), dtype=np.float32),
        "i": rng.integers(0, rows, (rows, k)),
        "u": rng.random((rows, k), dtype=np.float32),
    }


def _vector_bad(p: Any, i: Any, *_: Any) -> Any:
    """Bad index vectors of gather_nd / scatter_nd: a component outside [0, n)."""
    import jax.numpy as jnp

    sizes = jnp.asarray(p.shape[: i.shape[-1]])
    return (i < 0) | (i >= sizes)


def _vector_bad_host(p: Any, i: Any) -> bool:
    """:func:`_vector_bad` on a NumPy view of the index: one min and one max per axis."""
    if not i.size:
        return False
    sizes = p.shape[: i.shape[-1]]
    low, high = i.min(), i.max()  # contiguous reductions; per axis only where they cannot tell
    if low >= 0 and high < min(sizes):
        return False
    return bool(low < 0 or (i.reshape(-1, i.shape[-1]).max(axis=0) >= np.asarray(sizes)).any())


def _along_bad_host(p: Any, i: Any) -> bool:
    n = p.shape[1]
    return bool(i.size and (i.min() < -n or i.max() >= n))


def _along_bad(p: Any, i: Any, *_: Any) -> Any:
    """Bad values along axis 1 (take_along_axis, put_along_axis): outside [-n, n)."""
    n = p.shape[1]
    return (i < -n) | (i >= n)


class Work:
    """One eager workload: portagather's function with its static arguments, the arrays it
    takes, the native idioms, and what makes an index bad."""

    def __init__(
        self, key: str, title: str, fn: Callable[..., Any], static: dict[str, Any],
        make: Callable[[int], dict[str, Any]], names: tuple[str, ...],
        natives: dict[str, Callable[..., Any]], bad: Callable[..., Any],
        sizes: Callable[[int], int],
    ) -> None:  # fmt: skip
        self.key, self.title, self.fn, self.static = key, title, fn, static
        self.make, self.names, self.natives, self.bad, self.sizes = make, names, natives, bad, sizes
        self.bad_host = _vector_bad_host if bad is _vector_bad else _along_bad_host

    def arrays(self, count: int | None = None) -> tuple[Any, ...]:
        import jax.numpy as jnp

        data = self.make(self.sizes(0) if count is None else count)
        return tuple(jnp.asarray(data[n]) for n in self.names)


def works(quick: bool) -> list[Work]:
    import jax.numpy as jnp

    side = 200 if quick else 2000
    rows = 100 if quick else 1000

    def clip_pairs(p: Any, i: Any) -> Any:
        return p.at[i[:, 0], i[:, 1]].get(mode="clip")

    def index_pairs(p: Any, i: Any) -> Any:
        return p[i[:, 0], i[:, 1]]

    def take_along(p: Any, i: Any) -> Any:
        return jnp.take_along_axis(p, i, axis=1, mode="clip")

    def add_along(p: Any, i: Any, u: Any) -> Any:
        return p.at[jnp.arange(p.shape[0])[:, None], i].add(u, mode="clip")

    def compat_scatter_add(p: Any, i: Any, u: Any, bad_indices: str = "error") -> Any:
        """compat.torch.scatter_add, which raises on a bad index as torch does; under the
        other policies (the prototypes' jitted work) the scatter_d it calls."""
        if bad_indices == "error":
            return pgt.scatter_add(p, 1, i, u)
        return pg.scatter_d(p, 1, i, u, reduce="add", bad_indices=bad_indices)

    gathers = {'p.at[i0, i1].get(mode="clip")': clip_pairs, "p[i0, i1]": index_pairs}
    small, large = (100, 2000) if quick else (1000, 100_000)
    points = 2000 if quick else 200_000
    return [
        Work("G1k", f"gather_nd, {small} points from {side} x {side}", pg.gather_nd, {},
             lambda n: _points(side, n, 1), ("p", "i"), gathers, _vector_bad, lambda k: small - k),
        Work("G100k", f"gather_nd, {large} points from {side} x {side}", pg.gather_nd, {},
             lambda n: _points(side, n, 2), ("p", "i"), gathers, _vector_bad, lambda k: large - k),
        Work("T", f"take_along_axis, {rows} x {rows // 5} along axis 1 of {rows} x {rows}",
             pg.take_along_axis, {"axis": 1}, lambda n: _along(rows, n, 3), ("p", "i"),
             {'jnp.take_along_axis(mode="clip")': take_along}, _along_bad,
             lambda k: rows // 5 - k),
        Work("S1add", f'scatter_nd "add", {points} points into {side} x {side}', pg.scatter_nd,
             {"reduce": "add"}, lambda n: _points(side, n, 4), ("p", "i", "u"),
             {'p.at[i0, i1].add(mode="clip")': jax_at("add", mode="clip")}, _vector_bad,
             lambda k: points - k),
        Work("S1update", f'scatter_nd "update", {points} points into {side} x {side}',
             pg.scatter_nd, {"reduce": "update"}, lambda n: _points(side, n, 5), ("p", "i", "u"),
             {'p.at[i0, i1].set(mode="clip")': jax_at("update", mode="clip")}, _vector_bad,
             lambda k: points - 1000 - k),
        Work("compat", f"compat.torch.scatter_add, {rows} x {rows // 5} into {rows} x {rows}",
             compat_scatter_add, {}, lambda n: _along(rows, n, 6), ("p", "i", "u"),
             {'p.at[rows, i].add(mode="clip")': add_along}, _along_bad,
             lambda k: rows // 5 - 100 - k if not quick else rows // 5 - k),
    ]  # fmt: skip


def candidates(w: Work, args: tuple[Any, ...]) -> list[Candidate]:
    """Zero-argument callables, each blocking on its result."""
    fn, static = w.fn, w.static
    if fn is pg.gather_nd or fn is pg.take_along_axis or fn is pg.scatter_nd:
        policies: tuple[str, ...] = ("error", "clip")
    else:
        policies = ("error",)
    calls: list[tuple[str, str, Callable[..., Any]]] = []
    for policy in policies:
        today = functools.partial(fn, bad_indices=policy, **static)
        calls.append((f"pg {policy}", PG, today))
    if "clip" in policies:
        calls.append(
            ("prototype clip: jit per plan", PROTO, planned(fn, bad_indices="clip", **static))
        )
    calls += [
        ("prototype error: flag", PROTO, flagged(fn, w.bad, **static)),
        ("prototype error: range, then jit", PROTO, ranged(fn, w.bad, **static)),
        ("prototype error: host range (NumPy view), then jit", PROTO,
         host_ranged(fn, w.bad_host, **static)),
        ("prototype error: checkify", PROTO, checkified(fn, **static)),
    ]  # fmt: skip
    for name, native in w.natives.items():
        calls.append((f"{name} (eager)", NATIVE, native))
        calls.append((f"jit({name}) (floor)", "floor", jax_jit(native)))
    return [
        Candidate(name, kind, lambda f=f: f(*args).block_until_ready()) for name, kind, f in calls
    ]


def check(w: Work, cands: list[Candidate], args: tuple[Any, ...]) -> None:
    """Every candidate gives the native's answer (indices all valid here); and the
    prototypes of ``"error"`` raise portagather's IndexError on a bad index."""
    import jax.numpy as jnp

    if "update" in w.key:  # the natives resolve nothing: a loop, the last update winning
        p, i, u = (np.asarray(a) for a in args)
        want = p.copy()
        for (i0, i1), value in zip(i.tolist(), u.tolist(), strict=True):
            want[i0, i1] = value
    else:
        want = np.asarray(next(c for c in cands if c.kind == NATIVE).fn())
    for c in cands:
        got = np.asarray(c.fn())
        if "update" in w.key and c.kind in (NATIVE, "floor"):
            continue
        if not np.allclose(got, want, rtol=1e-5):
            msg = f"{w.key}: {c.name} differs from the native"
            raise AssertionError(msg)
    bad_index = args[1].at[0, 0].set(jnp.asarray(10**6, dtype=args[1].dtype))
    bad_args = (args[0], bad_index, *args[2:])
    for maker, bad in ((flagged, w.bad), (ranged, w.bad), (host_ranged, w.bad_host)):
        try:
            maker(w.fn, bad, **w.static)(*bad_args)
        except IndexError as err:
            if "indices" not in str(err) and "index" not in str(err):
                raise
        else:
            msg = f"{w.key}: {maker.__name__} let a bad index through"
            raise AssertionError(msg)


def warm(w: Work, budget: float, repeat: int) -> dict[str, Any]:
    args = w.arrays()
    cands = candidates(w, args)
    check(w, cands, args)
    blk = repeated(cands, budget, repeat, lambda c: c.kind == NATIVE)
    fastest = blk["fastest"]
    rows = [
        {"name": c.name, "kind": c.kind, "seconds": blk["seconds"][c.name], **blk["ratios"][c.name]}
        for c in cands
    ]
    return {"workload": w.key, "title": w.title, "native": fastest, "rows": rows}


class Compiles:
    """Counts XLA compilations (``jax.monitoring``'s backend compile events)."""

    count = 0

    @classmethod
    def install(cls) -> None:
        import jax

        def listen(name: str, _seconds: float, **_: Any) -> None:
            if name.endswith("backend_compile_duration"):
                cls.count += 1

        jax.monitoring.register_event_duration_secs_listener(listen)


def first(w: Work, shapes: int) -> dict[str, Any]:
    """First calls on index shapes no candidate has seen; a first round is discarded."""
    names: list[str] = []
    times: dict[str, list[float]] = {}
    compiles: dict[str, list[int]] = {}
    serial = 0
    for s in range(-1, shapes):
        serial += 1
        args = w.arrays(w.sizes(serial))
        cands = candidates(w, args)
        if not names:
            names = [c.name for c in cands if c.kind != "floor"]
            times = {n: [] for n in names}
            compiles = {n: [] for n in names}
        for name in rotated(names, s):
            serial += 1
            args = w.arrays(w.sizes(serial))  # a shape of its own
            c = next(c for c in candidates(w, args) if c.name == name)
            before = Compiles.count
            t0 = time.perf_counter()
            c.fn()
            if s >= 0:
                times[name].append(time.perf_counter() - t0)
                compiles[name].append(Compiles.count - before)
    kinds = {c.name: c.kind for c in cands}
    natives = [n for n in names if kinds[n] == NATIVE]
    seconds = {n: statistics.median(ts) for n, ts in times.items()}
    base = min(seconds[n] for n in natives)
    return {
        "workload": w.key,
        "rows": [
            {"name": n, "kind": kinds[n], "seconds": seconds[n], "ratio": seconds[n] / base,
             "compiles": statistics.median(compiles[n])}
            for n in names
        ],
    }  # fmt: skip


def report(warm_rows: list[dict[str, Any]], first_rows: list[dict[str, Any]], repeat: int,
           shapes: int, threads: int) -> str:  # fmt: skip
    lines = [
        "<!-- jax-eager -->",
        "## JAX without `jit`: portagather, and the prototypes of one computation per plan",
        "",
        harness.header(f"cd benchmarks && python -m decisions.jax_eager --repeat {repeat}", threads)
        + " Eager calls on concrete JAX arrays. *pg*: portagather as it is (since issue 22 one "
        'compiled computation per plan; `"error"` on the CPU reads the index on the host). '
        "*prototype* (the decision record's): `jax.jit` of the same "
        "portagather function, cached per function and "
        'static arguments; `"error"` kept exact by a flag computed with the result, by a range '
        "read before the jitted `\"unchecked\"` call (jitted, or with NumPy on a view of the "
        "CPU array), or by `checkify`. *floor*: `jax.jit` of "
        "the native idiom. Ratio: time / the fastest native idiom called eagerly. Bounds of "
        "issue 22: warm at most 1.2x, first call at most 1.5x.",
    ]  # fmt: skip
    for blk in warm_rows:
        lines += ["", f"### {blk['workload']}: {blk['title']}", "",
                  "| candidate | warm | ratio | first call | ratio | compilations |",
                  "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        firsts = next((f for f in first_rows if f["workload"] == blk["workload"]), None)
        by_name = {r["name"]: r for r in firsts["rows"]} if firsts else {}
        for r in blk["rows"]:
            f = by_name.get(r["name"])
            cells = (
                [f"{f['seconds'] * 1e3:.0f} ms", f"{f['ratio']:.2f}", f"{f['compiles']:g}"]
                if f else ["-", "-", "-"]
            )  # fmt: skip
            ratio = harness.ratio_cell(r, None, repeat)
            lines.append(
                f"| {r['name']} | {r['seconds'] * 1e3:.3f} ms | {ratio} | "
                + " | ".join(cells)
                + " |"
            )
    lines.append(
        f"\nFirst call: the median over {shapes} index shapes per candidate, none seen before."
    )
    lines.append(
        '\nWhere T\'s warm `"error"` goes past 1.2x: the native gather is short, and the '
        "exact check reads the same int64 index values again (NumPy's minimum and maximum on "
        "the host, before the computation is dispatched, so nothing overlaps them), which "
        "costs a sizeable part of the gather itself. Every prototype of the check, inside the "
        'computation or before it, adds a pass over the index of the same order; `"clip"`, '
        "which reads the index once, is at par. At the larger sizes the pass disappears into "
        "the work."
    )
    lines.append("<!-- /jax-eager -->")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, repeat=True, threads=True)
    parser.add_argument("--shapes", type=int, default=None, help="new shapes per first call")
    parser.add_argument("--workloads", nargs="+", default=None)
    parser.add_argument("--print-only", action="store_true", help="write nothing")
    args = parser.parse_args(argv)
    setup(args.threads, ["jax"])  # int64 indices, as in the other benchmarks
    Compiles.install()
    shapes = args.shapes or (1 if args.quick else 3)
    budget = 0.3 if args.quick else 3.0
    warm_rows, first_rows = [], []
    for w in works(args.quick):
        if args.workloads and w.key not in args.workloads:
            continue
        blk = warm(w, budget, args.repeat)
        warm_rows.append(blk)
        print(f"\n{w.key}: {w.title} (fastest native: {blk['native']})", flush=True)
        for r in blk["rows"]:
            print(f"  warm  {r['name'][:52]:52s} {r['seconds'] * 1e3:9.3f} ms {r['ratio']:6.2f}")
        fst = first(w, shapes)
        first_rows.append(fst)
        for r in fst["rows"]:
            print(
                f"  first {r['name'][:52]:52s} {r['seconds'] * 1e3:9.1f} ms {r['ratio']:6.2f} "
                f"({r['compiles']:g} compilations)",
                flush=True,
            )
    if not (args.quick or args.print_only):
        write_section("jax-eager", report(warm_rows, first_rows, args.repeat, shapes, args.threads))


if __name__ == "__main__":
    main()
