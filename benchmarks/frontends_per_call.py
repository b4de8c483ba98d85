"""Each compat front end against the core call it makes, per small call (10 x 3 float32).

Standalone: it times, on NumPy and PyTorch (CPU, one intra-op thread unless ``--threads``
says more), each front end and the core call beside it, in interleaved rounds (each round
times a batch of calls of every pair, in turn, after a few untimed calls of the pair), and
prints the median time per call of each, the median of the rounds' ratios, and the ratio of
the two fastest rounds (the steadier one where other work shares the CPU). Run it against
two trees to compare them::

    PYTHONPATH=/path/to/old/src python benchmarks/frontends_per_call.py
    PYTHONPATH=src python benchmarks/frontends_per_call.py --rounds 31 --calls 300

"The core call it makes" is the call into ``portagather._api`` (or the public function) that
the front end hands its arguments to, with the same options: TensorFlow's and MindSpore's
unsorted segment reductions ``segment_reduce(..., bad_indices="", drop_negative=True)``
(``sqrt_n`` the core's private ``"sqrt_n"``, the sum divided by its count's root, and beside
it the sum with its count; the mean of floats the core's mean), TensorFlow's sorted ones
``segment_reduce(..., None, indices_are_sorted=True, sorted_vector=True)`` (the max and the
min with ``empty_value=0``, TensorFlow's value of an empty segment, and beside them the max
and the min with their count, the core call before the core took ``empty_value``),
``tensor_scatter_nd_sub`` the add of ``scatter_nd`` under TensorFlow's default policy,
PyTorch's ``segment_reduce`` ``segment_csr`` (``offsets=``; ``lengths=`` the core's checked
call of them, which makes their offsets, and beside it ``segment_csr`` of those offsets),
``index_put`` the core's checked call of its tuple (``_routes.parts_call``, which stacks it,
and the route's scatter), and beside it ``scatter_nd`` of the stacked index vectors,
``take_along_dim(dim=None)`` the core's gather from the flattened data at PyTorch's range,
``[0, n)`` (``_routes.flat_call`` of its operation, which flattens the arrays itself, and
the route's ``_api.gather_route``; in a tree without it, ``_api.run_gather`` of the
flattened arrays, the call its front end made then), and beside it ``_api.run_gather`` of
the flattened arrays and ``take_along_axis`` of them (whose range is ``[-n, n)``).
``pg.segment_sum`` is printed too, the public call the issue measured against. Every call is
checked to return the core call's value before it is timed."""

from __future__ import annotations

