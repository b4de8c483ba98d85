"""``examples/message_passing.py``: every backend prints the same numbers, and they are the
numbers of a plain NumPy implementation (``np.add.at`` and ``np.maximum.at``, in float64,
sharing nothing with portagather); the gradients of PyTorch and JAX are those of central
differences of that implementation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "message_passing.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("message_passing", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["message_passing"] = module
    spec.loader.exec_module(module)
    return module


def reference(graph, w1):
    """The model of the example, written with NumPy's unbuffered ``ufunc.at``, in float64."""
    x, src, dst = graph["x"].astype(np.float64), graph["src"], graph["dst"]
    w2, attention = graph["w2"].astype(np.float64), graph["attention"].astype(np.float64)
    nodes = x.shape[0]

    def propagate(h, weights):
        out = np.zeros((nodes, h.shape[1]))
        np.add.at(out, dst, h[src] * weights[:, None])
        return out

    degree = np.zeros(nodes)
    np.add.at(degree, dst, 1.0)
    norm = 1.0 / np.sqrt(degree[src] * degree[dst])
    hidden = np.maximum(propagate(x @ w1, norm), 0.0)
    scores = hidden[src] @ attention
    peak = np.full(nodes, -np.inf)
    np.maximum.at(peak, dst, scores)
    weights = np.exp(scores - peak[dst])
    total = np.zeros(nodes)
    np.add.at(total, dst, weights)
    out = propagate(hidden @ w2, weights / total[dst])
    return out, np.mean((out - graph["target"]) ** 2)


def test_backends_agree_with_numpy(example):
    graph = example.make_graph(150, 900, seed=3)
    w1 = graph["w1"].astype(np.float64)
    want, want_loss = reference(graph, w1)
    # The gradient with respect to w1, by central differences of the reference.
    step = 1e-6
    want_grad = np.zeros_like(w1)
    for k in np.ndindex(w1.shape):
        up, down = w1.copy(), w1.copy()
        up[k] += step
        down[k] -= step
        want_grad[k] = (reference(graph, up)[1] - reference(graph, down)[1]) / (2 * step)
    for name, run in example.BACKENDS.items():
        out, value, grad = run(graph)
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-6, err_msg=name)
        assert abs(float(value) - want_loss) <= 1e-5 * want_loss, name
        if name in ("torch", "jax"):
            np.testing.assert_allclose(np.asarray(grad), want_grad, rtol=1e-3, atol=1e-7)
        else:
            assert grad is None


def test_printed_numbers_are_the_same(example, capsys):
    example.main(["--nodes", "300", "--edges", "2000"])
    lines = capsys.readouterr().out.splitlines()
    printed = {line.split(":", 1)[0].strip(): line.split(":", 1)[1] for line in lines[1:]}
    assert sorted(printed) == sorted(example.BACKENDS)
    without_gradient = {name: text.split(", |d loss")[0] for name, text in printed.items()}
    assert len(set(without_gradient.values())) == 1, printed
    assert printed["torch"] == printed["jax"]
