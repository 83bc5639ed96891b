"""Disaggregate prefill and decode, or colocate with chunked prefill?

S50: splitting the same devices does not raise raw throughput, but raises goodput under a
strict latency SLO. S51: it pays with long inputs and short outputs, strict SLOs and a fast
link; with loose SLOs or small scale, chunked prefill wins.
Run: ``python examples/disaggregate_or_not.py``.
"""

from __future__ import annotations

import tokenomics as tk

dep = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4)
print("Llama 3.1 70B, instances of 4 x H100, 32 GPUs, TTFT <= 2 s for 90% of requests")
print(f"{'input/output':>13} {'TPOT SLO':>9} {'disagg':>8} {'coloc':>8}  (requests/s per GPU)")
for isl, osl in ((4096, 128), (1024, 512), (512, 1024)):
    for tpot in (0.015, 0.1):
        work, slo = tk.Workload(isl, osl), tk.SLO(ttft_s=2.0, tpot_s=tpot)
        split = tk.best_pool_ratio(dep, dep, 32, work, slo, tk.Link(200e9, 10e-6))
        col = tk.colocated_goodput(dep, 8, work, slo)
        print(f"{isl:>6}/{osl:<6} {tpot * 1e3:>7.0f}ms {split.goodput_per_s_per_budget_device:>8.3f}"
              f" {col.goodput_per_s_per_device:>8.3f}  ({split.n_prefill}P:{split.n_decode}D)")
