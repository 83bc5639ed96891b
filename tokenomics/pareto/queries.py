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
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
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


class OperatingPoint(Mapping):
    """One configuration at one batch: the answer of :func:`best_at` and :func:`cheapest_at`.

    Every field reads as an attribute or a key (``r.batch``, ``r["label"]``); numbers keep
    their own types (the batch a whole ``int`` where it is one), so nothing is an
    object-dtype Series. Fields: ``tokens_per_s_per_user`` [token/s],
    ``tokens_per_s_per_device`` [token/s], ``step_time_s`` [s], ``batch`` [sequence],
    ``cost_usd_per_mtok`` [USD/Mtok], ``label``, the configuration columns (``model``,
    ``hardware``, ``tp``, ...) and the price columns.

    Attributes
    ----------
    attrs : dict
        Metadata (``price_basis`` for :func:`cheapest_at`).
    """

    def __init__(self, values: Mapping[str, Any], attrs: Mapping[str, Any] | None = None):
        if not isinstance(values, Mapping) or not (attrs is None or isinstance(attrs, Mapping)):
            raise TokenomicsError(f"OperatingPoint takes a mapping of field -> value (and an "
                                  f"optional mapping of attrs), got {type(values).__name__}")
        object.__setattr__(self, "_values", {k: _plain(v) for k, v in values.items()})
        object.__setattr__(self, "attrs", dict(attrs or {}))

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values")
        if values is None or name not in values:       # (copy and pickle probe before init)
            raise AttributeError(f"OperatingPoint has no field {name!r}; fields: "
                                 f"{', '.join(values or ())}")
        return values[name]

    def __reduce__(self) -> tuple[Any, ...]:
        return (OperatingPoint, (self._values, self.attrs))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("an OperatingPoint is read-only")

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def to_series(self) -> pd.Series:
        """The fields as a pandas Series (object dtype: it mixes numbers and labels)."""
        return pd.Series(self._values)

    def to_frame(self) -> pd.DataFrame:
        """One row, indexed by ``label``, each column with its own dtype."""
        return pd.DataFrame([self._values]).set_index("label")

    def __repr__(self) -> str:
        v = self._values
        head = ", ".join(f"{k}={v[k]:.4g}" if isinstance(v[k], float) else f"{k}={v[k]!r}"
                         for k in ("batch", "tokens_per_s_per_user",
                                   "tokens_per_s_per_device", "cost_usd_per_mtok") if k in v)
        return f"OperatingPoint({v.get('label', '')!r}, {head})"


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python number it holds (for readable fields and reprs)."""
    return v.item() if isinstance(v, np.generic) else v


def best_at(deployments: Any, min_tokens_per_s_per_user: Any = None,
            context_tokens: float | None = None, speculation: Any = (None,),
            efficiency: Any = "deployment", *, max_tpot_s: Any = None) -> OperatingPoint:
    """Best throughput per device at or above an interactivity floor (S23's vertical line).

    Parameters
    ----------
    deployments : Deployment, iterable, or a DataFrame from a frontier
        From :func:`~tokenomics.pareto.envelope.frontier`, the answer is read off its
        envelope (the straight segment spanning the floor); with deployments, each curve is
        inverted exactly at whole batches.
    min_tokens_per_s_per_user : float or pint.Quantity
        The floor [token/s], or a TPOT ceiling as a time Quantity (``tk.Q_(50, "ms")`` is
        20 token/s): :func:`interactivity_floor`.
    context_tokens : float, optional
        Required with deployments.
    speculation : sequence of (dict or None)
        Speculative-decoding options crossed with the deployments (see
        :func:`~tokenomics.pareto.envelope.frontier`).
    efficiency : {"calibrated", "roofline", "deployment"} or Efficiency
        As in :func:`~tokenomics.pareto.envelope.frontier` (with deployments).
    max_tpot_s : float or pint.Quantity, optional
        The service level as a TPOT ceiling [s] instead of a floor.

    Returns
    -------
    OperatingPoint
        The winning point: ``tokens_per_s_per_user``, ``tokens_per_s_per_device``,
        ``step_time_s``, ``batch`` (the largest whole batch that meets the floor, on a
        frontier too), configuration columns; ``to_frame()`` gives one typed row.

    Raises
    ------
    TokenomicsError
        When no configuration reaches the floor; the message gives the fastest one's speed.
    DoesNotFitError
        When no candidate holds one sequence of ``context_tokens``; candidates that do not
        fit among others that do are skipped with a ``UserWarning`` naming them.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h200", tp=4, weight_dtype="fp8",
    ...                   compute_dtype="fp8")
    >>> r = best_at([d], 100, context_tokens=4096)
    >>> bool(r.tokens_per_s_per_user >= 100)
    True
    """
    X = interactivity_floor(min_tokens_per_s_per_user, max_tpot_s)
    if isinstance(deployments, pd.DataFrame) and "tokens_per_s_per_user" in deployments:
        return _on_frontier(deployments, X)
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
    return OperatingPoint(max(pts, key=lambda r: r["tokens_per_s_per_device"]))


def interactivity_floor(min_tokens_per_s_per_user: Any = None,
                        max_tpot_s: Any = None) -> float:
    r"""An interactivity service level as a floor in tokens/s per user [token/s].

    Parameters
    ----------
    min_tokens_per_s_per_user : float or pint.Quantity, optional
        A floor [token/s] (a number, or a Quantity of token/s), or a TPOT ceiling given as a
        time Quantity (``tk.Q_(50, "ms")``: one token per 50 ms is 20 token/s per user).
    max_tpot_s : float or pint.Quantity, optional
        A TPOT ceiling [s]; exactly one of the two is given.

    Returns
    -------
    float
        :math:`X` [token/s], with :math:`X = 1 / \mathrm{TPOT}` for a ceiling: a decode
        step emits one token per sequence, so a step time at most the TPOT is a speed at
        least its inverse.

    Raises
    ------
    TokenomicsError
        For neither or both, a non-positive or non-finite value, or a Quantity that is
        neither a speed nor a time.
    """
    from tokenomics.core.units import registry

    if (min_tokens_per_s_per_user is None) == (max_tpot_s is None):
        raise TokenomicsError("give the interactivity service level once: a floor "
                              "min_tokens_per_s_per_user [token/s] or a ceiling max_tpot_s [s]")
    if max_tpot_s is None and hasattr(min_tokens_per_s_per_user, "units"):
        q = min_tokens_per_s_per_user
        if registry().Quantity(1, str(q.units)).check("[time]"):
            max_tpot_s, min_tokens_per_s_per_user = q, None
    if max_tpot_s is not None:
        t = V.single_amount(V.positive(max_tpot_s, "max_tpot_s", "s"), "max_tpot_s", "s")
        return 1.0 / t
    return V.single_amount(V.positive(min_tokens_per_s_per_user, "min_tokens_per_s_per_user",
                                      "token/s"), "min_tokens_per_s_per_user", "token/s")


def _on_frontier(frontier: pd.DataFrame, X: float) -> OperatingPoint:
    """The frontier read at the floor ``X``, at the largest whole batch that meets it.

    Between two consecutive frontier points of one curve the step time is linear in the
    batch (the envelope keeps every kink), so the batch where the curve crosses ``X``
    (step time :math:`E/X`, :math:`E` tokens per step) is interpolated in step time, rounded
    down to a whole batch, and the point recomputed there.
    """
    need = {"tokens_per_s_per_user", "tokens_per_s_per_device", "step_time_s", "batch", "label"}
    if frontier.empty or not need <= set(frontier.columns):
        raise TokenomicsError(f"best_at reads a frontier with rows and the columns "
                              f"{', '.join(sorted(need))} (tk.frontier's frame)")
    f = frontier.sort_values("tokens_per_s_per_user").reset_index(drop=True)
    xs = f.tokens_per_s_per_user.to_numpy()
    if X > xs[-1] * (1 + 1e-12):
        raise TokenomicsError(
            f"no configuration reaches {X:g} tokens/s per user; the fastest on this "
            f"frontier gives {xs[-1]:.4g} ({f.label.iloc[-1]})")
    k = int(np.searchsorted(xs, X * (1 - 1e-12)))
    row = f.iloc[k].to_dict()
    piece = [j for j in (k + 1, k, k - 1) if 0 <= j < len(f) and f.label.iloc[j] == row["label"]]
    Bs, ts = f.batch.to_numpy()[piece], f.step_time_s.to_numpy()[piece]   # batch ascending
    E = xs[k] * ts[piece.index(k)]
    b_cross = float(np.interp(E / X, ts, Bs))
    B = math.floor(b_cross + 1e-9)
    if B < Bs[0] or B == row["batch"]:
        if float(row["batch"]).is_integer():
            row["batch"] = int(row["batch"])
        return OperatingPoint(row)
    t = float(np.interp(B, Bs, ts))
    scale = (B / row["batch"]) * (row["step_time_s"] / t)     # tokens/s per device ratio
    row.update(batch=int(B), step_time_s=t, tokens_per_s_per_user=E / t,
               tokens_per_s_per_device=row["tokens_per_s_per_device"] * scale)
    for col in ("cost_usd_per_mtok", "joules_per_token"):     # both inverse in throughput
        if col in row and math.isfinite(row[col]):
            row[col] = row[col] / scale
    return OperatingPoint(row)


def _curves(deployments: Any, context_tokens: float, speculation: Any) -> list[DecodeCurve]:
    """Every deployment's curve for every speculation option."""
    if speculation is not None and not isinstance(speculation, (list, tuple)):
        raise TokenomicsError(f"speculation must be a list of options (dicts, or None for plain "
                              f"decode), got {speculation!r}")
    specs = list(speculation) if speculation is not None else [None]
    curves, misfits = [], []
    for d in deployments_of(deployments):
        for sp in specs:
            try:
                curves.append(decode_curve(d, context_tokens, sp))
            except DoesNotFitError as exc:
                misfits.append(f"{deployment_label(d, sp)} ({exc})")
    if misfits and not curves:
        raise DoesNotFitError(f"no candidate fits one sequence of {context_tokens:g} tokens: "
                              f"{'; '.join(misfits)}")
    if misfits:
        warnings.warn(f"skipped {len(misfits)} candidate(s) where not one sequence of "
                      f"{context_tokens:g} tokens fits: {'; '.join(misfits)}", UserWarning,
                      stacklevel=4)
    return curves


