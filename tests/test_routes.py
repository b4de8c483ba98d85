"""The repeat call (``_routes.call_key``): a call whose key was seen before skips the argument checks,
so these tests make every call at least twice and hold each one, first and repeated, to the
plain-loop reference, or to the error the first call raised. A key that confuses two calls
the checks tell apart (``1`` for ``True``, ``0.0`` for ``0``, a device for another) would
show up as a repeated call that passes where the first one raised, or the other way round.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import torch

import portagather as pg
from portagather.compat import tensorflow as tf_compat
from portagather.conformance import reference

torch.set_num_threads(1)

BACKENDS = {"numpy": np.asarray, "torch": torch.as_tensor}

DATA = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
POINTS = np.array([[1, 2], [7, 5], [0, 0], [3, 1], [7, 5]])  # a duplicate vector
ROWS = np.array([[2, 0, 1], [5, 5, 4]])
IDS = np.array([0, 2, 2, 5, 1, 0, 2, 3])


def _values(x):
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _outcome(function, *args, **kwargs):
    """The result as NumPy values, or the error's type and message."""
    try:
        return _values(function(*args, **kwargs))
    except (IndexError, TypeError, ValueError) as error:
        return type(error), str(error)


def _same(got, wanted):
    if isinstance(wanted, tuple):
        assert got == wanted
    else:
        np.testing.assert_array_equal(got, wanted)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("policy", ["error", "unchecked", "ignore", "clip", "wrap", "DEFAULT"])
def test_repeated_gathers_match_the_reference(backend, policy):
    convert = BACKENDS[backend]
    data = convert(DATA)
    calls = [  # (portagather's call, the reference's, a valid index)
        (pg.gather_nd, reference.ref_gather_nd, POINTS),
        (partial(pg.gather, axis=1), partial(reference.ref_gather, axis=1), ROWS),
        (_gather_d0, _ref_gather_d0, ROWS[:, :2] - 3),
        (
            partial(pg.take_along_axis, axis=1),
            partial(reference.ref_take_along_axis, axis=1),
            np.tile(ROWS[:1], (8, 1)),
        ),
    ]
    for function, ref, index in calls:
        wanted = ref(DATA, index, bad_indices=policy)
        bad = index.copy()
        bad.flat[1] = -9
        for _ in range(3):  # the first call builds the route, the others find it
            got = _values(function(data, convert(index), bad_indices=policy))
            np.testing.assert_array_equal(got, wanted)
            # The same key with a bad value: the policy's answer, never the backend's error.
            if policy in ("error", "DEFAULT"):
                with pytest.raises(IndexError, match=r"^(indices|index)\["):  # portagather's
                    function(data, convert(bad), bad_indices=policy)
            elif policy != "unchecked":
                got = _values(function(data, convert(bad), bad_indices=policy))
                np.testing.assert_array_equal(got, ref(DATA, bad, bad_indices=policy))


def _gather_d0(x, index, **options):
    return pg.gather_d(x, 0, index, **options)


def _ref_gather_d0(x, index, **options):
    return reference.ref_gather_d(x, 0, index, **options)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["update", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("unique", [False, True])
def test_repeated_scatters_match_the_reference(backend, reduce, unique):
    convert = BACKENDS[backend]
    points = POINTS[:4] if unique else POINTS
    updates = np.arange(1, len(points) + 1, dtype=np.float32) * 10
    wanted = reference.ref_scatter_nd(DATA, points, updates, reduce=reduce)
    bad = points.copy()
    bad[2, 0] = -1
    for _ in range(3):
        got = pg.scatter_nd(
            convert(DATA), convert(points), convert(updates), reduce=reduce, unique_indices=unique
        )
        np.testing.assert_array_equal(_values(got), wanted)
        with pytest.raises(IndexError, match=r"indices\[2\] = \[-1, 0\]"):
            pg.scatter_nd(
                convert(DATA), convert(bad), convert(updates), reduce=reduce,
                unique_indices=unique,
            )  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["multiply", "min", "max"])
