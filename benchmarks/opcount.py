"""Count the NumPy array operations one portagather call performs, and the bytes they allocate.

A thin ``ndarray`` subclass records every ufunc, every ``__array_function__`` call (``take``,
``reshape``, ``min``, ``clip``, ...), indexing and ``astype``. An operation whose result does
not share memory with its inputs is a *pass* over data (it reads its inputs and writes a new
array); the others are views. Usage::

    python benchmarks/opcount.py          # every workload, both policies
"""

from __future__ import annotations

import numpy as np

_LOG: list[tuple[str, int]] = []


def _unwrap(x):
    if isinstance(x, Counted):
        return x.view(np.ndarray)
    if isinstance(x, tuple):
        return tuple(_unwrap(v) for v in x)
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _record(name, result, inputs):
    nbytes = 0
    if isinstance(result, np.ndarray) and result.ndim:
        bases = [a for a in _flat(inputs) if isinstance(a, np.ndarray)]
        if not any(np.may_share_memory(result, b) for b in bases):
            nbytes = result.nbytes
        else:
            name += " (view)"
    _LOG.append((name, nbytes))


def _flat(x):
    if isinstance(x, tuple | list):
        for v in x:
            yield from _flat(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _flat(v)
    else:
        yield x


def _wrap(x):
    if isinstance(x, np.ndarray) and not isinstance(x, Counted) and x.ndim:
        return x.view(Counted)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


class Counted(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args, kwargs = _unwrap(inputs), _unwrap(kwargs)
        result = getattr(ufunc, method)(*args, **kwargs)
        label = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        _record(label, result, (args, kwargs))
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        args, kwargs = _unwrap(args), _unwrap(kwargs)
        result = func(*args, **kwargs)
        _record(func.__name__, result, (args, kwargs))
        return _wrap(result)

    def __getitem__(self, key):
        base = self.view(np.ndarray)
        result = base[_unwrap(key)]
        _record("getitem", result, (base, _unwrap(key)))
        return _wrap(result)

    def astype(self, dtype, *args, **kwargs):
        base = self.view(np.ndarray)
        result = base.astype(dtype, *args, **kwargs)
        _record(f"astype({np.dtype(dtype)})", result, (base,))
        return _wrap(result)

    def reshape(self, *shape, **kwargs):
        base = self.view(np.ndarray)
        result = base.reshape(*shape, **kwargs)
        _record("reshape", result, (base,))
        return _wrap(result)


def count(fn, params, indices):
    """Run ``fn(params, indices)`` on counting arrays; return ``[(op, bytes allocated)]``."""
    _LOG.clear()
    fn(params.view(Counted), indices.view(Counted))
    return list(_LOG)


def summary(log):
    passes = [(n, b) for n, b in log if not n.endswith("(view)")]
    return {
        "ops": len(log),
        "passes": len(passes),
        "bytes": sum(b for _, b in passes),
        "sequence": [n for n, _ in log],
    }


def per_policy(w, workloads):
    """Each policy's :func:`summary` of one portagather call on `w` (a ``workloads.Workload``)
    on NumPy, with its log and its new bytes as a multiple of output + indices bytes."""
    out = {}
    for pol in ("error", "unchecked"):
        log = count(lambda p, i, pol=pol: workloads.pg_call(np, w, pol, p, i), w.params, w.indices)
        s = summary(log)
        out[pol] = {**s, "ratio": s["bytes"] / w.bytes_out_plus_indices(), "log": log}
    return out


def main():
    import workloads
    from harness import arguments

    arguments(__doc__, quick=None, commit=False).parse_args()
    for make in (workloads.w1, workloads.w2, workloads.w3, workloads.w4, workloads.w5,
                 workloads.w6):  # fmt: skip
        w = make()
        for pol, s in per_policy(w, workloads).items():
            print(f"{w.key} {pol:9s} ops={s['ops']:2d} passes={s['passes']:2d} "
                  f"new bytes={s['ratio']:.2f}x(out+idx)")  # fmt: skip
            for name, nbytes in s["log"]:
                print(f"    {name:28s} {nbytes / 2**20:8.2f} MiB")


if __name__ == "__main__":
    main()
