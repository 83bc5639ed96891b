"""Token economics: cost per million tokens (rental or total cost of ownership) and energy per
token. Provider API prices, blends, margins and a serving day are in
:mod:`tokenomics.economics.api_prices`.

Notes
-----
The identity at the heart of it: a device rented at :math:`p` USD per hour producing
:math:`r` tokens per second costs

.. math:: c = \\frac{p}{3600\\, r} \\times 10^6 \\quad \\text{USD per million tokens}.

Prefill (input) and decode (output) tokens use the hardware differently, so each is costed at
its own throughput. A purchase becomes an hourly price in
:mod:`tokenomics.economics.ownership`.

Energy per token is device power times utilisation times PUE over throughput
(:func:`energy_per_token`).

References
----------
.. [1] DeepSeek, "Day 6: One More Thing, DeepSeek-V3/R1 Inference System Overview",
   deepseek-ai/open-infra-index, 2025 ($2 per H800-hour; 545% cost-profit margin).
.. [2] Uptime Institute, Global Data Center Survey 2024 (average PUE 1.56).
.. [3] U.S. EIA, Electric Power Annual 2023 (industrial electricity prices).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import (
    NotPublishedError,
    TokenomicsError,
)
from tokenomics.core.units import ReadableRepr
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import Hardware
from tokenomics.data.workload import accepts_legacy_forms
from tokenomics.economics.basis import BasisPrice, price_on_basis
from tokenomics.economics.ownership import Ownership, tco_usd_per_device_hour
from tokenomics.physics.step import decode, prefill


# ---- The identity --------------------------------------------------------------------------
def cost_per_million_tokens(usd_per_device_hour: Any, tokens_per_s_per_device: Any) -> Any:
    """Cost of a million tokens on a device rented by the hour [USD/Mtok].

    Parameters
    ----------
    usd_per_device_hour : float or array_like
        Price of one device for one hour [USD/hour], >= 0.
    tokens_per_s_per_device : float or array_like
        Tokens one device produces per second [token/s], > 0.

    Returns
    -------
    float or numpy.ndarray
        :math:`p / (3600\\, r) \\times 10^6` [USD per million tokens].

    References
    ----------
    .. [1] DeepSeek, open-infra-index day 6, 2025 (cost per token from GPU-hours).

    Examples
    --------
    >>> round(cost_per_million_tokens(2.00, 1000), 4)   # $2/hour at 1,000 tokens/s
    0.5556
    """
    p = V.non_negative(usd_per_device_hour, "usd_per_device_hour", "USD/hour")
    r = V.positive(tokens_per_s_per_device, "tokens_per_s_per_device", "token/s")
    V.together(usd_per_device_hour=p, tokens_per_s_per_device=r)
    return V.scalar_or_array(p / (3600.0 * r) * 1e6)


# ---- Cost of a deployment, per phase -------------------------------------------------------
@dataclass(frozen=True, repr=False)
class DeploymentCost(ReadableRepr):
    """Cost per million tokens of one deployment, by phase. All costs [USD/Mtok].

    Attributes
    ----------
    usd_per_device_hour : float
        The device-hour price used [USD/hour] (also :attr:`price_usd_per_device_hour`).
    input_usd_per_mtok : array
        Uncached prompt tokens (prefill).
    cached_input_usd_per_mtok : array
        Prompt tokens served from the prefix cache (their KV read in a midfill).
    output_usd_per_mtok : array
        Generated tokens (decode at the given batch and context).
    input_tokens_per_s_per_device, output_tokens_per_s_per_device : array
    price_tier, price_date, price_source : str
        Where the price came from (:class:`~tokenomics.economics.basis.BasisPrice`).
    """

    usd_per_device_hour: float
    input_usd_per_mtok: Any
    cached_input_usd_per_mtok: Any
    output_usd_per_mtok: Any
    input_tokens_per_s_per_device: Any
    output_tokens_per_s_per_device: Any
    price_tier: str = ""
    price_date: str = ""
    price_source: str = ""

    @property
    def price_usd_per_device_hour(self) -> float:
        """The device-hour price used [USD/hour]."""
        return self.usd_per_device_hour

    def to_frame(self) -> pd.DataFrame:
        """One row per point: cost per million tokens by phase [USD/Mtok], the throughputs
        they follow from [token/s per device], and the price with its tier, date and source.

        Examples
        --------
        >>> import tokenomics as tk
        >>> c = tk.deployment_cost(tk.Deployment("llama-3.1-8b", "h100-sxm"), [8, 64], 4096,
        ...                        usd_per_device_hour=2.0)
        >>> list(c.to_frame().columns[:3])
        ['input_usd_per_mtok', 'cached_input_usd_per_mtok', 'output_usd_per_mtok']
        """
        num = ("input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok",
               "input_tokens_per_s_per_device", "output_tokens_per_s_per_device")
        shape = np.broadcast(*(np.asarray(getattr(self, n)) for n in num)).shape
        cols: dict[str, Any] = {n: np.ravel(np.broadcast_to(getattr(self, n), shape))
                                for n in num}
        rows = len(cols[num[0]])
        cols.update(price_usd_per_device_hour=[self.usd_per_device_hour] * rows,
                    price_tier=[self.price_tier] * rows, price_date=[self.price_date] * rows,
                    price_source=[self.price_source] * rows)
        return pd.DataFrame(cols)

    def blended(self, input_tokens: Any, output_tokens: Any, cache_hit_rate: Any = 0.0) -> Any:
        """Cost per million tokens of a workload mix (input + output tokens) [USD/Mtok].

        :math:`[I(1-h) c_{in} + I h\\, c_{cached} + O\\, c_{out}] / (I + O)`.
        """
        i = V.non_negative(input_tokens, "input_tokens", "token")
        o = V.non_negative(output_tokens, "output_tokens", "token")
        h = V.fraction(cache_hit_rate, "cache_hit_rate")
        if np.any(i + o <= 0):
            raise TokenomicsError("input_tokens + output_tokens must be > 0")
        c = (i * (1 - h) * self.input_usd_per_mtok + i * h * self.cached_input_usd_per_mtok
             + o * self.output_usd_per_mtok) / (i + o)
        return V.scalar_or_array(c)


def _device_price_01(a: dict[str, Any]) -> dict[str, Any]:
    """The new arguments of a 0.1 call: ``usd_per_device_hour``, ``tier`` or ``tco`` (a dict
    of :class:`Ownership` terms) as one ``device_price``, with 0.1's precedence."""
    usd, tier, tco = a.pop("usd_per_device_hour"), a.pop("tier"), a.pop("tco")
    if usd is not None and tco is not None:
        raise TokenomicsError("give usd_per_device_hour or tco, not both")
    price = Ownership(**tco) if tco is not None else usd if usd is not None else tier
    return dict(a, device_price=price)


