"""H100 vs H200 vs B200 vs MI355X: Pareto frontiers for Llama 3.3 70B in FP8.

Throughput per device against tokens/s per user, each accelerator over its tensor-parallel
degrees (MI355X: no published scale-up bandwidth, so one device), at a 4,096-token context:
the calibrated forecast (``efficiency="calibrated"``; without it the frontier keeps each
deployment's own efficiency, the pure roofline bound by default).
Writes ``frontiers_llama_3_3_70b.png`` to the working folder.
Run: ``python examples/frontiers_llama_3_3_70b.py``.
"""

from __future__ import annotations

import tokenomics as tk

CTX = 4096
for hw, tps in (("h100-sxm", (2, 4, 8)), ("h200", (1, 2, 4, 8)), ("b200", (1, 2, 4, 8)),
                ("mi355x", (1,))):
    deps = [tk.Deployment("llama-3.3-70b", hw, tp=tp, weight_dtype="fp8", compute_dtype="fp8",
                          kv_dtype="fp8") for tp in tps]
    f = tk.frontier(deps, CTX, efficiency="calibrated")
    for slo in (30, 100):
        try:
            b = tk.best_at(f, slo)
            print(f"{hw:>9} at >= {slo:>3} tok/s/user: {b.tokens_per_s_per_device:>7,.0f} "
                  f"tok/s/device ({b.label.split('|')[1].strip()})")
        except tk.TokenomicsError as exc:
            print(f"{hw:>9} at >= {slo:>3} tok/s/user: {exc}")

deps = [tk.Deployment("llama-3.3-70b", hw, tp=tp, weight_dtype="fp8", compute_dtype="fp8",
                      kv_dtype="fp8")
        for hw, tps in (("h100-sxm", (2, 4, 8)), ("h200", (1, 2, 4, 8)), ("b200", (1, 2, 4, 8)),
                        ("mi355x", (1,))) for tp in tps]
f = tk.frontier(deps, CTX, efficiency="calibrated")
ax = tk.plot_frontier(f, slo_tokens_per_s_per_user=100)
ax.figure.savefig("frontiers_llama_3_3_70b.png", dpi=100)
print(f"overall envelope: {len(f)} vertices; best at >= 100 tok/s/user: "
      f"{tk.best_at(f, 100).label}")
