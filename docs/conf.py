"""Sphinx configuration: furo, MyST markdown, autodoc with numpydoc docstrings (napoleon).

Built with warnings as errors (``sphinx-build -W``), with no warning suppressed. Written at
build time into ``_generated/`` (excluded as a source: pages include or show it):
``diagrams/*.png`` (matplotlib shape diagrams), ``support-matrix.md`` (from ``portagather check
--json``, the file named by ``PORTAGATHER_CHECK_JSON``) and ``performance.md`` with its plots
(from ``benchmarks/RESULTS.md``). ``sphinx-build -b doctest`` runs every example of the pages
and of the docstrings. ``tests/test_docs_site.py`` checks the built site in a browser.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import generate  # noqa: E402  (docs/_ext/generate.py)

import portagather  # noqa: E402

project = "portagather"
release = portagather.__version__
version = release
author = "portagather contributors"
copyright = "portagather contributors"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
# _generated/ holds fragments that pages include ({include}) and the images they show: none
# of it is a page of its own.
exclude_patterns = ["_build", "_ext", "_generated"]
html_theme = "furo"
html_title = f"portagather {release}"
html_favicon = "_static/favicon.svg"
html_static_path = ["_static"]
html_css_files = ["marks.css"]
# The page of contents of a page names objects in full (portagather.compat.torch.gather, not
# a fifth "gather()").
toc_object_entries_show_parents = "all"
# The copy button copies the code of an example, without its prompts and printed output.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
doctest_global_setup = "import numpy as np\nimport portagather as pg"
nitpicky = False

generate.all_pages(HERE)

import doctest  # noqa: E402

doctest_default_flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
