"""Spreadsheet building blocks: cell addresses, exact numbers in the CSV, formula syntax."""

from __future__ import annotations

import csv

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.surfaces import export
from tokenomics.surfaces.spreadsheet import HEADER, Worksheet, spreadsheet_formula


def _read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_cells_follow_the_rows_below_the_header(tmp_path):
    ws = Worksheet()
    ws.section("Inputs", "edit these")                     # row 2
    peak = ws.value("peak", 989.4e12, "FLOP/s")            # row 3 -> B3
    bw = ws.value("bandwidth", 3.35e12, "B/s")             # row 4 -> B4
    ws.text("device", "h100-sxm")                          # row 5
    ridge = ws.formula("ridge", peak / bw, "FLOP/B")       # row 6 -> B6
    assert (peak.name, bw.name, ridge.name) == ("B3", "B4", "B6")
    rows = _read(ws.write(tmp_path / "s.csv"))
    assert tuple(rows[0]) == HEADER == ("label", "value", "unit", "note")
    assert rows[1] == ["Inputs", "", "", "edit these"]
    assert rows[2] == ["peak", "989400000000000", "FLOP/s", ""]   # whole: no decimal point
    assert rows[4] == ["device", "h100-sxm", "", ""]
    assert rows[5] == ["ridge", "=B3/B4", "FLOP/B", ""]


def test_fractions_are_written_so_they_read_back_exactly(tmp_path):
    ws = Worksheet()
    ws.value("a", 0.1 + 0.2, "1")              # 0.30000000000000004, not 0.3
    ws.value("b", 2.0**53, "1")                # beyond 2^53 whole numbers keep repr
    ws.value("c", -2.0, "1")
    rows = _read(ws.write(tmp_path / "s.csv"))
    assert [r[1] for r in rows[1:]] == ["0.30000000000000004", "9007199254740992.0", "-2"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                max_size=8))
def test_any_finite_number_round_trips(tmp_path_factory, values):
    ws = Worksheet()
    names = [ws.value(f"x{i}", v, "1").name for i, v in enumerate(values)]
    assert names == [f"B{i + 2}" for i in range(len(values))]
    rows = _read(ws.write(tmp_path_factory.mktemp("rt") / "s.csv"))
    assert [float(r[1]) for r in rows[1:]] == values


def test_bad_rows_are_refused():
    ws = Worksheet()
    ws.value("batch", 8, "sequences")
    with pytest.raises(tk.TokenomicsError, match="duplicate sheet label 'batch'"):
        ws.value("batch", 16, "sequences")
    with pytest.raises(tk.TokenomicsError, match="finite"):
        ws.value("bandwidth", float("inf"), "B/s")
    ws.section("note")
    ws.section("note")                         # headings and remarks may repeat


def test_formula_syntax():
    x, y = sp.symbols("B2 B3", positive=True)
    assert spreadsheet_formula(sp.Max(x, y)) == "=MAX(B2,B3)"
    assert spreadsheet_formula(sp.Min(x, 2 * y)) == "=MIN(B2,2*B3)"
    assert spreadsheet_formula(sp.Mod(x, y) + 1) == "=MOD(B2,B3)+1"
    assert spreadsheet_formula(sp.floor(x / y)) == "=INT(B2/B3)"
    assert spreadsheet_formula(x + sp.Rational(3, 4)) == "=B2+(3/4)"     # exact, no 0.75
    assert spreadsheet_formula(sp.sqrt(x)) == "=((B2)^((1/2)))"
    assert spreadsheet_formula(1 / (x + y)) == "=(1/(B2+B3))"
    # Spreadsheets read -2^2 as 4: powers are fully parenthesised so -x^2 stays -(x^2).
    assert spreadsheet_formula(-x**2) == "=-((B2)^(2))"
    assert spreadsheet_formula(sp.Float(0.1) * x) == "=0.1*B2"
    assert spreadsheet_formula(x + y, {x: "D7"}) == "=B3+D7"


def test_release_0_1_import_path_still_works():
    assert export.spreadsheet_formula is spreadsheet_formula
    assert export.HEADER is HEADER
