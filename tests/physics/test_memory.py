"""Memory fit: every term visible and checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

import tokenomics as tk


def test_memory_fit_terms_by_hand():
    m = tk.model("llama-3.1-70b")
    d = tk.Deployment(m, "h200", tp=2, weight_dtype="fp8", kv_dtype="fp8",
                      runtime_reserve_bytes=3e9)
    f = tk.memory_fit(d, 16, 8192)
    # FP8 linear weights, BF16 embedding table and LM head (2 x 128,256 x 8,192), over tp=2.
    table = 2 * 128_256 * 8_192
    assert f.weights_bytes == pytest.approx(((tk.param_count(m) - table) * 1 + table * 2) / 2)
    assert f.kv_bytes == pytest.approx(16 * 8192 * 2 * 80 * 8 * 128 * 1 / 2)
    # Workspace estimate: per token (4h + max(qkv, 2I)/tp) x 2 B, plus FP32 logits per sequence.
    per_tok = (4 * 8192 + 2 * 28672 / 2) * 2
    assert f.workspace_bytes == pytest.approx(16 * per_tok + 16 * 4 * 128_256 / 2)
    assert f.total_bytes == pytest.approx(f.weights_bytes + f.kv_bytes + f.workspace_bytes + 3e9)
    assert f.usable_bytes == 0.9 * 141e9
    assert f.free_bytes == pytest.approx(f.usable_bytes - f.total_bytes)
    assert f.fits


def test_quantized_weights_keep_the_released_embedding_and_lm_head():
    # Weight quantization converts the linear layers of the blocks; the embedding table and LM
    # head stay at the release format unless asked (Neural Magic's Llama 3.1 FP8 checkpoints).
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", weight_dtype="fp8")
    assert d.embedding_dtype == "bf16"
    table = 128_256 * 4_096                               # one table, parameters
    ops = {o.name: o for o in tk.operators.step_costs(d, 1.0, 1.0, 1024.0, 1.0)}
    assert float(ops["lm_head"].weight_bytes) == table * 2            # streamed each step
    assert float(ops["embedding"].weight_bytes) == 4_096 * 2          # one row gathered
    full = d.with_(embedding_dtype="fp8")
    assert tk.weight_bytes_per_device(d) - tk.weight_bytes_per_device(full) == \
        pytest.approx(2 * table * (2 - 1))
    # Everything follows a wider release: a BF16 model served in BF16 is unchanged.
    assert tk.Deployment("llama-3.1-8b", "h100-sxm").embedding_dtype == "bf16"
    with pytest.raises(tk.TokenomicsError, match="unknown numeric format"):
        tk.Deployment("llama-3.1-8b", "h100-sxm", embedding_dtype="fp9")


def test_prefill_workspace_counts_logits_once_per_sequence():
    # A 128K-token prompt on Llama 3.1 8B: activations per token, logits only for the last.
    d = tk.Deployment("llama-3.1-8b", "h200")
    f = tk.memory_fit(d, 1, 131_072, tokens_per_step=131_072)
    per_tok = (4 * 4096 + 2 * 14336) * 2
    assert f.workspace_bytes == pytest.approx(131_072 * per_tok + 4 * 128_256)
    assert f.fits


def test_explicit_workspace_overrides_the_estimate():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm", workspace_bytes=5e9, usable_memory_fraction=1.0)
    f = tk.memory_fit(d, [1, 10], 4096)
    assert np.all(np.asarray(f.workspace_bytes) == 5e9)
    # max_batch: (80e9 - weights - 5e9) / (4096 x 131,072 B)
    room = 80e9 - tk.weight_bytes(tk.model("llama-3.1-8b")) - 5e9
    assert tk.max_batch(d, 4096) == int(room // (4096 * 131_072))


def test_max_batch_arrays_and_windows():
    # Gemma 3 27B: 52 sliding layers hold at most 1024 tokens, so at long context the KV per
    # sequence grows only with the 10 global layers: max batch falls slowly.
    d = tk.Deployment("gemma-3-27b", "h200", usable_memory_fraction=1.0, workspace_bytes=0)
    mb = tk.max_batch(d, np.array([1024, 32_768, 131_072]))
    per_layer = 2 * 16 * 128 * 2
    room = 141e9 - tk.weight_bytes(tk.model("gemma-3-27b"))
    expected = [room // (per_layer * (62 * 1024)),
                room // (per_layer * (52 * 1024 + 10 * 32_768)),
                room // (per_layer * (52 * 1024 + 10 * 131_072))]
    assert list(mb) == [int(x) for x in expected]


def test_memory_fit_frame():
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    df = tk.memory_fit(d, [1, 2, 3], 1024).to_frame()
    assert len(df) == 3 and {"weights_bytes", "kv_bytes", "workspace_bytes", "fits"} <= set(df)
