"""A decode over many points from a deployment's plan (physics/grid.py) equals the engine.

Issue 30: "Hypothesis tests: every fast and vector path equals the engine to 1e-12 over
dense, MoE, MLA, windowed and pipelined deployments" (windows, linear attention and
pipelines keep the engine; the last test says so).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tests.physics.test_plan import CAL, DENSE, MOE
from tokenomics.physics.grid import GRID_BLOCK, GRID_POINTS, GRID_TABLE, DecodeGrid
from tokenomics.physics.plan import decode_grid_plan
from tokenomics.physics.step import decode_reference

# the scalar plans' dense and MoE deployments, and MLA with experts
GRIDS = DENSE + MOE + [tk.Deployment("deepseek-v3", "h200", tp=8, weight_dtype="fp8",
                                     compute_dtype="fp8", efficiency=CAL)]
FIELDS = ("time_s", "roofline_s", "lower_bound_s", "compute_time_s", "memory_time_s",
          "comm_time_s", "overhead_s", "flops_per_device", "bytes_per_device",
          "tokens_per_s_per_user", "tokens_per_s_per_device", "collective_time_s", "batch",
          "context_tokens", "new_tokens")


def _same_grid(got, want):
    for f in FIELDS:
        g, w = np.asarray(getattr(got, f)), np.asarray(getattr(want, f))
        assert g.shape == w.shape, f
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=f)
    assert (np.asarray(got.bound) == np.asarray(want.bound)).all()
    assert (np.asarray(got.fits) == np.asarray(want.fits)).all()
    assert (got.phase, got.efficiency) == (want.phase, want.efficiency)


@settings(max_examples=40, deadline=None)
@given(i=st.integers(0, len(GRIDS) - 1), seed=st.integers(0, 2**32 - 1),
       top_b=st.integers(1, 4096), n=st.integers(GRID_POINTS, 3 * GRID_BLOCK))
def test_a_decode_grid_equals_the_engine(i, seed, top_b, n):
    d = GRIDS[i]
    rng = np.random.default_rng(seed)
    B = rng.integers(1, top_b + 1, n)
    C = rng.integers(1, int(d.model.max_context) + 1, n)
    assert decode_grid_plan(d, decode_reference) is not None      # the grid path is taken
    _same_grid(tk.decode(d, B, C, on_oom="mark"), decode_reference(d, B, C, on_oom="mark"))


@pytest.mark.parametrize("i", [0, 5, len(GRIDS) - 1])
def test_a_decode_grid_broadcasts_and_reads_batches_past_its_table(i):
    d = GRIDS[i]
    b = np.array([[1], [7], [300], [GRID_TABLE + 1], [2**40]])  # the last two: no table
    c = np.linspace(1, int(d.model.max_context), 512).round()[None, :]
    _same_grid(tk.decode(d, b, c, on_oom="mark"), decode_reference(d, b, c, on_oom="mark"))
    # one batch over many contexts, and lists
    cs = np.arange(1, GRID_POINTS + 1).tolist()
    _same_grid(tk.decode(d, 8, cs), decode_reference(d, 8, cs))


def test_a_decode_grid_raises_as_the_engine_does_when_a_point_does_not_fit():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    b = np.full(GRID_POINTS, 8)
    c = np.full(GRID_POINTS, 4096)
    assert tk.decode(d, b, c).fits.all()
    b[-1] = 4096
    with pytest.raises(tk.DoesNotFitError):
        tk.decode(d, b, c)
    with pytest.raises(tk.TokenomicsError, match="batch must be a whole number >= 1"):
        tk.decode(d, np.zeros(GRID_POINTS, int), c)


@pytest.mark.parametrize("d", [tk.Deployment("gemma-3-27b", "h200"),
                               tk.Deployment("qwen3-next-80b-a3b", "h200", tp=4),
                               tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4, pp=2)])
def test_windows_linear_attention_and_pipelines_keep_the_engine_for_grids(d):
    # windows cap a layer's cache (not affine in the context), linear attention keeps a
    # state, a pipeline's step is a function of its micro-batches
    assert decode_grid_plan(d, decode_reference) is None


def test_the_knots_of_a_single_device_decode_are_its_weight_gemms_ridge_batches():
    # Llama 3.1 8B in BF16 on one H100 SXM at the roofline: no collectives, so the only
    # crossings are the four weight GEMMs' (Q/K/V, output, FFN, head) ridge batches. A BF16
    # weight GEMM at batch b does 2 FLOPs per 2-byte weight (intensity b), so its ridge is at
    # least the device's ridge point, 989.4 TFLOP/s / 3.35 TB/s = 295 (datasheet); the
    # activations it also moves push it up, by less than 2x.
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    g = DecodeGrid.of(decode_grid_plan(d, decode_reference))
    assert len(g.knots) == 4
    assert (g.knots > 989.4 / 3.35).all() and (g.knots < 2 * 989.4 / 3.35).all()
    assert (np.diff(g.knots) > 0).all()


@pytest.mark.parametrize("i", [0, 5, len(GRIDS) - 1])
def test_once_a_plan_is_built_small_arrays_and_odd_scalars_take_it_and_agree(i):
    # a deployment that holds its plan times any array from it (and numpy scalars, which
    # miss the plain-int fast path): the same values and types as the engine's
    d = GRIDS[i]
    assert decode_grid_plan(d, decode_reference) is not None
    for b, c in ((np.array([1, 8, 300]), 4096), (np.int64(16), np.int64(2048)),
                 ([[2], [64]], [1000, 8000])):
        got, want = tk.decode(d, b, c, on_oom="mark"), decode_reference(d, b, c, on_oom="mark")
        _same_grid(got, want)
        for f in FIELDS + ("bound", "fits"):
            assert type(getattr(got, f)) is type(getattr(want, f)), f
