"""What every benchmark script shares: timing, threads, arguments, natives, RESULTS.md, clusters.

The rules it keeps are ``benchmarks/README.md``'s "Rules": interleaved rounds and medians,
ratios within one run, one intra-op thread unless ``--threads`` says otherwise (the header
of a section, :func:`header`, names the count and the commit measured), one section of
``RESULTS.md`` per script. Every script in ``benchmarks/`` imports it as ``import harness``
(Python puts a script's own folder first on ``sys.path``); a decision record brought back
from its commit (``decisions/README.md``) runs as a module from ``benchmarks/``, which puts
that folder there too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# ------------------------------------------------------------------------------ timing


@dataclass
class Candidate:
    """One timed callable of a block: its name, its kind (``"pg"``, ``"native"``, or a
    safety class of ``workloads.py``), a zero-argument function returning a finished result,
    and the policy column a portagather candidate's ratio goes in."""

    name: str
    kind: str
    fn: Callable[[], Any]
    policy: str | None = None
    inner: int = 1


def to_numpy(x: Any) -> Any:
    """`x` as a NumPy array (PyTorch and TensorFlow tensors through ``.numpy()``)."""
    import numpy as np

    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        with contextlib.suppress(Exception):
            return x.numpy()
    return np.asarray(x)


def rotated(items: Sequence[Any], r: int) -> list[Any]:
    """`items` started at position ``r`` (modulo their number): the order of round `r`."""
    k = r % len(items) if items else 0
    return [*items[k:], *items[:k]]


def interleaved(
    calls: dict[str, Callable[[], Any]],
    rounds: int,
    *,
    warmup: int = 2,
    inner: int = 1,
    sync: Callable[[Any], Any] | None = None,
) -> dict[str, float]:
    """Median seconds per call of each of `calls`: `warmup` calls each, then `rounds` rounds
    of `inner` calls of each in a rotating order. `sync` (for instance a CUDA
    synchronisation) is applied to each result before the clock stops."""
    done = sync or (lambda _: None)
    for _ in range(warmup):
        for f in calls.values():
            done(f())
    names = list(calls)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in rotated(names, r):
            f = calls[name]
            if sync is None:  # nothing between the calls and the clock
                t0 = time.perf_counter()
                for _ in range(inner):
                    f()
            else:
                sync(None)
                t0 = time.perf_counter()
                for _ in range(inner):
                    out = f()
                sync(out)
            times[name].append((time.perf_counter() - t0) / inner)
    return {n: statistics.median(ts) for n, ts in times.items()}


def measure(
    cands: Sequence[Any],
    budget: float,
    min_rounds: int = 5,
    max_rounds: int = 41,
    expected: Any = None,
) -> tuple[dict[str, float], int]:
    """Median seconds per call of each candidate (``.name``, ``.fn``; ``.inner`` calls per
    sample, from the first), interleaved, as many rounds as fit `budget` seconds within
    [`min_rounds`, `max_rounds`]. With `expected`, each candidate's first result must equal it
    element for element. Returns the medians and the number of rounds."""
    import numpy as np

    for c in cands:
        for k in range(2):
            out = c.fn()
            if k == 0 and expected is not None:
                got = to_numpy(out)
                if got.shape != expected.shape or not np.array_equal(got, expected):
                    msg = f"{c.name} gives a different result"
                    raise AssertionError(msg)
            del out
    inner = getattr(cands[0], "inner", 1)
    one_round = 0.0
    for c in cands:  # one more round, timed to size the rounds
        t0 = time.perf_counter()
        for _ in range(inner):
            c.fn()
        one_round += time.perf_counter() - t0
    rounds = int(min(max_rounds, max(min_rounds, budget / max(one_round, 1e-9))))
    calls = {c.name: c.fn for c in cands}
    return interleaved(calls, rounds, warmup=0, inner=inner), rounds


