"""The examples of the two seed pages (tests/compat/seeds/), as the pages print them, and the
TensorFlow-eager surface (``.numpy()``, ``.shape.as_list()``) their printing relies on."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np

SEEDS = Path(__file__).with_name("seeds")  # copies of the two pages the project started from

# Every block of the tf.gather_nd page that has a printed result, verbatim (dedented).
TF_GATHER_ND_PAGE = """
tf.gather_nd(
    indices=[[0, 0],
             [1, 1]],
    params = [['a', 'b'],
              ['c', 'd']]).numpy()
array([b'a', b'd'], dtype=object)

tf.gather_nd(
    indices = [[1],
               [0]],
    params = [['a', 'b', 'c'],
              ['d', 'e', 'f']]).numpy()
array([[b'd', b'e', b'f'],
       [b'a', b'b', b'c']], dtype=object)

tf.gather_nd(
    indices = [[0, 1],
               [1, 0],
               [2, 4],
               [3, 2],
               [4, 1]],
    params=tf.zeros([5, 7, 3])).shape.as_list()
[5, 3]

tf.gather_nd(
    batch_dims=1,
    indices = [[1],
               [0],
               [4],
               [2],
               [1]],
    params=tf.zeros([5, 7, 3])).shape.as_list()
[5, 3]

params=tf.zeros([5, 7, 3])
indices=tf.zeros([5, 1])
batch_dims = 1

index_depth = indices.shape[-1]
batch_shape = indices.shape[:batch_dims]
assert params.shape[:batch_dims] == batch_shape
outer_shape = indices.shape[batch_dims:-1]
assert index_depth <= params.shape.rank
inner_shape = params.shape[batch_dims + index_depth:]
output_shape = batch_shape + outer_shape + inner_shape
output_shape.as_list()
[5, 3]

tf.gather_nd(
    indices = [[1]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[[b'a1', b'b1'],
        [b'c1', b'd1']]], dtype=object)

tf.gather_nd(
    indices = [[0, 1], [1, 0]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[b'c0', b'd0'],
       [b'a1', b'b1']], dtype=object)

