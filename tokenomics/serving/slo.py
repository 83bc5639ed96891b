"""Goodput under service-level objectives: what disaggregated and colocated pools share.

Notes
-----
*Goodput* is the request rate at which a target fraction of requests meets the service-level
objectives: time to first token (TTFT) and time per output token (TPOT). Raw throughput counts
every token; goodput counts only requests served within the SLOs (S50). Both pool designs,
:mod:`tokenomics.serving.disagg` and :mod:`tokenomics.serving.colocated`, report their service
in the two result types defined here:

* :class:`SLOAttainment`, the service at given rates [req/s]: the attainment
  :math:`a(\\lambda) = P(\\mathrm{TTFT} \\le T_\\mathrm{TTFT}) \\cdot
  [\\mathrm{TPOT} \\le T_\\mathrm{TPOT}]` and the goodput :math:`\\lambda\\, a(\\lambda)`
  (:func:`slo_attainment`);
* :class:`Goodput`, the largest rate at which :math:`a(\\lambda) \\ge f`, with ``f`` the SLO's
  fraction, and the constraint that stops a higher one.

Every request has the same shape, a :class:`~tokenomics.data.workload.Workload` of :math:`P`
prompt and :math:`O` output tokens; a sequence decodes at the mean context
:math:`\\lceil P + O/2 \\rceil` tokens (:func:`request_targets`). A decode instance's step
time on every batch that fits memory is tabulated once (:func:`decode_table`); by Little's law
an instance taking :math:`\\lambda_d` requests per second runs the mean batch
:math:`B = \\lambda_d\\, O\\, t(B)`, solved on that table.

Release 0.1 took the request as loose arguments (``input_tokens, output_tokens, ttft_slo_s,
tpot_slo_s, slo_fraction``); :func:`legacy_workload_slo` turns them into the value objects,
checked in 0.1's order and words, for :func:`~tokenomics.data.workload.accepts_legacy`.

References
----------
.. [1] Y. Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
   Large Language Model Serving", OSDI 2024, arXiv:2401.09670 (goodput under SLOs).
.. [2] J. D. C. Little, "A Proof for the Queuing Formula: L = lambda W", Operations Research
   9(3), 1961.
.. [3] Seed digest S50 (disaggregation raises goodput, not raw throughput).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.core.units import Result
from tokenomics.data.deployment import Deployment
from tokenomics.data.workload import SLO, Workload
from tokenomics.physics.memory import max_batch
from tokenomics.physics.step import decode

#: Release 0.1's request parameters, in its order, shared by every goodput function.
LEGACY_REQUEST_PARAMS = ("input_tokens", "output_tokens", "ttft_slo_s", "tpot_slo_s")
#: Release 0.1's default share of requests that must meet the TTFT SLO.
LEGACY_DEFAULTS = {"slo_fraction": 0.9}


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------
def single_count(x: Any, name: str, minimum: int = 1, unit: str = "count") -> int:
    """One whole number ``x`` >= ``minimum``, as an int.

    Parameters
    ----------
    x : int or array_like
        The value to check, in ``unit`` (a pint Quantity is converted).
    name : str
        Its name in the error message.
    minimum : int
        The least value allowed (default 1).
    unit : str
        Its unit (default ``"count"``; ``"token"`` for lengths).

    Returns
    -------
    int
        ``x`` as a Python int.

    Raises
    ------
    TokenomicsError
        When ``x`` is not a whole number >= ``minimum``, or is an array.

    Examples
    --------
    >>> single_count(4, "n_prefill")
    4
    """
    arr = V.counts(x, name, minimum=minimum, unit=unit)
    if arr.ndim:
        raise TokenomicsError(f"{name} must be a single whole number, got an array")
    return int(arr)


def single_value(arr: np.ndarray, name: str) -> float:
    """A checked 0-d array as a float (its unit unchanged).

    Parameters
    ----------
    arr : numpy.ndarray
        A value already checked (e.g. by ``tokenomics.core.checks.positive``).
    name : str
        Its name in the error message.

    Returns
    -------
    float
        ``float(arr)``.

    Raises
    ------
    TokenomicsError
        When ``arr`` has a dimension (an array where one number was expected).

    Examples
    --------
    >>> single_value(np.asarray(0.5), "ttft_slo_s")
    0.5
    """
    if np.ndim(arr):
        raise TokenomicsError(f"{name} must be a single number, got an array")
    return float(arr)


def request_rates(rate_per_s: Any) -> np.ndarray:
    """Request rates [req/s], checked finite and >= 0.

    Parameters
    ----------
    rate_per_s : float or array_like
        Offered request rates [req/s] (a pint Quantity is converted to 1/s).

    Returns
    -------
    numpy.ndarray
        The rates as floats [req/s], the shape of the input.

    Raises
    ------
    TokenomicsError
        For a negative or non-finite rate.

    Examples
    --------
    >>> request_rates([0.0, 2.5]).tolist()
    [0.0, 2.5]
    """
    return V.non_negative(rate_per_s, "rate_per_s", "1/s")


def _slo_fraction(x: Any, name: str) -> float:
    """The share of requests that must meet the TTFT SLO, a float in (0, 1); raise otherwise."""
    return single_value(V.open_probability(x, name), name)


def _within_context(dep: Deployment, workload: Workload) -> None:
    """Raise when prompt plus output exceed the model's context (unless allowed)."""
    V.context_within(dep.model, np.asarray(float(workload.input_tokens + workload.output_tokens)),
                     dep.allow_beyond_max_context, "input_tokens + output_tokens")


