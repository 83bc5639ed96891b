"""The .xlsx sizing workbook, recomputed by a spreadsheet engine after editing its inputs."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import tokenomics as tk
from tokenomics.surfaces.workbook import export_sizing_workbook

openpyxl = pytest.importorskip("openpyxl")
formulas = pytest.importorskip("formulas")

FP8 = dict(weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8")
CAL = tk.efficiency_presets()["calibrated"]
DEPS = {
    "single": tk.Deployment("llama-3.1-8b", "h100-sxm"),
    "tp4": tk.Deployment("llama-3.1-70b", "h200", tp=4, **FP8),
    "tp4-pp2": tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, pp=2, comm_overlap=0.5),
    "moe-tp8": tk.Deployment("deepseek-v3", "h200", tp=8, weight_dtype="fp8",
                             compute_dtype="fp8"),
    # issue 26: the calibrated forecast (operator overlap, attention and FP4 scales, the
    # grouped expert GEMM's tile, the EP load, host time per token, hidden collectives):
    # a dense, a small-expert MoE, an MLA MoE at EP8 and a TP8 dense replica
    "cal-dense": tk.Deployment("llama-3.1-70b", "h200", tp=2, efficiency=CAL),
    "cal-moe": tk.Deployment("qwen3-30b-a3b", "b200", weight_dtype="nvfp4", compute_dtype="nvfp4",
                             kv_dtype="fp8", efficiency=CAL),
    "cal-mla-ep8": tk.Deployment("deepseek-v3", "b200", tp=8, ep=8, weight_dtype="fp8",
                                 compute_dtype="fp8", efficiency=CAL, engine="sglang"),
    "cal-tp8": tk.Deployment("llama-3.1-8b", "h100-sxm", tp=8, efficiency=CAL, engine="vllm"),
}
BATCH, CTX, PRICE = 16, 4096, 2.5
REL = 1e-9


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    path = tmp_path_factory.mktemp("wb") / "sizing.xlsx"
    export_sizing_workbook(path, list(DEPS.values()), BATCH, CTX, prices=PRICE)
    wb = openpyxl.load_workbook(path)
    model = formulas.ExcelModel().loads(str(path)).finish()
    return path, wb, model


def _addr(wb, sheet, label):
    for i, row in enumerate(wb[sheet].iter_rows(values_only=True), 1):
        if row[0] == label:
            return f"'[sizing.xlsx]{sheet.upper()}'!B{i}"
    raise KeyError(label)


def _recalc(book, edits):
    """Values by (sheet, label) after typing ``edits`` {(sheet, label): value} into cells."""
    _path, wb, model = book
    sol = model.calculate(inputs={_addr(wb, s, lab): float(v) for (s, lab), v in edits.items()})

    def value(sheet, label=None, *, cell=None):
        return float(sol[cell or _addr(wb, sheet, label)].value[0][0])
    return value


def _sheet(wb, key):
    return wb.sheetnames[1 + list(DEPS).index(key)]


@pytest.mark.parametrize("key", list(DEPS))
def test_edited_batch_context_and_bandwidth_recompute_as_the_library(book, key):
    _p, wb, _m = book
    dep, sh = DEPS[key], _sheet(wb, key)
    bw = dep.hardware.mem_bw_bytes_per_s
    for batch, ctx, f in ((3, 1000, 1.0), (40, 4096, 0.5), (200, 8192, 2.0)):
        v = _recalc(book, {(sh, "batch"): batch, (sh, "context tokens"): ctx,
                           (sh, "memory bandwidth"): f * bw})
        d = dep.with_(hardware=dep.hardware.with_(mem_bw_bytes_per_s=f * bw))
        r = tk.decode(d, batch, ctx, on_oom="mark")
        fit = tk.memory_fit(d, batch, ctx)
        assert v(sh, "step time") == pytest.approx(r.step_time_s, rel=REL)
        assert v(sh, "tokens/s per device") == pytest.approx(r.tokens_per_s_per_device, rel=REL)
        assert v(sh, "communication time per step") == pytest.approx(
            sum(float(c.time_s) for c in tk.step_comm(d, batch / d.pp, 1.0, 1.0, "decode")),
            rel=REL, abs=1e-15)
        assert v(sh, "memory total per device") == pytest.approx(fit.total_bytes, rel=REL)
        assert v(sh, "fits") == float(bool(fit.fits))
        assert v(sh, "max batch") == tk.max_batch(d, ctx)
        assert v(sh, "cost per million tokens") == pytest.approx(
            tk.cost_per_million_tokens(PRICE, r.tokens_per_s_per_device), rel=REL)
        # the comparison sheet follows the edited sheet
        col = 3 + list(DEPS).index(key)
        row = [r[0] for r in wb["compare"].iter_rows(values_only=True)].index("step time") + 1
        cmp = f"'[sizing.xlsx]COMPARE'!{openpyxl.utils.get_column_letter(col)}{row}"
        assert v(None, cell=cmp) == pytest.approx(r.step_time_s, rel=REL)


def test_cells_are_named_and_formulas_use_the_names(book):
    _p, wb, _m = book
    names = wb.defined_names
    for sheet in wb.sheetnames[1:-1]:
        for i, row in enumerate(wb[sheet].iter_rows(values_only=True), 1):
            label, value, _unit, _note, name = row
            if i == 1 or value is None or isinstance(value, str) and not value.startswith("="):
                continue
            assert name and names[name].attr_text.endswith(f"!$B${i}"), (sheet, label)
            if isinstance(value, str):
                # no cell address left: every reference is a name
                assert not re.search(r"(?<![A-Za-z0-9_])B\d+\b", value), (label, value)
    k = 1 + list(DEPS).index("tp4")
    assert f"batch_{k}" in names and f"step_time_{k}" in names


def test_inputs_are_filled_and_formatted(book):
    _p, wb, _m = book
    ws = wb[_sheet(wb, "single")]
    rows = {r[0].value: r for r in ws.iter_rows(min_row=2) if r[0].value}
    assert rows["batch"][1].fill.fgColor.rgb.endswith("FFF2CC")      # an input
    assert rows["step time"][1].number_format == "0.000E+00"
    assert rows["memory total per device"][1].number_format == "#,##0"


def test_bad_arguments_are_named(tmp_path):
    p = tmp_path / "x.xlsx"
    with pytest.raises(tk.TokenomicsError, match="non-empty sequence"):
        export_sizing_workbook(p, [], 1, 10)
    with pytest.raises(tk.TokenomicsError, match=r"deployments\[1\] is a str"):
        export_sizing_workbook(p, [DEPS["single"], "h100-sxm"], 1, 10)
    with pytest.raises(tk.TokenomicsError, match="at most 50"):
        export_sizing_workbook(p, [DEPS["single"]] * 51, 1, 10)
    with pytest.raises(tk.TokenomicsError, match="prices must be"):
        export_sizing_workbook(p, DEPS["single"], 1, 10, prices="cheap")
    with pytest.raises(tk.TokenomicsError, match="batch"):
        export_sizing_workbook(p, DEPS["single"], 0, 10)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_libreoffice_computes_the_same_step_time(book, tmp_path):
    path, wb, _m = book
    subprocess.run(["soffice", "--headless", "--convert-to", "xlsx", "--outdir",
                    str(tmp_path), str(path)], check=True, capture_output=True, timeout=180)
    calc = openpyxl.load_workbook(tmp_path / "sizing.xlsx", data_only=True)
    for key, dep in DEPS.items():
        sh = _sheet(wb, key)
        got = {r[0]: r[1] for r in calc[sh].iter_rows(values_only=True)}
        assert got["step time"] == pytest.approx(tk.decode(dep, BATCH, CTX).step_time_s,
                                                 rel=REL)


def test_pandas_reads_the_library_s_numbers_without_a_spreadsheet_program(book):
    # issue 26: every output read NaN in pandas (and None in openpyxl data_only) until a
    # spreadsheet program recalculated the file; each formula now carries its value
    import pandas as pd
    path, wb, _m = book
    for key, dep in DEPS.items():
        t = pd.read_excel(path, sheet_name=_sheet(wb, key)).set_index("label").value
        r = tk.decode(dep, BATCH, CTX, on_oom="mark")
        assert float(t["step time"]) == pytest.approx(r.step_time_s, rel=REL), key
        assert float(t["tokens/s per device"]) == pytest.approx(r.tokens_per_s_per_device,
                                                                rel=REL), key
        assert float(t["max batch"]) == tk.max_batch(dep, CTX)
    cmp = pd.read_excel(path, sheet_name="compare").set_index("output")
    assert cmp.drop(columns="unit").loc["step time"].notna().all()


def test_the_layout_is_not_an_input_cell(book):
    # issue 26: the TP cell was a yellow input; editing 2 -> 4 doubled the devices and
    # nothing else. tp and pp are now constants of the formulas, stated in the Deployment rows
    _p, wb, _m = book
    for sheet in wb.sheetnames[1:-1]:
        labels = [r[0] for r in wb[sheet].iter_rows(values_only=True)]
        assert "tp" not in labels and "pp" not in labels and "layout" in labels
