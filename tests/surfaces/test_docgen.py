"""Docs generator: one API page per module the stage tables list, none skipped, and the
catalog pages with their sources."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

import tokenomics as tk
from tokenomics.surfaces.docgen import _md_table, api_pages, catalog_pages


def _stage_modules() -> list[tuple[str, str]]:
    return [(stage, name) for stage in tk.STAGES
            for name in importlib.import_module(f"tokenomics.{stage}")._MODULES]


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    out = tmp_path_factory.mktemp("generated")
    api_pages(out)
    return out / "api"


def test_a_page_for_every_module_the_stage_tables_list(api):
    mods = _stage_modules()
    assert len(mods) >= 30
    pages = {p.name for p in api.glob("*.md")} - {"index.md"}
    assert pages == {f"{s}.{m}.md" for s, m in mods}        # none missing, none extra
    for stage, name in mods:
        text = (api / f"{stage}.{name}.md").read_text()
        assert text.startswith(f"# `tokenomics.{stage}.{name}`")


def test_pages_carry_the_public_functions_and_their_docstrings(api):
    kv = (api / "physics.kv.md").read_text()
    # a heading of the name (a short anchor), the signature below it in a code block
    assert "## kv_bytes_per_token\n" in kv and "\nkv_bytes_per_token(" in kv
    # The docstring comes along, units and all, its sections as Markdown
    assert tk.kv_bytes_per_token.__doc__.strip().splitlines()[0] in kv
    assert "## export_sizing_sheet\n" in (api / "surfaces.export.md").read_text()


def test_docstring_sections_become_markdown_with_the_docs_extra(api):
    # numpydoc (the [docs] extra) parses the sections; without it the page keeps the
    # docstring as preformatted text, and the test install (.[test]) has no numpydoc
    pytest.importorskip("numpydoc")
    kv = (api / "physics.kv.md").read_text()
    assert "**Parameters**" in kv and "**Returns**" in kv


def test_index_lists_each_stage_in_data_flow_order_and_links_every_page(api):
    index = (api / "index.md").read_text()
    heads = [index.index(f"## `tokenomics.{s}`") for s in tk.STAGES]
    assert heads == sorted(heads)
    for stage, name in _stage_modules():
        assert f"- [`tokenomics.{stage}.{name}`]({stage}.{name}.md)" in index


def test_a_module_that_cannot_be_documented_stops_the_build(tmp_path, monkeypatch):
    # A module the table lists but that does not exist fails loudly instead of vanishing.
    stage = importlib.import_module("tokenomics.surfaces")
    monkeypatch.setattr(stage, "_MODULES", (*stage._MODULES, "no_such_module"))
    with pytest.raises(ModuleNotFoundError):
        api_pages(tmp_path)
    # So does one whose __all__ names something it does not define.
    broken = types.ModuleType("tokenomics.surfaces.broken_for_test", "Broken on purpose.")
    broken.__all__ = ["vanished"]
    monkeypatch.setitem(sys.modules, broken.__name__, broken)
    monkeypatch.setattr(stage, "_MODULES", (*stage._MODULES[:-1], "broken_for_test"))
    with pytest.raises(tk.TokenomicsError, match="'vanished'"):
        api_pages(tmp_path)


def test_catalog_pages_hold_the_datasheet_rows_and_their_sources(tmp_path):
    catalog_pages(tmp_path)
    hw = (tmp_path / "catalog-hardware.md").read_text()
    rows = [line for line in hw.splitlines() if line.startswith("| h100-sxm |")]
    assert len(rows) == 3                          # compute, memory and links, price tables
    # dense BF16 989.4 TFLOP/s, ridge 989.4 / 3.35 = 295.3 FLOP/B
    assert "| 989.4 |" in rows[0] and "| 295.3 |" in rows[0]
    # physical 80 GiB = 85.9 GB, visible 81,559 MiB = 85.52 GB, 3.35 TB/s (NVIDIA datasheet)
    assert "| 85.9 | 85.52 | 3.35 |" in rows[1]
    assert "## Sources" in hw
    models = (tmp_path / "catalog-models.md").read_text()
    row = next(line for line in models.splitlines() if line.startswith("| llama-3.1-70b |"))
    assert "| 3.277e+05 |" in row                     # 327,680 B per token in BF16, to 4 digits
    assert (tmp_path / "prices.md").read_text().startswith("# Provider prices")


def test_markdown_table_escapes_pipes_and_blanks_nan():
    import pandas as pd

    t = _md_table(pd.DataFrame({"a": ["x|y"], "b": [float("nan")], "c": [1 / 3]}))
    assert t.splitlines() == ["| a | b | c |", "|---|---|---|", "| x\\|y |  | 0.3333 |"]


def test_highlight_css_styles_the_codehilite_blocks(tmp_path):
    from tokenomics.surfaces.docgen import highlight_css

    highlight_css(tmp_path)
    css = (tmp_path / "pygments.css").read_text()
    # Pygments' token classes under the block class codehilite writes: .k (keyword), .s (string)
    assert ".codehilite .k " in css and ".codehilite .s " in css


def test_cross_references_link_to_the_page_and_heading_that_document_them(api):
    # issue 26: ":func:`frontier`" is a link, not plain code. tk.frontier is defined in
    # tokenomics.pareto.envelope, documented there under "## frontier"; a bare name links
    # from a module that imports it; a method links to its class; numpy gets no link
    import tokenomics.serving.steady as steady
    from tokenomics.surfaces.docgen import api_link

    assert api_link("tokenomics.frontier", steady) == "pareto.envelope.md#frontier"
    assert api_link("~tokenomics.decode", steady) == "physics.step.md#decode"
    assert api_link("steady_state", steady) == "serving.steady.md#steady_state"
    assert api_link("tokenomics.data.specs.Hardware.achievable_share", steady) == \
        "data.specs.md#hardware"
    assert api_link("tokenomics.physics.formulas", steady) == "physics.formulas.md"
    assert api_link("numpy.interp", steady) is None and api_link("nope", steady) is None
    pytest.importorskip("numpydoc")      # the pages render roles only with the docs extra
    page = (api / "pareto.queries.md").read_text()
    assert "[`frontier`](pareto.envelope.md#frontier)" in page
    for target in set(__import__("re").findall(r"\]\(([\w.]+\.md)#(\w+)\)", page)):
        assert f"## {target[1]}" in (api / target[0]).read_text().lower(), target


def test_gallery_titles_are_the_examples_own_first_lines(tmp_path, monkeypatch):
    # issue 26: "frontiers llama 3 3 70b" (a file name) became the heading; the author's
    # first docstring line is the title, the rest its text
    from tokenomics.surfaces.docgen import gallery

    ex = tmp_path / "examples"
    ex.mkdir()
    (ex / "kv_of_llama_3_1_70b.py").write_text(
        '"""How big is Llama 3.1 70B\'s KV cache at 128K?\n\nS11: about 40 GiB.\n"""\n'
        'import tokenomics as tk\n'
        'print(round(tk.kv_cache_bytes(tk.model("llama-3.1-70b"), 131072) / 2**30, 1))\n')
    out = tmp_path / "generated"
    out.mkdir()
    # gallery() sets MPLBACKEND for the scripts it runs; undone after the test, so a later
    # notebook kernel keeps its inline backend
    monkeypatch.setenv("MPLBACKEND", "Agg")
    gallery(out, ex)
    page = (out / "gallery.md").read_text()
    assert "## How big is Llama 3.1 70B's KV cache at 128K?\n" in page
    assert "kv of llama" not in page and "S11: about 40 GiB." in page
    assert "40.0" in page                      # S11: 131,072 x 327,680 B = 40 GiB