import argparse
import inspect
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _cases(lib: str) -> list[tuple[str, Callable[[], Any], Callable[[], Any], bool]]:
    """``(name, front end, core call, same value)`` of every pair, on `lib`'s arrays."""
    import portagather as pg
    from portagather import _api, _routes
    from portagather._api import segment_reduce
    from portagather._plan import SegmentsGiven
    from portagather._routes import parts_call
    from portagather._segment_csr import _csr
    from portagather.compat import mindspore as ms
    from portagather.compat import tensorflow as tf
    from portagather.compat import torch as pgt

    if lib == "torch":
        import torch

        def conv(a: Any) -> Any:
            return torch.asarray(a)
    else:

        def conv(a: Any) -> Any:
            return a

    rng = np.random.default_rng(0)
    data = conv(rng.standard_normal((10, 3)).astype(np.float32))
    ids = conv(np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 3]))
    sorted_ids = conv(np.array([0, 0, 0, 1, 1, 1, 2, 2, 3, 3]))
    offsets = conv(np.array([0, 3, 6, 8, 10]))
    lengths = conv(np.array([3, 3, 2, 2]))
    tensor = conv(np.arange(1.0, 9.0, dtype=np.float32))
    vectors = conv(np.array([[4], [3], [1], [7]]))
    updates = conv(np.array([9.0, 10.0, 11.0, 12.0], np.float32))
    rows, cols = conv(np.array([0, 2, 9, 4])), conv(np.array([1, 0, 2, 2]))
    stacked = conv(np.array([[0, 1], [2, 0], [9, 2], [4, 2]]))
    flat_index = conv(np.array([5, 0, 29, 7]))
    flat_data = data.reshape(-1)

    def unsorted(reduce: str, with_count: bool = False, floating: bool = False) -> Any:
        function = f"unsorted_segment_{reduce}"
        core = "sum" if with_count else reduce
        return lambda: segment_reduce(
            data, ids, 4, core, bad_indices="", drop_negative=True, with_count=with_count,
            function=function, floating=floating,
        )  # fmt: skip

    # (A tree before the core took empty_value: the max and the min with their count.)
    takes_empty = "empty_value" in inspect.signature(segment_reduce).parameters

    def sorted_core(reduce: str, with_count: bool, **empty: Any) -> Any:
        return lambda: segment_reduce(
            data, sorted_ids, None, reduce, indices_are_sorted=True, with_count=with_count,
            function=f"segment_{reduce}", sorted_vector=True, **empty,
        )  # fmt: skip

    cases: list[tuple[str, Callable[[], Any], Callable[[], Any], bool]] = [
        ("pg.segment_sum (the issue's core)", lambda: pg.segment_sum(data, ids, 4),
         lambda: pg.segment_sum(data, ids, 4), True),
    ]  # fmt: skip
    for reduce in ("sum", "max", "min", "prod"):
        front = getattr(tf.math, f"unsorted_segment_{reduce}")
        cases.append((f"tf.math.unsorted_segment_{reduce}",
                      lambda f=front: f(data, ids, 4), unsorted(reduce), True))  # fmt: skip
    cases.append(("tf.math.unsorted_segment_mean",
                  lambda: tf.math.unsorted_segment_mean(data, ids, 4), unsorted("mean"),
                  True))  # fmt: skip
    cases.append(("tf.math.unsorted_segment_sqrt_n",
                  lambda: tf.math.unsorted_segment_sqrt_n(data, ids, 4),
                  unsorted("sqrt_n", floating=True), True))  # fmt: skip
    cases.append(("  (sqrt_n vs the sum with its count)",
                  lambda: tf.math.unsorted_segment_sqrt_n(data, ids, 4),
                  unsorted("sqrt_n", with_count=True, floating=True), False))  # fmt: skip
    for reduce in ("sum", "max", "min", "prod"):
        front = getattr(ms, f"unsorted_segment_{reduce}")
        cases.append((f"mindspore.unsorted_segment_{reduce}",
                      lambda f=front: f(data, ids, 4), unsorted(reduce), True))  # fmt: skip
    for reduce in ("sum", "prod", "max", "min", "mean"):
        front = getattr(tf.math, f"segment_{reduce}")
        counted = reduce in ("max", "min")
        if counted and takes_empty:
            core, same = sorted_core(reduce, False, empty_value=0), True
        else:
            core, same = sorted_core(reduce, counted), not counted
        cases.append((f"tf.math.segment_{reduce}",
                      lambda f=front: f(data, sorted_ids), core, same))  # fmt: skip
        if counted:
            cases.append((f"  ({reduce} vs the {reduce} with its count)",
                          lambda f=front: f(data, sorted_ids), sorted_core(reduce, True),
                          False))  # fmt: skip
    cases.append(("tf.tensor_scatter_nd_sub",
                  lambda: tf.tensor_scatter_nd_sub(tensor, vectors, updates),
                  lambda: pg.scatter_nd(tensor, vectors, updates, reduce="add",
                                        bad_indices=""), False))  # fmt: skip
    cases.append(("pg.segment_csr (vs pg.segment_sum of its ids)",
                  lambda: pg.segment_csr(data, offsets),
                  lambda: pg.segment_sum(data, sorted_ids, 4), True))  # fmt: skip
    cases.append(("torch.segment_reduce(offsets=)",
                  lambda: pgt.segment_reduce(data, "sum", offsets=offsets),
                  lambda: pg.segment_csr(data, offsets), True))  # fmt: skip
    by_lengths = SegmentsGiven(True, 0, "sum")
    cases.append(("torch.segment_reduce(lengths=)",
                  lambda: pgt.segment_reduce(data, "sum", lengths=lengths),
                  lambda: _csr(data, lengths, "sum", "error", 0, None, False, by_lengths),
                  True))  # fmt: skip
    cases.append(("  (vs pg.segment_csr of their offsets)",
                  lambda: pgt.segment_reduce(data, "sum", lengths=lengths),
                  lambda: pg.segment_csr(data, offsets), True))  # fmt: skip
    put = pgt._INDEX_PUT

    def parts() -> Any:
        route, x, vectors, values = parts_call(put, data, (rows, cols), updates, "update", False)
        return _api.scatter_route(route, x, vectors, values)

    cases.append(("torch.index_put (2 index arrays)",
                  lambda: pgt.index_put(data, (rows, cols), updates), parts, True))  # fmt: skip
    cases.append(("  (vs pg.scatter_nd of the stacked vectors)",
                  lambda: pgt.index_put(data, (rows, cols), updates),
                  lambda: pg.scatter_nd(data, stacked, updates), True))  # fmt: skip
    flat = pgt._GATHER_FLAT

    def from_flattened() -> Any:
        route, x, index = _routes.flat_call(flat, data, flat_index, "error", 0)
        return _api.gather_route(route, x, index, flat, (0,))

    def of_flattened() -> Any:
        return _api.run_gather(flat, flat_data, flat_index, (0,), "error", 0)

    # (A tree without flat_call: the gather of the flattened arrays, the core call its front
    # end made.)
    flat_core = from_flattened if hasattr(_routes, "flat_call") else of_flattened
    cases.append(("torch.take_along_dim(dim=None)",
                  lambda: pgt.take_along_dim(data, flat_index), flat_core, True))  # fmt: skip
    cases.append(("  (take_along vs the gather of the flattened)",
                  lambda: pgt.take_along_dim(data, flat_index), of_flattened, True))  # fmt: skip
    cases.append(("  (vs pg.take_along_axis, range [-n, n))",
                  lambda: pgt.take_along_dim(data, flat_index),
                  lambda: pg.take_along_axis(flat_data, flat_index, axis=0), True))  # fmt: skip
    return cases


