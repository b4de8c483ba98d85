"""What a Dask graph costs, task by task: the bytes each task reads and writes.

Used by the scale-out tests and by ``benchmarks/``: a :class:`dask.callbacks.Callback` sums,
for every task, the bytes of its inputs (``_pretask``, from the scheduler's cache) and of its
output (``_posttask``), and counts the params blocks among its inputs. Measure on persisted
inputs, so that making params and indices is not counted as part of the gather.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def nbytes(value: Any) -> int:
    """Bytes held by a task's result: arrays, and lists, tuples and dicts of them."""
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if isinstance(value, list | tuple):
        return sum(nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    return 0


@dataclass
class TaskCosts:
    """Per task: bytes read, bytes written, params blocks read."""

    inputs: dict[Any, int] = field(default_factory=dict)
    outputs: dict[Any, int] = field(default_factory=dict)
    params_blocks: dict[Any, int] = field(default_factory=dict)

    @property
    def largest_input(self) -> int:
        return max(self.inputs.values(), default=0)

    @property
    def most_params_blocks(self) -> int:
        return max(self.params_blocks.values(), default=0)

    @property
    def total_output(self) -> int:
        return sum(self.outputs.values())


def measure(lazy: Any, params_name: str) -> tuple[Any, TaskCosts]:
    """Compute Dask array `lazy` on the synchronous scheduler, measuring every task.

    `params_name` is the Dask name of the (persisted) params, whose blocks are counted.
    Returns the computed value and the costs.
    """
    import dask
    from dask.callbacks import Callback
    from dask.core import get_dependencies

    costs = TaskCosts()

    class Costs(Callback):
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]

        def _pretask(self, key: Any, dsk: Any, state: Any) -> None:
            cache = state["cache"]
            deps = get_dependencies(dsk, key)
            costs.inputs[key] = sum(nbytes(cache[d]) for d in deps if d in cache)
            costs.params_blocks[key] = sum(
                1 for d in deps if isinstance(d, tuple) and d[0] == params_name
            )

        def _posttask(self, key: Any, result: Any, _dsk: Any, _state: Any, _worker_id: Any) -> None:
            costs.outputs[key] = nbytes(result)

    with Costs(), dask.config.set(scheduler="synchronous"):
        value = lazy.compute()
    # The final concatenation into one array is the caller's, not the gather's.
    for key in [k for k in costs.inputs if "finalize" in str(k)]:
        for table in (costs.inputs, costs.outputs, costs.params_blocks):
            table.pop(key, None)
    return value, costs
