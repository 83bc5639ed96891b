"""Calibration: the efficiency model fitted to the corpus, cross-validated by group.

The figures asserted here are the issue's targets and physical limits, not copies of the
fit's output: a fitted fraction of peak lies in (0, 1], a forecast never beats the bound,
held-out error beats the pure roofline's, the 80% interval holds 75-85% of held-out rows in
every grouping, and a fresh cross-validation reproduces the committed figures within half a
point (issue 24). The issue's error targets that the fit does not meet yet are an expected
failure (``test_the_issue_24_error_targets``), so that meeting them shows.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.calibration.corpus import GROUPINGS
from tokenomics.calibration.fitting import (
    NOVELTY,
    PARAMS,
    calibration_report,
    calibration_rows,
    calibration_summary,
    committed,
    efficiency_presets,
    excluded_rows,
    forecast_interval,
    interval_for,
    novelty_of,
)

#: Half a percentage point: how far a fresh cross-validated median may sit from the
#: committed one (issue 24's reproducibility tolerance).
TOLERANCE = 0.005


@pytest.fixture(scope="module")
def report():
    return calibration_report()


@pytest.fixture(scope="module")
def summary(report):
    return calibration_summary(report).set_index("slice")


def test_the_committed_inputs_are_the_fitted_rows():
    cal = committed()
    assert set(cal.inputs) == {r.id for r in calibration_rows()}
    assert len(cal.inputs) >= 600                    # issue 24: a corpus of 600 rows or more


def test_fitted_parameters_are_physical():
    e = committed().efficiency
    assert 0.3 < e.mbu <= 1 and 0.3 < e.mfu <= 1          # fractions of a datasheet peak
    assert 0 <= e.overlap <= 1 and 0 <= e.collective_overlap <= 1
    assert e.mfu * e.attention_mfu_scale <= 1
    assert 0 < e.link_efficiency <= 1
    assert e.step_overhead_s == 0.0 and 0 < e.layer_overhead_s < 5e-4   # < 0.5 ms a layer
    assert 0 < e.token_overhead_s < 1e-4                   # under 0.1 ms a sampled token
    assert 0 <= e.request_overhead_s < 0.05
    assert 1 <= e.expert_tile_tokens <= 512                # a GEMM tile's rows
    assert 0.5 <= e.expert_mfu_scale < 1                   # grouped GEMMs below a dense one
    for s, vals in e.stacks.items():                       # every stack's values physical
        tk.Efficiency(**vals)
        assert 0.3 < vals["mbu"] <= 1 and 0.3 < vals["mfu"] <= 1, s


def test_committed_cv_figures_reproduce_within_half_a_point(report):
    cv = committed().cv
    for g in (*GROUPINGS, "rows"):
        fresh = float(report[f"cv_{g}_error"].median())
        assert fresh == pytest.approx(cv[f"{g}_median_error"], abs=TOLERANCE), g


def test_the_committed_spread_over_perturbed_starts_is_under_half_a_point():
    spread = committed().spread
    assert spread, "measurements/calibrated.toml records no [cv_spread]"
    for k, v in spread.items():
        if k.endswith("median_error"):
            assert v <= TOLERANCE, k


def test_interval_coverage_is_cross_validated_and_near_80_percent():
    # each group judged by the interval built from the other groups (a new group's bias
    # beside a row's scatter, tokenomics.calibration.intervals), leave-one-stack-out included
    cv = committed().cv
    for g in (*GROUPINGS, "rows"):
        assert 0.75 <= cv[f"{g}_interval_coverage"] <= 0.85, g   # issue 24's band for 80%


def test_held_out_error_beats_the_roofline_in_every_grouping(summary, capsys):
    s = summary
    with capsys.disabled():
        print("\n" + s[["rows", "in_sample", *[f"cv_{g}" for g in GROUPINGS], "cv_rows",
                        "roofline"]].round(3).head(4).to_string())
    for g in GROUPINGS:
        assert s.loc["all", f"cv_{g}"] < s.loc["all", "roofline"] / 2
        assert s.loc["moe", f"cv_{g}"] < s.loc["moe", "roofline"] / 2
        assert s.loc["tpot_under_load", f"cv_{g}"] < s.loc["tpot_under_load", "roofline"] / 2
    # in-sample error is at most the held-out error: the folds are honest
    assert s.loc["all", "in_sample"] <= min(s.loc["all", f"cv_{g}"] for g in GROUPINGS)


@pytest.mark.xfail(strict=True, reason="issue 24: the held-out error is 11.8-15.6% (MoE 14-19%), "
                   "above the 10% / 12% targets; see docs/validation.md")
def test_the_issue_24_error_targets(summary):
    for g in GROUPINGS:
        assert summary.loc["all", f"cv_{g}"] <= 0.10
        assert summary.loc["moe", f"cv_{g}"] <= 0.12
        assert summary.loc["tpot_under_load", f"cv_{g}"] <= 0.12
        worst = summary[summary.index.str.startswith(f"{g}=")][f"cv_{g}"].max()
        assert worst <= 0.20


def test_intervals_widen_for_what_the_corpus_has_not_seen():
    lo0, hi0 = interval_for(())
    for g in NOVELTY:
        lo, hi = interval_for((g,))
        assert lo <= lo0 and hi >= hi0
    lo3, hi3 = interval_for(NOVELTY)
    assert lo3 <= min(interval_for((g,))[0] for g in NOVELTY)
    assert hi3 >= max(interval_for((g,))[1] for g in NOVELTY)
    with pytest.raises(tk.TokenomicsError, match="novel must name"):
        interval_for(("colour",))


def test_a_deployment_says_what_is_new_about_it():
    seen = tk.Deployment("llama-3.1-70b", "h200", tp=2, engine="trtllm")
    assert novelty_of(seen) == ()
    assert novelty_of(seen.with_(engine=None)) == ("stack",)
    new = tk.Deployment("kimi-k2", "tpu-v6e", tp=8, ep=8, weight_dtype="fp8",
                        compute_dtype="bf16", engine="jetstream")
    assert novelty_of(new) == NOVELTY
    b = tk.decode(seen, 8, 4096).tokens_per_s_per_user
    f = tk.decode(seen.with_(efficiency=efficiency_presets()["calibrated"]), 8, 4096)
    lo1, hi1 = forecast_interval(f.tokens_per_s_per_user, b, seen)
    lo2, hi2 = forecast_interval(f.tokens_per_s_per_user, b, seen.with_(engine=None))
    assert lo2 <= lo1 <= f.tokens_per_s_per_user <= hi1 <= hi2


def test_forecast_within_bound_and_intervals_contain_it(report):
    speed = report.metric.str.contains("tok_s")
    s, b = report.forecast[speed], report.bound[speed]
    assert (s <= b * (1 + 1e-12)).all()
    t, tb = report.forecast[~speed], report.bound[~speed]
    assert (t >= tb * (1 - 1e-12)).all()
    assert (report.forecast_low <= report.forecast * (1 + 1e-12)).all()
    assert (report.forecast <= report.forecast_high * (1 + 1e-12)).all()


def test_excluded_rows_say_why():
    ex = excluded_rows().set_index("id")
    # DeepSeek's prefill pool (no prompt length published): a bound check only
    assert "DS-P1" in ex.index and "bound check only" in ex.reason["DS-P1"]


def test_presets():
    p = efficiency_presets()
    assert p["roofline"] == tk.ROOFLINE
    cal = p["calibrated"]
    assert 0 < cal.mfu < 1 and 0 < cal.mbu < 1 and cal.label == "calibrated"
    assert set(PARAMS) <= {f for f in cal.stacks["|"]}


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 256), c=st.integers(64, 16_384),
       model=st.sampled_from(["llama-3.1-8b", "qwen3-32b", "gemma-3-27b", "mixtral-8x7b"]),
       engine=st.sampled_from([None, "trtllm", "vllm", "sglang"]))
def test_forecast_never_faster_than_the_bound(b, c, model, engine):
    d = tk.Deployment(model, "h200", tp=2, engine=engine)
    cal = efficiency_presets()["calibrated"]
    bound = tk.decode(d, b, c, on_oom="mark")
    fc = tk.decode(d.with_(efficiency=cal), b, c, on_oom="mark")
    assert fc.step_time_s >= bound.step_time_s
    lo, hi = forecast_interval(fc.tokens_per_s_per_user, bound.tokens_per_s_per_user, d)
    assert lo <= fc.tokens_per_s_per_user <= hi <= max(bound.tokens_per_s_per_user,
                                                       fc.tokens_per_s_per_user)


def test_no_overlap_adds_the_shorter_term():
    # overlap 0: every operator takes t_c + t_m; by hand for one decode step of Llama 8B.
    from tokenomics.physics.engine import operator_times
    from tokenomics.physics.operators import step_costs

    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    costs = step_costs(d, 8, 1, 1024, 1)
    serial = d.with_(efficiency=tk.Efficiency(overlap=0.0))
    t = operator_times(serial, costs)
    hand = sum(o.flops / d.compute_peak_flop_per_s("x") + o.bytes / d.hardware.mem_bw_bytes_per_s
               for o in costs)
    assert float(t.roofline_s) == pytest.approx(hand, rel=1e-12)
    assert float(operator_times(d, costs).roofline_s) < hand


def test_small_expert_gemms_run_below_mfu():
    # m tokens per expert: at half-efficiency tokens h, x m / (m + h); with a tile of T rows,
    # x m / (m^4 + T^4)^(1/4) (about m / max(m, T))
    from tokenomics.physics.engine import compute_scale
    from tokenomics.physics.operators import step_costs

    ex = step_costs(tk.Deployment("mixtral-8x7b", "h100-sxm", tp=2), 16, 1, 512, 1)[7]
    distinct = 8 * (1 - (6 / 8) ** 16)       # 16 tokens x top-2 over 8 experts
    m = 16 * 2 / distinct
    half = tk.Deployment("mixtral-8x7b", "h100-sxm", tp=2,
                         efficiency=tk.Efficiency(expert_half_tokens=100.0))
    assert float(compute_scale(half, ex)) == pytest.approx(m / (m + 100.0), rel=1e-9)
    tile = half.with_(efficiency=tk.Efficiency(expert_tile_tokens=64.0))
    assert float(compute_scale(tile, ex)) == pytest.approx(m / (m**4 + 64.0**4) ** 0.25,
                                                           rel=1e-9)
    # far above the tile the penalty vanishes
    big = step_costs(tile, 8192, 1, 512, 1)[7]
    assert float(compute_scale(tile, big)) > 0.999


def test_grouped_expert_gemms_stay_below_a_dense_gemm_at_full_tiles():
    # expert_mfu_scale s: the routed experts run at s x the tile term at any size, and only
    # they do (the attention projections and the shared expert of the same step keep 1)
    from tokenomics.physics.engine import compute_scale
    from tokenomics.physics.operators import OPERATORS, step_costs

    e = tk.Efficiency(expert_tile_tokens=64.0, expert_mfu_scale=0.8)
    d = tk.Deployment("mixtral-8x7b", "h100-sxm", tp=2, efficiency=e)
    costs = step_costs(d, 16, 1, 512, 1)
    m = 16 * 2 / (8 * (1 - (6 / 8) ** 16))      # tokens per distinct expert, as above
    ex = costs[OPERATORS.index("moe_experts")]
    assert float(compute_scale(d, ex)) == pytest.approx(0.8 * m / (m**4 + 64.0**4) ** 0.25,
                                                        rel=1e-9)
    big = step_costs(d, 8192, 1, 512, 1)[OPERATORS.index("moe_experts")]
    assert float(compute_scale(d, big)) == pytest.approx(0.8, rel=1e-3)
    for name in ("attn_qkv", "attn_out", "moe_shared"):
        assert float(compute_scale(d, costs[OPERATORS.index(name)])) == 1.0
    with pytest.raises(tk.TokenomicsError, match=r"expert_mfu_scale must be in \(0, 1\]"):
        tk.Efficiency(expert_mfu_scale=1.2)


def test_host_time_grows_with_the_sampled_tokens_per_scheduler():
    # token_overhead 20 us: 64 decodes add 1.28 ms to a step; over 8 attention-DP ranks
    # (each its own scheduler) 0.16 ms
    e = tk.Efficiency(token_overhead_s=20e-6)
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", efficiency=e)
    base = tk.decode(d.with_(efficiency=tk.ROOFLINE), 64, 1024)
    r = tk.decode(d, 64, 1024)
    assert r.time_s - base.time_s == pytest.approx(64 * 20e-6, rel=1e-9)
    ds = tk.Deployment("deepseek-v3", "h200", tp=8, ep=8, dp_attention=8, efficiency=e)
    r8 = tk.decode(ds, 64, 1024)
    assert r8.overhead_s == pytest.approx(64 * 20e-6 / 8, rel=1e-9)


def test_malformed_calibration_file(tmp_path, monkeypatch):
    import tokenomics.calibration.fitting as cal_mod

    p = tmp_path / "calibrated.toml"
    p.write_text('mbu = 0.7\nmfu = 0.3\n')
    monkeypatch.setattr(cal_mod, "calibration_path", lambda: p)
    cal_mod.committed.cache_clear()
    try:
        with pytest.raises(tk.CatalogError, match="overlap: required key is missing"):
            cal_mod.committed()
    finally:
        cal_mod.committed.cache_clear()


def test_bad_efficiency_fields_raise():
    with pytest.raises(tk.TokenomicsError, match="overlap"):
        tk.Efficiency(overlap=1.5)
    with pytest.raises(tk.TokenomicsError, match="attention_mfu_scale"):
        tk.Efficiency(mfu=0.8, attention_mfu_scale=1.5)
    with pytest.raises(tk.TokenomicsError, match="expert_tile_tokens"):
        tk.Efficiency(expert_tile_tokens=float("nan"))
    with pytest.raises(tk.TokenomicsError, match="token_overhead_s"):
        tk.Efficiency(token_overhead_s=-1e-6)
    with pytest.raises(tk.TokenomicsError, match="stacks"):
        tk.Efficiency(stacks={"nvidia-vllm|": {"mbu": 0.5}})      # no pooled values
    with pytest.raises(tk.TokenomicsError, match="unknown fields"):
        tk.Efficiency(stacks={"|": {"colour": 1.0}})
    for bad in (dict(overlap="x"), dict(mfu=True), dict(expert_half_tokens=None)):
        with pytest.raises(tk.TokenomicsError, match="must be a number"):
            tk.Efficiency(**bad)


def test_fp4_scale_applies_to_fp4_gemms_not_to_fp8_attention():
    # Llama 3.3 70B with NVFP4 weights and an FP8 cache on B200: the GEMMs run at the FP4
    # peak times mfu x fp4_mfu_scale; attention runs at FP8 (the cache's format), unscaled.
    from tokenomics.physics.engine import compute_scale
    from tokenomics.physics.operators import step_costs

    e = tk.Efficiency(fp4_mfu_scale=0.5)
    d = tk.Deployment("llama-3.3-70b", "b200", weight_dtype="nvfp4", compute_dtype="nvfp4",
                      kv_dtype="fp8", efficiency=e)
    ops = {o.name: o for o in step_costs(d, 8, 1, 1024, 1)}
    assert d.attention_dtype.startswith("fp8")
    assert compute_scale(d, ops["attn_qkv"]) == 0.5
    assert compute_scale(d, ops["attn_core"]) == 1.0
    fp8 = tk.Deployment("llama-3.3-70b", "b200", weight_dtype="fp8", compute_dtype="fp8",
                        efficiency=e)
    assert compute_scale(fp8, ops["attn_qkv"]) == 1.0
    with pytest.raises(tk.TokenomicsError, match="fp4_mfu_scale"):
        tk.Efficiency(fp4_mfu_scale=0.0)


def test_write_goes_where_the_user_says_never_into_the_install(tmp_path, monkeypatch):
    # Issue 13, reproducer 12: calibrate --write rewrote a file inside site-packages. A fit
    # of every eighth row keeps the test short; the file format is the same.
    import tokenomics.calibration.fitting as cal_mod

    few = cal_mod.calibration_rows()[::8]
    monkeypatch.setattr(cal_mod, "calibration_rows", lambda: few)
    monkeypatch.chdir(tmp_path)
    data = cal_mod.write_calibration()                       # default: ./calibrated.toml
    assert (tmp_path / "calibrated.toml").is_file()
    assert data["command"].startswith("tokenomics calibrate --write")
    monkeypatch.setattr(cal_mod, "calibration_path", lambda: tmp_path / "calibrated.toml")
    cal_mod.committed.cache_clear()
    try:
        assert len(cal_mod.committed().inputs) == len(few)    # the file reads back
    finally:
        cal_mod.committed.cache_clear()
    fake_install = tmp_path / "site" / "tokenomics" / "_data" / "measurements"
    fake_install.mkdir(parents=True)
    monkeypatch.setattr(cal_mod, "calibration_path", lambda: fake_install / "calibrated.toml")
    with pytest.raises(tk.TokenomicsError, match="refusing to rewrite the installed package"):
        cal_mod.write_calibration(fake_install / "calibrated.toml")
    with pytest.raises(tk.TokenomicsError, match="does not exist"):
        cal_mod.write_calibration(tmp_path / "no" / "such" / "x.toml")
    cal_mod.committed.cache_clear()


def test_transfer_report_holds_a_source_family_out():
    from tokenomics.calibration import transfer_report

    t = transfer_report("mlenergy")
    # the 251 ML.ENERGY V3 runs: mean TPOT at the measured concurrency, a time per token
    assert len(t) == 251 and set(t.metric) == {"server_tpot_at_concurrency"}
    assert (t.measured >= t.bound).all()            # the bound is a lower bound on time
    assert (t.roofline <= t.measured * 1.0000001).all()
    with pytest.raises(tk.TokenomicsError, match="no fitted corpus rows of source family"):
        transfer_report("x")
    with pytest.raises(tk.TokenomicsError, match="source_family must be"):
        transfer_report(3)


def test_grouped_cv_reports_progress_once_per_held_out_group():
    from tokenomics.calibration.fitting import grouped_cv

    rows = calibration_rows()[::8]
    groups = len({r.source_family for r in rows})
    seen = []
    grouped_cv(rows, progress=lambda done, total, label: seen.append((done, total, label)),
               groupings=("source_family",))
    assert [s[0] for s in seen] == list(range(1, groups + 1))
    assert {s[1] for s in seen} == {groups}
    assert seen[0][2].startswith("source_family=")
