"""One price basis for comparing devices: which rental tier, and which date, a price is read at.

A catalog device carries dated prices of several tiers (a neocloud's on-demand rate, a
hyperscaler's capacity block, a spot rate, a purchase...). Comparing two devices at prices of
different tiers or years compares the market, not the hardware, so every cost function reads
each device's price on one :class:`PriceBasis`: an ordered preference of rental tiers and a date
policy (the latest price, or the latest on or before a date), and whether a device that no
one rents out is priced by owning it. :data:`DEFAULT_PRICE_BASIS` is neocloud on-demand, else
hyperscaler on-demand, else a published rental estimate, else the device's purchase price
owned over the sourced service life (:func:`~tokenomics.economics.ownership.tco_usd_per_device_hour`
at its TDP and the sourced PUE, electricity and networking share), latest. The owned price is
tier ``"tco"``: a comparison that mixes it with rentals warns, as any mix of tiers does. :func:`price_on_basis` resolves a device
to a :class:`BasisPrice` (the price with its tier, date, source and age); :func:`warn_if_mixed_tiers`
warns when the devices of one comparison resolved to different tiers, :func:`warn_if_mixed_ages`
when their prices' dates lie further apart than the basis allows (``max_spread_months``,
default 12): a 2022 price beside a 2026 one compares two markets. A basis pinned to a date
(``on_or_before``) resolves the same prices, with the same ages, on any day; the default basis
takes the latest prices and measures their age from today.

A price dated only to a month or a year counts as the first day of it (``"2025-06"`` is on or
before ``"2025-06-15"``; ``"2025"`` is before ``"2025-01-01"``): ISO dates compared as text.
"""

from __future__ import annotations

import datetime as _dt
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.catalog import hardware
from tokenomics.data.rentals import (
    DEFAULT_RENTAL_TIERS,
    latest_purchase,
    latest_rental,
    rentals_listed,
)
from tokenomics.data.specs import PRICE_TIERS, Hardware
from tokenomics.economics.ownership import Ownership, default_assumptions, tco_usd_per_device_hour

#: Tiers that price a device-hour; ``purchase`` is a one-off price [USD].
RENTAL_TIERS = tuple(t for t in PRICE_TIERS if t != "purchase")

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def _months(m: Any, name: str) -> float:
    """A spread of months >= 0 as a float, else the library's error naming ``name``."""
    if isinstance(m, bool) or not isinstance(m, (int, float)) or not 0 <= m < 1e6:
        raise TokenomicsError(f"{name} must be a number of months >= 0 (default 12), got {m!r}")
    return float(m)


@dataclass(frozen=True)
class PriceBasis:
    """Which rental price of a device a comparison uses.

    Attributes
    ----------
    tiers : tuple of str
        Rental tiers in order of preference (each one of :data:`RENTAL_TIERS`): a device is
        priced at its first tier that has a price within the date policy.
    on_or_before : str or None
        ``"YYYY"``, ``"YYYY-MM"`` or ``"YYYY-MM-DD"``: the latest price dated on or before it.
        None: the latest price.
    owned : bool
        When no tier has a price, price the device by owning it: its latest purchase price
        (within the date policy) amortised over the sourced service life with its TDP's
        electricity, tier ``"tco"``. Default True; False raises instead.
    max_spread_months : float
        The widest spread of price dates one comparison may mix without a warning [month of
        30.44 days], >= 0; default 12.

    Examples
    --------
    >>> PriceBasis(("hyperscaler-on-demand",), on_or_before="2025-06").label
    'hyperscaler-on-demand > owned, latest on or before 2025-06'
    """

    tiers: tuple[str, ...] = DEFAULT_RENTAL_TIERS
    on_or_before: str | None = None
    owned: bool = True
    max_spread_months: float = 12.0

    def __post_init__(self) -> None:
        t = self.tiers
        if not isinstance(t, (str, tuple, list)):
            raise TokenomicsError(f"PriceBasis.tiers must be a rental tier or a tuple of them, "
                                  f"got {t!r}; use some of {', '.join(RENTAL_TIERS)}")
        tiers = (t,) if isinstance(t, str) else tuple(t)
        if not tiers:
            raise TokenomicsError("PriceBasis.tiers must name at least one rental tier")
        bad = [t for t in tiers if t not in RENTAL_TIERS]
        if bad:
            raise TokenomicsError(f"PriceBasis.tiers: {bad} not rental tiers; use some of "
                                  f"{', '.join(RENTAL_TIERS)}")
        d = self.on_or_before
        if d is not None and (not isinstance(d, str) or not _DATE.match(d)):
            raise TokenomicsError(f"PriceBasis.on_or_before must be YYYY, YYYY-MM or "
                                  f"YYYY-MM-DD (or None for the latest), got {d!r}")
        if not isinstance(self.owned, bool):
            raise TokenomicsError(f"PriceBasis.owned must be True or False, got {self.owned!r}")
        object.__setattr__(self, "max_spread_months",
                           _months(self.max_spread_months, "PriceBasis.max_spread_months"))
        object.__setattr__(self, "tiers", tiers)

    @property
    def as_of(self) -> _dt.date:
        """The date prices' ages are measured from: ``on_or_before`` (its first day), else
        today."""
        return _day(self.on_or_before) if self.on_or_before else _dt.date.today()

    @property
    def label(self) -> str:
        """The basis in words: tiers in order of preference, then the date policy."""
        when = "latest" if self.on_or_before is None else f"latest on or before " \
            f"{self.on_or_before}"
        return " > ".join(self.tiers + (("owned",) if self.owned else ())) + ", " + when