def device_hour_price(hardware: Hardware, device_price: Any = None,
                      price_basis: Any = None) -> BasisPrice:
    """:func:`device_hour_usd` with where the price came from (tier, date, source)."""
    if isinstance(device_price, Ownership):
        if device_price.power_w is None:
            if hardware.tdp_w is None:
                raise NotPublishedError(f"{hardware.id}: TDP not published; pass power_w in "
                                        "tco (Ownership.power_w)")
            device_price = replace(device_price, power_w=hardware.tdp_w)
        return BasisPrice(tco_usd_per_device_hour(device_price), "tco", "", "Ownership")
    if isinstance(device_price, str):
        return price_on_basis(hardware, device_price)
    if device_price is None:
        return price_on_basis(hardware, price_basis)
    usd = V.single_amount(device_price, "usd_per_device_hour", "USD/hour")
    return BasisPrice(usd, "user", "", "device_price")


def device_hour_usd(hardware: Hardware, device_price: Any = None,
                    price_basis: Any = None) -> float:
    """What one device-hour costs, from a price, a rental tier or the terms of owning it.

    Parameters
    ----------
    hardware : Hardware
        The device (its rental prices in the catalog, its TDP).
    device_price : float, str, Ownership or None
        A number: the price [USD/hour], >= 0. A str: the catalog's latest rental price of
        that tier. An :class:`Ownership`: its :func:`tco_usd_per_device_hour` (``power_w``
        defaults to the device's TDP). None: the catalog's price on ``price_basis``.
    price_basis : PriceBasis, str, sequence of str or None
        Used when ``device_price`` is None
        (:func:`~tokenomics.economics.basis.price_on_basis`); default
        :data:`~tokenomics.economics.basis.DEFAULT_PRICE_BASIS` (neocloud, else hyperscaler,
        on-demand, latest).

    Returns
    -------
    float
        [USD/hour]

    Examples
    --------
    >>> from tokenomics.data.catalog import hardware
    >>> device_hour_usd(hardware("h800"), "estimate")     # DeepSeek's $2 per H800-hour
    2.0
    """
    return device_hour_price(hardware, device_price, price_basis).usd_per_device_hour


