"""Owning a device instead of renting it: its hourly cost from a purchase price.

A total cost of ownership turns a purchase into an hourly price:

.. math::
   p = \\frac{P_\\mathrm{cap}}{8760} \\cdot \\frac{r_c}{1 - (1 + r_c)^{-n}}
       + \\frac{W \\, u \\, \\mathrm{PUE} \\, e}{1000} + p_\\mathrm{facility}

with :math:`P_\\mathrm{cap} = P / (1 - s_\\mathrm{net})` the device's capital (its purchase
plus its share of networking), :math:`r_c` the annual cost of capital (an annuity;
straight-line :math:`1/n` when 0), :math:`n` years, power :math:`W` [W] at utilisation
:math:`u`, and electricity :math:`e` [USD/kWh]. The defaults (PUE, electricity, networking
share, service life) are sourced in ``price_catalog/assumptions.toml``.

References
----------
.. [1] R. A. Brealey, S. C. Myers, F. Allen, "Principles of Corporate Finance", ch. 2
   (annuities).
.. [2] Uptime Institute, Global Data Center Survey 2024 (average PUE 1.56).
.. [3] U.S. EIA, Electric Power Annual 2023 (industrial electricity prices).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.bibliography import catalog_dir, data_sources
from tokenomics.data.kinds import ASSUMPTIONS
from tokenomics.data.schema import read_entries
from tokenomics.data.workload import accepts_legacy_forms

#: Hours in a (365-day) year, the amortisation's unit.
HOURS_PER_YEAR = 8760.0


@lru_cache(maxsize=1)
def _assumptions() -> dict[str, float]:
    folder = catalog_dir("price_catalog")
    v = read_entries(ASSUMPTIONS, folder / "assumptions.toml", data_sources(folder))[0]
    return {f.name: v[f.name] for f in ASSUMPTIONS.fields}


def default_assumptions() -> dict[str, float]:
    """Sourced cost-of-ownership defaults (``price_catalog/assumptions.toml``).

    Returns
    -------
    dict
        ``pue`` [1], ``electricity_price`` [USD/kWh], ``networking_share`` [1],
        ``service_life`` [year] (the years a purchase is amortised over when a price basis
        falls back to owning, :class:`~tokenomics.economics.basis.PriceBasis`).
    """
    return dict(_assumptions())


_OWN_UNITS = {"purchase_usd": "USD", "amortisation_years": "year", "power_w": "W",
              "electricity_usd_per_kwh": "USD/kWh", "facility_usd_per_device_hour": "USD/hour"}


@dataclass(frozen=True)
class Ownership:
    """Owning a device instead of renting it: the terms its hourly cost follows from.

    Attributes
    ----------
    purchase_usd : float
        Price of the device (its share of a server) [USD], >= 0.
    amortisation_years : float
        Years over which the capital is recovered, > 0.
    power_w : float, optional
        Device power [W] (TDP, or an all-in figure per device), >= 0; :func:`deployment_cost`
        fills in the hardware's TDP when it is not given.
    utilisation : float
        Average fraction of that power drawn, (0, 1]; default 1.
    cost_of_capital : float
        Annual rate, in [0, 1] (0, the default: straight-line depreciation).
    pue : float, optional
        Power usage effectiveness >= 1; default the sourced industry average (1.56).
    electricity_usd_per_kwh : float, optional
        [USD/kWh], >= 0; default the sourced figure (0.0892 USD/kWh).
    networking_share : float, optional
        Networking's share of cluster capital, [0, 1); the device's capital is
        ``purchase / (1 - share)``. Default the sourced 0.15 (S44).
    facility_usd_per_device_hour : float
        Facility (space, cooling plant, staff) per device-hour [USD/hour], >= 0; default 0.

    Raises
    ------
    TokenomicsError
        Naming the first term out of its range.

    Examples
    --------
    >>> Ownership(25_000, 4, 700).cost_of_capital
    0.0
    """

    purchase_usd: float
    amortisation_years: float
    power_w: float | None = None
    utilisation: float = 1.0
    cost_of_capital: float = 0.0
    pue: float | None = None
    electricity_usd_per_kwh: float | None = None
    networking_share: float | None = None
    facility_usd_per_device_hour: float = 0.0

    def __post_init__(self) -> None:
        ranges = [("purchase_usd", 0, math.inf, True), ("amortisation_years", 0, math.inf, False),
                  ("power_w", 0, math.inf, True), ("cost_of_capital", 0, 1, True),
                  ("electricity_usd_per_kwh", 0, math.inf, True),
                  ("facility_usd_per_device_hour", 0, math.inf, True)]
        if self.utilisation is None or self.purchase_usd is None or \
                self.amortisation_years is None:
            raise TokenomicsError("Ownership needs purchase_usd, amortisation_years and a "
                                  "utilisation in (0, 1] (numbers, not None)")
        for name in ("utilisation", "pue", "networking_share", *(r[0] for r in ranges)):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, V.single_amount(getattr(self, name), name,
                                                               _OWN_UNITS.get(name, "dimensionless")))
        for name, lo, hi, closed in ranges:
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and (v >= lo if closed else v > lo)
                                      and v <= hi):
                raise TokenomicsError(f"{name} must be {'>=' if closed else '>'} {lo}"
                                      + (f" and <= {hi}" if math.isfinite(hi) else "")
                                      + f", got {v!r}")
        if not (0 < self.utilisation <= 1):
            raise TokenomicsError(f"utilisation must be in (0, 1], got {self.utilisation!r}")
        if self.pue is not None and not (self.pue >= 1):
            raise TokenomicsError(f"pue must be >= 1, got {self.pue!r}")
        if self.networking_share is not None and not (0 <= self.networking_share < 1):
            raise TokenomicsError(
                f"networking_share must be in [0, 1), got {self.networking_share!r}")


_TCO_01 = ("purchase_usd", "amortisation_years", "power_w", "utilisation", "cost_of_capital",
           "pue", "electricity_usd_per_kwh", "networking_share", "facility_usd_per_device_hour")


@accepts_legacy_forms(_TCO_01, dict(utilisation=1.0, cost_of_capital=0.0, pue=None,
                                    electricity_usd_per_kwh=None, networking_share=None,
                                    facility_usd_per_device_hour=0.0),
                      lambda a: dict(ownership=Ownership(**a)), "ownership", Ownership)
def tco_usd_per_device_hour(ownership: Ownership) -> float:
    """Hourly cost of owning and running one device [USD/hour].

    Release 0.1's form ``tco_usd_per_device_hour(purchase_usd, amortisation_years, power_w,
    utilisation=1.0, cost_of_capital=0.0, pue=None, electricity_usd_per_kwh=None,
    networking_share=None, facility_usd_per_device_hour=0.0)`` still works: its arguments
    are an :class:`Ownership`.

    Parameters
    ----------
    ownership : Ownership
        The terms; ``power_w`` must be given.

    Returns
    -------
    float
        [USD/hour]

    Notes
    -----
    See the module formula. An annuity with rate :math:`r_c` over :math:`n` years repays
    :math:`P r_c / (1 - (1 + r_c)^{-n})` a year.

    References
    ----------
    .. [1] R. A. Brealey, S. C. Myers, F. Allen, "Principles of Corporate Finance", ch. 2
       (annuities).
    .. [2] Uptime Institute, Global Data Center Survey 2024 (PUE).

    Examples
    --------
    >>> # $25,000 over 4 years, no financing, 700 W, PUE 1.5 at $0.10/kWh, no networking:
    >>> round(tco_usd_per_device_hour(Ownership(25_000, 4, 700, 1.0, 0.0, 1.5, 0.10, 0.0)), 4)
    0.8185
    >>> round(tco_usd_per_device_hour(25_000, 4, 700, 1.0, 0.0, 1.5, 0.10, 0.0), 4)  # 0.1 form
    0.8185
    """
    return float(sum(tco_parts(ownership).values()))


#: The parts of :func:`tco_parts`, in the order a cost waterfall stacks them.
TCO_PARTS = ("device_capital", "networking_capital", "electricity", "facility")


def tco_parts(ownership: Ownership) -> dict[str, float]:
    """The hourly cost of owning one device, split by what it pays for [USD/hour].

    Parameters
    ----------
    ownership : Ownership
        The terms; ``power_w`` must be given.

    Returns
    -------
    dict
        :data:`TCO_PARTS` -> USD/hour: ``device_capital`` (the purchase's annuity),
        ``networking_capital`` (its share of the cluster network, :math:`P s / (1 - s)`
        repaid the same way), ``electricity`` (:math:`W u \\, \\mathrm{PUE}\\, e / 1000`) and
        ``facility``. They add up to :func:`tco_usd_per_device_hour` (module formula).

    Raises
    ------
    TokenomicsError
        For a missing power, or a non-Ownership.

    Examples
    --------
    >>> # $25,000 over 4 years, 700 W at PUE 1.5 and $0.10/kWh, 15% networking:
    >>> p = tco_parts(Ownership(25_000, 4, 700, 1.0, 0.0, 1.5, 0.10, 0.15))
    >>> [round(p[k], 4) for k in TCO_PARTS]
    [0.7135, 0.1259, 0.105, 0.0]
    """
    if not isinstance(ownership, Ownership):
        raise TokenomicsError(f"ownership must be an Ownership (purchase, years, power...), got "
                              f"{type(ownership).__name__}")
    o = ownership
    if o.power_w is None:
        raise TokenomicsError("power_w is required to cost ownership per hour: the device's "
                              "power [W] (deployment_cost takes the hardware's TDP)")
    a = _assumptions()
    pue = a["pue"] if o.pue is None else o.pue
    e = a["electricity_price"] if o.electricity_usd_per_kwh is None else \
        o.electricity_usd_per_kwh
    net = a["networking_share"] if o.networking_share is None else o.networking_share
    capital = o.purchase_usd / (1.0 - net)
    r, n = o.cost_of_capital, o.amortisation_years
    # the annuity r / (1 - (1 + r)^-n) written with log1p/expm1: at r = 1e-17 the plain form
    # rounds its denominator to 0; this one tends to 1/n as r -> 0
    annuity = 1.0 / n if r == 0 else r / -math.expm1(-n * math.log1p(r))   # per USD, a year
    return {"device_capital": o.purchase_usd * annuity / HOURS_PER_YEAR,
            "networking_capital": (capital - o.purchase_usd) * annuity / HOURS_PER_YEAR,
            "electricity": o.power_w * o.utilisation * pue / 1000.0 * e,
            "facility": float(o.facility_usd_per_device_hour)}
