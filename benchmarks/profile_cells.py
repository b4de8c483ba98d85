"""Where the time of a W1-W5 cell goes: portagather against the fastest native of the same
safety (the one ``RESULTS.json`` divided by).

NumPy and PyTorch: each call profiled (cProfile) and split into the backend's gather kernel
(``take``, ``index_select``, ``gather``, ...: the C call that reads the data) and everything
else (Python, index arithmetic, range reads). JAX: the instructions of each compiled
program, by opcode (one jitted program runs per call, so there is no Python to split off).

    python benchmarks/profile_cells.py                      # every cell above 1.00
    python benchmarks/profile_cells.py numpy:W2:error jax:W5:unchecked

Prints one markdown table per backend. Profiled times carry cProfile's own cost per Python
call; the unprofiled medians are interleaved rounds (``harness.interleaved``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import workloads
from harness import arguments, interleaved, profiled, set_threads, table

HERE = Path(__file__).resolve().parent

#: The C functions that read the data, as cProfile names them.
KERNELS = re.compile(
    r"method '(take|index_select|gather|take_along_dim)' of|"
    r"built-in method torch\.(take|index_select|gather|take_along_dim)\b"
)
#: HLO instructions that cost nothing or only name things.
FREE_OPS = {"parameter", "constant", "bitcast", "tuple", "get-tuple-element", "fusion"}


def cells_above_one(results):
    for backend in ("numpy", "torch", "jax"):
        for key, block in results["blocks"].get(backend, {}).items():
            if key == "W6":
                continue
            for policy, (ratio, _, _) in block["ratios"].items():
                if ratio > 1.0:
                    yield backend, key, policy


def parse_cell(text, results, parser):
    """``backend:workload:policy`` as a tuple, or a usage error naming what exists."""
    parts = tuple(text.split(":"))
    blocks = {b: v for b, v in results["blocks"].items() if b in ("numpy", "torch", "jax")}
    if len(parts) == 3 and parts[1] != "W6" and parts[1] in blocks.get(parts[0], {}):
        if parts[2] in blocks[parts[0]][parts[1]]["ratios"]:
            return parts
    backends = ", ".join(blocks)
    parser.error(
        f"cell {text!r}: expected backend:workload:policy with backend one of {backends}, "
        "workload W1-W5 and policy error or unchecked (e.g. numpy:W2:error)"
    )


def candidate_pair(backend, key, policy, results):
    """portagather's candidate and the native it was divided by."""
    w = getattr(workloads, key.lower())()
    native_name = results["blocks"][backend][key]["ratios"][policy][1]
    cands = {c.name: c for c in workloads.candidates(backend, w)}
    pg_name = f"portagather[{policy}]"
    if backend == "jax" and policy == "error":
        pg_name += " (checkify)"
    return w, cands[pg_name], cands[native_name]


def kernel_split(f, calls):
    """(seconds per call in the kernel, seconds per call in all, kernel names) under cProfile."""
    stats = profiled(f, calls)
    kernel, names = 0.0, Counter()
    for (_, _, name), (_, ncalls, tottime, _, _) in stats.items():
        found = KERNELS.search(name)
        if found:
            kernel += tottime
            names[found.group(1) or found.group(2)] += ncalls
    total = sum(row[2] for row in stats.values())
    return kernel / calls, total / calls, {k: v // calls for k, v in names.items()}


def hlo_ops(compiled_text):
    """Instructions of a compiled HLO module by opcode, the free ones left out."""
    ops = Counter(re.findall(r"= \S+ ([a-z][\w-]*)\(", compiled_text))
    return {op: n for op, n in sorted(ops.items()) if op not in FREE_OPS}


def fmt_ms(seconds):
    return f"{seconds * 1e3:.2f}"


def host_rows(cells, results, rounds, calls):
    rows = []
    for backend, key, policy in cells:
        _, pg, native = candidate_pair(backend, key, policy, results)
        med = interleaved({"pg": pg.fn, "native": native.fn}, rounds)
        pg_kernel, pg_all, pg_names = kernel_split(pg.fn, calls)
        nat_kernel, nat_all, nat_names = kernel_split(native.fn, calls)
        rows.append(
            [
                f"{backend} {key} {policy}",
                f"`{native.name}`",
                f"{med['pg'] / med['native']:.3f}",
                f"{fmt_ms(pg_kernel)} / {fmt_ms(nat_kernel)}",
                f"{fmt_ms(pg_all - pg_kernel)} / {fmt_ms(nat_all - nat_kernel)}",
                f"{dict(pg_names)} / {dict(nat_names)}",
            ]
        )
    header = [
        "cell",
        "native",
        "time ratio (unprofiled)",
        "kernel ms: pg / native",
        "rest ms: pg / native",
        "kernel calls per call: pg / native",
    ]
    return header, rows


def jax_programs(w, policy, native_name):
    """The functions that portagather's candidate and the native jit (checkify included)."""
    from jax.experimental import checkify

    def portagather(p, i):
        return workloads.pg_call(None, w, policy, p, i)

    native = dict((f"jit {n}", f) for n, _, f in workloads._natives_jax(w))
    native.update(
        (f"jit checkify {n}", checkify.checkify(f, errors=checkify.index_checks))
        for n, _, f in workloads._natives_jax(w)
    )
    if policy == "error":
        portagather = checkify.checkify(portagather)
    return portagather, native[native_name]


def jax_rows(cells, results, rounds):
    import jax

    rows = []
    for _, key, policy in cells:
        w, pg, native = candidate_pair("jax", key, policy, results)
        med = interleaved({"pg": pg.fn, "native": native.fn}, rounds)
        p, i = jax.device_put(w.params), jax.device_put(w.indices)
        texts = [
            jax.jit(f).lower(p, i).compile().as_text() for f in jax_programs(w, policy, native.name)
        ]
        pg_ops, nat_ops = (hlo_ops(t) for t in texts)
        rows.append(
            [
                f"jax {key} {policy}",
                f"`{native.name}`",
                f"{med['pg'] / med['native']:.3f}",
                ", ".join(f"{op} {n}" for op, n in pg_ops.items()),
                ", ".join(f"{op} {n}" for op, n in nat_ops.items()),
            ]
        )
    header = ["cell", "native", "time ratio", "compiled ops: portagather", "compiled ops: native"]
    return header, rows


def main():
    parser = arguments(__doc__, quick=None, rounds=30, commit=False)
    parser.add_argument("cells", nargs="*", help="backend:workload:policy (default: all > 1.00)")
    parser.add_argument("--results", default=str(HERE / "RESULTS.json"))
    parser.add_argument("--calls", type=int, default=10, help="profiled calls per candidate")
    args = parser.parse_args()
    results = json.loads(Path(args.results).read_text())
    cells = [parse_cell(c, results, parser) for c in args.cells] or list(cells_above_one(results))
    backends = {c[0] for c in cells}
    set_threads(1, backends)  # as the benchmark runs, before any backend starts
    if "jax" in backends:
        import jax

        jax.config.update("jax_enable_x64", True)
    host = [c for c in cells if c[0] != "jax"]
    if host:
        header, rows = host_rows(host, results, args.rounds, args.calls)
        print(table(header, rows))
        print()
    jax_cells = [c for c in cells if c[0] == "jax"]
    if jax_cells:
        header, rows = jax_rows(jax_cells, results, args.rounds)
        print(table(header, rows))


if __name__ == "__main__":
    main()
