"""Prefill (TTFT), midfill and decode step time and throughput for a deployment.

Notes
-----
Per device, with :math:`P` the dense peak of the compute format times MFU and :math:`\\beta`
the memory bandwidth times MBU, a step's time is the sum over operators of their roofline
times, plus communication and a fixed overhead:

.. math::
   t = \\sum_{o} \\max\\!\\left(\\frac{F_o}{tp \\cdot P}, \\frac{Q_o}{tp \\cdot \\beta}\\right)
       + t_\\mathrm{comm} + t_\\mathrm{step} + L\\,t_\\mathrm{layer}.

The single maximum over the totals, :math:`\\max(\\sum F / P, \\sum Q / \\beta)`, is a lower
bound that assumes perfect overlap of every operator with every other; it is reported as
``lower_bound_s``.

Communication is the step's collectives (:func:`tokenomics.physics.collectives.step_comm`:
tensor-parallel all-reduces, expert all-to-alls, pipeline sends), less what ``comm_overlap``
hides; the step engine (:mod:`tokenomics.physics.engine`) adds it. Pipeline parallelism is modelled as ``pp`` micro-batches
of ``B/pp`` sequences in flight: each decode cycle reads every stage's weights once per
micro-batch, so a token's step time is the whole model's time at batch ``B/pp`` over
``tp`` devices. Prefill latency passes through the stages in sequence (pipeline parallelism
does not shorten it).

Decode at context :math:`C`: each sequence's cache holds :math:`C` tokens, all read in the
step (windowed layers: at most their window), and the new token's KV is written.

References
----------
.. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023.
.. [2] J. Austin et al., "How to Scale Your Model", 2025, "All About Transformer Inference".
   https://jax-ml.github.io/scaling-book/inference/
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment, check_deployment
from tokenomics.physics.engine import (
    OnOOM,
    StepResult,
    check_on_oom,
    collectives_s,
    operator_times,
    step_result,
)
from tokenomics.physics.grid import GRID_FIELDS, GRID_POINTS, decode_grid
from tokenomics.physics.memory import ensure_fits, memory_fit
from tokenomics.physics.operators import step_costs
from tokenomics.physics.plan import decode_grid_plan, decode_plan, prefill_plan


@inputs(dep="deployment")
def decode(dep: Deployment, batch: Any, context_tokens: Any, on_oom: OnOOM = "raise",
           new_tokens: Any = 1) -> StepResult:
    """Decode step time and throughput at a batch and context.

    Parameters
    ----------
    dep : Deployment
    batch : int or array_like
        Concurrent sequences on the replica, >= 1.
    context_tokens : int or array_like
        Tokens in each sequence's KV cache [token], >= 1; broadcast with ``batch``.
    on_oom : {"raise", "mark"}
        Points that do not fit in memory raise :class:`~tokenomics.core.errors.DoesNotFitError`
        (default) or are computed and flagged ``fits == False``.
    new_tokens : int or array_like
        Tokens each sequence feeds through the model in the step (default 1). A speculative
        verification pass feeds ``k + 1`` (see :func:`tokenomics.speculative_decode`); the
        tokens-per-second figures then count every fed token, accepted or not.

    Returns
    -------
    StepResult
        ``step_time_s`` [s], ``tokens_per_s_per_user`` [token/s],
        ``tokens_per_s_per_device`` [token/s], ``bound``... Scalars in, floats out.
        On hardware that publishes no peak for the compute format (HyperAccel Bertha,
        Vera Rubin), each operator is timed by its memory traffic alone and
        ``compute_time_s`` is NaN: ``step_time_s`` is then a lower bound (exact while the
        step is memory-bound, i.e. at small batch).

    Notes
    -----
    A scalar call (Python ``int`` batch and context, one new token) on a dense deployment
    takes a fast path after the deployment's first :data:`~tokenomics.physics.plan.WARM_UP_CALLS`
    scalar calls: its :class:`~tokenomics.physics.plan.DecodePlan`, equal to this engine to
    1e-12 and checked against it when built (tests/physics/test_plan.py). An array call of
    :data:`~tokenomics.physics.grid.GRID_POINTS` points or more (one new token) is timed from
    the same plan by :func:`~tokenomics.physics.grid.decode_grid`, equal to the engine to
    1e-12 (tests/physics/test_grid.py). Sliding windows, linear or sparse attention and
    pipeline stages keep the engine in both cases.

    References
    ----------
    .. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
           arXiv:2211.05102.
    .. [2] J. Austin et al., "How to Scale Your Model", 2025, "All About Transformer Inference".

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = tk.decode(d, batch=1, context_tokens=1024)
    >>> r.bound, round(r.step_time_s * 1e3, 2)   # (15.0 GB weights + 0.13 GB KV) / 3.35 TB/s
    ('memory', 4.52)
    """
    if (type(batch) is int and type(context_tokens) is int and type(new_tokens) is int
            and new_tokens == 1 and 1 <= batch <= V.MAX_COUNT
            and 1 <= context_tokens <= V.MAX_COUNT and type(on_oom) is str
            and on_oom in ("raise", "mark") and isinstance(dep, Deployment)
            and (context_tokens <= dep.model.max_context or dep.allow_beyond_max_context)):
        plan = decode_plan(dep, decode_reference)   # the scalar fast path (physics/plan.py)
        if plan is not None:
            r = plan(batch, context_tokens)
            if r.fits or on_oom == "mark":
                return r
    elif (type(new_tokens) is int and new_tokens == 1 and isinstance(dep, Deployment)
          and (max(_points(batch), _points(context_tokens)) >= GRID_POINTS
               or dep.__dict__.get("_decode_plan") is not None)):
        r = _decode_grid(dep, batch, context_tokens, on_oom)
        if r is not None:
            return r
    return decode_reference(dep, batch, context_tokens, on_oom, new_tokens)


def _points(x: Any) -> int:
    """Points an array argument holds, cheaply (1 for anything but an array or a list)."""
    if isinstance(x, np.ndarray):
        return int(x.size)
    return len(x) if isinstance(x, list | tuple) else 1


_BOUNDS = np.array(["memory", "compute"])


def _decode_grid(dep: Deployment, batch: Any, context_tokens: Any,
                 on_oom: OnOOM) -> StepResult | None:
    """A decode over many points from the deployment's plan
    (:func:`~tokenomics.physics.grid.decode_grid`), or None where the full engine must
    answer: no plan, too few points to build one (a plan already built serves any array),
    or a point that does not fit with ``on_oom="raise"`` (the engine's error names it)."""
    check_deployment(dep, "decode")
    check_on_oom(on_oom)
    B = V.counts(batch, "batch")
    C = V.counts(context_tokens, "context_tokens", unit="token")
    V.context_within(dep.model, C, dep.allow_beyond_max_context)
    shape = np.broadcast_shapes(B.shape, C.shape)
    if math.prod(shape) < GRID_POINTS and dep.__dict__.get("_decode_plan") is None:
        return None                  # too few points to pay for building the plan
    plan = decode_grid_plan(dep, decode_reference)
    if plan is None:
        return None
    g = decode_grid(plan, B, C)
    if on_oom == "raise" and not g["fits"].all():
        return None
    time = g["time_s"]
    b = np.broadcast_to(B, shape).ravel()
    S = V.scalar_or_array                # 0-d results as floats, as the engine gives them
    f = {k: S(g[k].reshape(shape)) for k in GRID_FIELDS}
    bound = _BOUNDS.take(g["compute_bound"].view(np.uint8)).reshape(shape)
    fits = g["fits"].reshape(shape)
    return StepResult(
        phase="decode", **f, bound=bound.item() if not shape else bound,
        tokens_per_s_per_user=S((1.0 / time).reshape(shape)),
        tokens_per_s_per_device=S((b / time / dep.n_devices).reshape(shape)),
        fits=bool(fits) if not shape else fits, batch=S(np.broadcast_to(B, shape)),
        context_tokens=S(np.broadcast_to(C, shape)),
        new_tokens=S(np.broadcast_to(1.0, shape)), efficiency=dep.efficiency.label)


def decode_reference(dep: Deployment, batch: Any, context_tokens: Any, on_oom: OnOOM = "raise",
                     new_tokens: Any = 1) -> StepResult:
    """:func:`decode` through the full engine, for any inputs (arrays, ``new_tokens`` > 1);
    the reference the scalar fast path (:mod:`tokenomics.physics.plan`) is checked against."""
    check_deployment(dep, "decode")
    check_on_oom(on_oom)
    B = V.counts(batch, "batch")
    C = V.counts(context_tokens, "context_tokens", unit="token")
    V.context_within(dep.model, C, dep.allow_beyond_max_context)
    T = V.counts(new_tokens, "new_tokens", unit="token")
    fit = memory_fit(dep, B, C + T - 1, tokens_per_step=B * T)
    if on_oom == "raise":
        ensure_fits(dep, fit, "decode", batch=B, context_tokens=C)
    b = B / dep.pp
    costs = step_costs(dep, b, T, C, T)
    # Without a published compute peak, decode is timed by memory traffic: a lower bound.
    t = operator_times(dep, costs, memory_only_if_unpublished=True)
    comm = collectives_s(dep, b, T, T, "decode")
    return step_result(dep, "decode", t, comm, point=(B, C, T), tokens_per_step=B * T,
                       fits=fit.fits, sampled_rows=B * T)


@inputs(dep="deployment")
def prefill(dep: Deployment, prompt_tokens: Any, batch: Any = 1, cached_tokens: Any = 0,
            on_oom: OnOOM = "raise", microbatches: int = 1) -> StepResult:
    """Prefill (TTFT) of ``batch`` prompts, optionally on a cached prefix (midfill).

    Parameters
    ----------
    dep : Deployment
    prompt_tokens : int or array_like
        Prompt length per sequence, cached prefix included [token], >= 1.
    batch : int or array_like
        Prompts processed together, >= 1.
    cached_tokens : int or array_like
        Prefix tokens whose KV is already cached (prefix caching, an agent's earlier steps)
        [token], 0 <= cached < prompt. With a cache hit the step computes only the new
        tokens and reads the prefix's KV instead of recomputing it (midfill).
    on_oom : {"raise", "mark"}
    microbatches : int
        Micro-batches the batch is split into on its way through ``pp`` pipeline stages
        (default 1): the prefill takes :math:`(m + pp - 1)` stage times of a
        :math:`B/m` micro-batch, the bubble :func:`tokenomics.pipeline_bubble_fraction` gives.

    Returns
    -------
    StepResult
        ``time_s`` is the TTFT [s] (the step also produces the first token's logits);
        ``phase`` is ``"midfill"`` when any prefix is cached.

    References
    ----------
    .. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
           arXiv:2211.05102.

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> r = tk.prefill(d, 8192)
    >>> r.bound
    'compute'
    """
    if (type(prompt_tokens) is int and type(batch) is int and type(cached_tokens) is int
            and type(microbatches) is int and microbatches == 1 and 1 <= batch <= V.MAX_COUNT
            and 0 <= cached_tokens < prompt_tokens <= V.MAX_COUNT and type(on_oom) is str
            and on_oom in ("raise", "mark") and isinstance(dep, Deployment)
            and (prompt_tokens <= dep.model.max_context or dep.allow_beyond_max_context)):
        plan = prefill_plan(dep, prefill_reference)   # the scalar fast path (physics/plan.py)
        if plan is not None:
            r = plan(batch, prompt_tokens, cached_tokens)
            if r.fits or on_oom == "mark":
                return r
    return prefill_reference(dep, prompt_tokens, batch, cached_tokens, on_oom, microbatches)


def prefill_reference(dep: Deployment, prompt_tokens: Any, batch: Any = 1,
                      cached_tokens: Any = 0, on_oom: OnOOM = "raise",
                      microbatches: int = 1) -> StepResult:
    """:func:`prefill` through the full engine, for any inputs; the reference the scalar
    fast path (:mod:`tokenomics.physics.plan`) is checked against."""
    check_deployment(dep, "prefill")
    check_on_oom(on_oom)
    P = V.counts(prompt_tokens, "prompt_tokens", unit="token")
    B = V.counts(batch, "batch")
    c = V.counts(cached_tokens, "cached_tokens", minimum=0, unit="token")
    if np.any(c >= P):
        cb, pb = np.broadcast_arrays(c, P)
        bad = cb >= pb
        raise TokenomicsError(
            f"cached_tokens must be below prompt_tokens (at least one new token to compute), "
            f"got cached={_first(cb[bad])} for a prompt of {_first(pb[bad])}")
    V.context_within(dep.model, P, dep.allow_beyond_max_context, "prompt_tokens")
    T = P - c
    fit = memory_fit(dep, B, P, tokens_per_step=B * T)
    if on_oom == "raise":
        ensure_fits(dep, fit, "prefill", batch=B, prompt_tokens=P)
    m = microbatches
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise TokenomicsError(f"microbatches must be a positive integer, got {m!r}")
    costs = step_costs(dep, B / m, T, c, 1.0)
    t = operator_times(dep, costs)
    comm = collectives_s(dep, B / m, T, 1.0, "prefill")
    # m micro-batches through pp stages: (m + pp - 1) stage times (GPipe), a stage being
    # 1/pp of the model; each device does 1/pp of the layers for every micro-batch.
    span = (m + dep.pp - 1) / dep.pp
    t = replace(t, roofline_s=t.roofline_s * span, compute_s=t.compute_s * span,
                memory_s=t.memory_s * span, lower_bound_s=t.lower_bound_s * span,
                flops=t.flops * m / dep.pp, bytes=t.bytes * m / dep.pp)
    phase = "midfill" if np.any(c > 0) else "prefill"
    return step_result(dep, phase, t, comm * span, point=(B, P, T), tokens_per_step=B * T,
                       fits=fit.fits, sampled_rows=B)


@inputs(dep="deployment")
def operator_table(dep: Deployment, phase: str = "decode", batch: int = 1,
                   context_tokens: int | None = None, prompt_tokens: int | None = None,
                   cached_tokens: int = 0) -> pd.DataFrame:
    """Per-operator FLOPs, bytes, intensity, bound and time of one step on one device.

    Parameters
    ----------
    dep : Deployment
    phase : {"decode", "prefill", "midfill"}
    batch : int
        Sequences in the step, >= 1 (one value: the table is one step's).
    context_tokens : int
        Decode: tokens in the cache [token].
    prompt_tokens, cached_tokens : int
        Prefill/midfill: prompt length and cached prefix [token].

    Returns
    -------
    pandas.DataFrame
        Columns ``operator``, ``flops``, ``weight_bytes``, ``kv_bytes``, ``act_bytes``,
        ``bytes``, ``intensity_flop_per_byte``, ``ridge_flop_per_byte``, ``bound``,
        ``compute_time_s``, ``memory_time_s``, ``time_s``, ``time_share`` (per device), one
        row per operator. The step's totals (the same columns summed; ``bound`` the step's,
        intensity total FLOPs over total bytes) are in ``attrs["total"]`` (a dict), not among
        the rows, so ``t.time_s.sum()`` is the step's roofline time.

    References
    ----------
    .. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
           arXiv:2211.05102.

    Examples
    --------
    >>> import tokenomics as tk
    >>> t = operator_table(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4), "decode",
    ...                    batch=1, context_tokens=4096)
    >>> t.set_index("operator").loc["attn_core", "bound"]
    'memory'
    >>> t.attrs["total"]["bound"]
    'memory'
    """
    if not isinstance(phase, str) or phase not in ("decode", "prefill", "midfill"):
        raise TokenomicsError(f"phase must be decode, prefill or midfill, got {phase!r}")
    batch = V.single_whole(batch, "batch")   # one step's table: one batch, one length
    if phase == "decode":
        if context_tokens is None:
            raise TokenomicsError("decode needs context_tokens")
        C = V.single_whole(context_tokens, "context_tokens", unit="token")
        V.context_within(dep.model, np.asarray(C), dep.allow_beyond_max_context)
        costs = step_costs(dep, batch / dep.pp, 1.0, float(C), 1.0)
    else:
        if prompt_tokens is None:
            raise TokenomicsError(f"{phase} needs prompt_tokens")
        P = V.single_whole(prompt_tokens, "prompt_tokens", unit="token")
        V.context_within(dep.model, np.asarray(P), dep.allow_beyond_max_context,
                         "prompt_tokens")
        cached_tokens = V.single_whole(cached_tokens, "cached_tokens", minimum=0, unit="token")
        if not (0 <= cached_tokens < float(P)):
            raise TokenomicsError(f"cached_tokens must be in [0, prompt_tokens), got "
                                  f"{cached_tokens!r}")
        costs = step_costs(dep, float(batch), float(P) - cached_tokens, float(cached_tokens),
                           1.0)
    t = operator_times(dep, costs)
    ridge = dep.hardware.peak(dep.compute_dtype) * dep.efficiency.mfu / (
        dep.hardware.mem_bw_bytes_per_s * dep.efficiency.mbu)
    rows = []
    for op in costs:
        tc, tm, tt = (float(x) for x in t.per_op[op.name])
        f = float(op.flops) / dep.tp
        q = float(op.bytes) / dep.tp
        rows.append(dict(
            operator=op.name, flops=f, weight_bytes=float(op.weight_bytes) / dep.tp,
            kv_bytes=float(op.kv_bytes) / dep.tp, act_bytes=float(op.act_bytes) / dep.tp,
            bytes=q, intensity_flop_per_byte=f / q if q else np.inf,
            ridge_flop_per_byte=ridge, bound="compute" if tc > tm else "memory",
            compute_time_s=tc, memory_time_s=tm, time_s=tt))
    df = pd.DataFrame(rows)
    df = df[(df.flops > 0) | (df.bytes > 0)].reset_index(drop=True)
    tot = float(df.time_s.sum())
    df["time_share"] = df.time_s / tot if tot else 0.0
    total = dict(operator="total", flops=df.flops.sum(), weight_bytes=df.weight_bytes.sum(),
                 kv_bytes=df.kv_bytes.sum(), act_bytes=df.act_bytes.sum(), bytes=df.bytes.sum(),
                 intensity_flop_per_byte=df.flops.sum() / df.bytes.sum(),
                 ridge_flop_per_byte=ridge, bound=str(t.bound),
                 compute_time_s=df.compute_time_s.sum(), memory_time_s=df.memory_time_s.sum(),
                 time_s=tot, time_share=1.0)
    df.attrs["total"] = {k: (v if isinstance(v, str) else float(v)) for k, v in total.items()}
    return df


def _first(x: Any) -> Any:
    v = np.ravel(np.asarray(x))[0]
    return int(v) if float(v).is_integer() else float(v)


__all__ = ["decode", "decode_reference", "prefill", "prefill_reference", "operator_table"]
