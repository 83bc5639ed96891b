"""Calibration: the step model against published measurements.

Measurements expressed as deployments, the bound against each, the fitted efficiencies and
their forecast intervals.

Modules
-------
``corpus``
    The measurement corpus: published serving results as steady-state forecasts and bounds.
``design``
    The corpus as a design: each row's work, timed by the step engine's own law, all rows at once.
``fitting``
    Efficiencies fitted to published measurements, with cross-validated error and intervals.
``pooling``
    The efficiency model's parameters, partially pooled across serving stacks, and their fit.
``measurements``
    Published measurements against the library's roofline bound.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "METRICS": ".corpus",
    "GROUPINGS": ".corpus",
    "MEMORY_FRACTION": ".corpus",
    "CorpusRow": ".corpus",
    "corpus_path": ".corpus",
    "load_corpus": ".corpus",
    "concurrency": ".corpus",
    "forecast": ".corpus",
    "chunk_tokens": ".corpus",
    "bound": ".corpus",
    "speed_ratio": ".corpus",
    "corpus_frame": ".corpus",
    "PARAMS": ".fitting",
    "FIXED": ".fitting",
    "F_SCALE": ".pooling",
    "INTERVAL": ".intervals",
    "predict": ".fitting",
    "calibration_rows": ".fitting",
    "excluded_rows": ".fitting",
    "fit": ".fitting",
    "fit_design": ".fitting",
    "grouped_cv": ".fitting",
    "group_interval": ".intervals",
    "cv_coverage": ".intervals",
    "transfer_report": ".fitting",
    "calibration_summary": ".fitting",
    "UNEXPRESSED": ".fitting",
    "Design": ".design",
    "build_design": ".design",
    "predict_rows": ".design",
    "Calibration": ".fitting",
    "calibration_path": ".fitting",
    "committed": ".fitting",
    "efficiency_presets": ".fitting",
    "calibration_report": ".fitting",
    "forecast_interval": ".fitting",
    "write_calibration": ".fitting",
    "Measurement": ".measurements",
    "load_measurements": ".measurements",
    "speed": ".measurements",
    "bound_for": ".measurements",
    "measured_vs_bound": ".measurements",
    "stack_of": ".corpus",
    "compute_format": ".corpus",
    "replace_lengths": ".corpus",
    "trtllm_bench_caps": ".corpus",
    "runtime_caps": ".corpus",
    "held_tokens": ".corpus",
    "ep_exchange_of": ".corpus",
    "row_parameters": ".design",
    "committed_fit": ".fitting",
    "interval_for": ".fitting",
    "novelty_of": ".fitting",
    "cv_figures": ".fitting",
    "cv_spread": ".fitting",
    "to_fitted": ".pooling",
    "from_fitted": ".pooling",
    "Fit": ".pooling",
    "soft_l1": ".pooling",
    "Problem": ".pooling",
    "starts": ".pooling",
    "fit_problem": ".pooling",
}
_MODULES = ('corpus', 'design', 'fitting', 'intervals', 'measurements', 'pooling',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
