"""Collective communication: times of all-reduce, all-gather, reduce-scatter, all-to-all and
point-to-point transfers over scale-up and scale-out links, flat and hierarchical.

All link bandwidths are **per direction** [B/s]; latencies are per message hop [s].
Messages are in bytes and broadcast as numpy arrays.

Notes
-----
The alpha-beta model, with :math:`n` devices, per-hop latency :math:`\\alpha`, per-direction
bandwidth :math:`\\beta` and a message of :math:`M` bytes (the full tensor each device holds):

=============================  ==========================================================
all-reduce, ring               :math:`2(n-1)\\alpha + 2\\frac{n-1}{n}\\frac{M}{\\beta}`
all-reduce, tree               :math:`2\\lceil\\log_2 n\\rceil\\alpha + 2\\frac{M}{\\beta}`
all-reduce, one-shot           :math:`\\alpha + (n-1)\\frac{M}{\\beta}` (each device pulls every peer's buffer)
all-reduce, two-shot           :math:`2\\alpha + 2\\frac{n-1}{n}\\frac{M}{\\beta}` (direct reduce-scatter + all-gather)
all-gather / reduce-scatter    :math:`(n-1)\\alpha + \\frac{n-1}{n}\\frac{M}{\\beta}` (ring; M the full tensor)
all-to-all (switched)          :math:`\\alpha + \\frac{n-1}{n}\\frac{M}{\\beta}` (M: what one device sends to all, itself included)
point-to-point                 :math:`\\alpha + M/\\beta`
=============================  ==========================================================

One-shot and two-shot all-reduce need every device to reach every other directly (a switch
such as NVSwitch, or a full mesh such as AMD's 8-GPU Infinity Fabric); ring and tree need only
neighbours. ``algorithm="auto"`` takes the fastest of the four for each message, as
communication libraries tune per message size: the bound, not a forecast.

A group larger than a scale-up domain runs hierarchically: a reduce-scatter inside each domain
over the scale-up link, an all-reduce of the :math:`M/n_\\mathrm{in}` shard across the
:math:`d` domains over each device's scale-out NIC (all NICs in parallel), and an all-gather
inside the domain. All-to-all traffic splits: the share bound for peers in the same domain
crosses the scale-up link, the rest the scale-out NIC, concurrently.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1), 2005. doi:10.1177/1094342005051521
.. [2] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009. doi:10.1016/j.jpdc.2008.09.002
.. [3] P. Sanders, J. Speck, J. L. Träff, "Two-tree algorithms for full bandwidth broadcast,
   reduction and scan", Parallel Computing 35(12), 2009 (NCCL's double binary tree).
.. [4] vLLM, "Latency-optimal allreduce and CUDA graph optimization" (custom one-shot/two-shot
   all-reduce for small messages), vllm-project/vllm files/13574639, 2023.
.. [5] NVIDIA NCCL, src/graph/tuning.cc: modelled per-hop latency 0.6 us over NVLink and
   2.7 us over the network (ring, LL protocol), used here as default latency floors where a
   catalog publishes none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.data.boundary import inputs
from tokenomics.data.interconnect import (
    ALGORITHMS,
    Algorithm,
    Topology,
    topology,
)


def _n(n_devices: Any) -> np.ndarray:
    return V.counts(n_devices, "n_devices")


def _msg(message_bytes: Any) -> np.ndarray:
    return V.non_negative(message_bytes, "message_bytes", "B")


def _link(link_bytes_per_s: Any, latency_s: Any) -> tuple[np.ndarray, np.ndarray]:
    return (V.positive(link_bytes_per_s, "link_bytes_per_s", "B/s"),
            V.non_negative(latency_s, "latency_s", "s"))


def p2p_time(message_bytes: Any, link_bytes_per_s: Any, latency_s: Any) -> Any:
    """Time to send ``message_bytes`` from one device to another [s].

    Parameters
    ----------
    message_bytes : float or array_like
        [B], >= 0.
    link_bytes_per_s : float or array_like
        Per-direction link bandwidth [B/s], > 0.
    latency_s : float or array_like
        Latency floor of one message [s], >= 0.

    Returns
    -------
    float or numpy.ndarray
        :math:`\\alpha + M/\\beta` [s] (0 for an empty message).

    References
    ----------
    .. [1] R. Thakur et al., IJHPCA 19(1), 2005.

    Examples
    --------
    >>> round(p2p_time(1e6, 50e9, 2e-6) * 1e6, 3)   # 1 MB over a 400 Gb/s NIC, 2 us: 22 us
    22.0
    """
    m = _msg(message_bytes)
    bw, lat = _link(link_bytes_per_s, latency_s)
    return V.scalar_or_array(np.where(m > 0, lat + m / bw, 0.0))


def allreduce_time(message_bytes: Any, n_devices: Any, link_bytes_per_s: Any, latency_s: Any,
                   algorithm: Algorithm = "ring") -> Any:
    """Time of an all-reduce of ``message_bytes`` over ``n_devices`` on one kind of link [s].

    Parameters
    ----------
    message_bytes : float or array_like
        Size of the tensor each device holds and ends with [B].
    n_devices : int or array_like
        Devices in the group, >= 1 (1 costs nothing).
    link_bytes_per_s : float or array_like
        Per-direction bandwidth of each device's link [B/s].
    latency_s : float or array_like
        Per-hop latency [s].
    algorithm : {"ring", "tree", "one_shot", "two_shot", "auto", "each"}
        See the module notes; ``"auto"`` is the fastest of the four, ``"each"`` all four
        stacked on a new first axis (``ALGORITHMS`` order).

    Returns
    -------
    float or numpy.ndarray
        [s]

    References
    ----------
    .. [1] P. Patarasuk, X. Yuan, JPDC 69(2), 2009 (ring is bandwidth-optimal).
    .. [2] P. Sanders, J. Speck, J. L. Träff, Parallel Computing 35(12), 2009 (trees).

    Examples
    --------
    >>> # Ring, 8 devices, 1 MB, 450 GB/s per direction, 1 us: 14 us + 2*(7/8)*1e6/450e9
    >>> round(allreduce_time(1e6, 8, 450e9, 1e-6) * 1e6, 3)
    17.889
    """
    m = _msg(message_bytes)
    n = _n(n_devices)
    bw, lat = _link(link_bytes_per_s, latency_s)
    return V.scalar_or_array(_allreduce(m, n, bw, lat, algorithm))


_ALLREDUCE_NAMES = ALGORITHMS + ("auto", "each")


def _allreduce(m: Any, n: Any, bw: Any, lat: Any, algorithm: str) -> Any:
    if not isinstance(algorithm, str) or algorithm not in _ALLREDUCE_NAMES:
        raise TokenomicsError(f"unknown all-reduce algorithm {algorithm!r}; expected one of "
                              f"{', '.join(_ALLREDUCE_NAMES)}")
    algs = ALGORITHMS if algorithm in ("auto", "each") else (algorithm,)
    if type(n) is int and np.ndim(bw) == 0 and np.ndim(lat) == 0:   # one group: plain floats
        m = np.asarray(m, float)
        if n <= 1:
            t = np.zeros((len(algs), *m.shape))
        elif len(algs) == 1:
            start, per_byte = _allreduce_terms(n, float(lat), algorithm)
            return np.where(m > 0, start + per_byte * m / bw, 0.0)
        else:
            terms = [_allreduce_terms(n, float(lat), a) for a in algs]
            col = (-1,) + (1,) * m.ndim
            start = np.array([a for a, _ in terms]).reshape(col)
            per_byte = np.array([k for _, k in terms], float).reshape(col)
            t = np.where(m > 0, start + per_byte * m / bw, 0.0)
    else:
        n = np.asarray(n, float)
        on = (n > 1) & (np.asarray(m) > 0)
        t = np.stack(np.broadcast_arrays(*[
            np.where(on, s + k * m / bw, 0.0)
            for s, k in (_allreduce_terms(n, lat, a) for a in algs)]))
    if algorithm == "each":
        return t
    return t.min(axis=0) if algorithm == "auto" else t[0]


def _allreduce_terms(n: Any, lat: Any, algorithm: str) -> tuple[Any, Any]:
    """(latency term [s], bytes sent per message byte [-]) of one all-reduce algorithm over
    ``n`` devices: the time is ``start + per_byte * M / bw`` (module notes)."""
    if algorithm == "ring":
        return 2 * (n - 1) * lat, 2 * (n - 1) / n
    if algorithm == "tree":
        return 2 * np.ceil(np.log2(np.maximum(n, 1))) * lat, 2
    if algorithm == "one_shot":
        return lat, (n - 1)
    return 2 * lat, 2 * (n - 1) / n          # two_shot


def allgather_time(message_bytes: Any, n_devices: Any, link_bytes_per_s: Any,
                   latency_s: Any) -> Any:
    """Time of a ring all-gather that leaves every device with ``message_bytes`` [s].

    Each device starts with ``message_bytes / n`` and receives the other ``n - 1`` shards:
    :math:`(n-1)\\alpha + \\frac{n-1}{n} M / \\beta`.

    Parameters
    ----------
    message_bytes : float or array_like
        Gathered (output) size per device [B].
    n_devices : int or array_like
    link_bytes_per_s, latency_s : float or array_like
        Per-direction bandwidth [B/s] and per-hop latency [s].

    Returns
    -------
    float or numpy.ndarray
        [s]

    References
    ----------
    .. [1] R. Thakur et al., IJHPCA 19(1), 2005.

    Examples
    --------
    >>> round(allgather_time(8e6, 8, 450e9, 1e-6) * 1e6, 3)   # 7 us + (7/8)*8e6/450e9
    22.556
    """
    m = _msg(message_bytes)
    n = _n(n_devices)
    bw, lat = _link(link_bytes_per_s, latency_s)
    return V.scalar_or_array(_gather(m, n, bw, lat))


def reduce_scatter_time(message_bytes: Any, n_devices: Any, link_bytes_per_s: Any,
                        latency_s: Any) -> Any:
    """Time of a ring reduce-scatter of a ``message_bytes`` tensor [s].

    Each device ends with the reduced ``1/n`` shard; cost as :func:`allgather_time`.

    Parameters
    ----------
    message_bytes : float or array_like
        Input size per device [B].
    n_devices : int or array_like
    link_bytes_per_s, latency_s : float or array_like

    Returns
    -------
    float or numpy.ndarray
        [s]

    References
    ----------
    .. [1] R. Thakur et al., IJHPCA 19(1), 2005.
    """
    return allgather_time(message_bytes, n_devices, link_bytes_per_s, latency_s)


def _gather(m: Any, n: Any, bw: Any, lat: Any) -> Any:
    n = np.asarray(n, float)
    t = (n - 1) * lat + (n - 1) / n * m / bw
    return np.where((n > 1) & (np.asarray(m) > 0), t, 0.0)


def alltoall_time(message_bytes: Any, n_devices: Any, link_bytes_per_s: Any,
                  latency_s: Any) -> Any:
    """Time of an all-to-all over a switched fabric [s].

    Each device holds ``message_bytes`` spread evenly over the ``n`` destinations (itself
    included) and sends the ``(n-1)/n`` share bound elsewhere, all pairs concurrently:
    :math:`\\alpha + \\frac{n-1}{n} M / \\beta`. MoE dispatch and combine are one each.

    Parameters
    ----------
    message_bytes : float or array_like
        Bytes one device holds for all destinations [B].
    n_devices : int or array_like
    link_bytes_per_s, latency_s : float or array_like

    Returns
    -------
    float or numpy.ndarray
        [s]

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, 2024, §3.2.2
       (dispatch/combine over NVLink and InfiniBand).

    Examples
    --------
    >>> round(alltoall_time(7e6, 8, 50e9, 2e-6) * 1e6, 1)   # 2 us + (7/8) * 7e6 / 50e9
    124.5
    """
    m = _msg(message_bytes)
    n = _n(n_devices)
    bw, lat = _link(link_bytes_per_s, latency_s)
    return V.scalar_or_array(_a2a(m, n, bw, lat))


def _a2a(m: Any, n: Any, bw: Any, lat: Any) -> Any:
    n = np.asarray(n, float)
    t = lat + (n - 1) / n * m / bw
    return np.where((n > 1) & (np.asarray(m) > 0), t, 0.0)


def _split(topo: Topology, group: int) -> tuple[int, int]:
    """Devices per domain and domains spanned by a group placed domain-aligned."""
    dom = max(topo.domain_size, 1)
    n_in = min(group, dom)
    return n_in, math.ceil(group / dom)


def group_allreduce_time(topo: Topology, message_bytes: Any, group: int,
                         algorithm: Algorithm = "auto") -> Any:
    """All-reduce over a group of devices, hierarchical when it spans domains [s].

    Inside one domain: :func:`allreduce_time` over the scale-up link. Across ``d`` domains:
    ring reduce-scatter and all-gather inside each domain plus an all-reduce of the
    ``M / n_in`` shard across domains over the scale-out NICs. ``algorithm="each"``: every
    algorithm's time, stacked on a new first axis in :data:`ALGORITHMS` order.
    """
    m = np.asarray(message_bytes, float)
    if group <= 1:
        return np.zeros((len(ALGORITHMS), *m.shape)) if algorithm == "each" else np.zeros_like(m)
    n_in, d = _split(topo, group)
    up_t: Any = 0.0
    if n_in > 1:
        up = topo.group_bytes_per_s(n_in)
        assert up is not None
        if d == 1:
            return _allreduce(m, n_in, up, topo.up_latency_s, algorithm)
        up_t = 2 * _gather(m, n_in, up, topo.up_latency_s)
    assert topo.out_bytes_per_s is not None
    return up_t + _allreduce(m / n_in, d, topo.out_bytes_per_s, topo.out_latency_s, algorithm)


def group_allgather_time(topo: Topology, message_bytes: Any, group: int) -> Any:
    """All-gather (output ``message_bytes`` per device) over a group, hierarchical [s]."""
    m = np.asarray(message_bytes, float)
    if group <= 1:
        return np.zeros_like(m)
    n_in, d = _split(topo, group)
    t: Any = 0.0
    if d > 1:
        assert topo.out_bytes_per_s is not None
        t = _gather(m / n_in, d, topo.out_bytes_per_s, topo.out_latency_s)
    if n_in > 1:
        up = topo.group_bytes_per_s(n_in)
        assert up is not None
        t = t + _gather(m, n_in, up, topo.up_latency_s)
    return t


def group_alltoall_time(topo: Topology, message_bytes: Any, group: int,
                        out_share: float | None = None) -> Any:
    """All-to-all over a group: same-domain share on scale-up, the rest on scale-out [s].

    ``out_share``: the share of ``message_bytes`` that crosses the scale-out network;
    default :math:`(g - n_{in})/g` (every byte to a uniformly random peer). A router that
    sends one copy of a token per remote domain and forwards it inside (DeepEP's
    deduplicated dispatch) crosses less (:func:`remote_copies`).
    """
    m = np.asarray(message_bytes, float)
    if group <= 1:
        return np.zeros_like(m)
    n_in, d = _split(topo, group)
    t_up: Any = 0.0
    if n_in > 1:
        up = topo.group_bytes_per_s(n_in)
        assert up is not None
        t_up = topo.up_latency_s + (n_in - 1) / group * m / up
    if d == 1:
        return np.where(m > 0, t_up, 0.0)
    assert topo.out_bytes_per_s is not None
    share = (group - n_in) / group if out_share is None else out_share
    t_out = topo.out_latency_s + share * m / topo.out_bytes_per_s
    return np.where(m > 0, np.maximum(t_up, t_out), 0.0)


def remote_copies(top_k: int, domains: int, topk_group: int = 0) -> float:
    """Expected remote scale-up domains a token's hidden state is sent to [-].

    :math:`k` experts drawn uniformly over :math:`d` domains of equal size reach
    :math:`(d-1)(1 - (1 - 1/d)^k)` domains besides the token's own; one copy crosses to
    each (deduplicated, then forwarded inside the domain), and a group-limited router
    (``topk_group`` > 0: DeepSeek-V3 routes to at most 4 of 8 groups) caps it. 0 within one
    domain.

    Parameters
    ----------
    top_k : int
        Experts each token is routed to [-].
    domains : int
        Scale-up domains the expert-parallel group spans [-].
    topk_group : int
        The router's cap on the groups a token may reach (0: none) [-].

    Returns
    -------
    float
        Expected copies of a token's hidden state that leave its domain [-].

    References
    ----------
    DeepSeek-AI, "DeepSeek-V3 Technical Report" (2024), section 3.4: node-limited routing
    (each token to at most 4 nodes) and the deduplicated cross-node send.

    Examples
    --------
    >>> round(remote_copies(8, 4), 3), remote_copies(8, 18, topk_group=4)   # EP32, EP144
    (2.7, 4.0)
    """
    if domains <= 1:
        return 0.0
    r = (domains - 1) * (1.0 - (1.0 - 1.0 / domains) ** top_k)
    return float(min(r, topk_group)) if topk_group > 0 else float(r)


def group_p2p_time(topo: Topology, message_bytes: Any, crosses_domain: bool) -> Any:
    """A point-to-point send between pipeline stages, over the link it crosses [s]."""
    m = np.asarray(message_bytes, float)
    if crosses_domain:
        assert topo.out_bytes_per_s is not None
        return np.where(m > 0, topo.out_latency_s + m / topo.out_bytes_per_s, 0.0)
    up = topo.group_bytes_per_s(2)
    assert up is not None
    return np.where(m > 0, topo.up_latency_s + m / up, 0.0)


def pipeline_bubble_fraction(pp: int, microbatches: int) -> float:
    """Idle fraction of a pipeline of ``pp`` stages fed ``microbatches`` micro-batches.

    Parameters
    ----------
    pp : int
        Pipeline stages, >= 1.
    microbatches : int
        Micro-batches in flight per cycle :math:`m`, >= 1.

    Returns
    -------
    float
        :math:`(pp - 1) / (m + pp - 1)` (GPipe); 0 for one stage.

    References
    ----------
    .. [1] Y. Huang et al., "GPipe", NeurIPS 2019, arXiv:1811.06965.

    Examples
    --------
    >>> pipeline_bubble_fraction(4, 4)
    0.42857142857142855
    """
    pp_ = V.single_whole(pp, "pp")
    m = V.single_whole(microbatches, "microbatches")
    return (pp_ - 1) / (m + pp_ - 1)


# --------------------------------------------------------------------------------------------
# The collectives of one forward step of a deployment
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CommCost:
    """One kind of collective in a step, on one device.

    Attributes
    ----------
    name : str
    calls : int
        Collectives of this kind per step (e.g. one per layer).
    message_bytes : array
        Message size of one call [B].
    group : int
        Devices taking part.
    time_s : array
        Time of all ``calls`` [s], software overhead per call included.
    """

    name: str
    calls: int
    message_bytes: Any
    group: int
    time_s: Any


def _crossing_boundaries(tp: int, pp: int, domain: int) -> bool:
    """Whether any pipeline-stage boundary pairs devices in different scale-up domains."""
    dom = max(domain, 1)
    for s in range(1, pp):
        for j in range(tp):
            if ((s - 1) * tp + j) // dom != (s * tp + j) // dom:
                return True
    return False


@inputs(dep="deployment")
def step_comm(dep: Any, batch: Any, new_tokens: Any, logits_tokens: Any,
              phase: str = "decode", algorithm: str | None = None) -> list[CommCost]:
    """Collectives of one step of ``dep`` on one device, by kind.

    Parameters
    ----------
    dep : Deployment
    batch : array_like
        Sequences in the step (a pipeline micro-batch in decode).
    new_tokens : array_like
        New tokens per sequence.
    logits_tokens : array_like
        Tokens per sequence whose logits are gathered.
    phase : {"decode", "prefill"}
        Decode runs ``pp`` micro-batches per cycle (each device sends ``pp`` activations to
        the next stage); prefill passes one batch through the stages (``pp - 1`` sends on its
        path).
    algorithm : str, optional
        All-reduce algorithm instead of ``dep.allreduce_algorithm`` (one of
        ``ALGORITHMS``, ``"auto"``), or ``"each"``: every algorithm's time at once, the
        all-reduces' ``time_s`` then stacked on a new first axis in ``ALGORITHMS`` order
        (what the precomputed plans of :mod:`tokenomics.physics.plan` read their lines from).

    Returns
    -------
    list of CommCost
        ``tp_attention_allreduce`` (one per layer, attention TP > 1), ``tp_ffn_allreduce`` (one
        per dense layer, and per MoE layer when ``ep == 1``; with ``mlp_data_parallel`` the
        dense layers' over each attention group and the MoE layers' as
        ``tp_moe_allreduce``), ``ep_dispatch`` and
        ``ep_combine`` all-to-alls (one each per MoE layer, ``ep > 1``; with
        ``ep_exchange="allgather"`` an all-gather of the step's :math:`N` tokens and a
        reduce-scatter of their outputs, :math:`N h b` bytes each),
        ``ep_allgather`` (tokens back to every attention-TP rank), ``lm_head_allgather``
        (vocabulary-parallel logits), ``pp_send`` (stage to stage).

    Notes
    -----
    Activations travel in the activation format. Per layer, tensor parallelism needs two
    all-reduces of the step's hidden states (:math:`N h b` bytes for :math:`N` tokens): after
    attention and after the FFN (Megatron-LM). Expert parallelism sends each token's hidden
    state to its :math:`k` experts and back: per device :math:`(N/tp) k h b` bytes each way.

    References
    ----------
    .. [1] M. Shoeybi et al., "Megatron-LM", arXiv:1909.08053, 2019 (two all-reduces per
       layer).
    .. [2] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, 2024 (dispatch and
       combine; attention data parallelism in decode).
    """
    m = dep.model
    eff = dep.efficiency
    topo = topology(dep.hardware, eff.link_efficiency)
    h = m.hidden_size
    from tokenomics.core.dtypes import bytes_per_element

    act = bytes_per_element(dep.act_dtype)
    b = V.non_negative(batch, "batch", "count")       # averages per stage may be fractions
    N = b * V.non_negative(new_tokens, "new_tokens", "token")
    NL = b * V.non_negative(logits_tokens, "logits_tokens", "token")
    atp, tp, dp = dep.attention_tp, dep.tp, dep.dp_attention
    L, Lm = m.num_layers, m.num_moe_layers
    alg = dep.allreduce_algorithm if algorithm is None else algorithm
    if not isinstance(alg, str) or alg not in ALGORITHMS + ("auto", "each"):
        raise TokenomicsError(f"unknown all-reduce algorithm {alg!r}; expected one of "
                              f"{', '.join(ALGORITHMS + ('auto', 'each'))}")
    out: list[CommCost] = []

    def add(name: str, calls: int, msg: Any, group: int, fn: Any) -> None:
        if calls <= 0 or group <= 1:
            return
        t = fn(topo, msg, group) if fn is not group_allreduce_time else fn(topo, msg, group,
                                                                             alg)
        t = calls * (np.asarray(t) + eff.collective_overhead_s)
        out.append(CommCost(name, calls, msg, group, t))

    add("tp_attention_allreduce", L, N / dp * h * act, atp, group_allreduce_time)
    if dep.mlp_data_parallel:        # dense layers within each attention group, as attention
        add("tp_ffn_allreduce", m.num_dense_layers, N / dp * h * act, atp,
            group_allreduce_time)
        add("tp_moe_allreduce", Lm if dep.ep == 1 else 0, N * h * act, tp,
            group_allreduce_time)
    else:
        ffn_layers = m.num_dense_layers + (Lm if dep.ep == 1 else 0)
        add("tp_ffn_allreduce", ffn_layers, N * h * act, tp, group_allreduce_time)
    if dep.ep > 1 and m.moe is not None:
        # dispatch at the experts' compute format where it is narrower (FP8 quantised before
        # sending, as DeepEP does), combine at the activation format; one copy of a token
        # per remote domain (deduplicated), at most topk_group of them
        k = m.moe.top_k
        he = m.moe.latent_size or h          # a latent MoE sends its tokens at the latent
        disp = min(bytes_per_element(dep.compute_dtype), act)
        n_in, d = _split(topo, dep.ep)
        limit = m.moe.topk_group if m.moe.n_group > 1 else 0
        share = remote_copies(k, d, limit) / k if d > 1 else None
        for name, b in (("ep_dispatch", disp), ("ep_combine", act)):
            if dep.ep_exchange == "allgather":   # every rank's tokens gathered, then scattered
                add(name, Lm, N * he * b, dep.ep, group_allgather_time)
            else:
                add(name, Lm, N / tp * k * he * b, dep.ep,
                    lambda topo_, msg, g, s=share: group_alltoall_time(topo_, msg, g, s))
        add("ep_allgather", Lm, N / dp * h * act, atp, group_allgather_time)
    add("lm_head_allgather", 1, NL / dp * m.vocab_size * act, atp, group_allgather_time)
    if dep.pp > 1:
        crosses = _crossing_boundaries(tp, dep.pp, topo.domain_size)
        sends = dep.pp if phase == "decode" else dep.pp - 1
        msg = N * h * act / tp
        t = sends * (np.asarray(group_p2p_time(topo, msg, crosses)) + eff.collective_overhead_s)
        out.append(CommCost("pp_send", sends, msg, 2, t))
    return out
