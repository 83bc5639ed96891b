"""The pooled parameter model: coordinates, robust loss, partial pooling, a well-posed fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenomics.calibration.design import build_design, predict_rows
from tokenomics.calibration.fitting import calibration_rows
from tokenomics.calibration.pooling import (
    LEVELS,
    PARAMS,
    PRIORS,
    TRANSFORMS,
    Fit,
    Problem,
    fit_problem,
    from_fitted,
    soft_l1,
    starts,
    to_fitted,
)


@pytest.fixture(scope="module")
def small():
    # every fourth fitted row: about 300, every stack and family but the rarest
    rows = calibration_rows()[::4]
    return rows, build_design(rows)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(PARAMS), u=st.floats(1e-6, 1 - 1e-6))
def test_coordinates_round_trip(name, u):
    v = u if TRANSFORMS[name] == "logit" else u * 1e-2
    assert from_fitted(name, to_fitted(name, v)) == pytest.approx(v, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(r=st.floats(-5.0, 5.0))
def test_soft_l1_residuals_square_to_the_loss(r):
    # rho(r) = 2 f^2 (sqrt(1 + (r/f)^2) - 1), f = 0.1: quadratic below f, linear above
    f = 0.1
    x2 = (r / f) ** 2
    rho = 2 * f * f * x2 / (np.sqrt(1 + x2) + 1)     # = 2 f^2 (sqrt(1 + x^2) - 1), no cancellation
    assert float(soft_l1(np.array(r))) ** 2 == pytest.approx(rho, rel=1e-12, abs=1e-300)
    assert np.sign(soft_l1(np.array(r))) == np.sign(r)
    if abs(r) < 1e-3:
        assert rho == pytest.approx(r * r, rel=1e-3)
    if abs(r) > 1.0:     # 2 f |r| - 2 f^2 + O(f^3 / r): within a tenth of 2 f |r|
        assert rho == pytest.approx(2 * f * abs(r) - 2 * f * f, rel=0.01)


def test_every_prior_centre_is_inside_its_coordinate():
    for p in PARAMS:
        c, w = PRIORS[p]
        assert np.isfinite(to_fitted(p, c)) and w > 0
    for level, params in LEVELS.items():
        assert set(params) <= set(PARAMS), level


def test_a_group_the_fit_has_not_seen_gets_the_pooled_values():
    z = np.array([float(to_fitted(p, PRIORS[p][0])) for p in PARAMS])
    off = np.zeros(len(LEVELS["stack"]))
    off[0] = 0.5                                      # mbu: logit + 0.5
    f = Fit(z=z, offsets={"stack": {"amd-vllm": off}, "hardware_family": {}})
    assert f.values(stack="intel-new") == f.pooled()
    mbu = f.values(stack="amd-vllm")["mbu"]
    assert mbu == pytest.approx(1 / (1 + np.exp(-(np.log(0.8 / 0.2) + 0.5))), rel=1e-12)
    e = f.efficiency({"mi300x": "mi300x"})
    assert e.for_stack("amd-vllm", "mi300x").mbu == pytest.approx(mbu, rel=1e-12)
    assert e.for_stack("intel-new", "tpu-v6e").mbu == pytest.approx(0.8, rel=1e-12)


def test_the_start_design_is_seeded_and_starts_at_the_priors():
    a, b = starts(), starts()
    assert np.array_equal(a, b)
    mu = np.array([float(to_fitted(p, PRIORS[p][0])) for p in PARAMS])
    assert np.allclose(a[0], mu)


def test_the_fit_is_well_posed_from_any_start(small):
    # issue 24's first defect: an optimum that moved with the start's last digits. The
    # objective has two basins (the busiest expert rank's excess near 0 and near 0.17); the
    # best of a seeded start design finds the lower one from two different designs, and a
    # start perturbed by 1% from it stays there: the same cost to 1e-4, forecasts within
    # 0.1% at the median row and 1% at the worst (the Jacobian's 1e-3 steps settle each run
    # a little differently along the law's kinks: far below the 0.5-point CV tolerance).
    rows, d = small
    pb = Problem(d)
    a = fit_problem(pb, n_starts=8, seed=1)
    b = fit_problem(pb, n_starts=8, seed=2)
    c = fit_problem(pb, a, perturb=0.01, seed=3)
    assert b.cost == pytest.approx(a.cost, rel=1e-4)
    assert c.cost == pytest.approx(a.cost, rel=1e-4)
    pa, pb_, pc = (predict_rows(d, f.row_parameters(d)) for f in (a, b, c))
    for other in (pb_, pc):
        dev = np.abs(other / pa - 1)
        assert np.median(dev) < 1e-3 and dev.max() < 1e-2


def test_offsets_shrink_toward_the_pool(small):
    # A stack's offset pays (delta / tau)^2: with tau 100x smaller the offsets all but vanish
    rows, d = small
    loose = fit_problem(Problem(d), n_starts=1)
    saved = {lv: dict(v) for lv, v in LEVELS.items()}
    try:
        for lv in LEVELS:
            for q in LEVELS[lv]:
                LEVELS[lv][q] = saved[lv][q] / 100
        tight = fit_problem(Problem(d), n_starts=1)
    finally:
        for lv in LEVELS:
            LEVELS[lv].update(saved[lv])
    size = lambda f: max(float(np.max(np.abs(o))) for g in f.offsets.values()  # noqa: E731
                         for o in g.values())
    assert size(tight) < size(loose) / 10
