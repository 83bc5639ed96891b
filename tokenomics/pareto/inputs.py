"""What a frontier query takes in: deployments, an efficiency preset, device prices, labels.

The envelope (:mod:`tokenomics.pareto.envelope`) and the queries
(:mod:`tokenomics.pareto.queries`) accept one deployment, a list, or a sweep's frame; apply an
efficiency preset (by default each deployment's own: the bound unless it says otherwise); price each device-hour from a mapping or
the catalog on one price basis (:mod:`tokenomics.economics.basis`), warning when the devices
of one query resolve to different tiers; and label and describe each configuration the same way.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.data.specs import Efficiency
from tokenomics.economics.basis import (
    BasisPrice,
    as_price_basis,
    price_on_basis,
    warn_if_mixed_ages,
    warn_if_mixed_tiers,
)


def with_efficiency(deps: list[Deployment], efficiency: Any) -> list[Deployment]:
    """Apply an efficiency preset to every deployment (``"deployment"``: keep their own)."""
    if not isinstance(efficiency, (str, Efficiency)):
        raise TokenomicsError(f"efficiency must be 'deployment', a preset name "
                              f"(tk.efficiency_presets()) or an Efficiency, got {efficiency!r}")
    if efficiency == "deployment":
        return deps
    from tokenomics.calibration.fitting import efficiency_presets

    if isinstance(efficiency, Efficiency):
        e = efficiency
    else:
        presets = efficiency_presets()
        if efficiency not in presets:
            raise TokenomicsError(f"efficiency must be 'calibrated', 'roofline', 'deployment' or "
                                  f"an Efficiency, got {efficiency!r}")
        e = presets[efficiency]
    return [_with(d, e) for d in deps]


def _with(dep: Deployment, e: Efficiency) -> Deployment:
    """``dep`` under efficiency ``e``: itself when it has it, else a copy kept on it (so a
    frontier asked again under the same preset finds the copy's decode curves)."""
    if dep.efficiency == e or dep.efficiency == e.for_stack(dep.stack, dep.hardware.id):
        return dep
    kept = dep.__dict__.setdefault("_with_efficiency", {})
    copy = kept.get(e)
    if copy is None:
        copy = dep.with_(efficiency=e)
        while len(kept) >= _KEPT_PRESETS:
            kept.pop(next(iter(kept), None), None)
        kept[e] = copy
    return copy


#: Efficiency copies kept per deployment (a calibration loop over many efficiencies keeps
#: only the latest few).
_KEPT_PRESETS = 4


def efficiency_label(dep: Deployment) -> str:
    """Name of the preset a deployment's efficiency is or equals, else ``"custom"``."""
    from tokenomics.calibration.fitting import efficiency_presets

    if dep.efficiency.name:
        return dep.efficiency.name
    for name, e in efficiency_presets().items():
        if dep.efficiency == e:
            return name
    return "custom"


def config_columns(dep: Deployment) -> dict[str, Any]:
    """The configuration columns of a deployment's rows."""
    return dict(model=dep.model.id, hardware=dep.hardware.id, n_devices=dep.n_devices,
                tp=dep.tp, pp=dep.pp, ep=dep.ep, dp_attention=dep.dp_attention,
                weight_dtype=dep.weight_dtype, kv_dtype=dep.kv_dtype,
                compute_dtype=dep.compute_dtype, efficiency=efficiency_label(dep))


def device_price(dep: Deployment, prices: dict[str, float] | None,
                 price_basis: Any = None) -> BasisPrice | None:
    """A device-hour price: ``prices`` by hardware id (tier ``"user"``), else the catalog's
    price on ``price_basis`` (default basis when None); None when there is none."""
    if prices is not None and not isinstance(prices, dict):
        raise TokenomicsError(f"prices must be a dict of hardware id -> USD per device-hour, "
                              f"got {prices!r}")
    if prices and dep.hardware.id in prices:
        usd = V.single_amount(prices[dep.hardware.id], f"prices[{dep.hardware.id!r}]",
                              "USD/hour")
        return BasisPrice(usd, "user", "", "prices=")
    try:
        return price_on_basis(dep.hardware, price_basis)
    except NotPublishedError:
        return None


def device_prices(deps: list[Deployment], prices: dict[str, float] | None,
                  price_basis: Any = None, warn: bool = True) -> dict[str, BasisPrice | None]:
    """Each hardware id's :func:`device_price`; warns (``UserWarning``) when catalog prices of
    different tiers meet in one query (``warn``)."""
    basis = as_price_basis(price_basis)
    out = {d.hardware.id: device_price(d, prices, basis) for d in deps}
    if warn:
        warn_if_mixed_tiers(out)
        warn_if_mixed_ages(out, basis.max_spread_months)
    return out


def price_columns(p: BasisPrice | None) -> dict[str, Any]:
    """The price columns of a row: ``price_usd_per_device_hour`` [USD/hour] (NaN when
    unpriced), ``price_tier``, ``price_date``."""
    if p is None:
        return dict(price_usd_per_device_hour=float("nan"), price_tier="", price_date="")
    return dict(price_usd_per_device_hour=p.usd_per_device_hour, price_tier=p.tier,
                price_date=p.date)


def device_price_usd_per_hour(dep: Deployment, prices: dict[str, float] | None,
                              price_basis: Any = None) -> float:
    """USD per device-hour: ``prices`` by hardware id, else the catalog's price on the basis
    (default :data:`~tokenomics.economics.basis.DEFAULT_PRICE_BASIS`); NaN if none."""
    p = device_price(dep, prices, price_basis)
    return float("nan") if p is None else p.usd_per_device_hour


def deployment_label(dep: Deployment,
                     speculation: dict[str, float] | None = None) -> str:
    """A one-line name of a configuration (model, devices, layout, speculation, formats)."""
    spec = ""
    if speculation:
        spec = f" spec k={int(speculation['k'])}"
    return (f"{dep.model.id} | {dep.n_devices}x{dep.hardware.id} tp{dep.tp}" + spec
            + (f" pp{dep.pp}" if dep.pp > 1 else "") + (f" ep{dep.ep}" if dep.ep > 1 else "")
            + (f" dpa{dep.dp_attention}" if dep.dp_attention > 1 else "")
            + f" {dep.weight_dtype}/{dep.kv_dtype}/{dep.compute_dtype}")


def deployments_of(obj: Any) -> list[Deployment]:
    """The deployments of one, an iterable, or a sweep's frame (which carries them)."""
    if isinstance(obj, Deployment):
        return [obj]
    if isinstance(obj, pd.DataFrame):
        if "_deployment" not in obj.columns:
            raise TokenomicsError("a DataFrame given to frontier must come from tk.sweep "
                                  "(it carries the deployments)")
        seen: dict[int, Deployment] = {}
        for d in obj["_deployment"]:
            seen.setdefault(id(d), d)
        return list(seen.values())
    if not isinstance(obj, (list, tuple, set, frozenset, dict)) and not hasattr(obj, "__next__"):
        raise TokenomicsError(f"deployments must be a Deployment, a list of them or a frame from "
                              f"tk.sweep, got {type(obj).__name__} {str(obj)[:40]!r}")
    deps = list(obj)
    if not deps or not all(isinstance(d, Deployment) for d in deps):
        raise TokenomicsError("deployments must be Deployment objects (at least one)")
    return deps
