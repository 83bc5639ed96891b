"""The efficiency model fitted to the measurement corpus, with grouped cross-validation.

The pure roofline is a bound. The calibrated forecast applies fourteen physically meaningful
parameters (:data:`~tokenomics.calibration.pooling.PARAMS`) to the same step engine: the
achieved fractions of memory bandwidth (MBU) and of dense peak (MFU), the share of an
operator's shorter roofline term hidden behind its longer one (``overlap``), the rows of a
grouped expert GEMM's tile, grouped expert GEMMs', attention kernels', 4-bit GEMMs' and
weight-only GEMMs' fractions of MFU, the achieved fraction of link bandwidth and the share of collectives hidden behind compute, a
fixed time per layer per step (kernel launches and minimum durations that CUDA graphs do not
hide), the host's time per sampled token, a time per request before its first token, and
the busiest expert-parallel rank's excess load. Five of them differ by serving stack (vendor
and engine) and four by hardware family, partially pooled toward the common value
(:mod:`tokenomics.calibration.pooling`): a stack or a family the corpus has not seen gets the
pooled value, and its interval says so (:func:`forecast_interval`).

They are fitted to every fitted row of ``measurements/corpus.csv``
(:mod:`tokenomics.calibration.corpus`), each row read as continuous batching in steady state
over its workload's length distribution, in log space with a robust (soft-L1) loss; the
result is committed in ``measurements/calibrated.toml`` with the date, the command, the rows
and the cross-validated figures, and ``tokenomics calibrate --write PATH`` refits it (never
into an installed package).

Notes
-----
**Honest error.** Error is :math:`|\\hat y / y - 1|`. Besides the in-sample fit it is reported
from grouped cross-validation (:data:`~tokenomics.calibration.corpus.GROUPINGS`): for each
source family, serving stack, hardware family and model family in turn, the parameters are
refitted without that group's rows (starting from the full fit's optimum) and the group is
forecast; a seeded random 10-fold split gives the error where every group is seen.

**Reproducible.** The full fit is the best of a fixed seeded start design
(:func:`~tokenomics.calibration.pooling.starts`) on a problem that weak priors make well
posed; :func:`cv_spread` refits everything from perturbed starts and reports how far each
figure moves (the committed spread is in ``[cv_spread]``).

**Intervals.** For each grouping the held-out log ratios :math:`\\log(s / \\hat s)` of speeds
give the interval of a forecast whose group of that kind the corpus has not seen, read as
random effects: a new group's bias drawn from the groups' shrunk biases, plus a row's
scatter about its group (:func:`group_interval`, its 10th and 90th percentiles); the random
split's give the interval where all are seen. A forecast
unseen in several respects widens each side in quadrature (:func:`interval_for`). Coverage
is itself cross-validated: each group judged by the interval of the other groups' ratios.

Reserved rows (MLPerf Inference v5.1 and later, the LMSYS/SGLang blog's large-scale
deployment figures) are never part of the fit or of the tests.

References
----------
.. [1] SciPy ``least_squares`` (trust-region reflective).
.. [2] T. Hastie, R. Tibshirani, J. Friedman, "The Elements of Statistical Learning", 2nd ed.,
   §7.10 (cross-validation).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.calibration.corpus import GROUPINGS, CorpusRow, bound, load_corpus
from tokenomics.calibration.design import Design, build_design, predict_rows
from tokenomics.calibration.intervals import INTERVAL, cv_coverage, group_interval
from tokenomics.calibration.measurements import Measurement, speed
from tokenomics.calibration.pooling import (
    HELD,
    LEVELS,
    PARAMS,
    SEED,
    STARTS,
    Fit,
    Problem,
    fit_problem,
    to_fitted,
)
from tokenomics.core import checks as V
from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.bibliography import catalog_dir, read_toml
from tokenomics.data.catalog import model
from tokenomics.data.deployment import check_deployment
from tokenomics.data.specs import ROOFLINE, Efficiency

#: Folds of the random split (every group seen), and its seed.
KFOLDS = 10
#: Parameters held at a value instead of fitted (:data:`~tokenomics.calibration.pooling.HELD`).
FIXED = HELD
#: Published figures the corpus cannot express yet, and why.
UNEXPRESSED: tuple[tuple[str, str], ...] = ()
#: The groupings a user's forecast can be new in (a forecast is always a new "source").
NOVELTY = ("stack", "hardware_family", "model_family")


def predict(m: Measurement, efficiency: Efficiency = ROOFLINE) -> float:
    """A bound-check measurement's speed under an efficiency model [token/s].

    The 0.1 step model of :func:`tokenomics.calibration.measurements.speed` for the rows of
    ``measurements/measured.toml``; corpus rows use :func:`tokenomics.calibration.corpus.forecast`.
    """
    return float(speed(m, efficiency)["speed"])


def calibration_rows() -> list[CorpusRow]:
    """The corpus rows the fit uses: every row not reserved for validation, not marked
    bound-only (``fitted`` False) and not a prefill pool's."""
    return [r for r in load_corpus() if r.fitted and r.pool != "prefill"]


