"""The workloads of the benchmark suite, and every way to run each one on each backend.

A workload is a portagather call on NumPy data (float32 data, int64 indices). For every
backend, ``candidates`` turns it into a list of :class:`Candidate`: portagather under its two
policies, the native idioms a user would write instead, and TensorFlow's own op as the
reference system. Every candidate is a zero-argument callable that returns a finished result
(JAX results are blocked on, Dask graphs computed).

Safety classes, so that like is compared with like:

``checked``
    Raises on a bad index, component by component: NumPy/PyTorch fancy indexing,
    ``take``/``index_select`` along one axis, ``take_along_axis``, ``torch.gather``,
    ``tf.gather_nd``, JAX idioms under ``checkify.index_checks``, Dask ``vindex``.
    portagather's default policy ``"error"`` is compared with these.
``unchecked``
    Everything else a user might write: ``take`` on hand-computed flat indices (a bad
    component can land on another valid element), clamping modes, JAX under ``jit`` (which
    clamps or fills). portagather's ``"unchecked"`` is compared with the fastest of *all*
    natives, checked ones included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from harness import Candidate

import portagather as pg

CHECKED, UNCHECKED, REFERENCE, PG = "checked", "unchecked", "reference", "portagather"


@dataclass
class Workload:
    key: str
    title: str
    op: str  # "gather_nd", "gather", "gather_d"
    params: np.ndarray
    indices: np.ndarray
    kwargs: dict = field(default_factory=dict)
    inner: int = 1  # calls per timed sample (for the tiny workload)

    @property
    def out_elements(self) -> int:
        return int(np.prod(self.expected_shape()))

    def expected_shape(self):
        return pg_call(np, self, "unchecked", self.params, self.indices).shape

    def bytes_out_plus_indices(self) -> int:
        return self.out_elements * self.params.itemsize + self.indices.nbytes


def pg_call(_xp, w: Workload, policy, p, i):
    if w.op == "gather_nd":
        return pg.gather_nd(p, i, bad_indices=policy, **w.kwargs)
    if w.op == "gather":
        return pg.gather(p, i, bad_indices=policy, **w.kwargs)
    if w.op == "gather_d":
        return pg.gather_d(p, w.kwargs["dim"], i, bad_indices=policy)
    raise ValueError(w.op)


# --------------------------------------------------------------------------- workloads


def _rng(seed):
    return np.random.default_rng(seed)


def w1(scale=1.0):
    side = round(2000 * math.sqrt(scale))
    n = round(1_000_000 * scale)
    r = _rng(1)
    p = r.standard_normal((side, side), dtype=np.float32)
    i = r.integers(0, side, (n, 2), dtype=np.int64)
    return Workload("W1", f"gather_nd points {p.shape} <- {i.shape}", "gather_nd", p, i)


def w2():
    r = _rng(2)
    p = r.standard_normal((200_000, 64), dtype=np.float32)
    i = r.integers(0, 200_000, (200_000, 1), dtype=np.int64)
    return Workload("W2", f"gather_nd rows {p.shape} <- {i.shape}", "gather_nd", p, i)


def w3():
    r = _rng(3)
    p = r.standard_normal((64, 4096, 64), dtype=np.float32)
    i = r.integers(0, 4096, (64, 1024, 1), dtype=np.int64)
    title = f"gather_nd batch_dims=1 {p.shape} <- {i.shape}"
    return Workload("W3", title, "gather_nd", p, i, {"batch_dims": 1})


def w4(scale=1.0):
    side = round(2000 * math.sqrt(scale))
    r = _rng(4)
    p = r.standard_normal((side, side), dtype=np.float32)
    i = r.integers(0, side, (side, side), dtype=np.int64)
    return Workload("W4", f"gather_d dim=1 {p.shape} <- {i.shape}", "gather_d", p, i, {"dim": 1})


def w5():
    r = _rng(5)
    p = r.standard_normal((256, 2048, 32), dtype=np.float32)
    i = r.integers(0, 2048, (256, 512), dtype=np.int64)
    title = f"gather axis=1 batch_dims=1 {p.shape} <- {i.shape}"
    return Workload("W5", title, "gather", p, i, {"axis": 1, "batch_dims": 1})


def w6():
    p = np.arange(16, dtype=np.float32).reshape(4, 4)
    i = np.array([[0, 1], [3, 2]], dtype=np.int64)
    return Workload("W6", "tiny gather_nd (4, 4) <- (2, 2)", "gather_nd", p, i, inner=200)


def quick(w: Workload) -> Workload:
    """A much smaller version of `w` for a smoke run."""
    shrink = {
        "W1": lambda: w1(1 / 64),
        "W4": lambda: w4(1 / 64),
    }
    if w.key in shrink:
        return shrink[w.key]()
    r = _rng(9)
    if w.key == "W2":
        p = r.standard_normal((5000, 64), dtype=np.float32)
        i = r.integers(0, 5000, (5000, 1))
    elif w.key == "W3":
        p = r.standard_normal((8, 512, 64), dtype=np.float32)
        i = r.integers(0, 512, (8, 128, 1))
    elif w.key == "W5":
        p = r.standard_normal((32, 256, 32), dtype=np.float32)
        i = r.integers(0, 256, (32, 64))
    else:
        return w
    title = w.title.split(" (")[0] + f" {p.shape} <- {i.shape}"
    return Workload(w.key, title, w.op, p, i, w.kwargs, w.inner)


# ---------------------------------------------------------------------- native idioms
#
# Each function returns ``[(name, kind, fn(p, i))]`` for `w` on its backend; the functions
# take the arrays as arguments so that JAX can jit them.


def _natives_numpy(w: Workload):
    p, i = w.params, w.indices
    if w.key in ("W1", "W6"):
        n1 = p.shape[1]
        return [
            ("p[i[:,0], i[:,1]]", CHECKED, lambda p, i: p[i[:, 0], i[:, 1]]),
            ("p[tuple(i.T)]", CHECKED, lambda p, i: p[tuple(i.T)]),
            ("take(p.ravel(), i0*n1+i1)", UNCHECKED,
             lambda p, i: np.take(p.reshape(-1), i[:, 0] * n1 + i[:, 1])),
            ("p.ravel()[i @ strides]", UNCHECKED,
             lambda p, i: p.reshape(-1)[i @ np.array([n1, 1])]),
        ]  # fmt: skip
    if w.key == "W2":
        return [
            ("p[i[:,0]]", CHECKED, lambda p, i: p[i[:, 0]]),
            ("take(p, i[:,0], axis=0)", CHECKED, lambda p, i: np.take(p, i[:, 0], axis=0)),
            ("take(..., mode='clip')", UNCHECKED,
             lambda p, i: np.take(p, i[:, 0], axis=0, mode="clip")),
        ]  # fmt: skip
    if w.key == "W3":
        b, n = p.shape[0], p.shape[1]
        rows = np.arange(b)[:, None]
        offs = rows * n
        return [
            ("p[arange[:,None], i[...,0]]", CHECKED, lambda p, i: p[rows, i[..., 0]]),
            ("take_along_axis(p, i, 1)", CHECKED, lambda p, i: np.take_along_axis(p, i, axis=1)),
            ("take(p2d, flat, axis=0)", UNCHECKED, lambda p, i: np.take(
                p.reshape(-1, p.shape[2]), (i[..., 0] + offs).reshape(-1), axis=0
            ).reshape(b, -1, p.shape[2])),
        ]  # fmt: skip
    if w.key == "W4":
        rows = np.arange(i.shape[0])[:, None]
        offs = rows * p.shape[1]
        return [
            ("take_along_axis(x, i, 1)", CHECKED, lambda p, i: np.take_along_axis(p, i, axis=1)),
            ("x[arange[:,None], i]", CHECKED, lambda p, i: p[rows, i]),
            ("take(x.ravel(), i+offs)", UNCHECKED, lambda p, i: np.take(p.reshape(-1), i + offs)),
        ]
    if w.key == "W5":
        b, n, c = p.shape
        rows = np.arange(b)[:, None]
        offs = rows * n
        return [
            ("p[arange[:,None], i]", CHECKED, lambda p, i: p[rows, i]),
            ("take_along_axis(p, i[..,None], 1)", CHECKED,
             lambda p, i: np.take_along_axis(p, i[:, :, None], axis=1)),
            ("take(p2d, flat, axis=0)", UNCHECKED,
             lambda p, i: np.take(p.reshape(-1, c), (i + offs).reshape(-1), axis=0)
             .reshape(b, -1, c)),
        ]  # fmt: skip
    raise KeyError(w.key)


def _natives_torch(w: Workload):
    import torch

    p, i = w.params, w.indices
    if w.key in ("W1", "W6"):
        n1 = p.shape[1]
        return [
            ("p[i[:,0], i[:,1]]", CHECKED, lambda p, i: p[i[:, 0], i[:, 1]]),
            ("take(p, i0*n1+i1)", UNCHECKED, lambda p, i: torch.take(p, i[:, 0] * n1 + i[:, 1])),
            ("p.view(-1).index_select(flat)", UNCHECKED,
             lambda p, i: p.view(-1).index_select(0, i[:, 0] * n1 + i[:, 1])),
        ]  # fmt: skip
    if w.key == "W2":
        return [
            ("p[i[:,0]]", CHECKED, lambda p, i: p[i[:, 0]]),
            ("index_select(p, 0, i[:,0])", CHECKED, lambda p, i: p.index_select(0, i[:, 0])),
            ("gather(p, 0, i.expand)", CHECKED,
             lambda p, i: torch.gather(p, 0, i.expand(-1, p.shape[1]))),
        ]  # fmt: skip
    if w.key == "W3":
        b, n, c = p.shape
        rows = torch.arange(b)[:, None]
        offs = rows * n
        return [
            ("p[arange[:,None], i[...,0]]", CHECKED, lambda p, i: p[rows, i[..., 0]]),
            ("gather(p, 1, i.expand)", CHECKED,
             lambda p, i: torch.gather(p, 1, i.expand(-1, -1, c))),
            ("take_along_dim(p, i, 1)", CHECKED, lambda p, i: torch.take_along_dim(p, i, dim=1)),
            ("index_select(p2d, flat)", UNCHECKED, lambda p, i: (
                p.view(-1, c).index_select(0, (i[..., 0] + offs).view(-1)).view(b, -1, c))),
        ]  # fmt: skip
    if w.key == "W4":
        rows = torch.arange(i.shape[0])[:, None]
        offs = rows * p.shape[1]
        return [
            ("gather(x, 1, i)", CHECKED, lambda p, i: torch.gather(p, 1, i)),
            ("take_along_dim(x, i, 1)", CHECKED, lambda p, i: torch.take_along_dim(p, i, dim=1)),
            ("x[arange[:,None], i]", CHECKED, lambda p, i: p[rows, i]),
            ("take(x, i+offs)", UNCHECKED, lambda p, i: torch.take(p, i + offs)),
        ]
    if w.key == "W5":
        b, n, c = p.shape
        rows = torch.arange(b)[:, None]
        offs = rows * n
        return [
            ("p[arange[:,None], i]", CHECKED, lambda p, i: p[rows, i]),
            ("gather(p, 1, i[..,None].expand)", CHECKED,
             lambda p, i: torch.gather(p, 1, i[:, :, None].expand(-1, -1, c))),
            ("take_along_dim(p, i[..,None], 1)", CHECKED,
             lambda p, i: torch.take_along_dim(p, i[:, :, None], dim=1)),
            ("index_select(p2d, flat)", UNCHECKED,
             lambda p, i: p.view(-1, c).index_select(0, (i + offs).view(-1)).view(b, -1, c)),
        ]  # fmt: skip
    raise KeyError(w.key)


def _natives_jax(w: Workload):
    """JAX idioms, to be jitted. Under plain ``jit`` none checks (they clamp or fill)."""
    import jax.numpy as jnp

    p, i = w.params, w.indices
    if w.key in ("W1", "W6"):
        n1 = p.shape[1]
        return [
            ("p[i[:,0], i[:,1]]", CHECKED, lambda p, i: p[i[:, 0], i[:, 1]]),
            ("take(p.ravel(), flat)", UNCHECKED,
             lambda p, i: jnp.take(p.reshape(-1), i[:, 0] * n1 + i[:, 1])),
            ("p.ravel().at[flat].get(promise)", UNCHECKED,
             lambda p, i: p.reshape(-1).at[i[:, 0] * n1 + i[:, 1]].get(mode="promise_in_bounds")),
        ]  # fmt: skip
    if w.key == "W2":
        return [
            ("p[i[:,0]]", CHECKED, lambda p, i: p[i[:, 0]]),
            ("take(p, i[:,0], axis=0)", CHECKED, lambda p, i: jnp.take(p, i[:, 0], axis=0)),
            ("p.at[i[:,0]].get(promise)", UNCHECKED,
             lambda p, i: p.at[i[:, 0]].get(mode="promise_in_bounds")),
        ]  # fmt: skip
    if w.key == "W3":
        b, n, c = p.shape
        rows = np.arange(b)[:, None]
        return [
            ("p[arange[:,None], i[...,0]]", CHECKED, lambda p, i: p[rows, i[..., 0]]),
            ("take_along_axis(p, i, 1)", CHECKED, lambda p, i: jnp.take_along_axis(p, i, axis=1)),
            ("take(p2d, flat, axis=0)", UNCHECKED, lambda p, i: jnp.take(
                p.reshape(-1, c), (i[..., 0] + rows * n).reshape(-1), axis=0).reshape(b, -1, c)),
        ]  # fmt: skip
    if w.key == "W4":
        rows = np.arange(i.shape[0])[:, None]
        return [
            ("take_along_axis(x, i, 1)", CHECKED, lambda p, i: jnp.take_along_axis(p, i, axis=1)),
            ("x[arange[:,None], i]", CHECKED, lambda p, i: p[rows, i]),
            ("take(x.ravel(), i+offs)", UNCHECKED,
             lambda p, i: jnp.take(p.reshape(-1), i + rows * p.shape[1])),
        ]  # fmt: skip
    if w.key == "W5":
        b, n, c = p.shape
        rows = np.arange(b)[:, None]
        return [
            ("p[arange[:,None], i]", CHECKED, lambda p, i: p[rows, i]),
            ("take_along_axis(p, i[..,None], 1)", CHECKED,
             lambda p, i: jnp.take_along_axis(p, i[:, :, None], axis=1)),
            ("take(p2d, flat, axis=0)", UNCHECKED, lambda p, i: jnp.take(
                p.reshape(-1, c), (i + rows * n).reshape(-1), axis=0).reshape(b, -1, c)),
        ]  # fmt: skip
    raise KeyError(w.key)


def _natives_tf(w: Workload):
    import tensorflow as tf

    if w.op == "gather_nd":
        bd = w.kwargs.get("batch_dims", 0)
        out = [("tf.gather_nd", REFERENCE, lambda p, i: tf.gather_nd(p, i, batch_dims=bd))]
        if w.key == "W2":
            out.append(("tf.gather(p, i[:,0])", REFERENCE, lambda p, i: tf.gather(p, i[:, 0])))
        if w.key == "W3":
            out.append(("tf.gather(p, i[...,0], batch_dims=1)", REFERENCE,
                        lambda p, i: tf.gather(p, i[..., 0], axis=1, batch_dims=1)))  # fmt: skip
        return out
    if w.op == "gather":
        return [("tf.gather", REFERENCE, lambda p, i: tf.gather(p, i, **w.kwargs))]
    if w.op == "gather_d":
        return [("tf.gather(x, i, axis=1, batch_dims=1)", REFERENCE,
                 lambda p, i: tf.gather(p, i, axis=1, batch_dims=1))]  # fmt: skip
    raise KeyError(w.op)


def _natives_dask(w: Workload):
    """Dask: ``vindex`` with NumPy index arrays (it checks bounds before building the graph)."""
    pnp, inp = w.params, w.indices
    if w.key in ("W1", "W6"):
        return [("p.vindex[i0, i1]", CHECKED, lambda p, _i: p.vindex[inp[:, 0], inp[:, 1]])]
    if w.key == "W2":
        return [
            ("p[i[:,0]] (dask int index)", CHECKED, lambda p, i: p[i[:, 0]]),
            ("p.vindex[i[:,0]]", CHECKED, lambda p, _i: p.vindex[inp[:, 0]]),
        ]
    if w.key == "W3":
        rows = np.arange(pnp.shape[0])[:, None]
        return [("p.vindex[arange[:,None], i[...,0]]", CHECKED,
                 lambda p, _i: p.vindex[rows, inp[..., 0]])]  # fmt: skip
    if w.key in ("W4", "W5"):
        rows = np.arange(inp.shape[0])[:, None]
        return [("p.vindex[arange[:,None], i]", CHECKED, lambda p, _i: p.vindex[rows, inp])]
    raise KeyError(w.key)


# ------------------------------------------------------------------------- per backend


def candidates(backend: str, w: Workload, policies=("error", "unchecked")) -> list[Candidate]:
    """Every way to run `w` on `backend`, as finished-result callables."""
    if backend == "numpy":
        p, i = w.params, w.indices
        out = [
            Candidate(f"portagather[{pol}]", PG, _bind(pg_call, np, w, pol, p, i), pol)
            for pol in policies
        ]
        out += [Candidate(n, k, _bind2(f, p, i)) for n, k, f in _natives_numpy(w)]
        return out
    if backend == "torch":
        import torch

        p, i = torch.from_numpy(w.params), torch.from_numpy(w.indices)
        out = [
            Candidate(f"portagather[{pol}]", PG, _bind(pg_call, torch, w, pol, p, i), pol)
            for pol in policies
        ]
        out += [Candidate(n, k, _bind2(f, p, i)) for n, k, f in _natives_torch(w)]
        return out
    if backend == "jax":
        return _jax_candidates(w, policies)
    if backend == "dask":
        import dask.array as da

        p = da.from_array(w.params, chunks=_chunks(w.params.shape, 4))
        i = da.from_array(w.indices, chunks=_chunks(w.indices.shape, 4))
        out = [
            Candidate(f"portagather[{pol}]", PG, _bind_compute(pg_call, np, w, pol, p, i), pol)
            for pol in policies
        ]
        out += [Candidate(n, k, _bind_compute2(f, p, i)) for n, k, f in _natives_dask(w)]
        return out
    if backend == "tensorflow":
        import tensorflow as tf

        p, i = tf.constant(w.params), tf.constant(w.indices)
        return [Candidate(n, k, _bind2(f, p, i)) for n, k, f in _natives_tf(w)]
    raise ValueError(backend)


def _chunks(shape, parts):
    """Split the first axis into `parts` chunks (the last axis whole for index vectors)."""
    first = max(1, math.ceil(shape[0] / parts))
    return (first, *shape[1:]) if shape else ()


def _bind(f, *args):
    return lambda: f(*args)


def _bind2(f, p, i):
    return lambda: f(p, i)


def _bind_compute(f, *args):
    return lambda: f(*args).compute()


def _bind_compute2(f, p, i):
    return lambda: f(p, i).compute()


def _jax_candidates(w: Workload, policies):
    import jax
    from jax.experimental import checkify

    p, i = jax.device_put(w.params), jax.device_put(w.indices)
    out = []
    for pol in policies:
        if pol == "error":
            fn = jax.jit(checkify.checkify(lambda p, i: pg_call(None, w, "error", p, i)))
            out.append(Candidate("portagather[error] (checkify)", PG, _checked_call(fn, p, i), pol))
        else:
            fn = jax.jit(lambda p, i, pol=pol: pg_call(None, w, pol, p, i))
            out.append(Candidate(f"portagather[{pol}]", PG, _jax_call(fn, p, i), pol))
    for name, kind, f in _natives_jax(w):
        out.append(Candidate(f"jit {name}", UNCHECKED, _jax_call(jax.jit(f), p, i)))
        if kind == CHECKED:
            checked = jax.jit(checkify.checkify(f, errors=checkify.index_checks))
            out.append(Candidate(f"jit checkify {name}", CHECKED, _checked_call(checked, p, i)))
    return out


def _fill_natives_jax(w: Workload):
    """JAX's own safe reads of the same shape: a bad index reads a fill value (a bounds mask
    and a select), where portagather's "error" raises under checkify."""
    import jax.numpy as jnp

    if w.key == "W1":
        n1 = w.params.shape[1]
        return [
            (
                "p.at[i[:,0], i[:,1]].get(fill)",
                lambda p, i: p.at[i[:, 0], i[:, 1]].get(mode="fill", fill_value=0),
            ),
            (
                "take(p.ravel(), flat, fill)",
                lambda p, i: jnp.take(
                    p.reshape(-1), i[:, 0] * n1 + i[:, 1], mode="fill", fill_value=0
                ),
            ),
        ]
    if w.key == "W4":
        rows = np.arange(w.indices.shape[0])[:, None]
        return [
            (
                "take_along_axis(x, i, 1, fill)",
                lambda p, i: jnp.take_along_axis(p, i, axis=1, mode="fill", fill_value=0),
            ),
            ("x.at[arange[:,None], i].get(fill)", lambda p, i: p.at[rows, i].get(mode="fill")),
        ]
    raise KeyError(w.key)


