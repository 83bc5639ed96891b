"""Agent sessions over time (economics/sessions.py): S60, S62 and S61.

S60: sessions of 62.6 minutes on average with 9.2 requests and about 9 steps per request,
heavy-tailed (the mean up to 15x the median). S62: time split human 92%, tools 4.8%, LLM
3.3%; median gap 25 minutes; ~40 GB of KV held per idle session; a 5-10 minute golden time in
HBM. S61: the agent step's 119,000-token cached prefix.
"""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk
from tokenomics.economics.sessions import SessionStats, agent_sessions

D = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)


@pytest.fixture(scope="module")
def run():
    return agent_sessions(D, 5000, concurrent=10, seed=0)


def test_sampled_sessions_reproduce_s60_within_sampling_error(run):
    s = run.summary()
    for stat, source in (("duration_min", 62.6), ("requests", 9.2), ("steps", 9.2 * 9)):
        mean, se = s.loc[stat, "mean"], s.loc[stat, "standard_error"]
        assert abs(mean - source) < 3 * se, stat
    # heavy-tailed: the spread is reported and the mean sits well above the median
    assert s.loc["duration_min", "p10"] < s.loc["duration_min", "p50"] < \
        s.loc["duration_min", "p90"]
    assert s.loc["duration_min", "mean"] > 2 * s.loc["duration_min", "p50"]


def test_time_split_is_s62_s(run):
    t = run.sessions
    share_llm_tools = t.active_s.sum() / t.duration_s.sum()
    # LLM 3.3% + tools 4.8% of the time; the sample's ratio of sums carries the noise of
    # its heavy-tailed gaps
    assert share_llm_tools == pytest.approx(0.048 + 0.033, rel=0.15)
    llm, tool = SessionStats().step_s
    assert llm == pytest.approx(0.033 * 62.6 * 60 / (9.2 * 9))       # 1.50 s a step
    assert tool == pytest.approx(0.048 * 62.6 * 60 / (9.2 * 9))      # 2.18 s a step


def test_kv_per_session_is_s62_s_40_gb(run):
    # S10: 327,680 bytes per token for Llama 3.1 70B at BF16; S61's 119,000-token prefix
    assert run.policy.kv_bytes == pytest.approx(119_000 * 327_680, rel=1e-9)   # 39.0 GB
    f = run.to_frame()
    assert np.allclose(f.hbm_bytes, f.sessions_in_hbm * run.policy.kv_bytes)


def test_littles_law_sets_the_sessions_under_way(run):
    # N = lambda x mean duration: 10 sessions under way on average over the day
    assert run.to_frame().sessions_open.mean() == pytest.approx(10, rel=0.25)


def test_the_golden_time_is_read_off_the_policy():
    # with S62's 25-minute median gap (mean 15x the median) the cheapest HBM residence on
    # 8 x H100 is inside the source's 5-10 minute golden time
    a = agent_sessions(D, 500, stats=SessionStats(gap_median_s=25 * 60), horizon_s=3600)
    assert 5 * 60 <= a.golden_time_s <= 10 * 60
    assert a.golden_time_s == a.policy.t1_s
    # ...and that gap cannot coexist with S60's 62.6-minute mean session of 9.2 requests
    assert a.sessions.duration_s.mean() / 60 > 10 * 62.6


def test_cost_per_session_is_its_steps_plus_its_gaps(run):
    t = run.sessions
    step = tk.agent_step(D).usd
    assert (t.usd >= t.steps * step * (1 - 1e-12)).all()
    assert run.usd_per_step == pytest.approx(t.usd.sum() / t.steps.sum())
    assert run.usd_per_session == pytest.approx(t.usd.mean())


@pytest.mark.parametrize("kw, match", [
    (dict(sessions=1), "sessions"), (dict(concurrent=0), "concurrent"),
    (dict(stats="S60"), "SessionStats"), (dict(policy=3), "RetentionPolicy"),
    (dict(seed=0.5), "seed"), (dict(seed=-1), "seed"), (dict(concurrent=1e9), "2,000,000"),
    (dict(sessions=10**6), "2,000,000"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        agent_sessions(D, **{"sessions": 100, **kw})


def test_session_stats_validate():
    with pytest.raises(tk.TokenomicsError, match="at most"):
        SessionStats(requests_per_session=1e12)
    assert SessionStats(mean_duration_s=tk.Q_(60, "min")).mean_duration_s == 3600
    with pytest.raises(tk.TokenomicsError, match="requests_per_session"):
        SessionStats(requests_per_session=0.5)
    with pytest.raises(tk.TokenomicsError, match="leave the human"):
        SessionStats(tool_share=0.6, llm_share=0.5)


def test_a_window_no_session_starts_in_is_empty_not_an_error():
    # the fuzz profile found a sparse population (1/128 and 1/1000 sessions at a time)
    # raising IndexError from numpy: the Poisson draw of session starts was 0. An empty
    # window holds no session and no return
    d8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.agent_sessions(d8, 50, concurrent=0.001, horizon_s=600.0)
    assert r.active_sessions.max() == 0 and r.sessions_in_hbm.max() == 0
    assert np.isnan(r.hbm_hit_rate)          # documented: no return inside the window
