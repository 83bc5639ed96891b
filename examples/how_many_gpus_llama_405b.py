"""How many GPUs does Llama 3.1 405B need for 32 users at a 128K context?

Reproduces the source material's S15 ("~27 H100"), shows why it is off (it used the 70B
model's KV per token: with the 405B's own, 37.2 H100 of 80 GB, 38 and 40 in multiples of 8),
and gives the counts the library computes at the H100's driver-visible 85.5 GB (79.6 GiB): 35,
and 40 in multiples of 8; then for H100 and H200 with 90% of memory usable.
Run: ``python examples/how_many_gpus_llama_405b.py``.
"""

from __future__ import annotations

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"source's figure .* = ([\d.]+) H100", 27.0, 0.05),
    (r"corrected .* = ([\d.]+) H100 of 80 GB", 37.2, 0.005),
    (r"GiB\): [\d.]+ -> (\d+) H100", 35, 0),
    (r"H100, (\d+) in multiples of 8", 40, 0),
]

m405, m70 = tk.model("llama-3.1-405b"), tk.model("llama-3.1-70b")
h100, h200 = tk.hardware("h100-sxm"), tk.hardware("h200")
USERS, CTX = 32, 131_072
whole = tk.MemoryBudget(m405, h100, usable_memory_fraction=1.0)   # every byte usable

w = tk.weight_bytes(m405, "bf16")
kv70 = tk.kv_cache_bytes(m70, CTX, USERS)
kv405 = tk.kv_cache_bytes(m405, CTX, USERS)
print(f"405B weights (BF16): {w / 1e9:.1f} GB")
print(f"KV per token: 70B {tk.kv_bytes_per_token(m70):,.0f} B, 405B "
      f"{tk.kv_bytes_per_token(m405):,.0f} B (126 layers, not 80)")
print(f"source's figure : ({w / 1e9:.0f} + {kv70 / 1e9:.0f}) GB / 80 GB = "
      f"{(w + kv70) / 80e9:.1f} H100 (the 70B model's KV)")
print(f"corrected       : ({w / 1e9:.0f} + {kv405 / 1e9:.0f}) GB / 80 GB = "
      f"{(w + kv405) / 80e9:.1f} H100 of 80 GB")
print(f"at the driver-visible {h100.mem_usable_bytes / 1e9:.1f} GB "
      f"({h100.mem_usable_bytes / 2**30:.1f} GiB): "
      f"{(w + kv405) / h100.mem_usable_bytes:.1f} -> "
      f"{tk.min_devices(whole, USERS, CTX)} H100, "
      f"{tk.min_devices(whole, USERS, CTX, multiple_of=8)}"
      " in multiples of 8")
print()
print("With 90% of memory usable (vLLM's default) and other formats:")
for hw in (h100, h200):
    for wd, kd in (("bf16", "bf16"), ("fp8", "fp8")):
        n = tk.min_devices(tk.MemoryBudget(m405, hw, wd, kd), USERS, CTX, multiple_of=8)
        print(f"  {hw.id:9s} weights {wd:4s} KV {kd:4s}: {n:3d} devices (multiples of 8)")
