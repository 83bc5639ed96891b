"""The design matrix times every corpus row exactly as the library's steady_state does."""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.calibration.corpus import forecast, load_corpus
from tokenomics.calibration.design import build_design, predict_rows
from tokenomics.calibration.fitting import committed


@pytest.mark.parametrize("eff", [
    tk.ROOFLINE,
    "committed",
    tk.Efficiency(mbu=0.5, mfu=0.4, overlap=0.3, expert_half_tokens=50.0,
                  attention_mfu_scale=0.5, link_efficiency=0.7, step_overhead_s=0.001,
                  layer_overhead_s=2e-6, request_overhead_s=0.004),
])
def test_closed_form_equals_the_library_on_every_row(eff):
    eff = committed().efficiency if eff == "committed" else eff
    # the fitted rows: the design serves the fit; for a few unfitted EP rows the collective
    # algorithm chosen at link efficiency 1 is not the one chosen at the row's (module notes)
    rows = [r for r in load_corpus() if r.pool != "prefill" and r.fitted]
    fast = predict_rows(build_design(rows), eff)
    lib = np.array([forecast(r, eff) for r in rows])
    np.testing.assert_allclose(fast, lib, rtol=1e-9)


def test_prefill_pool_rows_are_refused():
    rows = [r for r in load_corpus() if r.pool == "prefill"]
    with pytest.raises(tk.TokenomicsError, match="forecast by corpus.forecast alone"):
        build_design(rows)


def test_collective_overhead_is_refused():
    d = build_design(load_corpus()[:2])
    with pytest.raises(tk.TokenomicsError, match="collective_overhead_s"):
        predict_rows(d, tk.Efficiency(collective_overhead_s=1e-6))
