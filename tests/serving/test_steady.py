"""Steady-state continuous batching: hand-checkable limits and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.errors import TokenomicsError
from tokenomics.serving.batching import mixed_step_seconds
from tokenomics.serving.steady import steady_state

DEP = tk.Deployment("llama-3.1-8b", "h100-sxm")


def test_long_outputs_tend_to_the_decode_step():
    # O = 1e6: the prefill share per step is B/O x P = 64/1e6 x 2048 = 0.13 tokens, so the
    # step is the decode step of 64 sequences at the mean context 2048 + 1e6/2.
    d = DEP.with_(allow_beyond_max_context=True)
    r = steady_state(d, 64, 2048, 1_000_000)
    dec = tk.decode(d, 64, 2048 + 500_000, on_oom="mark").time_s
    assert r.tpot_s == pytest.approx(dec, rel=1e-3)


def test_short_outputs_carry_their_prefill_share():
    # B = 64, O = 128, I = 2048: 64 / 128 = 0.5 arrivals a step, 0.5 x 2048 = 1,024 prompt
    # tokens a step beside the 64 - 0.5 = 63.5 decodes (the admitted half-request's first
    # token comes from its prefill), so TPOT > decode(63.5, 2048 + 64).
    r = steady_state(DEP, 64, 2048, 128)
    assert r.arrivals_per_step == 0.5
    assert r.prefill_tokens_per_step == 1024
    alone = float(mixed_step_seconds(DEP, 63.5, 2048 + 64, 1.0, 0.0, 0.0))
    assert alone < tk.decode(DEP, 64, 2048 + 64).time_s
    assert r.tpot_s > alone
    assert r.decode_only_tpot_s == pytest.approx(alone)


def test_throughput_is_concurrency_over_step_over_devices():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)
    r = steady_state(d, 48, 1024, 256)
    assert r.output_tokens_per_s_per_device == 48 / r.tpot_s / 2
    assert r.tokens_per_s_per_user == 1 / r.tpot_s


def test_max_is_the_largest_batch_that_fits():
    # "max": every sequence holds its prompt and its whole output, 2048 + 128 tokens.
    r = steady_state(DEP, "max", 2048, 128)
    assert r.concurrency == tk.max_batch(DEP, 2176)
    assert bool(r.fits)
    assert not bool(steady_state(DEP, int(r.concurrency) + 1, 2048, 128).fits)


def test_ttft_counts_chunks_of_one_step_each():
    # chunk = P: the whole prompt in one chunk. Only a = 64/128 = 0.5 chunks ride in the
    # average step, but the step that carries this prompt carries all 2,048 of its tokens:
    # TTFT is one step of 63.5 decodes beside one whole prefill, longer than the mean step.
    one = steady_state(DEP, 64, 2048, 128, chunk_tokens=2048)
    own = float(mixed_step_seconds(DEP, 63.5, 2048 + 64, 2048.0, 0.0, 1.0))
    assert one.ttft_s == pytest.approx(own)
    assert one.ttft_s > one.tpot_s
    assert one.tpot_s == pytest.approx(steady_state(DEP, 64, 2048, 128).tpot_s)
    # chunk = P/4: a k = 0.5 x 4 = 2 chunks in every step, so each of the four steps that
    # carry this prompt is an average step.
    four = steady_state(DEP, 64, 2048, 128, chunk_tokens=512)
    assert four.chunks_per_prompt == 4 == math.ceil(2048 / 512)
    assert four.ttft_s == pytest.approx(4 * four.tpot_s)


def test_cached_prefix_lowers_the_prefill_share():
    # 1,536 of 2,048 prompt tokens cached: 0.5 x 512 = 256 computed prompt tokens a step.
    r = steady_state(DEP, 64, 2048, 128, cached_tokens=1536)
    assert r.prefill_tokens_per_step == 256
    assert r.tpot_s < steady_state(DEP, 64, 2048, 128).tpot_s


def test_vectorised_over_concurrency_and_lengths():
    r = steady_state(DEP, np.array([[8], [64]]), np.array([512, 2048]), 256)
    assert np.shape(r.tpot_s) == (2, 2)
    assert len(r.to_frame()) == 4
    assert r.efficiency == "roofline"


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 200), i=st.integers(16, 8000), o=st.integers(2, 2000))
def test_tpot_non_decreasing_in_concurrency_and_input(b, i, o):
    base = steady_state(DEP, b, i, o).tpot_s
    assert steady_state(DEP, b + 1, i, o).tpot_s >= base * (1 - 1e-12)
    assert steady_state(DEP, b, i + 1, o).tpot_s >= base * (1 - 1e-12)


@pytest.mark.parametrize("kwargs", [
    dict(concurrency=0), dict(concurrency="most"), dict(concurrency=1.5),
    dict(input_tokens=0), dict(output_tokens=-1), dict(cached_tokens=2048),
    dict(chunk_tokens=0),
])
def test_bad_inputs_raise(kwargs):
    args = dict(concurrency=64, input_tokens=2048, output_tokens=128) | kwargs
    extra = {k: args.pop(k) for k in ("cached_tokens", "chunk_tokens") if k in args}
    with pytest.raises(TokenomicsError):
        steady_state(DEP, args["concurrency"], args["input_tokens"], args["output_tokens"],
                     **extra)


def test_a_full_pipeline_is_the_whole_model_at_a_micro_batch():
    # pp = 2 stages on one device each, B = 8 >= pp: two micro-batches of 4 in flight, a
    # token per sequence every cycle of two stage times = the whole model's step at batch 4
    # on one device (tp = 1), plus the stage-to-stage sends (pp per cycle). A step carries
    # whole prompts: a = 8/128 arrivals a step over two micro-batches is one prompt chunk in
    # 1 of 32 micro-batch steps and none in the other 31.
    pp2 = tk.Deployment("llama-3.1-70b", "h200", pp=2, weight_dtype="fp8")
    one = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8",
                        usable_memory_fraction=1.0)
    r = steady_state(pp2, 8, 512, 128)
    from tokenomics.serving.batching import mixed_step_seconds
    a = 8 / 128
    t = (31 / 32 * mixed_step_seconds(pp2, (8 - a) / 2, 512 + 64, 512.0, 0.0, 0, "decode")
         + 1 / 32 * mixed_step_seconds(pp2, (8 - a) / 2, 512 + 64, 512.0, 0.0, 1, "decode"))
    assert r.tpot_s == pytest.approx(float(t), rel=1e-12)
    assert r.output_tokens_per_s_per_device == pytest.approx(8 / float(t) / 2, rel=1e-12)
    # the micro-batch's weight reads are the whole model's: no faster than one device at B/2
    alone = steady_state(one, 4, 512, 128)
    assert r.tpot_s >= alone.tpot_s * (1 - 1e-12)


def test_below_pp_sequences_the_pipeline_has_a_bubble():
    # B < pp = 4: m = B micro-batches of one sequence, each passing four stages in turn (a
    # quarter of the model each): a token per sequence every full-model step at batch 1,
    # whatever B, while only B of the 4 stages work at a time. Per device the throughput is
    # B / 4 of a full pipeline's at the same micro-batch.
    pp4 = tk.Deployment("llama-3.1-70b", "h200", pp=4, weight_dtype="fp8")
    from tokenomics.serving.steady import pipeline_microbatches
    assert [float(pipeline_microbatches(pp4, b)[0]) for b in (1, 2, 4, 9)] == [1, 2, 4, 4]
    r = {b: steady_state(pp4, b, 512, 128) for b in (1, 2, 4)}
    per_dev = {b: float(x.output_tokens_per_s_per_device) for b, x in r.items()}
    # one-sequence micro-batches: the same step, so TPOT rises only by each micro-batch's
    # share of prefill work; throughput per device grows with the busy stages
    assert per_dev[2] / per_dev[1] == pytest.approx(2 * float(r[1].tpot_s / r[2].tpot_s),
                                                    rel=1e-12)
    assert per_dev[4] / per_dev[1] == pytest.approx(4 * float(r[1].tpot_s / r[4].tpot_s),
                                                    rel=1e-12)


def test_fits_is_a_bool_at_one_point_and_a_mask_over_many():
    assert steady_state(DEP, 64, 2048, 128).fits is True
    assert steady_state(DEP, [1, 10**6], 2048, 128).fits.tolist() == [True, False]


# --------------------------------------------------------------------------------------------
# The properties issue 12 states for steady_state
# --------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 256), i=st.integers(1, 8000), o=st.integers(1, 4000))
def test_tpot_is_at_least_the_decode_only_step(b, i, o):
    r = steady_state(DEP, b, i, o)
    assert r.tpot_s >= r.decode_only_tpot_s


@settings(max_examples=30, deadline=None)
@given(i=st.integers(16, 4000), o=st.integers(2, 2000))
def test_tpot_and_throughput_rise_with_concurrency_up_to_the_memory_limit(i, o):
    top = int(tk.max_batch(DEP, i + o))
    b = np.unique(np.linspace(1, max(top, 1), 24).astype(int))
    r = steady_state(DEP, b, i, o)
    assert bool(np.all(r.fits))
    assert bool(np.all(np.diff(r.tpot_s) >= -1e-15))
    assert bool(np.all(np.diff(r.output_tokens_per_s_per_device) >= -1e-9))


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 512), i=st.integers(1, 8000), o=st.integers(1, 4000),
       chunk=st.one_of(st.none(), st.integers(64, 4096)))
def test_littles_law(b, i, o, chunk):
    # concurrency = request rate x time a request spends in the engine
    r = steady_state(DEP, b, i, o, chunk_tokens=chunk)
    assert r.requests_per_s * r.request_latency_s == pytest.approx(b, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(i=st.integers(1, 16000))
def test_one_request_of_one_output_token_is_a_prefill(i):
    r = steady_state(DEP, 1, i, 1)
    p = tk.prefill(DEP, i).time_s
    assert r.tpot_s == pytest.approx(p, rel=1e-12)
    assert r.ttft_s == pytest.approx(p, rel=1e-12)


# --------------------------------------------------------------------------------------------
# The decode pool of a disaggregated deployment
# --------------------------------------------------------------------------------------------
def test_decode_pool_steps_are_decode_steps_of_everyone_in_flight():
    # No prefill rides in a decode pool's steps: TPOT is the decode step of all B sequences
    # at the mean context I + O/2, and each request spends O - 1 steps there.
    r = steady_state(DEP, 64, 2048, 128, pool="decode")
    assert r.tpot_s == pytest.approx(tk.decode(DEP, 64, 2048 + 64).time_s, rel=1e-12)
    assert r.prefill_tokens_per_step == 0 and r.ttft_s == 0
    assert r.arrivals_per_step == pytest.approx(64 / 127)
    assert r.request_latency_s == pytest.approx(127 * r.tpot_s)
    colocated = steady_state(DEP, 64, 2048, 128)
    assert r.tpot_s < colocated.tpot_s          # the prompts went to the prefill pool


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 512), i=st.integers(1, 8000), o=st.integers(2, 4000))
def test_decode_pool_littles_law(b, i, o):
    r = steady_state(DEP, b, i, o, pool="decode")
    assert r.requests_per_s * r.request_latency_s == pytest.approx(b, rel=1e-9)


def test_decode_pool_bad_inputs():
    with pytest.raises(TokenomicsError, match="output_tokens >= 2"):
        steady_state(DEP, 8, 1024, 1, pool="decode")
    with pytest.raises(TokenomicsError, match="pool must be 'colocated' or 'decode'"):
        steady_state(DEP, 8, 1024, 64, pool="prefill")


def test_results_say_which_efficiency_produced_them():
    cal = tk.efficiency_presets()["calibrated"]
    assert steady_state(DEP, 8, 512, 64).efficiency == "roofline"
    assert steady_state(DEP.with_(efficiency=cal), 8, 512, 64).efficiency == "calibrated"
    assert steady_state(DEP.with_(efficiency=tk.Efficiency(mfu=0.5)), 8, 512,
                        64).efficiency == "custom"
    assert set(tk.decode(DEP.with_(efficiency=cal), [1, 8], 512).to_frame().efficiency) == \
        {"calibrated"}


@settings(max_examples=200, deadline=None)
@given(c=st.floats(0.0, 50.0, allow_nan=False))
def test_whole_chunk_steps_average_to_the_mean_chunk_count(c):
    # a mean of c chunks a step is steps of floor(c) and floor(c) + 1 whole chunks whose
    # shares weigh back to c; the request's own step carries at least its own chunk
    from tokenomics.serving.steady import chunk_counts
    n, w = chunk_counts(c)
    assert n[0] == np.floor(c) and n[1] == n[0] + 1 and n[4] == 0
    assert 0 <= w[0] <= 1 and w[0] + w[1] == pytest.approx(1.0)
    assert w[0] * n[0] + w[1] * n[1] == pytest.approx(c, abs=1e-12)
    assert w[2] * n[2] + w[3] * n[3] == pytest.approx(max(c, 1.0), abs=1e-12)
    assert n[2] >= 1 and w[4] == 1