#: Neocloud on-demand, else hyperscaler on-demand, else a published estimate, else owned;
#: the latest dated price.
DEFAULT_PRICE_BASIS = PriceBasis()


@dataclass(frozen=True)
class BasisPrice:
    """A device-hour price as a comparison used it.

    Attributes
    ----------
    usd_per_device_hour : float
        [USD/hour]
    tier : str
        The catalog tier; ``"user"`` for a price given by the caller, ``"tco"`` for a cost of
        ownership (a caller's :class:`~tokenomics.economics.ownership.Ownership`, or a
        purchase price the basis amortised).
    date : str
        The catalog date (``""`` when not from the catalog).
    source : str
        The catalog's bibliography key, or what the caller gave.
    note : str
    age_days : int or None
        Days from the price's date (its first day) to the basis's :attr:`PriceBasis.as_of`;
        None for a caller's price.
    """

    usd_per_device_hour: float
    tier: str
    date: str
    source: str
    note: str = ""
    age_days: int | None = None


def _day(date: str) -> _dt.date:
    """The first day of a ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` date."""
    parts = [int(x) for x in date.split("-")] + [1, 1]
    return _dt.date(parts[0], parts[1], parts[2])


def as_price_basis(price_basis: Any) -> PriceBasis:
    """A :class:`PriceBasis` from None (the default basis), a basis, a tier or tiers (a basis
    of just those tiers, ``owned=False``)."""
    if price_basis is None:
        return DEFAULT_PRICE_BASIS
    if isinstance(price_basis, PriceBasis):
        return price_basis
    if isinstance(price_basis, (str, tuple, list)):    # those tiers only: no owned fallback
        return PriceBasis(price_basis if isinstance(price_basis, str) else tuple(price_basis),
                          owned=False)
    raise TokenomicsError(f"price_basis must be a PriceBasis, a rental tier or tiers, or None, "
                          f"got {price_basis!r}")


@inputs(hw="hardware")
def price_on_basis(hw: Hardware | str, price_basis: Any = None) -> BasisPrice:
    """A device's rental price on a price basis, with the tier, date and source it came from.

    Parameters
    ----------
    hw : Hardware or str
        The device, or its catalog id.
    price_basis : PriceBasis, str, sequence of str or None
        Default :data:`DEFAULT_PRICE_BASIS`; a tier name or names is a basis of those tiers.

    Returns
    -------
    BasisPrice
        ``usd_per_device_hour`` [USD/hour], with its tier, date, source and ``age_days`` [day]
        from the basis's as-of date (``on_or_before``, else today).

    Notes
    -----
    For each tier of the basis in order, the catalog's rental prices of that tier dated on or
    before ``on_or_before`` (all of them when None); the first tier with any gives the latest
    of them (of equal dates, the last listed). With none and ``owned``, the latest purchase
    price :math:`P` becomes :func:`~tokenomics.economics.ownership.tco_usd_per_device_hour`
    over the sourced service life :math:`n` at the device's TDP :math:`W`:
    :math:`P / (1 - s_\\mathrm{net}) / (8760\\,n) + W\\,\\mathrm{PUE}\\,e / 1000`.

    Raises
    ------
    NotPublishedError
        No price on the basis; the message lists the rental prices the device has.

    Examples
    --------
    >>> from tokenomics.data.catalog import hardware
    >>> p = price_on_basis(hardware("h200"))
    >>> (p.tier, p.date)
    ('neocloud-on-demand', '2026-03-17')
    """
    hw = hardware(hw)
    basis = as_price_basis(price_basis)
    for tier in basis.tiers:
        p = latest_rental(hw, tier, basis.on_or_before)
        if p is not None:
            return _aged(BasisPrice(p.usd, p.tier, p.date, p.source, p.note), basis)
    bought = latest_purchase(hw, basis.on_or_before) if basis.owned else None
    if bought is not None and hw.tdp_w is not None:
        return _aged(_owned(hw, bought), basis)
    if not basis.owned:
        why = "owned=False"
    elif bought is None:
        why = "no purchase price to own it at"
    else:
        why = (f"a purchase price (${bought.usd:,.0f}, {bought.date}) but no published TDP to "
               f"cost its power: pass an Ownership with power_w")
    raise NotPublishedError(f"{hw.id}: no rental price on the basis '{basis.label}' (rental "
                            f"prices it has: {rentals_listed(hw)}; {why}); pass a price, or "
                            "another price_basis")


