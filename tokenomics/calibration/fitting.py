"""Efficiencies fitted to published measurements, with cross-validated error and intervals.

The pure roofline is a bound. The calibrated forecast applies three physically meaningful
parameters to the same step model: the achieved fraction of peak memory bandwidth in
memory-bound operators (MBU), of dense peak FLOP/s in compute-bound ones (MFU), and a fixed
time per step (launches, scheduling, sampling). They are fitted to the rows of
``measurements/measured.toml`` in log space with a robust (soft-L1) loss, so a single odd row
cannot drag the fit; the parameters are committed in ``measurements/calibrated.toml`` with the
date, the command and the inputs, and ``tokenomics calibrate`` refits them.

Notes
-----
For a row with measured speed :math:`s_i` and forecast :math:`\\hat s_i(\\theta)` the fit
minimises :math:`\\sum_i \\rho(\\log \\hat s_i - \\log s_i)` with
:math:`\\rho(z) = 2 f^2(\\sqrt{1 + (z/f)^2} - 1)`, :math:`f = 0.1`. Error is reported as
absolute relative error :math:`|\\hat s / s - 1|`, in-sample and leave-one-out (each row
predicted by a fit without it). Prediction intervals are the forecast times the 10th and 90th
percentiles of the leave-one-out ratios :math:`s / \\hat s`, with the fast end capped at the
bound (a forecast is never faster than the bound).

References
----------
.. [1] SciPy ``least_squares`` (trust-region reflective, soft-L1 loss).
.. [2] T. Hastie, R. Tibshirani, J. Friedman, "The Elements of Statistical Learning", 2nd ed.,
   §7.10 (cross-validation).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.calibration.measurements import Measurement, load_measurements, speed
from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.catalog import catalog_dir, read_toml
from tokenomics.data.specs import ROOFLINE, Efficiency

PARAMS = ("mbu", "mfu", "step_overhead_s")
_LOWER = np.array([0.05, 0.05, 0.0])
_UPPER = np.array([1.0, 1.0, 0.05])
_START = np.array([0.7, 0.5, 0.002])
F_SCALE = 0.1
INTERVAL = (0.1, 0.9)


def _efficiency(theta: Any) -> Efficiency:
    return Efficiency(mbu=float(theta[0]), mfu=float(theta[1]),
                      step_overhead_s=float(theta[2]))


def predict(m: Measurement, efficiency: Efficiency = ROOFLINE) -> float:
    """A measurement's speed under an efficiency model (ROOFLINE: the bound) [token/s].

    The step model of :func:`tokenomics.calibration.measurements.speed`, per user or per device as the
    row's metric.
    """
    return float(speed(m, efficiency)["speed"])


def _residuals(theta: np.ndarray, rows: list[Measurement]) -> np.ndarray:
    e = _efficiency(theta)
    return np.array([np.log(predict(m, e) / m.measured) for m in rows])


def calibration_rows() -> list[Measurement]:
    """The measurements the fit uses (rows marked ``calibrate = false`` are left out, with
    their ``calibrate_note`` saying why)."""
    return [m for m in load_measurements() if m.calibrate]


def excluded_rows() -> pd.DataFrame:
    """Measurements not used for the fit, with the reason."""
    return pd.DataFrame([dict(id=m.id, reason=m.calibrate_note) for m in load_measurements()
                         if not m.calibrate], columns=["id", "reason"])


def fit(rows: list[Measurement] | None = None) -> np.ndarray:
    """Fit (MBU, MFU, step overhead [s]) to measurements; returns the parameter vector.

    Raises
    ------
    TokenomicsError
        With fewer rows than parameters.
    """
    from scipy.optimize import least_squares

    rows = calibration_rows() if rows is None else rows
    if len(rows) < len(PARAMS):
        raise TokenomicsError(f"need at least {len(PARAMS)} measurements to fit, got {len(rows)}")
    res = least_squares(_residuals, _START, args=(rows,), bounds=(_LOWER, _UPPER),
                        loss="soft_l1", f_scale=F_SCALE, x_scale=np.array([0.1, 0.1, 0.001]),
                        xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=2000)
    return np.asarray(res.x, float)


@dataclass(frozen=True)
class Calibration:
    """Committed calibration: parameters, LOO ratios, provenance."""

    efficiency: Efficiency
    loo_ratio_low: float
    loo_ratio_high: float
    date: str
    command: str
    inputs: tuple[str, ...]


def calibration_path() -> Path:
    """Where the committed calibration lives (``measurements/calibrated.toml``)."""
    return catalog_dir("measurements") / "calibrated.toml"


@lru_cache(maxsize=1)
def committed() -> Calibration:
    """The committed calibration (``measurements/calibrated.toml``).

    Raises
    ------
    CatalogError
        When the file is missing a field or holds an efficiency outside its range.
    """
    p = calibration_path()
    data = read_toml(p)
    for k in (*PARAMS, "loo_ratio_low", "loo_ratio_high", "date", "command", "inputs"):
        if k not in data:
            raise CatalogError(f"{p}: field {k}: required key is missing")
    try:
        eff = _efficiency([data[k] for k in PARAMS])
    except TokenomicsError as exc:
        raise CatalogError(f"{p}: {exc}") from None
    return Calibration(efficiency=eff, loo_ratio_low=float(data["loo_ratio_low"]),
                       loo_ratio_high=float(data["loo_ratio_high"]), date=str(data["date"]),
                       command=str(data["command"]), inputs=tuple(data["inputs"]))


def efficiency_presets() -> dict[str, Efficiency]:
    """Named efficiency models: ``"roofline"`` (the bound) and ``"calibrated"`` (the forecast).

    Examples
    --------
    >>> p = efficiency_presets()
    >>> p["roofline"].mbu, 0 < p["calibrated"].mbu < 1
    (1.0, True)
    """
    return {"roofline": ROOFLINE, "calibrated": committed().efficiency}


def _loo(rows: list[Measurement]) -> np.ndarray:
    """Leave-one-out forecasts [token/s]."""
    out = []
    for i in range(len(rows)):
        theta = fit(rows[:i] + rows[i + 1:])
        out.append(predict(rows[i], _efficiency(theta)))
    return np.asarray(out)


def calibration_report(refit: bool = False) -> pd.DataFrame:
    """Every measurement beside the bound and the calibrated forecast.

    Parameters
    ----------
    refit : bool
        Recompute the fit and the leave-one-out forecasts now (slow: one fit per row);
        default: use the committed parameters and the committed leave-one-out interval, and
        compute the leave-one-out forecasts afresh.

    Returns
    -------
    pandas.DataFrame
        ``id``, ``metric``, ``measured``, ``bound``, ``forecast``, ``forecast_low``,
        ``forecast_high``, ``relative_error`` (forecast vs measured, in-sample),
        ``cv_relative_error`` (leave-one-out), ``bound_relative_error``.
    """
    rows = calibration_rows()
    cal = committed()
    eff = _efficiency(fit(rows)) if refit else cal.efficiency
    loo = _loo(rows)
    ratios = np.array([m.measured for m in rows]) / loo
    lo_r, hi_r = (np.quantile(ratios, INTERVAL) if refit
                  else (cal.loo_ratio_low, cal.loo_ratio_high))
    recs = []
    for m, lf in zip(rows, loo, strict=True):
        b = predict(m, ROOFLINE)
        f = predict(m, eff)
        recs.append(dict(
            id=m.id, metric=m.metric, measured=m.measured, bound=b, forecast=f,
            forecast_low=min(f * lo_r, f), forecast_high=min(max(f * hi_r, f), b),
            relative_error=abs(f / m.measured - 1), cv_relative_error=abs(lf / m.measured - 1),
            bound_relative_error=abs(b / m.measured - 1)))
    return pd.DataFrame(recs)


def forecast_interval(speed: Any, bound: Any) -> tuple[Any, Any]:
    """Prediction interval of a calibrated speed [token/s], fast end capped at the bound.

    Returns
    -------
    (low, high) : floats or arrays
        ``speed x loo_ratio_low`` and ``min(speed x loo_ratio_high, bound)``; both bracket the
        point forecast.
    """
    cal = committed()
    s = np.asarray(speed, float)
    b = np.asarray(bound, float)
    low = np.minimum(s * cal.loo_ratio_low, s)
    high = np.minimum(np.maximum(s * cal.loo_ratio_high, s), np.maximum(b, s))
    return low, high


def write_calibration(path: Path | str | None = None) -> dict[str, Any]:
    """Fit, compute the leave-one-out interval, and write ``calibrated.toml``.

    Returns
    -------
    dict
        What was written.
    """
    rows = calibration_rows()
    theta = fit(rows)
    loo = _loo(rows)
    ratios = np.array([m.measured for m in rows]) / loo
    lo_r, hi_r = (float(x) for x in np.quantile(ratios, INTERVAL))
    data = {**{k: float(v) for k, v in zip(PARAMS, theta, strict=True)},
            "loo_ratio_low": lo_r, "loo_ratio_high": hi_r,
            "date": _dt.date.today().isoformat(), "command": "tokenomics calibrate --write",
            "inputs": [m.id for m in rows]}
    p = Path(path) if path else calibration_path()
    lines = ["# Efficiencies fitted to measurements/measured.toml by tokenomics.calibration.fitting.",
             "# Refit with: tokenomics calibrate --write", ""]
    for k, v in data.items():
        if isinstance(v, str):
            lines.append(f'{k} = "{v}"')
        elif isinstance(v, list):
            lines.append(f"{k} = [{', '.join(repr(x).replace(chr(39), chr(34)) for x in v)}]")
        else:
            lines.append(f"{k} = {v!r}")
    p.write_text("\n".join(lines) + "\n")
    committed.cache_clear()
    return data
