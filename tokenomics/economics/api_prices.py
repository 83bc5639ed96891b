"""Provider API prices: the price catalog, blended prices, margins, and a serving day's books.

A provider prices input, cached input, cache writes and output tokens separately [USD per
million tokens]; :func:`blended_price` mixes them for a workload's input:output ratio and
cache-hit rate, :func:`margin` compares a price with a cost, and :func:`serving_day` redoes
DeepSeek's published day of serving economics (cost of the nodes against the revenue its token
counts would have earned at list prices).

References
----------
.. [1] DeepSeek, "Day 6: One More Thing, DeepSeek-V3/R1 Inference System Overview",
   deepseek-ai/open-infra-index, 2025 ($2 per H800-hour; 545% cost-profit margin).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import (
    CatalogError,
    NotPublishedError,
    TokenomicsError,
    UnknownEntryError,
)
from tokenomics.core.units import Result
from tokenomics.data.bibliography import catalog_dir, data_sources
from tokenomics.data.kinds import API_PRICES
from tokenomics.data.schema import read_entries

# ---- Provider prices -----------------------------------------------------------------------
_PRICE_FIELDS = ("input", "cached_input", "cache_write_5m", "cache_write_1h", "output")


@dataclass(frozen=True)
class ApiPrice:
    """A provider's dated price list for one model. Prices [USD/Mtok]; None = not published.

    ``batch_discount`` is the fraction off input and output in the batch tier.
    """

    id: str
    provider: str
    model: str
    date: str
    input: float | None
    cached_input: float | None
    cache_write_5m: float | None
    cache_write_1h: float | None
    output: float | None
    batch_discount: float | None
    sources: dict[str, str]
    note: str = ""


@lru_cache(maxsize=1)
def _prices() -> dict[str, ApiPrice]:
    folder = catalog_dir("price_catalog")
    path = folder / "api_prices.toml"
    out: dict[str, ApiPrice] = {}
    for i, v in enumerate(read_entries(API_PRICES, path, data_sources(folder))):
        pid = v["id"].lower()
        if pid in out:
            raise CatalogError(f"{path}: field price[{i}].id: {pid!r} defined twice")
        out[pid] = ApiPrice(id=pid, provider=v["provider"], model=v["model"], date=v["date"],
                            sources=v["_sources"], note=v["note"] or "",
                            **{k: v[k] for k in (*_PRICE_FIELDS, "batch_discount")})
    return out


def price(provider_model_id: str) -> ApiPrice:
    """A provider's dated price list by ``"provider/model"`` id (case-insensitive).

    Parameters
    ----------
    provider_model_id : str
        ``"<provider>/<model>"`` as in ``price_catalog/api_prices.toml``.

    Returns
    -------
    ApiPrice
        Input, cached-input and output prices [USD per million tokens] with their date and
        source.

    Raises
    ------
    UnknownEntryError
        Listing the known ids.

    Examples
    --------
    >>> price("deepseek/deepseek-reasoner").output
    2.19
    """
    p = _prices()
    key = str(provider_model_id).strip().lower()
    if key not in p:
        raise UnknownEntryError(f"unknown price id {provider_model_id!r}; known: "
                                f"{', '.join(sorted(p))}")
    return p[key]


def price_table() -> pd.DataFrame:
    """Every catalog price, one row each, USD per million tokens (empty = not published).

    Examples
    --------
    >>> float(price_table().set_index("id").loc["openai/gpt-4o", "cached_input_usd_per_mtok"])
    1.25
    """
    rows = []
    for p in _prices().values():
        rows.append(dict(id=p.id, provider=p.provider, model=p.model, date=p.date,
                         **{f"{k}_usd_per_mtok": getattr(p, k) if getattr(p, k) is not None
                            else np.nan for k in _PRICE_FIELDS},
                         batch_discount=p.batch_discount if p.batch_discount is not None
                         else np.nan,
                         sources=" ".join(sorted(set(p.sources.values())))))
    return pd.DataFrame(rows)


def _api_price(p: Any) -> ApiPrice:
    """An :class:`ApiPrice` as given, or looked up by id; anything else is refused."""
    if not isinstance(p, (str, ApiPrice)):
        raise TokenomicsError(f"an API price is an ApiPrice or its id (tk.price_table()), got {p!r}")
    return price(p) if isinstance(p, str) else p


def blended_price(p: ApiPrice | str, input_tokens: Any, output_tokens: Any,
                  cache_hit_rate: Any = 0.0, cache_write_rate: Any = 0.0,
                  cache_ttl: str = "5m", batch: bool = False) -> Any:
    """What a workload pays per million tokens (input + output) at a provider [USD/Mtok].

    Parameters
    ----------
    p : ApiPrice or str
        A price list or its id.
    input_tokens, output_tokens : float or array_like
        Tokens of the mix (absolute or as a ratio) [token].
    cache_hit_rate : float or array_like
        Fraction of input tokens read from the provider's cache, [0, 1].
    cache_write_rate : float or array_like
        Fraction of input tokens written to the cache (charged the cache-write price where
        the provider has one), [0, 1 - cache_hit_rate].
    cache_ttl : {"5m", "1h"}
        Which cache-write price applies.
    batch : bool
        Use the batch tier (its discount on input and output).

    Returns
    -------
    float or numpy.ndarray
        :math:`[I(1-h-w) p_{in} + I h\\, p_{hit} + I w\\, p_{write} + O p_{out}] (1 - d)
        / (I + O)`, :math:`d` the batch discount when ``batch``.

    Raises
    ------
    NotPublishedError
        When the mix needs a price the provider does not publish (e.g. output for the S30
        GPT-5.x example).

    References
    ----------
    .. [1] Seed digest S30, S33 (blended cost depends on the mix, the hit rate and the tier).

    Examples
    --------
    >>> round(blended_price("anthropic/claude-sonnet-4.x", 3, 1), 2)   # (3*3 + 15) / 4
    6.0
    """
    pr = _api_price(p)
    i = V.non_negative(input_tokens, "input_tokens", "token")
    o = V.non_negative(output_tokens, "output_tokens", "token")
    if np.any(i + o <= 0):
        raise TokenomicsError("input_tokens + output_tokens must be > 0")
    h = V.fraction(cache_hit_rate, "cache_hit_rate")
    w = V.fraction(cache_write_rate, "cache_write_rate")
    if np.any(h + w > 1 + 1e-12):
        raise TokenomicsError("cache_hit_rate + cache_write_rate must be <= 1")
    if not isinstance(cache_ttl, str) or cache_ttl not in ("5m", "1h"):
        raise TokenomicsError(f"cache_ttl must be '5m' or '1h', got {cache_ttl!r}")

    def need(name: str, used: Any) -> float:
        v = getattr(pr, name)
        if v is None:
            if np.any(np.asarray(used) > 0):
                raise NotPublishedError(f"{pr.id}: {name} price not published; this mix needs "
                                        "it")
            return 0.0
        return float(v)

    p_in = need("input", i * (1 - h - w))
    p_hit = need("cached_input", i * h)
    write_field = "cache_write_5m" if cache_ttl == "5m" else "cache_write_1h"
    p_write = getattr(pr, write_field)
    if p_write is None:
        p_write = p_in  # no separate write charge: written tokens are billed as input
    p_out = need("output", o)
    d = 0.0
    if V.flag(batch, "batch"):
        if pr.batch_discount is None:
            raise NotPublishedError(f"{pr.id}: no batch tier published")
        d = pr.batch_discount
    total = (i * (1 - h - w) * p_in + i * h * p_hit + i * w * p_write + o * p_out) * (1 - d)
    return V.scalar_or_array(total / (i + o))


def margin(price_usd_per_mtok: Any, cost_usd_per_mtok: Any) -> Any:
    """Gross margin of selling at a price what costs ``cost`` to make, as a fraction of price.

    Parameters
    ----------
    price_usd_per_mtok : float or array_like
        Selling price [USD per million tokens], > 0.
    cost_usd_per_mtok : float or array_like
        Cost to make them [USD per million tokens], >= 0.

    Returns
    -------
    float or numpy.ndarray
        :math:`(p - c) / p` (negative when selling below cost).

    Examples
    --------
    >>> margin(2.0, 0.5)
    0.75
    """
    p = V.positive(price_usd_per_mtok, "price_usd_per_mtok", "USD/Mtok")
    c = V.non_negative(cost_usd_per_mtok, "cost_usd_per_mtok", "USD/Mtok")
    return V.scalar_or_array((p - c) / p)


# ---- DeepSeek's published serving economics (worked example) -------------------------------
@dataclass(frozen=True, repr=False)
class ServingDay(Result):
    """One day of a serving fleet: cost, revenue at list prices, margin. [USD/day]"""

    cost_usd: float
    revenue_usd: float
    cost_profit_margin: float
    input_revenue_usd: float
    cached_input_revenue_usd: float
    output_revenue_usd: float


def serving_day(nodes: float, devices_per_node: int, usd_per_device_hour: float,
                input_tokens: float, cached_input_tokens: float, output_tokens: float,
                p: ApiPrice | str) -> ServingDay:
    """Daily cost of a fleet and its revenue at list prices.

    Parameters
    ----------
    nodes : float
        Average nodes in service over the day.
    devices_per_node : int
    usd_per_device_hour : float
        [USD/hour]
    input_tokens, cached_input_tokens, output_tokens : float
        Tokens served in the day; ``cached_input_tokens`` is the part of ``input_tokens``
        that hit the cache [token].
    p : ApiPrice or str
        Price list.

    Returns
    -------
    ServingDay
        ``cost_profit_margin`` is (revenue - cost) / cost, as DeepSeek reports it.

    References
    ----------
    .. [1] DeepSeek, open-infra-index day 6, 2025: 226.75 nodes x 8 H800 at $2/hour; 608B input
       tokens (342B cached), 168B output; $562,027 theoretical revenue, 545% margin.

    Examples
    --------
    >>> d = serving_day(226.75, 8, 2.0, 608e9, 342e9, 168e9, "deepseek/deepseek-reasoner")
    >>> d.cost_usd
    87072.0
    """
    pr = _api_price(p)
    nodes, usd_per_device_hour, input_tokens, output_tokens, cached_input_tokens = (
        V.single_amount(v, n, u) for v, n, u in (
            (nodes, "nodes", "count"), (usd_per_device_hour, "usd_per_device_hour", "USD/hour"),
            (input_tokens, "input_tokens", "token"), (output_tokens, "output_tokens", "token"),
            (cached_input_tokens, "cached_input_tokens", "token")))
    devices_per_node = V.single_whole(devices_per_node, "devices_per_node")
    if cached_input_tokens > input_tokens:
        raise TokenomicsError("cached_input_tokens cannot exceed input_tokens")
    for name, v in (("nodes", nodes), ("usd_per_device_hour", usd_per_device_hour),
                    ("input_tokens", input_tokens), ("output_tokens", output_tokens),
                    ("cached_input_tokens", cached_input_tokens)):
        if not (v >= 0 and math.isfinite(v)):
            raise TokenomicsError(f"{name} must be >= 0, got {v!r}")
    if pr.input is None or pr.cached_input is None or pr.output is None:
        raise NotPublishedError(f"{pr.id}: input, cached-input and output prices are needed")
    cost = nodes * devices_per_node * usd_per_device_hour * 24.0
    if cost == 0:
        raise TokenomicsError("nodes and usd_per_device_hour must be > 0: the margin is "
                              "(revenue - cost) / cost, undefined for a day that costs nothing")
    rin = (input_tokens - cached_input_tokens) / 1e6 * pr.input
    rhit = cached_input_tokens / 1e6 * pr.cached_input
    rout = output_tokens / 1e6 * pr.output
    rev = rin + rhit + rout
    return ServingDay(cost_usd=cost, revenue_usd=rev, cost_profit_margin=(rev - cost) / cost,
                      input_revenue_usd=rin, cached_input_revenue_usd=rhit,
                      output_revenue_usd=rout)
