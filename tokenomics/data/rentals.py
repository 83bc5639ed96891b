"""A device's dated catalog prices: the latest rental of a tier, on or before a date.

These read the ``prices`` of a :class:`~tokenomics.data.specs.Hardware` entry (given as an
entry or a catalog id), so every stage can read a device's price without the economics; the
one price basis for comparing devices is :func:`tokenomics.economics.basis.price_on_basis`.
"""

from __future__ import annotations

from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.data.catalog import hardware
from tokenomics.data.specs import Hardware, Price

#: The rental tiers a device is priced at by default, in order of preference: the first with a
#: price gives the latest of them. The default price basis of the cost functions
#: (:data:`tokenomics.economics.basis.DEFAULT_PRICE_BASIS`) uses the same order, so a device
#: has one default price on every surface.
DEFAULT_RENTAL_TIERS = ("neocloud-on-demand", "hyperscaler-on-demand", "estimate")


def rental_price(hw: Hardware | str, tier: str | None = None) -> Price:
    """The latest dated rental price of a device: of one tier, or on the default tiers.

    Parameters
    ----------
    hw : Hardware or str
        The device, or its catalog id.
    tier : str, optional
        One of :data:`~tokenomics.data.specs.PRICE_TIERS` (a rental one: ``"neocloud-on-demand"``,
        ``"hyperscaler-on-demand"``, ``"neocloud-spot"``, ...). Default: the first of
        :data:`DEFAULT_RENTAL_TIERS` the device has a price for (neocloud on-demand, else
        hyperscaler on-demand, else a published estimate), as the cost functions' default
        basis reads it; a spot or capacity-block rate is read only when named.

    Returns
    -------
    Price
        ``usd`` is per device-hour [USD/hour].

    Notes
    -----
    A lookup in the hardware entry's dated ``prices`` (the catalog's price records), kept with
    the specs so that every stage can read a device's price without importing the economics.
    For a date policy, or a device priced by owning it when no one rents it out, use
    :func:`tokenomics.economics.basis.price_on_basis` (the cost functions do; on its default
    basis it returns this price wherever this one exists).

    Raises
    ------
    NotPublishedError
        When the catalog has no rental price of that tier (or of the default tiers) for the
        device; the message lists what it has.

    Examples
    --------
    >>> rental_price("h800").usd     # DeepSeek's assumption
    2.0
    """
    hw = hardware(hw)
    tiers = (tier,) if tier is not None else DEFAULT_RENTAL_TIERS
    for t in tiers:
        found = latest_rental(hw, t)
        if found is not None:
            return found
    which = f"of tier {tier!r}" if tier is not None else \
        f"on the default tiers ({', '.join(DEFAULT_RENTAL_TIERS)})"
    raise NotPublishedError(
        f"{hw.id}: no rental price {which} in the catalog (rental prices it has: "
        f"{rentals_listed(hw)}); name a tier, use tk.price_on_basis (which prices an unrented "
        f"device by owning it), or pass usd_per_device_hour")


def latest_rental(hw: Hardware, tier: str | None = None,
                  on_or_before: str | None = None) -> Price | None:
    """The latest per-hour price of one tier (any tier: None) dated on or before a date.

    Dates are ISO strings compared as text, so ``"2025-06"`` stands for its first day: a price
    dated ``"2025-06-15"`` is after it. Of equal dates the last listed wins. None when there is
    no such price. The one selection rule of :func:`rental_price` and
    :func:`tokenomics.economics.basis.price_on_basis`.
    """
    if tier is not None and not isinstance(tier, str):
        raise TokenomicsError(f"tier must be a price tier name or None, got {tier!r}")
    if on_or_before is not None and not isinstance(on_or_before, str):
        raise TokenomicsError(f"on_or_before must be a YYYY[-MM[-DD]] string or None, got "
                              f"{on_or_before!r}")
    found = [p for p in hw.prices if p.per_hour and (tier is None or p.tier == tier)
             and (on_or_before is None or p.date <= on_or_before)]
    return sorted(found, key=lambda p: p.date)[-1] if found else None


def rentals_listed(hw: Hardware) -> str:
    """The rental prices a device has, as ``"tier date, ..."`` for error messages."""
    return ", ".join(f"{p.tier} {p.date}" for p in hw.prices if p.per_hour) or "none"


def latest_purchase(hw: Hardware, on_or_before: str | None = None) -> Price | None:
    """The latest one-off purchase price of a device [USD per device] dated on or before a
    date (the rule of :func:`latest_rental`); None when the catalog has none."""
    if on_or_before is not None and not isinstance(on_or_before, str):
        raise TokenomicsError(f"on_or_before must be a YYYY[-MM[-DD]] string or None, got "
                              f"{on_or_before!r}")
    found = [p for p in hw.prices if not p.per_hour and p.tier == "purchase"
             and (on_or_before is None or p.date <= on_or_before)]
    return sorted(found, key=lambda p: p.date)[-1] if found else None
