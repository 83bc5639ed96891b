"""Calibration: the step model against published measurements.

Measurements expressed as deployments, the bound against each, the fitted efficiencies and
their forecast intervals.

Modules
-------
``fit``
    Efficiencies fitted to published measurements, with cross-validated error and intervals.
``measurements``
    Published measurements against the library's roofline bound.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "PARAMS": ".fit",
    "F_SCALE": ".fit",
    "INTERVAL": ".fit",
    "predict": ".fit",
    "calibration_rows": ".fit",
    "excluded_rows": ".fit",
    "fit": ".fit",
    "Calibration": ".fit",
    "calibration_path": ".fit",
    "committed": ".fit",
    "efficiency_presets": ".fit",
    "calibration_report": ".fit",
    "forecast_interval": ".fit",
    "write_calibration": ".fit",
    "Measurement": ".measurements",
    "load_measurements": ".measurements",
    "speed": ".measurements",
    "bound_for": ".measurements",
    "measured_vs_bound": ".measurements",
}
_MODULES = ('fit', 'measurements',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
