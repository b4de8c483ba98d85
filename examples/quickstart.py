"""A first gather and scatter with each operation, on NumPy (run: python examples/quickstart.py)."""

import numpy as np

import portagather as pg

params = np.array([["a", "b"], ["c", "d"]])
print("gather_nd points:      ", pg.gather_nd(params, [[0, 0], [1, 1]]))
print("gather_nd rows:        ", pg.gather_nd(params, [[1], [0]]).tolist())

batch = np.arange(12).reshape(2, 3, 2)
print("gather_nd batch_dims=1:", pg.gather_nd(batch, [[2], [0]], batch_dims=1).tolist())
print("gather axis=1:         ", pg.gather(batch, [2, 0], axis=1).tolist())
x = np.array([[1, 2], [3, 4]])
print("gather_d dim=1:        ", pg.gather_d(x, 1, [[0, 0], [1, 0]]).tolist())
print("take_along_axis:       ", pg.take_along_axis(np.array([[10, 30, 20]]), [[0, 2, 1]]).tolist())

for policy in ("ignore", "clip", "wrap"):
    out = pg.gather(np.array([10, 20, 30]), [0, 4, -1], bad_indices=policy)
    print(f"bad_indices={policy!r:9}", out.tolist())
try:
    pg.gather_nd(params, [[0, 1], [2, 1]])
except IndexError as err:
    print("bad_indices='error':   ", err)

# The scatters: each writes where its gather reads, into a new array.
zeros = np.zeros(4, dtype=int)
print("scatter_nd update:     ", pg.scatter_nd(zeros, [[1], [3], [1]], [5, 6, 7]).tolist())
print(
    "scatter_nd add:        ",
    pg.scatter_nd(zeros, [[1], [3], [1]], [5, 6, 7], reduce="add").tolist(),
)
print(
    "scatter_d dim=1:       ", pg.scatter_d(np.zeros((2, 3), int), 1, [[2, 0]], [[1, 2]]).tolist()
)
print("put_along_axis:        ", pg.put_along_axis(np.array([[10, 30, 20]]), [[1]], 0).tolist())
print(
    "ignore drops a bad one:",
    pg.scatter_nd(zeros, [[9], [2]], [5, 6], bad_indices="ignore").tolist(),
)
