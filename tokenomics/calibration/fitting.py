"""The efficiency model fitted to the measurement corpus, with grouped cross-validation.

The pure roofline is a bound. The calibrated forecast applies eleven physically meaningful
parameters (:data:`PARAMS`; ten fitted, one held at a stated value: :data:`FIXED`) to the
same step engine: the achieved fractions of memory
bandwidth (MBU) and of dense peak (MFU), the fraction of an operator's shorter roofline
term hidden behind its longer one (``overlap``), the tokens per routed expert at which a
grouped expert GEMM reaches half of MFU, attention kernels' fraction of peak relative to
MFU, 4-bit (NVFP4) GEMMs' fraction relative to MFU (fitted only where FP4 rows are in the
fit: a fold that holds out the only FP4 hardware keeps it at 1), the achieved fraction of
link bandwidth in collectives, a fixed time per step (held at 0), a fixed time per layer per step (the
kernels' launch and minimum durations that CUDA graphs do not hide), a fixed time per
request before its first token, and the busiest expert-parallel rank's excess load over
the mean (``expert_imbalance``: the step waits for that rank). They are fitted to every non-reserved row of
``measurements/corpus.csv`` (:mod:`tokenomics.calibration.corpus`), each row read as
continuous batching in steady state, in log space with a robust (soft-L1) loss; the result is
committed in ``measurements/calibrated.toml`` with the date, the command and the rows, and
``tokenomics calibrate --write PATH`` refits it (never into an installed package).

Notes
-----
For a row with measured value :math:`y_i` and forecast :math:`\\hat y_i(\\theta)` the fit
minimises :math:`\\sum_i \\rho(\\log \\hat y_i - \\log y_i)` with
:math:`\\rho(z) = 2 f^2(\\sqrt{1 + (z/f)^2} - 1)`, :math:`f = 0.1`.

**Honest error.** Error is :math:`|\\hat y / y - 1|`. Besides the in-sample fit it is
reported from grouped cross-validation (:data:`~tokenomics.calibration.corpus.GROUPINGS`):
for each hardware family, model family and source in turn, the parameters are refitted
without that group's rows and the group is forecast. The prediction interval is the 10th
to 90th percentile of the held-out speed ratios :math:`s / \\hat s` pooled over the three
groupings; its coverage is itself cross-validated (each group judged by the interval of
the other groups' held-out ratios).

Reserved rows (MLPerf Inference v5.1 and later, the LMSYS/SGLang blog's large-scale
deployment figures) are never part of the fit or of the tests.

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

from tokenomics.calibration.corpus import GROUPINGS, CorpusRow, bound, load_corpus
from tokenomics.calibration.design import Design, build_design, predict_rows
from tokenomics.calibration.measurements import Measurement, speed
from tokenomics.core import checks as V
from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.catalog import catalog_dir, model, read_toml
from tokenomics.data.specs import ROOFLINE, Efficiency

PARAMS = ("mbu", "mfu", "overlap", "expert_half_tokens", "attention_mfu_scale",
          "fp4_mfu_scale", "link_efficiency", "step_overhead_s", "layer_overhead_s",
          "request_overhead_s", "expert_imbalance")
_LOWER = np.array([0.05, 0.05, 0.0, 0.0, 0.05, 0.05, 0.05, 0.0, 0.0, 0.0, 0.0])
_UPPER = np.array([1.0, 1.0, 1.0, 4096.0, 1.0, 1.0, 1.0, 0.05, 1e-3, 0.05, 4.0])
# fp4_mfu_scale starts at 1 (no penalty): a fold without FP4 rows leaves it there
_START = np.array([0.7, 0.6, 0.5, 100.0, 0.5, 1.0, 0.7, 0.002, 1e-5, 0.005, 0.1])
_XSCALE = np.array([0.1, 0.1, 0.1, 100.0, 0.1, 0.1, 0.1, 0.001, 1e-5, 0.001, 0.1])
F_SCALE = 0.1
INTERVAL = (0.1, 0.9)
#: Parameters held at a value instead of fitted, and why. The time per step is held at 0:
#: the full fit puts it at 0.012 ms beside 0.09 ms per layer (the fixed cost graphs do not
#: hide scales with the kernels, i.e. with the layers), and left free it takes a held-out
#: model family's light-load overhead as a 7.5 ms time per step (Llama 3.1 8B's TPOT then
#: 1.5-1.9x too long). Held at 0, TPOT under load with the model family held out goes
#: 16.1% -> 14.0% (docs/validation.md).
FIXED: dict[str, float] = {"step_overhead_s": 0.0}
_FREE = np.array([p not in FIXED for p in PARAMS])

#: Published figures the corpus cannot express yet, and why.
UNEXPRESSED: tuple[tuple[str, str], ...] = ()


def _efficiency(theta: Any, name: str = "") -> Efficiency:
    return Efficiency(**{k: float(v) for k, v in zip(PARAMS, theta, strict=True)},
                      collective_overlap=0.0, name=name)


def _full(free: np.ndarray) -> np.ndarray:
    """All :data:`PARAMS` from the free ones, the :data:`FIXED` ones at their values."""
    theta = np.array([FIXED.get(p, 0.0) for p in PARAMS])
    theta[_FREE] = free
    return theta


def predict(m: Measurement, efficiency: Efficiency = ROOFLINE) -> float:
    """A bound-check measurement's speed under an efficiency model [token/s].

    The 0.1 step model of :func:`tokenomics.calibration.measurements.speed` for the rows of
    ``measurements/measured.toml``; corpus rows use :func:`tokenomics.calibration.corpus.forecast`.
    """
    return float(speed(m, efficiency)["speed"])


def calibration_rows() -> list[CorpusRow]:
    """The corpus rows the fit uses: every row not reserved for validation and not marked
    bound-only (``fitted`` False)."""
    return [r for r in load_corpus() if r.fitted]


def excluded_rows() -> pd.DataFrame:
    """Published figures not used for the fit, with the reason: reserved corpus rows and
    the figures the corpus cannot express yet (:data:`UNEXPRESSED`)."""
    recs = [dict(id=r.id, reason="reserved for independent validation (never fitted)")
            for r in load_corpus(include_reserved=True) if r.reserved]
    recs += [dict(id=r.id, reason="bound check only: " + r.assumptions.split("; ")[-1])
             for r in load_corpus() if not r.fitted]
    recs += [dict(id=i, reason=why) for i, why in UNEXPRESSED]
    return pd.DataFrame(recs, columns=["id", "reason"])


def _residuals(free: np.ndarray, d: Design, idx: np.ndarray) -> np.ndarray:
    return np.log(predict_rows(d, _efficiency(_full(free)))[idx] / d.measured[idx])


def fit_design(d: Design, idx: Any = None) -> np.ndarray:
    """Fit :data:`PARAMS` to the rows ``idx`` of a design (default: all); the
    :data:`FIXED` ones keep their values."""
    from scipy.optimize import least_squares

    idx = np.arange(len(d.ids)) if idx is None else np.asarray(idx)
    if len(idx) < len(PARAMS):
        raise TokenomicsError(f"need at least {len(PARAMS)} measurements to fit, got {len(idx)}")
    res = least_squares(_residuals, _START[_FREE], args=(d, idx),
                        bounds=(_LOWER[_FREE], _UPPER[_FREE]), loss="soft_l1",
                        f_scale=F_SCALE, x_scale=_XSCALE[_FREE], xtol=1e-10, ftol=1e-10,
                        gtol=1e-10, max_nfev=2000)   # converges in ~50 evaluations
    return _full(np.asarray(res.x, float))


def fit(rows: list[CorpusRow] | None = None) -> np.ndarray:
    """Fit the efficiency model to corpus rows (default: :func:`calibration_rows`).

    Returns
    -------
    numpy.ndarray
        The parameters in :data:`PARAMS` order.

    Raises
    ------
    TokenomicsError
        With fewer rows than parameters.
    """
    rows = calibration_rows() if rows is None else rows
    if len(rows) < len(PARAMS):
        raise TokenomicsError(f"need at least {len(PARAMS)} measurements to fit, got {len(rows)}")
    return fit_design(build_design(rows))


def _speed_ratio(d: Design, pred: np.ndarray) -> np.ndarray:
    """Measured over forecast, as speeds (> 1: the forecast is too slow)."""
    return np.where(d.kind == "speed", d.measured / pred, pred / d.measured)


def grouped_cv(rows: list[CorpusRow] | None = None, d: Design | None = None,
               progress: Any = None) -> pd.DataFrame:
    """Held-out forecasts of every row under each grouping (module notes).

    Parameters
    ----------
    rows : list of CorpusRow, optional
        Default :func:`calibration_rows`.
    d : Design, optional
        Their design matrix, when the caller has built it already.
    progress : callable, optional
        Called as ``progress(done, total, label)`` after each held-out fit (``label`` is
        ``"<grouping>=<group>"``), for a progress bar; the result does not depend on it.

    Returns
    -------
    pandas.DataFrame
        ``id`` and, for each grouping ``g`` of
        :data:`~tokenomics.calibration.corpus.GROUPINGS`, ``cv_<g>`` (the forecast by a fit
        without the row's group) and ``cv_<g>_ratio`` (measured / forecast, as speeds).
    """
    rows = calibration_rows() if rows is None else rows
    d = build_design(rows) if d is None else d
    out = pd.DataFrame({"id": d.ids})
    folds = [(g, v) for g in GROUPINGS for v in np.unique([getattr(r, g) for r in rows])]
    done = 0
    for g in GROUPINGS:
        labels = np.array([getattr(r, g) for r in rows])
        pred = np.full(len(rows), np.nan)
        for v in np.unique(labels):
            test = labels == v
            theta = fit_design(d, np.flatnonzero(~test))
            pred[test] = predict_rows(d, _efficiency(theta))[test]
            done += 1
            if progress is not None:
                progress(done, len(folds), f"{g}={v}")
        out[f"cv_{g}"] = pred
        out[f"cv_{g}_ratio"] = _speed_ratio(d, pred)
    return out


def _cv_coverage(ratios: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows inside the interval built from the other groups' held-out ratios."""
    inside = np.zeros(len(ratios), bool)
    for v in np.unique(labels):
        test = labels == v
        lo, hi = np.quantile(ratios[~test], INTERVAL)
        inside[test] = (ratios[test] >= lo) & (ratios[test] <= hi)
    return float(inside.mean())


@dataclass(frozen=True)
class Calibration:
    """The committed calibration: parameters, interval, cross-validated error, provenance.

    Attributes
    ----------
    efficiency : Efficiency
    ratio_low, ratio_high : float
        10th and 90th percentile of the grouped held-out speed ratios (measured / forecast).
    cv : dict
        Cross-validated summary figures as committed (median errors, coverage).
    date, command : str
    inputs : tuple of str
        The corpus row ids fitted.
    """

    efficiency: Efficiency
    ratio_low: float
    ratio_high: float
    cv: dict[str, float]
    date: str
    command: str
    inputs: tuple[str, ...]

    @property
    def loo_ratio_low(self) -> float:
        """0.1 name of :attr:`ratio_low` (the interval is now from grouped folds)."""
        return self.ratio_low

    @property
    def loo_ratio_high(self) -> float:
        """0.1 name of :attr:`ratio_high`."""
        return self.ratio_high


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
    for k in (*PARAMS, "ratio_low", "ratio_high", "cv", "date", "command", "inputs"):
        if k not in data:
            raise CatalogError(f"{p}: field {k}: required key is missing")
    for k in PARAMS:
        if isinstance(data[k], bool) or not isinstance(data[k], (int, float)):
            raise CatalogError(f"{p}: field {k}: must be a number, got {data[k]!r}")
    try:
        eff = _efficiency([data[k] for k in PARAMS], name="calibrated")
    except (TokenomicsError, TypeError, ValueError) as exc:
        raise CatalogError(f"{p}: {exc}") from None
    lo, hi = data["ratio_low"], data["ratio_high"]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (lo, hi)) \
            or not 0 < lo <= 1 <= hi:
        raise CatalogError(f"{p}: fields ratio_low, ratio_high: need 0 < low <= 1 <= high "
                           f"(an interval around the forecast), got {lo!r}, {hi!r}")
    return Calibration(efficiency=eff, ratio_low=float(data["ratio_low"]),
                       ratio_high=float(data["ratio_high"]),
                       cv={k: float(v) for k, v in data["cv"].items()},
                       date=str(data["date"]), command=str(data["command"]),
                       inputs=tuple(data["inputs"]))


