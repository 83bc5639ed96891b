"""How fast can DeepSeek-V3 decode at batch 64 on 8 B200s in FP8?

A batch sweep of the pure roofline bound (with the step's tensor-parallel all-reduces over
NVLink counted, not overlapped), the MoE term reading the *distinct* experts a batch touches
and MLA's compressed KV. At batch 64: about 107 tokens/s per user, 858 per device.
Run: ``python examples/deepseek_v3_decode_on_b200.py``.
"""

from __future__ import annotations

import numpy as np

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"^\s+64\s+\S+\s+([\d.]+)", 107, 0.005),            # the README's ~107 per user
    (r"^\s+64\s+\S+\s+\S+\s+([\d.]+)", 858, 0.005),     # and ~858 per device
]

d = tk.Deployment("deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8",
                  kv_dtype="fp8", kv_shard="all")
batches = np.array([1, 8, 16, 32, 64, 128, 256, 512])
r = tk.decode(d, batches, 4096, on_oom="mark")
df = r.to_frame()[["batch", "step_time_s", "tokens_per_s_per_user", "tokens_per_s_per_device",
                   "bound", "fits"]]
df["distinct_experts_per_layer"] = tk.expected_active_experts(256, 8, batches)
print(df.to_string(index=False, float_format="{:.4g}".format))
print()
print(tk.operator_table(d, "decode", batch=64, context_tokens=4096)[
    ["operator", "flops", "bytes", "intensity_flop_per_byte", "bound", "time_share"]]
      .to_string(index=False, float_format="{:.3g}".format))
