"""The docs site's math hook and render check (docs/hooks/), without building the site."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml")
HOOKS = Path(__file__).parents[1] / "docs" / "hooks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_math_becomes_mathml_outside_code():
    math = _load("math")
    out = math.render("KV is $2 L n_{kv} d b$ bytes.\n\n$$t = \\frac{F}{P}$$\n\n`$HOME` stays")
    assert out.count("<math") == 2 and 'display="block"' in out
    assert "`$HOME` stays" in out and "$2 L" not in out
    # every formula of the physics page converts: outside MathML and code no TeX is left
    # (dollar amounts such as "$0.5556" are prose, not math, and stay)
    out = math.render((HOOKS.parent / "physics.md").read_text())
    prose = re.sub(r"<math.*?</math>|```.*?```|`[^`]*`", "", out, flags=re.S)
    assert not re.search(r"\\[a-zA-Z]+|_\{|\^\{", prose), re.search(
        r".{40}(\\[a-zA-Z]+|_\{).{40}", prose)
    assert out.count("<math") > 100


def test_render_check_names_raw_markup_and_missing_figures(tmp_path):
    check = _load("check_site")
    page = tmp_path / "physics" / "index.html"
    page.parent.mkdir()
    page.write_text('<p>see :func:`x` and $$a$$</p><img src="missing.png">'
                    '<script src="https://cdn.example/highlight.min.js"></script>')
    problems = check.check(tmp_path)
    assert any("raw markup" in p for p in problems)
    assert any("image missing.png missing" in p for p in problems)
    assert any("no rendered formula" in p for p in problems)
    assert any("must work offline" in p for p in problems)