def _aged(p: BasisPrice, basis: PriceBasis) -> BasisPrice:
    return replace(p, age_days=(basis.as_of - _day(p.date)).days) if p.date else p


def _owned(hw: Hardware, bought: Any) -> BasisPrice:
    """A purchase price as the hourly cost of owning the device over the sourced life."""
    years = default_assumptions()["service_life"]
    usd = tco_usd_per_device_hour(Ownership(bought.usd, years, hw.tdp_w))
    return BasisPrice(usd, "tco", bought.date, bought.source,
                      f"owned: purchase ${bought.usd:,.0f} over {years:g} years at "
                      f"{hw.tdp_w:g} W (tokenomics.economics.ownership); {bought.note}".rstrip("; "))


def _check_priced(priced: Any, name: str) -> None:
    """``priced`` must map hardware ids to BasisPrice or None."""
    if not isinstance(priced, Mapping) or not all(
            p is None or isinstance(p, BasisPrice) for p in priced.values()):
        raise TokenomicsError(f"{name}: priced must be a mapping of hardware id to BasisPrice "
                              f"or None (as price_on_basis returns), got {priced!r}")


def warn_if_mixed_tiers(priced: Mapping[str, BasisPrice | None]) -> None:
    """Warn (``UserWarning``) when the devices of one comparison are priced at different tiers.

    Parameters
    ----------
    priced : mapping of hardware id to BasisPrice or None
        None (unpriced) and caller-given prices (tier ``"user"``) are left out.
    """
    _check_priced(priced, "warn_if_mixed_tiers")
    by_tier: dict[str, list[str]] = {}
    for hw_id, p in priced.items():
        if p is not None and p.tier != "user":
            by_tier.setdefault(p.tier, []).append(hw_id)
    if len(by_tier) > 1:
        parts = "; ".join(f"{t}: {', '.join(sorted(ids))}" for t, ids in sorted(by_tier.items()))
        warnings.warn(f"devices priced at different tiers ({parts}); the comparison mixes "
                      "price tiers. Pass price_basis= with one tier, or prices=, to compare on "
                      "one basis", UserWarning, stacklevel=4)


def warn_if_mixed_ages(priced: Mapping[str, BasisPrice | None],
                       max_spread_months: float = 12.0) -> None:
    """Warn (``UserWarning``) when the prices of one comparison are dated further apart than
    ``max_spread_months``, naming each device with its price's date.

    Parameters
    ----------
    priced : mapping of hardware id to BasisPrice or None
        None (unpriced) and caller-given prices (no date) are left out.
    max_spread_months : float
        [month of 30.44 days], default 12 (:attr:`PriceBasis.max_spread_months`).

    Notes
    -----
    The spread is the latest date minus the earliest, each read as its first day.
    """
    _check_priced(priced, "warn_if_mixed_ages")
    _months(max_spread_months, "warn_if_mixed_ages: max_spread_months")
    dated = {h: p.date for h, p in priced.items() if p is not None and p.date}
    if len(dated) < 2:
        return
    days = {h: _day(d) for h, d in dated.items()}
    spread = (max(days.values()) - min(days.values())).days
    if spread > max_spread_months * 30.44:
        parts = ", ".join(f"{h} {dated[h]}" for h in sorted(days, key=lambda h: days[h]))
        warnings.warn(f"prices dated {spread / 30.44:.0f} months apart ({parts}), more than "
                      f"{max_spread_months:g}: the comparison mixes markets of different "
                      "dates. Pin price_basis=PriceBasis(on_or_before=...) or pass prices=",
                      UserWarning, stacklevel=4)