# --------------------------------------------------------------------------------------------
# Request targets
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RequestTargets:
    """A checked workload and SLO as plain numbers.

    Attributes
    ----------
    input_tokens, output_tokens : int
        Prompt length :math:`P` and output length :math:`O` of every request [token].
    context_tokens : int
        The mean context a sequence decodes at, :math:`\\lceil P + O/2 \\rceil` [token].
    ttft_s, tpot_s : float
        The TTFT and TPOT targets [s].
    fraction : float
        The share of requests that must meet the TTFT target, in (0, 1).
    """

    input_tokens: int
    output_tokens: int
    context_tokens: int
    ttft_s: float
    tpot_s: float
    fraction: float


def request_targets(dep: Deployment, workload: Workload, slo: SLO) -> RequestTargets:
    """Check a workload and an SLO against a deployment; their numbers as plain values.

    Parameters
    ----------
    dep : Deployment
        The deployment whose model's context bounds prompt plus output.
    workload : Workload
        Prompt and output length of every request [token].
    slo : SLO
        TTFT and TPOT targets [s] and the share of requests that must meet the TTFT one.

    Returns
    -------
    RequestTargets
        :math:`P`, :math:`O` [token], the mean decode context :math:`\\lceil P + O/2 \\rceil`
        [token], the targets [s] and the fraction.

    Raises
    ------
    TokenomicsError
        When ``workload`` or ``slo`` is not the value object, :math:`P + O` exceeds the
        model's maximum context (unless the deployment allows it), or the fraction is 1
        (under Poisson arrivals no finite TTFT bound holds for every request).

    Notes
    -----
    The mean context is that of a sequence halfway through its output: the KV read per
    decode step grows linearly from :math:`P` to :math:`P + O`, so its mean is at
    :math:`P + O/2`.

    References
    ----------
    .. [1] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> request_targets(d, Workload(2048, 255), SLO(1.0, 0.05)).context_tokens   # 2175.5 up
    2176
    """
    if not isinstance(workload, Workload):
        raise TokenomicsError(
            f"workload must be a Workload(input_tokens, output_tokens), got {workload!r}")
    if not isinstance(slo, SLO):
        raise TokenomicsError(f"slo must be an SLO(ttft_s, tpot_s, fraction), got {slo!r}")
    _within_context(dep, workload)
    frac = _slo_fraction(slo.fraction, "slo.fraction")
    P, out = workload.input_tokens, workload.output_tokens
    return RequestTargets(P, out, int(math.ceil(P + out / 2)), float(slo.ttft_s),
                          float(slo.tpot_s), frac)


