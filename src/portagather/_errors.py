"""Messages for bad index values, shared by the eager, Dask and JAX checks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BadIndex:
    """How to describe a bad index of one call; small and picklable (it travels in Dask graphs).

    `name` is the index argument, `vector` says whether index vectors lie along its last
    axis (``gather_nd``), `subject` names the data, e.g. "params of shape (2, 2)", and `tail`
    ends the sentence, e.g. "does not index into params of shape (2, 2)".
    """

    name: str
    vector: bool
    subject: str
    tail: str

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