tf.gather_nd(
    indices = [[0, 0, 1], [1, 0, 1]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([b'b0', b'b1'], dtype=object)

tf.gather_nd(
    indices = [[[0, 0]], [[0, 1]]],
    params = [['a', 'b'], ['c', 'd']]).numpy()
array([[b'a'],
       [b'b']], dtype=object)

tf.gather_nd(
    indices = [[[1]], [[0]]],
    params = [['a', 'b'], ['c', 'd']]).numpy()
array([[[b'c', b'd']],
       [[b'a', b'b']]], dtype=object)

tf.gather_nd(
    indices = [[[1]], [[0]]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[[[b'a1', b'b1'],
         [b'c1', b'd1']]],
       [[[b'a0', b'b0'],
         [b'c0', b'd0']]]], dtype=object)

tf.gather_nd(
    indices = [[[0, 1], [1, 0]], [[0, 0], [1, 1]]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[[b'c0', b'd0'],
        [b'a1', b'b1']],
       [[b'a0', b'b0'],
        [b'c1', b'd1']]], dtype=object)

tf.gather_nd(
    indices = [[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[b'b0', b'b1'],
       [b'd0', b'c1']], dtype=object)

tf.gather_nd(
    batch_dims = 1,
    indices = [[1],
               [0]],
    params = [[['a0', 'b0'],
               ['c0', 'd0']],
              [['a1', 'b1'],
               ['c1', 'd1']]]).numpy()
array([[b'c0', b'd0'],
       [b'a1', b'b1']], dtype=object)

tf.gather_nd(
    batch_dims = 1,
    indices = [[[1]], [[0]]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[[b'c0', b'd0']],
       [[b'a1', b'b1']]], dtype=object)

tf.gather_nd(
    batch_dims = 1,
    indices = [[[1, 0]], [[0, 1]]],
    params = [[['a0', 'b0'], ['c0', 'd0']],
              [['a1', 'b1'], ['c1', 'd1']]]).numpy()
array([[b'c0'],
       [b'b1']], dtype=object)
"""

# The Examples section of the MindSpore ops.GatherD page, verbatim.
MINDSPORE_GATHER_D_PAGE = """\
>>> x = Tensor(np.array([[1, 2], [3, 4]]), mindspore.int32)
>>> index = Tensor(np.array([[0, 0], [1, 0]]), mindspore.int32)
>>> dim = 1
>>> output = ops.GatherD()(x, dim, index)
>>> print(output)
[[1 1]
 [4 3]]
"""


def tf_blocks():
    """(code, printed) pairs of the TensorFlow page. A block's printed result starts at its
    first line that begins with ``array(`` or ``[``."""
    blocks = []
    for chunk in TF_GATHER_ND_PAGE.strip().split("\n\n"):
        if blocks and not chunk.startswith("tf.") and not chunk.startswith("params"):
            # The shape walk-through spans two chunks; join it to the one before.
            code, _ = blocks.pop()
            chunk = code + "\n\n" + chunk
        lines = chunk.splitlines()
        start = next(
            (i for i, line in enumerate(lines) if line.startswith(("array(", "["))), len(lines)
        )
        blocks.append(("\n".join(lines[:start]), "\n".join(lines[start:])))
    return blocks


def as_doctest(code: str, printed: str) -> str:
    """Prompts for `code`: ``>>>`` before each statement, ``...`` before continuations."""
    out = []
    for line in code.splitlines():
        if not line.strip():
            continue
        continued = line.startswith(" ")
        out.append(("... " if continued else ">>> ") + line)
    return "\n".join(out) + "\n" + printed + "\n"


def run_doctest(text: str, globs: dict, name: str) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    return runner.summarize(verbose=False)


def page_text(name: str) -> str | None:
    """A seed page with its code blocks' 4-space indent removed; None if it is not there."""
    for path in sorted(SEEDS.glob("*.txt")) if SEEDS.is_dir() else []:
        text = path.read_text()
        if name in text:
            return "\n".join(
                line[4:] if line.startswith("    ") else line.rstrip() for line in text.splitlines()
            )
    return None


class TensorShape(tuple):
    """The part of ``tf.TensorShape`` the page uses: ``rank``, ``as_list``, slices, ``+``."""

    @property
    def rank(self):
        return len(self)

    def as_list(self):
        return list(self)

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return TensorShape(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return TensorShape(tuple(self) + tuple(other))


class EagerResult:
    """An array seen as TensorFlow prints eager tensors: ``.numpy()`` gives bytes objects."""

    def __init__(self, array, to_numpy):
        self.array, self._to_numpy = array, to_numpy

    @property
    def shape(self):
        return TensorShape(int(s) for s in self.array.shape)

    def numpy(self):
        values = self._to_numpy(self.array)
        if values.dtype.kind == "U":
            return np.char.encode(values).astype(object)
        return values


class EagerTF:
    """``tf`` for the page: portagather.compat.tensorflow plus the eager-tensor surface.

    ``tf.zeros`` makes arrays of the test's backend (the issue: arrays of any backend in
    place of ``tf.zeros``); results are wrapped in :class:`EagerResult` only for the
    ``.numpy()`` and ``.shape.as_list()`` calls that TensorFlow's printing uses.
    """

    def __init__(self, compat, backend):
        self._compat, self._backend = compat, backend

    def zeros(self, shape):
        return EagerResult(
            self._backend.asarray(np.zeros(shape, np.float32)), self._backend.to_numpy
        )

    def gather_nd(self, *args, **kwargs):
        def unwrap(v):
            return v.array if isinstance(v, EagerResult) else v

        out = self._compat.gather_nd(
            *map(unwrap, args), **{k: unwrap(v) for k, v in kwargs.items()}
        )
        to_numpy = self._backend.to_numpy if not isinstance(out, np.ndarray) else np.asarray
        return EagerResult(out, to_numpy)