def excluded_rows() -> pd.DataFrame:
    """Published figures not used for the fit, with the reason: reserved corpus rows, the
    bound-only rows and the figures the corpus cannot express yet (:data:`UNEXPRESSED`)."""
    recs = [dict(id=r.id, reason="reserved for independent validation (never fitted)")
            for r in load_corpus(include_reserved=True) if r.reserved]
    recs += [dict(id=r.id, reason="bound check only: " + r.assumptions.split("; ")[-1])
             for r in load_corpus() if not r.fitted or r.pool == "prefill"]
    recs += [dict(id=i, reason=why) for i, why in UNEXPRESSED]
    return pd.DataFrame(recs, columns=["id", "reason"])


def fit_design(d: Design, idx: Any = None, start: Fit | None = None, *,
               n_starts: int = STARTS, perturb: float = 0.0, seed: int = SEED) -> Fit:
    """Fit the parameters to the rows ``idx`` of a design (default: all).

    Parameters
    ----------
    start : Fit, optional
        Start from this fit (a held-out fold starts from the full fit); default the best of
        the seeded start design.
    n_starts, perturb, seed
        The start design's size, a relative perturbation of every start (the
        reproducibility check, :func:`cv_spread`) and its seed.

    Raises
    ------
    TokenomicsError
        With fewer rows than parameters.
    """
    return fit_problem(Problem(d, idx), start, n_starts=n_starts, perturb=perturb, seed=seed)


