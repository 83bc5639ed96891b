"""Paged vs contiguous KV allocation: hand calculations, the PagedAttention figures (S18),
laws that hold whatever the inputs, and clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.serving.paged import (
    KVCapacity,
    LengthDistribution,
    allocated_tokens,
    as_length_distribution,
    kv_capacity_sequences,
    kv_waste_fraction,
    kv_waste_fraction_over_decode,
    max_batch_ratio,
)

LLAMA8_KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2        # K and V x 32 layers x 8 heads x 128 x 2 B
H100_BYTES = 81_559 * 2**20   # nvidia-smi memory.total of H100 SXM (was 80e9 when read as decimal)


# ---- hand calculations ----------------------------------------------------------------------
def test_fixed_length_waste_by_hand():
    # 1000 tokens in a 2048-token reservation; paged: 1000 / 16 = 62.5 -> 63 blocks = 1008.
    assert kv_waste_fraction(1000, "contiguous", max_tokens=2048) == pytest.approx(
        1 - 1000 / 2048, rel=1e-15)
    assert kv_waste_fraction(1000, "paged", block_tokens=16) == pytest.approx(8 / 1008,
                                                                              rel=1e-15)
    assert allocated_tokens(1000, 16) == 1008
    assert LengthDistribution.fixed(1000).allocated_tokens(16) == 1008
    assert LengthDistribution.fixed(1000).expected_block_waste_tokens(16) == 8
    assert isinstance(kv_waste_fraction(1000, "paged"), float)


def test_two_point_mix_by_hand():
    # Half the requests end at 100 tokens, half at 300; 400-token reservation.
    d = LengthDistribution([100, 300], [0.5, 0.5])
    assert d.mean() == 200
    assert kv_waste_fraction(d, "contiguous", max_tokens=400) == pytest.approx(1 - 200 / 400)
    # Blocks of 16: 100 -> 112 (12 empty), 300 -> 304 (4 empty): E = 8 empty of E = 208.
    assert kv_waste_fraction(d, "paged") == pytest.approx(8 / 208)
    # The same mix given as samples.
    assert kv_waste_fraction([100, 300, 300, 100], "paged") == pytest.approx(8 / 208)


def test_uniform_and_samples_by_hand():
    # Uniform 1..16 in one block of 16: mean 8.5 tokens, 7.5 empty of 16.
    u = LengthDistribution.uniform(1, 16)
    assert u.mean() == pytest.approx(8.5)
    assert kv_waste_fraction(u, "paged", block_tokens=16) == pytest.approx(7.5 / 16)
    s = LengthDistribution.samples([5, 5, 5, 20])
    assert s.mean() == pytest.approx(8.75)
    assert list(s.tokens) == [5, 20] and list(s.probabilities) == [0.75, 0.25]
    # Blocks of 8: 5 -> 8, 20 -> 24: E[alloc] = 0.75 x 8 + 0.25 x 24 = 12.
    assert s.allocated_tokens(8) == pytest.approx(12)
    assert as_length_distribution(s) is s


def test_lognormal_mean_by_hand():
    # Far from the cut-off, E[ceil X] lies in [E[X], E[X] + 1), E[X] = median exp(sigma^2 / 2).
    d = LengthDistribution.lognormal(100, 0.5, 1_000_000)
    ex = 100 * math.exp(0.125)
    assert ex <= d.mean() < ex + 1
    assert d.min() >= 1 and d.max() <= 1_000_000
    assert d.probabilities.sum() == pytest.approx(1, abs=1e-12)
    # The cut-off conditions the distribution: nothing beyond max_tokens.
    short = LengthDistribution.lognormal(100, 0.5, 150)
    assert short.max() == 150 and short.mean() < 100 * math.exp(0.125)


def test_block_size_sweep_by_hand():
    # 1000 tokens: b=1 -> 1000 (no waste), b=16 -> 1008, b=256 -> 1024, b=1000 -> 1000.
    w = kv_waste_fraction(1000, "paged", block_tokens=[1, 16, 256, 1000])
    np.testing.assert_allclose(w, [0, 8 / 1008, 24 / 1024, 0], rtol=1e-15, atol=0)
    w = kv_waste_fraction(1000, "contiguous", max_tokens=[1000, 2000, 4000])
    np.testing.assert_allclose(w, [0, 0.5, 0.75], rtol=1e-15)


def test_waste_over_decode_by_hand():
    # 100-token prompt, 4 decode steps, blocks of 16: held 101..104 = 410 token-steps; all in
    # 7 blocks = 112 tokens per step, 448 reserved token-steps.
    assert kv_waste_fraction_over_decode(100, 4, "paged") == pytest.approx(1 - 410 / 448)
    assert kv_waste_fraction_over_decode(100, 4, "contiguous", max_tokens=2048) == \
        pytest.approx(1 - 410 / (4 * 2048))
    # Crossing a block boundary: 14-token prompt, held 15, 16, 17, 18 in 16, 16, 32, 32.
    assert kv_waste_fraction_over_decode(14, 4, "paged") == pytest.approx(1 - 66 / 96)
    # An oracle that reserves exactly prompt + output (Orca (Oracle) in the PagedAttention
    # paper) still leaves the not-yet-generated part empty: ShareGPT-like 161 + 338 tokens.
    assert kv_waste_fraction_over_decode(161, 338, "contiguous", max_tokens=499) == \
        pytest.approx(1 - (161 * 338 + 338 * 339 / 2) / (338 * 499))


def test_capacity_by_hand_llama_8b():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", usable_memory_fraction=1.0,
                      workspace_bytes=0)
    room = H100_BYTES - 2 * tk.param_count(tk.model("llama-3.1-8b"))
    c = kv_capacity_sequences(d, 1000, "contiguous", max_tokens=2048)
    assert isinstance(c, KVCapacity) and c.policy == "contiguous"
    assert c.room_bytes == pytest.approx(room)
    assert c.sequences == c.contiguous_sequences == int(room // (2048 * LLAMA8_KV_PER_TOKEN))
    assert c.paged_sequences == int(room // (1008 * LLAMA8_KV_PER_TOKEN))
    assert c.paged_over_contiguous == pytest.approx(2048 / 1008)
    assert c.kv_bytes_per_sequence == 2048 * LLAMA8_KV_PER_TOKEN
    assert c.reserved_tokens_per_sequence == 2048
    p = kv_capacity_sequences(d, 1000, "paged")
    assert p.sequences == c.paged_sequences and p.contiguous_sequences is None
    assert p.paged_over_contiguous is None and p.reserved_tokens_per_sequence == 1008
    assert max_batch_ratio(d, 1000, 2048) == pytest.approx(2048 / 1008)


def test_capacity_with_estimated_workspace_matches_max_batch():
    # Default workspace: per sequence one decode token's activations (4h + 2I) x 2 B and its
    # FP32 logits 4 V; usable 0.9 x 81,559 MiB (what nvidia-smi reports).
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    a = (4 * 4096 + 2 * 14336) * 2 + 4 * 128_256
    room = 0.9 * H100_BYTES - 2 * tk.param_count(tk.model("llama-3.1-8b"))
    c = kv_capacity_sequences(d, 2048, "contiguous", max_tokens=2048)
    assert c.workspace_bytes_per_sequence == pytest.approx(a)
    assert c.sequences == int(room // (2048 * LLAMA8_KV_PER_TOKEN + a))
    # A request that fills its reservation: the same answer as memory.max_batch.
    assert c.sequences == tk.max_batch(d, 2048)
    assert c.paged_over_contiguous == pytest.approx(1.0)


def test_capacity_honours_sliding_windows():
    # Gemma 3 27B: 52 layers keep at most 1024 tokens, 10 keep all; 16 KV heads x 128 x 2 x 2 B
    # per layer. 2000 tokens = 125 blocks exactly, reservation 8192.
    d = tk.Deployment("gemma-3-27b", "h200", usable_memory_fraction=1.0, workspace_bytes=0)
    per_layer = 2 * 16 * 128 * 2
    k_paged = per_layer * (52 * 1024 + 10 * 2000)
    k_contig = per_layer * (52 * 1024 + 10 * 8192)
    c = kv_capacity_sequences(d, 2000, "paged", max_tokens=8192)
    assert c.kv_bytes_per_sequence == pytest.approx(k_paged)
    assert c.paged_over_contiguous == pytest.approx(k_contig / k_paged)
    room = 143_771 * 2**20 - tk.weight_bytes(tk.model("gemma-3-27b"))   # H200 visible memory
    assert c.paged_sequences == int(room // k_paged)
    assert c.contiguous_sequences == int(room // k_contig)


def test_capacity_zero_when_weights_leave_no_room():
    # Llama 3.1 405B in BF16 (~811 GB) on one 80 GB H100.
    d = tk.Deployment("llama-3.1-405b", "h100-sxm")
    c = kv_capacity_sequences(d, 1000, "paged", max_tokens=2048)
    assert c.room_bytes < 0
    assert c.sequences == 0 and c.paged_sequences == 0 and c.contiguous_sequences == 0
    assert c.paged_over_contiguous > 1 and math.isfinite(c.paged_over_contiguous)


def test_capacity_sweeps_broadcast():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", workspace_bytes=0)
    c = kv_capacity_sequences(d, [500, 1500], "contiguous", max_tokens=[[2048], [4096]],
                              block_tokens=[16, 32, 64])
    assert np.shape(c.sequences) == (2, 3) and np.shape(c.paged_over_contiguous) == (2, 3)
    assert np.all(np.asarray(c.sequences)[0] >= np.asarray(c.sequences)[1])


# ---- S18: the PagedAttention figures ----------------------------------------------------------
# The request mix: final lengths (prompt + output) lognormal, capped at OPT-13B's 2048-token
# context, the setting of the PagedAttention paper (OPT-13B, max 2048). The paper's ShareGPT
# trace averages about 500 tokens per request (Fig. 11: ~161 input + ~338 output); sigma 0.7
# gives the long right tail of chat traces (one sigma spans 0.5x-2x the median). Median 420
# reproduces that ~500-token mean (511); median 500 (mean 592) is a chat mix a little longer.
# Shorter mixes push the contiguous waste and the capacity ratio up (an Alpaca-like ~80-token
# mix wastes ~96% in a 2048 reservation), so the published ranges hold for chat-like traces.
MIXES = [(420, 0.7), (500, 0.7)]


@pytest.mark.parametrize(("median", "sigma"), MIXES)
def test_S18_contiguous_wastes_60_to_80_percent_paged_under_4(median, sigma):
    mix = LengthDistribution.lognormal(median, sigma, 2048)
    contiguous = kv_waste_fraction(mix, "contiguous", max_tokens=2048)
    paged = kv_waste_fraction(mix, "paged", max_tokens=2048, block_tokens=16)
    # S18 / Kwon et al. 2023 (arXiv:2309.06180): existing systems keep only 20.4-38.2% of KV
    # memory for token states (waste 62-80%, fragmentation included); vLLM wastes under 4%.
    assert 0.60 <= contiguous <= 0.80
    assert paged < 0.04


@pytest.mark.parametrize(("median", "sigma"), MIXES)
@pytest.mark.parametrize(("model", "hw"), [("opt-13b", "a100-80gb"),
                                           ("llama-2-13b", "a100-80gb"),
                                           ("llama-3.1-8b", "h100-sxm")])
def test_S18_paged_holds_2_to_4x_the_sequences(median, sigma, model, hw):
    mix = LengthDistribution.lognormal(median, sigma, 2048)
    d = tk.Deployment(model, hw)
    c = kv_capacity_sequences(d, mix, "paged", max_tokens=2048)
    # S18 / Kwon et al. 2023: 2-4x throughput; at full memory-bound batch the gain is the
    # ratio of the batches that fit.
    assert 2 <= c.paged_over_contiguous <= 4
    assert 2 <= c.paged_sequences / c.contiguous_sequences <= 4.1   # after rounding down


# ---- laws -------------------------------------------------------------------------------------
lengths_st = st.lists(st.integers(1, 5000), min_size=1, max_size=40)
block_st = st.integers(1, 512)
DEPS = [tk.Deployment("llama-3.1-8b", "h100-sxm"),
        tk.Deployment("gemma-3-27b", "h200", workspace_bytes=2e9),
        tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2, runtime_reserve_bytes=3e9)]


@given(lengths=lengths_st, block=block_st, extra=st.integers(0, 10_000))
def test_waste_fractions_in_unit_interval(lengths, block, extra):
    m = max(lengths) + extra
    for pol in ("contiguous", "paged"):
        w = kv_waste_fraction(lengths, pol, max_tokens=m, block_tokens=block)
        assert 0 <= w < 1


@given(lengths=lengths_st, block=block_st)
def test_paged_waste_below_one_partial_block(lengths, block):
    # At most b - 1 empty slots per sequence: w <= (b - 1) / (E[L] + b - 1).
    w = kv_waste_fraction(lengths, "paged", block_tokens=block)
    mean = sum(lengths) / len(lengths)
    assert w <= (block - 1) / (mean + block - 1) * (1 + 1e-12)


@given(lengths=lengths_st, block=block_st, extra_blocks=st.integers(0, 20))
def test_paged_never_wastes_more_when_reservation_is_whole_blocks(lengths, block, extra_blocks):
    m = (-(-max(lengths) // block) + extra_blocks) * block
    assert kv_waste_fraction(lengths, "paged", max_tokens=m, block_tokens=block) <= \
        kv_waste_fraction(lengths, "contiguous", max_tokens=m) * (1 + 1e-12) + 1e-15


@given(multiples=st.lists(st.integers(1, 300), min_size=1, max_size=30), block=block_st)
def test_no_paged_waste_when_lengths_fill_whole_blocks(multiples, block):
    assert kv_waste_fraction([k * block for k in multiples], "paged", block_tokens=block) == 0
    assert kv_waste_fraction(multiples, "paged", block_tokens=1) == 0


@given(lengths=lengths_st, block=block_st, copies=st.integers(2, 5))
def test_waste_depends_only_on_the_distribution(lengths, block, copies):
    a = kv_waste_fraction(lengths, "paged", block_tokens=block)
    assert kv_waste_fraction(lengths * copies, "paged", block_tokens=block) == \
        pytest.approx(a, rel=1e-12, abs=1e-15)


@given(lengths=lengths_st, extras=st.lists(st.integers(0, 100_000), min_size=2, max_size=8))
def test_contiguous_waste_grows_with_the_reservation(lengths, extras):
    m = max(lengths) + np.sort(extras)
    w = kv_waste_fraction(lengths, "contiguous", max_tokens=m)
    assert np.all(np.diff(w) >= -1e-15)


@given(dep=st.sampled_from(DEPS), lengths=st.lists(st.integers(1, 4000), min_size=1,
                                                    max_size=20),
       extras=st.lists(st.integers(0, 60_000), min_size=2, max_size=6), block=block_st)
def test_capacity_non_negative_and_non_increasing_in_max_tokens(dep, lengths, extras, block):
    m = max(lengths) + np.sort(extras)
    c = kv_capacity_sequences(dep, lengths, "contiguous", max_tokens=m, block_tokens=block)
    seqs = np.asarray(c.sequences)
    assert np.all(seqs >= 0) and np.all(np.asarray(c.paged_sequences) >= 0)
    assert np.all(np.diff(seqs) <= 0)


@given(dep=st.sampled_from(DEPS), lengths=st.lists(st.integers(1, 4000), min_size=1,
                                                    max_size=20),
       block=block_st, extra_blocks=st.integers(0, 50))
def test_paged_holds_at_least_as_many_when_reservation_is_whole_blocks(dep, lengths, block,
                                                                       extra_blocks):
    m = (-(-max(lengths) // block) + extra_blocks) * block
    c = kv_capacity_sequences(dep, lengths, "paged", max_tokens=m, block_tokens=block)
    assert c.paged_sequences >= c.contiguous_sequences
    assert c.paged_over_contiguous >= 1 - 1e-12


@given(prompt=st.integers(0, 3000), output=st.integers(1, 300), block=st.integers(1, 64))
def test_over_decode_closed_form_matches_step_by_step(prompt, output, block):
    held = sum(range(prompt + 1, prompt + output + 1))
    reserved = sum(-(-n // block) * block for n in range(prompt + 1, prompt + output + 1))
    assert kv_waste_fraction_over_decode(prompt, output, "paged", block_tokens=block) == \
        pytest.approx(1 - held / reserved, rel=1e-12, abs=1e-15)


# ---- errors -----------------------------------------------------------------------------------
def test_clear_errors():
    err = tk.TokenomicsError
    with pytest.raises(err, match="max_tokens=500 is smaller than the longest request length "
                                  "1000"):
        kv_waste_fraction([200, 1000], "contiguous", max_tokens=500)
    with pytest.raises(err, match="max_tokens=500 is smaller"):
        kv_waste_fraction([200, 1000], "paged", max_tokens=500)
    with pytest.raises(err, match="block_tokens must be a whole number >= 1, got 0"):
        kv_waste_fraction(1000, "paged", block_tokens=0)
    with pytest.raises(err, match="block_tokens must be a whole number >= 1, got 2.5"):
        kv_waste_fraction(1000, "paged", block_tokens=2.5)
    with pytest.raises(err, match="lengths is empty"):
        kv_waste_fraction([], "paged")
    with pytest.raises(err, match="lengths must be a whole number >= 1, got -5"):
        kv_waste_fraction([100, -5], "paged")
    with pytest.raises(err, match="tokens must be a whole number >= 1, got 0"):
        LengthDistribution.fixed(0)
    with pytest.raises(err, match="contiguous policy reserves max_tokens per request: pass "
                                  "max_tokens"):
        kv_waste_fraction(1000, "contiguous")
    with pytest.raises(err, match="unknown allocation policy 'buddy'"):
        kv_waste_fraction(1000, "buddy")  # type: ignore[arg-type]


def test_clear_distribution_errors():
    err = tk.TokenomicsError
    with pytest.raises(err, match="median must be > 0"):
        LengthDistribution.lognormal(0, 0.7, 2048)
    with pytest.raises(err, match="sigma must be > 0"):
        LengthDistribution.lognormal(400, -1, 2048)
    with pytest.raises(err, match="max_tokens must be a whole number >= 1"):
        LengthDistribution.lognormal(400, 0.7, 0)
    with pytest.raises(err, match="probabilities must sum to 1, got a sum of 0.9"):
        LengthDistribution([1, 2], [0.5, 0.4])
    with pytest.raises(err, match="probabilities must be finite and >= 0, got -0.5"):
        LengthDistribution([1, 2], [1.5, -0.5])
    with pytest.raises(err, match="same length"):
        LengthDistribution([1, 2, 3], [0.5, 0.5])
    with pytest.raises(err, match="low <= high, got low=10, high=5"):
        LengthDistribution.uniform(10, 5)
    with pytest.raises(err, match="fixed\\(\\) takes one length"):
        LengthDistribution.fixed([1, 2])


def test_clear_capacity_and_decode_errors():
    err = tk.TokenomicsError
    d = tk.Deployment("opt-13b", "a100-80gb")
    with pytest.raises(err, match="max_tokens=4096 exceeds opt-13b's maximum context of 2048"):
        kv_capacity_sequences(d, 1000, "contiguous", max_tokens=4096)
    with pytest.raises(err, match="lengths=3000 exceeds opt-13b's maximum context"):
        kv_capacity_sequences(d, 3000, "paged")
    with pytest.raises(err, match="pass max_tokens"):
        kv_capacity_sequences(d, 1000, "contiguous")
    with pytest.raises(err, match="max_tokens=400 is smaller than prompt_tokens \\+ "
                                  "output_tokens = 499"):
        kv_waste_fraction_over_decode(161, 338, "contiguous", max_tokens=400)
    with pytest.raises(err, match="output_tokens must be a whole number >= 1, got 0"):
        kv_waste_fraction_over_decode(161, 0, "paged")
    with pytest.raises(err, match="max_tokens=400 is smaller"):
        kv_waste_fraction_over_decode(161, 338, "paged", max_tokens=400)


def test_waste_is_exact_at_a_prompt_of_a_quadrillion_tokens():
    # the fuzz profile found -0.0027 at prompt_tokens=3.2e15: the held tokens were a
    # difference of two sums near 1e31. By hand, 10 output tokens after a prompt of
    # 3,202,682,074,960,066 (= 2 mod 16) fill lengths ending in 3..12 of a 16-token block,
    # leaving 13 + 12 + ... + 4 = 85 slots empty out of 10 x 3.2e15 held
    p = 3_202_682_074_960_066
    held = 10 * p + 55
    got = tk.kv_waste_fraction_over_decode(float(p), 10, "paged")
    assert got == pytest.approx(85 / (held + 85), rel=1e-12)
    assert 0 <= tk.kv_waste_fraction_over_decode(float(p), 10, "contiguous",
                                                  max_tokens=float(p + 10)) < 1e-14


@given(p=st.integers(0, 5000), o=st.integers(1, 3000), b=st.integers(1, 64))
def test_paged_waste_equals_a_step_by_step_count(p, o, b):
    n = np.arange(p + 1, p + o + 1)
    reserved = (np.ceil(n / b) * b).sum()
    assert tk.kv_waste_fraction_over_decode(p, o, "paged", block_tokens=b) == pytest.approx(
        1 - n.sum() / reserved, rel=1e-12, abs=1e-15)