def legacy_workload_slo(a: dict[str, Any], dep: Deployment) -> tuple[Workload, SLO]:
    """Take release 0.1's request arguments out of ``a`` as a Workload and an SLO.

    Parameters
    ----------
    a : dict
        0.1's arguments bound by name (``input_tokens``, ``output_tokens`` [token],
        ``ttft_slo_s``, ``tpot_slo_s`` [s], ``slo_fraction``); these five keys are removed.
    dep : Deployment
        The deployment whose model's context bounds prompt plus output.

    Returns
    -------
    (Workload, SLO)
        The same request as value objects.

    Raises
    ------
    TokenomicsError
        As 0.1 raised, in its order: a length not a whole number >= 1, beyond the context, a
        target not > 0, a fraction outside (0, 1).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> a = dict(input_tokens=2048, output_tokens=256, ttft_slo_s=1.0, tpot_slo_s=0.05,
    ...          slo_fraction=0.9)
    >>> legacy_workload_slo(a, d)[1].tpot_s, a
    (0.05, {})
    """
    w = Workload(single_count(a.pop("input_tokens"), "input_tokens", unit="token"),
                 single_count(a.pop("output_tokens"), "output_tokens", unit="token"))
    _within_context(dep, w)
    ttft = single_value(V.positive(a.pop("ttft_slo_s"), "ttft_slo_s", "s"), "ttft_slo_s")
    tpot = single_value(V.positive(a.pop("tpot_slo_s"), "tpot_slo_s", "s"), "tpot_slo_s")
    return w, SLO(ttft, tpot, _slo_fraction(a.pop("slo_fraction"), "slo_fraction"))