def test_repeated_reductions_at_vectors_check_each_component(backend, reduce):
    # [1, 3] addresses no element of an (8, 3, 2) array, though its flat position among the
    # (8, 3) rows is inside it (and [8, 2] is past the first axis); with rows of 2 values
    # after the addressed axes, and a NaN in the data.
    convert = BACKENDS[backend]
    data = DATA.reshape(8, 3, 2).copy()
    data[1, 2, 0] = np.nan
    points = np.array([[1, 2], [7, 0], [1, 2], [0, 1]])
    updates = (np.arange(8, dtype=np.float32).reshape(4, 2) - 3) * 5
    wanted = reference.ref_scatter_nd(data, points, updates, reduce=reduce)
    for column, value in ((1, 3), (0, 8)):
        bad = points.copy()
        bad[2, column] = value
        for _ in range(3):
            got = pg.scatter_nd(convert(data), convert(points), convert(updates), reduce=reduce)
            np.testing.assert_array_equal(_values(got), wanted)
            with pytest.raises(IndexError, match=r"^indices\[2\] = \["):
                pg.scatter_nd(convert(data), convert(bad), convert(updates), reduce=reduce)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("policy", ["error", "ignore", "clip"])
def test_repeated_segments_match_the_reference(backend, reduce, policy):
    convert = BACKENDS[backend]
    function = getattr(pg, f"segment_{reduce}")
    data = DATA[:, :3]
    bad = IDS.copy()
    bad[3] = 6
    for _ in range(3):
        got = function(convert(data), convert(IDS), 6, bad_indices=policy)
        wanted = reference.ref_segment(data, IDS, 6, reduce, policy)
        np.testing.assert_array_equal(_values(got), wanted)
        if policy == "error":
            with pytest.raises(IndexError, match=r"segment_ids\[3\] = 6 is out of range"):
                function(convert(data), convert(bad), 6, bad_indices=policy)
        else:
            got = function(convert(data), convert(bad), 6, bad_indices=policy)
            wanted = reference.ref_segment(data, bad, 6, reduce, policy)
            np.testing.assert_array_equal(_values(got), wanted)


# Ids of one shape (so of one key) whose values ask for other answers: the count read from
# them (num_segments=None), a negative id, an id past the end, an unsorted pair.
READ_COUNTS = [[0, 0, 2, 2, 3], [0, 1, 1, 1, 1], [0, 0, 2, 2, 3], [4, 4, 5, 6, 6], [0, 0, 0, 0, 0]]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["sum", "mean", "prod"])
def test_repeated_read_counts_match_the_reference(backend, reduce):
    """``num_segments=None`` keys the call, and the count read from each call's ids picks
    its route; the ids' values are still checked on every call (sorted for TensorFlow's
    ``segment_*``, and not negative)."""
    convert = BACKENDS[backend]
    data = DATA[:5, :3]
    core = getattr(pg, f"segment_{reduce}")
    sorted_form = getattr(tf_compat.math, f"segment_{reduce}")
    for ids in READ_COUNTS * 2:
        wanted = reference.ref_segment(data, ids, None, reduce)
        for got in (
            core(convert(data), convert(np.array(ids)), None),
            sorted_form(convert(data), convert(np.array(ids))),
        ):
            np.testing.assert_array_equal(_values(got), wanted)
        with pytest.raises(
            ValueError,
            match=r"^segment_ids must be sorted .* got segment_ids\[4\] = -1 after segment_ids\[3\] = ",
        ):
            sorted_form(convert(data), convert(np.array([*ids[:4], -1])))
        with pytest.raises(IndexError, match=r"^segment_ids\[0\] = -1 is out of range"):
            sorted_form(convert(data), convert(np.array([-1, *ids[1:]])))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "prod", "sqrt_n"])
