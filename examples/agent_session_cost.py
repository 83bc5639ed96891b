"""What an agent session costs.

An agent step (S61) reads a ~119K-token cached prefix, adds 875 new tokens and emits 214; a
session is ~100 steps (S60: 9.2 requests x ~9 steps) with idle gaps between requests (S62:
median 25 minutes, heavy-tailed). This prices a step on Llama 3.1 70B (FP8 weights) on
8 x H100, what to do with the KV over a gap, and then samples sessions from the source's
statistics (tk.agent_sessions) to report their spread, their KV per tier over a day and
what a session and a step cost once the gaps are paid for.
Run: ``python examples/agent_session_cost.py``.
"""

from __future__ import annotations

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"re-reading the cached prefix is (\d+)% of the time", 60, 0.1),   # S61: ~60%
    (r"sampled sessions: .* ([\d.]+) requests", 9.2, 0.02),            # S60: 9.2
]

dep = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8", compute_dtype="fp8")
step = tk.agent_step(dep, batch=4)
print(f"one agent step (4 agents stepping together): {step.time_s:.2f} s, "
      f"${step.usd:.4f} per agent")
print(f"  midfill {step.midfill_s * 1e3:.0f} ms, decode {step.decode_s:.2f} s; re-reading the "
      f"cached prefix is {step.prefix_kv_share:.0%} of the time (S61: ~60%)")
print(f"a session of ~100 steps: ${100 * step.usd:.2f} of GPU time")

# Between requests: keep the KV in HBM, offload it to host DRAM, or drop it and recompute?
rr = tk.reload_or_recompute(dep, 119_000, tier="dram")
print(f"\nreload 119K tokens of KV from host DRAM: {float(rr.reload_s) * 1e3:.0f} ms; "
      f"recompute it: {float(rr.recompute_s):.2f} s")
pure = tk.retention_policy(dep, 119_000, miss_usd=0)
print(f"retention at GPU-time prices only: keep in HBM {pure.t1_s / 60:.1f} min, "
      f"drop after {pure.t2_s / 3600:.1f} h")
# The library's stated default prices a miss (the user's resume is not instant) at $8.40 per
# million context tokens (price_catalog/kv_tiers.toml, an assumption): $1.00 for this session.
ux = tk.retention_policy(dep, 119_000)
print(f"valuing a miss at ${ux.miss_usd:.2f} (the stated default): keep in HBM "
      f"{ux.t1_s / 60:.1f} min, then host DRAM until {ux.t2_s / 3600:.1f} h "
      f"(S62's 'golden time': 5-10 min)")
lo, hi = pure.miss_usd_for_hbm_residence([300.0, 600.0])
print(f"a golden time of 5 / 10 min needs a miss price of ${lo:.2f} / ${hi:.2f}")

# Sessions are not all alike: sample them from the source's statistics (S60, S62) and follow
# ten at a time through a day on this replica.
day = tk.agent_sessions(dep, 5000, concurrent=10, seed=1)
s = day.summary()
d = s.loc["duration_min"]
print(f"\n5,000 sampled sessions: {d['mean']:.1f} +/- {d['standard_error']:.1f} min "
      f"(S60: 62.6), {s.loc['requests', 'mean']:.2f} requests (S60: 9.2); spread "
      f"p10 / p50 / p90 = {d['p10']:.1f} / {d['p50']:.1f} / {d['p90']:.0f} min")
occ = day.to_frame()
print(f"10 sessions under way: {occ.sessions_in_hbm.mean():.1f} KVs in HBM on average "
      f"({occ.hbm_fraction.mean():.0%} of the replica's HBM, peak {occ.hbm_fraction.max():.0%}), "
      f"{occ.sessions_in_tier.mean():.0f} in host DRAM ({occ.tier_fraction.mean():.0%} of it)")
print(f"with these gaps the cheapest HBM residence is {day.golden_time_s / 60:.1f} min "
      f"({day.hbm_hit_rate:.0%} of returns find their KV in HBM)")
print(f"a session costs ${day.usd_per_session:.2f} on average, ${day.usd_per_step:.4f} a step "
      f"with its gaps' KV rent and reloads (the step alone: ${tk.agent_step(dep).usd:.4f})")
