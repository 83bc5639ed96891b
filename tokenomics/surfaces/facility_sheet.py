"""A facility's sizing as a live spreadsheet: power at the meter to systems, tokens and dollars.

Notes
-----
:func:`export_facility_sheet` writes the four-column CSV of
:mod:`tokenomics.surfaces.spreadsheet` (label, value, unit, note; every value ``B<row>``).
The inputs (power at the meter, PUE, a system's power and devices, devices per replica,
output per device, utilisation, a device-hour's price, the selling price) are numbers; the
outputs are formulas of them, :func:`tokenomics.facility`'s module notes written as
spreadsheet formulas:

.. math::
   n_s = \\lfloor P / (\\mathrm{PUE}\\, P_s) \\rfloor, \\quad n_d = n_s d_s, \\quad
   n_r = \\lfloor n_d / d_r \\rfloor, \\quad R = u\\, n_r d_r\\, r_d, \\quad
   C = n_d p_d, \\quad c = C / (3600 R) \\cdot 10^6,

so typing another power, price or output per device into the sheet recomputes the fleet.
The device-hour's price is exported as a number (a rental, or an ownership's total cost per
device-hour at this facility's PUE); an availability target's spares
(:meth:`tokenomics.Facility.with_spares`) are a binomial quantile with no spreadsheet
formula and are not in the sheet.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.systems import System, system
from tokenomics.economics.factory import facility
from tokenomics.surfaces.spreadsheet import Worksheet


def facility_worksheet(system_id: str | System, power_w: float, tokens_per_s_per_device: float,
                   *, devices_per_replica: int = 1, device_price: Any = None,
                   pue: Any = None, utilisation: float = 1.0,
                   price_usd_per_mtok: float | None = None) -> Worksheet:
    """The facility's sizing as a :class:`~tokenomics.surfaces.spreadsheet.Worksheet`
    (module notes): what :func:`export_facility_sheet` writes.

    Parameters
    ----------
    system_id, tokens_per_s_per_device, devices_per_replica, device_price, pue, utilisation, price_usd_per_mtok
        As :func:`tokenomics.facility` takes them ([token/s], [USD/hour], [1], [USD/Mtok]).
    power_w : float
        One power at the meter [W], > 0.

    Returns
    -------
    Worksheet
        Input rows (numbers), then the fleet, output and cost rows (formulas of the inputs,
        each with its value at the inputs cached); units in the unit column.

    Raises
    ------
    TokenomicsError
        For any argument :func:`tokenomics.facility` refuses, or a power that is not one
        number.
    """
    power = V.single_amount(power_w, "power_w", "W")
    f = facility(system_id, power, tokens_per_s_per_device,
                 devices_per_replica=devices_per_replica, device_price=device_price, pue=pue,
                 utilisation=utilisation, price_usd_per_mtok=price_usd_per_mtok)
    s = system(system_id) if not isinstance(system_id, System) else system_id
    import sympy as sp

    ws = Worksheet()
    ws.section("Inputs", f"{s.id}: {s.devices} x {s.device.id}")
    P = ws.value("power at the meter", power, "W")
    pue_c = ws.value("PUE", f.pue, "1", "facility power / IT power")
    Ps = ws.value("system power", f.system_power_w, "W", "one system, as published")
    ds = ws.value("devices per system", s.devices, "devices")
    dr = ws.value("devices per replica", f.devices_per_replica, "devices")
    rate = V.single_amount(tokens_per_s_per_device, "tokens_per_s_per_device", "token/s")
    rd = ws.value("output per device", rate, "token/s",
                  "at the operating point (steady_state or a measurement)")
    u = ws.value("utilisation", float(V.fraction(utilisation, "utilisation")), "1",
                 "share of the time at that output")
    pd_ = ws.value("price per device hour", f.usd_per_device_hour, "USD/hour",
                   ", ".join(f"{k} {v:.4g}" for k, v in f.cost_parts.items()))
    ws.section("Fleet")
    ns = ws.formula("systems", sp.floor(P / (pue_c * Ps)), "systems", "whole systems")
    nd = ws.formula("devices", ns * ds, "devices")
    nr = ws.formula("replicas", sp.floor(nd / dr), "replicas")
    ws.formula("stranded devices", nd - nr * dr, "devices", "paid for, not serving")
    ws.formula("draw at full load", ns * Ps * pue_c, "W", "at the meter")
    ws.section("Output and cost")
    R = ws.formula("tokens per second", u * nr * dr * rd, "token/s")
    ws.formula("tokens per day", R * 86_400, "token/day")
    C = ws.formula("cost per hour", nd * pd_, "USD/hour", "every device, serving or not")
    cost = ws.formula("cost per million tokens", C / (3600 * R) * 10**6, "USD/Mtok")
    ws.formula("energy per million tokens", ns * Ps * pue_c / (3600 * R) * 10**6, "Wh/Mtok",
               "at full draw")
    if price_usd_per_mtok is not None:
        sell = ws.value("selling price", V.single_amount(price_usd_per_mtok,
                                                         "price_usd_per_mtok", "USD/Mtok"),
                        "USD/Mtok")
        ws.formula("revenue per day", R * 86_400 / 10**6 * sell, "USD/day")
        ws.formula("margin", 1 - cost / sell, "1", "(revenue - cost) / revenue")
    return ws


def export_facility_sheet(path: str | os.PathLike[str], system_id: str | System,
                          power_w: float, tokens_per_s_per_device: float,
                          **options: Any) -> Path:
    """Write a facility's sizing as a CSV sheet whose outputs are formulas of its inputs.

    Parameters
    ----------
    path : str or path-like
        The CSV file to write (overwritten).
    system_id, tokens_per_s_per_device
        As :func:`tokenomics.facility` takes them.
    power_w : float
        One power at the meter [W], > 0.
    **options
        :func:`tokenomics.facility`'s keywords: ``devices_per_replica``, ``device_price``,
        ``pue``, ``utilisation``, ``price_usd_per_mtok`` (with it, revenue and margin rows).

    Returns
    -------
    pathlib.Path
        The file written: inputs, then systems, devices, replicas, stranded devices, draw,
        tokens per second and per day, cost per hour [USD/hour], per million tokens
        [USD/Mtok], energy per million tokens [Wh/Mtok], and with a selling price the
        revenue [USD/day] and margin (module notes).

    Raises
    ------
    TokenomicsError
        For any argument :func:`tokenomics.facility` refuses, a power that is not one
        number, an unknown option, or a path that is not a file name or cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = export_facility_sheet(os.path.join(tmp, "f.csv"), "hgx-h100", 1e6, 1000.0,
    ...                               devices_per_replica=8, device_price=2.0, pue=1.25)
    ...     p.suffix
    '.csv'
    """
    known = {"devices_per_replica", "device_price", "pue", "utilisation", "price_usd_per_mtok"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TokenomicsError(f"export_facility_sheet got unknown option(s) {unknown}; it "
                              f"takes {sorted(known)}")
    if not isinstance(path, str | os.PathLike) or not str(path):
        raise TokenomicsError(f"path must be a file name (str or path-like), got {path!r}")
    ws = facility_worksheet(system_id, power_w, tokens_per_s_per_device, **options)
    try:
        return ws.write(path)
    except (OSError, ValueError) as exc:        # a folder, no permission, a NUL byte
        raise TokenomicsError(f"cannot write {str(path)!r}: {exc}") from None
