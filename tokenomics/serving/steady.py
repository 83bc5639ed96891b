"""Steady-state continuous batching: TPOT, TTFT and throughput at a fixed concurrency.

Notes
-----
A decode-only step understates the time per output token (TPOT) under load: in continuous
batching every step also carries the prefill of the requests that replace the finished ones
(:func:`steady_state`).

References
----------
.. [1] G.-I. Yu et al., "Orca: A Distributed Serving System for Transformer-Based Generative
   Models", OSDI 2022 (iteration-level scheduling).
.. [2] A. Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
   Sarathi-Serve", OSDI 2024, arXiv:2403.02310 (chunked prefill, stall-free batching).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import DoesNotFitError, TokenomicsError
from tokenomics.core.units import ReadableRepr, made
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment, check_deployment
from tokenomics.physics.engine import host_seconds
from tokenomics.physics.memory import max_batch
from tokenomics.physics.plan import mixed_plan
from tokenomics.serving.batching import mixed_step_seconds, mixed_step_seconds_over


@dataclass(frozen=True, repr=False)
class SteadyState(ReadableRepr):
    """Continuous batching in steady state at a fixed concurrency, broadcast over the inputs.

    Attributes
    ----------
    concurrency : array
        Sequences in flight :math:`B` (the largest that fits for ``concurrency="max"``).
    input_tokens, output_tokens, cached_tokens : array
        Mean prompt, mean output and cached prefix per request [token].
    context_tokens : array
        Mean KV length of a decoding sequence, :math:`I + O/2` [token].
    arrivals_per_step : array
        Requests admitted per step, :math:`a = B/O` [request].
    prefill_tokens_per_step : array
        Prompt tokens computed per step, :math:`(B/O)(I - c)` [token].
    chunks_per_prompt : array
        Steps one prompt's prefill is spread over, :math:`\\lceil (I - c)/S \\rceil` (1 when
        unchunked).
    tpot_s : array
        Mean time per output token: the mixed step's time [s].
    decode_only_tpot_s : array
        The same step without its prefill share: the :math:`B - a` decodes alone (what a
        decode-only score gives) [s].
    ttft_s : array
        Time to first token in a closed system (no queueing): ``chunks_per_prompt`` steps
        plus the efficiency's ``request_overhead_s`` (0 at the roofline) [s].
    output_tokens_per_s_per_device : array
        :math:`B / t / n` [token/s].
    tokens_per_s_per_user : array
        :math:`1 / t` [token/s].
    requests_per_s : array
        Requests completed per second by the replica, :math:`a / t` [request/s].
    request_latency_s : array
        Time a request spends in the engine, :math:`O t` [s] (Little's law:
        ``concurrency = requests_per_s x request_latency_s``).
    fits : array of bool
        Whether :math:`B` sequences of :math:`I + O` tokens fit the replica's memory.
    efficiency : str
        What produced the numbers: the deployment's efficiency label (``"roofline"``,
        ``"calibrated"`` or ``"custom"``).
    """

    concurrency: Any
    input_tokens: Any
    output_tokens: Any
    cached_tokens: Any
    context_tokens: Any
    arrivals_per_step: Any
    prefill_tokens_per_step: Any
    chunks_per_prompt: Any
    tpot_s: Any
    decode_only_tpot_s: Any
    ttft_s: Any
    output_tokens_per_s_per_device: Any
    tokens_per_s_per_user: Any
    requests_per_s: Any
    request_latency_s: Any
    fits: Any
    efficiency: str

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame, one row per point, unit-suffixed columns."""
        shape = np.shape(self.tpot_s)
        return pd.DataFrame({f.name: np.ravel(np.broadcast_to(getattr(self, f.name), shape))
                             for f in fields(self)})