@accepts_legacy_forms(("dep", "batch", "context_tokens", "prompt_tokens", "prefill_batch",
                       "usd_per_device_hour", "tier", "tco", "cached_prefix_tokens"),
                      dict(prompt_tokens=None, prefill_batch=1, usd_per_device_hour=None,
                           tier=None, tco=None, cached_prefix_tokens=None),
                      _device_price_01, "device_price")
@inputs(dep="deployment")
def deployment_cost(dep: Deployment, batch: Any, context_tokens: Any,
                    prompt_tokens: Any = None, prefill_batch: Any = 1,
                    device_price: Any = None, *,
                    cached_prefix_tokens: Any = None,
                    price_basis: Any = None) -> DeploymentCost:
    """Cost per million input, cached-input and output tokens of a deployment.

    Release 0.1's ``usd_per_device_hour=``, ``tier=`` and ``tco=`` (a dict of the TCO terms)
    still work, by name or in their 0.1 positions (``cached_prefix_tokens`` after them); they
    are one ``device_price`` now.

    Parameters
    ----------
    dep : Deployment
    batch, context_tokens : int or array_like
        Decode batch and KV length [token] at which output tokens are made.
    prompt_tokens : int or array_like, optional
        Prompt length of the prefill that makes input tokens [token]; default
        ``context_tokens``.
    prefill_batch : int or array_like
        Prompts prefilled together.
    device_price : float, str, Ownership or None
        What a device-hour costs (:func:`device_hour_usd`): a price [USD/hour], a rental
        tier of the catalog, the terms of owning the device, or (default) the catalog's price
        on ``price_basis``.
    cached_prefix_tokens : int or array_like, optional
        Cached prefix for the cached-input cost; default all but the last 1% of the prompt.
    price_basis : PriceBasis, str, sequence of str or None
        Tier and date policy of the catalog price when ``device_price`` is None; default
        :data:`~tokenomics.economics.basis.DEFAULT_PRICE_BASIS`.

    Returns
    -------
    DeploymentCost
        With the price used and its tier, date and source.

    Notes
    -----
    Input: a prefill's device time over its prompt tokens. Cached input: the extra device time a
    cached prefix adds to a midfill (reading its KV), per cached token. Output: a decode step's
    device time over its tokens. Each at :func:`cost_per_million_tokens`.

    References
    ----------
    .. [1] DeepSeek, open-infra-index day 6, 2025.

    Examples
    --------
    >>> import tokenomics as tk
    >>> c = deployment_cost(tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8",
    ...                     compute_dtype="fp8", kv_dtype="fp8"), 64, 4096,
    ...                     device_price=3.0)
    >>> bool(c.output_usd_per_mtok > c.input_usd_per_mtok > c.cached_input_usd_per_mtok)
    True
    """
    bp = device_hour_price(dep.hardware, device_price, price_basis)
    price = bp.usd_per_device_hour
    P = context_tokens if prompt_tokens is None else prompt_tokens
    P = V.counts(P, "prompt_tokens", minimum=2, unit="token")
    pre = prefill(dep, P, prefill_batch)
    dec = decode(dep, batch, context_tokens)
    c = np.floor(P * 0.99) if cached_prefix_tokens is None else V.counts(
        cached_prefix_tokens, "cached_prefix_tokens", minimum=1, unit="token")
    # Extra time of a midfill that reads c cached tokens, against computing the new ones alone.
    new = P - c
    with_cache = prefill(dep, P, prefill_batch, c).time_s
    alone = prefill(dep, new, prefill_batch).time_s
    b = np.asarray(prefill_batch, float)
    cached_rate = b * c / np.maximum(np.asarray(with_cache) - np.asarray(alone), 1e-12) \
        / dep.n_devices
    S = V.scalar_or_array
    return DeploymentCost(
        usd_per_device_hour=price,
        input_usd_per_mtok=cost_per_million_tokens(price, pre.tokens_per_s_per_device),
        cached_input_usd_per_mtok=cost_per_million_tokens(price, S(cached_rate)),
        output_usd_per_mtok=cost_per_million_tokens(price, dec.tokens_per_s_per_device),
        input_tokens_per_s_per_device=pre.tokens_per_s_per_device,
        output_tokens_per_s_per_device=dec.tokens_per_s_per_device,
        price_tier=bp.tier, price_date=bp.date, price_source=bp.source)


