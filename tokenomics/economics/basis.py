"""One price basis for comparing devices: which rental tier, and which date, a price is read at.

A catalog device carries dated prices of several tiers (a neocloud's on-demand rate, a
hyperscaler's capacity block, a spot rate, a purchase...). Comparing two devices at prices of
different tiers or years compares the market, not the hardware, so every cost function reads
each device's price on one :class:`PriceBasis`: an ordered preference of rental tiers and a date
policy (the latest price, or the latest on or before a date). :data:`DEFAULT_PRICE_BASIS` is
neocloud on-demand, else hyperscaler on-demand, latest. :func:`price_on_basis` resolves a device
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
from tokenomics.data.rentals import latest_rental, rentals_listed
from tokenomics.data.specs import PRICE_TIERS, Hardware

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

    Examples
    --------
    >>> PriceBasis(("hyperscaler-on-demand",), on_or_before="2025-06").label
    'hyperscaler-on-demand, latest on or before 2025-06'
    """

    tiers: tuple[str, ...] = ("neocloud-on-demand", "hyperscaler-on-demand")
    on_or_before: str | None = None

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
        object.__setattr__(self, "tiers", tiers)

    @property
    def label(self) -> str:
        """The basis in words: tiers in order of preference, then the date policy."""
        when = "latest" if self.on_or_before is None else f"latest on or before " \
            f"{self.on_or_before}"
        return " > ".join(self.tiers) + ", " + when


#: Neocloud on-demand, else hyperscaler on-demand; the latest dated price.
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
        ownership.
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
    """A :class:`PriceBasis` from None (the default basis), a basis, a tier or tiers."""
    if price_basis is None:
        return DEFAULT_PRICE_BASIS
    if isinstance(price_basis, PriceBasis):
        return price_basis
    if isinstance(price_basis, (str, tuple, list)):
        return PriceBasis(price_basis if isinstance(price_basis, str) else tuple(price_basis))
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
    of them (of equal dates, the last listed). A lookup, no formula.

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
    raise NotPublishedError(f"{hw.id}: no rental price on the basis '{basis.label}' (rental "
                            f"prices it has: {rentals_listed(hw)}); pass a price, or another "
                            "price_basis")


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