def repeated(
    cands: Sequence[Any],
    budget: float,
    repeat: int,
    is_native: Callable[[Any], bool],
    remake: Callable[[], Sequence[Any]] | None = None,
    min_rounds: int = 5,
) -> dict[str, Any]:
    """:func:`measure` of `cands` `repeat` times; with `remake`, the repeats after the first
    measure candidates it makes afresh (new compilations, new buffers). Returns ``seconds``
    (median over the repeats per candidate), ``ratios`` (per candidate: its time / the
    fastest native of the same repeat, median ``ratio``, ``low``, ``high``), ``fastest`` (the
    native of the least median), ``rounds`` (in all) and ``runs`` (each repeat's medians)."""
    runs, rounds = [], 0
    for k in range(repeat):
        if k and remake is not None:
            cands = remake()
        medians, n = measure(cands, budget, min_rounds=min_rounds)
        runs.append(medians)
        rounds += n
    names = [c.name for c in cands]
    natives = [c.name for c in cands if is_native(c)]
    seconds = {n: statistics.median(m[n] for m in runs) for n in names}
    ratios = {}
    for n in names:
        per = [m[n] / min(m[x] for x in natives) for m in runs]
        ratios[n] = {"ratio": statistics.median(per), "low": min(per), "high": max(per)}
    fastest = min(natives, key=seconds.__getitem__)
    return {"seconds": seconds, "ratios": ratios, "fastest": fastest, "rounds": rounds,
            "runs": runs}  # fmt: skip


