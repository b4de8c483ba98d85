"""Messages for bad index values, shared by the eager, Dask and JAX checks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BadIndex:
    """How to describe a bad index of one call; small and picklable (it travels in Dask graphs).

    Holds the facts only; the sentences are written when an error is raised, not on every call.
    `name` is the index argument and `data_name` the data argument, of shape `shape`.
    ``gather_nd`` (`vector`: index vectors along the last axis) addresses
    ``shape[axis:axis + depth]`` after `axis` batch dims; the other operations address
    ``shape[axis]``, called `axis_word` (``"dim"`` for ``gather_d``), negatives counting from
    the end where `allow_negative`.
    """

    name: str
    vector: bool
    data_name: str
    shape: tuple[int, ...]
    axis: int
    depth: int = 0
    allow_negative: bool = False
    axis_word: str = "axis"

    @property
    def subject(self) -> str:
        return f"{self.data_name} of shape {self.shape}"

    @property
    def tail(self) -> str:
        if self.vector:
            if not self.axis:
                return f"does not index into {self.subject}"
            b, stop = self.axis, self.axis + self.depth
            return (
                f"does not index into {self.data_name}.shape[{b}:{stop}] = "
                f"{self.shape[b:stop]} ({self.subject}, batch_dims={b})"
            )
        n = self.shape[self.axis]
        low = -n if self.allow_negative else 0
        return f"is out of range [{low}, {n}) for {self.axis_word} {self.axis} of {self.subject}"

    def text(self, position: tuple[int, ...], value) -> str:
        where = ", ".join(str(p) for p in position)
        return f"{self.name}[{where}] = {value} {self.tail}"

    def template(self) -> str:
        """The same sentence for ``checkify``, which fills in traced values."""
        return f"{self.name} at position {{position}} = {{value}} {self.tail}"

    def empty_axis_text(self) -> str:
        return (
            f"{self.name} index into an axis of length 0 of {self.subject}; there is nothing "
            'to read, so only bad_indices="ignore" (which fills) accepts that'
        )

    def raise_at(self, position: tuple[int, ...], value):
        raise IndexError(self.text(position, value))


def python_value(values, position: tuple[int, ...], vector: bool):
    """The index value (or index vector, as a list) at `position`, as Python ints."""
    if not vector:
        return int(values[position])
    depth = values.shape[-1]
    return [int(values[(*position, j)]) for j in range(depth)]


def raise_first_bad(xp, bad, values, report: BadIndex):
    """Raise the IndexError for the first True of the eager boolean array `bad`."""
    (flat_positions,) = xp.nonzero(xp.reshape(bad, (-1,)))
    first = int(flat_positions[0])
    position = []
    for size in reversed(bad.shape):
        position.append(first % size)
        first //= size
    position = tuple(reversed(position))
    report.raise_at(position, python_value(values, position, report.vector))