def efficiency_presets() -> dict[str, Efficiency]:
    """Named efficiency models: ``"roofline"`` (the bound) and ``"calibrated"`` (the forecast).

    Examples
    --------
    >>> p = efficiency_presets()
    >>> p["roofline"].mbu, 0 < p["calibrated"].mbu < 1
    (1.0, True)
    """
    return {"roofline": ROOFLINE, "calibrated": committed().efficiency}


def _is_moe(row: CorpusRow) -> bool:
    return model(row.model).moe is not None


def calibration_report(refit: bool = False, progress: Any = None) -> pd.DataFrame:
    """Every corpus row beside its bound, the calibrated forecast and its held-out forecasts.

    Parameters
    ----------
    refit : bool
        Fit the parameters now instead of using the committed ones. The grouped held-out
        forecasts are always recomputed (a fit per group, about a second each).
    progress : callable, optional
        ``progress(done, total, label)`` after each held-out fit (:func:`grouped_cv`).

    Returns
    -------
    pandas.DataFrame
        ``id``, ``model``, ``hardware``, the three group columns, ``metric``, ``moe``,
        ``measured``, ``bound``, ``forecast``, ``forecast_low``, ``forecast_high`` (the row's
        unit), ``relative_error`` (in-sample), ``cv_<grouping>_error`` for each grouping,
        ``roofline`` (the roofline preset read the same way: every efficiency 1, no
        overhead), ``roofline_relative_error`` and ``bound_relative_error``.
    """
    rows = calibration_rows()
    d = build_design(rows)
    cal = committed()
    eff = _efficiency(fit_design(d)) if refit else cal.efficiency
    f = predict_rows(d, eff)
    cv = grouped_cv(rows, d, progress)
    b = np.array([bound(r) for r in rows])
    speedy = d.kind == "speed"
    lo = np.where(speedy, f * cal.ratio_low, f / cal.ratio_low)
    hi = np.where(speedy, np.minimum(f * cal.ratio_high, b), np.maximum(f / cal.ratio_high, b))
    out = pd.DataFrame(dict(
        id=d.ids, model=[r.model for r in rows], hardware=[r.hardware for r in rows],
        **{g: [getattr(r, g) for r in rows] for g in GROUPINGS},
        metric=[r.metric for r in rows], moe=[_is_moe(r) for r in rows], measured=d.measured,
        bound=b, forecast=f, forecast_low=np.minimum(lo, hi), forecast_high=np.maximum(lo, hi),
        relative_error=np.abs(f / d.measured - 1)))
    for g in GROUPINGS:
        out[f"cv_{g}_error"] = np.abs(cv[f"cv_{g}"].to_numpy() / d.measured - 1)
    out["roofline"] = predict_rows(d, ROOFLINE)
    out["roofline_relative_error"] = np.abs(out["roofline"].to_numpy() / d.measured - 1)
    out["bound_relative_error"] = np.abs(b / d.measured - 1)
    return out


