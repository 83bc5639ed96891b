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

Communication is **not modelled in this release**: ``comm_time_s`` is a named zero term, to
be filled by the parallelism module. Pipeline parallelism is modelled as ``pp`` micro-batches
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

from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.deployment import Deployment
from tokenomics.physics.collectives import step_comm
from tokenomics.physics.memory import ensure_fits, memory_fit
from tokenomics.physics.operators import OPERATORS, OpCost, step_costs

OnOOM = Literal["raise", "mark"]


@dataclass(frozen=True)
class StepResult:
    """Timing of one forward step, broadcast over the inputs. Times per step [s].

    Attributes
    ----------
    phase : str
        ``"decode"``, ``"prefill"`` or ``"midfill"``.
    time_s : array
        Step time: ``roofline_s + comm_time_s + overhead_s`` [s]. For prefill, the TTFT.
    roofline_s : array
        Sum over operators of max(compute time, memory time) [s].
    lower_bound_s : array
        max(total compute time, total memory time) [s] (perfect overlap).
    compute_time_s, memory_time_s : array
        Totals of the two roofline terms over operators [s].
    comm_time_s : array
        Communication time: **zero in this release** (not modelled yet) [s].
    overhead_s : array
        Fixed step and per-layer overhead from the efficiency model [s].
    flops_per_device, bytes_per_device : array
        Work of one device in the step [FLOP], [B].
    bound : array of str
        ``"compute"`` when compute-bound operators take most of the roofline time, else
        ``"memory"``.
    tokens_per_s_per_user : array
        Decode: new tokens per second of one sequence, ``1 / time_s`` [token/s].
        Prefill: prompt tokens per second of one sequence [token/s].
    tokens_per_s_per_device : array
        Tokens (generated in decode, prompt in prefill) per second per device [token/s].
    fits : array of bool
        Whether the point fits in memory.
    batch, context_tokens, new_tokens : array
        The inputs, broadcast.
    """

    phase: str
    time_s: Any
    roofline_s: Any
    lower_bound_s: Any
    compute_time_s: Any
    memory_time_s: Any
    comm_time_s: Any
    overhead_s: Any
    flops_per_device: Any
    bytes_per_device: Any
    bound: Any
    tokens_per_s_per_user: Any
    tokens_per_s_per_device: Any
    fits: Any
    batch: Any
    context_tokens: Any
    new_tokens: Any

    @property
    def step_time_s(self) -> Any:
        """Alias of ``time_s`` (decode vocabulary)."""
        return self.time_s

    @property
    def ttft_s(self) -> Any:
        """Alias of ``time_s`` (prefill vocabulary: time to first token)."""
        return self.time_s

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame, one row per point, unit-suffixed columns.

        Besides ``time_s`` it carries the phase's own name for it: ``step_time_s`` (decode)
        or ``ttft_s`` (prefill, midfill).
        """
        shape = np.shape(self.time_s)
        cols: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            cols[f.name] = np.ravel(np.broadcast_to(v, shape)) if f.name != "phase" else \
                [v] * int(np.prod(shape))
        cols["step_time_s" if self.phase == "decode" else "ttft_s"] = cols["time_s"]
        return pd.DataFrame(cols)


def _time(dep: Deployment, costs: list[OpCost], shard: int) -> dict[str, Any]:
    """Per-operator and total times on one device."""
    eff = dep.efficiency
    peak = dep.hardware.peak(dep.compute_dtype) * eff.mfu
    bw = dep.hardware.mem_bw_bytes_per_s * eff.mbu
    per_op = {}
    total_c: Any = 0.0
    total_m: Any = 0.0
    roof: Any = 0.0
    t_compute_bound: Any = 0.0
    flops: Any = 0.0
    bytes_: Any = 0.0
    for op in costs:
        tc = op.flops / (shard * peak)
        tm = op.bytes / (shard * bw)
        t = np.maximum(tc, tm)
        per_op[op.name] = (tc, tm, t)
        total_c = total_c + tc
        total_m = total_m + tm
        roof = roof + t
        t_compute_bound = t_compute_bound + np.where(tc > tm, t, 0.0)
        flops = flops + op.flops / shard
        bytes_ = bytes_ + op.bytes / shard
    return dict(per_op=per_op, compute=total_c, memory=total_m, roofline=roof,
                lower=np.maximum(total_c, total_m), flops=flops, bytes=bytes_,
                bound=np.where(t_compute_bound > 0.5 * roof, "compute", "memory"))


def _comm(dep: Deployment, t: dict[str, Any], batch: Any, new_tokens: Any, logits: Any,
          phase: str) -> Any:
    """Exposed communication time: total minus what overlap hides behind compute."""
    costs = step_comm(dep, batch, new_tokens, logits, phase)
    total = sum((c.time_s for c in costs), np.zeros_like(np.asarray(t["roofline"], float)))
    hidden = np.minimum(dep.comm_overlap * total, t["roofline"])
    return total - hidden


def _overhead_s(dep: Deployment) -> float:
    """Fixed time per step from the efficiency model [s]."""
    eff = dep.efficiency
    return eff.step_overhead_s + eff.layer_overhead_s * dep.model.num_layers


def _step_seconds(dep: Deployment, costs: list[OpCost], batch: Any, new_tokens: Any,
                  logits: Any, phase: str) -> np.ndarray:
    """Step time of given operator costs, unvalidated: roofline + exposed comm + overhead."""
    t = _time(dep, costs, dep.tp)
    comm = _comm(dep, t, batch, new_tokens, logits, phase)
    return np.asarray(t["roofline"] + comm + _overhead_s(dep), float)


def _finish(dep: Deployment, phase: str, t: dict[str, Any], B: Any, C: Any, T: Any,
            tokens_per_step: Any, fits: Any, comm: Any) -> StepResult:
    comm = np.broadcast_to(np.asarray(comm, float), np.shape(t["roofline"]))
    overhead = _overhead_s(dep) + 0 * comm
    time_s = t["roofline"] + comm + overhead
    per_user = T / time_s
    per_dev = tokens_per_step / time_s / dep.n_devices
    shape = np.shape(time_s)
    S = V.scalar_or_array
    return StepResult(
        phase=phase, time_s=S(time_s), roofline_s=S(t["roofline"]),
        lower_bound_s=S(t["lower"]), compute_time_s=S(t["compute"]),
        memory_time_s=S(t["memory"]), comm_time_s=S(comm), overhead_s=S(overhead),
        flops_per_device=S(t["flops"]), bytes_per_device=S(t["bytes"]),
        bound=t["bound"].item() if np.ndim(t["bound"]) == 0 else t["bound"],
        tokens_per_s_per_user=S(np.broadcast_to(per_user, shape)),
        tokens_per_s_per_device=S(np.broadcast_to(per_dev, shape)),
        fits=bool(fits) if np.ndim(fits) == 0 else np.broadcast_to(fits, shape),
        batch=S(np.broadcast_to(B, shape)), context_tokens=S(np.broadcast_to(C, shape)),
        new_tokens=S(np.broadcast_to(T, shape)),
    )


def _check_oom(on_oom: str) -> None:
    if on_oom not in ("raise", "mark"):
        raise TokenomicsError(f"on_oom must be 'raise' or 'mark', got {on_oom!r}")


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
    _check_oom(on_oom)
    B = V.counts(batch, "batch")
    C = V.counts(context_tokens, "context_tokens", unit="token")
    V.context_within(dep.model, C, dep.allow_beyond_max_context)
    T = V.counts(new_tokens, "new_tokens", unit="token")
    fit = memory_fit(dep, B, C + T - 1, tokens_per_step=B * T)
    if on_oom == "raise":
        ensure_fits(dep, fit, "decode", batch=B, context_tokens=C)
    b = B / dep.pp
    costs = step_costs(dep, b, T, C, T)
    t = _time(dep, costs, dep.tp)
    comm = _comm(dep, t, b, T, T, "decode")
    return _finish(dep, "decode", t, B, C, T, B * T, fit.fits, comm)


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
    _check_oom(on_oom)
    P = V.counts(prompt_tokens, "prompt_tokens", unit="token")
    B = V.counts(batch, "batch")
    c = V.counts(cached_tokens, "cached_tokens", minimum=0, unit="token")
    if np.any(c >= P):
        raise TokenomicsError(
            f"cached_tokens must be below prompt_tokens (at least one new token to compute), "
            f"got cached={_first(c[np.broadcast_to(c >= P, np.broadcast(c, P).shape)])}")
    V.context_within(dep.model, P, dep.allow_beyond_max_context, "prompt_tokens")
    T = P - c
    fit = memory_fit(dep, B, P, tokens_per_step=B * T)
    if on_oom == "raise":
        ensure_fits(dep, fit, "prefill", batch=B, prompt_tokens=P)
    m = microbatches
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise TokenomicsError(f"microbatches must be a positive integer, got {m!r}")
    costs = step_costs(dep, B / m, T, c, 1.0)
    t = _time(dep, costs, dep.tp)
    comm = _comm(dep, t, B / m, T, 1.0, "prefill")
    # m micro-batches through pp stages: (m + pp - 1) stage times (GPipe), a stage being
    # 1/pp of the model; each device does 1/pp of the layers for every micro-batch.
    span = (m + dep.pp - 1) / dep.pp
    for k in ("roofline", "compute", "memory", "lower"):
        t[k] = t[k] * span
    for k in ("flops", "bytes"):
        t[k] = t[k] * m / dep.pp
    phase = "midfill" if np.any(c > 0) else "prefill"
    return _finish(dep, phase, t, B, P, T, B * T, fit.fits, comm * span)


def operator_table(dep: Deployment, phase: str = "decode", batch: int = 1,
                   context_tokens: int | None = None, prompt_tokens: int | None = None,
                   cached_tokens: int = 0) -> pd.DataFrame:
    """Per-operator FLOPs, bytes, intensity, bound and time of one step on one device.

    Parameters
    ----------
    dep : Deployment
    phase : {"decode", "prefill", "midfill"}
    batch : int
    context_tokens : int
        Decode: tokens in the cache.
    prompt_tokens, cached_tokens : int
        Prefill/midfill: prompt length and cached prefix.

    Returns
    -------
    pandas.DataFrame
        Columns ``operator``, ``flops``, ``weight_bytes``, ``kv_bytes``, ``act_bytes``,
        ``bytes``, ``intensity_flop_per_byte``, ``ridge_flop_per_byte``, ``bound``,
        ``compute_time_s``, ``memory_time_s``, ``time_s``, ``time_share`` (per device), and a
        final ``total`` row.

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
    """
    if phase not in ("decode", "prefill", "midfill"):
        raise TokenomicsError(f"phase must be decode, prefill or midfill, got {phase!r}")
    V.counts(batch, "batch")
    if phase == "decode":
        if context_tokens is None:
            raise TokenomicsError("decode needs context_tokens")
        C = V.counts(context_tokens, "context_tokens", unit="token")
        V.context_within(dep.model, C, dep.allow_beyond_max_context)
        costs = step_costs(dep, batch / dep.pp, 1.0, float(C), 1.0)
    else:
        if prompt_tokens is None:
            raise TokenomicsError(f"{phase} needs prompt_tokens")
        P = V.counts(prompt_tokens, "prompt_tokens", unit="token")
        V.context_within(dep.model, P, dep.allow_beyond_max_context, "prompt_tokens")
        if not (0 <= cached_tokens < float(P)):
            raise TokenomicsError(f"cached_tokens must be in [0, prompt_tokens), got "
                                  f"{cached_tokens!r}")
        costs = step_costs(dep, float(batch), float(P) - cached_tokens, float(cached_tokens),
                           1.0)
    t = _time(dep, costs, dep.tp)
    ridge = dep.hardware.peak(dep.compute_dtype) * dep.efficiency.mfu / (
        dep.hardware.mem_bw_bytes_per_s * dep.efficiency.mbu)
    rows = []
    for op in costs:
        tc, tm, tt = (float(x) for x in t["per_op"][op.name])
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
                 ridge_flop_per_byte=ridge, bound=str(t["bound"]),
                 compute_time_s=df.compute_time_s.sum(), memory_time_s=df.memory_time_s.sum(),
                 time_s=tot, time_share=1.0)
    return pd.concat([df, pd.DataFrame([total])], ignore_index=True)


def _first(x: Any) -> Any:
    v = np.ravel(np.asarray(x))[0]
    return int(v) if float(v).is_integer() else float(v)


__all__ = ["StepResult", "decode", "prefill", "operator_table", "OPERATORS"]
