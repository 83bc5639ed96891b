"""Availability: the spare replicas a fleet keeps so that it serves its demand at an SLA.

A replica of :math:`d` devices is down while any part it needs (a GPU, its HBM, the host, a
NIC, a cable, the software on it) has failed and is being restored. With device-level
interruptions arriving at rate :math:`\\lambda` per device-hour and a mean time to restore
:math:`R` hours, the replica fails at :math:`\\Lambda = d\\lambda` and is up a fraction

.. math:: a = \\frac{1}{1 + \\Lambda R} = \\frac{\\mathrm{MTBF}}{\\mathrm{MTBF} + \\mathrm{MTTR}}

of the time (an alternating renewal process: the long-run availability depends on the
up and down times only through their means). Replicas fail independently, so the number
down at any moment is binomial: of :math:`n` replicas, :math:`K \\sim \\mathrm{Bin}(n, 1-a)`.

* **Spares for a demand** (:func:`spare_replicas`): the fewest :math:`s` such that
  :math:`N` serving replicas are up with probability at least the SLA :math:`q`,
  :math:`P(\\mathrm{Bin}(N+s, 1-a) \\le s) \\ge q`. Adding a replica never lowers that
  probability, so :math:`s` is found by bisection; the fleet pays for :math:`N + s`.
* **Capacity at an SLA of a fleet** (:meth:`tokenomics.economics.factory.Facility.with_spares`):
  of :math:`n` replicas, the number that are up with probability :math:`q` is
  :math:`n - k_q`, with :math:`k_q` the :math:`q`-quantile of :math:`\\mathrm{Bin}(n, 1-a)`.

The SLA here is the fraction of the time the whole demand is served (a capacity
availability); a provider's published monthly uptime (99.9%, 99.95%) is one such target.

Notes
-----
The default interruption rate is Meta's Llama 3 pre-training record: 419 unexpected
interruptions in a 54-day snapshot on 16,384 H100 GPUs, :math:`\\lambda = 419 / (16384 \\times
54 \\times 24) = 1.97 \\times 10^{-5}` per GPU-hour (all causes that stopped the job: GPUs and
their HBM, hosts, network, software; 78% confirmed or suspected hardware). A synchronous
training job stops on any one failure, as a tensor-parallel replica does, so the rate carries
over per device; an inference replica restarted on a spare host is the restore time :math:`R`,
which the caller states (no published mean time to restore a GPU server was found; the
default :data:`REPAIR_HOURS` is an assumption, labelled as such).

References
----------
.. [1] Llama Team, AI @ Meta, "The Llama 3 Herd of Models", arXiv:2407.21783, 2024,
   section 3.3.4 and Table 5 (466 job interruptions in 54 days, 47 planned and 419
   unexpected, on "up to 16K" H100 GPUs: 16,384 as press reports of the paper give it; faulty
   GPUs 148, HBM3 72). The table's printed shares (30.1% for 148) do not divide by 419; the
   rate here uses the counts.
.. [2] R. Billinton, R. N. Allan, "Reliability Evaluation of Engineering Systems", 2nd ed.,
   Plenum, 1992, ch. 9 (availability of a repairable component; k-out-of-n systems).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result

#: Unexpected interruptions per GPU-hour in Meta's Llama 3 pre-training (module notes):
#: 419 in 54 days on 16,384 H100 GPUs.
LLAMA3_FAILURES_PER_GPU_HOUR = 419 / (16_384 * 54 * 24)
#: Mean time to restore a failed replica [hour]: an assumption (module notes), the time to
#: move a replica onto a spare host and reload its weights, not a published figure.
REPAIR_HOURS = 4.0
#: Largest fleet the spare search takes [replicas] (a search beyond it would be a typo).
MAX_REPLICAS = 1e9


def _rates(devices_per_replica: Any, failures_per_device_hour: Any, repair_hours: Any
           ) -> tuple[np.ndarray, float, float]:
    d = V.counts(devices_per_replica, "devices_per_replica")
    lam = V.single_amount(failures_per_device_hour, "failures_per_device_hour", "1/hour")
    if not (0 <= lam < 1):
        raise TokenomicsError(f"failures_per_device_hour must be in [0, 1) (interruptions per "
                              f"device-hour; Llama 3's was {LLAMA3_FAILURES_PER_GPU_HOUR:.3g}), "
                              f"got {lam!r}")
    r = V.single_amount(repair_hours, "repair_hours", "hour")
    if not (0 <= r < 1e6):
        raise TokenomicsError(f"repair_hours must be in [0, 1e6) hours (the mean time to "
                              f"restore a replica), got {r!r}")
    return d, lam, r


def replica_availability(devices_per_replica: Any,
                         failures_per_device_hour: Any = LLAMA3_FAILURES_PER_GPU_HOUR,
                         repair_hours: Any = REPAIR_HOURS) -> Any:
    """Long-run fraction of the time a replica of ``d`` devices is up [1].

    :math:`a = 1 / (1 + d \\lambda R)` (module notes).

    Parameters
    ----------
    devices_per_replica : int or array_like
        Devices whose failure takes the replica down, >= 1.
    failures_per_device_hour : float
        Interruptions per device-hour, in [0, 1); default Llama 3's
        :data:`LLAMA3_FAILURES_PER_GPU_HOUR`.
    repair_hours : float
        Mean time to restore a replica [hour], >= 0; default :data:`REPAIR_HOURS`.

    Returns
    -------
    float or ndarray
        Availability in (0, 1].

    Examples
    --------
    >>> round(float(replica_availability(72, repair_hours=24.0)), 5)   # 1/(1 + 72 x 1.97e-5 x 24)
    0.96703
    """
    d, lam, r = _rates(devices_per_replica, failures_per_device_hour, repair_hours)
    a = 1.0 / (1.0 + d * lam * r)
    return float(a) if a.ndim == 0 else a


def down_quantile(replicas: Any, sla: Any, unavailability: Any) -> np.ndarray:
    """The SLA-quantile of the replicas down at once: the least :math:`k` with
    :math:`P(\\mathrm{Bin}(n, u) \\le k) \\ge q` [count].

    Parameters
    ----------
    replicas : array_like
        Fleet sizes :math:`n`, whole, >= 0.
    sla : float
        :math:`q`, in (0, 1).
    unavailability : float or array_like
        Each replica's down fraction :math:`u = 1 - a`, in [0, 1).

    Returns
    -------
    ndarray
        :math:`k_q`, in [0, n].
    """
    from scipy.stats import binom

    n = np.asarray(replicas, float)
    u = np.asarray(unavailability, float)
    k = binom.ppf(sla, n, u)
    # at u = 0 (or n = 0) nothing is ever down; ppf's edge values there are its conventions
    return np.where((u <= 0) | (n <= 0), 0.0, np.nan_to_num(k, nan=0.0))


@dataclass(frozen=True, repr=False)
class Spares(Result):
    """Spare replicas that keep a demand served at an SLA (arrays of one shape).

    Attributes
    ----------
    replicas : ndarray
        Serving replicas the demand needs, :math:`N` [count].
    sla : float
        Target probability that all :math:`N` are up, :math:`q` [1].
    replica_availability : ndarray
        One replica's availability, :math:`a` [1].
    spares : ndarray
        Spare replicas, :math:`s` [count].
    total : ndarray
        Replicas the fleet pays for, :math:`N + s` [count].
    achieved : ndarray
        :math:`P(\\mathrm{Bin}(N+s, 1-a) \\le s)`, >= ``sla`` [1].
    cost_factor : ndarray
        :math:`(N + s) / N`: what spares add to each token's device cost [1].
    """

    replicas: np.ndarray
    sla: float
    replica_availability: np.ndarray
    spares: np.ndarray
    total: np.ndarray
    achieved: np.ndarray
    cost_factor: np.ndarray


def check_sla(sla: Any) -> float:
    """``sla`` as a float in (0, 1), or the library's error."""
    q = V.single_amount(sla, "sla", "")
    if not 0 < q < 1:
        raise TokenomicsError(f"sla must be in (0, 1) (e.g. 0.999 for 99.9% of the time), got "
                              f"{q!r}")
    return float(q)


