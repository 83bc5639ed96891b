"""Prediction intervals of held-out forecasts: a new group's bias beside a row's scatter.

The calibration (:mod:`tokenomics.calibration.fitting`) forecasts each corpus row with its
group (source family, serving stack, hardware family, model family) held out. The speed
ratios measured / forecast of those rows say how far off a forecast is for a group the fit
has not seen; this module turns them into the 80% interval of such a forecast
(:func:`group_interval`) and judges it the same way it is used, on each group with the
interval of the others (:func:`cv_coverage`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import to_array

#: Quantiles of the held-out speed ratios that bound the 80% interval.
INTERVAL = (0.1, 0.9)


def group_interval(ratios: Any, labels: Any, q: tuple[float, float] = INTERVAL
                   ) -> tuple[float, float]:
    r"""The interval of a speed ratio in a group not among ``labels`` (random effects) [-].

    A row's held-out log ratio :math:`x = \log(s/\hat s)` is read as its group's bias
    :math:`b_k` plus the row's own scatter :math:`e`. A new group draws a new bias, so the
    interval is the ``q`` quantiles of every sum :math:`\tilde b_k + e_j` (held at once up to
    four million sums, else read from their distribution function, inverted by bisection): each group's
    shrunk bias beside each row's residual from its group's median :math:`m_k`. The medians
    are shrunk toward their weighted mean :math:`\mu` by the between-group variance
    estimated by the method of moments,
    :math:`\tau^2 = \max(\mathrm{var}(m_k) - \overline{\sigma^2 / n_k}, 0)`:
    :math:`\tilde b_k = \mu + (m_k - \mu)\, n_k \tau^2 / (n_k \tau^2 + \sigma^2)`,
    :math:`\mu = \sum w_k m_k / \sum w_k`, :math:`w_k = 1 / (\sigma^2/n_k + \tau^2)`
    (:math:`\sigma^2` the residuals' variance, :math:`n_k` the group's rows): a group of one
    row carries its sampling noise, not a stack's effect, and a large one its median. Adding
    :math:`c` to every log ratio moves both ends by :math:`c`.

    Parameters
    ----------
    ratios : array_like
        Held-out measured / forecast speed ratios, > 0 [-].
    labels : array_like
        Each ratio's group.
    q : (float, float)
        Lower and upper quantile (default :data:`INTERVAL`, the 80% interval).

    Returns
    -------
    (low, high) : floats
        Speed-ratio bounds.

    Raises
    ------
    TokenomicsError
        For ratios that are not finite and > 0, or labels that do not pair with them.

    References
    ----------
    .. [1] R. DerSimonian, N. Laird, "Meta-analysis in clinical trials", Controlled Clinical
       Trials 7 (1986) 177-188 (the moment estimate of the between-group variance).
    .. [2] B. Efron, C. Morris, "Data analysis using Stein's estimator and its
       generalizations", JASA 70 (1975) 311-319 (shrinking group means).
    """
    r = to_array(ratios, "ratios")
    lab = np.asarray(labels)
    if r.ndim != 1 or r.size == 0 or lab.shape != r.shape:
        raise TokenomicsError(f"group_interval needs one label per ratio in two equal-length "
                              f"1-D sequences, got shapes {r.shape} and {lab.shape}")
    if not np.all(np.isfinite(r) & (r > 0)):
        raise TokenomicsError("group_interval: every ratio must be a finite number > 0 "
                              "(measured / forecast speed)")
    x = np.log(r)
    groups, idx = np.unique(lab, return_inverse=True)
    med = np.array([np.median(x[idx == k]) for k in range(len(groups))])
    n = np.bincount(idx, minlength=len(groups)).astype(float)
    resid = x - med[idx]
    s2 = float(np.var(resid))
    tau2 = max(float(np.var(med) - np.mean(s2 / n)), 0.0)
    w = 1.0 / (s2 / n + tau2) if s2 > 0 or tau2 > 0 else np.ones_like(n)
    mu = float(np.sum(w * med) / np.sum(w))
    shrunk = mu + (med - mu) * (n * tau2 / (n * tau2 + s2) if s2 > 0 else 1.0)
    if resid.size * shrunk.size <= _EXACT_SUMS:
        lo, hi = np.quantile((resid[:, None] + shrunk[None, :]).ravel(), q)
    else:                                  # too many sums to hold: invert their ECDF instead
        lo, hi = (_sum_quantile(np.sort(resid), shrunk, p) for p in q)
    return float(np.exp(lo)), float(np.exp(hi))


#: Most residual x bias sums :func:`group_interval` holds at once (about 32 MB); beyond, the
#: quantiles come from the sums' empirical distribution function, inverted by bisection.
_EXACT_SUMS = 4_000_000


def _sum_quantile(resid_sorted: np.ndarray, biases: np.ndarray, p: float) -> float:
    """The ``p`` quantile of every sum resid + bias, from :math:`F(t) = \\overline{F_e(t - b_k)}`
    (the residuals' empirical distribution averaged over the biases), by bisection [-]."""
    lo = float(resid_sorted[0] + biases.min())
    hi = float(resid_sorted[-1] + biases.max())
    n = resid_sorted.size
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        F = np.searchsorted(resid_sorted, mid - biases, side="right").sum() / (n * biases.size)
        lo, hi = (mid, hi) if F < p else (lo, mid)
        if hi - lo <= 1e-12 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


def cv_coverage(ratios: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows inside the interval built from the other groups' held-out ratios
    (:func:`group_interval`)."""
    inside = np.zeros(len(ratios), bool)
    for v in np.unique(labels):
        test = labels == v
        lo, hi = group_interval(ratios[~test], labels[~test])
        inside[test] = (ratios[test] >= lo) & (ratios[test] <= hi)
    return float(inside.mean())
