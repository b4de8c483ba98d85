"""Where the time of a large scatter goes (S1/S2 of ``scatter.py``): portagather's steps beside
the fastest native of the same block, for the rows that miss issue 29's 1.05x bound.

    python benchmarks/profile_scatter.py                 # S2 NumPy and PyTorch, add and max
    python benchmarks/profile_scatter.py --workloads S2 S2u --reduces add multiply --quick

The candidates are ``scatter.py``'s own (its data, natives and portagather calls), each
result first compared with the reference. Times: ``harness.interleaved`` medians; then
``cProfile`` over ``--calls`` calls of portagather under each policy: the functions of most
own time, in microseconds per call. The C calls (``ufunc.at``, ``scatter_add_``, the copy of
the data) are the work a native does too; what else is listed is portagather's own. Writes
the section ``scatter-profile`` of RESULTS.md (not with ``--quick``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scatter  # noqa: E402
from harness import (  # noqa: E402
    arguments,
    interleaved,
    machine,
    setup,
    table,
    top_steps,
    versions_text,
    write_section,
)

BACKENDS = ("numpy", "torch")


def steps(fn: Any, calls: int, top: int) -> str:
    """The `top` functions of most own time in `calls` calls of `fn`, µs per call."""
    _total, *rows = top_steps(fn, calls, top)
    return ", ".join(f"`{r['step']}` {r['us']:.0f}" for r in rows)


def block(key: str, backend: str, reduce: str, quick: bool, rounds: int, calls: int,
          top: int) -> list[list[Any]]:  # fmt: skip
    """One row per portagather policy: its time, the fastest native's, the ratio, the steps."""
    data = scatter.make_workload(key, quick)
    cands = scatter.BACKEND_CANDIDATES[backend](key, data, reduce)
    scatter.check(cands, scatter.expected(key, data, reduce), key, reduce, backend)
    seconds = interleaved({c.name: c.fn for c in cands}, rounds)
    natives = [c.name for c in cands if c.kind == scatter.NATIVE]
    fastest = min(natives, key=seconds.__getitem__)
    rows = []
    for c in cands:
        if c.kind != scatter.PG:
            continue
        profile = steps(c.fn, calls, top)
        ratio = seconds[c.name] / seconds[fastest]
        native = f"{seconds[fastest] * 1e6:.0f} (`{fastest}`)"
        rows.append([key, backend, reduce, c.name, f"{seconds[c.name] * 1e6:.0f}", native,
                     f"{ratio:.2f}", profile])  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__, quick="small data; writes nothing", repeat=False, rounds=15,
                       threads=True, backends=BACKENDS)  # fmt: skip
    parser.add_argument("--workloads", nargs="+", default=["S2"], choices=scatter.WORKLOADS)
    parser.add_argument("--reduces", nargs="+", default=["add", "max"], choices=scatter.REDUCES)
    parser.add_argument("--calls", type=int, default=100, help="profiled calls of each")
    parser.add_argument("--top", type=int, default=6, help="steps shown per row")
    args = parser.parse_args(argv)
    setup(args.threads, args.backends)
    rows = [
        row
        for key in args.workloads
        for backend in args.backends
        for reduce in args.reduces
        for row in block(key, backend, reduce, args.quick, args.rounds, args.calls, args.top)
    ]
    info = machine()
    header = ["workload", "backend", "reduce", "portagather", "µs", "native µs", "ratio",
              "top steps: own µs per call"]  # fmt: skip
    text = "\n".join(
        [
            "<!-- scatter-profile -->",
            "## Scatters: where the time of a large call goes",
            "",
            f"`python benchmarks/profile_scatter.py` on {info['cpu']} ({info['cores']} cores), one "
            f"intra-op thread; {versions_text(info)}. Medians of "
            f"{args.rounds} interleaved rounds; steps: `cProfile` own time over {args.calls} "
            "calls, µs per call (the profiler adds about a microsecond per Python call). The "
            "copy of the data and the backend's scatter (`ufunc.at`, `scatter_add_`, "
            "`scatter_reduce_`) are what the native runs too.",
            "",
            table(header, rows),
            "<!-- /scatter-profile -->",
        ]
    )
    print(text)
    if not args.quick:
        write_section("scatter-profile", text, after="scatter")


if __name__ == "__main__":
    main()
