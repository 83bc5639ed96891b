"""Queries at an interactivity floor (best, cheapest point) and the brute-force sweep.

The sweep is the reference the closed form is checked against.

A service level "at least :math:`X` tokens/s per user" is a vertical line at :math:`x = X`
(S23). On a frontier (:func:`tokenomics.pareto.envelope.frontier`) the answer is read off the
straight envelope segment spanning :math:`X`; on deployments each curve's step time is
inverted exactly: the largest whole batch with :math:`E/t(B) \\ge X` is found by bisection on
the integer batch (exact for MoE's curved pieces too), and the best (:func:`best_at`) or the
cheapest per million tokens (:func:`cheapest_at`) wins.

:func:`sweep` evaluates every deployment at every (batch, context) with the step engine
(:func:`tokenomics.physics.step.decode`): the brute-force reference of the tests, and an input
:func:`tokenomics.pareto.envelope.frontier` accepts.

References
----------
.. [1] Seed digest S23 (the SLO is a vertical line at the required interactivity).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.economics.basis import as_price_basis
from tokenomics.economics.cost import cost_per_million_tokens
from tokenomics.pareto.curves import DecodeCurve, decode_curve
from tokenomics.pareto.inputs import (
    config_columns,
    deployment_label,
    deployments_of,
    device_prices,
    price_columns,
    with_efficiency,
)


def best_at(deployments: Any, min_tokens_per_s_per_user: float,
            context_tokens: float | None = None, speculation: Any = (None,),
            efficiency: Any = "deployment") -> pd.Series:
    """Best throughput per device at or above an interactivity floor (S23's vertical line).

    Parameters
    ----------
    deployments : Deployment, iterable, or a DataFrame from a frontier
        From :func:`~tokenomics.pareto.envelope.frontier`, the answer is read off its
        envelope (the straight segment spanning the floor); with deployments, each curve is
        inverted exactly at whole batches.
    min_tokens_per_s_per_user : float
        The floor [token/s].
    context_tokens : float, optional
        Required with deployments.
    speculation : sequence of (dict or None)
        Speculative-decoding options crossed with the deployments (see
        :func:`~tokenomics.pareto.envelope.frontier`).
    efficiency : {"calibrated", "roofline", "deployment"} or Efficiency
        As in :func:`~tokenomics.pareto.envelope.frontier` (with deployments).

    Returns
    -------
    pandas.Series
        The winning point: ``tokens_per_s_per_user``, ``tokens_per_s_per_device``, ``batch``,
        configuration columns.

    Raises
    ------
    TokenomicsError
        When no configuration reaches the floor; the message gives the fastest one's speed.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h200", tp=4, weight_dtype="fp8",
    ...                   compute_dtype="fp8")
    >>> r = best_at([d], 100, context_tokens=4096)
    >>> bool(r.tokens_per_s_per_user >= 100)
    True
    """
    X = V.single_amount(V.positive(min_tokens_per_s_per_user, "min_tokens_per_s_per_user",
                                   "token/s"), "min_tokens_per_s_per_user", "token/s")
    if isinstance(deployments, pd.DataFrame) and "tokens_per_s_per_user" in deployments:
        f = deployments.sort_values("tokens_per_s_per_user").reset_index(drop=True)
        xs = f.tokens_per_s_per_user.to_numpy()
        if X > xs[-1] * (1 + 1e-12):
            raise TokenomicsError(
                f"no configuration reaches {X:g} tokens/s per user; the fastest on this "
                f"frontier gives {xs[-1]:.4g} ({f.label.iloc[-1]})")
        k = int(np.searchsorted(xs, X))
        row = f.iloc[k].copy()
        if k > 0 and xs[k] > X and f.label.iloc[k] == f.label.iloc[k - 1]:
            # on a straight segment of one curve: interpolate exactly
            w = (X - xs[k - 1]) / (xs[k] - xs[k - 1])
            for col in ("tokens_per_s_per_device", "batch", "step_time_s"):
                row[col] = f[col].iloc[k - 1] + w * (f[col].iloc[k] - f[col].iloc[k - 1])
            row["tokens_per_s_per_user"] = X
            p = float(row.get("price_usd_per_device_hour", math.nan))
            if math.isfinite(p):    # the cost at the interpolated throughput, not the vertex's
                row["cost_usd_per_mtok"] = float(
                    cost_per_million_tokens(p, row["tokens_per_s_per_device"]))
        return row
    if context_tokens is None:
        raise TokenomicsError("context_tokens is required when giving deployments")
    deps = with_efficiency(deployments_of(deployments), efficiency)
    pts = _curve_points_at(deps, X, context_tokens, speculation,
                           device_prices(deps, None, None, warn=False))
    if not pts:
        fastest = max(float(c.tokens_per_s_per_user[0])
                      for c in _curves(deps, context_tokens, speculation))
        raise TokenomicsError(f"no configuration reaches {X:g} tokens/s per user; the fastest "
                              f"gives {fastest:.4g} at batch 1")
    return max(pts, key=lambda r: r.tokens_per_s_per_device)


def _curves(deployments: Any, context_tokens: float, speculation: Any) -> list[DecodeCurve]:
    """Every deployment's curve for every speculation option."""
    if speculation is not None and not isinstance(speculation, (list, tuple)):
        raise TokenomicsError(f"speculation must be a list of options (dicts, or None for plain "
                              f"decode), got {speculation!r}")
    specs = list(speculation) if speculation is not None else [None]
    return [decode_curve(d, context_tokens, sp) for d in deployments_of(deployments)
            for sp in specs]


