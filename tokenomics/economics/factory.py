"""A token factory at facility scale: from the power at the meter to systems, tokens and dollars.

A facility is sized by the power it may draw at the meter, :math:`P`. Its cooling, power
conversion and lighting take a share stated by the power usage effectiveness (PUE): the IT
load it can feed is :math:`P / \\mathrm{PUE}`. That load is spent in whole systems (an HGX
node, an NVL72 rack), each drawing its published system power :math:`P_s` (accelerators,
host CPUs and memory, switch trays, NICs, fans, power conversion). From there:

.. math::
   n_s = \\Big\\lfloor \\frac{P}{\\mathrm{PUE}\\, P_s} \\Big\\rfloor, \\quad
   n_d = n_s d_s, \\quad
   n_r = \\Big\\lfloor \\frac{n_d}{d_r} \\Big\\rfloor, \\quad
   R = u\\, n_r d_r\\, r_d,

with :math:`d_s` accelerators per system, :math:`d_r` per replica (a deployment's devices),
:math:`r_d` tokens per second per device at the operating point (from
:func:`~tokenomics.steady_state` or a measurement) and :math:`u` the fraction of the time the
fleet serves at that rate. Every device costs, serving or not (those left over by the replica
count are stranded), so the fleet's hourly cost is :math:`C = n_d p_d` with :math:`p_d` a
device-hour's price (a rental, or :func:`~tokenomics.economics.ownership.tco_usd_per_device_hour`
of owning it, whose power per device is the system's :math:`P_s / d_s`, hosts and switches
included, at the facility's PUE). Cost per million tokens is :math:`C / (3600 R) \\cdot 10^6`;
the facility draws :math:`n_s P_s \\mathrm{PUE}` at full load.

Notes
-----
The system's power is the vendor's maximum, which is what a facility provisions for; the
energy figures are therefore at full draw (an upper bound on the energy a token takes). What
the systems draw beyond their accelerators (``overhead_w``) is the published total less the
accelerators' TDP: hosts, the NVLink switch trays, NICs, fans and power conversion.

References
----------
.. [1] The Green Grid, "PUE: A Comprehensive Examination of the Metric", White Paper 49, 2012
   (PUE = facility power / IT equipment power).
.. [2] Uptime Institute, Global Data Center Survey 2024 (average PUE 1.56, the default).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.core.units import Result
from tokenomics.data.systems import System, system
from tokenomics.economics.cost import device_hour_usd
from tokenomics.economics.ownership import Ownership, default_assumptions, tco_parts

#: Seconds in a day.
DAY_S = 86_400.0
#: Largest output a device may be given [token/s]: far above any chip's (1e5-1e6 at most),
#: low enough that a fleet's total stays finite.
MAX_TOKENS_PER_S_PER_DEVICE = 1e9


@dataclass(frozen=True, repr=False)
class Facility(Result):
    """A facility's fleet, output and books at each power budget (arrays of one shape).

    Attributes
    ----------
    system : str
        The system id.
    power_w : ndarray
        Power at the meter [W].
    pue : float
        Power usage effectiveness [1].
    system_power_w : float
        One system's provisioned power [W].
    overhead_w : float
        What a system draws beyond its accelerators' TDP [W] (hosts, switch trays, NICs,
        fans, conversion); NaN where the device's TDP is not published.
    systems, devices, replicas : ndarray
        Whole systems, accelerators and replicas [count].
    stranded_devices : ndarray
        Devices left over by the replica count [count] (paid for, not serving).
    draw_w : ndarray
        The facility's draw at full load, :math:`n_s P_s \\mathrm{PUE}` [W] (<= ``power_w``).
    tokens_per_s, tokens_per_day : ndarray
        The fleet's output [token/s], [token/day].
    tokens_per_s_per_mw : ndarray
        Output per megawatt at the meter [token/s/MW].
    usd_per_device_hour : float
        A device-hour's price [USD/hour].
    usd_per_hour : ndarray
        The fleet's cost [USD/hour].
    usd_per_mtok : ndarray
        Cost per million tokens [USD/Mtok]; inf where no replica fits.
    wh_per_mtok : ndarray
        Energy at the meter per million tokens, at full draw [Wh/Mtok].
    revenue_usd_per_day, margin : ndarray
        Revenue at ``price_usd_per_mtok`` [USD/day] and the gross margin (revenue - cost) /
        revenue [1]; NaN when no price is given.
    devices_per_replica : int
        Devices one replica takes.
    sla : float
        The availability target the output is held at (:meth:`with_spares`); NaN: none, the
        output is what every replica serves.
    spare_replicas : ndarray
        Replicas held back so that the rest serve at ``sla`` [count]; 0 without one.
    cost_parts : dict
        A device-hour's price by what it pays for [USD/hour]: an owned device's
        :func:`~tokenomics.economics.ownership.tco_parts`, or ``{"rental": price}``.
    """

    system: str
    power_w: np.ndarray
    pue: float
    system_power_w: float
    overhead_w: float
    systems: np.ndarray
    devices: np.ndarray
    replicas: np.ndarray
    stranded_devices: np.ndarray
    draw_w: np.ndarray
    tokens_per_s: np.ndarray
    tokens_per_day: np.ndarray
    tokens_per_s_per_mw: np.ndarray
    usd_per_device_hour: float
    usd_per_hour: np.ndarray
    usd_per_mtok: np.ndarray
    wh_per_mtok: np.ndarray
    revenue_usd_per_day: np.ndarray
    margin: np.ndarray
    devices_per_replica: int
    sla: float
    spare_replicas: np.ndarray
    cost_parts: dict[str, float] = field(default_factory=dict)

    def cost_waterfall(self) -> pd.DataFrame:
        """Cost per million tokens, part by part, at each power budget [USD/Mtok].

        The fleet's hourly cost :math:`n_d p_d` splits by the devices it pays for (those
        serving, the stranded ones the replica count leaves over, and the spares an SLA holds
        back, :meth:`with_spares`) and by what a device-hour pays for (:attr:`cost_parts`).
        Each serving part is :math:`n_\\mathrm{serve} p_i / (3600 R) \\cdot 10^6` for the
        output :math:`R`; ``stranded`` and ``spares`` are their devices at the full price.

        Returns
        -------
        pandas.DataFrame
            One row per part (the device-hour's parts, then ``stranded``, ``spares``), one
            column per power budget (its MW at the meter; budgets of more than one dimension
            in C order); the rows add up to :attr:`usd_per_mtok`. Inf where no replica fits.

        Examples
        --------
        >>> f = facility("gb300-nvl72", 100e6, 1000.0, device_price=3.0, pue=1.2)
        >>> w = f.cost_waterfall()            # $3/GPU-h over 3.6 Mtok/GPU-h: $0.833/Mtok
        >>> round(float(w.iloc[:, 0].sum()), 4), round(float(w.loc["rental"].iloc[0]), 4)
        (0.8333, 0.8333)
        """
        def flat(x: Any) -> np.ndarray:           # budgets of any shape, in C order
            return np.ravel(np.asarray(x, float))

        spare = flat(self.spare_replicas) * self.devices_per_replica
        stranded = flat(self.stranded_devices)
        serve = flat(self.devices) - stranded - spare
        tok = flat(self.tokens_per_s)

        def per_mtok(devices: np.ndarray, usd_h: float) -> np.ndarray:
            hourly = devices * usd_h * (1e6 / 3600.0)
            return np.divide(hourly, tok, out=np.full(tok.shape, np.inf), where=tok > 0)

        rows = {k: per_mtok(serve, v) for k, v in self.cost_parts.items()}
        rows["stranded"] = per_mtok(stranded, self.usd_per_device_hour)
        rows["spares"] = per_mtok(spare, self.usd_per_device_hour)
        cols = [f"{mw:g} MW" for mw in flat(self.power_w) / 1e6]
        return pd.DataFrame(rows, index=cols).T

    def with_spares(self, sla: Any, *, failures_per_device_hour: Any = None,
                    repair_hours: Any = None) -> Facility:
        """The facility's output at an availability target: replicas that may be down are
        spares, paid for and not sold.

        Of :math:`n_r` replicas each up a fraction :math:`a`
        (:func:`~tokenomics.economics.availability.replica_availability`), :math:`n_r - k_q`
        are up with probability ``sla`` (:math:`k_q` the ``sla``-quantile of
        :math:`\\mathrm{Bin}(n_r, 1 - a)`). Tokens, revenue and energy scale by
        :math:`(n_r - k_q) / n_r`; the fleet's cost does not, so $/Mtok and Wh/Mtok rise by
        its inverse.

        Parameters
        ----------
        sla : float
            Probability that the stated output is served, in (0, 1) (0.999 for 99.9%).
        failures_per_device_hour, repair_hours : float, optional
            As :func:`~tokenomics.economics.availability.replica_availability` (defaults:
            Llama 3's interruption rate, and the assumed restore time).

        Returns
        -------
        Facility
            With ``sla`` and ``spare_replicas`` set.

        Examples
        --------
        >>> f = facility("gb300-nvl72", 100e6, 1000.0, devices_per_replica=72,
        ...              device_price=3.0, pue=1.2)
        >>> g = f.with_spares(0.999, repair_hours=24.0)
        >>> int(f.replicas), int(g.spare_replicas)      # 586 racks, 3.3% of them down on average
        (586, 34)
        """
        from tokenomics.economics import availability as A

        lam = A.LLAMA3_FAILURES_PER_GPU_HOUR if failures_per_device_hour is None \
            else failures_per_device_hour
        hours = A.REPAIR_HOURS if repair_hours is None else repair_hours
        q = A.check_sla(sla)
        a = A.replica_availability(self.devices_per_replica, lam, hours)
        k = A.down_quantile(self.replicas, q, 1.0 - a)
        serving = self.replicas - k
        f = np.divide(serving, self.replicas, out=np.zeros(np.shape(serving)),
                      where=self.replicas > 0)
        tok = self.tokens_per_s * f
        def per_tok(x: np.ndarray) -> np.ndarray:
            return np.divide(x, f, out=np.full(np.shape(f), np.inf), where=f > 0)

        return replace(self, tokens_per_s=tok, tokens_per_day=tok * DAY_S,
                       tokens_per_s_per_mw=tok / (self.power_w / 1e6),
                       usd_per_mtok=per_tok(self.usd_per_mtok),
                       wh_per_mtok=per_tok(self.wh_per_mtok),
                       revenue_usd_per_day=self.revenue_usd_per_day * f,
                       margin=1.0 - per_tok(1.0 - self.margin), sla=q, spare_replicas=k)


def _system_power(s: System) -> float:
    if s.power_w is None:
        raise NotPublishedError(
            f"system {s.id!r}: its power is not published in the systems catalog; give the "
            f"system with its power, dataclasses.replace(tk.system({s.id!r}), power_w=...) "
            f"(the whole system's draw in W: accelerators, hosts, switches, fans), e.g. from "
            f"the vendor's datasheet")
    v = s.power_w
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < float("inf")):
        raise TokenomicsError(f"system {s.id!r}: power_w must be a number of W > 0, got {v!r}")
    return float(v)


def _device_price(s: System, device_price: Any, system_power_w: float, pue: float
                  ) -> tuple[float, dict[str, float]]:
    """A device-hour's price and its parts; an Ownership's power defaults to the system's
    share per device."""
    if isinstance(device_price, Ownership):
        if device_price.power_w is None:
            device_price = replace(device_price, power_w=system_power_w / s.devices)
        if device_price.pue is None:
            device_price = replace(device_price, pue=pue)
        return device_hour_usd(s.device, device_price), tco_parts(device_price)
    usd = device_hour_usd(s.device, device_price)
    return usd, {"rental": usd}


def facility(system_id: str | System, power_w: Any, tokens_per_s_per_device: Any, *,
             devices_per_replica: int = 1, device_price: Any = None, pue: Any = None,
             utilisation: Any = 1.0, price_usd_per_mtok: Any = None) -> Facility:
    """Size a facility from its power at the meter: systems, devices, tokens, cost, margin.

    Parameters
    ----------
    system_id : str or System
        A catalog system (``"gb200-nvl72"``, ``"hgx-h100"``...,
        :func:`~tokenomics.data.systems.system`) with its published power; for another
        figure, ``dataclasses.replace(tk.system(id), power_w=...)`` [W].
    power_w : float or array_like
        Power at the meter [W], > 0 (100 MW is ``100e6``).
    tokens_per_s_per_device : float
        Output of one device at the operating point [token/s], in (0,
        :data:`MAX_TOKENS_PER_S_PER_DEVICE`]: e.g.
        ``tk.steady_state(dep, ...).output_tokens_per_s_per_device`` or a measurement.
    devices_per_replica : int
        Devices one replica (a deployment) takes, >= 1 (``dep.n_devices``).
    device_price : float, str, Ownership or None
        A device-hour's price, as :func:`~tokenomics.economics.cost.device_hour_usd` takes
        it: a number [USD/hour], a rental tier, or an :class:`Ownership` (its ``power_w``
        defaults to the system's power per device, hosts and switches included, and its
        ``pue`` to this facility's). None: the catalog's rental price.
    pue : float, optional
        Power usage effectiveness, >= 1; default the sourced industry average
        (:func:`~tokenomics.economics.ownership.default_assumptions`).
    utilisation : float
        Fraction of the time the fleet serves at ``tokens_per_s_per_device``, in (0, 1].
    price_usd_per_mtok : float, optional
        Selling price [USD/Mtok], > 0, for revenue and margin.

    Returns
    -------
    Facility
        Arrays shaped like ``power_w`` (module notes for the formulas).

    Raises
    ------
    NotPublishedError
        When the system's power is not published.
    TokenomicsError
        On a term out of its range.

    Examples
    --------
    >>> f = facility("gb300-nvl72", 100e6, 1000.0, device_price=3.0, pue=1.2)
    >>> int(f.systems), int(f.devices)          # floor(100 MW / 1.2 / 142 kW) = 586 racks
    (586, 42192)
    """
    s = system(system_id)
    p = V.positive(power_w, "power_w", "W")
    rate = V.single_amount(tokens_per_s_per_device, "tokens_per_s_per_device", "token/s")
    if not 0 < rate <= MAX_TOKENS_PER_S_PER_DEVICE:
        raise TokenomicsError(f"tokens_per_s_per_device must be > 0 and at most "
                              f"{MAX_TOKENS_PER_S_PER_DEVICE:g} token/s (a device's output), "
                              f"got {rate!r}")
    d_r = V.single_whole(devices_per_replica, "devices_per_replica")
    u = float(V.fraction(utilisation, "utilisation"))
    if u <= 0:
        raise TokenomicsError("utilisation must be in (0, 1]: a fleet that never serves "
                              "makes no tokens to cost")
    pue_v = default_assumptions()["pue"] if pue is None else V.single_amount(pue, "pue", "")
    if not (pue_v >= 1 and np.isfinite(pue_v)):
        raise TokenomicsError(f"pue must be >= 1 (facility power over IT power), got {pue_v!r}")
    sp = _system_power(s)
    price = None
    if price_usd_per_mtok is not None:
        price = V.single_amount(price_usd_per_mtok, "price_usd_per_mtok", "USD/Mtok")
        if not price > 0:
            raise TokenomicsError(f"price_usd_per_mtok must be > 0, got {price!r}")
    usd_dh, parts = _device_price(s, device_price, sp, pue_v)
    n_s = np.floor(p / (pue_v * sp) * (1 + 1e-12))   # a budget of exactly k systems is k
    n_d = n_s * s.devices
    n_r = np.floor(n_d / d_r)
    tok = u * n_r * d_r * rate
    usd_h = n_d * usd_dh
    draw = n_s * sp * pue_v
    def per_mtok(hourly: np.ndarray) -> np.ndarray:   # hourly / (3600 R) x 1e6; inf at R = 0
        return np.divide(hourly * (1e6 / 3600.0), tok, out=np.full(p.shape, np.inf),
                         where=tok > 0)

    usd_mtok = per_mtok(usd_h)
    rev = np.full(p.shape, np.nan) if price is None else tok * DAY_S / 1e6 * price
    # gross margin as tk.margin defines it, (price - cost) / price per Mtok
    margin = np.full(p.shape, np.nan) if price is None else 1.0 - usd_mtok / price
    tdp = s.device.tdp_w
    return Facility(system=s.id, power_w=p, pue=pue_v, system_power_w=sp,
                    overhead_w=float(sp - s.devices * tdp) if tdp else float("nan"),
                    systems=n_s, devices=n_d, replicas=n_r, stranded_devices=n_d - n_r * d_r,
                    draw_w=draw, tokens_per_s=tok, tokens_per_day=tok * DAY_S,
                    tokens_per_s_per_mw=tok / (p / 1e6), usd_per_device_hour=usd_dh,
                    usd_per_hour=usd_h, usd_per_mtok=usd_mtok, wh_per_mtok=per_mtok(draw),
                    revenue_usd_per_day=rev, margin=margin, devices_per_replica=d_r,
                    sla=float("nan"), spare_replicas=np.zeros(p.shape), cost_parts=parts)
