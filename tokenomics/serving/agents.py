"""One step of an agent session: a midfill on a long cached prefix, then decode (S61).

An agent resumes on a context it has already built (system prompt, tool results, earlier turns):
the prefix's KV is in the cache, the new tokens are prefilled on top of it ("midfill"), and the
answer is decoded at a context that keeps growing. Every decode step reads the whole prefix's KV
again, so on a long prefix those reads, not the weights, dominate the step's time and therefore
its rental cost (S61: "at cloud rental prices about 60% of the cost reads the prefix").

Notes
-----
Midfill: :func:`~tokenomics.physics.step.prefill` of :math:`c + n` tokens with :math:`c`
cached. Decode step :math:`k = 1 \\ldots O-1` reads a cache of :math:`c + n + k - 1` tokens.
Prefix read time per decode step: :math:`B\\,K_\\mathrm{seq,dev}(c)/(\\beta\\,\\mathrm{MBU})`
[s] (batch :math:`B`, prefix KV bytes per sequence per device :math:`K_\\mathrm{seq,dev}`,
memory bandwidth :math:`\\beta`). Cost of the step per sequence:
:math:`t\\,n_\\mathrm{dev}\\,p / (3600\\,B)` [USD] at :math:`p` USD per device-hour.

References
----------
.. [1] AI Frontier Korea, "EP 112. What Happens Inside an AI Chip: From KV Cache to Roofline",
   2026, sections 8.2-8.4 (seed digest S61: a ~119K-token cached prefix, 875 new tokens
   and 214 output tokens; prefix reads ~60% of the cost).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import Result
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.physics.memory import kv_per_sequence_bytes
from tokenomics.physics.step import decode, prefill
from tokenomics.serving.tiers import rental_usd_per_hour

#: The source's agent step (S61): cached prefix, new input and output tokens.
AGENT_STEP_TOKENS = (119_000, 875, 214)
#: Most output tokens of one agent step (its decode is timed token by token).
MAX_AGENT_OUTPUT = 10_000_000


@dataclass(frozen=True, repr=False)
class AgentStep(Result):
    """Time and cost of one agent step on a cached prefix, per sequence of the batch.

    Attributes
    ----------
    cached_tokens, new_tokens, output_tokens, batch : int
    midfill_s : float
        Prefill of the new tokens on the cached prefix; it emits the first output token [s].
    decode_s : float
        The ``output_tokens - 1`` decode steps at the growing context [s].
    time_s : float
        ``midfill_s + decode_s`` [s].
    prefix_kv_read_s : float
        Time the devices spend reading the cached prefix's KV over the step: its bytes per
        device over the achieved memory bandwidth, once in the midfill and once per decode
        step [s].
    prefix_kv_share : float
        ``prefix_kv_read_s / time_s``: the share of the step's time, hence of its rental cost,
        spent re-reading the prefix.
    usd : float
        Rental cost of the step for one sequence: ``time_s`` x devices x price / batch [USD].
    """

    cached_tokens: int
    new_tokens: int
    output_tokens: int
    batch: int
    midfill_s: float
    decode_s: float
    time_s: float
    prefix_kv_read_s: float
    prefix_kv_share: float
    usd: float


@inputs(dep="deployment")
def agent_step(dep: Deployment, cached_tokens: int = AGENT_STEP_TOKENS[0],
               new_tokens: int = AGENT_STEP_TOKENS[1], output_tokens: int = AGENT_STEP_TOKENS[2],
               batch: int = 1, usd_per_device_hour: float | None = None) -> AgentStep:
    """Cost one agent step: a midfill on a cached prefix, then decode at the growing context.

    Parameters
    ----------
    dep : Deployment
    cached_tokens : int
        Prefix already in the KV cache [token] (S61: 119,000).
    new_tokens : int
        New input tokens (tool results, the user's message) [token], >= 1 (S61: 875).
    output_tokens : int
        Tokens generated [token], >= 1 (S61: 214).
    batch : int
        Agents stepping together on the replica, each with such a prefix.
    usd_per_device_hour : float, optional
        Default the catalog's latest rental price of the device.

    Returns
    -------
    AgentStep

    Notes
    -----
    Midfill: :func:`tokenomics.prefill` of ``cached + new`` tokens with ``cached`` cached. Decode
    step :math:`k = 1 \\ldots O-1` reads a cache of :math:`c + n + k - 1` tokens. The prefix
    read time per decode step is :math:`B\\,K_\\mathrm{seq,dev}(c)/(\\beta\\,\\mathrm{MBU})`
    (the prefix's part of the attention operator's KV bytes); in the compute-bound midfill the
    same bytes are counted once (over all pipeline stages), an upper bound on their share.
    The cost share equals the time share because a rented replica costs the same every second
    (S61: "at cloud rental prices about 60% of the cost reads the prefix").

    References
    ----------
    .. [1] Seed digest S61: a typical step reads a ~119K-token cached prefix, adds 875 tokens
       and emits 214; prefix reads are ~60% of the cost.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
    ...                   compute_dtype="fp8")
    >>> s = agent_step(d, batch=4)
    >>> round(s.prefix_kv_share, 2), round(s.time_s, 2)   # midfill attention at BF16 (the cache's)
    (0.63, 1.98)
    """
    c = V.single_whole(cached_tokens, "cached_tokens", minimum=0, unit="token")
    n_new = V.single_whole(new_tokens, "new_tokens", unit="token")
    o = V.single_whole(output_tokens, "output_tokens", unit="token")
    B = V.single_whole(batch, "batch")
    V.context_within(dep.model, np.asarray(float(c + n_new + o)), dep.allow_beyond_max_context)
    if o > MAX_AGENT_OUTPUT:
        raise TokenomicsError(f"output_tokens={o} is more than {MAX_AGENT_OUTPUT:,} tokens a "
                              "step can time one decode at a time")
    p_hour = (rental_usd_per_hour(dep.hardware) if usd_per_device_hour is None
              else V.single_amount(usd_per_device_hour, "usd_per_device_hour", "USD/hour"))
    mid = float(prefill(dep, c + n_new, B, cached_tokens=c).time_s)
    if o > 1:
        ctx = c + n_new + np.arange(o - 1, dtype=float)
        dec = float(np.sum(decode(dep, B, ctx).time_s))
    else:
        dec = 0.0
    bw = dep.hardware.mem_bw_bytes_per_s * dep.efficiency.mbu
    per_step = B * float(kv_per_sequence_bytes(dep, c)) / bw
    prefix = per_step * dep.pp + per_step * (o - 1)
    total = mid + dec
    return AgentStep(cached_tokens=c, new_tokens=n_new, output_tokens=o, batch=B,
                     midfill_s=mid, decode_s=dec, time_s=total, prefix_kv_read_s=prefix,
                     prefix_kv_share=prefix / total,
                     usd=total * dep.n_devices * p_hour / 3600.0 / B)


__all__ = ["AGENT_STEP_TOKENS", "AgentStep", "agent_step"]
