"""Serving mechanics on top of the step model: mixed prefill+decode steps, chunked prefill,
prefix caching, and static vs continuous batching.

Notes
-----
A *mixed* step runs decode tokens and a prefill chunk in one forward pass: the weights are read
once for both, the FLOPs and KV traffic add (:func:`mixed_step`).

*Chunked prefill* (vLLM, Sarathi-Serve) gives each step a token budget :math:`S`. Running
decodes go first (one token each), then the chunk of a prefill already started, then new
prefills: a prompt of :math:`P` tokens beside :math:`D` decodes takes
:math:`\\lceil P / (S - D) \\rceil` mixed steps. The decodes never wait longer than one of those
steps (time between tokens, TBT), at the price of a longer time to first token (TTFT): each
chunk re-reads the weights and carries the decodes. Without chunking a prefill-first scheduler
pauses the decodes for the whole prefill.

*Prefix caching* turns the cached part of a prompt from computed tokens into KV reads
(:func:`prefix_cached_prefill`); a prefix shared by many sequences is stored once
(:func:`shared_prefix_kv_bytes`).

*Static* batching starts a batch together and holds every slot until the longest output of the
batch ends; *continuous* (iteration-level) batching refills a slot as soon as its sequence ends,
paying one prefill per arriving request (:func:`batching_throughput`).

References
----------
.. [1] G.-I. Yu et al., "Orca: A Distributed Serving System for Transformer-Based Generative
   Models", OSDI 2022 (iteration-level scheduling).
.. [2] A. Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
   Sarathi-Serve", OSDI 2024, arXiv:2403.02310 (chunked prefill, stall-free batching).
.. [3] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
   PagedAttention", SOSP 2023, arXiv:2309.06180 (prefix sharing).
.. [4] L. Zheng et al., "SGLang: Efficient Execution of Structured Language Model Programs",
   NeurIPS 2024, arXiv:2312.07104 (RadixAttention prefix caching).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.core.units import Result
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment
from tokenomics.physics.engine import (
    StepResult,
    collectives_s,
    operator_times,
    step_result,
    step_seconds,
)
from tokenomics.physics.memory import (
    kv_per_sequence_bytes,
    memory_fit,
    replicated_kv_bytes,
)
from tokenomics.physics.operators import mixed_costs, mixed_costs_over
from tokenomics.physics.step import decode, prefill


# ---- Mixed prefill + decode steps ----------------------------------------------------------
def mixed_step_seconds(dep: Deployment, dec_b: Any, dec_c: Any, pre_t: Any, pre_c: Any,
                       pre_b: Any, phase: str = "prefill",
                       sampled_rows: Any = None) -> np.ndarray:
    """Time of a mixed step, unvalidated (``pre_b`` may be fractional: an average) [s].

    The step engine's time (:func:`tokenomics.physics.engine.step_seconds`) of ``dec_b``
    decodes at ``dec_c`` cached tokens beside ``pre_b`` prefill chunks of ``pre_t`` tokens on
    ``pre_c`` cached ones: the checked form is :func:`mixed_step`. ``phase="decode"`` counts
    a pipeline's stage-to-stage sends as a decode cycle does (``pp`` per cycle, one per
    micro-batch); the default, as one batch passing the stages. ``sampled_rows``: the
    tokens the host samples (default the step's ``dec_b + pre_b``).
    """
    n = np.asarray(dec_b, float) + np.asarray(pre_b, float) * np.asarray(pre_t, float)
    rows = np.asarray(dec_b, float) + pre_b
    return step_seconds(dep, mixed_costs(dep, dec_b, dec_c, pre_t, pre_c, pre_b), 1.0, n,
                         rows, phase, rows if sampled_rows is None else sampled_rows)


def mixed_step_seconds_over(dep: Deployment, dec_b: Any, decodes: tuple[Any, Any],
                            chunks: tuple[Any, Any, Any], phase: str = "prefill",
                            sampled_rows: Any = None) -> np.ndarray:
    """:func:`mixed_step_seconds` of a step whose sequences have a distribution of lengths
    [s]: ``dec_b`` decodes whose contexts and shares are ``decodes = (dec_c, dec_w)``, and
    prefill chunks ``chunks = (pre_t, pre_c, pre_b)`` (tokens, cached tokens, count), nodes
    on the last axis (:func:`tokenomics.physics.operators.mixed_costs_over`)."""
    dec_c, dec_w = decodes
    pre_t, pre_c, pre_b = chunks
    D = np.asarray(dec_b, float)
    b = np.asarray(pre_b, float)
    n = D + (b * np.asarray(pre_t, float)).sum(axis=-1)
    rows = D + b.sum(axis=-1)
    return step_seconds(dep, mixed_costs_over(dep, D, dec_c, dec_w, pre_t, pre_c, b), 1.0, n,
                        rows, phase, rows if sampled_rows is None else sampled_rows)


@inputs(dep="deployment")
def mixed_step(dep: Deployment, decode_batch: Any, decode_context_tokens: Any,
               prefill_tokens: Any, prefill_cached_tokens: Any = 0,
               prefill_batch: Any = 1) -> StepResult:
    """One forward step carrying ``decode_batch`` decodes and a prefill chunk.

    Parameters
    ----------
    dep : Deployment
    decode_batch : int or array_like
        Sequences decoding one token each, >= 0.
    decode_context_tokens : int or array_like
        Their KV length [token], >= 1.
    prefill_tokens : int or array_like
        Prompt tokens computed in this step per prefilling sequence [token], >= 1.
    prefill_cached_tokens : int or array_like
        Tokens of those prompts already in the KV cache (earlier chunks, cached prefix)
        [token], >= 0.
    prefill_batch : int or array_like
        Prefilling sequences, >= 1.

    Returns
    -------
    StepResult
        ``time_s`` the step time [s]; ``tokens_per_s_per_device`` counts decode and prefill
        tokens; ``phase`` is ``"mixed"``.

    Notes
    -----
    Per operator: FLOPs, KV and activation bytes of the two parts add; weight bytes are those
    of one pass over :math:`D + bT` tokens (read once; MoE: the distinct experts of all of
    them). Pipeline parallelism is not applied to mixed steps (``pp`` must be 1).

    References
    ----------
    .. [1] A. Agrawal et al., Sarathi-Serve, OSDI 2024, arXiv:2403.02310.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> both = mixed_step(d, 32, 2048, 512)
    >>> apart = tk.decode(d, 32, 2048).time_s + tk.prefill(d, 512).time_s
    >>> bool(both.time_s < apart)    # the weights are read once, not twice
    True
    """
    if dep.pp != 1:
        raise TokenomicsError("mixed_step models a single pipeline stage; use pp=1")
    D = V.counts(decode_batch, "decode_batch", minimum=0)
    C = V.counts(decode_context_tokens, "decode_context_tokens", unit="token")
    T = V.counts(prefill_tokens, "prefill_tokens", unit="token")
    c = V.counts(prefill_cached_tokens, "prefill_cached_tokens", minimum=0, unit="token")
    b = V.counts(prefill_batch, "prefill_batch")
    V.context_within(dep.model, np.maximum(C, c + T), dep.allow_beyond_max_context)
    costs = mixed_costs(dep, D, C, T, c, b)
    t = operator_times(dep, costs)
    n = D + b * T
    comm = collectives_s(dep, 1.0, n, D + b, "prefill")
    res = step_result(dep, "mixed", t, comm, point=(D + b, np.maximum(C, c + T), T),
                      tokens_per_step=n, fits=True, sampled_rows=D + b)
    return res


# ---- Chunked prefill -----------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ChunkedPrefill(Result):
    """A prompt prefilled in chunks beside running decodes, and the same without chunking.

    Attributes
    ----------
    chunk_tokens : numpy.ndarray
        Prompt tokens computed in each step [token].
    step_time_s : numpy.ndarray
        Time of each mixed step [s].
    ttft_s : float
        Time to the prompt's first token: the sum of its steps [s].
    worst_tbt_s : float
        Longest gap between two tokens of a running decode: the longest step [s].
    unchunked_ttft_s : float
        TTFT with a prefill-first scheduler: the whole prompt in one step, decodes paused [s].
    unchunked_worst_tbt_s : float
        The decodes' gap then: the prefill plus their own decode step [s].
    """

    chunk_tokens: Any
    step_time_s: Any
    ttft_s: float
    worst_tbt_s: float
    unchunked_ttft_s: float
    unchunked_worst_tbt_s: float

    @property
    def steps(self) -> int:
        """Number of mixed steps the prompt takes."""
        return int(np.size(self.chunk_tokens))


#: Most prefill chunks :func:`chunked_prefill` lays out (one array entry each).
MAX_CHUNKS = 1_000_000


@inputs(dep="deployment")
def chunked_prefill(dep: Deployment, prompt_tokens: int, token_budget: int,
                    decode_batch: int = 0, decode_context_tokens: int = 1,
                    cached_tokens: int = 0) -> ChunkedPrefill:
    """Prefill one prompt in chunks under a per-step token budget, beside running decodes.

    Parameters
    ----------
    dep : Deployment
    prompt_tokens : int
        Prompt length, cached prefix included [token].
    token_budget : int
        Tokens one step may carry (vLLM's ``max_num_batched_tokens``) [token]; must exceed
        ``decode_batch``, which goes first.
    decode_batch : int
        Sequences decoding meanwhile (one token each per step).
    decode_context_tokens : int
        Their KV length [token].
    cached_tokens : int
        Prefix already cached [token].

    Returns
    -------
    ChunkedPrefill

    Notes
    -----
    Priority per step: the ``decode_batch`` decodes, then this (started) prefill with the
    remaining :math:`S - D` tokens; a new prefill would wait for it. Step :math:`i` computes
    :math:`\\min(S - D, P_{new} - i(S - D))` tokens on a cache of :math:`c + i(S - D)`.
    TTFT :math:`= \\sum_i t_i`, worst TBT :math:`= \\max_i t_i`. Unchunked (prefill-first):
    TTFT :math:`= t_\\mathrm{prefill}(P)`, worst TBT :math:`= t_\\mathrm{prefill}(P) +
    t_\\mathrm{decode}(D)`.

    References
    ----------
    .. [1] A. Agrawal et al., Sarathi-Serve, OSDI 2024, arXiv:2403.02310.
    .. [2] Seed digest S24 (8,192-token prefill split into chunks).

    Examples
    --------
    >>> import tokenomics as tk
    >>> r = chunked_prefill(tk.Deployment("llama-3.1-8b", "h100-sxm"), 8192, 2048,
    ...                     decode_batch=32, decode_context_tokens=2048)
    >>> r.steps, bool(r.worst_tbt_s < r.unchunked_worst_tbt_s), bool(r.ttft_s > r.unchunked_ttft_s)
    (5, True, True)
    """
    P = V.single_whole(prompt_tokens, "prompt_tokens", unit="token")
    S = V.single_whole(token_budget, "token_budget", unit="token")
    D = V.single_whole(decode_batch, "decode_batch", minimum=0)
    Cd = V.single_whole(decode_context_tokens, "decode_context_tokens", unit="token")
    c0 = V.single_whole(cached_tokens, "cached_tokens", minimum=0, unit="token")
    if c0 >= P:
        raise TokenomicsError(f"cached_tokens={c0} must be below prompt_tokens={P}")
    if S <= D:
        raise TokenomicsError(f"token_budget={S} must exceed decode_batch={D}: decodes go "
                              "first and the prefill needs at least one token per step")
    V.context_within(dep.model, np.asarray(P, float), dep.allow_beyond_max_context,
                     "prompt_tokens")      # before the per-chunk arrays are allocated
    per = S - D
    new = P - c0
    n = -(-new // per)
    if n > MAX_CHUNKS:
        raise TokenomicsError(f"a prompt of {P} tokens in chunks of {per} is {n:,} steps, "
                              f"more than {MAX_CHUNKS:,}; raise token_budget")
    i = np.arange(n, dtype=float)
    chunk = np.minimum(per, new - i * per)
    cached = c0 + i * per
    fit = memory_fit(dep, max(D, 1), Cd, tokens_per_step=S)
    need = float(fit.total_bytes) + float(kv_per_sequence_bytes(dep, P))
    if D == 0:
        need -= float(kv_per_sequence_bytes(dep, Cd))
    if need > fit.usable_bytes:
        raise DoesNotFitError(
            f"chunked prefill of {P} tokens beside {D} decodes at {Cd} tokens needs "
            f"{need / 1e9:.4g} GB per device on {dep.hardware.id}, usable "
            f"{fit.usable_bytes / 1e9:.4g} GB; lower the decode batch or add devices")
    steps = np.asarray(mixed_step(dep, D, Cd, chunk, cached).time_s, float)
    pre = prefill(dep, P, 1, c0).time_s
    dec = decode(dep, D, Cd).time_s if D else 0.0
    return ChunkedPrefill(chunk_tokens=chunk, step_time_s=steps, ttft_s=float(steps.sum()),
                          worst_tbt_s=float(steps.max()), unchunked_ttft_s=float(pre),
                          unchunked_worst_tbt_s=float(pre + dec))


# ---- Prefix caching ------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class PrefixCachedPrefill(Result):
    """Prefill with and without a prefix-cache hit. Per step, per device.

    Attributes
    ----------
    cached_tokens : array
        Tokens served from the cache [token].
    ttft_s, ttft_uncached_s : array
        Prefill time with and without the hit [s].
    flops, flops_uncached : array
        FLOPs per device [FLOP].
    kv_read_bytes : array
        Cached KV read instead of recomputed, per device [B].
    """

    cached_tokens: Any
    ttft_s: Any
    ttft_uncached_s: Any
    flops: Any
    flops_uncached: Any
    kv_read_bytes: Any

    @property
    def speedup(self) -> Any:
        """``ttft_uncached_s / ttft_s``."""
        return self.ttft_uncached_s / self.ttft_s


@inputs(dep="deployment")
def prefix_cached_prefill(dep: Deployment, prompt_tokens: Any, cached_tokens: Any = None,
                          hit_rate: Any = None, batch: Any = 1) -> PrefixCachedPrefill:
    """TTFT and prefill work with a prefix-cache hit, against a cold prefill.

    Parameters
    ----------
    dep : Deployment
    prompt_tokens : int or array_like
        Prompt length [token].
    cached_tokens : int or array_like, optional
        Tokens of the prompt found in the cache [token], < prompt.
    hit_rate : float or array_like, optional
        Alternatively, the fraction of prompt tokens served from the cache, [0, 1); the
        cached count is :math:`\\lfloor h P \\rfloor`, capped at :math:`P - 1`.
    batch : int or array_like

    Returns
    -------
    PrefixCachedPrefill

    Notes
    -----
    A hit removes the cached tokens' FLOPs (projections, FFN, and their causal attention) and
    adds a read of their KV; the new tokens still attend to the whole prefix. See
    :func:`tokenomics.prefill` with ``cached_tokens``.

    References
    ----------
    .. [1] L. Zheng et al., SGLang, NeurIPS 2024, arXiv:2312.07104.
    .. [2] Seed digest S31 (a 12,000-token document cached; 22 new tokens).

    Examples
    --------
    >>> import tokenomics as tk
    >>> r = prefix_cached_prefill(tk.Deployment("llama-3.1-8b", "h100-sxm"), 12_022,
    ...                           cached_tokens=12_000)
    >>> bool(r.speedup > 20)     # 22 computed tokens instead of 12,022
    True
    """
    if (cached_tokens is None) == (hit_rate is None):
        raise TokenomicsError("give exactly one of cached_tokens and hit_rate")
    P = V.counts(prompt_tokens, "prompt_tokens", unit="token")
    if hit_rate is not None:
        h = V.non_negative(hit_rate, "hit_rate", "count")
        if np.any(h >= 1):
            raise TokenomicsError(f"hit_rate must be in [0, 1), got {V.fmt(np.max(h))}: at "
                                  "least one token of the prompt is computed")
        c = np.minimum(np.floor(h * P), P - 1)
    else:
        c = V.counts(cached_tokens, "cached_tokens", minimum=0, unit="token")
    hot = prefill(dep, P, batch, c)
    cold = prefill(dep, P, batch, 0)
    V.context_within(dep.model, np.asarray(c, float), dep.allow_beyond_max_context)
    kv_read = replicated_kv_bytes(dep, c, dep.kv_dtype) * np.asarray(batch, float) / dep.tp
    return PrefixCachedPrefill(
        cached_tokens=V.scalar_or_array(np.broadcast_to(c, np.shape(hot.time_s))),
        ttft_s=hot.time_s, ttft_uncached_s=cold.time_s, flops=hot.flops_per_device,
        flops_uncached=cold.flops_per_device, kv_read_bytes=V.scalar_or_array(kv_read))


@inputs(dep="deployment")
def shared_prefix_kv_bytes(dep: Deployment, prefix_tokens: Any, suffix_tokens: Any,
                           batch: Any) -> tuple[Any, Any]:
    """KV bytes per device for ``batch`` sequences sharing a prefix, stored once vs each.

    Parameters
    ----------
    dep : Deployment
    prefix_tokens : int or array_like
        Shared prefix (system prompt, document) [token].
    suffix_tokens : int or array_like
        Each sequence's own tokens after it [token].
    batch : int or array_like
        Sequences sharing the prefix.

    Returns
    -------
    (shared, unshared) : tuple of float or numpy.ndarray
        :math:`K(p) + B (K(p + s) - K(p))` and :math:`B\\,K(p + s)`, per device [B].

    References
    ----------
    .. [1] W. Kwon et al., PagedAttention, SOSP 2023, arXiv:2309.06180 (§4.4 shared prefix).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> shared, each = shared_prefix_kv_bytes(d, 4000, 100, 10)
    >>> round(each / shared, 1)       # 10 x 4100 tokens vs 4000 + 10 x 100
    8.2
    """
    p = V.counts(prefix_tokens, "prefix_tokens", minimum=0, unit="token")
    s = V.counts(suffix_tokens, "suffix_tokens", minimum=0, unit="token")
    b = V.counts(batch, "batch")
    V.context_within(dep.model, p + s, dep.allow_beyond_max_context)
    kp = kv_per_sequence_bytes(dep, p)
    kps = kv_per_sequence_bytes(dep, p + s)
    return V.scalar_or_array(kp + b * (kps - kp)), V.scalar_or_array(b * kps)


# ---- Static vs continuous batching ---------------------------------------------------------
def expected_max(samples: Any, n: Any, probabilities: Any = None) -> Any:
    """Expected maximum of ``n`` independent draws from a discrete distribution.

    Parameters
    ----------
    samples : array_like
        Observed values (e.g. output lengths [token]), or the support of a distribution.
    n : int or array_like
        Draws, >= 1.
    probabilities : array_like, optional
        Probability of each value of ``samples`` (default: equal, an empirical distribution).

    Returns
    -------
    float or numpy.ndarray
        :math:`\\sum_i x_{(i)} [F_i^n - F_{i-1}^n]` over the sorted values, :math:`F` the CDF.

    References
    ----------
    .. [1] H. A. David, H. N. Nagaraja, "Order Statistics", 3rd ed., Wiley, 2003.

    Examples
    --------
    >>> expected_max([1, 2, 3, 4], 1)
    2.5
    >>> expected_max([7, 7, 7], 5)
    7.0
    """
    x = V.non_negative(samples, "samples", "count").ravel()
    if x.size == 0:
        raise TokenomicsError("samples is empty; give at least one value")
    if probabilities is None:
        p = np.full(x.size, 1.0 / x.size)
    else:
        p = V.non_negative(probabilities, "probabilities", "count").ravel()
        if p.size != x.size or not np.isclose(p.sum(), 1.0, atol=1e-9):
            raise TokenomicsError("probabilities must match samples one for one and sum to 1")
    order = np.argsort(x, kind="stable")
    x, p = x[order], p[order]
    F = np.minimum(np.cumsum(p), 1.0)
    F_prev = np.concatenate(([0.0], F[:-1]))
    nn = V.counts(n, "n")
    w = F ** nn[..., None] - F_prev ** nn[..., None]
    return V.scalar_or_array((w * x).sum(axis=-1))


@dataclass(frozen=True, repr=False)
class BatchingThroughput(Result):
    """Steady-state decode throughput of static vs continuous batching.

    Attributes
    ----------
    static_tokens_per_s_per_device, continuous_tokens_per_s_per_device : array
        Output tokens per second per device [token/s].
    ratio : array
        Continuous over static.
    static_batch_time_s : array
        One static batch: its prefill plus decode steps until its longest output ends [s].
    """

    static_tokens_per_s_per_device: Any
    continuous_tokens_per_s_per_device: Any
    ratio: Any
    static_batch_time_s: Any


@inputs(dep="deployment")
def batching_throughput(dep: Deployment, batch: Any, prompt_tokens: Any,
                        output_tokens: Any) -> BatchingThroughput:
    """Static vs continuous batching at ``batch`` concurrent slots, in steady state.

    Parameters
    ----------
    dep : Deployment
    batch : int or array_like
        Concurrent sequences (slots).
    prompt_tokens : int
        Prompt length [token] (mean if it varies).
    output_tokens : int, array_like or LengthDistribution
        Output length: a fixed number, samples of the distribution, or a
        :class:`~tokenomics.serving.paged.LengthDistribution` (e.g. ``LengthDistribution.lognormal``)
        [token].

    Returns
    -------
    BatchingThroughput

    Notes
    -----
    With :math:`B` slots, mean output :math:`\\bar O`, prompt :math:`P` and decode step
    :math:`t_d` at the mean context :math:`P + \\bar O/2`:

    * static: a batch takes :math:`t_p(B, P) + E[\\max_B O] \\, t_d` and yields
      :math:`B \\bar O` tokens (finished sequences hold their slots until the longest ends);
    * continuous: each step yields :math:`B` tokens while :math:`B/\\bar O` sequences end and
      are replaced; their prompts ride in the same steps (mixed prefill+decode, as vLLM and
      Sarathi-Serve run it), so a step is :func:`mixed_step` with :math:`B` decodes and
      :math:`B/\\bar O` prompts of :math:`P` tokens: throughput :math:`B / t_{mixed}`.

    References
    ----------
    .. [1] G.-I. Yu et al., Orca, OSDI 2022.
    .. [2] Seed digest S21 (continuous batching 2-4x over older serving systems).

    Examples
    --------
    >>> import tokenomics as tk
    >>> r = batching_throughput(tk.Deployment("llama-3.1-8b", "h100-sxm"), 64, 512, 256)
    >>> round(float(r.ratio), 1)   # equal lengths: static only waits for its batched prefill
    1.3
    """
    B = V.counts(batch, "batch")
    P = float(V.single_whole(prompt_tokens, "prompt_tokens", unit="token"))
    from tokenomics.serving.paged import LengthDistribution

    if isinstance(output_tokens, LengthDistribution):
        out, probs = output_tokens.tokens, output_tokens.probabilities
    else:
        out = V.counts(output_tokens, "output_tokens", unit="token").ravel()
        probs = np.full(out.size, 1.0 / out.size)
    mean_o = float(np.dot(out, probs))
    ctx = P + mean_o / 2.0
    if dep.pp != 1:
        raise TokenomicsError("batching_throughput models a single pipeline stage; use pp=1")
    t_dec = np.asarray(decode(dep, B, np.ceil(ctx), on_oom="raise").time_s, float)
    t_pre_b = np.asarray(prefill(dep, P, B).time_s, float)
    emax = np.asarray(expected_max(out, B, probs), float)
    static_time = t_pre_b + emax * t_dec
    static = B * mean_o / static_time / dep.n_devices
    arrivals = B / mean_o  # prompts joining each step, on average
    t_mix = mixed_step_seconds(dep, B, np.ceil(ctx), P, 0.0, arrivals)
    cont = B / t_mix / dep.n_devices
    S = V.scalar_or_array
    return BatchingThroughput(S(static), S(cont), S(cont / static), S(static_time))
