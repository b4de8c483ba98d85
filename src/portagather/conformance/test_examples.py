"""The examples printed in the TensorFlow, MindSpore and ONNX documentation."""

import numpy as np
import pytest

from .cases import Call, check_result, example_arrays, load_examples

EXAMPLES = load_examples()


@pytest.mark.cell("documented examples")
@pytest.mark.parametrize(
    ("op", "case"),
    [(c["op"], c) for c in EXAMPLES],
    ids=[f"{c['file']}-{c['id']}" for c in EXAMPLES],
)
def test_documented_example(backend, repro, op, case):
    data, expected = example_arrays(case, backend.strings)
    call = repro(Call(op, data, case["indices"], case["kwargs"]))
    out, data_array = call.run(backend)
    if expected is None:  # the page prints the shape only
        expected = call.expected()
        assert expected.shape == tuple(case["expected_shape"])
    else:  # the page's answer is the reference's answer too
        assert np.array_equal(call.expected(), expected)
    check_result(backend, out, expected, data_array)
