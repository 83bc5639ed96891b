"""DeepSeek's published serving economics (February 2025), reproduced.

DeepSeek reported a 24-hour window of its V3/R1 service: 226.75 nodes of 8 H800 on average,
$2 per H800-hour, 608B input tokens of which 342B hit the KV cache, 168B output tokens, and a
theoretical revenue of $562,027 at R1 prices (a 545% cost-profit margin). Sources in
price_catalog/sources.toml (deepseek-ai/open-infra-index, day 6).
Run: ``python examples/deepseek_serving_economics.py``.
"""

from __future__ import annotations

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"daily GPU cost\s*: \$([\d,]+)", 87_072, 0.0),            # 226.75 x 8 x $2 x 24 h
    (r"revenue at R1 prices : \$([\d,]+)", 562_027, 0.001),
    (r"cost-profit margin\s*: (\d+)%", 545, 0.005),
]

day = tk.serving_day(nodes=226.75, devices_per_node=8,
                     usd_per_device_hour=tk.rental_price(tk.hardware("h800")).usd,
                     input_tokens=608e9, cached_input_tokens=342e9, output_tokens=168e9,
                     p="deepseek/deepseek-reasoner")
print(f"daily GPU cost       : ${day.cost_usd:,.0f}")
print(f"revenue, cache misses: ${day.input_revenue_usd:,.0f}")
print(f"revenue, cache hits  : ${day.cached_input_revenue_usd:,.0f}")
print(f"revenue, output      : ${day.output_revenue_usd:,.0f}")
print(f"revenue at R1 prices : ${day.revenue_usd:,.0f}  (DeepSeek: $562,027)")
print(f"cost-profit margin   : {day.cost_profit_margin:.0%}  (DeepSeek: 545%)")

# What a token costs to make on the same hardware, by the library's roofline bound:
# DeepSeek-V3 decode on 2 x 8 H800 with attention data parallelism and EP16.
d = tk.Deployment("deepseek-v3", "h800", tp=16, dp_attention=16, ep=16, weight_dtype="fp8",
                  compute_dtype="fp8", kv_dtype="fp8")
c = tk.deployment_cost(d, batch=256, context_tokens=4096, prompt_tokens=4096,
                       device_price=2.0)
print()
print("bound on cost per million tokens at $2/H800-hour (batch 256, 4K context):")
print(f"  input ${c.input_usd_per_mtok:.3f}, cached input ${c.cached_input_usd_per_mtok:.4f}, "
      f"output ${c.output_usd_per_mtok:.3f}")
print(f"  blended at DeepSeek's traffic mix: "
      f"${c.blended(608, 168, cache_hit_rate=342 / 608):.3f} per million tokens")
