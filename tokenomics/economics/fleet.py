"""A plan over years: the cheapest fleet each year that serves a growing demand.

A capacity planner starts from a demand that grows year over year and from the hardware
generations on offer, each available from a year, at a purchase price or a rental, with
its output per device at the operating point (from :func:`~tokenomics.steady_state` or a
measurement) and its power. Each year :math:`y` of the plan:

1. Owned cohorts reach the end of their service life :math:`n` and leave: a device
   bought in year :math:`b` serves the years of age :math:`a = y - b < n`, and pays in each
   the share of its life that falls in it, :math:`\\min(a + 1, n) - \\min(a, n)` (all of
   it, then the last fraction of a life of 5.5 years).
2. With ``retire_obsolete``, an owned cohort whose running cost per token (its
   electricity: its capital is sunk) exceeds the full cost per token of the cheapest
   option on offer leaves too: serving its tokens on new devices is cheaper than keeping
   it switched on.
3. The remaining owned capacity :math:`S = \\sum_c n_c\\, r_c\\, u` is held against the
   demand :math:`D_y`; the shortfall :math:`D_y - S` is bought or rented at the option with
   the least cost per token, :math:`p / (3600\\, r\\, u)`, with :math:`p` an owned device's
   hourly cost (:func:`~tokenomics.economics.ownership.tco_usd_per_device_hour`: its
   capital's annuity over the service life, its share of networking, its electricity at
   the PUE) or a rented device-hour, in whole devices
   (:math:`\\lceil (D_y - S) / (r u) \\rceil`). Rentals last the year; the next year's
   shortfall is decided again.

The plan is greedy (each year's choice at that year's prices, as a buyer commits), not an
optimisation over the horizon: it never looks ahead to a generation that is not yet on
offer. Every year its capacity is at least the demand (a test's property).

Books per year: ``capex`` (capital paid in the year of purchase, networking share
included), ``depreciation`` (straight-line, capital over the service life, for each owned
device in service), ``electricity`` (owned devices at the PUE), ``rental`` and the
economic ``cost`` (annuities + electricity + rentals), ``usd_per_mtok`` of the demand, and
revenue and margin at a selling price that may fall by a factor a year.

References
----------
.. [1] S34 (seed digest): usage grows ~7x a year; Google served 480 trillion tokens a
   month in May 2025 and 3.2 quadrillion in May 2026 (6.7x in a year); unit cost falls
   ~200x a year.
.. [2] Microsoft 10-Q, Q2 FY2023: server and network equipment useful lives from four to
   six years. Alphabet 10-K 2022: servers and certain network equipment six years. Meta,
   January 2025: certain servers and network assets 5.5 years (Accounting Today). Amazon
   10-K 2024: a subset of servers and networking equipment from six years to five from
   2025-01-01 (quoted by Deep Quarry, 2025).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result
from tokenomics.economics.ownership import (
    HOURS_PER_YEAR,
    Ownership,
    default_assumptions,
    tco_parts,
)

#: Demand growth a year, from the sources (module references [1]).
GROWTH_PRESETS = {"s34-usage": 7.0, "s34-google-2025-2026": 3.2e15 / 480e12}
#: Selling-price decline a year (a factor: the price divides by it each year), S34.
PRICE_DECLINE_PRESETS = {"s34-unit-cost": 200.0, "flat": 1.0}
#: Server useful lives the hyperscalers report [year] (module references [2]).
USEFUL_LIFE_YEARS = {"microsoft": 6.0, "alphabet": 6.0, "meta": 5.5, "amazon": 5.0}
#: Longest plan [year] (a bound against runaway input, not a physical one).
MAX_YEARS = 100
#: Calendar years a generation or a plan may name.
_YEAR_RANGE = (1950, 2200)
_SECONDS_PER_YEAR = HOURS_PER_YEAR * 3600.0


@dataclass(frozen=True)
class Generation:
    """A hardware generation a fleet may add: when, at what price, how much it serves.

    Attributes
    ----------
    name : str
        A label (e.g. ``"gb200"``).
    first_year : int
        The first year it can be bought or rented.
    tokens_per_s_per_device : float
        Output per device at the operating point [token/s], > 0.
    power_w : float
        Power per device, all in (its share of hosts, switches, fans) [W], >= 0.
    purchase_usd : float, optional
        Price per device [USD] (its share of a server), >= 0; None: not for sale.
    rent_usd_per_device_hour : float, optional
        Rental [USD/hour] (power included), >= 0; None: not for rent.
    last_year : int, optional
        The last year it is offered; None: every year from ``first_year``.
    note : str
        Where the figures came from (:func:`generation_of` writes it).
    """

    name: str
    first_year: int
    tokens_per_s_per_device: float
    power_w: float = 0.0
    purchase_usd: float | None = None
    rent_usd_per_device_hour: float | None = None
    last_year: int | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.note, str):
            raise TokenomicsError(f"a generation's note is a string, got {self.note!r}")
        if not isinstance(self.name, str) or not self.name:
            raise TokenomicsError(f"a generation's name is a non-empty string, got "
                                  f"{self.name!r}")
        for k in ("first_year", "last_year"):
            v = getattr(self, k)
            if v is not None and not _is_year(v):
                raise TokenomicsError(f"generation {self.name!r}: {k} is a whole year in "
                                      f"{_YEAR_RANGE} (e.g. 2026), got {v!r}")
        if self.last_year is not None and self.last_year < self.first_year:
            raise TokenomicsError(f"generation {self.name!r}: last_year {self.last_year} is "
                                  f"before first_year {self.first_year}")
        r = V.single_amount(self.tokens_per_s_per_device, "tokens_per_s_per_device", "1/s")
        if not (0 < r <= 1e9):
            raise TokenomicsError(f"generation {self.name!r}: tokens_per_s_per_device must "
                                  f"be in (0, 1e9] token/s, got {r!r}")
        object.__setattr__(self, "tokens_per_s_per_device", r)
        for k, unit in (("power_w", "W"), ("purchase_usd", "USD"),
                        ("rent_usd_per_device_hour", "USD/hour")):
            v = getattr(self, k)
            if v is not None:
                v = V.single_amount(v, k, unit)
                if not (math.isfinite(v) and v >= 0):
                    raise TokenomicsError(f"generation {self.name!r}: {k} must be a finite "
                                          f"number >= 0, got {v!r}")
                object.__setattr__(self, k, v)
        if self.purchase_usd is None and self.rent_usd_per_device_hour is None:
            raise TokenomicsError(f"generation {self.name!r} can be neither bought nor "
                                  f"rented: give purchase_usd or rent_usd_per_device_hour")

    def offered(self, year: int) -> bool:
        """Whether it can be added in ``year``."""
        return self.first_year <= year and (self.last_year is None or year <= self.last_year)


def generation_of(device: Any, tokens_per_s_per_device: Any, *, first_year: int | None = None,
                  purchase_usd: Any = None, price_basis: Any = None,
                  rent: bool = True) -> Generation:
    """A :class:`Generation` from the catalogs: its power, its year, its rental.

    Parameters
    ----------
    device : str, System or Hardware
        A system id (``"gb200-nvl72"``: power per device is the system's published power
        over its devices, hosts and switches included) or a hardware id (its TDP alone).
    tokens_per_s_per_device : float
        Output per device at the operating point [token/s].
    first_year : int, optional
        Default the hardware's ``released`` year.
    purchase_usd : float, optional
        Price per device [USD]; None: not bought.
    price_basis : PriceBasis or str, optional
        The basis its rental is read on (:func:`~tokenomics.economics.basis.price_on_basis`;
        default the library's); a cost of ownership the basis falls back to is not a
        rental and is not used.
    rent : bool
        Whether it may be rented at that price (default True).

    Raises
    ------
    NotPublishedError
        A system without a published power, or a hardware without a TDP or a year.
    """
    from tokenomics.core.errors import NotPublishedError
    from tokenomics.data.catalog import hardware
    from tokenomics.data.systems import System, system
    from tokenomics.economics.basis import price_on_basis

    if isinstance(device, System) or (isinstance(device, str) and _is_system(device)):
        sy = system(device)
        if sy.power_w is None:
            raise NotPublishedError(f"system {sy.id!r} has no published power; give "
                                    f"Generation(..., power_w=...) yourself")
        hw, power, name = sy.device, sy.power_w / sy.devices, sy.id
        what = f"{sy.id}'s {sy.power_w:g} W / {sy.devices}"
    else:
        hw = hardware(device)
        if hw.tdp_w is None:
            raise NotPublishedError(f"{hw.id!r} has no published TDP; give "
                                    f"Generation(..., power_w=...) yourself")
        power, name, what = hw.tdp_w, hw.id, f"{hw.id}'s TDP"
    if first_year is None:
        if not hw.released[:4].isdigit():
            raise NotPublishedError(f"{hw.id!r} has no release year; give first_year")
        first_year = int(hw.released[:4])
    note = f"power: {what}"
    usd = None
    if V.flag(rent, "rent"):
        p = price_on_basis(hw, price_basis)
        if p.tier != "tco":
            usd = p.usd_per_device_hour
            note += f"; rent: {p.tier} {p.date} ({p.source})"
    return Generation(name, first_year, tokens_per_s_per_device, power_w=power, purchase_usd=purchase_usd,
        rent_usd_per_device_hour=usd, note=note)


def _is_system(name: str) -> bool:
    from tokenomics.core.errors import UnknownEntryError
    from tokenomics.data.systems import system
    try:
        system(name)
    except UnknownEntryError:
        return False
    return True


@dataclass(frozen=True)
class FleetTerms:
    """The financial and operating terms of a plan.

    Attributes
    ----------
    life_years : float
        Service life of an owned device [year], > 0; default the sourced ``service_life``
        (5: Amazon's from 2025; :data:`USEFUL_LIFE_YEARS` lists the others').
    utilisation : float
        Fraction of the time a device serves at its rate (and of its power it draws),
        (0, 1]; default 1.
    cost_of_capital : float
        Annual rate in [0, 1]; 0 (default): straight-line.
    pue, electricity_usd_per_kwh, networking_share : float, optional
        As :class:`~tokenomics.economics.ownership.Ownership`; default the sourced values.
    retire_obsolete : bool
        Retire an owned cohort whose electricity per token exceeds the cheapest option's
        full cost per token (default True).
    """

    life_years: float | None = None
    utilisation: float = 1.0
    cost_of_capital: float = 0.0
    pue: float | None = None
    electricity_usd_per_kwh: float | None = None
    networking_share: float | None = None
    retire_obsolete: bool = True

    def __post_init__(self) -> None:
        if self.life_years is not None:
            life = V.single_amount(self.life_years, "life_years", "year")
            if not (0 < life <= MAX_YEARS):
                raise TokenomicsError(f"life_years must be in (0, {MAX_YEARS}] years, got "
                                      f"{self.life_years!r}")
            object.__setattr__(self, "life_years", life)
        object.__setattr__(self, "retire_obsolete", V.flag(self.retire_obsolete,
                                                           "retire_obsolete"))
        o = Ownership(0.0, 1.0, 0.0, self.utilisation, self.cost_of_capital, self.pue,
                      self.electricity_usd_per_kwh, self.networking_share)   # checks each
        for k in ("utilisation", "cost_of_capital", "pue", "electricity_usd_per_kwh",
                  "networking_share"):
            object.__setattr__(self, k, getattr(o, k))

    def ownership(self, g: Generation) -> Ownership:
        """The :class:`~tokenomics.economics.ownership.Ownership` of one device of ``g``
        (which checks every term)."""
        life = default_assumptions()["service_life"] if self.life_years is None \
            else self.life_years
        return Ownership(g.purchase_usd if g.purchase_usd is not None else 0.0, life,
                         g.power_w, self.utilisation, self.cost_of_capital, self.pue,
                         self.electricity_usd_per_kwh, self.networking_share)


@dataclass(frozen=True, repr=False)
class FleetPlan(Result):
    """A plan's fleet and books, one entry per year (arrays of the plan's length).

    Attributes
    ----------
    year : ndarray of int
    demand_tokens_per_s, capacity_tokens_per_s : ndarray
        The demand and the fleet's capacity (>= the demand) [token/s].
    owned_devices, bought_devices, rented_devices, retired_devices : ndarray
        Devices in service owned, bought this year, rented this year, and retired at the
        start of this year (end of life or obsolete) [count].
    capex_usd, depreciation_usd, electricity_usd, rental_usd, cost_usd : ndarray
        The year's books [USD] (module notes).
    usd_per_mtok : ndarray
        ``cost_usd`` over the demand's tokens [USD/Mtok].
    price_usd_per_mtok, revenue_usd, margin : ndarray
        The selling price, revenue and gross margin (revenue - cost) / revenue; NaN
        without a price.
    by_generation : pandas.DataFrame
        Year x generation: ``owned``, ``bought``, ``rented``, ``retired`` [count].
    """

    year: np.ndarray
    demand_tokens_per_s: np.ndarray
    capacity_tokens_per_s: np.ndarray
    owned_devices: np.ndarray
    bought_devices: np.ndarray
    rented_devices: np.ndarray
    retired_devices: np.ndarray
    capex_usd: np.ndarray
    depreciation_usd: np.ndarray
    electricity_usd: np.ndarray
    rental_usd: np.ndarray
    cost_usd: np.ndarray
    usd_per_mtok: np.ndarray
    price_usd_per_mtok: np.ndarray
    revenue_usd: np.ndarray
    margin: np.ndarray
    by_generation: pd.DataFrame = field(default_factory=pd.DataFrame)


def demand_path(start_tokens_per_s: Any, growth_per_year: Any, years: int) -> np.ndarray:
    """A demand growing by a factor a year: :math:`D_k = D_0 g^k`, :math:`k = 0 \\ldots
    K-1` [token/s].

    Parameters
    ----------
    start_tokens_per_s : float
        The first year's mean demand [token/s], > 0.
    growth_per_year : float or str
        The factor :math:`g > 0` (1: flat), or a key of :data:`GROWTH_PRESETS`.
    years : int
        :math:`K`, in [1, :data:`MAX_YEARS`].

    Examples
    --------
    >>> demand_path(1e6, 7.0, 3).tolist()
    [1000000.0, 7000000.0, 49000000.0]
    """
    g = _preset(growth_per_year, GROWTH_PRESETS, "growth_per_year")
    d0 = V.single_amount(start_tokens_per_s, "start_tokens_per_s", "1/s")
    if not (0 < d0 < math.inf) or not (0 < g < math.inf):
        raise TokenomicsError(f"demand_path needs start_tokens_per_s > 0 and growth_per_year "
                              f"> 0 (finite), got {d0!r} and {g!r}")
    n = _years(years)
    with np.errstate(over="ignore"):
        out = d0 * g ** np.arange(n, dtype=float)
    if not np.all(np.isfinite(out)):
        raise TokenomicsError(f"demand {d0:g} x {g:g}^{n - 1} overflows: fewer years or a "
                              f"smaller growth")
    return out


def _preset(v: Any, presets: dict[str, float], name: str) -> float:
    if isinstance(v, str):
        if v not in presets:
            raise TokenomicsError(f"unknown {name} preset {v!r}; known: {sorted(presets)}")
        return presets[v]
    return V.single_amount(v, name, "dimensionless")


def _years(years: Any) -> int:
    if isinstance(years, bool) or not isinstance(years, (int, np.integer)) or \
            not 1 <= years <= MAX_YEARS:
        raise TokenomicsError(f"years must be a whole number in [1, {MAX_YEARS}], got "
                              f"{years!r}")
    return int(years)


@dataclass
class _Option:
    gen: Generation
    buy: bool
    usd_per_hour: float          # owned: its full hourly cost; rented: the rental
    usd_per_token: float


def _options(gens: list[Generation], year: int, terms: FleetTerms) -> list[_Option]:
    """Every way to add capacity in ``year``, cheapest per token first."""
    out = []
    for g in gens:
        if not g.offered(year):
            continue
        rate = g.tokens_per_s_per_device * terms.utilisation * 3600.0   # tokens an hour
        if g.purchase_usd is not None:
            p = float(sum(tco_parts(terms.ownership(g)).values()))
            out.append(_Option(g, True, p, p / rate))
        if g.rent_usd_per_device_hour is not None:
            p = g.rent_usd_per_device_hour
            out.append(_Option(g, False, p, p / rate))
    return sorted(out, key=lambda o: (o.usd_per_token, not o.buy, o.gen.name))


def fleet_plan(demand_tokens_per_s: Any, generations: Any, start_year: int,
               terms: FleetTerms | None = None, *, price_usd_per_mtok: Any = None,
               price_decline: Any = 1.0) -> FleetPlan:
    """The cheapest fleet each year that serves the demand (module notes), with its books.

    Parameters
    ----------
    demand_tokens_per_s : array_like
        Mean demand each year [token/s], >= 0 (e.g. :func:`demand_path`).
    generations : sequence of Generation
        What may be added, each year it is offered.
    start_year : int
        The first year of the plan.
    terms : FleetTerms, optional
        Service life, utilisation, financing, power terms (default :class:`FleetTerms`).
    price_usd_per_mtok : float, optional
        The first year's selling price [USD/Mtok] for revenue and margin.
    price_decline : float or str
        The price divides by this factor a year (1: flat), or a key of
        :data:`PRICE_DECLINE_PRESETS`.

    Returns
    -------
    FleetPlan

    Raises
    ------
    TokenomicsError
        For bad input, or a year with demand left over and nothing on offer (naming it).

    Examples
    --------
    >>> g = Generation("h100", 2024, 1000.0, power_w=1000.0, rent_usd_per_device_hour=2.0)
    >>> fleet_plan([1500.0, 2500.0], [g], 2024).rented_devices.tolist()
    [2, 3]
    """
    demand, gens, terms, years = _inputs(demand_tokens_per_s, generations, start_year, terms)
    price0 = None if price_usd_per_mtok is None else V.single_amount(
        price_usd_per_mtok, "price_usd_per_mtok", "USD")
    decline = _preset(price_decline, PRICE_DECLINE_PRESETS, "price_decline")
    if (price0 is not None and not (0 <= price0 < math.inf)) or not (0 < decline < math.inf):
        raise TokenomicsError(f"price_usd_per_mtok must be >= 0 and price_decline > 0 "
                              f"(finite), got {price0!r} and {decline!r}")
    state = _State(gens, terms)
    for k, y in enumerate(years):
        state.year(k, int(y), float(demand[k]))
    return state.plan(years, demand, price0, decline)


def _inputs(demand: Any, generations: Any, start_year: Any, terms: Any
            ) -> tuple[np.ndarray, list[Generation], FleetTerms, np.ndarray]:
    d = np.atleast_1d(V.non_negative(demand, "demand_tokens_per_s", "1/s"))
    if d.ndim != 1 or not 1 <= d.size <= MAX_YEARS or np.any(d > 1e18):
        raise TokenomicsError(f"demand_tokens_per_s must be 1 to {MAX_YEARS} values in "
                              f"[0, 1e18] token/s, one a year, got {d.size} value(s) up to "
                              f"{float(np.max(d)) if d.size else float('nan'):g}")
    gens = list(generations) if isinstance(generations, (list, tuple)) else None
    if not gens or not all(isinstance(g, Generation) for g in gens):
        raise TokenomicsError("generations must be a non-empty list of Generation")
    if len({g.name for g in gens}) != len(gens):
        raise TokenomicsError(f"generations need distinct names (the plan reports by name), "
                              f"got {[g.name for g in gens]}")
    if not _is_year(start_year):
        raise TokenomicsError(f"start_year is a whole year in {_YEAR_RANGE} (e.g. 2026), got "
                              f"{start_year!r}")
    terms = FleetTerms() if terms is None else terms
    if not isinstance(terms, FleetTerms):
        raise TokenomicsError(f"terms must be a FleetTerms, got {type(terms).__name__}")
    for g in gens:
        terms.ownership(g)                      # every term checked before the plan runs
    return d, gens, terms, int(start_year) + np.arange(d.size)


class _State:
    """The fleet as the plan runs: owned cohorts and each year's records."""

    def __init__(self, gens: list[Generation], terms: FleetTerms) -> None:
        self.gens, self.terms = gens, terms
        self.life = terms.ownership(gens[0]).amortisation_years
        self.cohorts: list[list[Any]] = []       # [generation, year bought, devices]
        self.rec: list[dict[str, Any]] = []

    def _retire(self, y: int, cheapest: float) -> dict[str, int]:
        out: dict[str, int] = {}
        keep = []
        for c in self.cohorts:
            g, bought, n = c
            run = tco_parts(self.terms.ownership(g))["electricity"] / (
                g.tokens_per_s_per_device * self.terms.utilisation * 3600.0)
            if y - bought >= self.life or (self.terms.retire_obsolete and run > cheapest):
                out[g.name] = out.get(g.name, 0) + n
            else:
                keep.append(c)
        self.cohorts = keep
        return out

    def year(self, k: int, y: int, demand: float) -> None:
        opts = _options(self.gens, y, self.terms)
        retired = self._retire(y, opts[0].usd_per_token if opts else math.inf)
        u = self.terms.utilisation
        have = sum(n * (g.tokens_per_s_per_device * u) for g, _, n in self.cohorts)
        bought: dict[str, int] = {}
        rented: dict[str, int] = {}
        short = demand - have
        if short > 0:
            if not opts:
                raise TokenomicsError(f"year {y}: {short:.6g} token/s of demand left and no "
                                      f"generation offered; add one available by {y}")
            o = opts[0]
            r = o.gen.tokens_per_s_per_device * u
            n = max(1, math.ceil(short / r * (1 - 1e-12)))
            while n * r < short:                 # rounding's last ulp: never under demand
                n += 1
            if o.buy:
                self.cohorts.append([o.gen, y, n])
                bought[o.gen.name] = n
            else:
                rented[o.gen.name] = n
        self.rec.append(self._books(y, demand, bought, rented, retired))

    def _books(self, y: int, demand: float, bought: dict[str, int], rented: dict[str, int],
               retired: dict[str, int]) -> dict[str, Any]:
        """The year's records: each owned cohort pays the share of its life that falls in
        the year (:func:`_life_share`: 1, or the last fraction of a life of 5.5 years)."""
        u, net = self.terms.utilisation, _net(self.terms)
        owned: dict[str, int] = {}
        annuity = elec = depreciation = 0.0
        for g, b, n in self.cohorts:
            owned[g.name] = owned.get(g.name, 0) + n
            parts = tco_parts(self.terms.ownership(g))
            share = _life_share(y - b, self.life)
            annuity += n * share * (parts["device_capital"] + parts["networking_capital"])
            depreciation += n * share * (g.purchase_usd or 0.0) / (1 - net) / self.life
            elec += n * parts["electricity"]
        by = {g.name: g for g in self.gens}
        cap = sum(n * (g.tokens_per_s_per_device * u) for g, _, n in self.cohorts) + sum(
            n * (by[k].tokens_per_s_per_device * u) for k, n in rented.items())
        rent = sum(n * (by[k].rent_usd_per_device_hour or 0.0) for k, n in rented.items())
        capex = sum(n * (by[k].purchase_usd or 0.0) / (1 - net) for k, n in bought.items())
        return dict(year=y, demand=demand, capacity=cap, owned=owned, bought=bought,
                    rented=rented, retired=retired, capex=capex,
                    depreciation=depreciation,
                    electricity=elec * HOURS_PER_YEAR, rental=rent * HOURS_PER_YEAR,
                    cost=(annuity + elec + rent) * HOURS_PER_YEAR)

    def plan(self, years: np.ndarray, demand: np.ndarray, price0: float | None,
             decline: float) -> FleetPlan:
        rec = self.rec
        col = {k: np.array([r[k] for r in rec], float) for k in
               ("capacity", "capex", "depreciation", "electricity", "rental", "cost")}
        count = {k: np.array([sum(r[k].values()) for r in rec], dtype=np.int64)
                 for k in ("owned", "bought", "rented", "retired")}
        tokens = demand * _SECONDS_PER_YEAR
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            per_mtok = np.where(tokens > 0, col["cost"] / np.where(tokens > 0, tokens, 1)
                                * 1e6, np.where(col["cost"] > 0, np.inf, 0.0))
        if price0 is None:
            price = revenue = margin = np.full(len(rec), np.nan)
        else:
            price = price0 / decline ** np.arange(len(rec), dtype=float)
            revenue = tokens / 1e6 * price
            margin = np.where(revenue > 0, (revenue - col["cost"]) / np.where(
                revenue > 0, revenue, 1.0), np.nan)
        frame = pd.DataFrame([{"year": r["year"], "generation": g.name,
                               **{k: r[k].get(g.name, 0)
                                  for k in ("owned", "bought", "rented", "retired")}}
                              for r in rec for g in self.gens])
        return FleetPlan(
            year=years.astype(np.int64), demand_tokens_per_s=demand,
            capacity_tokens_per_s=col["capacity"], owned_devices=count["owned"],
            bought_devices=count["bought"], rented_devices=count["rented"],
            retired_devices=count["retired"], capex_usd=col["capex"],
            depreciation_usd=col["depreciation"], electricity_usd=col["electricity"],
            rental_usd=col["rental"], cost_usd=col["cost"], usd_per_mtok=per_mtok,
            price_usd_per_mtok=price, revenue_usd=revenue, margin=margin,
            by_generation=frame)


def _is_year(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and \
        _YEAR_RANGE[0] <= v <= _YEAR_RANGE[1]


def _life_share(age: int, life: float) -> float:
    """The share of a year of age ``age`` inside a service life of ``life`` years:
    :math:`\\min(a + 1, n) - \\min(a, n)` (1 inside it, its last fraction, then 0)."""
    return min(age + 1.0, life) - min(float(age), life)


def _net(terms: FleetTerms) -> float:
    a = default_assumptions()
    return a["networking_share"] if terms.networking_share is None else terms.networking_share
