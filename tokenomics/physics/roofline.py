"""Roofline quantities: ridge point, arithmetic intensity, attainable FLOP/s, roofline time.

Notes
-----
For an operator doing :math:`F` FLOPs and moving :math:`Q` bytes on a device with dense peak
:math:`P` [FLOP/s] and memory bandwidth :math:`\\beta` [B/s]:

.. math::
   I = F / Q, \\qquad I^* = P / \\beta, \\qquad
   t = \\max(F / P, \\; Q / \\beta), \\qquad P_\\mathrm{att} = \\min(P, I \\beta).

An operator with :math:`I < I^*` (the ridge point) is memory-bound.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
   model for multicore architectures", CACM 52(4), 2009. doi:10.1145/1498765.1498785
.. [2] J. Austin et al., "How to Scale Your Model", 2025, ch. "All About Transformer
   Inference". https://jax-ml.github.io/scaling-book/inference/
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tokenomics.core import checks as V
from tokenomics.core.dtypes import bytes_per_element
from tokenomics.data import catalog
from tokenomics.data.boundary import inputs
from tokenomics.data.specs import Attention, Hardware, Model
from tokenomics.physics import formulas as F


@inputs(hw="hardware")
def ridge_point(hw: Hardware, dtype: str = "bf16") -> float:
    """Ridge point (critical arithmetic intensity) of a device for a compute format [FLOP/B].

    Parameters
    ----------
    hw : Hardware
    dtype : str
        Compute format, selecting the dense peak (``"bf16"``, ``"fp8"``, ``"fp4"``...).

    Returns
    -------
    float
        ``peak_flop_per_s / mem_bw_bytes_per_s`` [FLOP/B].

    Raises
    ------
    NotPublishedError
        If the device has no published dense peak for that format.

    References
    ----------
    .. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
           model for multicore architectures", CACM 52(4), 2009. doi:10.1145/1498765.1498785

    Examples
    --------
    >>> from tokenomics.data.catalog import hardware
    >>> round(ridge_point(hardware("h100-sxm"), "bf16"))   # S01: 989.4e12 / 3.35e12
    295
    """
    return hw.peak(dtype) / hw.mem_bw_bytes_per_s


def gemm_flops(m: Any, n: Any, k: Any) -> Any:
    """FLOPs of an (m, k) x (k, n) matrix product [FLOP].

    Parameters
    ----------
    m, n, k : int or array_like
        Matrix dimensions.

    Returns
    -------
    float or numpy.ndarray
        ``2 m n k`` [FLOP]: one multiply-accumulate is 2 FLOP.

    References
    ----------
    .. [1] J. Austin et al., "How to Scale Your Model", 2025, ch. "A Brief Intro to Roofline".
           https://jax-ml.github.io/scaling-book/roofline/
    """
    m, n, k = (V.counts(v, name, minimum=0) for v, name in ((m, "m"), (n, "n"), (k, "k")))
    return V.scalar_or_array(m * n * k * 2.0)


def gemm_bytes(m: Any, n: Any, k: Any, dtype: str = "bf16", weight_dtype: str | None = None,
               include_activations: bool = True) -> Any:
    """Bytes an (m, k) x (k, n) product moves, each operand read or written once [B].

    Parameters
    ----------
    m, n, k : int or array_like
        Matrix dimensions (``k n`` is the weight matrix).
    dtype : str
        Activation format (and weight format unless ``weight_dtype`` is given).
    weight_dtype : str, optional
    include_activations : bool

    Returns
    -------
    float or numpy.ndarray
        :math:`k n b_w + (m k + m n) b_a` [B] (the activation term only when
        ``include_activations``).

    References
    ----------
    .. [1] J. Austin et al., "How to Scale Your Model", 2025, ch. "A Brief Intro to Roofline".
           https://jax-ml.github.io/scaling-book/roofline/
    """
    m, n, k = (V.counts(v, name, minimum=0) for v, name in ((m, "m"), (n, "n"), (k, "k")))
    w = bytes_per_element(weight_dtype if weight_dtype is not None else dtype)
    out = k * n * w
    if V.flag(include_activations, "include_activations"):
        out = out + (m * k + m * n) * bytes_per_element(dtype)
    return V.scalar_or_array(out)


def gemm_intensity(m: Any, n: Any, k: Any, dtype: str = "bf16",
                   weight_dtype: str | None = None, include_activations: bool = True) -> Any:
    """Arithmetic intensity of an (m, k) x (k, n) matrix product [FLOP/B].

    In decode, ``m`` is the number of tokens sharing the weight matrix (the batch), ``k`` and
    ``n`` the matrix's input and output widths.

    Parameters
    ----------
    m, n, k : int or array_like
        Matrix dimensions, >= 1.
    dtype : str
        Activation format (and weight format unless ``weight_dtype`` is given).
    weight_dtype : str, optional
    include_activations : bool
        Count activation reads/writes (default) or weights only.

    Returns
    -------
    float or numpy.ndarray
        ``2 m n k / bytes`` [FLOP/B].

    Notes
    -----
    With weights dominating (:math:`m \\ll k, n`), :math:`I \\approx 2m / b_w`: ~1 FLOP/B at
    batch 1 with 16-bit weights (S03), ~B at batch B (S04).

    References
    ----------
    .. [1] J. Austin et al., "How to Scale Your Model", 2025, ch. "A Brief Intro to Roofline".
           https://jax-ml.github.io/scaling-book/roofline/

    Examples
    --------
    >>> round(gemm_intensity(1, 8192, 8192, "bf16"), 3)   # S03: decode at batch 1 ~ 1
    1.0
    >>> round(gemm_intensity(64, 8192, 8192, "bf16"), 1)  # batching multiplies it ~B
    63.0
    """
    m = V.counts(m, "m")
    n = V.counts(n, "n")
    k = V.counts(k, "k")
    return V.scalar_or_array(
        np.asarray(gemm_flops(m, n, k)) /
        np.asarray(gemm_bytes(m, n, k, dtype, weight_dtype, include_activations)))


def attention_decode_intensity(model: Model | Attention, kv_dtype: str = "bf16") -> float:
    """Arithmetic intensity of decode attention over a sequence's own KV cache [FLOP/B].

    Each new token multiplies its ``n_q`` query heads against the cached keys and values;
    the cache is private to the sequence, so batching does not raise this intensity (S04).

    Parameters
    ----------
    model : Model or Attention
    kv_dtype : str
        KV-cache format.

    Returns
    -------
    float
        [FLOP/B]

    Notes
    -----
    Standard attention: FLOPs per cached token :math:`2 n_q (d_k + d_v)`, bytes
    :math:`n_{kv} (d_k + d_v) b`, so :math:`I = 2 n_q / (n_{kv} b)`: 1 for MHA at BF16,
    the group size for GQA (8 for Llama 3.1 70B), :math:`n_q` for MQA.
    MLA (absorbed, DeepSeek-V2): FLOPs :math:`2 n_q (2 r_{kv} + d_{rope})`, bytes
    :math:`(r_{kv} + d_{rope}) b`.

    References
    ----------
    .. [1] N. Shazeer, "Fast Transformer Decoding: One Write-Head is All You Need",
           arXiv:1911.02150, 2019 (MQA).
    .. [2] J. Ainslie et al., "GQA", EMNLP 2023, arXiv:2305.13245.
    .. [3] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, 2024 (MLA).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> attention_decode_intensity(model("llama-3.1-70b"))
    8.0
    """
    if not isinstance(model, Attention):
        model = catalog.model(model)
    a = model.attention if isinstance(model, Model) else model
    return F.attention_pair_flops_as_run(a) / (
        F.kv_elements_per_token_per_layer(a) * bytes_per_element(kv_dtype))


def roofline_time(flops: Any, bytes_moved: Any, peak_flop_per_s: Any,
                  mem_bw_bytes_per_s: Any) -> Any:
    """Roofline time of an operator: ``max(flops / peak, bytes / bandwidth)`` [s].

    Parameters
    ----------
    flops : float or array_like
        [FLOP], >= 0.
    bytes_moved : float or array_like
        [B], >= 0.
    peak_flop_per_s : float or array_like
        Achievable compute [FLOP/s], > 0.
    mem_bw_bytes_per_s : float or array_like
        Achievable bandwidth [B/s], > 0.

    Returns
    -------
    float or numpy.ndarray
        [s]

    References
    ----------
    .. [1] S. Williams, A. Waterman, D. Patterson, CACM 52(4), 2009. doi:10.1145/1498765.1498785

    Examples
    --------
    >>> roofline_time(2e12, 1e9, 1e15, 1e12)   # 2 ms compute vs 1 ms memory
    0.002
    """
    f = V.non_negative(flops, "flops", "flop")
    q = V.non_negative(bytes_moved, "bytes_moved", "B")
    p = V.positive(peak_flop_per_s, "peak_flop_per_s", "flop/s")
    bw = V.positive(mem_bw_bytes_per_s, "mem_bw_bytes_per_s", "B/s")
    return V.scalar_or_array(np.maximum(f / p, q / bw))


def attainable_flop_per_s(intensity: Any, peak_flop_per_s: Any,
                          mem_bw_bytes_per_s: Any) -> Any:
    """Attainable throughput at an arithmetic intensity [FLOP/s].

    Parameters
    ----------
    intensity : float or array_like
        Arithmetic intensity [FLOP/B], >= 0.
    peak_flop_per_s : float or array_like
        [FLOP/s], > 0.
    mem_bw_bytes_per_s : float or array_like
        [B/s], > 0.

    Returns
    -------
    float or numpy.ndarray
        ``min(peak, I * bandwidth)`` [FLOP/s].

    References
    ----------
    .. [1] S. Williams, A. Waterman, D. Patterson, CACM 52(4), 2009. doi:10.1145/1498765.1498785

    Examples
    --------
    >>> attainable_flop_per_s(1.0, 989.4e12, 3.35e12)   # batch-1 decode on an H100
    3350000000000.0
    """
    i = V.non_negative(intensity, "intensity", "flop/B")
    p = V.positive(peak_flop_per_s, "peak_flop_per_s", "flop/s")
    bw = V.positive(mem_bw_bytes_per_s, "mem_bw_bytes_per_s", "B/s")
    return V.scalar_or_array(np.minimum(p, i * bw))


@inputs(hw="hardware")
def critical_batch(hw: Hardware, weight_dtype: str = "bf16",
                   compute_dtype: str | None = None) -> float:
    """Tokens per step at which weight GEMMs reach the ridge point [token].

    A weight GEMM over ``B`` tokens does ``2 B`` FLOPs per weight element and reads
    ``b_w`` bytes for it, so its intensity is ``2 B / b_w`` and it turns compute-bound at

    .. math:: B^* = I^* \\, b_w / 2.

    Parameters
    ----------
    hw : Hardware
    weight_dtype : str
        Weight format (its bytes per element :math:`b_w`).
    compute_dtype : str, optional
        Format the matrix units run at; default ``weight_dtype``. Pass it for weight-only
        quantisation (int8 weights multiplied in bf16).

    Returns
    -------
    float
        [token]

    References
    ----------
    .. [1] J. Austin et al., "How to Scale Your Model", 2025, "All About Transformer Inference"
           (critical batch 240 on TPU v5e). https://jax-ml.github.io/scaling-book/inference/

    Examples
    --------
    >>> from tokenomics.data.catalog import hardware
    >>> v5e = hardware("tpu-v5e")
    >>> round(critical_batch(v5e, "bf16"), 1)               # 197e12 / 819e9 = 240.5
    240.5
    >>> round(critical_batch(v5e, "int8", "bf16"))   # int8 weights, bf16 FLOPs: half
    120
    """
    fmt = compute_dtype if compute_dtype is not None else weight_dtype
    return ridge_point(hw, fmt) * bytes_per_element(weight_dtype) / 2.0
