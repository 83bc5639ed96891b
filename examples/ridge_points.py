"""Where is each accelerator's ridge point, per compute format?

Ridge = dense peak FLOP/s / memory bandwidth [FLOP/byte]; an operator below it is
memory-bound. Run: ``python examples/ridge_points.py``.
"""

from __future__ import annotations

import tokenomics as tk

t = tk.hardware_table()
cols = ["status", "mem_bw_tb_per_s", "ridge_bf16_flop_per_byte", "ridge_fp8_flop_per_byte",
        "ridge_fp4_flop_per_byte"]
print(t[cols].sort_values("ridge_bf16_flop_per_byte").to_string(
    float_format="{:.0f}".format, na_rep="n/p"))
print()
print("MI355X in FP4:", round(tk.ridge_point(tk.hardware("mi355x"), "mxfp4")), "FLOP/byte")