def jax_checked_candidates(w: Workload) -> list[Candidate]:
    """portagather "error" under ``jit(checkify(...))`` and JAX's fill-mode idioms under
    ``jit``, for W1 and W4."""
    import jax
    from jax.experimental import checkify

    p, i = jax.device_put(w.params), jax.device_put(w.indices)
    fn = jax.jit(checkify.checkify(lambda p, i: pg_call(None, w, "error", p, i)))
    out = [Candidate("portagather[error] (checkify)", PG, _checked_call(fn, p, i), "error")]
    for name, f in _fill_natives_jax(w):
        out.append(Candidate(f"jit {name}", UNCHECKED, _jax_call(jax.jit(f), p, i)))
    return out


def _jax_call(fn, p, i):
    return lambda: fn(p, i).block_until_ready()


def _checked_call(fn, p, i):
    def call():
        err, out = fn(p, i)
        err.throw()
        return out.block_until_ready()

    return call


def jax_compile_targets(w: Workload):
    """``[(name, fn)]`` to lower and compile, for the compile-time column."""
    import jax

    p, i = jax.device_put(w.params), jax.device_put(w.indices)

    # A fresh function object for every compile: jit caches by function identity.
    out = [
        (
            "portagather[unchecked]",
            lambda: jax.jit(lambda p, i: pg_call(None, w, "unchecked", p, i)).lower(p, i).compile(),
        )
    ]
    for name, _kind, f in _natives_jax(w):
        out.append((f"jit {name}", lambda f=f: jax.jit(lambda p, i: f(p, i)).lower(p, i).compile()))
    return out