def in_a_row(fn: Callable[[], Any], budget: float, least: int = 5, most: int = 41) -> float:
    """Median seconds of `fn` called again and again, nothing in between (after one warm-up
    call): what a caller who calls it in a loop sees, the allocator's reuse included."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < least or (time.perf_counter() - start < budget and len(times) < most):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def profiled(fn: Callable[[], Any], calls: int) -> dict[tuple[str, int, str], tuple]:
    """``cProfile``'s statistics of `calls` calls of `fn` (after one warm-up call): for each
    function ``(file, line, name)``, ``(primitive calls, calls, own time, cumulative time,
    callers)``, times in seconds for all `calls` together."""
    import cProfile
    import pstats

    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    return pstats.Stats(prof).stats  # type: ignore[attr-defined]


def top_steps(fn: Callable[[], Any], calls: int, top: int) -> list[dict[str, Any]]:
    """The `top` functions of most own time in `calls` calls of `fn` (:func:`profiled`), in
    µs per call, after a ``total`` row (their sum over every function). The benchmarks' own
    lambdas, which only call what is timed, are left out."""
    rows = []
    here = str(Path(__file__).resolve().parent)
    for (file, line, func), (_cc, ncalls, tottime, cumtime, _callers) in profiled(
        fn, calls
    ).items():
        if func == "<lambda>" and file.startswith(here):
            continue
        rows.append({"step": step_label(file, line, func), "calls": ncalls / calls,
                     "us": tottime / calls * 1e6, "cum_us": cumtime / calls * 1e6})  # fmt: skip
    rows.sort(key=lambda r: -r["us"])
    total = {"step": "total", "calls": 1.0, "us": sum(r["us"] for r in rows), "cum_us": 0.0}
    return [total, *rows[:top]]


def steps_text(steps: Sequence[dict[str, Any]], scale: float = 1.0, digits: int = 1) -> str:
    """:func:`top_steps`'s rows as one cell: ```ufunc.at` 12.3, `_api.run` 4.5``, each own
    time in µs per call times `scale`."""
    return ", ".join(f"`{s['step']}` {s['us'] * scale:.{digits}f}" for s in steps)


def step_label(file: str, _line: int, func: str) -> str:
    """A profiled function's short name: ``TensorBase.reshape`` for a built-in method,
    ``_api.run_gather`` inside portagather, ``folder/module.function`` elsewhere."""
    if file == "~":  # a built-in: "<method 'reshape' of 'torch._C.TensorBase' objects>"
        method = re.fullmatch(r"<method '(\w+)' of '([\w.]+)' objects>", func)
        if method:
            return f"{method[2].split('.')[-1]}.{method[1]}"
        return func.strip("<>").replace("built-in method ", "")
    path = Path(file)
    parts = path.with_suffix("").parts
    if "portagather" in parts:
        mod = ".".join(parts[len(parts) - parts[::-1].index("portagather") :])
        return f"{mod}.{func}"
    return f"{path.parent.name}/{path.stem}.{func}"


@contextlib.contextmanager
def torch_deterministic() -> Iterator[None]:
    """``torch.use_deterministic_algorithms(True)`` inside (PyTorch's own last-wins path of
    ``index_put_``), the previous setting after."""
    import torch

    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was)


# ------------------------------------------------------------------------------ natives

#: The native reductions each backend spells for a scatter's `reduce` (NumPy's ufuncs are in
#: :func:`ufunc`): ``scatter_reduce_``'s names, JAX's ``.at[]`` methods.
TORCH_REDUCE = {"add": "sum", "max": "amax", "min": "amin", "multiply": "prod"}
JAX_METHOD = {"update": "set", "add": "add", "max": "max", "min": "min", "multiply": "multiply"}


def ufunc(reduce: str) -> Any:
    """NumPy's ufunc of a scatter's `reduce` (``np.add`` for ``"add"``), whose ``.at`` is the
    native unbuffered scatter."""
    import numpy as np

    return {"add": np.add, "max": np.maximum, "min": np.minimum, "multiply": np.multiply}[reduce]


def jax_at(reduce: str, rows: Any = None, **options: Any) -> Callable[..., Any]:
    """JAX's own scatter of `reduce` as ``f(p, i, u)``: ``p.at[i[:, 0], i[:, 1]]`` (pairs
    into a 2-d params) or, given `rows` (``arange(n)[:, None]``), ``p.at[rows, i]`` (along
    axis 1), then the method of `reduce` with `options` (``mode="clip"``,
    ``unique_indices=True``)."""
    method = JAX_METHOD[reduce]

    def at(p: Any, i: Any, u: Any) -> Any:
        where = (i[:, 0], i[:, 1]) if rows is None else (rows, i)
        return getattr(p.at[where], method)(u, **options)

    return at


# ------------------------------------------------------------------------------ threads


def set_threads(n: int, backends: Sequence[str]) -> None:
    """One thread count for every backend's intra-op pool (NumPy's gathers are serial).

    Called before any backend runs anything: XLA and TensorFlow read it at start-up.
    """
    if n <= 0:
        return
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen="
        f"{'true' if n > 1 else 'false'} intra_op_parallelism_threads={n}"
    )
    if "torch" in backends:
        import torch

        torch.set_num_threads(n)
        torch.set_num_interop_threads(n)
    if "tensorflow" in backends:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)
    if "dask" in backends:
        import dask

        dask.config.set(scheduler="threads", num_workers=n)


def setup(threads: int, backends: Sequence[str]) -> None:
    """:func:`set_threads`, then JAX with ``jax_enable_x64`` (int64 indices, as on the other
    backends) where JAX is among `backends`."""
    set_threads(threads, backends)
    if any(b.startswith("jax") for b in backends):
        import jax

        jax.config.update("jax_enable_x64", True)


# ------------------------------------------------------------------------------ arguments


def arguments(
    doc: str | None,
    *,
    quick: str | None = "small data; writes nothing",
    repeat: bool = False,
    rounds: int | None = None,
    threads: bool = False,
    backends: Sequence[str] | None = None,
    commit: bool = True,
) -> argparse.ArgumentParser:
    """A parser with the options the scripts share: ``--quick`` (with its help, unless
    None), ``--repeat`` (blocks measured this often), ``--rounds`` (its default),
    ``--threads`` (intra-op threads, default 1), ``--backends`` (these, all by default) and
    ``--commit`` (the commit a section names, for one rewritten from saved figures; not for a
    script that writes no section)."""
    parser = argparse.ArgumentParser(description=(doc or " ").strip().splitlines()[0])
    if commit:
        parser.add_argument("--commit", default=None, help="the commit measured, as the "
                            "section names it (default: the imported source's)")  # fmt: skip
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help=quick)
    if repeat:
        parser.add_argument("--repeat", type=int, default=1, help="measure each block this often")
    if rounds is not None:
        parser.add_argument("--rounds", type=int, default=rounds, help="interleaved rounds")
    if threads:
        parser.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    if backends is not None:
        parser.add_argument("--backends", nargs="+", default=list(backends), choices=backends)
    return parser


# ------------------------------------------------------------------------------ report


def machine() -> dict[str, Any]:
    """The CPU, its cores and memory, Python, the platform and the versions of the packages
    measured."""
    import importlib.metadata as md

    versions = {}
    for pkg in (
        "portagather",
        "numpy",
        "array-api-compat",
        "jax",
        "jaxlib",
        "torch",
        "dask",
        "tensorflow",
        "tensorflow-cpu",
    ):
        with contextlib.suppress(md.PackageNotFoundError):
            versions[pkg] = md.version(pkg)
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 2**20:.0f} GiB"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
        "env": {
            k: os.environ.get(k)
            for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")
            if k in os.environ
        },
    }


def versions_text(info: dict[str, Any]) -> str:
    """``"numpy 2.4.6, jax 0.10.2, ..."`` from :func:`machine`'s answer."""
    return ", ".join(f"{k} {v}" for k, v in info["versions"].items())


