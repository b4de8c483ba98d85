"""compat.onnx's scatters against ONNX Runtime: ``ScatterND`` and ``ScatterElements`` (opset 18)
with every ``reduction``, on NumPy, PyTorch and JAX inputs.

ONNX leaves duplicate indices under ``reduction="none"`` undefined; such calls are compared
with the plain-loop reference (the last update in row-major order wins).
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from helpers import onnxruntime_node
from portagather.compat import onnx as onnx_compat
from portagather.conformance.reference import ref_scatter_d, ref_scatter_nd

from .oracle_settings import ORACLE
from .scatter_draws import (
    backend_names,
    check_compat,
    element_scatters,
    element_targets,
    nd_scatters,
    nd_targets,
    on,
    repeats,
)

REDUCTIONS = st.sampled_from(["none", "add", "mul", "max", "min"])


def _onnxruntime(op_type, data, indices, updates, **attributes):
    """ONNX Runtime's result of one scatter node (opset 18, for its reductions), or None
    where it refuses the indices."""
    return onnxruntime_node(op_type, data, indices, updates, opset=18, **attributes)


def _or_none(reference, *args, **kwargs):
    try:
        return reference(*args, **kwargs)
    except IndexError:
        return None


@ORACLE
@given(st.one_of(nd_scatters(False), nd_scatters(True)), REDUCTIONS, backend_names)
def test_scatter_nd(call, reduction, name):
    data, indices, updates = call
    targets = nd_targets(data.shape, indices, allow_negative=True)
    if reduction == "none" and repeats(targets):
        sizes = np.asarray(data.shape[: indices.shape[-1]])
        counted = np.where(indices < 0, indices + sizes, indices)  # ONNX counts from the end
        want = _or_none(ref_scatter_nd, data, counted, updates)
    else:
        want = _onnxruntime("ScatterND", data, indices, updates, reduction=reduction)
    args = on(name, data, indices, updates)
    check_compat(name, lambda: onnx_compat.scatter_nd(*args, reduction=reduction), want)


@ORACLE
@given(st.one_of(element_scatters(False), element_scatters(True)), REDUCTIONS, backend_names)
def test_scatter_elements(call, reduction, name):
    data, dim, index, src = call
    if reduction == "none" and repeats(element_targets(data.shape, dim, index)):
        want = _or_none(ref_scatter_d, data, dim, index, src)
    else:
        want = _onnxruntime("ScatterElements", data, index, src, axis=dim, reduction=reduction)
    args = on(name, data, index, src)
    check_compat(
        name, lambda: onnx_compat.scatter_elements(*args, axis=dim, reduction=reduction), want
    )
