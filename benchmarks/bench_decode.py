"""Benchmark: tk.decode over 1,000,000 (batch, context) points for one deployment.

Run: ``python benchmarks/bench_decode.py``. Not part of the test suite (speed is measured
here, never asserted in tests). Target: under 1 s on a 2-core machine.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import tokenomics as tk


def main(n: int = 1_000_000, repeats: int = 5) -> None:
    rng = np.random.default_rng(0)
    batch = rng.integers(1, 512, n)
    context = rng.integers(1, 131_072, n)
    cases = {
        "llama-3.1-70b / 8 x h100 (dense, GQA)": tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8),
        "deepseek-v3 / 8 x b200 fp8 (MoE, MLA)": tk.Deployment(
            "deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8"),
        "gemma-3-27b / 1 x h200 (sliding windows)": tk.Deployment("gemma-3-27b", "h200"),
    }
    for name, d in cases.items():
        tk.decode(d, batch[:1000], context[:1000], on_oom="mark")  # warm up
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            tk.decode(d, batch, context, on_oom="mark")
            times.append(time.perf_counter() - t0)
        print(f"{name}: {n:,} points, min {min(times):.3f} s, median "
              f"{statistics.median(times):.3f} s over {repeats} runs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
