"""Speculative decoding: expected tokens by hand, the cycle against its formula, S25 from the
seed digest, where speculation stops paying, the best draft length, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.physics.step import decode
from tokenomics.serving.speculative import (
    SpeculativeResult,
    best_speculation_k,
    expected_accepted_from_table,
    expected_accepted_tokens,
    speculative_decode,
)

REL = 1e-12


@pytest.fixture(scope="module")
def l70():
    return tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)


@pytest.fixture(scope="module")
def l8_on_4():
    return tk.Deployment("llama-3.1-8b", "h100-sxm", tp=4)


@pytest.fixture(scope="module")
def l8():
    return tk.Deployment("llama-3.1-8b", "h100-sxm")


# ---- expected tokens per pass, by hand ------------------------------------------------------
def test_expected_tokens_alpha_08_k4_by_hand():
    # 1 + 0.8 + 0.64 + 0.512 + 0.4096 = (1 - 0.8**5) / (1 - 0.8) = 3.3616
    e = expected_accepted_tokens(0.8, 4)
    assert isinstance(e, float)
    assert e == pytest.approx(1 + 0.8 + 0.64 + 0.512 + 0.4096, rel=REL)
    assert e == pytest.approx(3.3616, rel=REL)


def test_expected_tokens_at_the_ends():
    for k in (0, 1, 4, 8, 64):
        assert expected_accepted_tokens(0.0, k) == 1.0          # only the target's own token
        assert expected_accepted_tokens(1.0, k) == k + 1        # every draft plus a bonus
    assert expected_accepted_tokens(0.9, 0) == 1.0              # no drafts: plain decode
    # Just below 1 the closed form must not cancel: sum of 4 powers of (1 - 1e-12) ~ 4 - 6e-12.
    assert expected_accepted_tokens(1 - 1e-12, 3) == pytest.approx(4 - 6e-12, rel=1e-13)


def test_expected_tokens_broadcast():
    e = expected_accepted_tokens(np.array([0.0, 0.5, 1.0]), np.array([[1], [3]]))
    assert np.shape(e) == (2, 3)
    # k = 1: 1, 1 + 0.5, 2.  k = 3: 1, 1 + 0.5 + 0.25 + 0.125, 4.
    np.testing.assert_allclose(e, [[1, 1.5, 2], [1, 1.875, 4]], rtol=REL)


def test_table_by_hand():
    # Exactly j accepted with p = 0.2, 0.3, 0.5: 1 + 0*0.2 + 1*0.3 + 2*0.5 = 2.3 tokens.
    assert expected_accepted_from_table(length_probabilities={0: 0.2, 1: 0.3, 2: 0.5}) == \
        pytest.approx(2.3, rel=REL)
    assert expected_accepted_from_table(length_probabilities=[0.2, 0.3, 0.5]) == \
        pytest.approx(2.3, rel=REL)
    # Missing j count as zero: 1 + 3 * 0.5 = 2.5.
    assert expected_accepted_from_table(length_probabilities={0: 0.5, 3: 0.5}) == \
        pytest.approx(2.5, rel=REL)
    # Conditional rates 0.9, 0.8, 0.7: 1 + 0.9 + 0.9*0.8 + 0.9*0.8*0.7 = 3.124.
    assert expected_accepted_from_table(position_rates=[0.9, 0.8, 0.7]) == \
        pytest.approx(1 + 0.9 + 0.72 + 0.504, rel=REL)
    # No positions: k = 0, one token per pass.
    assert expected_accepted_from_table(position_rates=[]) == 1.0
    # Several tables, one per row.
    e = expected_accepted_from_table(length_probabilities=[[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(e, [1.0, 2.0], rtol=REL)


# ---- properties -----------------------------------------------------------------------------
probs = st.floats(0, 1, allow_nan=False)
ks = st.integers(0, 64)


@given(probs, probs, ks)
def test_expected_tokens_non_decreasing_in_alpha(a1, a2, k):
    lo, hi = sorted((a1, a2))
    assert expected_accepted_tokens(lo, k) <= expected_accepted_tokens(hi, k) * (1 + REL)


@given(probs, ks)
def test_expected_tokens_non_decreasing_in_k_and_bounded(a, k):
    e = expected_accepted_tokens(a, k)
    assert e <= expected_accepted_tokens(a, k + 1) * (1 + REL)
    assert 1 - REL <= e <= (k + 1) * (1 + REL)


@given(probs, st.integers(0, 32))
def test_table_agrees_with_closed_form(a, k):
    closed = expected_accepted_tokens(a, k)
    # Every position accepted at rate alpha.
    assert expected_accepted_from_table(position_rates=[a] * k) == pytest.approx(closed,
                                                                                rel=1e-9)
    # Truncated geometric: p_j = alpha^j (1 - alpha) for j < k, p_k = alpha^k.
    p = [a**j * (1 - a) for j in range(k)] + [a**k]
    assert expected_accepted_from_table(length_probabilities=p) == pytest.approx(closed,
                                                                                 rel=1e-9)


# ---- the cycle against its formula ----------------------------------------------------------
def test_cycle_by_hand_with_a_given_draft_step(l70):
    # Cycle = k * t_draft + t_verify(k + 1 tokens); per user E / cycle; per device B E / cycle / 4.
    B, C, k, td = 8, 4096, 4, 1e-3
    tv = decode(l70, B, C, new_tokens=k + 1).step_time_s
    t1 = decode(l70, B, C).step_time_s
    E = (1 - 0.8**5) / 0.2
    cycle = 4 * 1e-3 + tv
    r = speculative_decode(l70, B, C, k=k, alpha=0.8, draft_step_time_s=td)
    assert isinstance(r, SpeculativeResult) and isinstance(r.cycle_time_s, float)
    assert r.draft_time_s == pytest.approx(4e-3, rel=REL)
    assert r.cycle_time_s == pytest.approx(cycle, rel=REL)
    assert r.accepted_tokens == pytest.approx(E, rel=REL)
    assert r.tokens_per_s_per_user == pytest.approx(E / cycle, rel=REL)
    assert r.tokens_per_s_per_device == pytest.approx(8 * E / cycle / 4, rel=REL)
    assert r.plain_tokens_per_s_per_user == pytest.approx(1 / t1, rel=REL)
    assert r.plain_tokens_per_s_per_device == pytest.approx(8 / t1 / 4, rel=REL)
    assert r.speedup_per_user == pytest.approx(E * t1 / cycle, rel=REL)
    assert r.throughput_ratio_per_device == pytest.approx(E * t1 / cycle, rel=REL)
    assert r.time_per_output_token_s == pytest.approx(cycle / E, rel=REL)
    assert r.fits is True and r.verify_bound == "memory"


def test_k0_is_plain_decode(l70):
    r = speculative_decode(l70, [1, 64], 4096, k=0, alpha=0.8, draft_fraction=0.01)
    p = decode(l70, [1, 64], 4096)
    np.testing.assert_array_equal(r.cycle_time_s, p.step_time_s)
    np.testing.assert_array_equal(r.speedup_per_user, [1.0, 1.0])


def test_accepted_tokens_from_a_table(l70):
    # Rates 0.9, 0.8, 0.7 for k = 3: E = 3.124 tokens per pass.
    E = expected_accepted_from_table(position_rates=[0.9, 0.8, 0.7])
    r = speculative_decode(l70, 1, 4096, k=3, accepted_tokens=E, draft_fraction=0.01)
    t1 = decode(l70, 1, 4096).step_time_s
    tv = decode(l70, 1, 4096, new_tokens=4).step_time_s
    assert r.speedup_per_user == pytest.approx(3.124 * t1 / (3 * 0.01 * t1 + tv), rel=REL)


def test_arrays_broadcast_and_frame(l70):
    r = speculative_decode(l70, np.array([[1], [8], [32]]), 4096, k=np.array([0, 2, 4, 8]),
                           alpha=0.8, draft_fraction=0.01)
    assert np.shape(r.cycle_time_s) == (3, 4)
    assert np.shape(r.verify_bound) == (3, 4)
    assert len(r.to_frame()) == 12


# ---- S25 (seed digest) ----------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.75, 0.8])
def test_S25_draft_one_hundredth_k8_speeds_up_2_to_4x(l70, alpha):
    # A draft ~1/100 the size proposes k = 8; acceptance 0.75-0.8 (EAGLE-3: > 75%).
    # Hand estimate: E = (1 - 0.8**9) / 0.2 = 4.33 tokens (0.75: (1 - 0.75**9) / 0.25 = 3.70)
    # per cycle of 8 x 0.01 plain steps of drafting + one verification pass, which at batch 1
    # is memory-bound and costs ~1.0 plain step (same weights read; 9 tokens' KV, not 1):
    # ~1.08-1.10 plain steps, so 4.33 / 1.095 = 3.95x (0.75: 3.70 / 1.095 = 3.38x).
    # At batch 1 each layer's all-reduce waits on the kernels before it (nothing to overlap
    # with): the collectives run after the kernels (collective_overlap 0), as the hand
    # estimate counts them.
    l70 = l70.with_(efficiency=tk.Efficiency(collective_overlap=0.0))
    E = (1 - alpha**9) / (1 - alpha)
    t1 = decode(l70, 1, 4096).step_time_s
    tv = decode(l70, 1, 4096, new_tokens=9).step_time_s
    assert 1.0 < tv / t1 < 1.05
    r = speculative_decode(l70, 1, 4096, k=8, alpha=alpha, draft_fraction=0.01)
    assert r.verify_bound == "memory"
    assert r.accepted_tokens == pytest.approx(E, rel=REL)
    assert r.speedup_per_user == pytest.approx(E / (8 * 0.01 + tv / t1), rel=REL)
    assert r.speedup_per_user == pytest.approx(E / 1.095, rel=0.01)
    assert 2 < r.speedup_per_user < 4


def test_catalog_draft_model_on_the_same_devices(l70, l8_on_4):
    # Llama 3.1 8B (tp=4) drafts for the 70B on the same four H100s. Its step reads ~8/70 of
    # the bytes: ~1.2 ms against ~10.6 ms. E(0.8, 4) = 3.3616; cycle = 4 x 1.2 + 10.7 ms:
    # ~3.36 x 10.6 / 15.5 = 2.3x.
    td = decode(l8_on_4, 1, 4096).step_time_s
    tv = decode(l70, 1, 4096, new_tokens=5).step_time_s
    t1 = decode(l70, 1, 4096).step_time_s
    assert td / t1 == pytest.approx(0.114, abs=0.01)
    r = speculative_decode(l70, 1, 4096, k=4, alpha=0.8, draft=l8_on_4)
    assert r.draft_step_time_s == pytest.approx(td, rel=REL)
    assert r.cycle_time_s == pytest.approx(4 * td + tv, rel=REL)
    assert r.speedup_per_user == pytest.approx(3.3616 * t1 / (4 * td + tv), rel=REL)
    assert 2.2 < r.speedup_per_user < 2.4


def test_draft_model_memory_adds_to_the_target(l70):
    # 70B on two H100s: 141 GB / 2 = 70.6 GB of weights per device, under the 72 GB usable;
    # an 8B draft adds 16 GB / 2 = 8 GB per device: 78.6 GB, which does not fit.
    d2 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2)
    s2 = tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)
    assert decode(d2, 1, 1024).fits
    assert speculative_decode(d2, 1, 1024, k=4, alpha=0.8, draft_fraction=0.01).fits
    with pytest.raises(tk.DoesNotFitError, match="draft llama-3.1-8b"):
        speculative_decode(d2, 1, 1024, k=4, alpha=0.8, draft=s2)
    r = speculative_decode(d2, 1, 1024, k=[0, 4], alpha=0.8, draft=s2, on_oom="mark")
    assert r.fits.tolist() == [True, False]   # k = 0 runs no draft


# ---- where speculation stops paying ---------------------------------------------------------
def test_helps_at_low_batch_hurts_near_the_compute_roof(l8):
    # 8B on one H100, context 64, alpha 0.8, k = 4 (E = 3.3616). At batch 1 the verification
    # pass is memory-bound (~1 plain step): ~3.36 / 1.04 = 3.2x. At batch 512 it feeds
    # 512 x 5 = 2560 tokens, far past the BF16 ridge (989 TFLOP/s / 3.35 TB/s = 295 FLOP/B,
    # i.e. ~295 tokens for 16-bit weights): the weight GEMMs cost ~5x a plain step's, and
    # 3.36 tokens for ~4-5 steps' work is below 1.
    batches = np.array([1, 16, 64, 256, 512, 1024])
    r = speculative_decode(l8, batches, 64, k=4, alpha=0.8, draft_fraction=0.01)
    ratio = np.asarray(r.throughput_ratio_per_device)
    assert np.all(np.diff(ratio) <= 1e-12 * ratio[:-1])
    assert ratio[0] == pytest.approx(3.3616 / (4 * 0.01 + 1.0), rel=0.01)
    assert ratio[0] > 3
    assert r.verify_bound[-1] == "compute"
    assert ratio[-1] < 1
    assert r.verify_time_s[-1] / r.plain_step_time_s[-1] > 3.3616   # costs more than it emits


def test_best_k_long_at_batch_1(l70):
    # Batch 1: each extra draft costs 1% of a step and adds alpha^k tokens; k = 2 already
    # gives (1 + 0.8 + 0.64) / 1.02 = 2.39x against k = 1's 1.8 / 1.01 = 1.78x.
    k = best_speculation_k(l70, 1, 4096, alpha=0.8, draft_fraction=0.01)
    assert isinstance(k, int) and k > 1
    assert k == best_speculation_k(l70, 1, 4096, alpha=0.8, draft_fraction=0.01,
                                   objective="per_device")


def test_best_k_zero_at_a_compute_bound_batch(l8):
    k = best_speculation_k(l8, [1, 512, 1024], 64, alpha=0.8, draft_fraction=0.01,
                           objective="per_device")
    assert k[0] > 1
    assert k[1:].tolist() == [0, 0]
    assert best_speculation_k(l8, 512, 64, alpha=0.0, draft_fraction=0.0) == 0  # nothing accepted


@given(st.integers(1, 256), probs, st.sampled_from([0.0, 0.01, 0.1]))
def test_best_k_matches_a_search_one_k_at_a_time(batch, alpha, frac):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    per_user = [speculative_decode(d, batch, 512, k=k, alpha=alpha, draft_fraction=frac)
                .tokens_per_s_per_user for k in range(9)]
    best = best_speculation_k(d, batch, 512, alpha=alpha, k_max=8, draft_fraction=frac)
    assert per_user[best] == pytest.approx(max(per_user), rel=1e-12)
    assert per_user[best] > max(per_user[:best], default=-1.0)   # ties go to the smaller k


def test_best_k_skips_draft_lengths_that_do_not_fit():
    d2 = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2)
    s2 = tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)
    assert best_speculation_k(d2, 1, 1024, alpha=0.8, draft=s2) == 0


# ---- clear errors ---------------------------------------------------------------------------
def test_bad_alpha_and_k():
    for a in (-0.1, 1.2, float("nan")):
        with pytest.raises(tk.TokenomicsError, match=r"alpha must be in \[0, 1\]"):
            expected_accepted_tokens(a, 4)
    for k in (-1, 1.5):
        with pytest.raises(tk.TokenomicsError, match=r"k .*must be a whole number >= 0"):
            expected_accepted_tokens(0.8, k)


def test_drafter_and_acceptance_exactly_one(l70, l8_on_4):
    with pytest.raises(tk.TokenomicsError, match="exactly one drafter.*got none"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8)
    with pytest.raises(tk.TokenomicsError,
                       match="exactly one drafter.*got draft, draft_fraction"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8, draft=l8_on_4, draft_fraction=0.01)
    with pytest.raises(tk.TokenomicsError, match="exactly one drafter"):
        best_speculation_k(l70, 1, 4096, 0.8)
    with pytest.raises(tk.TokenomicsError, match="exactly one of alpha.*got neither"):
        speculative_decode(l70, 1, 4096, k=4, draft_fraction=0.01)
    with pytest.raises(tk.TokenomicsError, match="exactly one of alpha.*got both"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8, accepted_tokens=3.0,
                           draft_fraction=0.01)


def test_bad_speculative_inputs(l70):
    with pytest.raises(tk.TokenomicsError, match=r"accepted_tokens must be in \[1, k \+ 1\]"):
        speculative_decode(l70, 1, 4096, k=4, accepted_tokens=6, draft_fraction=0.01)
    with pytest.raises(tk.TokenomicsError, match=r"accepted_tokens must be in \[1, k \+ 1\]"):
        speculative_decode(l70, 1, 4096, k=4, accepted_tokens=0.5, draft_fraction=0.01)
    with pytest.raises(tk.TokenomicsError, match="draft_fraction must be >= 0"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8, draft_fraction=-0.01)
    with pytest.raises(tk.TokenomicsError, match="draft_step_time_s must be >= 0"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8, draft_step_time_s=float("nan"))
    with pytest.raises(tk.TokenomicsError, match="on_oom"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8, draft_fraction=0.01, on_oom="skip")
    with pytest.raises(tk.TokenomicsError, match="draft runs on h200"):
        speculative_decode(l70, 1, 4096, k=4, alpha=0.8,
                           draft=tk.Deployment("llama-3.1-8b", "h200"))
    with pytest.raises(tk.TokenomicsError, match="k_max must be one whole number in 0..64"):
        best_speculation_k(l70, 1, 4096, 0.8, k_max=65, draft_fraction=0.01)
    with pytest.raises(tk.TokenomicsError, match="objective must be"):
        best_speculation_k(l70, 1, 4096, 0.8, objective="cost", draft_fraction=0.01)


def test_bad_tables():
    with pytest.raises(tk.TokenomicsError, match="must sum to 1"):
        expected_accepted_from_table(length_probabilities=[0.2, 0.3, 0.4])
    with pytest.raises(tk.TokenomicsError, match="must sum to 1"):
        expected_accepted_from_table(length_probabilities={0: 0.5, 1: 0.6})
    with pytest.raises(tk.TokenomicsError, match="exactly one of length_probabilities.*both"):
        expected_accepted_from_table(length_probabilities=[1.0], position_rates=[0.5])
    with pytest.raises(tk.TokenomicsError, match="exactly one of length_probabilities.*neither"):
        expected_accepted_from_table()
    with pytest.raises(tk.TokenomicsError, match=r"position_rates must be in \[0, 1\]"):
        expected_accepted_from_table(position_rates=[0.9, 1.1])
    with pytest.raises(tk.TokenomicsError, match=r"length_probabilities must be in \[0, 1\]"):
        expected_accepted_from_table(length_probabilities=[-0.1, 1.1])
    with pytest.raises(tk.TokenomicsError, match="keys must be whole numbers"):
        expected_accepted_from_table(length_probabilities={-1: 0.5, 0: 0.5})


# ---- the drafter as one object; release 0.1's three arguments still work ---------------------
from tokenomics.serving.speculative import Drafter  # noqa: E402


def _same(a: SpeculativeResult, b: SpeculativeResult) -> None:
    for name in SpeculativeResult.__dataclass_fields__:
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name


def test_drafter_object_and_0_1_keywords_give_the_same_cycle(l70, l8_on_4):
    # k = 8 at alpha = 0.8: (1 - 0.8**9) / 0.2 = 4.3289 tokens per pass.
    new = speculative_decode(l70, 1, 4096, k=8, alpha=0.8, drafter=Drafter(draft_fraction=0.01))
    old = speculative_decode(l70, 1, 4096, k=8, alpha=0.8, draft_fraction=0.01)
    assert new.accepted_tokens == pytest.approx((1 - 0.8**9) / 0.2, rel=REL)
    _same(new, old)
    # A draft model, as a Drafter, as a bare Deployment, or 0.1's draft=.
    a = speculative_decode(l70, 1, 4096, 4, 0.8, None, Drafter(draft=l8_on_4))
    _same(a, speculative_decode(l70, 1, 4096, 4, 0.8, None, l8_on_4))
    _same(a, speculative_decode(l70, 1, 4096, k=4, alpha=0.8, draft=l8_on_4))
    # 0.1's positional form: draft, draft_step_time_s, draft_fraction, on_oom in order.
    b = speculative_decode(l70, [1, 8], 4096, 4, 0.8, None, None, 2e-3, None, "mark")
    _same(b, speculative_decode(l70, [1, 8], 4096, 4, 0.8,
                                drafter=Drafter(draft_step_time_s=2e-3), on_oom="mark"))
    # The cycle: 4 draft steps of 2 ms plus the verification pass.
    assert np.allclose(b.cycle_time_s, 4 * 2e-3 + np.asarray(b.verify_time_s), rtol=REL)


def test_best_k_takes_the_drafter_object_or_0_1_arguments(l70):
    new = best_speculation_k(l70, [1, 64], 4096, 0.8, 12, "per_device",
                             Drafter(draft_fraction=0.02))
    assert new.tolist() == best_speculation_k(l70, [1, 64], 4096, 0.8, 12, "per_device",
                                              None, None, 0.02).tolist()
    assert new.tolist() == best_speculation_k(l70, [1, 64], 4096, 0.8, k_max=12,
                                              objective="per_device",
                                              draft_fraction=0.02).tolist()


def test_drafter_needs_exactly_one_form(l8_on_4):
    assert Drafter(draft=l8_on_4).kind == "draft"
    assert Drafter(draft_step_time_s=1e-3).kind == "draft_step_time_s"
    with pytest.raises(tk.TokenomicsError, match="exactly one drafter.*got none"):
        Drafter()
    with pytest.raises(tk.TokenomicsError,
                       match="exactly one drafter.*got draft_step_time_s, draft_fraction"):
        Drafter(draft_step_time_s=1e-3, draft_fraction=0.01)
