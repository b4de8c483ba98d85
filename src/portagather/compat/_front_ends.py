"""Front ends made by a factory: the families of a framework's functions that share one
signature and differ only by the reduction they name (``tf.math.unsorted_segment_sum`` /
``_max`` / ...). The factory writes the body once; :func:`named` gives each made function
its public name and its docstring, so that ``help()``, Sphinx's autodoc and doctest see a
plain function of the module."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])


def named(function: F, name: str, module: str, summary: str, examples: str, imports: str) -> F:
    """`function` renamed `name` (of `module`) with the docstring `summary`, then an
    Examples section: the lines `imports` (e.g. ``import numpy as np``), each as a
    doctest line, before `examples` (doctest lines)."""
    lines = "\n".join(f">>> {line}" for line in imports.splitlines())
    body = inspect.cleandoc(examples)
    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    function.__doc__ = f"{inspect.cleandoc(summary)}\n\nExamples\n--------\n{lines}\n{body}\n"
    return function
