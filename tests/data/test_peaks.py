"""Figures beside the dense peaks (data/peaks.py): quoted figures of unknown convention are
kept apart and used only when asked (issue 27), measured achievable rates stay below peaks."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.catalog import default_catalog, parse_hardware_file
from tokenomics.data.peaks import QUOTED_SUFFIX


def test_rubin_has_no_dense_peak_and_a_quoted_one():
    # NVIDIA, CES 2026 (buzzbytech-rubin-ces2026): "50 PF NVFP4 inference" per Rubin GPU,
    # dense or sparse not stated: no dense peak, the figure under [quoted]
    r = tk.hardware("rubin")
    assert dict(r.peak_flop_per_s) == {} and r.quoted_flop_per_s["fp4"] == 50e15
    d = tk.Deployment("llama-3.1-70b", "rubin", weight_dtype="nvfp4", kv_dtype="fp8",
                      compute_dtype="nvfp4")
    with pytest.raises(tk.NotPublishedError, match="dense fp4 peak is not published"):
        tk.prefill(d, 8192)


def test_allow_quoted_reads_the_figure_and_marks_everything_computed_on_it():
    q = tk.hardware("rubin", allow_quoted=True)
    assert q.id == "rubin" + QUOTED_SUFFIX and "dense or sparse unstated: fp4" in q.name
    assert q.peak_flop_per_s["fp4"] == 50e15
    assert tk.hardware(q) is q and q.with_quoted_peaks() is q          # idempotent
    d = tk.Deployment("llama-3.1-70b", q, weight_dtype="nvfp4", kv_dtype="fp8",
                      compute_dtype="nvfp4")
    assert "'rubin-quoted'" in repr(d)
    assert tk.prefill(d, 8192).time_s > 0
    # S71, Vera Rubin and Groq on one roofline: Rubin's quoted NVFP4 over its 22 TB/s HBM4
    # is 50e15 / 22e12 = 2,273 FLOP/B; Groq's LPU 750 TOPS INT8 over 80 TB/s of SRAM, 9.4
    assert tk.ridge_point(q, "nvfp4") == pytest.approx(50e15 / 22e12)
    assert tk.ridge_point(tk.hardware("groq-lpu"), "int8") == pytest.approx(750e12 / 80e12)


def test_allow_quoted_refuses_what_it_cannot_do():
    with pytest.raises(tk.TokenomicsError, match="no quoted compute figure"):
        tk.hardware("h100-sxm", allow_quoted=True)
    with pytest.raises(tk.TokenomicsError, match="allow_quoted must be True or False"):
        tk.hardware("rubin", allow_quoted="yes")


@pytest.mark.parametrize("edit, match", [
    (('convention = "unknown"', 'convention = "dense"'), r"quoted.convention: must be \"unknown\""),
    (('fp4 = { value = 50, unit = "PFLOP/s"', 'fp3 = { value = 50, unit = "PFLOP/s"'),
     r"quoted.*fp3"),
    (('fp4 = { value = 50, unit = "PFLOP/s"', 'fp4 = { value = 50, unit = "PB/s"'),
     "quoted.fp4.unit"),
])
def test_a_malformed_quoted_table_is_named_by_file_and_field(tmp_path, edit, match):
    src = (default_catalog().hardware["rubin"].path)
    text = open(src).read()
    assert edit[0] in text
    p = tmp_path / "rubin.toml"
    p.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(tk.CatalogError, match=match):
        parse_hardware_file(p, default_catalog().sources)


def test_a_device_with_quoted_figures_pickles_and_keeps_them_read_only():
    import pickle

    for hw in (tk.hardware("rubin"), tk.hardware("rubin", allow_quoted=True)):
        back = pickle.loads(pickle.dumps(hw))
        assert back == hw and dict(back.quoted_flop_per_s) == {"fp4": 50e15}
        with pytest.raises(TypeError):
            back.quoted_flop_per_s["fp4"] = 1.0
