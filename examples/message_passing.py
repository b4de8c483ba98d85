"""Message passing on a graph, written once with portagather, run on NumPy, PyTorch, JAX and Dask.

A two-layer graph convolution (Kipf and Welling's GCN: each node sums its neighbours'
features, scaled by ``1 / sqrt(deg(u) deg(v))``) with an attention step between the layers: a
softmax over each node's incoming edges (a *segment softmax*, as in graph attention
networks), one ``pg.segment_softmax`` call. Every step is ``pg.gather`` along the edges or
``pg.segment_*`` into the nodes;
the rest is the array API standard (``xp.maximum``, ``@``), so the same function runs on every
backend. JAX runs it under ``jit``, with the bad-index check kept through ``checkify``, and
differentiates it with ``grad``; PyTorch differentiates it with autograd; Dask runs it on
chunked arrays.

    python examples/message_passing.py                      # 2000 nodes, 20000 edges
    python examples/message_passing.py --nodes 200 --edges 1000
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from array_api_compat import array_namespace

import portagather as pg


def make_graph(nodes: int, edges: int, features: int = 8, seed: int = 0) -> dict[str, Any]:
    """A random directed graph with a self-loop at every node (so every node has an
    incoming edge), node features, two weight matrices and an attention vector, as NumPy
    float32 arrays; edges sorted by destination, as a CSR graph would keep them."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, nodes, edges), np.arange(nodes)])
    dst = np.concatenate([rng.integers(0, nodes, edges), np.arange(nodes)])
    order = np.argsort(dst, kind="stable")
    hidden, classes = 16, 4
    return {
        "x": rng.standard_normal((nodes, features)).astype(np.float32),
        "src": src[order],
        "dst": dst[order],
        "w1": (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32),
        "w2": (rng.standard_normal((hidden, classes)) / np.sqrt(hidden)).astype(np.float32),
        "attention": rng.standard_normal(hidden).astype(np.float32),
        "target": rng.standard_normal((nodes, classes)).astype(np.float32),
    }


def propagate(h: Any, src: Any, dst: Any, edge_weights: Any, nodes: int, bad_indices: str) -> Any:
    """``out[v] = sum(edge_weights[e] * h[src[e]] for the edges e into v)``: gather along the
    edges, reduce into the nodes."""
    messages = pg.gather(h, src, axis=0, bad_indices=bad_indices) * edge_weights[:, None]
    return pg.segment_sum(messages, dst, nodes, bad_indices=bad_indices)


def model(
    x: Any, src: Any, dst: Any, w1: Any, w2: Any, attention: Any, nodes: int,
    bad_indices: str = "error",
) -> Any:  # fmt: skip
    """Two graph convolutions, the second weighted by attention over the incoming edges."""
    xp = array_namespace(x)
    degree = xp.astype(pg.segment_count(dst, nodes, bad_indices=bad_indices), x.dtype)
    scale = 1.0 / xp.sqrt(degree)
    norm = pg.gather(scale, src, bad_indices=bad_indices) * pg.gather(
        scale, dst, bad_indices=bad_indices
    )
    hidden = xp.maximum(propagate(x @ w1, src, dst, norm, nodes, bad_indices), 0.0)
    scores = pg.gather(hidden, src, axis=0, bad_indices=bad_indices) @ attention
    alpha = pg.segment_softmax(scores, dst, nodes, bad_indices=bad_indices)
    return propagate(hidden @ w2, src, dst, alpha, nodes, bad_indices)


def loss(out: Any, target: Any) -> Any:
    xp = array_namespace(out)
    return xp.mean((out - target) ** 2)


def summary(out: Any, value: Any, grad: Any | None) -> str:
    """What every backend prints: a few outputs, their sum, the loss and the gradient norm,
    rounded to what float32 holds alike on every backend."""
    out = np.asarray(out, dtype=np.float64)
    parts = [
        "out[0] = [" + ", ".join(f"{v:+.4f}" for v in out[0]) + "]",
        f"sum(out) = {out.sum():+.3f}",
        f"loss = {float(value):.5f}",
    ]
    if grad is not None:
        parts.append(f"|d loss / d w1| = {float(np.linalg.norm(np.asarray(grad))):.5f}")
    return ", ".join(parts)


# One function per backend: the same model, each backend's way of running and differentiating.


def run_numpy(graph: dict[str, Any]) -> tuple[Any, Any, Any]:
    g = graph
    out = model(g["x"], g["src"], g["dst"], g["w1"], g["w2"], g["attention"], len(g["x"]))
    return out, loss(out, g["target"]), None


def run_torch(graph: dict[str, Any]) -> tuple[Any, Any, Any]:
    import torch

    g = {k: torch.asarray(v) for k, v in graph.items()}
    w1 = g["w1"].clone().requires_grad_(True)
    out = model(g["x"], g["src"], g["dst"], w1, g["w2"], g["attention"], len(g["x"]))
    value = loss(out, g["target"])
    value.backward()
    assert w1.grad is not None
    return out.detach().numpy(), value.item(), w1.grad.numpy()


def run_jax(graph: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Under ``jit``: ``checkify`` keeps ``bad_indices="error"`` (a bad edge would come back
    as an error); the gradient of the loss with respect to ``w1`` by ``jax.grad``."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    g = {k: jnp.asarray(v) for k, v in graph.items()}
    nodes = len(graph["x"])

    def forward(w1: Any) -> Any:
        return model(g["x"], g["src"], g["dst"], w1, g["w2"], g["attention"], nodes)

    error, (value, grad) = checkify.checkify(
        jax.jit(jax.value_and_grad(lambda w1: loss(forward(w1), g["target"])))
    )(g["w1"])
    error.throw()  # no bad index
    out = jax.jit(lambda w1: model(g["x"], g["src"], g["dst"], w1, g["w2"], g["attention"],
                                   nodes, bad_indices="unchecked"))(g["w1"])  # fmt: skip
    return np.asarray(out), float(value), np.asarray(grad)


def run_dask(graph: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Lazily, on arrays in chunks (nodes in 4 blocks, edges in 4): the result is computed
    once at the end; a bad edge would raise then."""
    import dask
    import dask.array as da

    nodes, edges = len(graph["x"]), len(graph["src"])
    g = {
        k: da.from_array(v, chunks=-(-(edges if k in ("src", "dst") else nodes) // 4))
        if k in ("x", "src", "dst", "target") else da.from_array(v)
        for k, v in graph.items()
    }  # fmt: skip
    out = model(g["x"], g["src"], g["dst"], g["w1"], g["w2"], g["attention"], nodes)
    out, value = dask.compute(out, loss(out, g["target"]))
    return out, value, None


BACKENDS = {"numpy": run_numpy, "torch": run_torch, "jax": run_jax, "dask": run_dask}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--edges", type=int, default=20_000)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    args = parser.parse_args(argv)
    graph = make_graph(args.nodes, args.edges)
    print(f"{args.nodes} nodes, {len(graph['src'])} edges (self-loops included)")
    for name in args.backends:
        print(f"{name:>6}: {summary(*BACKENDS[name](graph))}")


if __name__ == "__main__":
    main()
