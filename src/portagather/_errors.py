"""Bad-index facts and their messages, shared by the eager, Dask and JAX checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import array_api_compat as aac


@dataclass(frozen=True)
class BadIndex:
    """How to describe a bad index of one call; small and picklable (it travels in Dask graphs).

    Holds facts only; sentences are written when an error is raised, not on every call.
    `index_name` is the index argument and `data_name` the data argument, of shape
    `data_shape`. With `vector` (``gather_nd``) the index vectors lie along the index's last
    axis and address ``data_shape[axis:axis + depth]`` after `axis` batch dims; otherwise one
    index addresses ``data_shape[axis]``, called `axis_word` (``"dim"`` for ``gather_d``),
    negatives counting from the end where `allow_negative`.
    """

    index_name: str
    vector: bool
    data_name: str
    data_shape: tuple[int, ...]
    axis: int
    depth: int = 0
    allow_negative: bool = False
    axis_word: str = "axis"

    #: The exception a bad index raises (a front end may raise its library's own).
    error: ClassVar[type[Exception]] = IndexError

    def data_text(self) -> str:
        return f"{self.data_name} of shape {self.data_shape}"

    def valid_range_text(self) -> str:
        """What a bad index fails to satisfy, e.g. ``is out of range [0, 3) for axis 1 of ...``."""
        if self.vector:
            if not self.axis:
                return f"does not index into {self.data_text()}"
            b, stop = self.axis, self.axis + self.depth
            return (
                f"does not index into {self.data_name}.shape[{b}:{stop}] = "
                f"{self.data_shape[b:stop]} ({self.data_text()}, batch_dims={b})"
            )
        n = self.data_shape[self.axis]
        low = -n if self.allow_negative else 0
        return (
            f"is out of range [{low}, {n}) for {self.axis_word} {self.axis} of {self.data_text()}"
        )

    def text(self, position: tuple[Any, ...], value: object) -> str:
        """``indices[1, 0] = [7, 1] does not index into ...``; a 0-d index has no brackets."""
        where = f"[{', '.join(str(p) for p in position)}]" if position else ""
        return f"{self.index_name}{where} = {value} {self.valid_range_text()}"

    def empty_axis_text(self, scatter: bool = False) -> str:
        """Every index is bad: the axis it addresses is empty."""
        consequence = (
            'nothing can be written there, so only bad_indices="ignore" (which drops the '
            "updates) accepts that"
            if scatter
            else 'there is nothing to read, so only bad_indices="ignore" (which fills) accepts that'
        )
        return (
            f"{self.index_name} addresses an axis of length 0 of {self.data_text()}; {consequence}"
        )

    def raise_at(self, position: tuple[int, ...], value: object) -> None:
        raise self.error(self.text(position, value))


def python_value(
    values: Any, position: tuple[int, ...], vector: bool, read_int: Any = int
) -> int | list[int]:
    """The index value (or index vector, as a list) at `position`, as Python ints."""
    if not vector:
        return int(read_int(values[position]))
    depth = values.shape[-1]
    return [int(read_int(values[tuple([*position, j])])) for j in range(depth)]


def unravel(flat_position: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The row-major position in `shape` of the `flat_position`-th element."""
    position = []
    for size in reversed(shape):
        position.append(flat_position % size)
        flat_position //= size
    return tuple(reversed(position))


def raise_first_bad(xp: Any, bad: Any, values: Any, report: BadIndex, read_int: Any = int) -> None:
    """Raise the IndexError for the first True of the eager boolean array `bad`.

    `values` is the caller's index array, before any cast, so the message shows the value as
    the caller wrote it. The first position is the smallest of the bad ones, found with
    ``min`` rather than ``nonzero`` or ``argmax``: those return the namespace's default index
    dtype, which a device may not hold (array-api-strict's ``Device("no_x64")``).
    """
    flat = xp.reshape(bad, (-1,))
    size = flat.shape[0]
    positions = xp.arange(size, device=aac.device(flat))
    first = int(xp.min(xp.where(flat, positions, size)))
    position = unravel(first, tuple(bad.shape))
    report.raise_at(position, python_value(values, position, report.vector, read_int))
