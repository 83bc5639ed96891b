"""Catalog entries show their datasheet line and an HTML table (data/display.py; issue 26)."""

from __future__ import annotations

import re

import tokenomics as tk


def test_hardware_shows_memory_in_gib_rates_and_links_per_direction():
    # NVIDIA H100 SXM5: 80 GB HBM3 (binary-sized stacks: 80 GiB), 3.35 TB/s, 989.4 TFLOP/s
    # dense BF16, NVLink 4 at 900 GB/s bidirectional = 450 GB/s each way, 8 per HGX board,
    # 700 W; nvidia-smi reports 81,559 MiB = 79.65 GiB
    r = repr(tk.hardware("h100-sxm"))
    assert r.startswith("Hardware('h100-sxm', 'NVIDIA H100 SXM5 80GB': 80 GiB HBM3 (79.65 GiB "
                        "visible), 3.35 TB/s, dense ")
    assert "bf16 989.4 TFLOP/s" in r and "fp8 1.979 PFLOP/s" in r
    assert "450 GB/s per direction x 8" in r and "700 W" in r
    assert "mappingproxy" not in r and "e+" not in r


def test_model_shows_its_architecture_line():
    # Llama 3.1 8B config.json: 32 layers, hidden 4096, 32 attention heads, 8 KV heads of
    # 128, FFN 14,336, vocabulary 128,256, 131,072 positions
    r = repr(tk.model("llama-3.1-8b"))
    assert r.startswith("Model('llama-3.1-8b', 'Llama 3.1 8B': 32 layers, hidden 4096, GQA 32 q "
                        "/ 8 kv heads x 128, FFN 14336, vocab 128,256, context 131,072")
    # DeepSeek-V3: 256 routed experts, 8 per token, 1 shared, width 2,048; MLA with a
    # 512-rank latent and 64 rope dims; 671B parameters, 37B active (its README)
    r = repr(tk.model("deepseek-v3"))
    assert "MLA 128 heads, KV rank 512 + rope 64" in r
    assert "MoE 256 experts top-8 x 2048 (+1 shared)" in r
    assert "671B parameters (37B active)" in r


def test_deployment_shows_layout_formats_and_only_changed_options():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)
    assert repr(d) == ("Deployment('llama-3.1-8b' on 2 x 'h100-sxm': tp 2, pp 1, ep 1; weights "
                       "bf16, KV bf16, compute bf16, activations bf16; efficiency 'roofline'; "
                       "90% of memory usable)")
    d = tk.Deployment("deepseek-v3", "b200", tp=8, ep=8, dp_attention=8, engine="trtllm")
    assert repr(d).endswith("; dp_attention 8, engine 'trtllm')")
    assert "8 x 'b200'" in repr(d)


def test_html_tables_carry_values_with_units_and_their_sources():
    t = tk.hardware("h100-sxm")._repr_html_()
    assert t.startswith("<table>") and t.endswith("</table>")
    cells = re.findall(r"<tr><th[^>]*>([^<]*)</th><td[^>]*>([^<]*)</td><td[^>]*><code>"
                       r"([^<]*)</code></td></tr>", t)
    rows = {name: (value, src) for name, value, src in cells}
    hw = tk.hardware("h100-sxm")
    assert rows["mem_bw_bytes_per_s"] == ("3.35 TB/s", hw.sources["memory.bandwidth"])
    assert rows["mem_capacity_bytes"][0] == "80 GiB (85.9 GB)"     # 80 x 2^30 B
    assert rows["scale_up_bw_bytes_per_s"][0] == "450 GB/s per direction"
    assert hw.sources["memory.visible"] in rows["mem_visible_bytes"][1]
    m = tk.model("llama-3.1-8b")._repr_html_()
    assert tk.model("llama-3.1-8b").sources["config"] in m
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")._repr_html_()
    assert "Model(&#x27;llama-3.1-8b&#x27;" in d          # the entry's own line, escaped


def test_equality_still_compares_the_fields():
    a, b = tk.Deployment("llama-3.1-8b", "h100-sxm"), tk.Deployment("llama-3.1-8b", "h100-sxm")
    assert a == b and repr(a) == repr(b)
    assert a != a.with_(tp=2) and repr(a) != repr(a.with_(tp=2))
