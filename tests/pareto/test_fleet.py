"""Sweeps beyond one machine (pareto/fleet.py) on a dask.distributed LocalCluster.

Issue 15's checks: the Dask sweep equals the in-memory sweep on a small grid, and its
frontier equals tk.frontier on the same deployments.
"""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk

distributed = pytest.importorskip("distributed")
from tokenomics.pareto.fleet import lazy_best_at, lazy_pareto, sweep_lazy  # noqa: E402

DEPS = [tk.Deployment("llama-3.1-8b", "h100-sxm"), tk.Deployment("llama-3.1-8b", "h200"),
        tk.Deployment("llama-3.1-70b", "h200", tp=4)]
B = np.arange(1, 257)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def test_the_dask_sweep_equals_the_in_memory_sweep(client):
    C = np.array([1024, 8192])
    lz = sweep_lazy(DEPS, B, C, chunk_points=100)
    assert lz.npartitions == 3 * 6                   # ceil(256 x 2 / 100) chunks each
    got = lz.compute()
    bb, cc = np.meshgrid(B, C, indexing="ij")
    ref = tk.sweep(DEPS, bb.ravel(), cc.ravel()).drop(columns="_deployment")
    assert list(got.columns) == list(ref.columns)
    for col in ref.columns:
        if ref[col].dtype.kind == "f":
            assert np.allclose(got[col], ref[col], rtol=1e-12, atol=0, equal_nan=True), col
        else:
            assert (got[col].to_numpy() == ref[col].to_numpy()).all(), col


def test_its_pareto_set_is_the_in_memory_one_and_lies_on_tk_frontier(client):
    lz = sweep_lazy(DEPS, B, [4096], chunk_points=64)
    front = lazy_pareto(lz, progress=True)
    bb = tk.sweep(DEPS, B, 4096)
    ok = bb[bb.fits]
    mask = tk.pareto_mask(ok.tokens_per_s_per_user, ok.tokens_per_s_per_device)
    ref = ok[mask].sort_values("tokens_per_s_per_user")
    assert np.allclose(front.tokens_per_s_per_device, ref.tokens_per_s_per_device, rtol=1e-12)
    # every non-dominated whole-batch point sits on the closed-form envelope of tk.frontier
    env = tk.frontier(DEPS, 4096)
    y_env = np.interp(front.tokens_per_s_per_user, env.tokens_per_s_per_user,
                      env.tokens_per_s_per_device)
    assert np.allclose(front.tokens_per_s_per_device, y_env, rtol=1e-9)
    # and the SLO answer without collecting the points equals best_at at whole batches
    best = lazy_best_at(lz, 100)
    exact = tk.best_at(DEPS, 100, context_tokens=4096)
    assert best.tokens_per_s_per_device == pytest.approx(exact.tokens_per_s_per_device,
                                                         rel=1e-12)
    assert (best.label, int(best.batch)) == (exact.label, exact.batch)


def test_bad_input():
    with pytest.raises(tk.TokenomicsError, match="batch"):
        sweep_lazy(DEPS, [0, 1], [1024])
    with pytest.raises(tk.TokenomicsError, match="chunk_points"):
        sweep_lazy(DEPS, B, [1024], chunk_points=0)
    with pytest.raises(tk.TokenomicsError, match="sweep_lazy"):
        lazy_pareto(tk.sweep(DEPS, B, 1024))
    lz = sweep_lazy(DEPS, B, [1024], chunk_points=512)
    with pytest.raises(tk.TokenomicsError, match="reaches 100000"):
        lazy_best_at(lz, 1e5)
