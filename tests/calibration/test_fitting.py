"""Calibration: efficiencies fitted to the published measurements, cross-validated."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.calibration.fitting import (
    PARAMS,
    calibration_report,
    calibration_rows,
    committed,
    efficiency_presets,
    excluded_rows,
    fit,
    forecast_interval,
)


@pytest.fixture(scope="module")
def report():
    return calibration_report()


def test_refit_reproduces_the_committed_parameters():
    theta = fit()
    cal = committed()
    for name, v in zip(PARAMS, theta, strict=True):
        assert v == pytest.approx(getattr(cal.efficiency, name), rel=1e-6, abs=1e-12)
    assert set(cal.inputs) == {m.id for m in calibration_rows()}


def test_cross_validated_error_beats_the_roofline(report, capsys):
    med_cv = report.cv_relative_error.median()
    med_bound = report.bound_relative_error.median()
    with capsys.disabled():
        print(f"\nleave-one-out median |error| {med_cv:.1%} (worst "
              f"{report.cv_relative_error.max():.1%}); roofline {med_bound:.1%}")
    assert med_cv <= 0.10           # the target
    assert med_cv < med_bound       # strictly better than the pure roofline


def test_forecast_within_bound_and_intervals_contain_it(report):
    assert (report.forecast <= report.bound * (1 + 1e-12)).all()
    assert (report.forecast_low <= report.forecast).all()
    assert (report.forecast <= report.forecast_high).all()
    assert (report.forecast_high <= report.bound * (1 + 1e-12)).all()


def test_excluded_rows_say_why():
    ex = excluded_rows()
    assert list(ex.id) == ["B24"] and "input length" in ex.reason.iloc[0]


def test_presets():
    p = efficiency_presets()
    assert p["roofline"] == tk.ROOFLINE
    cal = p["calibrated"]
    assert 0 < cal.mfu < 1 and 0 < cal.mbu < 1 and cal.step_overhead_s >= 0


@given(b=st.integers(1, 256), c=st.integers(64, 16_384),
       model=st.sampled_from(["llama-3.1-8b", "qwen3-32b", "gemma-3-27b"]))
def test_forecast_never_faster_than_the_bound(b, c, model):
    d = tk.Deployment(model, "h200", tp=2)
    cal = efficiency_presets()["calibrated"]
    bound = tk.decode(d, b, c, on_oom="mark")
    fc = tk.decode(d.with_(efficiency=cal), b, c, on_oom="mark")
    assert fc.step_time_s >= bound.step_time_s
    lo, hi = forecast_interval(fc.tokens_per_s_per_user, bound.tokens_per_s_per_user)
    assert lo <= fc.tokens_per_s_per_user <= hi <= max(bound.tokens_per_s_per_user,
                                                       fc.tokens_per_s_per_user)


@given(b=st.integers(1, 64), c=st.integers(64, 8192))
def test_presets_identical_where_efficiencies_are_one(b, c):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    one = d.with_(efficiency=tk.Efficiency(mfu=1.0, mbu=1.0, step_overhead_s=0.0))
    r1, r2 = tk.decode(d, b, c, on_oom="mark"), tk.decode(one, b, c, on_oom="mark")
    assert r1.step_time_s == r2.step_time_s


def test_malformed_calibration_file(tmp_path, monkeypatch):
    import tokenomics.calibration.fitting as cal_mod

    p = tmp_path / "calibrated.toml"
    p.write_text('mbu = 0.7\nmfu = 0.3\n')
    monkeypatch.setattr(cal_mod, "calibration_path", lambda: p)
    cal_mod.committed.cache_clear()
    try:
        with pytest.raises(tk.CatalogError, match="step_overhead_s: required key is missing"):
            cal_mod.committed()
    finally:
        cal_mod.committed.cache_clear()
