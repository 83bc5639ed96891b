"""The design times every corpus row exactly as the library's public functions do.

One law (issue 24, item 2): the calibration evaluates the engine's own functions over every
corpus row at once. These tests hold the design equal to the public path row by row:
``steady_state`` / ``steady_state_over`` on each row's ``Deployment``.
"""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.calibration.corpus import forecast, load_corpus
from tokenomics.calibration.design import build_design, predict_rows
from tokenomics.calibration.fitting import calibration_rows, committed_fit, efficiency_presets


@pytest.fixture(scope="module")
def fitted():
    rows = calibration_rows()
    return rows, build_design(rows)


@pytest.mark.parametrize("eff", [
    tk.ROOFLINE,
    tk.Efficiency(mbu=0.5, mfu=0.4, overlap=0.3, expert_tile_tokens=50.0,
                  attention_mfu_scale=0.5, link_efficiency=0.7, step_overhead_s=0.001,
                  layer_overhead_s=2e-6, request_overhead_s=0.004, collective_overlap=0.3,
                  fp4_mfu_scale=0.6, expert_imbalance=0.5, token_overhead_s=3e-5),
    tk.Efficiency(mbu=0.9, mfu=0.7, overlap=0.0, link_efficiency=0.3, collective_overlap=0.0,
                  expert_half_tokens=100.0, expert_imbalance=1.0),
], ids=["roofline", "custom", "serial"])
def test_the_design_equals_the_library_on_every_row(fitted, eff):
    rows, d = fitted
    fast = predict_rows(d, eff)
    lib = np.array([forecast(r, eff) for r in rows])
    np.testing.assert_allclose(fast, lib, rtol=1e-9)


def test_the_stack_values_reach_the_library_through_the_deployment(fitted):
    # the calibrated preset carries each stack's and hardware family's values; a row's
    # Deployment (engine named) takes its own, and the public steady_state gives what the fit
    # computed with one value per row
    rows, d = fitted
    fast = predict_rows(d, committed_fit().row_parameters(d))
    cal = efficiency_presets()["calibrated"]
    lib = np.array([forecast(r, cal) for r in rows])
    np.testing.assert_allclose(fast, lib, rtol=1e-9)


def test_every_pipeline_row_is_expressed(fitted):
    rows, d = fitted
    pp = [i for i, r in enumerate(rows) if r.pp > 1]
    assert len(pp) >= 40                          # MLPerf v5.0 PP2 rows, RTX PRO PP2-PP8
    assert np.all(np.isfinite(d.measured[pp])) and np.all(predict_rows(d, tk.ROOFLINE)[pp] > 0)


def test_prefill_pool_rows_are_refused():
    rows = [r for r in load_corpus() if r.pool == "prefill"]
    with pytest.raises(tk.TokenomicsError, match="forecast by corpus.forecast alone"):
        build_design(rows)


def test_collective_overhead_is_refused(fitted):
    _, d = fitted
    with pytest.raises(tk.TokenomicsError, match="collective_overhead_s"):
        predict_rows(d, tk.Efficiency(collective_overhead_s=1e-6))


def test_a_row_of_a_dataset_is_timed_over_its_lengths():
    # an MLPerf row runs its task's distribution: the slot context is length-biased above
    # the I + O/2 a mean-only forecast uses
    r = next(r for r in load_corpus() if r.workload == "mlperf-llama2-70b")
    assert r.isl == 222
    assert r.lengths.slot_context_mean > r.isl + r.osl / 2 + 50