def code_commit() -> str:
    """The commit of the portagather source imported (``-dirty`` with uncommitted changes)."""
    import portagather

    src = Path(portagather.__file__).resolve().parent

    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True,
                             check=True)  # fmt: skip
        return out.stdout.strip()

    try:
        head, dirty = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--", ".")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def threads_text(threads: int) -> str:
    """The thread count a run used, as its header says it (``--threads``; 0: the defaults)."""
    if threads <= 0:
        return "every backend's default thread pools"
    return f"{threads} intra-op thread{'s' if threads > 1 else ''}"


def header(command: str, threads: int, commit: str | None = None, info: Any = None) -> str:
    """A section's first line: the command that wrote it, the machine, the thread count the
    run used, Python and the versions measured, and the commit of the source measured
    (:func:`code_commit` unless given)."""
    info = info or machine()
    return (
        f"`{command}` on {info['cpu']} ({info['cores']} cores), {threads_text(threads)}; "
        f"Python {info['python']}; {versions_text(info)}. Measured on "
        f"`{commit or code_commit()}`."
    )


def fmt_t(s: float) -> str:
    """Seconds in µs, ms or s."""
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def fmt_ratio(r: float, target: float = 1.0, digits: int = 2) -> str:
    """A ratio to `digits` decimals, or one more where fewer would round it onto the target
    from the other side (1.004 against 1.00 is shown as 1.004, not as a failing 1.00)."""
    text = f"{r:.{digits}f}"
    if (float(text) <= target) != (r <= target):
        text = f"{r:.{digits + 1}f}"
    return text


def marked(r: float, target: float, digits: int = 2) -> str:
    """`r` (see :func:`fmt_ratio`) with the mark of whether it meets ``r <= target``."""
    return f"{fmt_ratio(r, target, digits)} {mark(r <= target)}"


def ratio_cell(
    r: dict[str, float] | None, bound: float | None = None, repeat: int = 1, words: bool = False
) -> str:
    """A table's ratio cell from ``{"ratio", "low", "high"}`` (None: ``-``): the ratio with
    the mark of whether it meets `bound` (``met``/``missed`` with `words`), and over several
    repeats its range in brackets, to as many decimals as the ratio."""
    if r is None:
        return "-"
    text = marked(r["ratio"], bound) if bound is not None else f"{r['ratio']:.2f}"
    if words:
        text = text.replace("✅", "met").replace("❌", "missed")
    if repeat > 1:
        d = len(text.split()[0].split(".")[1])
        text += f" ({r['low']:.{d}f}-{r['high']:.{d}f})"
    return text


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def section_pattern(name: str) -> re.Pattern[str]:
    """The section `name` of the report: ``<!-- name`` ... ``<!-- /name -->``."""
    return re.compile(rf"<!-- {re.escape(name)}[ :].*?<!-- /{re.escape(name)} -->", re.S)