def _curve_points_at(deployments: Any, X: float, context_tokens: float, speculation: Any,
                     priced: dict[str, Any]) -> list[pd.Series]:
    """Each curve's best whole-batch point with interactivity >= X (exact bisection)."""
    out = []
    for c in _curves(deployments, context_tokens, speculation):
        if c.tokens_per_s_per_user[0] < X:
            continue
        dep, E = c.deployment, c.tokens_per_step
        tmax = E / X
        lo, hi = 1, c.max_batch
        if float(c.time_at(hi)) <= tmax:
            lo = hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if float(c.time_at(mid)) <= tmax:
                lo = mid
            else:
                hi = mid
        t = float(c.time_at(lo))
        y = lo * E / t / dep.n_devices
        pc = price_columns(priced.get(dep.hardware.id))
        p = pc["price_usd_per_device_hour"]
        out.append(pd.Series(dict(
            tokens_per_s_per_user=E / t, tokens_per_s_per_device=y, step_time_s=t,
            batch=float(lo), cost_usd_per_mtok=float(cost_per_million_tokens(p, y))
            if math.isfinite(p) else float("nan"),
            label=deployment_label(dep, c.speculation), **config_columns(dep),
            speculation_k=int(c.speculation["k"]) if c.speculation else 0, **pc)))
    return out


