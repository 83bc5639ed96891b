"""Calibration: the step model against published measurements.

Measurements expressed as deployments, the bound against each, the fitted efficiencies and
their forecast intervals.

Modules
-------
``corpus``
    The measurement corpus: published serving results as steady-state forecasts and bounds.
``design``
    The corpus as a design matrix: each row's operator work, timed in closed form per efficiency.
``fitting``
    Efficiencies fitted to published measurements, with cross-validated error and intervals.
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
    "F_SCALE": ".fitting",
    "INTERVAL": ".fitting",
    "predict": ".fitting",
    "calibration_rows": ".fitting",
    "excluded_rows": ".fitting",
    "fit": ".fitting",
    "fit_design": ".fitting",
    "grouped_cv": ".fitting",
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
}
_MODULES = ('corpus', 'design', 'fitting', 'measurements',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