def _curve_points_at(deployments: Any, X: float, context_tokens: float, speculation: Any,
                     priced: dict[str, Any]) -> list[dict[str, Any]]:
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
        out.append(dict(
            tokens_per_s_per_user=E / t, tokens_per_s_per_device=y, step_time_s=t,
            batch=int(lo), cost_usd_per_mtok=float(cost_per_million_tokens(p, y))
            if math.isfinite(p) else float("nan"),
            label=deployment_label(dep, c.speculation), **config_columns(dep),
            speculation_k=int(c.speculation["k"]) if c.speculation else 0, **pc))
    return out


def cheapest_at(deployments: Any, min_tokens_per_s_per_user: Any, context_tokens: float,
                prices: dict[str, float] | None = None, speculation: Any = (None,),
                efficiency: Any = "deployment", price_basis: Any = None, *,
                max_tpot_s: Any = None) -> OperatingPoint:
    """The cheapest configuration that meets an interactivity floor [USD/Mtok].

    Each configuration runs at its largest whole batch whose tokens/s per user stays at or
    above the floor (its cheapest point there); the one with the lowest cost per million
    tokens wins. Hardware prices: ``prices`` (USD per device-hour by hardware id), else the
    catalog's price on ``price_basis`` (default
    :data:`~tokenomics.economics.basis.DEFAULT_PRICE_BASIS`: neocloud, else hyperscaler,
    on-demand, latest); configurations without a price are skipped. Devices priced at
    different tiers warn (``UserWarning``).

    Parameters
    ----------
    deployments : Deployment or iterable of Deployment
        The candidates; those where not one sequence of ``context_tokens`` fits are skipped
        with a ``UserWarning`` naming them.
    min_tokens_per_s_per_user : float, pint.Quantity or None
        The floor [token/s], or a TPOT ceiling as a time Quantity (``tk.Q_(50, "ms")``);
        None with ``max_tpot_s`` (:func:`interactivity_floor`).
    context_tokens : float
        Tokens in each sequence's KV cache [token].
    prices : dict, optional
        USD per device-hour by hardware id [USD/hour]; other devices at the catalog's price
        on ``price_basis``.
    speculation : sequence of (dict or None)
        Speculative-decoding options crossed with the deployments (see
        :func:`~tokenomics.pareto.envelope.frontier`).
    efficiency : {"calibrated", "roofline", "deployment"} or Efficiency
        As in :func:`~tokenomics.pareto.envelope.frontier`.
    price_basis : PriceBasis, str, sequence of str or None
        Which catalog price a device is read at (:func:`~tokenomics.economics.basis.price_on_basis`).
    max_tpot_s : float or pint.Quantity, optional
        The service level as a TPOT ceiling [s] instead of a floor.

    Returns
    -------
    OperatingPoint
        The winner as in :func:`best_at`, with ``cost_usd_per_mtok`` [USD/Mtok] and the price
        it used: ``price_usd_per_device_hour`` [USD/hour], ``price_tier``, ``price_date``
        (``attrs["price_basis"]`` names the basis).

    Raises
    ------
    TokenomicsError
        When no priced configuration reaches the floor.
    DoesNotFitError
        When no candidate holds one sequence of ``context_tokens``.

    Examples
    --------
    >>> import tokenomics as tk
    >>> deps = [tk.Deployment("llama-3.1-8b", h) for h in ("h100-sxm", "h200")]
    >>> r = cheapest_at(deps, 50, 2048, prices={"h100-sxm": 2.0, "h200": 3.0})
    >>> r.hardware in ("h100-sxm", "h200")
    True
    """
    X = interactivity_floor(min_tokens_per_s_per_user, max_tpot_s)
    deps = with_efficiency(deployments_of(deployments), efficiency)
    basis = as_price_basis(price_basis)
    priced = device_prices(deps, prices, basis)
    pts = [r for r in _curve_points_at(deps, X, context_tokens, speculation, priced)
           if math.isfinite(r["cost_usd_per_mtok"])]
    if not pts:
        raise TokenomicsError(f"no priced configuration reaches {X:g} tokens/s per user "
                              f"(check prices= for hardware without a catalog price on the "
                              f"basis '{basis.label}')")
    return OperatingPoint(min(pts, key=lambda r: r["cost_usd_per_mtok"]),
                          attrs={"price_basis": basis.label})


