"""Benchmark: tk.steady_state over 10,000 concurrencies in one call, as ratios to a baseline.

Run: ``python benchmarks/bench_steady.py``. Not part of the test suite (speed is measured
here, never asserted in tests). The baseline is the same work done point by point (one call
per concurrency, on the first 200 points, scaled): the ratio says what vectorisation buys,
whatever the machine.
"""

from __future__ import annotations

import time

import numpy as np

import tokenomics as tk


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(n: int = 10_000, repeats: int = 5, loop_points: int = 200) -> None:
    cases = {
        "llama-3.1-8b / 1 x h100 (dense)": tk.Deployment("llama-3.1-8b", "h100-sxm"),
        "mixtral-8x7b / 2 x h200 fp8, calibrated (MoE)": tk.Deployment(
            "mixtral-8x7b", "h200", tp=2, weight_dtype="fp8", compute_dtype="fp8",
            kv_dtype="fp8", efficiency=tk.efficiency_presets()["calibrated"]),
    }
    for name, d in cases.items():
        top = int(tk.max_batch(d, 2048 + 256))
        conc = np.linspace(1, top, n).round()
        tk.steady_state(d, conc[:10], 2048, 256)                 # warm up
        vec = _best(lambda d=d, conc=conc: tk.steady_state(d, conc, 2048, 256), repeats)
        loop = _best(lambda d=d, conc=conc: [tk.steady_state(d, int(c), 2048, 256)
                                             for c in conc[:loop_points]], 1) * n / loop_points
        print(f"{name}: {n:,} concurrencies in one call {vec * 1e3:.1f} ms "
              f"(best of {repeats}); one call per point ~{loop:.2f} s; "
              f"ratio {loop / vec:,.0f}x")


if __name__ == "__main__":
    main()
