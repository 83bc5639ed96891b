"""What does a "fast mode" cost? (S27: about 2.5x the speed for about 6x the price.)

A faster tier serves each user more tokens per second; on the interactivity-throughput frontier
that is bought with throughput per device. The ratio of the two points' throughput is the
physics' price of the speed-up. Compare a dense 70B, which widens tensor parallelism, with a
671B MoE on one 8-GPU node, whose batches shrink sharply. Both run the calibrated forecast
(the default is the bound); from base tiers of 20-40 tokens/s per user, since under the
forecast the fastest 70B configuration here reaches about 123.
Run: ``python examples/fast_mode_premium.py``.
"""

from __future__ import annotations

import tokenomics as tk
from tokenomics.pareto.premium import premium_curve

CTX = 8192
CAL = tk.efficiency_presets()["calibrated"]    # the forecast, not the bound (the default)
dense = [tk.Deployment("llama-3.3-70b", h, tp=t, weight_dtype="fp8", compute_dtype="fp8",
                       kv_dtype="fp8", efficiency=CAL)
         for h in ("h100-sxm", "h200") for t in (2, 4, 8)]
moe = [tk.Deployment("deepseek-v3", "b200", tp=8, ep=8, weight_dtype="fp8",
                     compute_dtype="fp8", kv_dtype="fp8", kv_shard="all", efficiency=CAL)]

for name, deps in (("Llama 3.3 70B FP8 on H100/H200, TP 2-8", dense),
                   ("DeepSeek-V3 FP8 on 8 x B200, EP 8", moe)):
    f = tk.frontier(deps, context_tokens=CTX, on_oom="skip")
    print(f"\n{name} (calibrated forecast, {CTX} tokens of context)")
    for x0 in (20.0, 30.0, 40.0):
        p = tk.speed_premium(f, x0, 2.5)
        print(f"  {x0:4.0f} -> {2.5 * x0:5.0f} tok/s per user: throughput per device "
              f"{float(p.base.tokens_per_s_per_device):7.0f} -> "
              f"{float(p.fast.tokens_per_s_per_device):6.0f}  = {p.throughput_ratio:4.1f}x the "
              f"cost per token; explains a 6x price: {p.explains(6.0)}")
    print(premium_curve(f, 30.0, [1.5, 2.0, 2.5, 3.0]).round(2).to_string(index=False))
