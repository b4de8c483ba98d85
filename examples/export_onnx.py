"""Export ``gather_nd`` with ``batch_dims=1`` to an ONNX file and run it in ONNX Runtime.

The same portagather call that runs on NumPy arrays builds an ONNX graph when it is given
symbolic ndonnx arrays (``ndx.argument``). ONNX has no operator that raises at run time, so
``bad_indices="error"`` cannot be exported; this example uses ``"ignore"``, which fills the
slices of bad index vectors with ``fill_value``.

    python examples/export_onnx.py [output.onnx]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import ndonnx as ndx
import numpy as np
import onnxruntime as ort

import portagather as pg


def build_model():
    params = ndx.argument(shape=(4, 6, 3), dtype=ndx.float32)
    indices = ndx.argument(shape=(4, 5, 1), dtype=ndx.int64)
    out = pg.gather_nd(params, indices, batch_dims=1, bad_indices="ignore", fill_value=-1.0)
    return ndx.build({"params": params, "indices": indices}, {"out": out})


def main(path: Path) -> None:
    model = build_model()
    path.write_bytes(model.SerializeToString())
    print(f"wrote {path} ({path.stat().st_size} bytes)")

    rng = np.random.default_rng(0)
    params = rng.standard_normal((4, 6, 3)).astype(np.float32)
    indices = rng.integers(-1, 7, (4, 5, 1))  # some out of range: -1 and 6
    session = ort.InferenceSession(str(path))
    (out,) = session.run(None, {"params": params, "indices": indices})

    expected = pg.gather_nd(params, indices, batch_dims=1, bad_indices="ignore", fill_value=-1.0)
    np.testing.assert_array_equal(out, expected)
    print("ONNX Runtime result equals NumPy's:", out.shape, out.dtype)


if __name__ == "__main__":
    target = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.gettempdir()) / "gather_nd.onnx"
    )
    main(target)