def _check(name: str, front: Any, core: Any, same: bool) -> None:
    """The front end's value is the core call's (where the front end returns it as it is)."""
    if not same:
        return
    a = front() if not isinstance(front(), tuple) else front()[0]
    b = core() if not isinstance(core(), tuple) else core()[0]
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
        msg = f"{name}: the front end's value is not the core call's"
        raise AssertionError(msg)


def _batch(f: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    libs = ["numpy", "torch"]
    parser.add_argument("--libs", nargs="+", default=libs, choices=libs, help="default: both")
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds (median)")
    parser.add_argument("--calls", type=int, default=200, help="calls per function per round")
    parser.add_argument("-k", default="", help="only the front ends whose name holds this")
    parser.add_argument("--threads", type=int, default=1,
                        help="PyTorch's threads (harness.set_threads); default 1, as the "
                        "harness's scripts")  # fmt: skip
    args = parser.parse_args()
    from harness import set_threads

    set_threads(args.threads, args.libs)
    import portagather

    print(f"portagather from {portagather.__file__}")
    if "torch" in args.libs:
        import torch

        print(f"PyTorch threads: {torch.get_num_threads()}")
    print(f"median of {args.rounds} interleaved rounds of {args.calls} calls; us per call")
    for lib in args.libs:
        cases = [c for c in _cases(lib) if args.k in c[0]]
        for name, front, core, same in cases:
            _check(name, front, core, same)
            for _ in range(20):  # warm: the routes are kept, the first calls made
                front()
                core()
        times: dict[str, tuple[list[float], list[float]]] = {c[0]: ([], []) for c in cases}
        warm = max(args.calls // 10, 5)
        for _ in range(args.rounds):
            for name, front, core, _same in cases:
                # (Untimed calls of the pair first: the batch timed first would otherwise pay
                # for following the previous pair's calls, in every round.)
                _batch(front, warm)
                _batch(core, warm)
                times[name][0].append(_batch(front, args.calls))
                times[name][1].append(_batch(core, args.calls))
        print(f"\n{lib}:")
        print(f"| {'front end':48} | front (us) | core (us) | ratio | of minima |")
        print(f"| {'-' * 48} | ---------- | --------- | ----- | --------- |")
        for name, (fronts, cores) in times.items():
            f, c = statistics.median(fronts) * 1e6, statistics.median(cores) * 1e6
            ratios = [a / b for a, b in zip(fronts, cores, strict=True)]
            fastest = min(fronts) / min(cores)  # (steadier where other work shares the CPU)
            print(
                f"| {name:48} | {f:10.1f} | {c:9.1f} | {statistics.median(ratios):5.2f} | "
                f"{fastest:9.2f} |"
            )


if __name__ == "__main__":
    main()