def sweep_points(dep: Any, batch: Any, context_tokens: Any, price: dict[str, Any]) -> pd.DataFrame:
    """One deployment's decode points at (batch, context) broadcast together, priced.

    The row builder of :func:`sweep` (and of each chunk of
    :func:`tokenomics.pareto.fleet.sweep_lazy`): ``price`` is the deployment's
    :func:`~tokenomics.pareto.inputs.price_columns`. Columns as :func:`sweep`'s, without
    ``_deployment``; the text columns (``bound``, ``label``, the configuration's names, the
    price's tier and date) are categorical, a code per row rather than a string
    (:func:`plain_strings` turns them back).
    """
    from tokenomics.physics.step import decode

    r = decode(dep, batch, context_tokens, on_oom="mark")
    shape = np.shape(r.time_s)

    def flat(v: Any) -> np.ndarray:
        return np.ravel(np.broadcast_to(v, shape))
    p = price["price_usd_per_device_hour"]
    per_dev = flat(r.tokens_per_s_per_device).astype(float)
    n = per_dev.size
    cols: dict[str, Any] = {
        "batch": flat(r.batch), "context_tokens": flat(r.context_tokens),
        "step_time_s": flat(r.time_s), "tokens_per_s_per_user": flat(r.tokens_per_s_per_user),
        "tokens_per_s_per_device": per_dev, "bound": _labels(flat(r.bound), BOUNDS),
        "fits": flat(r.fits),
        "cost_usd_per_mtok": (np.asarray(cost_per_million_tokens(p, per_dev))
                              if math.isfinite(p) else np.full(n, np.nan)),
        "joules_per_token": (dep.hardware.tdp_w / per_dev if dep.hardware.tdp_w
                             else np.full(n, np.nan))}
    for k, v in {"label": deployment_label(dep), **config_columns(dep), **price}.items():
        cols[k] = (pd.Categorical.from_codes(np.zeros(n, np.int8), [v]) if isinstance(v, str)
                   else np.full(n, v))
    return pd.DataFrame(cols)