# ---- Energy --------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Energy(ReadableRepr):
    """Energy per token. ``joules_per_token`` [J/token], ``wh_per_mtok`` [Wh per million
    tokens], ``tokens_per_s_per_w`` [token/s/W], ``power_w`` [W] per device (facility
    overhead included)."""

    joules_per_token: Any
    wh_per_mtok: Any
    tokens_per_s_per_w: Any
    power_w: float


def energy_per_token(tokens_per_s_per_device: Any, power_w: float | Hardware,
                     utilisation: float = 1.0, pue: float = 1.0) -> Energy:
    """Energy a token costs on a device drawing ``power_w`` at a throughput.

    Parameters
    ----------
    tokens_per_s_per_device : float or array_like
        [token/s], > 0 (a phase's throughput: prefill or decode).
    power_w : float or Hardware
        Device power [W], or a Hardware whose TDP is used.
    utilisation : float
        Fraction of that power drawn, (0, 1].
    pue : float
        Facility overhead, >= 1 (1: the device alone).

    Returns
    -------
    Energy
        :math:`E = W u\\,\\mathrm{PUE} / r` [J/token]; :math:`E \\cdot 10^6 / 3600` [Wh/Mtok].

    References
    ----------
    .. [1] Seed digest S22 (decode, ~1000 forward passes per query, is the largest energy
       consumer).

    Examples
    --------
    >>> e = energy_per_token(1000, 700)        # 700 W at 1,000 tokens/s
    >>> e.joules_per_token, round(e.wh_per_mtok, 1)
    (0.7, 194.4)
    """
    if isinstance(power_w, Hardware):
        if power_w.tdp_w is None:
            raise NotPublishedError(f"{power_w.id}: TDP not published; pass power_w in watts")
        w = float(power_w.tdp_w)
    else:
        w = V.single_amount(V.positive(power_w, "power_w", "W"), "power_w", "W")
    utilisation = V.single_amount(utilisation, "utilisation", "dimensionless")
    pue = V.single_amount(pue, "pue", "dimensionless")
    if not (0 < utilisation <= 1 <= pue):
        raise TokenomicsError(f"utilisation must be in (0, 1] and pue >= 1, got {utilisation!r} "
                              f"and {pue!r}")
    r = V.positive(tokens_per_s_per_device, "tokens_per_s_per_device", "token/s")
    p = w * utilisation * pue
    j = p / r
    S = V.scalar_or_array
    return Energy(joules_per_token=S(j), wh_per_mtok=S(j * 1e6 / 3600.0),
                  tokens_per_s_per_w=S(r / p), power_w=p)