def _lengths(input_tokens: Any, output_tokens: Any, cached_tokens: Any,
             chunk_tokens: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """Checked lengths [token]; ``chunk_tokens`` stays None when unchunked."""
    inp = V.counts(input_tokens, "input_tokens", unit="token")
    out = V.counts(output_tokens, "output_tokens", unit="token")
    c = V.counts(cached_tokens, "cached_tokens", minimum=0, unit="token")
    if np.any(c >= inp):
        raise TokenomicsError(f"cached_tokens must be below input_tokens (at least one prompt "
                              f"token is computed), got {V.fmt(np.max(c))} cached")
    s = None if chunk_tokens is None else V.counts(chunk_tokens, "chunk_tokens", unit="token")
    return inp, out, c, s


def _concurrency(dep: Deployment, concurrency: Any, total: np.ndarray) -> np.ndarray:
    """Checked concurrency; ``"max"``: the largest that fits at ``total`` tokens each."""
    if isinstance(concurrency, str):
        if concurrency != "max":
            raise TokenomicsError(f"concurrency must be a whole number >= 1 or 'max', "
                                  f"got {concurrency!r}")
        B = np.asarray(max_batch(dep, total), float)
        if np.any(B < 1):
            raise DoesNotFitError(
                f"not one sequence of {V.fmt(np.max(total))} tokens fits beside the weights "
                f"on {dep.hardware.id}; shorten the request or add devices")
        return B
    return V.counts(concurrency, "concurrency")


def _decode_pool(dep: Deployment, B: np.ndarray, inp: np.ndarray, out: np.ndarray,
                 c: np.ndarray) -> SteadyState:
    """The decode pool of a disaggregated deployment in steady state (no prefill in its
    steps; see :func:`steady_state`)."""
    if np.any(out < 2):
        raise TokenomicsError("a decode pool needs output_tokens >= 2: the prefill pool "
                              "emits the first token, the decode pool the rest")
    B, inp, out, c = np.broadcast_arrays(B, inp, out, c)
    ctx = inp + out / 2.0
    a = B / (out - 1.0)
    m, phase = pipeline_microbatches(dep, B)
    t = np.asarray(mixed_step_seconds(dep, B / m, ctx, 1.0, 0.0, 0.0, phase, 0.0),
                   float) + _host(dep, B)
    fits = B <= np.asarray(max_batch(dep, inp + out), float)
    S = V.scalar_or_array
    zero = np.zeros_like(t)
    return SteadyState(
        concurrency=S(B), input_tokens=S(inp), output_tokens=S(out), cached_tokens=S(c),
        context_tokens=S(ctx), arrivals_per_step=S(a), prefill_tokens_per_step=S(zero),
        chunks_per_prompt=S(zero), tpot_s=S(t), decode_only_tpot_s=S(t), ttft_s=S(zero),
        output_tokens_per_s_per_device=S(B / t / dep.n_devices),
        tokens_per_s_per_user=S(1.0 / t), requests_per_s=S(a / t),
        request_latency_s=S((out - 1.0) * t),
        fits=bool(fits) if np.ndim(fits) == 0 else fits,
        efficiency=dep.efficiency.label)


@inputs(dep="deployment")
def steady_state(dep: Deployment, concurrency: Any, input_tokens: Any, output_tokens: Any, *,
                 cached_tokens: Any = 0, chunk_tokens: Any = None,
                 pool: str = "colocated") -> SteadyState:
    """TPOT, TTFT and throughput of continuous batching at concurrency ``B`` in steady state.

    Parameters
    ----------
    dep : Deployment
        One replica. Pipeline stages (``pp > 1``) run :math:`\\min(pp, B)` micro-batches
        (:func:`pipeline_microbatches`): full at :math:`B \\ge pp`, with a bubble below.
    concurrency : int, array_like or "max"
        Sequences in flight :math:`B`, >= 1; ``"max"``: the largest that fits at
        :math:`I + O` tokens each (:func:`tokenomics.max_batch`), the offline / max-load case.
    input_tokens : int or array_like
        Mean prompt length :math:`I` [token], >= 1.
    output_tokens : int or array_like
        Mean output length :math:`O` [token], >= 1.
    cached_tokens : int or array_like
        Prompt prefix found in the prefix cache :math:`c` [token], ``0 <= c < I``.
    chunk_tokens : int or array_like, optional
        Largest prefill chunk of one prompt per step :math:`S` [token] (Sarathi-Serve's
        chunk; the decodes ride beside it, unlike :func:`chunked_prefill`'s step budget).
        None: a prompt's whole prefill runs in one step.
    pool : {"colocated", "decode"}
        ``"colocated"`` (default): prefill and decode share the replica's steps.
        ``"decode"``: the decode pool of a disaggregated deployment. Its steps carry only
        the :math:`B` decodes; requests arrive with their KV and first token from the
        prefill pool (:func:`tokenomics.disagg`), so ``ttft_s`` and
        ``prefill_tokens_per_step`` are 0 (the pool adds nothing to TTFT but its own
        queueing) and each request lives :math:`O - 1` steps (``output_tokens >= 2``).

    Returns
    -------
    SteadyState
        Broadcast over ``concurrency``, ``input_tokens``, ``output_tokens``, ``cached_tokens``
        and ``chunk_tokens``.

    Notes
    -----
    With :math:`B` sequences in flight, each emitting one token a step and ending after
    :math:`O` tokens, a step admits :math:`a = B/O` requests, whose first token comes from
    their prefill: it carries :math:`a(I - c)` prompt tokens beside :math:`B - a` decodes at
    the mean context :math:`C = I + O/2`. A prompt takes
    :math:`k = \\lceil (I - c)/S \\rceil` chunks (:math:`k = 1` unchunked); a step then holds
    :math:`ak` chunks of :math:`(I-c)/k` tokens on the mean cache
    :math:`c + (I - c)(k - 1)/(2k)`, and its time is

    .. math:: t = t_\\mathrm{mixed}(B - a, C;\\ ak \\times (I - c)/k), \\qquad
              \\mathrm{TPOT} = t, \\quad
              \\frac{\\mathrm{tok}}{\\mathrm{s \\cdot device}} = \\frac{B}{t\\,n}.

    A step that carries a request's own chunk carries at least that one chunk, so
    :math:`\\mathrm{TTFT} = k\\, t_\\mathrm{mixed}(B - a, C;\\ \\max(ak, 1) \\times (I-c)/k)
    + t_\\mathrm{req}` (at light load, :math:`a < 1`, above :math:`k t`). Requests finish
    at :math:`\\lambda = a / t` per second and live :math:`W = O t` in the engine, so
    :math:`B = \\lambda W` (Little's law). At :math:`B = O = 1` the step is the prompt's
    prefill alone. In a decode pool (``pool="decode"``) the step is the decode of all
    :math:`B` at :math:`C`; :math:`a = B/(O - 1)` requests arrive a step and
    :math:`W = (O - 1) t`.

    The system is closed (a new request enters as one ends): TTFT holds no queueing wait;
    :math:`t_\\mathrm{req}` is the efficiency's ``request_overhead_s``.
    As :math:`O \\to \\infty` the prefill share vanishes and TPOT tends to the decode step.

    References
    ----------
    .. [1] G.-I. Yu et al., Orca, OSDI 2022.
    .. [2] A. Agrawal et al., Sarathi-Serve, OSDI 2024, arXiv:2403.02310.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = steady_state(d, 64, 2048, 128)
    >>> bool(r.tpot_s > r.decode_only_tpot_s)   # 64/128 x 2048 = 1,024 prompt tokens a step
    True
    """
    fast = _scalar(dep, concurrency, input_tokens, output_tokens, cached_tokens, chunk_tokens,
                   pool)
    if fast is not None:
        return fast
    return steady_state_reference(dep, concurrency, input_tokens, output_tokens,
                                  cached_tokens=cached_tokens, chunk_tokens=chunk_tokens,
                                  pool=pool)


def steady_state_reference(dep: Deployment, concurrency: Any, input_tokens: Any,
                           output_tokens: Any, *, cached_tokens: Any = 0,
                           chunk_tokens: Any = None, pool: str = "colocated") -> SteadyState:
    """:func:`steady_state` through the full engine, for any inputs; the reference its
    scalar fast path (:class:`~tokenomics.physics.plan.MixedPlan`) is checked against."""
    check_deployment(dep, "steady_state")
    if not isinstance(pool, str) or pool not in ("colocated", "decode"):
        raise TokenomicsError(f"pool must be 'colocated' or 'decode', got {pool!r}")
    inp, out, c, s = _lengths(input_tokens, output_tokens, cached_tokens, chunk_tokens)
    V.context_within(dep.model, inp + out, dep.allow_beyond_max_context)
    B = _concurrency(dep, concurrency, inp + out)
    if pool == "decode":
        return _decode_pool(dep, B, inp, out, c)
    new = inp - c
    k = np.ones_like(new) if s is None else np.ceil(new / s)
    B, inp, out, c, new, k = np.broadcast_arrays(B, inp, out, c, new, k)
    ctx, a, dec, chunk, chunk_c = _shares(B, inp, out, c, k)
    m, phase = pipeline_microbatches(dep, B)
    # whole chunks a (micro-batch) step: the mean step, the request's own, the decode-only:
    # five steps in one call over them stacked (one pass of the engine's Python)
    n, w = chunk_counts(a * k / m)
    z = np.zeros_like(chunk)
    times = np.asarray(mixed_step_seconds(
        dep, np.stack([dec / m] * 5), np.stack([ctx] * 5),
        np.stack([chunk] * 4 + [z + 1.0]), np.stack([chunk_c] * 4 + [z]), n, phase, 0.0),
        float) + _host(dep, dec + n * m)
    t, t_own, t0 = (w[0] * times[0] + w[1] * times[1], w[2] * times[2] + w[3] * times[3],
                    times[4])
    fits = B <= np.asarray(max_batch(dep, inp + out), float)
    S = V.scalar_or_array
    return SteadyState(
        concurrency=S(B), input_tokens=S(inp), output_tokens=S(out), cached_tokens=S(c),
        context_tokens=S(ctx), arrivals_per_step=S(a), prefill_tokens_per_step=S(a * new),
        chunks_per_prompt=S(k), tpot_s=S(t), decode_only_tpot_s=S(t0),
        ttft_s=S(k * t_own + dep.efficiency.request_overhead_s),
        output_tokens_per_s_per_device=S(B / t / dep.n_devices),
        requests_per_s=S(a / t), request_latency_s=S(out * t),
        tokens_per_s_per_user=S(1.0 / t), fits=bool(fits) if np.ndim(fits) == 0 else fits,
        efficiency=dep.efficiency.label)


def chunk_counts(c: Any) -> tuple[np.ndarray, np.ndarray]:
    """Whole prefill chunks of the steps that make up a mean of ``c`` chunks a step.

    A step carries whole chunks, so a mean of :math:`c` a step is steps of
    :math:`\\lfloor c \\rfloor` and :math:`\\lfloor c \\rfloor + 1` chunks in the shares
    :math:`1 - p` and :math:`p = c - \\lfloor c \\rfloor`; a step that carries the request's
    own chunk carries at least that one: :math:`c_\\mathrm{own} = \\max(c, 1)` likewise.

    Returns
    -------
    (counts, shares) : numpy.ndarray
        Stacked on a first axis of five: the two steps of the mean, the two of the own
        step, and the decode-only step (0 chunks); the shares weigh the pairs (1 and 0 for
        the decode-only step).

    Notes
    -----
    The mean step time is :math:`(1 - p)\\,t(\\lfloor c \\rfloor) + p\\,t(\\lfloor c \\rfloor + 1)`,
    not :math:`t(c)`: at light load most steps carry no prompt and read only their decodes'
    experts, and the few that carry one pay for it whole (a mixture of experts reads nearly
    every expert for a 7,000-token prompt; spread over a hundred steps as 70 tokens each,
    it would read them every step).
    """
    c = np.asarray(c, float)
    own = np.maximum(c, 1.0)
    lo, lo_o = np.floor(c), np.floor(own)
    p, p_o = c - lo, own - lo_o
    counts = np.stack([lo, lo + 1.0, lo_o, lo_o + 1.0, 0.0 * c])
    shares = np.stack([1.0 - p, p, 1.0 - p_o, p_o, 0.0 * c + 1.0])
    return counts, shares


def _host(dep: Deployment, rows: Any) -> Any:
    """The host's time for a step that samples ``rows`` tokens (every micro-batch's) [s]:
    :func:`~tokenomics.physics.engine.host_seconds` at the deployment's efficiency."""
    if dep.efficiency.token_overhead_s == 0.0:
        return 0.0
    return host_seconds(dep.efficiency, rows, dep.dp_attention)


def pipeline_microbatches(dep: Deployment, B: Any) -> tuple[Any, str]:
    """(micro-batches :math:`m`, phase) of a pipeline in steady state.

    A replica of ``pp`` stages keeps :math:`m = \\min(pp, B)` micro-batches of :math:`B/m`
    sequences in flight. A stage runs :math:`1/pp` of the layers, so one stage time is
    :math:`t(B/m)/pp` for :math:`t` the whole model's step on ``tp`` devices, and each
    micro-batch passes the ``pp`` stages in turn: a token per sequence every
    :math:`t(B/m)`. With :math:`B \\ge pp` every stage is busy; below, :math:`pp - B` of them
    idle at any time (the bubble), and per device the throughput falls by :math:`B/pp`.
    The host samples every micro-batch's tokens in the cycle
    (:func:`~tokenomics.physics.engine.host_seconds` of all :math:`B`). One stage
    (``pp = 1``): ``(1, "prefill")``; a pipeline's collectives count ``pp`` sends a cycle
    (``"decode"``).
    """
    if dep.pp == 1:
        return 1.0, "prefill"
    return np.minimum(np.asarray(B, float), float(dep.pp)), "decode"


def _shares(B: Any, inp: Any, out: Any, c: Any, k: Any) -> tuple[Any, ...]:
    """(mean context, arrivals a step, decodes a step, tokens a chunk, cached under a
    chunk) of :func:`steady_state`'s mixed step (its notes), for floats or arrays."""
    new = inp - c
    a = B / out
    # the a sequences admitted this step emit from prefill
    return inp + out / 2.0, a, B - a, new / k, c + new * (k - 1) / (2 * k)


def _scalar(dep: Any, concurrency: Any, inp: Any, out: Any, c: Any, s: Any,
            pool: Any) -> SteadyState | None:
    """The scalar fast path of :func:`steady_state`: whole-number inputs on a deployment with
    a :class:`~tokenomics.physics.plan.MixedPlan` (after its warm-up), the same arithmetic in
    plain floats; None (take the full path) for anything else, errors included."""
    whole = int   # bool and numpy integers take the full path
    if not (type(inp) is whole and type(out) is whole and type(c) is whole
            and (s is None or type(s) is whole) and isinstance(dep, Deployment)
            and (type(concurrency) is whole
                 or (type(concurrency) is str and concurrency == "max"))
            and type(pool) is str and pool in ("colocated", "decode") and dep.pp == 1
            and 1 <= inp <= V.MAX_COUNT and 1 <= out <= V.MAX_COUNT and 0 <= c < inp
            and (s is None or 1 <= s <= V.MAX_COUNT)
            and (type(concurrency) is str or concurrency <= V.MAX_COUNT)
            and (pool == "colocated" or out >= 2)
            and (inp + out <= dep.model.max_context or dep.allow_beyond_max_context)):
        return None
    plan = mixed_plan(dep, mixed_step_seconds)
    if plan is None:
        return None
    limit = plan.max_batch(float(inp + out))
    if limit is None or (concurrency == "max" and limit < 1):
        return None
    B = float(limit) if concurrency == "max" else float(concurrency)
    if B < 1:
        return None
    ctx = inp + out / 2.0
    if pool == "decode":
        (t,) = plan.times_at([(B, ctx, 1.0, 0.0, 0.0)])
        a = B / (out - 1.0)
        return _state(dep, B, (inp, out, c, ctx), (a, 0.0, 0.0), (t, t, 0.0, out - 1.0),
                      B <= limit)
    new = float(inp - c)
    k = 1.0 if s is None else float(math.ceil(new / s))
    ctx, a, dec, chunk, chunk_c = _shares(B, inp, out, c, k)
    # whole chunks a step (chunk_counts): the mean step, the own step, the decode-only step
    cpu = a * k
    lo, lo_o = math.floor(cpu), math.floor(max(cpu, 1.0))
    p, p_o = cpu - lo, max(cpu, 1.0) - lo_o
    t_lo, t_hi, to_lo, to_hi, t0 = plan.times_at(
        [(dec, ctx, chunk, chunk_c, float(lo)), (dec, ctx, chunk, chunk_c, lo + 1.0),
         (dec, ctx, chunk, chunk_c, float(lo_o)), (dec, ctx, chunk, chunk_c, lo_o + 1.0),
         (dec, ctx, 1.0, 0.0, 0.0)])
    t, t_own = (1.0 - p) * t_lo + p * t_hi, (1.0 - p_o) * to_lo + p_o * to_hi
    ttft = k * t_own + dep.efficiency.request_overhead_s
    return _state(dep, B, (inp, out, c, ctx), (a, a * new, k), (t, t0, ttft, float(out)),
                  B <= limit)


def _state(dep: Deployment, B: float, lengths: tuple[int, int, int, float],
           flow: tuple[float, float, float], times: tuple[float, float, float, float],
           fits: bool) -> SteadyState:
    """A scalar :class:`SteadyState` from the fast path's numbers: ``lengths`` (input,
    output, cached, mean context [token]), ``flow`` (arrivals, prompt tokens and chunks a
    step), ``times`` (TPOT, the decode-only step, TTFT [s], steps a request lives)."""
    inp, out, c, ctx = lengths
    a, prefill, k = flow
    t, t0, ttft, lives = times
    return made(SteadyState, dict(
        concurrency=B, input_tokens=float(inp), output_tokens=float(out),
        cached_tokens=float(c), context_tokens=ctx, arrivals_per_step=a,
        prefill_tokens_per_step=prefill, chunks_per_prompt=k, tpot_s=t,
        decode_only_tpot_s=t0, ttft_s=ttft,
        output_tokens_per_s_per_device=B / t / dep.n_devices, tokens_per_s_per_user=1.0 / t,
        requests_per_s=a / t, request_latency_s=lives * t, fits=bool(fits),
        efficiency=dep.efficiency.label))


@inputs(dep="deployment")
def steady_state_over(dep: Deployment, concurrency: Any, lengths: Any, *,
                      chunk_tokens: Any = None, pool: str = "colocated") -> SteadyState:
    """:func:`steady_state` over a distribution of request lengths instead of one shape.

    Parameters
    ----------
    dep : Deployment
        One replica (pipelines as in :func:`steady_state`).
    concurrency : int, array_like or "max"
        Sequences in flight :math:`B`; ``"max"``: the largest that fits at
        :math:`\\lceil \\mathbb E[I] + \\mathbb E[O] \\rceil` tokens each.
    lengths : RequestLengths or str
        The workload's input and output lengths
        (:class:`~tokenomics.data.lengths.RequestLengths`), or a bundled workload's name
        (:func:`tokenomics.request_lengths`, e.g. ``"mlperf-llama2-70b"``).
    chunk_tokens : int, optional
        Largest prefill chunk of one prompt per step [token]; None: unchunked.
    pool : {"colocated", "decode"}
        As in :func:`steady_state`.

    Returns
    -------
    SteadyState
        Broadcast over ``concurrency``; ``input_tokens`` and ``output_tokens`` are the means,
        ``context_tokens`` the decoding slots' time-averaged context.

    Notes
    -----
    With :math:`B` slots, a step admits :math:`a = B / \\mathbb E[O]` requests (their prompts
    :math:`I_i` with probability :math:`u_i`, each in :math:`k_i = \\lceil I_i / S \\rceil`
    chunks) beside :math:`B - a` decodes whose contexts are the pairs :math:`(I_i, O_j)` at
    :math:`I_i + O_j/2`, weighted by the time each holds a slot, :math:`u_i v_j O_j /
    \\mathbb E[O]` (:meth:`~tokenomics.data.lengths.RequestLengths.decode_nodes`). The
    step's work is the sum of what its sequences do, the weights read once
    (:func:`tokenomics.physics.operators.mixed_costs_over`): quadratic prompt attention,
    windows and long outputs count at their real weight, not at the mean.
    :math:`\\mathrm{TTFT} = \\mathbb E[k]\\, t_\\mathrm{own} + t_\\mathrm{req}`. With one node
    each (:meth:`~tokenomics.data.lengths.RequestLengths.fixed`) this is
    :func:`steady_state`.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-2-70b", "h200", weight_dtype="fp8", kv_dtype="fp8",
    ...                   compute_dtype="fp8")
    >>> r = steady_state_over(d, 256, "mlperf-llama2-70b")
    >>> round(float(r.input_tokens), 1), round(float(r.context_tokens))   # E[I]; slot context
    (222.3, 457)
    """
    from tokenomics.data.lengths import request_lengths

    check_deployment(dep, "steady_state_over")
    if not isinstance(pool, str) or pool not in ("colocated", "decode"):
        raise TokenomicsError(f"pool must be 'colocated' or 'decode', got {pool!r}")
    dist = request_lengths(lengths)
    s = None if chunk_tokens is None else float(V.single_whole(chunk_tokens, "chunk_tokens"))
    i_n, u = (np.array(x) for x in (dist.input_nodes, dist.input_weights))
    mean_i, mean_o = dist.input_mean, dist.output_mean
    V.context_within(dep.model, np.max(i_n) + np.max(dist.output_nodes),
                     dep.allow_beyond_max_context)
    held = float(math.ceil(mean_i + mean_o))           # a sequence's reservation, whole tokens
    B = _concurrency(dep, concurrency, np.asarray(held))
    ctx, w = dist.decode_nodes()
    m, phase = pipeline_microbatches(dep, B)
    B_, m_ = np.broadcast_arrays(np.asarray(B, float), np.asarray(m, float))
    fits = B_ <= float(max_batch(dep, held))
    Sf = V.scalar_or_array
    if pool == "decode":
        if mean_o < 2:
            raise TokenomicsError("a decode pool needs a mean output of at least 2 tokens")
        t = np.asarray(mixed_step_seconds_over(
            dep, B_ / m_, (ctx, w), (np.ones(1), np.zeros(1), np.zeros((*B_.shape, 1))),
            phase, 0.0)) + _host(dep, B_)
        a = B_ / (mean_o - 1.0)
        zero = np.zeros_like(t)
        return SteadyState(
            concurrency=Sf(B_), input_tokens=mean_i, output_tokens=mean_o, cached_tokens=0.0,
            context_tokens=dist.slot_context_mean, arrivals_per_step=Sf(a),
            prefill_tokens_per_step=Sf(zero), chunks_per_prompt=0.0, tpot_s=Sf(t),
            decode_only_tpot_s=Sf(t), ttft_s=Sf(zero),
            output_tokens_per_s_per_device=Sf(B_ / t / dep.n_devices),
            tokens_per_s_per_user=Sf(1.0 / t), requests_per_s=Sf(a / t),
            request_latency_s=Sf((mean_o - 1.0) * t), fits=bool(fits) if fits.ndim == 0
            else fits, efficiency=dep.efficiency.label)
    k = np.ones_like(i_n) if s is None else np.ceil(i_n / s)
    a = B_ / mean_o
    dec = B_ - a
    mix = u * k / (u @ k)                               # each prompt kind's share of chunks
    n, sh = chunk_counts(a * float(u @ k) / m_)         # whole chunks a micro-batch step
    T, c = i_n / k, i_n * (k - 1) / (2 * k)
    times = np.asarray(mixed_step_seconds_over(
        dep, np.stack([dec / m_] * 5), (ctx, w), (T, c, n[..., None] * mix), phase,
        0.0)) + _host(dep, dec + n * m_)
    t, t_own, t0 = (sh[0] * times[0] + sh[1] * times[1], sh[2] * times[2] + sh[3] * times[3],
                    times[4])
    mean_k = float(u @ k)
    return SteadyState(
        concurrency=Sf(B_), input_tokens=mean_i, output_tokens=mean_o, cached_tokens=0.0,
        context_tokens=dist.slot_context_mean, arrivals_per_step=Sf(a),
        prefill_tokens_per_step=Sf(a * mean_i), chunks_per_prompt=mean_k, tpot_s=Sf(t),
        decode_only_tpot_s=Sf(t0), ttft_s=Sf(mean_k * t_own + dep.efficiency.request_overhead_s),
        output_tokens_per_s_per_device=Sf(B_ / t / dep.n_devices),
        tokens_per_s_per_user=Sf(1.0 / t), requests_per_s=Sf(a / t),
        request_latency_s=Sf(mean_o * t), fits=bool(fits) if fits.ndim == 0 else fits,
        efficiency=dep.efficiency.label)
