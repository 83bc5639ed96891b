"""Benchmark: one scalar call (the way a notebook or a loop uses the library), as ratios.

Run: ``python benchmarks/bench_single.py``. Not part of the test suite. After a warm-up it
times scalar ``tk.decode``, ``tk.prefill`` and ``tk.steady_state`` calls (best of 5 runs of
200 calls; the fast paths of :mod:`tokenomics.physics.plan`) and prints microseconds per
call beside, in the same run, the full path of the same call (``decode_reference``,
``prefill_reference``, ``steady_state_reference``), a bare-Python roofline of the same point
(weights plus KV over bandwidth against FLOPs over peak: the least any model must compute),
and the per-point times of two peers as issue 15 measured them on this kind of machine
(LLM-Viewer 100 us, llm-analysis 290 us; not re-run here). Issue 15's target is 50 us a
call.
"""

from __future__ import annotations

import time

import tokenomics as tk
from tokenomics.physics.step import decode_reference, prefill_reference
from tokenomics.serving.steady import steady_state_reference

PEERS_US = {"LLM-Viewer (issue 15)": 100.0, "llm-analysis (issue 15)": 290.0}


def _per_call(fn, calls: int = 200, repeats: int = 5) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def _bare(d: tk.Deployment, batch: int, context: int):
    w = tk.weight_bytes_per_device(d)
    kv = tk.kv_bytes_per_token(d.model, d.kv_dtype) / d.tp
    flops = 2.0 * tk.param_count(d.model, active=True) / d.tp
    bw, peak = d.hardware.mem_bw_bytes_per_s, d.hardware.peak(d.compute_dtype)
    return lambda: max((w + batch * kv * context) / bw, batch * flops / peak)


def main() -> None:
    cal = tk.efficiency_presets()["calibrated"]
    cases = {"llama-3.1-8b / 1 x h100": tk.Deployment("llama-3.1-8b", "h100-sxm"),
             "llama-3.1-70b / 4 x h100": tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4),
             "qwen3-30b-a3b (MoE) / h100": tk.Deployment("qwen3-30b-a3b", "h100-sxm",
                                                         efficiency=cal)}
    print(f"{'case':<28} {'call':<13} {'us/call':>8} {'full us':>8} {'speed-up':>8} "
          f"{'bare us':>8} {'x bare':>7} " + " ".join(f"{k.split()[0] + ' x':>12}"
                                                  for k in PEERS_US))
    for name, d in cases.items():
        bare = _per_call(_bare(d, 8, 4096), calls=2000)
        calls = {"decode": (lambda d=d: tk.decode(d, 8, 4096),
                            lambda d=d: decode_reference(d, 8, 4096)),
                 "prefill": (lambda d=d: tk.prefill(d, 2048),
                             lambda d=d: prefill_reference(d, 2048)),
                 "steady_state": (lambda d=d: tk.steady_state(d, 16, 2048, 256),
                                  lambda d=d: steady_state_reference(d, 16, 2048, 256))}
        for label, (fast, full) in calls.items():
            for _ in range(5):
                fast()                                   # the warm-up builds the plan
            us, ref = _per_call(fast), _per_call(full, calls=40)
            peers = " ".join(f"{us / v:>12.2f}" for v in PEERS_US.values())
            print(f"{name:<28} {label:<13} {us:>8.1f} {ref:>8.0f} {ref / us:>8.1f} "
                  f"{bare:>8.2f} {us / bare:>7.0f} {peers}")


if __name__ == "__main__":
    main()