def spare_replicas(replicas: Any, sla: Any, devices_per_replica: Any = 1, *,
                   failures_per_device_hour: Any = LLAMA3_FAILURES_PER_GPU_HOUR,
                   repair_hours: Any = REPAIR_HOURS) -> Spares:
    """The fewest spare replicas that keep ``replicas`` serving with probability ``sla``.

    :math:`s = \\min\\{s : P(\\mathrm{Bin}(N+s, 1-a) \\le s) \\ge q\\}` with
    :math:`a` from :func:`replica_availability` (module notes); found by bisection, exact.

    Parameters
    ----------
    replicas : int or array_like
        Serving replicas the demand needs, :math:`N`, whole, in [1, :data:`MAX_REPLICAS`].
    sla : float
        Probability that all of them are up, in (0, 1) (0.999 for 99.9%).
    devices_per_replica : int or array_like
        Devices a replica takes, >= 1 (broadcast with ``replicas``).
    failures_per_device_hour, repair_hours : float
        As :func:`replica_availability`.

    Returns
    -------
    Spares

    Examples
    --------
    >>> s = spare_replicas(100, 0.999, 8, repair_hours=24.0)   # HGX nodes, a day to restore
    >>> int(s.spares), round(float(s.achieved), 4)      # u = 1 - 1/(1 + 8 x 1.97e-5 x 24)
    (3, 0.9993)
    """
    q = check_sla(sla)
    n = V.counts(replicas, "replicas")
    if np.any(n > MAX_REPLICAS):
        raise TokenomicsError(f"replicas must be whole numbers in [1, {MAX_REPLICAS:g}] (the "
                              f"serving replicas the demand needs)")
    d, lam, r = _rates(devices_per_replica, failures_per_device_hour, repair_hours)
    V.together(replicas=n, devices_per_replica=d)
    n, d = (np.array(x, float) for x in np.broadcast_arrays(n, d))
    u = 1.0 - 1.0 / (1.0 + d * lam * r)
    from scipy.stats import binom

    def ok(s: np.ndarray) -> np.ndarray:
        return binom.cdf(s, n + s, u) >= q

    hi = np.maximum(1.0, np.ceil(n * u / np.maximum(1.0 - u, 1e-300)) + 1.0)
    while not np.all(ok(hi)):            # doubling: each pass at least doubles the bracket
        hi = np.where(ok(hi), hi, 2.0 * hi)
    lo = np.zeros_like(hi)               # invariant: ok(hi); lo is 0 or fails
    lo = np.where(ok(lo), -1.0, lo)      # s = 0 suffices: the answer is 0
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2.0)
        good = ok(mid) & (hi - lo > 1)
        hi = np.where(good, mid, hi)
        lo = np.where(~good & (hi - lo > 1), mid, lo)
    s = np.where(u <= 0, 0.0, hi)
    a = 1.0 - u
    return Spares(replicas=n, sla=q, replica_availability=a, spares=s, total=n + s,
                  achieved=np.where(u <= 0, 1.0, binom.cdf(s, n + s, u)),
                  cost_factor=(n + s) / n)
