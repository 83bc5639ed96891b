"""Speculative decoding: expected accepted tokens, cycle time, speed-up and the best draft length.

A drafter proposes :math:`k` tokens per sequence one after another; the target (the verifier)
then feeds all :math:`k + 1` positions (the last accepted token and the :math:`k` drafts) in
one forward pass, keeps the longest accepted prefix and emits one token of its own (the
correction at the first rejection, or a bonus token when all :math:`k` are accepted). A pass
therefore emits between 1 and :math:`k + 1` tokens.

Notes
-----
With an i.i.d. per-token acceptance rate :math:`\\alpha`, the expected tokens per pass are
(Leviathan et al. [1]_, eq. 1)

.. math::
   E[\\text{tokens}] = \\sum_{j=0}^{k} \\alpha^j = \\frac{1 - \\alpha^{k+1}}{1 - \\alpha},

which is :math:`k + 1` at :math:`\\alpha = 1` and 1 at :math:`\\alpha = 0`.

One speculation cycle at batch :math:`B` and context :math:`C` takes

.. math::
   t_\\mathrm{cycle} = k\\,t_\\mathrm{draft} + t_\\mathrm{verify}(B, C, k + 1),

with :math:`t_\\mathrm{verify}` the target's :func:`tokenomics.physics.step.decode` step
feeding :math:`k + 1` tokens per sequence. Tokens per second per user are
:math:`E / t_\\mathrm{cycle}`, per device :math:`B E / (t_\\mathrm{cycle}\\, n)`. The plain
(non-speculative) step :math:`t_1` gives :math:`1/t_1` and :math:`B/(t_1 n)`, so the speed-up
per user and the throughput ratio per device are the same number at a fixed batch,
:math:`E\\,t_1 / t_\\mathrm{cycle}`.

Assumptions (all documented where they enter):

* The drafter and the target **time-share the same devices**: the draft's :math:`k` steps add
  to the cycle (no overlap with verification), and a draft :class:`~tokenomics.data.deployment.Deployment`
  must be on the target's hardware; its weights and KV cache are added to the target's per
  device when checking memory.
* A draft model's :math:`k` steps are each costed at context :math:`C` (its cache grows from
  :math:`C` to :math:`C + k - 1`; a few tokens against thousands).
* The KV of rejected draft tokens is discarded; the KV of the accepted tokens is written by
  the verification pass (it is part of that pass's cost, nothing extra).
* Acceptance does not depend on the batch (every sequence accepts at the same rate); the
  tokens-per-second figures are expectations.
* The target's verification pass runs at the deployment's efficiency; a tree of drafts or
  sampling tricks that change the pass's cost are not modelled.

References
----------
.. [1] Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via Speculative
   Decoding", ICML 2023, arXiv:2211.17192.
.. [2] C. Chen, S. Borgeaud, G. Irving, J.-B. Lespiau, L. Sifre, J. Jumper, "Accelerating
   Large Language Model Decoding with Speculative Sampling", 2023, arXiv:2302.01318.
.. [3] Y. Li, F. Wei, C. Zhang, H. Zhang, "EAGLE: Speculative Sampling Requires Rethinking
   Feature Uncertainty", ICML 2024, arXiv:2401.15077 (a draft head given by its cost).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import as_magnitude, to_array
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.data.workload import accepts_legacy_forms
from tokenomics.physics.engine import OnOOM, check_on_oom
from tokenomics.physics.memory import MemoryFit, ensure_fits, memory_fit
from tokenomics.physics.step import decode

Objective = Literal["per_user", "per_device"]

#: Largest draft length :func:`best_speculation_k` searches.
K_MAX_LIMIT = 64

#: Tolerance on the sum of a table of acceptance-length probabilities.
PROBABILITY_SUM_TOLERANCE = 1e-6


# --------------------------------------------------------------------------------------------
# Expected tokens per verification pass
# --------------------------------------------------------------------------------------------
def _probability(x: Any, name: str, what: str) -> np.ndarray:
    """``x`` as a float array of values in [0, 1]; raise naming the first bad value."""
    arr = to_array(as_magnitude(x, "dimensionless", name), name)
    if arr.size == 0:
        raise TokenomicsError(f"{name} is empty; give at least one value")
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if bad.any():
        raise TokenomicsError(
            f"{name} must be in [0, 1] ({what}), got {V.fmt(arr[bad].flat[0])}")
    return arr


def _draft_length(k: Any) -> np.ndarray:
    return V.counts(k, "k (drafted tokens per verification pass)", minimum=0, unit="token")


def _geometric_sum(alpha: np.ndarray, k: np.ndarray) -> np.ndarray:
    """sum_{j=0..k} alpha**j, accurate at alpha near 1 and exact at 0 and 1."""
    n = k + 1
    one_minus = 1.0 - alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        # 1 - alpha**n = -expm1(n log alpha), with log alpha = log1p(-(1 - alpha)): no
        # cancellation as alpha -> 1. alpha = 0 gives log 0 = -inf, expm1(-inf) = -1: 1 token.
        num = -np.expm1(n * np.log1p(-one_minus))
        e = np.where(one_minus > 0, num / np.where(one_minus > 0, one_minus, 1.0), n)
    return np.asarray(e, float)


def expected_accepted_tokens(alpha: Any, k: Any) -> Any:
    """Expected tokens emitted per verification pass of ``k`` drafted tokens [token].

    Parameters
    ----------
    alpha : float or array_like
        Per-token acceptance rate, i.i.d. across positions, in [0, 1].
    k : int or array_like
        Drafted tokens per pass [token], whole, >= 0 (0: no speculation, one token per
        pass). Broadcast with ``alpha``.

    Returns
    -------
    float or numpy.ndarray
        Expected tokens per pass [token], in [1, k + 1]: the accepted drafts plus the target's
        own token. Scalars in, float out.

    Notes
    -----
    The number of accepted drafts is a geometric variable capped at :math:`k`, so

    .. math::
       E = \\sum_{j=0}^{k} \\alpha^j = \\frac{1 - \\alpha^{k+1}}{1 - \\alpha},
       \\qquad E(\\alpha = 1) = k + 1, \\quad E(\\alpha = 0) = 1.

    The closed form is evaluated as :math:`-\\mathrm{expm1}((k+1)\\log\\alpha)/(1-\\alpha)`
    (no cancellation as :math:`\\alpha \\to 1`); :math:`\\alpha = 1` is taken exactly as
    :math:`k + 1`, without dividing by zero.

    References
    ----------
    .. [1] Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via
       Speculative Decoding", ICML 2023, arXiv:2211.17192, eq. (1).
    .. [2] C. Chen et al., "Accelerating Large Language Model Decoding with Speculative
       Sampling", 2023, arXiv:2302.01318.

    Examples
    --------
    >>> round(expected_accepted_tokens(0.8, 4), 4)   # (1 - 0.8**5) / (1 - 0.8)
    3.3616
    >>> expected_accepted_tokens(1.0, 4), expected_accepted_tokens(0.0, 4)
    (5.0, 1.0)
    """
    a = _probability(alpha, "alpha", "a per-token acceptance probability")
    kk = _draft_length(k)
    return V.scalar_or_array(_geometric_sum(a, kk))


def _is_mapping(x: Any) -> bool:
    return hasattr(x, "items") and hasattr(x, "keys")


def _length_table(table: Any) -> np.ndarray:
    """A mapping {j: p_j} or a sequence p_0..p_k (last axis j) as a float array."""
    name = "length_probabilities"
    if _is_mapping(table):
        items = list(table.items())
        if not items:
            raise TokenomicsError(f"{name} is empty; give P(accept exactly j) for j = 0..k")
        keys = to_array([key for key, _ in items], f"{name} keys")
        bad = ~np.isfinite(keys) | (keys < 0) | (keys != np.floor(keys))
        if bad.any():
            raise TokenomicsError(
                f"{name} keys must be whole numbers of accepted drafts j >= 0, got "
                f"{V.fmt(keys[bad][0])}")
        if len(np.unique(keys)) != len(keys):
            raise TokenomicsError(f"{name} lists an accepted-draft count twice")
        vals = _probability([v for _, v in items], name,
                            "the probability of accepting exactly j drafts")
        p = np.zeros(int(keys.max()) + 1)
        p[keys.astype(int)] = vals
        return p
    p = _probability(table, name, "the probability of accepting exactly j drafts")
    if p.ndim == 0:
        raise TokenomicsError(
            f"{name} must be a sequence p_0..p_k (or a mapping j -> p_j), got one number "
            f"{V.fmt(p)}")
    return p


def expected_accepted_from_table(length_probabilities: Any = None,
                                 position_rates: Any = None) -> Any:
    """Expected tokens per verification pass from a measured acceptance table [token].

    Give exactly one of the two forms in which acceptance is usually measured.

    Parameters
    ----------
    length_probabilities : mapping or array_like, optional
        Probabilities of accepting **exactly** :math:`j` drafted tokens, :math:`j = 0..k`:
        a mapping ``{j: p_j}`` (missing ``j`` count as 0) or a sequence ``p_0, ..., p_k``
        (several tables: one per row, the last axis is :math:`j`). Each in [0, 1]; each
        table must sum to 1 within 1e-6 [dimensionless].
    position_rates : array_like, optional
        Per-position conditional acceptance rates :math:`a_1, ..., a_k`: the probability
        that the :math:`i`-th draft is accepted given that drafts :math:`1..i-1` were (as
        EAGLE and Medusa papers report them). Each in [0, 1]; several tables: one per row,
        the last axis is the position. Empty: :math:`k = 0`, one token per pass
        [dimensionless].

    Returns
    -------
    float or numpy.ndarray
        Expected tokens per pass [token] (one per table), the accepted drafts plus the
        target's own token. Usable as ``accepted_tokens`` of :func:`speculative_decode`.

    Notes
    -----
    .. math::
       E = 1 + \\sum_{j=0}^{k} j\\,p_j
         = 1 + \\sum_{i=1}^{k} \\prod_{m=1}^{i} a_m,

    the second form because draft :math:`i` is accepted only if drafts :math:`1..i` all
    are: :math:`P(\\text{accepted} \\ge i) = \\prod_{m \\le i} a_m`. With every
    :math:`a_m = \\alpha`, or :math:`p_j = \\alpha^j (1 - \\alpha)` for :math:`j < k` and
    :math:`p_k = \\alpha^k`, both equal :func:`expected_accepted_tokens`.

    References
    ----------
    .. [1] Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via
       Speculative Decoding", ICML 2023, arXiv:2211.17192.
    .. [2] Y. Li, F. Wei, C. Zhang, H. Zhang, "EAGLE: Speculative Sampling Requires
       Rethinking Feature Uncertainty", ICML 2024, arXiv:2401.15077 (per-position rates).

    Examples
    --------
    >>> expected_accepted_from_table(length_probabilities={0: 0.2, 1: 0.3, 2: 0.5})
    2.3
    >>> round(expected_accepted_from_table(position_rates=[0.9, 0.8, 0.7]), 3)
    3.124
    """
    if (length_probabilities is None) == (position_rates is None):
        raise TokenomicsError(
            "give exactly one of length_probabilities (P(accept exactly j drafts), j = 0..k) "
            "or position_rates (conditional acceptance of draft i given drafts 1..i-1), got "
            + ("both" if length_probabilities is not None else "neither"))
    if length_probabilities is not None:
        p = _length_table(length_probabilities)
        total = p.sum(axis=-1)
        off = np.abs(total - 1.0) > PROBABILITY_SUM_TOLERANCE
        if np.any(off):
            raise TokenomicsError(
                "length_probabilities must sum to 1 (within 1e-6) over j = 0..k, got a sum of "
                f"{float(np.ravel(total)[np.flatnonzero(np.ravel(off))[0]]):.8g}")
        j = np.arange(p.shape[-1], dtype=float)
        return V.scalar_or_array(1.0 + (p * j).sum(axis=-1))
    a = to_array(as_magnitude(position_rates, "dimensionless", "position_rates"),
                 "position_rates")
    if a.ndim == 0:
        raise TokenomicsError(
            f"position_rates must be a sequence a_1..a_k, got one number {V.fmt(a)}; for one "
            "rate at every position use expected_accepted_tokens(alpha, k)")
    if a.size:
        a = _probability(a, "position_rates",
                         "the probability draft i is accepted given drafts 1..i-1 were")
    return V.scalar_or_array(1.0 + np.cumprod(a, axis=-1).sum(axis=-1))


# --------------------------------------------------------------------------------------------
# Speculative decode step
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpeculativeResult:
    """One speculation cycle (draft ``k``, verify ``k + 1``), broadcast over the inputs.

    Attributes
    ----------
    k : array
        Drafted tokens per pass [token].
    accepted_tokens : array
        Expected tokens emitted per verification pass, in [1, k + 1] [token].
    draft_step_time_s : array
        Time of one draft step [s].
    draft_time_s : array
        ``k * draft_step_time_s``: drafting in one cycle [s].
    verify_time_s : array
        The target's pass feeding ``k + 1`` tokens per sequence [s].
    cycle_time_s : array
        ``draft_time_s + verify_time_s`` [s].
    time_per_output_token_s : array
        ``cycle_time_s / accepted_tokens``: mean time between a user's tokens [s/token].
    tokens_per_s_per_user : array
        ``accepted_tokens / cycle_time_s`` [token/s].
    tokens_per_s_per_device : array
        ``batch * accepted_tokens / cycle_time_s / n_devices`` (target's devices) [token/s].
    plain_step_time_s, plain_tokens_per_s_per_user, plain_tokens_per_s_per_device : array
        The non-speculative decode step at the same batch and context [s], [token/s].
    speedup_per_user : array
        ``tokens_per_s_per_user / plain_tokens_per_s_per_user`` [dimensionless].
    throughput_ratio_per_device : array
        ``tokens_per_s_per_device / plain_tokens_per_s_per_device`` [dimensionless]; equal to
        ``speedup_per_user`` at a fixed batch.
    verify_bound : array of str
        ``"compute"`` or ``"memory"``: what bounds the verification pass.
    fits : array of bool
        Whether the verification pass (and a draft model's weights and cache) fit in memory.
    batch, context_tokens : array
        The inputs, broadcast.
    """

    k: Any
    accepted_tokens: Any
    draft_step_time_s: Any
    draft_time_s: Any
    verify_time_s: Any
    cycle_time_s: Any
    time_per_output_token_s: Any
    tokens_per_s_per_user: Any
    tokens_per_s_per_device: Any
    plain_step_time_s: Any
    plain_tokens_per_s_per_user: Any
    plain_tokens_per_s_per_device: Any
    speedup_per_user: Any
    throughput_ratio_per_device: Any
    verify_bound: Any
    fits: Any
    batch: Any
    context_tokens: Any

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame, one row per point, unit-suffixed columns."""
        shape = np.shape(self.cycle_time_s)
        return pd.DataFrame({f.name: np.ravel(np.broadcast_to(getattr(self, f.name), shape))
                             for f in fields(self)})


@dataclass(frozen=True)
class Drafter:
    """Who proposes the drafts, and what a draft step costs: exactly one of three forms.

    Attributes
    ----------
    draft : Deployment, optional
        A draft model on the target's hardware (any catalog model); one draft step is
        ``decode(draft, batch, context_tokens).step_time_s`` [s], and its weights and KV add
        to the target's memory.
    draft_step_time_s : float or array_like, optional
        Time of one draft step for the whole batch [s], >= 0 (an MTP or EAGLE head given by
        its cost).
    draft_fraction : float or array_like, optional
        One draft step's time as a fraction of one plain target decode step at the same
        batch and context [dimensionless], >= 0 (0.01 for a draft ~1/100 the size).

    Raises
    ------
    TokenomicsError
        Unless exactly one is given.

    Examples
    --------
    >>> Drafter(draft_fraction=0.01).kind
    'draft_fraction'
    """

    draft: Deployment | None = None
    draft_step_time_s: Any = None
    draft_fraction: Any = None

    def __post_init__(self) -> None:
        given = [f.name for f in fields(self) if getattr(self, f.name) is not None]
        if len(given) != 1:
            raise TokenomicsError(
                "give exactly one drafter: draft (a Deployment of the draft model on the "
                "target's devices), draft_step_time_s (the time of one draft step [s], e.g. an "
                "MTP or EAGLE head) or draft_fraction (one draft step's cost as a fraction of a "
                "plain target decode step); got " + (", ".join(given) if given else "none"))
        if self.draft is not None and not isinstance(self.draft, Deployment):
            raise TokenomicsError(f"Drafter(draft=...) must be a Deployment of the draft model, "
                                  f"got {self.draft!r}")
        for name in ("draft_step_time_s", "draft_fraction"):
            v = getattr(self, name)
            if v is not None:
                V.non_negative(v, name, "s" if name.endswith("_s") else "dimensionless")

    @property
    def kind(self) -> str:
        """The form given: ``"draft"``, ``"draft_step_time_s"`` or ``"draft_fraction"``."""
        return next(f.name for f in fields(self) if getattr(self, f.name) is not None)

    @classmethod
    def of(cls, drafter: Drafter | Deployment | None) -> Drafter:
        """A Drafter as given, a draft Deployment as ``Drafter(draft=...)``; None raises."""
        if isinstance(drafter, Drafter):
            return drafter
        return cls(draft=drafter)


def _check_draft(target: Deployment, draft: Any) -> None:
    if not isinstance(draft, Deployment):
        raise TokenomicsError(
            f"draft must be a tokenomics Deployment, got {type(draft).__name__}; give a "
            "drafter's cost with draft_step_time_s or draft_fraction instead")
    if draft.hardware.id != target.hardware.id:
        raise TokenomicsError(
            f"draft runs on {draft.hardware.id} but the target on {target.hardware.id}; the "
            "model assumes the draft time-shares the target's devices. For a drafter "
            "elsewhere give its step time with draft_step_time_s")
    if draft.n_devices > target.n_devices:
        raise TokenomicsError(
            f"draft spans {draft.n_devices} devices, more than the target's "
            f"{target.n_devices}; the draft must run on the target's devices")


def _joint_fit(target: Deployment, draft: Deployment | None, B: Any, C: Any,
               k: Any) -> MemoryFit:
    """Per-device memory of the verification pass, plus a draft model's weights and KV."""
    tfit = memory_fit(target, B, C + k, tokens_per_step=B * (k + 1))
    if draft is None:
        return tfit
    # The draft's cache after proposing k tokens (decode's convention: C + k - 1 before the
    # last step); only where it drafts at all (k > 0). Workspace is reused in turn: the max.
    dfit = memory_fit(draft, B, np.maximum(C + k - 1, C))
    used = k > 0
    weights = tfit.weights_bytes + np.where(used, dfit.weights_bytes, 0.0)
    kv = tfit.kv_bytes + np.where(used, dfit.kv_bytes, 0.0)
    ws = np.maximum(tfit.workspace_bytes, np.where(used, dfit.workspace_bytes, 0.0))
    total = weights + kv + ws + tfit.runtime_reserve_bytes
    free = tfit.usable_bytes - total
    S = V.scalar_or_array
    return replace(tfit, weights_bytes=S(weights), kv_bytes=S(kv), workspace_bytes=S(ws),
                   total_bytes=S(total), free_bytes=S(free),
                   fits=S(free >= 0) if np.ndim(free) else bool(free >= 0))


def _cycle(target: Deployment, B: np.ndarray, C: np.ndarray, k: np.ndarray, E: np.ndarray,
           drafter: Drafter) -> dict[str, Any]:
    """Arrays of one speculation cycle (no memory check, no scalar conversion)."""
    verify = decode(target, B, C, on_oom="mark", new_tokens=k + 1)
    plain = decode(target, B, C, on_oom="mark")
    t1 = np.asarray(plain.step_time_s, float)
    if drafter.draft is not None:
        td = np.asarray(decode(drafter.draft, B, C, on_oom="mark").step_time_s, float)
    elif drafter.kind == "draft_step_time_s":
        td = V.non_negative(drafter.draft_step_time_s, "draft_step_time_s", "s")
    else:
        td = V.non_negative(drafter.draft_fraction, "draft_fraction", "dimensionless") * t1
    tv = np.asarray(verify.step_time_s, float)
    shape = np.broadcast_shapes(np.shape(tv), np.shape(td), np.shape(E))
    tv, td, E, t1 = (np.broadcast_to(x, shape) for x in (tv, td, E, t1))
    draft_time = k * td
    cycle = draft_time + tv
    n = target.n_devices
    per_user = E / cycle
    per_dev = B * E / cycle / n
    plain_user = 1.0 / t1
    plain_dev = B / t1 / n
    return dict(k=np.broadcast_to(k, shape), accepted_tokens=E, draft_step_time_s=td,
                draft_time_s=draft_time, verify_time_s=tv, cycle_time_s=cycle,
                time_per_output_token_s=cycle / E, tokens_per_s_per_user=per_user,
                tokens_per_s_per_device=per_dev, plain_step_time_s=t1,
                plain_tokens_per_s_per_user=np.broadcast_to(plain_user, shape),
                plain_tokens_per_s_per_device=np.broadcast_to(plain_dev, shape),
                speedup_per_user=per_user / plain_user,
                throughput_ratio_per_device=per_dev / plain_dev,
                verify_bound=np.broadcast_to(verify.bound, shape),
                batch=np.broadcast_to(B, shape), context_tokens=np.broadcast_to(C, shape))


def _one_acceptance(alpha: Any, accepted_tokens: Any) -> None:
    """Raise unless exactly one of ``alpha`` and ``accepted_tokens`` is given."""
    if (alpha is None) == (accepted_tokens is None):
        raise TokenomicsError(
            "give exactly one of alpha (per-token acceptance rate in [0, 1]) or "
            "accepted_tokens (expected tokens per verification pass, in [1, k + 1]), got "
            + ("both" if alpha is not None else "neither"))


def _tokens_per_pass(alpha: Any, accepted_tokens: Any, k: np.ndarray) -> np.ndarray:
    """Expected tokens per pass from ``alpha`` or, failing that, ``accepted_tokens``."""
    if alpha is not None:
        return _geometric_sum(_probability(alpha, "alpha", "a per-token acceptance probability"),
                              k)
    E = to_array(as_magnitude(accepted_tokens, "token", "accepted_tokens"), "accepted_tokens")
    bad = ~np.isfinite(E) | (E < 1) | (E > k + 1)
    if np.any(bad):
        Eb, kb = np.broadcast_arrays(E, k)
        i = np.flatnonzero(np.broadcast_to(bad, Eb.shape))[0]
        raise TokenomicsError(
            f"accepted_tokens must be in [1, k + 1] (a pass emits the target's own token "
            f"plus up to k accepted drafts), got {V.fmt(Eb.flat[i])} with "
            f"k={V.fmt(kb.flat[i])}")
    return E


def _drafter_01(a: dict[str, Any]) -> dict[str, Any]:
    """The new arguments of a 0.1 call: ``draft``, ``draft_step_time_s`` and
    ``draft_fraction`` as one :class:`Drafter` (None when none is given: the call raises)."""
    loose = {n: a.pop(n) for n in _DRAFTER_01}
    given = {n: v for n, v in loose.items() if v is not None}
    return dict(a, drafter=Drafter(**given) if given else None)


_DRAFTER_01 = ("draft", "draft_step_time_s", "draft_fraction")
_SPECULATIVE_DECODE_01 = ("target", "batch", "context_tokens", "k", "alpha", "accepted_tokens",
                          *_DRAFTER_01, "on_oom")


@accepts_legacy_forms(_SPECULATIVE_DECODE_01,
                      dict(alpha=None, accepted_tokens=None, draft=None,
                           draft_step_time_s=None, draft_fraction=None, on_oom="raise"),
                      _drafter_01, "drafter")
@inputs(target="deployment")
def speculative_decode(target: Deployment, batch: Any, context_tokens: Any, k: Any,
                       alpha: Any = None, accepted_tokens: Any = None,
                       drafter: Drafter | Deployment | None = None, *,
                       on_oom: OnOOM = "raise") -> SpeculativeResult:
    """Decode with speculation: draft ``k`` tokens, verify them in one target pass.

    The drafter is a :class:`Drafter`; release 0.1's ``draft=``, ``draft_step_time_s=`` and
    ``draft_fraction=`` arguments (by name or in their 0.1 positions, ``on_oom`` after them)
    still work and mean the same.

    Parameters
    ----------
    target : Deployment
        The target model's deployment (the verifier).
    batch : int or array_like
        Concurrent sequences on the replica, >= 1.
    context_tokens : int or array_like
        Tokens in each sequence's KV cache [token], >= 1; broadcast with ``batch``.
    k : int or array_like
        Drafted tokens per verification pass [token], whole, >= 0 (0: plain decode).
    alpha : float or array_like, optional
        Per-token acceptance rate in [0, 1]; expected tokens per pass from
        :func:`expected_accepted_tokens`. Give this or ``accepted_tokens``.
    accepted_tokens : float or array_like, optional
        Expected tokens emitted per pass [token], in [1, k + 1] (e.g. from
        :func:`expected_accepted_from_table` or a measurement).
    drafter : Drafter or Deployment
        Who drafts and at what cost (:class:`Drafter`: a draft model's Deployment on the
        target's hardware, a draft step's time [s], or its fraction of a plain target step);
        a Deployment is ``Drafter(draft=...)``.
    on_oom : {"raise", "mark"}
        A verification pass (with a draft model's weights and cache) that does not fit raises
        :class:`~tokenomics.core.errors.DoesNotFitError` (default) or is flagged ``fits == False``.

    Returns
    -------
    SpeculativeResult
        ``cycle_time_s`` [s], ``accepted_tokens`` [token], ``tokens_per_s_per_user`` and
        ``tokens_per_s_per_device`` [token/s], the plain decode figures, ``speedup_per_user``
        and ``throughput_ratio_per_device`` [dimensionless]... Scalars in, floats out.

    Notes
    -----
    .. math::
       t_\\mathrm{cycle} = k\\,t_\\mathrm{draft} + t_\\mathrm{verify}(B, C, k + 1), \\quad
       \\text{per user} = \\frac{E}{t_\\mathrm{cycle}}, \\quad
       \\text{per device} = \\frac{B\\,E}{t_\\mathrm{cycle}\\,n},

    with :math:`E` the expected tokens per pass and :math:`n` the target's devices. Speed-up
    and throughput ratio are both :math:`E\\,t_1 / t_\\mathrm{cycle}` against the plain step
    :math:`t_1`. Assumptions: the drafter time-shares the target's devices (its steps add to
    the cycle, a draft model's weights and KV add to the target's memory), a draft model's
    :math:`k` steps are each costed at context :math:`C`, rejected tokens' KV is discarded
    and the accepted tokens' KV is written by the verification pass. Speculation pays while
    the verification pass stays memory-bound (it costs about one plain step); near the
    compute roof it costs about :math:`k + 1` plain steps and returns :math:`E < k + 1`
    tokens, so it lowers throughput.

    References
    ----------
    .. [1] Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via
       Speculative Decoding", ICML 2023, arXiv:2211.17192.
    .. [2] C. Chen et al., "Accelerating Large Language Model Decoding with Speculative
       Sampling", 2023, arXiv:2302.01318.
    .. [3] Y. Li et al., "EAGLE: Speculative Sampling Requires Rethinking Feature
       Uncertainty", ICML 2024, arXiv:2401.15077.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    >>> r = speculative_decode(d, 1, 4096, k=8, alpha=0.8, draft_fraction=0.01)
    >>> round(r.accepted_tokens, 2), round(r.speedup_per_user, 2)  # 4.33 / (0.08 + 1.002)
    (4.33, 4.0)
    """
    check_on_oom(on_oom)
    drafter = Drafter.of(drafter)
    if drafter.kind == "draft":
        _check_draft(target, drafter.draft)
    _one_acceptance(alpha, accepted_tokens)
    B = V.counts(batch, "batch")
    C = V.counts(context_tokens, "context_tokens", unit="token")
    kk = _draft_length(k)
    E = _tokens_per_pass(alpha, accepted_tokens, kk)
    dm = drafter.draft
    fit = _joint_fit(target, dm, B, C, kk)
    if on_oom == "raise":
        ensure_fits(target, fit, "speculative verification pass (k + 1 tokens per sequence"
                    + (f", draft {dm.model.id} on the same devices)" if dm is not None
                       else ")"), batch=B, context_tokens=C, k=kk)
    a = _cycle(target, B, C, kk, E, drafter)
    shape = np.shape(a["cycle_time_s"])
    S = V.scalar_or_array
    out = {name: S(np.asarray(v, float)) for name, v in a.items() if name != "verify_bound"}
    vb = a["verify_bound"]
    fits = np.broadcast_to(fit.fits, shape)
    return SpeculativeResult(
        **out, verify_bound=str(vb) if np.ndim(vb) == 0 else np.asarray(vb),
        fits=bool(fits) if np.ndim(fits) == 0 else fits)


@accepts_legacy_forms(("target", "batch", "context_tokens", "alpha", "k_max", "objective",
                       *_DRAFTER_01),
                      dict(k_max=16, objective="per_user", draft=None, draft_step_time_s=None,
                           draft_fraction=None),
                      _drafter_01, "drafter")
@inputs(target="deployment")
def best_speculation_k(target: Deployment, batch: Any, context_tokens: Any, alpha: Any,
                       k_max: int = 16, objective: Objective = "per_user",
                       drafter: Drafter | Deployment | None = None) -> Any:
    """The draft length in ``0..k_max`` that maximizes tokens per second.

    The drafter is a :class:`Drafter`; release 0.1's ``draft=``, ``draft_step_time_s=`` and
    ``draft_fraction=`` arguments (by name or in their 0.1 positions) still work.

    Parameters
    ----------
    target : Deployment
        The verifier.
    batch : int or array_like
        Concurrent sequences on the replica, >= 1.
    context_tokens : int or array_like
        Tokens in each sequence's KV cache [token], >= 1; broadcast with ``batch``.
    alpha : float or array_like
        Per-token acceptance rate in [0, 1]; broadcast with ``batch``.
    k_max : int
        Largest draft length tried [token], whole, 0..64.
    objective : {"per_user", "per_device"}
        Maximize tokens per second per user or per device. At a fixed batch and context the
        two are proportional (per device = batch / n_devices x per user), so they pick the
        same ``k``; the name says which figure the choice is read against.
    drafter : Drafter or Deployment
        The drafter, as in :func:`speculative_decode`.

    Returns
    -------
    int or numpy.ndarray of int
        The best ``k`` [token] per point (0: do not speculate). Ties go to the smaller ``k``.
        Draft lengths whose verification pass (with a draft model) does not fit in memory
        are never chosen; a point where even plain decode does not fit raises
        :class:`~tokenomics.core.errors.DoesNotFitError`.

    Notes
    -----
    :math:`k^* = \\arg\\max_{0 \\le k \\le k_\\max} E(\\alpha, k) / (k\\,t_\\mathrm{draft} +
    t_\\mathrm{verify}(B, C, k + 1))`, evaluated for every :math:`k` at once on an extra
    array axis. :math:`k = 0` is plain decode (:math:`E = 1`, one plain step).

    References
    ----------
    .. [1] Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via
       Speculative Decoding", ICML 2023, arXiv:2211.17192, §3.5 (optimal number of drafts).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> best_speculation_k(d, [1, 512], 128, alpha=0.8, draft_fraction=0.01).tolist()
    [14, 1]
    """
    if not isinstance(objective, str) or objective not in ("per_user", "per_device"):
        raise TokenomicsError(
            f"objective must be 'per_user' or 'per_device', got {objective!r}")
    drafter = Drafter.of(drafter)
    kind = drafter.kind
    if kind == "draft":
        _check_draft(target, drafter.draft)
    km = V.counts(k_max, "k_max", minimum=0, unit="token")
    if km.ndim or km > K_MAX_LIMIT:
        raise TokenomicsError(
            f"k_max must be one whole number in 0..{K_MAX_LIMIT}, got "
            f"{V.fmt(km) if km.ndim == 0 else km.tolist()}")
    B = V.counts(batch, "batch")
    C = V.counts(context_tokens, "context_tokens", unit="token")
    a = _probability(alpha, "alpha", "a per-token acceptance probability")
    # Plain decode must fit (raises the usual DoesNotFitError otherwise).
    decode(target, B, C, on_oom="raise")
    dft = (V.non_negative(drafter.draft_fraction, "draft_fraction", "dimensionless")
           if kind == "draft_fraction" else np.zeros(()))
    dst = (V.non_negative(drafter.draft_step_time_s, "draft_step_time_s", "s")
           if kind == "draft_step_time_s" else np.zeros(()))
    # Every point on the leading axes, every k on a trailing one.
    shape = np.broadcast_shapes(B.shape, C.shape, a.shape, dft.shape, dst.shape)
    Bk, Ck, ak, fk, sk = (np.broadcast_to(x, shape)[..., None] for x in (B, C, a, dft, dst))
    ks = np.arange(int(km) + 1, dtype=float)
    E = _geometric_sum(ak, ks)
    # The drafter's cost broadcast over the points (a draft model needs no broadcasting).
    cost = {"draft": drafter, "draft_step_time_s": Drafter(draft_step_time_s=sk),
            "draft_fraction": Drafter(draft_fraction=fk)}[kind]
    cyc = _cycle(target, Bk, Ck, ks, E, cost)
    fit = _joint_fit(target, drafter.draft, Bk, Ck, ks)
    value = cyc["tokens_per_s_per_user" if objective == "per_user"
                else "tokens_per_s_per_device"]
    value = np.where(np.broadcast_to(fit.fits, np.shape(value)), value, -np.inf)
    best = np.argmax(value, axis=-1)
    return int(best) if np.ndim(best) == 0 else best.astype(int)


__all__ = ["Drafter", "SpeculativeResult", "expected_accepted_tokens", "expected_accepted_from_table",
           "speculative_decode", "best_speculation_k", "K_MAX_LIMIT"]
