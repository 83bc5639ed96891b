"""SymPy derivations against hand calculations and against the numeric code using each law."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.pareto.curves import decode_curve
from tokenomics.pareto.symbolic import frontier_line, ridge_batch, roofline_step_time
from tokenomics.physics.lines import crossing_batch as _crossing_batch
from tokenomics.physics.roofline import critical_batch, roofline_time

X, ALPHA, BETA, N = sp.symbols("x alpha beta n", positive=True)
B, F1, P, Q0, Q1, BM = sp.symbols("B F1 P Q0 Q1 beta_m", positive=True)


def test_sympy_oracle_for_a_linear_piece():
    # Two whole batches on one piece of a curve give alpha and beta; the SymPy line
    # y = (1 - beta x)/(alpha n) reproduces the numeric throughput.
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
    r = tk.decode(d, [2, 3, 4], 2048)
    t = np.asarray(r.step_time_s)
    alpha, beta = t[1] - t[0], t[0] - 2 * (t[1] - t[0])
    x, a, b, n = sp.symbols("x alpha beta n", positive=True)
    fy = sp.lambdify((x, a, b, n), frontier_line())
    assert fy(1 / t[2], alpha, beta, 4) == pytest.approx(r.tokens_per_s_per_device[2],
                                                          rel=1e-9)
    # The ridge batch formula matches the kink the closed form finds for one operator.
    P, Q0, Q1, bm, F1 = sp.symbols("P Q0 Q1 beta_m F1", positive=True)
    assert sp.simplify(ridge_batch() - P * Q0 / (F1 * bm - P * Q1)) == 0


@pytest.mark.parametrize("a, b, n, x, want", [
    # t = 1 ms * B + 20 ms on 4 devices, at x = 25 token/s per user:
    # t = 1/25 = 0.04 s, B = (0.04 - 0.02)/0.001 = 20, y = B/(n t) = 20/(4 * 0.04) = 125;
    # the line: (1 - 0.02 * 25)/(0.001 * 4) = 0.5/0.004 = 125.
    (sp.Rational(1, 1000), sp.Rational(1, 50), 4, 25, 125),
    # t = 2 ms * B + 10 ms on 8 devices, at x = 50: t = 0.02 s, B = 0.01/0.002 = 5,
    # y = 5/(8 * 0.02) = 31.25; the line: (1 - 0.5)/(0.002 * 8) = 0.5/0.016 = 31.25.
    (sp.Rational(2, 1000), sp.Rational(1, 100), 8, 50, sp.Rational(125, 4)),
    # At batch 0 (x = 1/beta) the line meets y = 0: (1 - 0.02 * 50)/(0.001 * 4) = 0.
    (sp.Rational(1, 1000), sp.Rational(1, 50), 4, 50, 0),
])
def test_frontier_line_at_hand_picked_numbers(a, b, n, x, want):
    assert frontier_line().subs({X: x, ALPHA: a, BETA: b, N: n}) == want


@given(a=st.floats(1e-6, 1e-1), b=st.floats(1e-4, 1.0), batch=st.floats(1.0, 4096.0),
       n=st.integers(1, 72))
def test_frontier_line_is_throughput_at_the_batch_of_that_interactivity(a, b, batch, n):
    # Property: at x = 1/t(B) the line gives y = B/(n t(B)) for any piece and batch.
    t = a * batch + b
    fy = sp.lambdify((X, ALPHA, BETA, N), frontier_line())
    assert fy(1 / t, a, b, n) == pytest.approx(batch / (n * t), rel=1e-9)


@pytest.mark.parametrize("model, hw, tp, fmt", [
    ("llama-3.1-8b", "h100-sxm", 1, None), ("llama-3.1-70b", "h200", 4, "fp8"),
    ("qwen3-32b", "b200", 2, None)])
def test_frontier_line_equals_decode_curve_throughput_on_each_piece(model, hw, tp, fmt):
    # alpha, beta of each straight piece from its two end vertices; the SymPy line at the
    # piece's middle interactivity is DecodeCurve.throughput_at there.
    kw = dict(weight_dtype=fmt, compute_dtype=fmt) if fmt else {}
    dep = tk.Deployment(model, hw, tp=tp, **kw)
    c = decode_curve(dep, 2048)
    fy = sp.lambdify((X, ALPHA, BETA, N), frontier_line())
    pieces = [k for k in range(len(c.batch) - 1) if c.batch[k + 1] - c.batch[k] >= 1.0]
    assert pieces
    for k in pieces:
        b0, b1 = c.batch[k], c.batch[k + 1]
        t0, t1 = c.step_time_s[k], c.step_time_s[k + 1]
        alpha = (t1 - t0) / (b1 - b0)
        beta = t0 - alpha * b0
        x = 0.5 * (c.tokens_per_s_per_user[k] + c.tokens_per_s_per_user[k + 1])
        assert fy(x, alpha, beta, dep.n_devices) == pytest.approx(float(c.throughput_at(x)),
                                                                   rel=1e-9)


# One operator, hand-picked: F1 = 2e9 FLOP per sequence, P = 1e15 FLOP/s, Q0 = 1.6e10 B of
# weights, Q1 = 2.4e6 B per sequence, beta_m = 3.2e12 B/s.
OP = {F1: 2e9, P: 1e15, Q0: 1.6e10, Q1: 2.4e6, BM: 3.2e12}


@pytest.mark.parametrize("batch, want", [
    # B = 1: compute 2e9/1e15 = 2e-6 s; memory (1.6e10 + 2.4e6)/3.2e12 = 5.00075e-3 s.
    (1, 5.00075e-3),
    # B = 4000: compute 8e12/1e15 = 8e-3 s; memory (1.6e10 + 9.6e9)/3.2e12 = 8e-3 s.
    (4000, 8e-3),
    # B = 10000: compute 2e13/1e15 = 0.02 s; memory 4e10/3.2e12 = 0.0125 s.
    (10_000, 0.02),
])
def test_roofline_step_time_by_hand_and_against_roofline_time(batch, want):
    sym = float(roofline_step_time().subs({**OP, B: batch}))
    assert sym == pytest.approx(want, rel=1e-12)
    num = roofline_time(OP[F1] * batch, OP[Q0] + OP[Q1] * batch, OP[P], OP[BM])
    assert sym == pytest.approx(float(num), rel=1e-12)


def test_ridge_batch_by_hand_and_against_the_curve_kink_formula():
    # B* = P Q0/(F1 beta_m - P Q1) = 1e15 * 1.6e10/(2e9 * 3.2e12 - 1e15 * 2.4e6)
    #    = 1.6e25/(6.4e21 - 2.4e21) = 1.6e25/4e21 = 4000 (where both times are 8 ms, above).
    assert float(ridge_batch().subs(OP)) == pytest.approx(4000.0, rel=1e-12)
    # The numeric kink: compute f1 b = F1/P b meets memory q0 + q1 b = (Q0 + Q1 b)/beta_m.
    got = _crossing_batch(0.0, OP[F1] / OP[P], OP[Q0] / OP[BM], OP[Q1] / OP[BM])
    assert got == pytest.approx(4000.0, rel=1e-12)
    # Memory per sequence growing faster than compute: never compute-bound, no kink.
    assert _crossing_batch(0.0, 1e-6, 1e-3, 2e-6) is None


@given(f1=st.floats(1e6, 1e13), p=st.floats(1e12, 1e16), q0=st.floats(1e6, 1e12),
       q1=st.floats(0.0, 1e9), bm=st.floats(1e11, 1e13))
def test_ridge_batch_equals_the_numeric_kink(f1, p, q0, q1, bm):
    assume(f1 * bm >= 2 * p * q1)          # compute overtakes memory, far from the pole
    sym = sp.lambdify((F1, P, Q0, Q1, BM), ridge_batch())(f1, p, q0, q1, bm)
    assert _crossing_batch(0.0, f1 / p, q0 / bm, q1 / bm) == pytest.approx(sym, rel=1e-9)


def test_ridge_batch_without_activations_is_the_critical_batch():
    # A weight GEMM does 2 FLOPs and reads b_w bytes per weight element per token; without
    # activation bytes (Q1 = 0) B* = P * b_w/(2 beta_m). TPU v5e, bf16: 197e12 FLOP/s,
    # 819e9 B/s, so B* = 197e12 * 2/(2 * 819e9) = 240.53 (Austin et al., "How to Scale Your
    # Model": about 240).
    b_star = float(ridge_batch().subs({F1: 2, Q0: 2, Q1: 0, P: 197e12, BM: 819e9}))
    assert b_star == pytest.approx(197e12 / 819e9, rel=1e-12)
    assert b_star == pytest.approx(critical_batch(tk.hardware("tpu-v5e"), "bf16"), rel=1e-12)


def test_ridge_batch_is_a_vertex_of_the_decode_curve():
    # Llama-3.1-8B's dense FFN on one H100 SXM (bf16, roofline efficiency): 32 layers x 3
    # matrices of 4096 x 14336 = 5,637,144,576 weights, so F1 = 2 x that = 11,274,289,152
    # FLOP per token and Q0 = 2 B x that = 11,274,289,152 B; activations
    # 2 B x (2 x 4096 + 3 x 14336) x 32 layers = 3,276,800 B per token. With the datasheet
    # 989.4 TFLOP/s and 3.35 TB/s:
    # B* = P Q0/(F1 beta_m - P Q1) = 989.4e12/(3.35e12 - 989.4e12 x 3,276,800/11,274,289,152)
    #    = 989.4e12/3.0624e12 = 323.08.
    w = 32 * 3 * 4096 * 14336
    op = {F1: 2 * w, Q0: 2 * w, Q1: 2 * (2 * 4096 + 3 * 14336) * 32, P: 989.4e12, BM: 3.35e12}
    b_star = float(ridge_batch().subs(op))
    assert b_star == pytest.approx(323.08, abs=0.01)
    c = decode_curve(tk.Deployment("llama-3.1-8b", "h100-sxm"), 1024)
    assert np.min(np.abs(c.batch - b_star)) <= 1e-9 * b_star
