"""Numpydoc docstrings as Markdown: sections, math and roles, no raw RST left."""

from __future__ import annotations

import re

import pytest

from tokenomics.surfaces.docstrings import block, docstring_markdown, inline

pytest.importorskip("numpydoc")


def test_roles_math_and_backticks_become_markdown():
    assert inline(":func:`~tokenomics.decode` of ``b``, :math:`t = F / P`") == \
        "`decode` of `b`, $t = F / P$"
    assert block([".. math::", "", "   a = b", "", "after"]) == "$$a = b$$\n\nafter"


def test_a_real_docstring_renders_every_section():
    import tokenomics as tk

    md = docstring_markdown(tk.ridge_point.__doc__)
    assert "**Parameters**" in md and "- `dtype` (str)" in md
    assert "**Examples**" in md and "```python" in md
    assert ":func:" not in md and ".. math::" not in md
    assert not re.search(r"(?<!`)``(?!`)", md)       # no RST literal left (fences are ```)
    md = docstring_markdown(tk.steady_state.__doc__)
    assert "$$" in md or "$" in md          # its Notes carry formulas
    assert ".. math::" not in md
