"""The source material's numbers, reproduced by the library (every derive id of the digest).

Each line: the id, what the source says, what the library computes. The tests in
tests/test_seeds.py and the modules' tests assert them.
Run: ``python examples/seed_numbers_reproduced.py``.
"""

from __future__ import annotations

import numpy as np

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"S01 .* ([\d.]+)$", 295, 0.005),
    (r"S06 .* ([\d.]+)$", 206, 0.005),
    (r"S10 .* ([\d,]+)$", 327_680, 0.0),
    (r"S12 .* ([\d.]+) GB$", 141, 0.005),
    (r"S13 .* ([\d,]+)$", 431_000, 0.005),
    (r"S17 .* ([\d.]+)x a weight", 1.8, 0.02),
    (r"S61 .* (\d+)%$", 60, 0.1),
]

h100, h200 = tk.hardware("h100-sxm"), tk.hardware("h200")
l70, l405 = tk.model("llama-3.1-70b"), tk.model("llama-3.1-405b")
rows = []


def say(sid: str, source: str, ours: str) -> None:
    rows.append((sid, source, ours))


say("S01", "H100 BF16 ridge ~295 FLOP/B", f"{tk.ridge_point(h100, 'bf16'):.1f}")
say("S02", "FP8 ridges H200 ~412, H100 ~591",
    f"{tk.ridge_point(h200, 'fp8'):.0f}, {tk.ridge_point(h100, 'fp8'):.0f}")
say("S03", "batch-1 decode intensity ~1 FLOP/B", f"{tk.gemm_intensity(1, 8192, 8192):.3f}")
say("S04", "batch B x GEMM intensity; GQA-8 attention ~8",
    f"{tk.gemm_intensity(32, 8192, 8192):.1f} at B=32; "
    f"{tk.attention_decode_intensity(l70):.0f}")
say("S05", "4x4 weights x 4 tokens: 4 uses per weight", f"{tk.gemm_flops(4, 4, 4) / 2 / 16:.0f}")
say("S06", "H200 BF16 ridge ~206", f"{tk.ridge_point(h200, 'bf16'):.1f}")
say("S10", "Llama 3.1 70B KV 327,680 B/token", f"{tk.kv_bytes_per_token(l70):,.0f}")
say("S11", "128K context ~40 GB", f"{tk.kv_cache_bytes(l70, 131_072) / 2**30:.1f} GiB")
say("S12", "70B BF16 weights ~141 GB", f"{tk.weight_bytes(l70, 'bf16') / 1e9:.1f} GB")
say("S13", "KV outgrows weights at ~431K tokens",
    f"{tk.weight_bytes(l70, 'bf16') / tk.kv_bytes_per_token(l70):,.0f}")
say("S14", "128K x 512 ~22 TB", f"{tk.kv_cache_bytes(l70, 131_072, 512) / 1e12:.1f} TB")
src = (tk.weight_bytes(l405, 'bf16') + tk.kv_cache_bytes(l70, 131_072, 32)) / 80e9
whole = tk.MemoryBudget(l405, h100, usable_memory_fraction=1)     # every byte usable
say("S15", "405B, 32 users at 128K: ~27 H100 (70B's KV); 38 / 40 at 80 GB",
    f"source {src:.1f}; at the driver's 85.5 GB: "
    f"{tk.min_devices(whole, 32, 131_072)} / {tk.min_devices(whole, 32, 131_072, multiple_of=8)}")
say("S16", "70B: 2 H100 at FP16, 1 at FP8",
    f"{tk.min_devices(tk.MemoryBudget(l70, h100, 'fp16', usable_memory_fraction=1), 1, 0)}, "
    f"{tk.min_devices(tk.MemoryBudget(l70, h100, 'fp8', usable_memory_fraction=1), 1, 0)}")
say("S17", "NVFP4 4.5 bits, MXFP4 4.25; ~1.8x vs FP8 a weight",
    f"{tk.dtype('nvfp4').bits}, {tk.dtype('mxfp4').bits}; "
    f"{tk.dtype('fp8').bits / tk.dtype('nvfp4').bits:.2f}x a weight, "
    f"{tk.weight_bytes(l70, 'fp8') / tk.weight_bytes(l70, 'nvfp4'):.2f}x the 70B "
    "(embeddings stay BF16)")
d70 = tk.Deployment("llama-3.3-70b", "h200", tp=4, weight_dtype="fp8", compute_dtype="fp8")
say("S23", ">= 100 tok/s/user: the throughput there",
    f"{tk.best_at([d70], 100, context_tokens=4096).tokens_per_s_per_device:,.0f} tok/s/GPU "
    "(70B FP8, 4 x H200)")
cp = tk.chunked_prefill(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4), 8192, 512, 32, 4096)
say("S24", "chunked 8,192-token prefill: lower TBT, higher TTFT",
    f"TBT {cp.worst_tbt_s * 1e3:.0f} vs {cp.unchunked_worst_tbt_s * 1e3:.0f} ms; "
    f"TTFT {cp.ttft_s * 1e3:.0f} vs {cp.unchunked_ttft_s * 1e3:.0f} ms")
sd = tk.speculative_decode(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4), 1, 4096, k=8,
                           alpha=0.8, drafter=tk.Drafter(draft_fraction=0.01))
say("S25", "1/100 draft, k=8, 2-4x faster decode", f"{float(sd.speedup_per_user):.2f}x")
pc = tk.prefix_cached_prefill(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4), 12_022,
                              cached_tokens=12_000)
say("S31", "12,000 cached + 22 new: prefill almost free", f"TTFT {pc.speedup:.0f}x faster")
a = tk.price("anthropic/claude-sonnet-4.x")
say("S30", "cached input $0.30 vs $3.00 (0.1x)", f"{a.cached_input / a.input:.1f}x")
d405 = tk.Deployment("llama-3.1-405b", "h100-sxm", tp=8, weight_dtype="fp8", compute_dtype="fp8")
r = tk.decode(d405, 32, 4096)
say("S43", "network inside the decode loop (405B on 8 H100)",
    f"all-reduces {r.comm_time_s * 1e3:.2f} ms of a {r.step_time_s * 1e3:.1f} ms step")
step = tk.agent_step(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
                                   compute_dtype="fp8"), batch=4)
say("S61", "agent step: prefix reads ~60% of cost", f"{step.prefix_kv_share:.0%}")
rr = tk.reload_or_recompute(tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4), 32_000)
say("S63", "reload from DRAM beats recompute",
    f"{float(rr.reload_s) * 1e3:.0f} ms vs {float(rr.recompute_s) * 1e3:.0f} ms (32K tokens)")

w = max(len(s) for _, s, _ in rows)
for sid, s, o in rows:
    print(f"{sid}  {s:<{w}}  {o}")
assert np.isfinite(src)