def plain_strings(df: pd.DataFrame) -> pd.DataFrame:
    """A sweep frame with its categorical columns (:func:`sweep_points`' labels) as plain
    strings, in place; returned."""
    for k in df.columns:
        if isinstance(df[k].dtype, pd.CategoricalDtype):
            df[k] = df[k].astype(str)
    return df


#: The values of a sweep's ``bound`` column.
BOUNDS = ("memory", "compute")


def _labels(values: np.ndarray, categories: tuple[str, ...]) -> pd.Categorical:
    """Strings drawn from a few ``categories`` as a categorical column (each row a code,
    not a string object: a million-row chunk of a sweep stays cheap to build)."""
    codes = np.zeros(values.shape, np.int8)
    for i, cat in enumerate(categories[1:], start=1):
        codes[values == cat] = i
    return pd.Categorical.from_codes(codes, list(categories))


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
    frames = []
    deps = deployments_of(deployments)
    priced = device_prices(deps, prices, price_basis)
    for dep in deps:
        df = sweep_points(dep, batch, context_tokens, price_columns(priced.get(dep.hardware.id)))
        df["_deployment"] = [dep] * len(df)
        frames.append(df)
    out = plain_strings(pd.concat(frames, ignore_index=True))
    out.attrs["price_basis"] = as_price_basis(price_basis).label
    return out