def test_repeated_unsorted_front_ends_drop_negatives_and_check_the_end(backend, reduce):
    """TensorFlow's ``unsorted_segment_*`` on a warm route (whose kernels answer ids all in
    range): a negative id still drops its row, an id past the end still raises."""
    convert = BACKENDS[backend]
    data = DATA[:5, :3]
    function = getattr(tf_compat.math, f"unsorted_segment_{reduce}")
    for ids in ([0, 2, 2, 3, 1], [0, -1, 2, 3, -5], [3, 2, 1, 0, 1], [0, 2, 3, 3, 1]) * 2:
        kept = [k for k, i in enumerate(ids) if i >= 0]
        rows, valid = data[kept], np.array(ids)[kept]
        base = "sum" if reduce == "sqrt_n" else reduce
        wanted = reference.ref_segment(rows, valid, 4, base)
        if reduce == "max":  # an empty segment: the lowest finite value (TensorFlow's)
            wanted = np.where(np.isneginf(wanted), np.finfo(np.float32).min, wanted)
        if reduce == "sqrt_n":
            counts = np.bincount(valid, minlength=4).astype(np.float32)
            wanted = wanted / np.sqrt(np.maximum(counts, 1))[:, None]
        got = function(convert(data), convert(np.array(ids)), 4)
        np.testing.assert_allclose(_values(got), wanted, rtol=1e-6)
        with pytest.raises(IndexError, match=r"^segment_ids\[2\] = 4 is out of range"):
            function(convert(data), convert(np.array([*ids[:2], 4, *ids[3:]])), 4)


# Options that compare equal (and hash alike) but that the checks tell apart: each pair is
# called in both orders, so a route kept for the first must not answer the second.
LOOKALIKES = [
    ("unique_indices", True, 1),
    ("indices_are_sorted", False, 0),
    ("fill_value", 0, False),
    ("fill_value", 0, 0.5),
    ("bad_indices", "error", "Error"),
]


@pytest.mark.parametrize(("name", "first", "second"), LOOKALIKES)
@pytest.mark.parametrize("order", ["as-listed", "reversed"])
def test_options_that_compare_equal_keep_their_own_checks(name, first, second, order):
    data = np.arange(6, dtype=np.int64)
    index = np.array([[1], [4]])
    if name == "fill_value":
        function = pg.gather_nd

        def run(value):
            return _outcome(function, data, index, bad_indices="ignore", fill_value=value)
    elif name == "bad_indices":

        def run(value):
            return _outcome(pg.gather_nd, data, index, bad_indices=value)
    else:

        def run(value):
            return _outcome(pg.scatter_nd, data, index, np.array([7, 8]), **{name: value})

    values = [first, second] if order == "as-listed" else [second, first]
    fresh = {}
    for value in values:
        pg._routes._ROUTES.clear()
        fresh[repr(value)] = run(value)
    for value in values * 2:  # now with the other's route kept
        _same(run(value), fresh[repr(value)])