# --------------------------------------------------------------------------------------------
# Decode pool
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DecodeTable:
    """Decode step time of one instance on integer batches 0..max_batch, and its capacity.

    Attributes
    ----------
    step_time_s : numpy.ndarray
        :math:`t(B)` [s] at :math:`B = 0, 1, \\ldots`, ``max_batch`` (:math:`t(0) := t(1)`).
    max_batch : int
        The largest batch that fits memory [sequences].
    """

    step_time_s: np.ndarray
    max_batch: int

    @property
    def tokens_per_s(self) -> np.ndarray:
        """Output tokens the instance emits per second at each integer batch, B / t(B) [1/s]."""
        return np.arange(self.step_time_s.size) / self.step_time_s

    def step_time_at(self, B: np.ndarray) -> np.ndarray:
        """Step time [s] at a real batch B in [0, max_batch], linear between integers."""
        return np.interp(B, np.arange(self.step_time_s.size), self.step_time_s)

    def batch_at(self, y: np.ndarray) -> np.ndarray:
        """Least B with B = y t(B) (y = lambda_d O [1/s]); inf where y exceeds the capacity.

        B / t(B) never falls as B grows (each operator's time per sequence falls or stays),
        so a binary search finds the segment holding the root, solved exactly there.
        """
        t = self.step_time_s
        r = np.maximum.accumulate(self.tokens_per_s)
        y = np.asarray(y, float)
        i = np.clip(np.searchsorted(r, y, side="left"), 1, r.size - 1)
        d = t[i] - t[i - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            B = y * (t[i - 1] - (i - 1) * d) / (1.0 - y * d)
        B = np.clip(np.nan_to_num(B, nan=float(self.max_batch), posinf=float(self.max_batch)),
                    i - 1, i)
        return np.where(y > r[-1] * (1 + 1e-12), np.inf, np.where(y <= 0, 0.0, B))


def decode_table(dep: Deployment, ctx: int) -> DecodeTable:
    """The decode step times of ``dep`` at context ``ctx`` on every batch that fits memory.

    Parameters
    ----------
    dep : Deployment
        One decode instance.
    ctx : int
        Context of every sequence [token] (the mean decode context, :math:`P + O/2`).

    Returns
    -------
    DecodeTable
        ``step_time_s[B]`` = ``decode(dep, B, ctx).step_time_s`` [s] for B = 1..max_batch
        (``step_time_s[0]`` repeats B = 1), ``max_batch`` the leading batches that fit
        memory.

    Raises
    ------
    DoesNotFitError
        When not one sequence of ``ctx`` tokens fits beside the weights.

    Notes
    -----
    With :math:`t(B)` tabulated, Little's law :math:`B = \\lambda_d O\\, t(B)` is solved per
    segment by :meth:`DecodeTable.batch_at`: on :math:`[i-1, i]`,
    :math:`t(B) = t_{i-1} + (B - i + 1)\\, d` with :math:`d = t_i - t_{i-1}`, so
    :math:`B = y (t_{i-1} - (i-1) d) / (1 - y d)`, :math:`y = \\lambda_d O`.

    References
    ----------
    .. [1] J. D. C. Little, Operations Research 9(3), 1961.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> decode_table(d, 2176).max_batch          # sequences of 2,048 + 128 tokens that fit
    233
    """
    bmax = int(max_batch(dep, ctx))
    if bmax < 1:
        raise DoesNotFitError(
            f"memory binds: not one sequence of {ctx} tokens (input + output/2) fits beside "
            f"the weights of {dep.model.id} on {dep.n_devices} x {dep.hardware.id} "
            f"(tp={dep.tp}, pp={dep.pp}); add devices or use smaller weight/KV formats")
    B = np.arange(1, bmax + 1)
    r = decode(dep, B, ctx, on_oom="mark")
    fits = np.atleast_1d(np.asarray(r.fits, bool))
    n = int(fits.size if fits.all() else np.argmin(fits))    # leading batches that fit
    t = np.atleast_1d(np.asarray(r.step_time_s, float))[:max(n, 1)]
    return DecodeTable(np.concatenate(([t[0]], t)), int(t.size))


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SLOAttainment(Result):
    """Service at given request rates. Rates [req/s], times [s].

    Attributes
    ----------
    rate_per_s : array
        Offered request rate of the whole system [req/s].
    ttft_attainment : array
        Fraction of requests whose TTFT meets the SLO, in [0, 1] (0 when the prefill queue
        is unstable).
    tpot_met : array of bool
        Whether the TPOT (a mean over the steps, the same for every request in this model)
        meets its SLO; False when the decode batch the rate needs does not fit.
    attainment : array
        Fraction of requests meeting both: ``ttft_attainment * tpot_met``.
    goodput_per_s : array
        ``rate_per_s * attainment`` [req/s]: never negative, never NaN.
    goodput_per_s_per_device : array
        Goodput over all devices of the system [req/s/device].
    output_tokens_per_s_per_device : array
        ``goodput_per_s_per_device * output_tokens`` [token/s/device].
    ttft_mean_s, tpot_s : array
        Mean TTFT and the TPOT [s]; ``inf`` where the queue is unstable or the decode batch
        does not fit.
    decode_batch : array
        Mean sequences decoding on one instance (Little's law); ``inf`` when over capacity.
    prefill_utilisation : array
        Utilisation of one prefill server, :math:`\\rho` (may exceed 1: then unstable).
    meets_slo : array of bool
        ``attainment >= slo_fraction``.
    n_devices : int
        Devices of the whole system.
    """

    rate_per_s: Any
    ttft_attainment: Any
    tpot_met: Any
    attainment: Any
    goodput_per_s: Any
    goodput_per_s_per_device: Any
    output_tokens_per_s_per_device: Any
    ttft_mean_s: Any
    tpot_s: Any
    decode_batch: Any
    prefill_utilisation: Any
    meets_slo: Any
    n_devices: int


@dataclass(frozen=True, repr=False)
class Goodput(Result):
    """The largest request rate at which the SLOs are met, and the service there.

    Attributes
    ----------
    layout : str
        ``"disaggregated"`` or ``"colocated"``.
    n_prefill, n_decode : int
        Instances serving prefill and decode (colocated: both the instance count, every
        instance serving both phases).
    n_devices : int
        Devices of the whole system.
    rate_per_s : float
        Largest request rate at which at least ``slo_fraction`` of requests meet the TTFT
        SLO and the TPOT SLO is met [req/s]; > 0.
    goodput_per_s_per_device : float
        ``rate_per_s / n_devices`` [req/s/device].
    output_tokens_per_s_per_device : float
        ``goodput_per_s_per_device * output_tokens`` [token/s/device].
    binding : str
        The constraint that stops a higher rate: ``"ttft"`` (prefill queueing),
        ``"tpot"`` (decode step), ``"memory"`` (the decode batch fills memory) or
        ``"link"`` (the KV transfers saturate the prefill instances' links).
    ttft_mean_s, ttft_quantile_s : float
        Mean TTFT and the ``slo_fraction`` quantile at that rate [s] (quantile <= SLO).
    tpot_s : float
        TPOT at that rate [s] (<= SLO).
    decode_batch : float
        Mean sequences decoding per instance.
    prefill_utilisation : float
        Utilisation of one prefill server.
    rate_limits_per_s : dict
        The largest rate each constraint alone allows [req/s] (``inf`` when it never binds).
    """

    layout: str
    n_prefill: int
    n_decode: int
    n_devices: int
    rate_per_s: float
    goodput_per_s_per_device: float
    output_tokens_per_s_per_device: float
    binding: str
    ttft_mean_s: float
    ttft_quantile_s: float
    tpot_s: float
    decode_batch: float
    prefill_utilisation: float
    rate_limits_per_s: dict[str, float]


def slo_attainment(rate: np.ndarray, ttft_att: np.ndarray, tpot_ok: np.ndarray,
                   service: dict[str, np.ndarray], n_devices: int,
                   targets: RequestTargets) -> SLOAttainment:
    """Attainment and goodput at each rate from the TTFT attainment and the TPOT verdict.

    Parameters
    ----------
    rate : numpy.ndarray
        Offered request rates of the whole system [req/s].
    ttft_att : numpy.ndarray
        Share of requests whose TTFT meets its target at each rate, in [0, 1].
    tpot_ok : numpy.ndarray of bool
        Whether the TPOT meets its target at each rate.
    service : dict
        The per-rate ``ttft_mean_s`` [s], ``tpot_s`` [s], ``decode_batch`` [sequences] and
        ``prefill_utilisation``, copied into the result.
    n_devices : int
        Devices of the whole system.
    targets : RequestTargets
        The request (its output length [token] and SLO fraction are used).

    Returns
    -------
    SLOAttainment
        ``attainment = ttft_att * tpot_ok``, ``goodput_per_s = rate * attainment`` [req/s],
        per device [req/s/device] and in output tokens [token/s/device];
        ``meets_slo = attainment >= fraction`` (to a relative 1e-9). Scalars for 0-d inputs.

    Notes
    -----
    :math:`a(\\lambda) = P(\\mathrm{TTFT} \\le T_\\mathrm{TTFT})\\,
    [\\mathrm{TPOT} \\le T_\\mathrm{TPOT}]`, goodput :math:`\\lambda\\, a(\\lambda)`.

    References
    ----------
    .. [1] Y. Zhong et al., DistServe, OSDI 2024, arXiv:2401.09670 (SLO attainment).

    Examples
    --------
    >>> t = RequestTargets(2048, 256, 2176, 1.0, 0.05, 0.9)
    >>> s = dict(ttft_mean_s=np.asarray(0.1), tpot_s=np.asarray(0.02),
    ...          decode_batch=np.asarray(8.0), prefill_utilisation=np.asarray(0.3))
    >>> a = slo_attainment(np.asarray(10.0), np.asarray(0.95), np.asarray(True), s, 2, t)
    >>> a.goodput_per_s, a.output_tokens_per_s_per_device, a.meets_slo   # 10 x 0.95
    (9.5, 1216.0, True)
    """
    att = ttft_att * tpot_ok
    good = rate * att
    S = V.scalar_or_array

    def b(x: np.ndarray) -> Any:
        return bool(x) if np.ndim(x) == 0 else x

    return SLOAttainment(
        rate_per_s=S(rate), ttft_attainment=S(ttft_att), tpot_met=b(tpot_ok),
        attainment=S(att), goodput_per_s=S(good), goodput_per_s_per_device=S(good / n_devices),
        output_tokens_per_s_per_device=S(good * targets.output_tokens / n_devices),
        **{k: S(v) for k, v in service.items()},
        meets_slo=b(att >= targets.fraction * (1 - 1e-9)), n_devices=n_devices)
