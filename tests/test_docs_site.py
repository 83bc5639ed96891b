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


def test_a_formula_that_starts_a_line_stays_in_its_paragraph():
    # issue 26: "head dimension\n$d$ (value ...)" was split into one-formula paragraphs,
    # because Python-Markdown counts <math> among its block-level tags
    markdown = pytest.importorskip("markdown")
    math = _load("math")
    html = markdown.markdown(math.render("Notation: head dimension\n$d$ (value $d_v$), "
                                         "vocabulary $V$.\n\nNext."))
    assert html.count("<p>") == 2 and html.startswith("<p>Notation:")
    assert html.count('<span class="math"><math') == 3


def test_render_check_names_broken_paragraphs_and_single_dollar_tex(tmp_path):
    check = _load("check_site")
    page = tmp_path / "time" / "index.html"
    page.parent.mkdir()
    page.write_text('<p>head dimension</p>\n<math display="inline"><mi>d</mi></math>\n'
                    '<p>(value $d_{v}$)</p><p>costs $4.54 and $5 an hour</p>')
    problems = [p for p in check.check(tmp_path) if p.startswith("time")]
    assert any("1 inline formulas outside their paragraph" in p for p in problems)
    assert any("raw markup '$d_{v}$'" in p for p in problems)
    page.write_text('<p>head dimension <span class="math"><math display="inline"><mi>d</mi>'
                    '</math></span> costs $4.54 and $5 an hour</p>')
    assert not [p for p in check.check(tmp_path) if p.startswith("time")]


def test_every_api_page_goes_into_the_navigation_by_stage(tmp_path):
    nav_hook = _load("api_nav")
    api = tmp_path / "generated" / "api"
    api.mkdir(parents=True)
    for name in ("index", "physics.roofline", "core.units", "physics.kv"):
        (api / f"{name}.md").write_text("# x\n")
    config = {"docs_dir": str(tmp_path), "nav": [{"Home": "index.md"},
                                                 {"API reference": "generated/api/index.md"}]}
    section = nav_hook.on_config(config)["nav"][1]["API reference"]
    assert section[0] == {"Index": "generated/api/index.md"}
    # stages in data-flow order (core before physics), modules by name
    assert [list(s)[0] for s in section[1:]] == ["core", "physics"]
    assert section[2]["physics"] == [{"kv": "generated/api/physics.kv.md"},
                                     {"roofline": "generated/api/physics.roofline.md"}]
