"""Segment reductions against each backend's own idioms of the same semantics, side by side.

    python benchmarks/segments.py              # writes the segments section of RESULTS.md
    python benchmarks/segments.py --quick      # small data, writes nothing
    python benchmarks/segments.py --rounds 3   # fewer rounds (a busy machine)

Workloads (1M edges into 100k nodes, 32 float32 features; ``dst`` sorted or not):
    MP  message passing: ``segment_sum(gather(x, src, axis=0), dst, num_nodes)`` against
        ``np.add.at`` (and, sorted, ``np.add.reduceat``), ``index_add_``,
        ``jax.ops.segment_sum`` under ``jit`` (``indices_are_sorted`` when sorted), and
        TensorFlow's ``unsorted_segment_sum`` in one row
    SM  segment softmax of 4 attention heads per edge: ``segment_max``, ``exp``,
        ``segment_sum``, against the same steps composed with each backend's idioms

Every candidate is timed interleaved in one process (``harness.measure``: median over rounds,
after two warm-up calls); every result is checked against NumPy's. The ratio is portagather
over the fastest native candidate of the same workload and backend. Then, for MP, the two
halves (the gather along the edges, the reduction into the nodes) are timed apart, to say
where portagather's extra time goes.

JAX runs portagather with ``bad_indices="clip"`` for the gather (``x[src]`` clamps) and
``"ignore"`` for the reduction (``jax.ops`` drops ids out of range); NumPy and PyTorch with
the default ``"error"`` (their idioms check the ids too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from harness import Candidate, arguments, code_commit, header, machine, measure, write_section

import portagather as pg

HERE = Path(__file__).resolve().parent
START, END = "<!-- segments -->", "<!-- /segments -->"
HEADS = 4


def graph(quick: bool, sorted_dst: bool) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    nodes, edges, features = (2_000, 20_000, 32) if quick else (100_000, 1_000_000, 32)
    src = rng.integers(0, nodes, edges)
    dst = rng.integers(0, nodes, edges)
    if sorted_dst:
        order = np.argsort(dst, kind="stable")
        src, dst = src[order], dst[order]
    return {
        "x": rng.standard_normal((nodes, features), dtype=np.float32),
        "scores": rng.standard_normal((edges, HEADS), dtype=np.float32),
        "src": src,
        "dst": dst,
        "nodes": nodes,
        "sorted": sorted_dst,
    }


# The reference answers (NumPy, checked against every candidate).


def expected(work: str, g: dict[str, Any]) -> Any:
    if work == "MP":
        out = np.zeros((g["nodes"], g["x"].shape[1]), np.float32)
        np.add.at(out, g["dst"], g["x"][g["src"]])
        return out
    return _numpy_softmax(g, sorted_kernel=False)


def _starts(dst: Any, nodes: int) -> tuple[Any, Any]:
    """For sorted `dst`: the first edge of each node that has one, and those nodes."""
    starts = np.searchsorted(dst, np.arange(nodes))
    ends = np.searchsorted(dst, np.arange(nodes), side="right")
    filled = np.flatnonzero(ends > starts)
    return starts[filled], filled


def _numpy_softmax(g: dict[str, Any], sorted_kernel: bool) -> Any:
    s, dst, n = g["scores"], g["dst"], g["nodes"]
    peak = np.full((n, HEADS), -np.inf, np.float32)
    if sorted_kernel:
        starts, filled = _starts(dst, n)
        peak[filled] = np.maximum.reduceat(s, starts, axis=0)
    else:
        np.maximum.at(peak, dst, s)
    weights = np.exp(s - peak[dst])
    total = np.zeros((n, HEADS), np.float32)
    if sorted_kernel:
        total[filled] = np.add.reduceat(weights, starts, axis=0)
    else:
        np.add.at(total, dst, weights)
    return weights / total[dst]


def _pg_softmax(scores: Any, dst: Any, n: int, sorted_ids: bool, policy: str = "error") -> Any:
    peak = pg.segment_max(scores, dst, n, indices_are_sorted=sorted_ids, bad_indices=policy)
    gather_policy = "clip" if policy != "error" else "error"
    weights = _exp(scores - pg.gather(peak, dst, axis=0, bad_indices=gather_policy))
    total = pg.segment_sum(weights, dst, n, indices_are_sorted=sorted_ids, bad_indices=policy)
    return weights / pg.gather(total, dst, axis=0, bad_indices=gather_policy)


def _exp(x: Any) -> Any:
    from array_api_compat import array_namespace

    return array_namespace(x).exp(x)


# The candidates of each backend.


def _numpy(work: str, g: dict[str, Any]) -> list[Candidate]:
    x, src, dst, n, srt = g["x"], g["src"], g["dst"], g["nodes"], g["sorted"]
    if work == "MP":

        def add_at() -> Any:
            out = np.zeros((n, x.shape[1]), x.dtype)
            np.add.at(out, dst, x[src])
            return out

        def reduceat() -> Any:
            out = np.zeros((n, x.shape[1]), x.dtype)
            starts, filled = _starts(dst, n)
            out[filled] = np.add.reduceat(x[src], starts, axis=0)
            return out

        def flat_add_at() -> Any:  # by hand: the scalar add.at, faster than the row-wise one
            out = np.zeros(n * x.shape[1], x.dtype)
            flat = (dst[:, None] * x.shape[1] + np.arange(x.shape[1])).reshape(-1)
            np.add.at(out, flat, x.take(src, axis=0).reshape(-1))
            return out.reshape(n, x.shape[1])

        mine = Candidate("pg", "pg", lambda: pg.segment_sum(pg.gather(x, src, axis=0), dst, n,
                                                            indices_are_sorted=srt))  # fmt: skip
        natives = [
            Candidate("np.add.at(out, dst, x[src])", "native", add_at),
            Candidate("np.add.at on flat positions, x.take(src)", "native", flat_add_at),
        ]
        if srt:
            natives.append(Candidate("np.add.reduceat(x[src], starts)", "native", reduceat))
        return [mine, *natives]
    s = g["scores"]
    natives = [Candidate("maximum.at / add.at", "native", lambda: _numpy_softmax(g, False))]
    if srt:
        natives.append(
            Candidate("maximum / add.reduceat", "native", lambda: _numpy_softmax(g, True))
        )
    return [Candidate("pg", "pg", lambda: _pg_softmax(s, dst, n, srt)), *natives]


def _torch(work: str, g: dict[str, Any]) -> list[Candidate]:
    import torch

    x, s = torch.from_numpy(g["x"]), torch.from_numpy(g["scores"])
    src, dst = torch.from_numpy(g["src"]), torch.from_numpy(g["dst"])
    n, srt = g["nodes"], g["sorted"]
    if work == "MP":

        def index_add() -> Any:
            return x.new_zeros((n, x.shape[1])).index_add_(0, dst, x.index_select(0, src))

        def segment_reduce() -> Any:
            lengths = torch.bincount(dst, minlength=n)
            return torch.segment_reduce(x.index_select(0, src), "sum", lengths=lengths)

        mine = Candidate("pg", "pg", lambda: pg.segment_sum(pg.gather(x, src, axis=0), dst, n,
                                                            indices_are_sorted=srt))  # fmt: skip
        natives = [Candidate("index_add_(0, dst, x.index_select(0, src))", "native", index_add)]
        if srt:
            natives.append(Candidate("torch.segment_reduce(lengths)", "native", segment_reduce))
        return [mine, *natives]

    def composed() -> Any:
        index = dst[:, None].expand(-1, HEADS)
        peak = s.new_full((n, HEADS), -torch.inf).scatter_reduce_(0, index, s, "amax")
        weights = torch.exp(s - peak.index_select(0, dst))
        total = s.new_zeros((n, HEADS)).index_add_(0, dst, weights)
        return weights / total.index_select(0, dst)

    return [
        Candidate("pg", "pg", lambda: _pg_softmax(s, dst, n, srt)),
        Candidate("scatter_reduce_(amax) / index_add_", "native", composed),
    ]


def _jax(work: str, g: dict[str, Any]) -> list[Candidate]:
    import jax
    import jax.numpy as jnp

    x, s = jnp.asarray(g["x"]), jnp.asarray(g["scores"])
    src, dst = jnp.asarray(g["src"]), jnp.asarray(g["dst"])
    n, srt = g["nodes"], g["sorted"]
    if work == "MP":
        mine = jax.jit(lambda x, src, dst: pg.segment_sum(
            pg.gather(x, src, axis=0, bad_indices="clip"), dst, n, indices_are_sorted=srt,
            bad_indices="ignore"))  # fmt: skip
        native = jax.jit(
            lambda x, src, dst: jax.ops.segment_sum(x[src], dst, n, indices_are_sorted=srt)
        )
        name = f"jax.ops.segment_sum(x[src], indices_are_sorted={srt})"
        return [
            Candidate("pg (jit)", "pg", lambda: mine(x, src, dst).block_until_ready()),
            Candidate(name, "native", lambda: native(x, src, dst).block_until_ready()),
        ]

    def composed(s: Any, dst: Any) -> Any:
        peak = jax.ops.segment_max(s, dst, n, indices_are_sorted=srt)
        weights = jnp.exp(s - peak[dst])
        return weights / jax.ops.segment_sum(weights, dst, n, indices_are_sorted=srt)[dst]

    mine = jax.jit(lambda s, dst: _pg_softmax(s, dst, n, srt, policy="ignore"))
    native = jax.jit(composed)
    return [
        Candidate("pg (jit)", "pg", lambda: mine(s, dst).block_until_ready()),
        Candidate("jax.ops.segment_max / _sum (jit)", "native",
                  lambda: native(s, dst).block_until_ready()),
    ]  # fmt: skip


def _tensorflow(work: str, g: dict[str, Any]) -> list[Candidate]:
    import tensorflow as tf

    x, s = tf.constant(g["x"]), tf.constant(g["scores"])
    src, dst, n = tf.constant(g["src"]), tf.constant(g["dst"]), g["nodes"]
    mine_numpy = _numpy(work, g)[0]
    mine_numpy.name = "pg (NumPy)"
    if work == "MP":
        return [
            mine_numpy,
            Candidate("tf.math.unsorted_segment_sum(tf.gather(x, src))", "native",
                      lambda: tf.math.unsorted_segment_sum(tf.gather(x, src), dst, n)),
        ]  # fmt: skip

    def composed() -> Any:
        peak = tf.math.unsorted_segment_max(s, dst, n)
        weights = tf.exp(s - tf.gather(peak, dst))
        return weights / tf.gather(tf.math.unsorted_segment_sum(weights, dst, n), dst)

    return [mine_numpy, Candidate("tf.math.unsorted_segment_max / _sum", "native", composed)]


BACKENDS = {"numpy": _numpy, "torch": _torch, "jax": _jax, "tensorflow": _tensorflow}


# Where the time goes: the two halves of MP, portagather's and the native ones, apart.


def _halves(backend: str, g: dict[str, Any]) -> list[Candidate]:
    srt, n = g["sorted"], g["nodes"]
    if backend == "numpy":
        x, src, dst = g["x"], g["src"], g["dst"]
        messages = x[src]

        def native_reduce() -> Any:
            out = np.zeros((n, x.shape[1]), x.dtype)
            np.add.at(out, dst, messages)
            return out

        return [
            Candidate("gather: pg.gather", "pg", lambda: pg.gather(x, src, axis=0)),
            Candidate("gather: x[src]", "native", lambda: x[src]),
            Candidate("reduce: pg.segment_sum", "pg",
                      lambda: pg.segment_sum(messages, dst, n, indices_are_sorted=srt)),
            Candidate("reduce: np.add.at", "native", native_reduce),
        ]  # fmt: skip
    if backend == "torch":
        import torch

        x, src, dst = (torch.from_numpy(g[k]) for k in ("x", "src", "dst"))
        messages = x.index_select(0, src)
        return [
            Candidate("gather: pg.gather", "pg", lambda: pg.gather(x, src, axis=0)),
            Candidate("gather: index_select", "native", lambda: x.index_select(0, src)),
            Candidate("reduce: pg.segment_sum", "pg",
                      lambda: pg.segment_sum(messages, dst, n, indices_are_sorted=srt)),
            Candidate("reduce: index_add_", "native",
                      lambda: x.new_zeros((n, x.shape[1])).index_add_(0, dst, messages)),
        ]  # fmt: skip
    import jax
    import jax.numpy as jnp

    x, src, dst = (jnp.asarray(g[k]) for k in ("x", "src", "dst"))
    messages = x[src]
    pg_gather = jax.jit(lambda x, i: pg.gather(x, i, axis=0, bad_indices="clip"))
    pg_reduce = jax.jit(lambda m, d: pg.segment_sum(m, d, n, indices_are_sorted=srt,
                                                    bad_indices="ignore"))  # fmt: skip
    native_gather = jax.jit(lambda x, i: x[i])
    native_reduce = jax.jit(lambda m, d: jax.ops.segment_sum(m, d, n, indices_are_sorted=srt))
    return [
        Candidate("gather: pg.gather", "pg", lambda: pg_gather(x, src).block_until_ready()),
        Candidate("gather: x[src]", "native", lambda: native_gather(x, src).block_until_ready()),
        Candidate("reduce: pg.segment_sum", "pg",
                  lambda: pg_reduce(messages, dst).block_until_ready()),
        Candidate("reduce: jax.ops.segment_sum", "native",
                  lambda: native_reduce(messages, dst).block_until_ready()),
    ]  # fmt: skip


def run(quick: bool, backends: list[str], rounds: int) -> dict[str, Any]:
    rows, halves = [], []
    budget = 0.5 if quick else 1.0
    for sorted_dst in (False, True):
        g = graph(quick, sorted_dst)
        for work in ("MP", "SM"):
            want = expected(work, g)
            for backend in backends:
                cands = BACKENDS[backend](work, g)
                medians, done = measure(cands, budget, min_rounds=rounds, max_rounds=rounds)
                for c in cands:
                    got = np.asarray(c.fn())
                    assert np.allclose(got, want, rtol=1e-4, atol=1e-5), (work, backend, c.name)
                mine = min(medians[c.name] for c in cands if c.kind == "pg")
                fastest = min((c for c in cands if c.kind == "native"),
                              key=lambda c: medians[c.name])  # fmt: skip
                native = medians[fastest.name]
                rows.append({
                    "workload": work, "sorted": sorted_dst, "backend": backend,
                    "portagather_s": mine, "native_s": native, "native": fastest.name,
                    "ratio": mine / native, "rounds": done,
                    "all": {c.name: medians[c.name] for c in cands},
                })  # fmt: skip
                order = "sorted" if sorted_dst else "unsorted"
                print(f"{work} {order:8} {backend:10} {mine * 1e3:8.1f} ms / {native * 1e3:8.1f} "
                      f"ms ({fastest.name}) = {mine / native:.2f}", flush=True)  # fmt: skip
        for backend in (b for b in backends if b != "tensorflow"):
            cands = _halves(backend, g)
            medians, _ = measure(cands, budget, min_rounds=rounds, max_rounds=rounds)
            halves.append({"sorted": sorted_dst, "backend": backend, "times": medians})
            times = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in medians.items())
            print(f"halves {backend}: {times}", flush=True)
    return {"rows": rows, "halves": halves}


def report(result: dict[str, Any], rounds: int) -> str:
    # No thread setting: every backend keeps its default pools (and JAX its int32 indices).
    command = f"python benchmarks/segments.py --rounds {rounds}"
    lines = [
        START,
        "## Segment reductions",
        "",
        header(command, 0, result.get("commit", "unknown"), result.get("machine")),
        "",
        "MP: message passing, `segment_sum(gather(x, src, axis=0), dst, num_nodes)` of 1M "
        "edges into 100k nodes x 32 float32. SM: a segment softmax of 4 attention heads per "
        "edge (`segment_max`, `exp`, `segment_sum`, two gathers). Ratio: portagather / the "
        "fastest native idiom of the same workload and backend, medians of interleaved "
        f"rounds ({rounds} per candidate) in one process. TensorFlow's row runs portagather "
        "on NumPy.",
        "",
        "| workload | dst | backend | portagather | fastest native | native idiom | ratio |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['workload']} | {'sorted' if r['sorted'] else 'unsorted'} | {r['backend']} "
            f"| {r['portagather_s'] * 1e3:.1f} ms | {r['native_s'] * 1e3:.1f} ms "
            f"| {r['native']} | {r['ratio']:.2f} |"
        )
    lines += [
        "",
        "The two halves of MP timed apart (the gather along the edges, the reduction of the "
        "gathered messages into the nodes):",
        "",
        "| dst | backend | pg gather | native gather | pg segment_sum | native reduction |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for h in result["halves"]:
        t = list(h["times"].values())
        lines.append(
            f"| {'sorted' if h['sorted'] else 'unsorted'} | {h['backend']} | "
            + " | ".join(f"{v * 1e3:.1f} ms" for v in t)
            + " |"
        )
    lines += ["", *WHERE_THE_TIME_GOES, END]
    return "\n".join(lines)


#: What the halves above show: where portagather's reduction still differs from the
#: native kernels.
WHERE_THE_TIME_GOES = [
    "Where the time goes. The gather half is the gathers' own path, at par with the native "
    "one (NumPy's `take` beats `x[src]`). The reduction half is a scatter of whole rows, "
    "one position per row, as the native kernels take it: PyTorch's `index_add_` (or "
    "`scatter_reduce_` of the ids expanded, a view), JAX's `.at[ids]` with a row window (the "
    "promise of sorted ids passed on to XLA where its index vectors keep the order), NumPy's "
    "`add.at` on flat positions. What is left:",
    "",
    '- JAX, sorted: the portagather call uses `bad_indices="ignore"` (what '
    "`jax.ops.segment_sum` does with ids out of range). Its dropped rows stay where they "
    "are, for XLA's scatter to drop (JAX told not to count negative ids from the end), so "
    "XLA is told that the ids are sorted, as `jax.ops` tells it.",
    "- PyTorch: the result starts as a tensor of the identity (`full`), which `index_add_` "
    'into `zeros` also pays; under `"error"` the ids\' range is read once (`aminmax`).',
    "- The softmax adds portagather's gathers of the per-node peak and total on top of two "
    "reductions, at par with the native indexing.",
]


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, quick="small data; writes nothing", rounds=7, backends=BACKENDS)
    parser.add_argument(
        "--from-json", action="store_true", help="rewrite the section from segments.json"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        saved = json.loads((HERE / "segments.json").read_text())
        result, args.rounds = saved, saved["rounds"]
        result["commit"] = args.commit or result.get("commit", "unknown")
    else:
        result = run(args.quick, args.backends, args.rounds)
        if args.quick:
            return
        result |= {"machine": machine(), "commit": args.commit or code_commit()}
        saved = {"rounds": args.rounds, **result}
        (HERE / "segments.json").write_text(json.dumps(saved, indent=1))
    write_section("segments", report(result, args.rounds))


if __name__ == "__main__":
    main()