#: A section's reading of its figures, written by hand in ``RESULTS.md`` between these two
#: lines: a script puts the pair (:data:`NOTES`) where the reading goes, and
#: :func:`write_section` keeps what the old section held between them.
NOTES = "<!-- notes: written by hand, kept when a script rewrites the section -->\n<!-- /notes -->"


def write_section(name: str, block: str, path: Path = RESULTS, after: str | None = None) -> None:
    """`block` (which starts with ``<!-- name`` and ends with ``<!-- /name -->``) in place of
    the report's section `name`, its :data:`NOTES` holding what the old section's held;
    where there is no such section, after the section `after` if there is one, else at the end
    of the report."""
    text = path.read_text() if path.exists() else ""
    pattern = section_pattern(name)
    end = f"<!-- /{after} -->" if after else None
    found = pattern.search(text)
    if found:
        first, last = (re.escape(line) for line in NOTES.split("\n"))
        kept = re.search(f"{first}.*?{last}", found.group(0), re.S)
        if kept and NOTES in block:
            block = block.replace(NOTES, kept.group(0))
        text = text[: found.start()] + block + text[found.end() :]
    elif end and end in text:
        text = text.replace(end, end + "\n\n" + block, 1)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


# ------------------------------------------------------------------------------ Dask clusters

#: Memory limit of each worker of :func:`local_cluster`.
WORKER_LIMIT = 500_000_000


@contextlib.contextmanager
def local_cluster(workers: int = 3, memory_limit: int = WORKER_LIMIT) -> Iterator[Any]:
    """A ``distributed`` client of a ``LocalCluster`` of `workers` processes, one thread and
    `memory_limit` bytes each, no dashboard; closed on leaving."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, memory_limit=memory_limit,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        yield client


def cluster_data(rows: int, chunk: int, segments: int) -> tuple[Any, Any]:
    """Float32 rows and int64 ids below `segments`, made on the workers of the current
    client in chunks of `chunk` (the same on every call) and persisted there."""
    import dask.array as da
    import numpy as np
    from distributed import wait

    data = da.random.default_rng(2).random(rows, dtype=np.float32, chunks=chunk).persist()
    ids = da.random.default_rng(1).integers(0, segments, rows, chunks=chunk).persist()
    wait([data, ids])
    return data, ids


def flox_reduce(func: str, segments: int) -> Callable[[Any, Any], Any]:
    """flox's ``groupby_reduce(x, ids, func=func)`` into `segments` groups by its
    ``"map-reduce"`` method, as ``f(x, ids)`` (flox is no dependency: it must be importable)."""
    import flox
    import numpy as np

    groups = np.arange(segments)
    return lambda x, i: flox.groupby_reduce(
        x, i, func=func, expected_groups=groups, method="map-reduce"
    )[0]


def cluster_rounds(
    client: Any, makers: dict[str, Callable[[], Any]], rounds: int, budget: float | None = None
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Interleaved rounds on a cluster: each maker's lazy result built and computed, its
    seconds (construction and computation) per round, in an order that turns every round;
    one warm-up round first, whose results are returned. A candidate whose rounds passed
    `budget` seconds (with 3 rounds at least) sits the rest out."""
    import numpy as np
    from distributed import wait

    times: dict[str, list[float]] = {name: [] for name in makers}
    results = {}
    for r in range(rounds + 1):  # round 0 warms up and is not counted
        for name in rotated(list(makers), r):
            if budget is not None and len(times[name]) >= 3 and sum(times[name]) > budget:
                continue  # a slow candidate: its median of the rounds it ran
            start = time.perf_counter()
            future = client.compute(makers[name]())
            wait(future)
            if r:
                times[name].append(time.perf_counter() - start)
            else:
                results[name] = np.asarray(future.result())
            del future
    return times, results


class WorkerMemory:
    """Polls the scheduler's own report of each worker's process memory; keeps the peak."""

    def __init__(self, client: Any) -> None:
        self.client, self.peak, self._stop = client, {}, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            for address, worker in self.client.scheduler_info()["workers"].items():
                memory = worker["metrics"]["memory"]
                self.peak[address] = max(self.peak.get(address, 0), memory)
            time.sleep(0.2)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
