"""Does speculative decoding pay at batch 64?

It helps when decode is memory-bound (verification of k+1 tokens costs about one step) and can
hurt near the compute roof. S25: a draft ~1/100 of the target proposing k tokens, EAGLE-3
acceptance > 75%.
Run: ``python examples/speculative_decoding_at_batch_64.py``.
"""

from __future__ import annotations

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"batch    1: k=4 speed-up per user ([\d.]+)x", 3.0, 1 / 3),     # S25: 2-4x faster decode
]

for name, dep, batches in (
        ("Llama 3.1 70B on 4 x H100", tk.Deployment("llama-3.1-70b", "h100-sxm", tp=4),
         (1, 64, 100)),
        ("Llama 3.1 8B on 1 x H100, short context", tk.Deployment("llama-3.1-8b", "h100-sxm"),
         (1, 64, 1024))):
    print(name)
    ctx = 2048 if "70B" in name else 256
    for batch in batches:
        drafter = tk.Drafter(draft_fraction=0.01)       # a draft step at 1% of the target's
        r = tk.speculative_decode(dep, batch, ctx, k=4, alpha=0.8, drafter=drafter,
                                  on_oom="mark")
        k = tk.best_speculation_k(dep, batch, ctx, alpha=0.8, drafter=drafter)
        print(f"  batch {batch:>4}: k=4 speed-up per user {float(r.speedup_per_user):.2f}x, "
              f"best k = {int(k)}")
