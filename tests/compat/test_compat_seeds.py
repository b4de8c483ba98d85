"""Every example of the seed pages runs verbatim through the compat modules."""

from __future__ import annotations

import types

import numpy as np
import pytest

from compat.seed_pages import (
    MINDSPORE_GATHER_D_PAGE,
    EagerTF,
    as_doctest,
    page_text,
    run_doctest,
    tf_blocks,
)
from portagather.compat import mindspore as ms_compat
from portagather.compat import tensorflow as tf_compat
from portagather.conformance.backends import load_backend

BLOCKS = tf_blocks()
STRING_BLOCKS = [b for b in BLOCKS if "tf.zeros" not in b[0]]
ZEROS_BLOCKS = [b for b in BLOCKS if "tf.zeros" in b[0]]


def test_the_copies_are_the_pages():
    tf_page = page_text("tf.gather_nd")
    ms_page = page_text("mindspore.ops.GatherD")
    assert tf_page is not None and ms_page is not None, "the seed pages are in tests/compat/seeds"
    for code, printed in BLOCKS:
        for part in code.split("\n\n"):
            assert part in tf_page
        assert printed in tf_page
    assert MINDSPORE_GATHER_D_PAGE.strip() in ms_page
    # Every example with a printed result is here: one per .numpy() or .as_list() call.
    assert len(BLOCKS) == tf_page.count(".numpy()") + tf_page.count(".as_list()") == 16


@pytest.mark.parametrize(("code", "printed"), STRING_BLOCKS, ids=range(len(STRING_BLOCKS)))
def test_tensorflow_page_string_examples(code, printed):
    # Python lists of strings become NumPy arrays: strings live on NumPy only.
    tf = EagerTF(tf_compat, backend=None)
    failed, attempted = run_doctest(as_doctest(code, printed), {"tf": tf}, "tf.gather_nd")
    assert attempted >= 1 and failed == 0


@pytest.mark.parametrize(("code", "printed"), ZEROS_BLOCKS, ids=range(len(ZEROS_BLOCKS)))
def test_tensorflow_page_zeros_examples(backend, code, printed):
    tf = EagerTF(tf_compat, backend)
    failed, attempted = run_doctest(as_doctest(code, printed), {"tf": tf}, "tf.gather_nd")
    assert attempted >= 1 and failed == 0


def _mindspore_globals(backend):
    return {
        "np": np,
        "Tensor": lambda a, dtype=None: backend.asarray(a, dtype),
        "mindspore": types.SimpleNamespace(int32=np.int32),
        "ops": ms_compat,
    }


@pytest.mark.parametrize("name", ["numpy", "jax"])
def test_mindspore_page_example_prints(name):
    backend = load_backend(name)
    failed, attempted = run_doctest(
        MINDSPORE_GATHER_D_PAGE, _mindspore_globals(backend), "ops.GatherD"
    )
    assert attempted == 5 and failed == 0


def test_mindspore_page_example_values(backend):
    # Backends whose print differs from MindSpore's: run the same lines, check `output`.
    code = "\n".join(
        line[4:] for line in MINDSPORE_GATHER_D_PAGE.splitlines() if line.startswith(">>> ")
    ).replace("print(output)", "")
    env = _mindspore_globals(backend)
    exec(code, env)
    out = backend.to_numpy(env["output"])
    np.testing.assert_array_equal(out, np.array([[1, 1], [4, 3]], np.int32), strict=True)
