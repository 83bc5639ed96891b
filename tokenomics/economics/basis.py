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
to a :class:`BasisPrice` (the price with its tier, date and source); :func:`warn_if_mixed_tiers`
warns when the devices of one comparison resolved to different tiers.

A price dated only to a month or a year counts as the first day of it (``"2025-06"`` is on or
before ``"2025-06-15"``; ``"2025"`` is before ``"2025-01-01"``): ISO dates compared as text.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
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

    Examples
    --------
    >>> PriceBasis(("hyperscaler-on-demand",), on_or_before="2025-06").label
    'hyperscaler-on-demand > owned, latest on or before 2025-06'
    """

    tiers: tuple[str, ...] = DEFAULT_RENTAL_TIERS
    on_or_before: str | None = None
    owned: bool = True

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
        object.__setattr__(self, "tiers", tiers)

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
    """

    usd_per_device_hour: float
    tier: str
    date: str
    source: str
    note: str = ""


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
        ``usd_per_device_hour`` [USD/hour].

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
            return BasisPrice(p.usd, p.tier, p.date, p.source, p.note)
    bought = latest_purchase(hw, basis.on_or_before) if basis.owned else None
    if bought is not None and hw.tdp_w is not None:
        return _owned(hw, bought)
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


def _owned(hw: Hardware, bought: Any) -> BasisPrice:
    """A purchase price as the hourly cost of owning the device over the sourced life."""
    years = default_assumptions()["service_life"]
    usd = tco_usd_per_device_hour(Ownership(bought.usd, years, hw.tdp_w))
    return BasisPrice(usd, "tco", bought.date, bought.source,
                      f"owned: purchase ${bought.usd:,.0f} over {years:g} years at "
                      f"{hw.tdp_w:g} W (tokenomics.economics.ownership); {bought.note}".rstrip("; "))


def warn_if_mixed_tiers(priced: Mapping[str, BasisPrice | None]) -> None:
    """Warn (``UserWarning``) when the devices of one comparison are priced at different tiers.

    Parameters
    ----------
    priced : mapping of hardware id to BasisPrice or None
        None (unpriced) and caller-given prices (tier ``"user"``) are left out.
    """
    by_tier: dict[str, list[str]] = {}
    for hw_id, p in priced.items():
        if p is not None and p.tier != "user":
            by_tier.setdefault(p.tier, []).append(hw_id)
    if len(by_tier) > 1:
        parts = "; ".join(f"{t}: {', '.join(sorted(ids))}" for t, ids in sorted(by_tier.items()))
        warnings.warn(f"devices priced at different tiers ({parts}); the comparison mixes "
                      "price tiers. Pass price_basis= with one tier, or prices=, to compare on "
                      "one basis", UserWarning, stacklevel=4)