def test_each_dtype_is_a_key_of_its_own():
    index = np.array([[1], [2]])
    for dtype in (np.float32, np.int8, np.bool_, np.float32):
        data = np.zeros(4, dtype=dtype)
        updates = np.array([1, 0], dtype=dtype)  # (an add that changes the data)
        got = pg.scatter_nd(data, index, updates, reduce="add")
        np.testing.assert_array_equal(
            got, reference.ref_scatter_nd(data, index, updates, reduce="add")
        )
        assert got.dtype == dtype
    strings = np.array(["a", "b", "c"])
    with pytest.raises(TypeError, match='reduce="add" needs params'):
        pg.scatter_nd(strings, index, np.array(["x", "y"]), reduce="add")
    with pytest.raises(TypeError, match='reduce="add" needs params'):
        pg.scatter_nd(strings, index, np.array(["x", "y"]), reduce="add")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize(
    "offsets",
    [
        [0, 2, 2, 5, 8],  # every row in a segment, one empty segment
        [1, 3, 6],  # rows before the first offset and after the last in none
        [[0, 1, 3], [2, 2, 4]],  # batched: each of data's two leading rows split alone
    ],
    ids=["covering", "partial", "batched"],
)
def test_repeated_csr_matches_the_reference(backend, reduce, offsets):
    convert = BACKENDS[backend]
    offsets = np.array(offsets)
    data = DATA if offsets.ndim == 1 else DATA[:2, :4].reshape(2, 4, 1) * np.ones((1, 1, 3))
    data = data.astype(np.float32)
    bad = offsets.copy()
    bad.flat[1] = data.shape[offsets.ndim - 1] + 1  # past the end
    for _ in range(3):
        got = pg.segment_csr(convert(data), convert(offsets), reduce=reduce)
        np.testing.assert_array_equal(
            _values(got), reference.ref_segment_csr(data, offsets, reduce)
        )
        with pytest.raises(IndexError, match=r"^offsets\["):
            pg.segment_csr(convert(data), convert(bad), reduce=reduce)
        falling = offsets.copy()
        falling.flat[-1] = 0  # smaller than the offset before it
        with pytest.raises(IndexError, match=r"^offsets\["):
            pg.segment_csr(convert(data), convert(falling), reduce=reduce)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mean_whose_data_has_the_counts_dtype_keeps_two_routes(backend):
    # int64 rows of three values: the sum's scatter and the count's are both adds into
    # int64, of different shapes, and each keeps its own route.
    convert = BACKENDS[backend]
    data = (DATA[:, :3] * 7).astype(np.int64)
    bad = IDS.copy()
    bad[2] = -1  # dropped under "ignore": the policy's steps, not the kernels
    for _ in range(3):
        for ids in (IDS, bad):
            got = pg.segment_mean(convert(data), convert(ids), 6, bad_indices="ignore")
            want = reference.ref_segment(data, ids, 6, "mean", "ignore")
            np.testing.assert_array_equal(_values(got), want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduce", ["update", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("operation", ["scatter_d", "put_along_axis"])
def test_repeated_scatters_along_an_axis_match_the_reference(backend, operation, reduce):
    convert = BACKENDS[backend]
    index = np.array([[1, 0, 1], [2, 2, 0], [0, 1, 1], [3, 3, 3]])
    updates = (np.arange(12, dtype=np.float32).reshape(4, 3) + 1) * 3
    data = DATA[:4, :4]

    def run(at):
        if operation == "scatter_d":
            return pg.scatter_d(convert(data), 1, convert(at), convert(updates), reduce=reduce)
        return pg.put_along_axis(
            convert(data), convert(at), convert(updates), axis=1, reduce=reduce
        )

    def ref(at):
        if operation == "scatter_d":
            return reference.ref_scatter_d(data, 1, at, updates, reduce=reduce)
        return reference.ref_put_along_axis(data, at, updates, axis=1, reduce=reduce)

    negative = index.copy()
    negative[1, 2] = -4  # from the end: the policy's steps, not the kernels
    bad = index.copy()
    bad[2, 0] = 4
    unique = np.array([[1, 0, 2], [2, 3, 0], [0, 1, 3], [3, 2, 1]])  # no row repeats a target
    for _ in range(3):
        for at in (index, negative, unique):  # last-wins "update" settles the first two
            np.testing.assert_array_equal(_values(run(at)), ref(at))
        with pytest.raises(IndexError, match=r"^(index|indices)\[2, 0\] = 4"):
            run(bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_scatters_convert_their_updates_on_every_call(backend):
    # Updates of another dtype (cast), larger than scatter_d's index (its leading block) or
    # broadcast (put_along_axis): a kept route converts them on every call, as the first.
    convert = BACKENDS[backend]
    data = np.zeros((2, 3), dtype=np.float32)
    index = np.array([[2, 0], [1, 1]])
    src = np.array([[1, 2, 9], [3, 4, 9]], dtype=np.int8)  # column 2 is outside the block
    want_d = reference.ref_scatter_d(data, 1, index, src[:, :2].astype(np.float32), "add")
    values = np.array([7], dtype=np.int8)  # broadcast along both axes
    want_put = data.copy()
    for row in range(2):
        for column in index[row]:
            want_put[row, column] = 7
    for _ in range(3):
        got = pg.scatter_d(convert(data), 1, convert(index), convert(src), reduce="add")
        np.testing.assert_array_equal(_values(got), want_d)
        got = pg.put_along_axis(convert(data), convert(index), convert(values), axis=1)
        np.testing.assert_array_equal(_values(got), want_put)


def test_repeated_compat_scatters_take_the_updates_dtype_into_account():
    # tf.tensor_scatter_nd_sub negates the updates in the tensor's dtype: uint8 updates of 5
    # into int64 subtract 5 on every call, not 251 on the calls that find a kept route.
    from portagather.compat import tensorflow as tf

    tensor, index = np.array([10, 10]), np.array([[0]])
    for _ in range(3):
        got = tf.tensor_scatter_nd_sub(tensor, index, np.array([5], dtype=np.uint8))
        np.testing.assert_array_equal(got, [5, 10])
        got = tf.tensor_scatter_nd_add(tensor, index, np.array([-128], dtype=np.int8))
        np.testing.assert_array_equal(got, [-118, 10])


def test_tensor_options_filled_in_place_are_read_on_every_call():
    # A PyTorch tensor hashes by identity: a fill value or a number of segments filled in
    # place between two calls is a new value, never the kept route's old one.
    fill = torch.tensor(7)
    data = torch.arange(3, dtype=torch.int8)
    for value in (7, 9, 11):
        fill.fill_(value)
        got = pg.gather_nd(data, torch.tensor([[0], [9]]), bad_indices="ignore", fill_value=fill)
        assert got.tolist() == [0, value]
    fill.fill_(300)
    with pytest.raises(ValueError, match="cannot be held exactly"):
        pg.gather_nd(data, torch.tensor([[0], [9]]), bad_indices="ignore", fill_value=fill)
    count = torch.tensor(3)
    assert pg.segment_sum(torch.ones(2), torch.tensor([0, 1]), count).tolist() == [1, 1, 0]
    count.fill_(4)
    assert pg.segment_sum(torch.ones(2), torch.tensor([0, 1]), count).tolist() == [1, 1, 0, 0]


def test_repeated_large_updates_along_the_last_axis_match_the_reference():
    # PyTorch: an index too large to read as lists (more than 32 values), with duplicates in
    # its rows, goes to torch's own checked scatter, which settles the winners; min and max
    # under the promise of unique indices read, combine and write.
    rng = np.random.default_rng(1)
    data = rng.random((50, 40)).astype(np.float32)
    index = rng.integers(0, 40, size=(50, 30))
    unique = np.stack([rng.permutation(40)[:30] for _ in range(50)])
    src = rng.random((50, 30)).astype(np.float32)
    bad = index.copy()
    bad[3, 4] = 40
    for _ in range(3):
        got = pg.scatter_d(torch.tensor(data), 1, torch.tensor(index), torch.tensor(src))
        want = reference.ref_scatter_d(data, 1, index, src, "update")
        np.testing.assert_array_equal(got.numpy(), want)
        for reduce in ("min", "max"):
            got = pg.scatter_d(
                torch.tensor(data), 1, torch.tensor(unique), torch.tensor(src), reduce=reduce,
                unique_indices=True,
            )  # fmt: skip
            want = reference.ref_scatter_d(data, 1, unique, src, reduce)
            np.testing.assert_array_equal(got.numpy(), want)
        with pytest.raises(IndexError, match=r"^index\[3, 4\] = 40 "):
            pg.scatter_d(torch.tensor(data), 1, torch.tensor(bad), torch.tensor(src))
