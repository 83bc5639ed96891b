"""Where is each accelerator's ridge point, per compute format?

Ridge = dense peak FLOP/s / memory bandwidth [FLOP/byte]; an operator below it is
memory-bound. H100 SXM: 989.4 TFLOP/s BF16 over 3.35 TB/s, 295 FLOP/B (S01); H200 the same
compute over 4.8 TB/s. Run: ``python examples/ridge_points.py``.
"""

from __future__ import annotations

import tokenomics as tk

#: The figures this text states, checked against what the script prints
#: (tests/test_examples.py): (pattern with one number, the figure, relative tolerance).
CLAIMS = [
    (r"^h100-sxm\s+\S+\s+([\d.]+)", 3.35, 0.0),      # H100 SXM: 3.35 TB/s (datasheet)
    (r"^h100-sxm\s+\S+\s+\S+\s+(\d+)", 295, 0.0),    # S01: ridge ~295 FLOP/B at BF16
    (r"^h200\s+\S+\s+([\d.]+)", 4.8, 0.0),          # H200: 4.8 TB/s
]

t = tk.hardware_table()
cols = ["status", "mem_bw_tb_per_s", "ridge_bf16_flop_per_byte", "ridge_fp8_flop_per_byte",
        "ridge_fp4_flop_per_byte"]
table = t[cols].sort_values("ridge_bf16_flop_per_byte")
print(table.to_string(formatters={"mem_bw_tb_per_s": "{:.2f}".format}, float_format="{:.0f}".format,
                      na_rep="n/p"))
print()
print("MI355X in FP4:", round(tk.ridge_point(tk.hardware("mi355x"), "mxfp4")), "FLOP/byte")