def calibration_summary(report: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median absolute error by slice: in-sample, each grouping held out, the roofline.

    Returns
    -------
    pandas.DataFrame
        One row per slice (``all``, ``moe``, ``tpot_under_load``, then each group of each
        grouping), columns ``rows``, ``in_sample``, ``cv_<grouping>``, ``roofline`` (the
        roofline preset's error) and ``bound`` (the bound's).
    """
    t = calibration_report() if report is None else report
    slices = {"all": np.ones(len(t), bool), "moe": t.moe.to_numpy(),
              "tpot_under_load": (t.metric == "server_tpot_at_concurrency").to_numpy()}
    for g in GROUPINGS:
        for v in sorted(t[g].unique()):
            slices[f"{g}={v}"] = (t[g] == v).to_numpy()
    recs = []
    for name, m in slices.items():
        rec: dict[str, Any] = dict(slice=name, rows=int(m.sum()),
                                   in_sample=float(t.relative_error[m].median()))
        for g in GROUPINGS:
            rec[f"cv_{g}"] = float(t[f"cv_{g}_error"][m].median())
        rec["roofline"] = float(t.roofline_relative_error[m].median())
        rec["bound"] = float(t.bound_relative_error[m].median())
        recs.append(rec)
    return pd.DataFrame(recs)


def transfer_report(source_group: str = "mlenergy-v3") -> pd.DataFrame:
    """The committed forecast on a source's rows that the fit never saw (``fitted`` False).

    Parameters
    ----------
    source_group : str
        Default ``"mlenergy-v3"``: 251 vLLM runs of the ML.ENERGY Leaderboard V3 (H100 and
        B200), an engine the fit (TensorRT-LLM, MLPerf) does not model.

    Returns
    -------
    pandas.DataFrame
        ``id``, ``model``, ``hardware``, ``moe``, ``concurrency``, ``metric``, ``measured``,
        ``bound``, ``forecast`` (the committed calibration), ``roofline`` (the roofline
        preset), ``error`` and ``roofline_error`` (:math:`|\\hat y / y - 1|`), and
        ``interval_holds`` (the committed 80% interval around the forecast holds the row).

    Raises
    ------
    TokenomicsError
        When the source has no unfitted row.

    Notes
    -----
    Nothing here is fitted to or tuned on: the parameters are the committed ones, fitted to
    :func:`calibration_rows` only.
    """
    from tokenomics.calibration.corpus import forecast as corpus_forecast

    if not isinstance(source_group, str):
        raise TokenomicsError(f"source_group must be a corpus source name (a string such as "
                              f"'mlenergy-v3'), got {source_group!r}")
    rows = [r for r in load_corpus() if r.source_group == source_group and not r.fitted
            and r.pool != "prefill"]
    if not rows:
        raise TokenomicsError(f"no unfitted corpus rows of source {source_group!r}")
    cal = committed()
    f = np.array([corpus_forecast(r, cal.efficiency) for r in rows])
    ro = np.array([corpus_forecast(r, ROOFLINE) for r in rows])
    y = np.array([r.measured for r in rows])
    speedy = np.array([r.kind == "speed" for r in rows])
    ratio = np.where(speedy, y / f, f / y)          # measured / forecast, as speeds
    return pd.DataFrame(dict(
        id=[r.id for r in rows], model=[r.model for r in rows],
        hardware=[r.hardware for r in rows], moe=[_is_moe(r) for r in rows],
        concurrency=[r.batch_per_device for r in rows], metric=[r.metric for r in rows],
        measured=y, bound=[bound(r) for r in rows], forecast=f, roofline=ro,
        error=np.abs(f / y - 1), roofline_error=np.abs(ro / y - 1),
        interval_holds=(ratio >= cal.ratio_low) & (ratio <= cal.ratio_high)))


def forecast_interval(speed: Any, bound: Any) -> tuple[Any, Any]:
    """Prediction interval of a calibrated speed [token/s], fast end capped at the bound.

    Returns
    -------
    (low, high) : floats or arrays
        ``speed x ratio_low`` and ``min(speed x ratio_high, bound)``; both bracket the
        point forecast.
    """
    cal = committed()
    s = V.non_negative(speed, "speed", "token/s")
    b = V.non_negative(bound, "bound", "token/s")
    low = np.minimum(s * cal.ratio_low, s)
    high = np.minimum(np.maximum(s * cal.ratio_high, s), np.maximum(b, s))
    return low, high


def _cv_figures(rows: list[CorpusRow], theta: np.ndarray,
                progress: Any = None) -> tuple[float, float, dict]:
    """The interval ratios and the committed cross-validated figures."""
    d = build_design(rows)
    cv = grouped_cv(rows, d, progress)
    ratios = np.concatenate([cv[f"cv_{g}_ratio"].to_numpy() for g in GROUPINGS])
    lo, hi = (float(x) for x in np.quantile(ratios, INTERVAL))
    moe = np.array([_is_moe(r) for r in rows])
    tpot = np.array([r.metric == "server_tpot_at_concurrency" for r in rows])
    figs: dict[str, float] = {
        "in_sample_median_error": float(np.median(np.abs(
            predict_rows(d, _efficiency(theta)) / d.measured - 1)))}
    for g in GROUPINGS:
        err = np.abs(cv[f"cv_{g}"].to_numpy() / d.measured - 1)
        figs[f"{g}_median_error"] = float(np.median(err))
        figs[f"{g}_moe_median_error"] = float(np.median(err[moe]))
        figs[f"{g}_tpot_median_error"] = float(np.median(err[tpot]))
        figs[f"{g}_interval_coverage"] = _cv_coverage(
            cv[f"cv_{g}_ratio"].to_numpy(), np.array([getattr(r, g) for r in rows]))
    return lo, hi, figs


def write_calibration(path: Path | str | None = None, progress: Any = None) -> dict[str, Any]:
    """Fit, cross-validate by group, and write the result as a calibration file.

    Parameters
    ----------
    path : str or Path, optional
        Where to write; default ``calibrated.toml`` in the working directory. In a source
        checkout, ``measurements/calibrated.toml`` is the file the library commits.
    progress : callable, optional
        ``progress(done, total, label)`` after each held-out fit (:func:`grouped_cv`).

    Returns
    -------
    dict
        What was written.

    Raises
    ------
    TokenomicsError
        If ``path`` lies inside the installed package (an install is never rewritten).
    """
    p = Path(path) if path else Path.cwd() / "calibrated.toml"
    installed = calibration_path().parent
    if "_data" in installed.parts and p.resolve().is_relative_to(installed.resolve()):
        raise TokenomicsError(f"{p}: refusing to rewrite the installed package's calibration; "
                              f"give a path of your own (default ./calibrated.toml)")
    rows = calibration_rows()
    theta = fit(rows)
    lo, hi, figs = _cv_figures(rows, theta, progress)
    data = {**{k: float(v) for k, v in zip(PARAMS, theta, strict=True)},
            "ratio_low": lo, "ratio_high": hi,
            "date": _dt.date.today().isoformat(),
            "command": "tokenomics calibrate --write measurements/calibrated.toml",
            "inputs": [r.id for r in rows]}
    lines = ["# Efficiencies fitted to measurements/corpus.csv by tokenomics.calibration.fitting.",
             "# Refit with: tokenomics calibrate --write measurements/calibrated.toml", ""]
    for k, v in data.items():
        if isinstance(v, str):
            lines.append(f'{k} = "{v}"')
        elif isinstance(v, list):
            lines.append(f"{k} = [{', '.join(repr(x).replace(chr(39), chr(34)) for x in v)}]")
        else:
            lines.append(f"{k} = {v!r}")
    lines += ["", "# Grouped cross-validation (each group refitted without its rows)", "[cv]"]
    lines += [f"{k} = {v!r}" for k, v in figs.items()]
    try:
        p.write_text("\n".join(lines) + "\n")
    except OSError as exc:
        raise TokenomicsError(f"cannot write {p}: {exc.strerror}; give a path in a folder "
                              f"that exists and you may write to") from None
    committed.cache_clear()
    return {**data, "cv": figs}