def fit(rows: list[CorpusRow] | None = None) -> Fit:
    """Fit the efficiency model to corpus rows (default: :func:`calibration_rows`).

    Returns
    -------
    Fit
        The pooled parameters and each stack's and hardware family's offsets.

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


def _labels(rows: list[CorpusRow], g: str) -> np.ndarray:
    if g == "rows":          # the random split: seeded fold numbers
        rng = np.random.default_rng(SEED)
        return np.array([f"fold{k}" for k in rng.permutation(len(rows)) % KFOLDS])
    return np.array([getattr(r, g) for r in rows])


def grouped_cv(rows: list[CorpusRow] | None = None, d: Design | None = None,
               progress: Any = None, full: Fit | None = None, *, perturb: float = 0.0,
               groupings: tuple[str, ...] = (*GROUPINGS, "rows")) -> pd.DataFrame:
    """Held-out forecasts of every row under each grouping (module notes).

    Parameters
    ----------
    rows : list of CorpusRow, optional
        Default :func:`calibration_rows`.
    d : Design, optional
        Their design, when the caller has built it already.
    progress : callable, optional
        Called as ``progress(done, total, label)`` after each held-out fit (``label`` is
        ``"<grouping>=<group>"``), for a progress bar; the result does not depend on it.
    full : Fit, optional
        The fit of all rows the folds start from; default a fresh :func:`fit_design`.
    perturb : float
        Relative perturbation of every fold's start (:func:`cv_spread`).
    groupings : tuple of str
        The groupings; ``"rows"`` is the seeded random :data:`KFOLDS`-fold split.

    Returns
    -------
    pandas.DataFrame
        ``id`` and, for each grouping ``g``, ``cv_<g>`` (the forecast by a fit without the
        row's group) and ``cv_<g>_ratio`` (measured / forecast, as speeds).
    """
    rows = calibration_rows() if rows is None else rows
    d = build_design(rows) if d is None else d
    full = fit_design(d, perturb=perturb, seed=SEED) if full is None else full
    out = pd.DataFrame({"id": d.ids})
    labels = {g: _labels(rows, g) for g in groupings}
    total = sum(len(np.unique(v)) for v in labels.values())
    done = 0
    for k, g in enumerate(groupings):
        lab = labels[g]
        pred = np.full(len(rows), np.nan)
        for j, v in enumerate(np.unique(lab)):
            test = lab == v
            f = fit_design(d, np.flatnonzero(~test), full, perturb=perturb,
                           seed=SEED + 97 * k + j)
            pred[test] = predict_rows(d.take(np.flatnonzero(test)),
                                      f.row_parameters(d.take(np.flatnonzero(test))))
            done += 1
            if progress is not None:
                progress(done, total, f"{g}={v}")
        out[f"cv_{g}"] = pred
        out[f"cv_{g}_ratio"] = _speed_ratio(d, pred)
    return out


@dataclass(frozen=True)
class Calibration:
    """The committed calibration: parameters, intervals, cross-validated error, provenance.

    Attributes
    ----------
    efficiency : Efficiency
        The pooled parameters, with every fitted stack's and hardware family's values
        (``stacks``, ``families``): the ``"calibrated"`` preset.
    ratio_low, ratio_high : float
        10th and 90th percentile of the held-out speed ratios (measured / forecast) pooled
        over every grouping: the interval of a forecast about which nothing is known.
    intervals : dict
        Grouping (and ``"rows"``, the random split) -> (low, high) speed ratios.
    seen : dict
        Grouping -> the groups the fit saw (``stack``, ``hardware_family``,
        ``model_family``), for :func:`interval_for`.
    hardware_families, model_families : dict
        Catalog id -> family, as the corpus groups them.
    cv : dict
        Cross-validated summary figures as committed (median errors, coverage).
    spread : dict
        Each figure's largest distance from the committed one over perturbed starts.
    date, command : str
    inputs : tuple of str
        The corpus row ids fitted.
    """

    efficiency: Efficiency
    ratio_low: float
    ratio_high: float
    intervals: dict[str, tuple[float, float]]
    seen: dict[str, tuple[str, ...]]
    hardware_families: dict[str, str]
    model_families: dict[str, str]
    cv: dict[str, float]
    date: str
    command: str
    inputs: tuple[str, ...]
    spread: dict[str, float] = field(default_factory=dict)

    @property
    def loo_ratio_low(self) -> float:
        """0.1 name of :attr:`ratio_low`."""
        return self.ratio_low

    @property
    def loo_ratio_high(self) -> float:
        """0.1 name of :attr:`ratio_high`."""
        return self.ratio_high


def calibration_path() -> Path:
    """Where the committed calibration lives (``measurements/calibrated.toml``)."""
    return catalog_dir("measurements") / "calibrated.toml"


def _number(p: Path, where: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CatalogError(f"{p}: field {where}: must be a number, got {v!r}")
    return float(v)


def _offsets(p: Path, data: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, np.ndarray]] = {}
    for level, params in LEVELS.items():
        table = data.get("offsets", {}).get(level, {})
        if not isinstance(table, dict):
            raise CatalogError(f"{p}: field offsets.{level}: must be a table")
        out[level] = {}
        for g, vals in table.items():
            if not isinstance(vals, dict) or set(vals) != set(params):
                raise CatalogError(f"{p}: field offsets.{level}.{g}: needs exactly "
                                   f"{', '.join(params)}")
            out[level][g] = np.array([_number(p, f"offsets.{level}.{g}.{q}", vals[q])
                                      for q in params])
    return out


def _pair(p: Path, where: str, v: Any) -> tuple[float, float]:
    if not isinstance(v, list) or len(v) != 2:
        raise CatalogError(f"{p}: field {where}: needs [low, high]")
    lo, hi = (_number(p, where, x) for x in v)
    if not 0 < lo <= 1 <= hi:
        raise CatalogError(f"{p}: field {where}: need 0 < low <= 1 <= high (an interval "
                           f"around the forecast), got {lo!r}, {hi!r}")
    return lo, hi


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
    for k in (*PARAMS, "interval", "seen", "hardware_families", "model_families", "cv",
              "date", "command", "inputs"):
        if k not in data:
            raise CatalogError(f"{p}: field {k}: required key is missing")
    raw = {q: _number(p, q, data[q]) for q in PARAMS}
    try:
        Efficiency(**raw)                 # each value in its physical range, as written
    except TokenomicsError as exc:
        raise CatalogError(f"{p}: {exc}") from None
    z = np.array([float(to_fitted(q, raw[q])) for q in PARAMS])
    fit_ = Fit(z=z, offsets=_offsets(p, data))
    fams = {str(k): str(v) for k, v in dict(data["hardware_families"]).items()}
    try:
        eff = fit_.efficiency(fams)
    except (TokenomicsError, TypeError, ValueError) as exc:
        raise CatalogError(f"{p}: {exc}") from None
    intervals = {g: _pair(p, f"interval.{g}", v) for g, v in dict(data["interval"]).items()}
    if "all" not in intervals:
        raise CatalogError(f"{p}: field interval.all: required key is missing")
    return Calibration(
        efficiency=eff, ratio_low=intervals["all"][0], ratio_high=intervals["all"][1],
        intervals=intervals, seen={g: tuple(v) for g, v in dict(data["seen"]).items()},
        hardware_families=fams,
        model_families={str(k): str(v) for k, v in dict(data["model_families"]).items()},
        cv={k: float(v) for k, v in data["cv"].items()},
        spread={k: float(v) for k, v in data.get("cv_spread", {}).items()},
        date=str(data["date"]), command=str(data["command"]), inputs=tuple(data["inputs"]))


def committed_fit() -> Fit:
    """The committed parameters as a :class:`~tokenomics.calibration.pooling.Fit`."""
    p = calibration_path()
    data = read_toml(p)
    committed()                          # validates the file
    z = np.array([float(to_fitted(q, float(data[q]))) for q in PARAMS])
    return Fit(z=z, offsets=_offsets(p, data))


def efficiency_presets() -> dict[str, Efficiency]:
    """Named efficiency models: ``"roofline"`` (the bound) and ``"calibrated"`` (the forecast).

    The calibrated preset holds the pooled values and each fitted stack's and hardware
    family's: a :class:`~tokenomics.Deployment` that names its ``engine`` takes its own.

    Examples
    --------
    >>> p = efficiency_presets()
    >>> p["roofline"].mbu, 0 < p["calibrated"].mbu < 1
    (1.0, True)
    """
    return {"roofline": ROOFLINE, "calibrated": committed().efficiency}


def _is_moe(row: CorpusRow) -> bool:
    return model(row.model).moe is not None


def interval_for(novel: tuple[str, ...] | None = None) -> tuple[float, float]:
    """The 80% interval of a forecast new in the given respects, as speed ratios.

    Parameters
    ----------
    novel : tuple of str, optional
        Which of :data:`NOVELTY` (``"stack"``, ``"hardware_family"``, ``"model_family"``)
        the corpus has not seen for the forecast; None: nothing is known (the pooled
        interval of every grouping, :attr:`Calibration.ratio_low`/``ratio_high``).

    Returns
    -------
    (low, high) : floats
        Measured / forecast speed bounds: the source-family interval (every forecast is a
        new source), each side widened in quadrature by each novel grouping's excess over
        the random split's, :math:`\\ell = -\\sqrt{\\ell_{src}^2 + \\sum_{g}
        \\max(\\ell_g^2 - \\ell_{rows}^2, 0)}` on the log scale (likewise above).
    """
    cal = committed()
    if novel is None:
        return cal.ratio_low, cal.ratio_high
    if isinstance(novel, str) or not isinstance(novel, (tuple, list, set, frozenset)) or \
            not all(isinstance(g, str) for g in novel):
        raise TokenomicsError(f"novel must be a tuple of grouping names among "
                              f"{', '.join(NOVELTY)} (or None), got {novel!r}")
    bad = set(novel) - set(NOVELTY)
    if bad:
        raise TokenomicsError(f"novel must name groupings among {', '.join(NOVELTY)}, got "
                              f"{', '.join(sorted(bad))}")
    base = cal.intervals.get("rows", cal.intervals["all"])
    src = cal.intervals.get("source_family", cal.intervals["all"])
    out = []
    for side in (0, 1):
        b2 = np.log(base[side]) ** 2
        s2 = np.log(src[side]) ** 2 + sum(max(np.log(cal.intervals[g][side]) ** 2 - b2, 0.0)
                                          for g in novel if g in cal.intervals)
        out.append(float(np.exp(np.sqrt(s2) * (1 if side else -1))))
    return out[0], out[1]


def novelty_of(dep: Any) -> tuple[str, ...]:
    """Which of :data:`NOVELTY` the committed fit has not seen for a deployment: its stack
    (none without an ``engine``), its hardware's family, its model's family."""
    cal = committed()
    out = []
    if not dep.stack or dep.stack not in cal.seen.get("stack", ()):
        out.append("stack")
    if cal.hardware_families.get(dep.hardware.id) not in cal.seen.get("hardware_family", ()):
        out.append("hardware_family")
    if cal.model_families.get(dep.model.id) not in cal.seen.get("model_family", ()):
        out.append("model_family")
    return tuple(out)


def forecast_interval(speed: Any, bound: Any, dep: Any = None) -> tuple[Any, Any]:
    """Prediction interval of a calibrated speed [token/s], fast end capped at the bound.

    Parameters
    ----------
    speed, bound : float or array_like
        The calibrated forecast and the roofline bound [token/s].
    dep : Deployment, optional
        The deployment forecast: the interval widens for what the corpus has not seen of
        it (:func:`novelty_of`, :func:`interval_for`); default the pooled interval.

    Returns
    -------
    (low, high) : floats or arrays
        ``speed x ratio_low`` and ``min(speed x ratio_high, bound)``; both bracket the
        point forecast.
    """
    if dep is not None:
        check_deployment(dep, "forecast_interval")
    lo_r, hi_r = interval_for(None if dep is None else novelty_of(dep))
    s = V.non_negative(speed, "speed", "token/s")
    b = V.non_negative(bound, "bound", "token/s")
    low = np.minimum(s * lo_r, s)
    high = np.minimum(np.maximum(s * hi_r, s), np.maximum(b, s))
    return low, high


def _cv_frame(refit: bool, progress: Any) -> tuple[list[CorpusRow], Design, Fit, pd.DataFrame]:
    rows = calibration_rows()
    d = build_design(rows)
    full = fit_design(d) if refit else committed_fit()
    return rows, d, full, grouped_cv(rows, d, progress, full)


def calibration_report(refit: bool = False, progress: Any = None) -> pd.DataFrame:
    """Every corpus row beside its bound, the calibrated forecast and its held-out forecasts.

    Parameters
    ----------
    refit : bool
        Fit the parameters now instead of using the committed ones. The held-out forecasts
        are always recomputed (a fit per group, starting from the full fit's parameters).
    progress : callable, optional
        ``progress(done, total, label)`` after each held-out fit (:func:`grouped_cv`).

    Returns
    -------
    pandas.DataFrame
        ``id``, ``model``, ``hardware``, the group columns, ``metric``, ``moe``,
        ``measured``, ``bound``, ``forecast``, ``forecast_low``, ``forecast_high`` (the row's
        unit), ``relative_error`` (in-sample), ``cv_<grouping>_error`` for each grouping
        and the random split, ``roofline`` (the roofline preset read the same way),
        ``roofline_relative_error`` and ``bound_relative_error``.
    """
    rows, d, full, cv = _cv_frame(refit, progress)
    f = predict_rows(d, full.row_parameters(d))
    b = np.array([bound(r) for r in rows])
    lo_r, hi_r = committed().ratio_low, committed().ratio_high
    speedy = d.kind == "speed"
    lo = np.where(speedy, f * lo_r, f / lo_r)
    hi = np.where(speedy, np.minimum(f * hi_r, b), np.maximum(f / hi_r, b))
    out = pd.DataFrame(dict(
        id=d.ids, model=[r.model for r in rows], hardware=[r.hardware for r in rows],
        **{g: [getattr(r, g) for r in rows] for g in GROUPINGS},
        metric=[r.metric for r in rows], moe=[_is_moe(r) for r in rows], measured=d.measured,
        bound=b, forecast=f, forecast_low=np.minimum(lo, hi), forecast_high=np.maximum(lo, hi),
        relative_error=np.abs(f / d.measured - 1)))
    for g in (*GROUPINGS, "rows"):
        out[f"cv_{g}_error"] = np.abs(cv[f"cv_{g}"].to_numpy() / d.measured - 1)
        out[f"cv_{g}_ratio"] = cv[f"cv_{g}_ratio"].to_numpy()
    out["roofline"] = predict_rows(d, ROOFLINE)
    out["roofline_relative_error"] = np.abs(out["roofline"].to_numpy() / d.measured - 1)
    out["bound_relative_error"] = np.abs(b / d.measured - 1)
    return out


def calibration_summary(report: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median absolute error by slice: in-sample, each grouping held out, the roofline.

    Returns
    -------
    pandas.DataFrame
        One row per slice (``all``, ``moe``, ``dense``, ``tpot_under_load``, then each
        group of each grouping), columns ``rows``, ``in_sample``, ``cv_<grouping>`` (and
        ``cv_rows``, the random split), ``roofline`` and ``bound``.
    """
    t = calibration_report() if report is None else report
    slices = {"all": np.ones(len(t), bool), "moe": t.moe.to_numpy(),
              "dense": ~t.moe.to_numpy(),
              "tpot_under_load": (t.metric == "server_tpot_at_concurrency").to_numpy()}
    for g in GROUPINGS:
        for v in sorted(t[g].unique()):
            slices[f"{g}={v}"] = (t[g] == v).to_numpy()
    recs = []
    for name, m in slices.items():
        rec: dict[str, Any] = dict(slice=name, rows=int(m.sum()),
                                   in_sample=float(t.relative_error[m].median()))
        for g in (*GROUPINGS, "rows"):
            rec[f"cv_{g}"] = float(t[f"cv_{g}_error"][m].median())
        rec["roofline"] = float(t.roofline_relative_error[m].median())
        rec["bound"] = float(t.bound_relative_error[m].median())
        recs.append(rec)
    return pd.DataFrame(recs)


def transfer_report(source_family: str = "mlenergy") -> pd.DataFrame:
    """A source family's rows forecast by a fit that never saw them (held out by source).

    Parameters
    ----------
    source_family : str
        Default ``"mlenergy"``: the 251 vLLM runs of the ML.ENERGY Leaderboard V3 (H100 and
        B200).

    Returns
    -------
    pandas.DataFrame
        ``id``, ``model``, ``hardware``, ``moe``, ``concurrency``, ``metric``, ``measured``,
        ``bound``, ``forecast`` (the fit without the family), ``roofline``, ``error`` and
        ``roofline_error`` (:math:`|\\hat y / y - 1|`), and ``interval_holds`` (the
        source-family interval around the forecast holds the row).

    Raises
    ------
    TokenomicsError
        When the corpus has no fitted row of that source family.
    """
    if not isinstance(source_family, str):
        raise TokenomicsError(f"source_family must be a corpus source family (a string such "
                              f"as 'mlenergy'), got {source_family!r}")
    rows = calibration_rows()
    test = np.array([r.source_family == source_family for r in rows])
    if not test.any():
        raise TokenomicsError(f"no fitted corpus rows of source family {source_family!r}")
    d = build_design(rows)
    f = fit_design(d, np.flatnonzero(~test), committed_fit())
    dt = d.take(np.flatnonzero(test))
    pred = predict_rows(dt, f.row_parameters(dt))
    ro = predict_rows(dt, ROOFLINE)
    kept = [r for r, t in zip(rows, test, strict=True) if t]
    ratio = _speed_ratio(dt, pred)
    lo, hi = committed().intervals.get("source_family", (committed().ratio_low,
                                                         committed().ratio_high))
    return pd.DataFrame(dict(
        id=dt.ids, model=[r.model for r in kept], hardware=[r.hardware for r in kept],
        moe=[_is_moe(r) for r in kept], concurrency=dt.concurrency,
        metric=[r.metric for r in kept], measured=dt.measured,
        bound=[bound(r) for r in kept], forecast=pred, roofline=ro,
        error=np.abs(pred / dt.measured - 1), roofline_error=np.abs(ro / dt.measured - 1),
        interval_holds=(ratio >= lo) & (ratio <= hi)))


def cv_figures(rows: list[CorpusRow], d: Design, full: Fit, cv: pd.DataFrame
               ) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
    """The intervals and the cross-validated figures of a fit and its held-out forecasts."""
    moe = np.array([_is_moe(r) for r in rows])
    tpot = np.array([r.metric == "server_tpot_at_concurrency" for r in rows])
    pred = predict_rows(d, full.row_parameters(d))
    figs: dict[str, float] = {
        "in_sample_median_error": float(np.median(np.abs(pred / d.measured - 1)))}
    intervals: dict[str, tuple[float, float]] = {}
    pooled = []
    for g in (*GROUPINGS, "rows"):
        err = np.abs(cv[f"cv_{g}"].to_numpy() / d.measured - 1)
        ratios = cv[f"cv_{g}_ratio"].to_numpy()
        labels = _labels(rows, g)
        lo, hi = group_interval(ratios, labels)
        intervals[g] = (min(lo, 1.0), max(hi, 1.0))
        figs[f"{g}_median_error"] = float(np.median(err))
        figs[f"{g}_moe_median_error"] = float(np.median(err[moe]))
        figs[f"{g}_dense_median_error"] = float(np.median(err[~moe]))
        figs[f"{g}_tpot_median_error"] = float(np.median(err[tpot]))
        figs[f"{g}_worst_group_median_error"] = float(max(
            np.median(err[labels == v]) for v in np.unique(labels)))
        figs[f"{g}_interval_coverage"] = cv_coverage(ratios, labels)
        if g != "rows":
            pooled.append(ratios)
    lo, hi = (float(x) for x in np.quantile(np.concatenate(pooled), INTERVAL))
    intervals["all"] = (min(lo, 1.0), max(hi, 1.0))
    return intervals, figs


def cv_spread(n: int = 10, perturb: float = 0.01, progress: Any = None
              ) -> pd.DataFrame:
    """The cross-validated figures from ``n`` perturbed starts (the reproducibility check).

    Every start of the full fit and of every fold is perturbed by a seeded relative noise
    of width ``perturb`` (a different seed each run); a figure that moved by more than the
    tolerance would be an optimiser's accident, not a result.

    Returns
    -------
    pandas.DataFrame
        One row per run, a column per figure of :func:`cv_figures`.
    """
    rows = calibration_rows()
    d = build_design(rows)
    recs = []
    for i in range(n):
        full = fit_design(d, perturb=perturb, seed=SEED + 1000 * (i + 1))
        cv = grouped_cv(rows, d, None, full, perturb=perturb)
        recs.append(cv_figures(rows, d, full, cv)[1])
        if progress is not None:
            progress(i + 1, n, f"start {i + 1}")
    return pd.DataFrame(recs)


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return '"' + v.replace('"', "'") + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return repr(float(v))


def write_calibration(path: Path | str | None = None, progress: Any = None,
                      spread: dict[str, float] | None = None) -> dict[str, Any]:
    """Fit, cross-validate by group, and write the result as a calibration file.

    Parameters
    ----------
    path : str or Path, optional
        Where to write; default ``calibrated.toml`` in the working directory. In a source
        checkout, ``measurements/calibrated.toml`` is the file the library commits.
    progress : callable, optional
        ``progress(done, total, label)`` after each held-out fit (:func:`grouped_cv`).
    spread : dict, optional
        Each figure's spread over perturbed starts (:func:`cv_spread`), written as
        ``[cv_spread]``.

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
    if not p.parent.is_dir():           # before a minute of fitting, not after
        raise TokenomicsError(f"cannot write {p}: folder {p.parent} does not exist; give a "
                              f"path in a folder that exists and you may write to")
    rows = calibration_rows()
    d = build_design(rows)
    full = fit_design(d)
    cv = grouped_cv(rows, d, progress, full)
    intervals, figs = cv_figures(rows, d, full, cv)
    pooled = full.pooled()
    data: dict[str, Any] = {**pooled, "date": _dt.date.today().isoformat(),
                            "command": "tokenomics calibrate --write measurements/calibrated.toml",
                            "inputs": [r.id for r in rows]}
    lines = ["# Efficiencies fitted to measurements/corpus.csv by tokenomics.calibration.fitting.",
             "# Refit with: tokenomics calibrate --write measurements/calibrated.toml",
             "# Pooled values in their own units; offsets in the fitted coordinates",
             "# (tokenomics.calibration.pooling.TRANSFORMS: logit of a fraction, log of a time).",
             ""]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data.items()]
    for level in LEVELS:
        for g, off in sorted(full.offsets.get(level, {}).items()):
            lines += ["", f'[offsets.{level}."{g}"]']
            lines += [f"{q} = {float(x)!r}" for q, x in zip(LEVELS[level], off, strict=True)]
    lines += ["", "# Measured / forecast speed ratios bounding 80% of the held-out rows", "[interval]"]
    lines += [f"{g} = [{lo!r}, {hi!r}]" for g, (lo, hi) in intervals.items()]
    lines += ["", "# The groups the fit saw", "[seen]"]
    lines += [f"{g} = {_toml_value(sorted({getattr(r, g) for r in rows}))}" for g in NOVELTY]
    lines += ["", "[hardware_families]"]
    lines += [f'"{h}" = "{f}"' for h, f in sorted({(r.hardware, r.hardware_family)
                                                    for r in rows})]
    lines += ["", "[model_families]"]
    lines += [f'"{m}" = "{f}"' for m, f in sorted({(r.model, r.model_family) for r in rows})]
    lines += ["", "# Grouped cross-validation (each group refitted without its rows)", "[cv]"]
    lines += [f"{k} = {v!r}" for k, v in figs.items()]
    if spread:
        lines += ["", "# Largest distance of each figure from the above over perturbed starts",
                  "[cv_spread]"]
        lines += [f"{k} = {v!r}" for k, v in spread.items()]
    try:
        p.write_text("\n".join(lines) + "\n")
    except OSError as exc:
        raise TokenomicsError(f"cannot write {p}: {exc.strerror}; give a path in a folder "
                              f"that exists and you may write to") from None
    committed.cache_clear()
    return {**data, "cv": figs, "intervals": intervals,
            "offsets": full.offset_table()}