def cheapest_at(deployments: Any, min_tokens_per_s_per_user: float, context_tokens: float,
                prices: dict[str, float] | None = None, speculation: Any = (None,),
                efficiency: Any = "deployment", price_basis: Any = None) -> pd.Series:
    """The cheapest configuration that meets an interactivity floor [USD/Mtok].

    Each configuration runs at its largest whole batch whose tokens/s per user stays at or
    above the floor (its cheapest point there); the one with the lowest cost per million
    tokens wins. Hardware prices: ``prices`` (USD per device-hour by hardware id), else the
    catalog's price on ``price_basis`` (default
    :data:`~tokenomics.economics.basis.DEFAULT_PRICE_BASIS`: neocloud, else hyperscaler,
    on-demand, latest); configurations without a price are skipped. Devices priced at
    different tiers warn (``UserWarning``).

    Returns
    -------
    pandas.Series
        The winner as in :func:`best_at`, with ``cost_usd_per_mtok`` [USD/Mtok] and the price
        it used: ``price_usd_per_device_hour`` [USD/hour], ``price_tier``, ``price_date``
        (``attrs["price_basis"]`` names the basis).

    Raises
    ------
    TokenomicsError
        When no priced configuration reaches the floor.

    Examples
    --------
    >>> import tokenomics as tk
    >>> deps = [tk.Deployment("llama-3.1-8b", h) for h in ("h100-sxm", "h200")]
    >>> r = cheapest_at(deps, 50, 2048, prices={"h100-sxm": 2.0, "h200": 3.0})
    >>> r.hardware in ("h100-sxm", "h200")
    True
    """
    X = V.single_amount(V.positive(min_tokens_per_s_per_user, "min_tokens_per_s_per_user",
                                   "token/s"), "min_tokens_per_s_per_user", "token/s")
    deps = with_efficiency(deployments_of(deployments), efficiency)
    basis = as_price_basis(price_basis)
    priced = device_prices(deps, prices, basis)
    pts = [r for r in _curve_points_at(deps, X, context_tokens, speculation, priced)
           if math.isfinite(r.cost_usd_per_mtok)]
    if not pts:
        raise TokenomicsError(f"no priced configuration reaches {X:g} tokens/s per user "
                              f"(check prices= for hardware without a catalog price on the "
                              f"basis '{basis.label}')")
    best = min(pts, key=lambda r: r.cost_usd_per_mtok)
    best.attrs["price_basis"] = basis.label
    return best


def sweep(deployments: Any, batch: Any, context_tokens: Any,
          prices: dict[str, float] | None = None, price_basis: Any = None) -> pd.DataFrame:
    """Brute-force decode sweep: every deployment at every (batch, context), vectorised.

    Parameters
    ----------
    deployments : Deployment or iterable of Deployment
    batch, context_tokens : array_like
        Broadcast together per deployment (pass a grid with ``np.meshgrid``).
    prices : dict, optional
        USD per device-hour by hardware id; other devices at the catalog's price on
        ``price_basis``.
    price_basis : PriceBasis, str, sequence of str or None
        As in :func:`~tokenomics.pareto.envelope.frontier`.

    Returns
    -------
    pandas.DataFrame
        One row per point: configuration columns, ``batch``, ``context_tokens``,
        ``step_time_s``, ``tokens_per_s_per_user``, ``tokens_per_s_per_device``, ``bound``,
        ``fits``, ``cost_usd_per_mtok``, ``joules_per_token``, ``label``,
        ``price_usd_per_device_hour``, ``price_tier``, ``price_date``; the private column
        ``_deployment`` lets :func:`~tokenomics.pareto.envelope.frontier` reuse the
        deployments.

    Examples
    --------
    >>> import tokenomics as tk
    >>> s = sweep([tk.Deployment("llama-3.1-8b", "h100-sxm")], [1, 8, 64], 2048)
    >>> len(s)
    3
    """
    from tokenomics.physics.step import decode

    frames = []
    deps = deployments_of(deployments)
    priced = device_prices(deps, prices, price_basis)
    for dep in deps:
        r = decode(dep, batch, context_tokens, on_oom="mark").to_frame()
        pc = price_columns(priced.get(dep.hardware.id))
        p = pc["price_usd_per_device_hour"]
        df = pd.DataFrame({
            "batch": r.batch, "context_tokens": r.context_tokens,
            "step_time_s": r.time_s, "tokens_per_s_per_user": r.tokens_per_s_per_user,
            "tokens_per_s_per_device": r.tokens_per_s_per_device, "bound": r.bound,
            "fits": r.fits})
        df["cost_usd_per_mtok"] = (
            np.asarray(cost_per_million_tokens(p, df.tokens_per_s_per_device.to_numpy()))
            if math.isfinite(p) else np.nan)
        df["joules_per_token"] = (dep.hardware.tdp_w / df.tokens_per_s_per_device
                                  if dep.hardware.tdp_w else np.nan)
        df["label"] = deployment_label(dep)
        for k, v in {**config_columns(dep), **pc}.items():
            df[k] = v
        df["_deployment"] = [dep] * len(df)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out.attrs["price_basis"] = as_price_basis(price_basis).label
    return out
