"""Corpus rows from the ML.ENERGY Leaderboard V3 (vLLM on H100 and B200), lm-arena-chat task.

Reads ``public/data/tasks/lm-arena-chat.json`` of github.com/ml-energy/leaderboard (commit
0cd52dab, 2026-02-27; data last updated 2026-02-16) and prints corpus rows (CSV, the columns
of ``measurements/corpus.csv``) for the configurations whose model is in the catalog:

    python measurements/importers/mlenergy_v3.py lm-arena-chat.json > rows.csv

Each configuration is one steady-state run of vLLM (``vllm/vllm-openai:v0.11.1``, the
benchmark's default image; ``max-num-batched-tokens`` 8192, async scheduling) with the
server saturated at ``max_num_seqs``. The row's measurement is the mean time per output
token, ``avg_batch_size / output_throughput_tokens_per_sec`` (each of the ``avg_batch_size``
sequences in flight gets one token per step: a mean TPOT, prefill interruptions included),
at the measured concurrency ``avg_batch_size``. Multi-GPU runs are ``--tensor-parallel-size
num_gpus`` (ml-energy/benchmark, mlenergy/benchmark/llm/benchmark.py), with
``enable-expert-parallel`` for the MoE models (EP = TP). The prompt length of the LMArena
human-preference prompts is not published per configuration: 250 tokens is assumed (the
benchmark docs' example request has 245), and ``isl_assumed`` is set so that the bound
takes a 1-token prompt. vLLM's default KV format is the model's activation format (BF16).

The rows are **not fitted** (``fitted`` False): the calibration is fitted to TensorRT-LLM and
MLPerf results, and these 251 vLLM runs check two things it never saw: that no run beats
the bound, and how far the calibrated forecast carries to another engine (docs/validation.md).
"""

from __future__ import annotations

import csv
import json
import sys

MODELS = {
    "Qwen/Qwen3-235B-A22B-Instruct-2507": ("qwen3-235b-a22b", "qwen3"),
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": ("qwen3-235b-a22b", "qwen3"),
    "Qwen/Qwen3-30B-A3B-Instruct-2507": ("qwen3-30b-a3b", "qwen3"),
    "Qwen/Qwen3-32B": ("qwen3-32b", "qwen3"),
    "meta-llama/Llama-3.1-70B-Instruct": ("llama-3.1-70b", "llama-3.1"),
    "meta-llama/Llama-3.1-8B-Instruct": ("llama-3.1-8b", "llama-3.1"),
    "meta-llama/Llama-3.1-405B-Instruct": ("llama-3.1-405b", "llama-3.1"),
    "meta-llama/Llama-3.1-405B-Instruct-FP8": ("llama-3.1-405b", "llama-3.1"),
    "meta-llama/Llama-3.3-70B-Instruct": ("llama-3.3-70b", "llama-3.3"),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": ("llama-4-scout", "llama-4"),
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8": ("llama-4-maverick", "llama-4"),
    "google/gemma-3-27b-it": ("gemma-3-27b", "gemma-3"),
    "deepseek-ai/DeepSeek-V3.1": ("deepseek-v3", "deepseek"),
}
GPUS = {"H100": ("h100-sxm", "h100"), "B200": ("b200", "b200")}
FORMATS = {"bfloat16": "bf16", "fp8": "fp8"}
ISL = 250
SOURCE = ("ml-energy/leaderboard@0cd52dab public/data/tasks/lm-arena-chat.json "
          "(ML.ENERGY Leaderboard V3, data of 2026-02-16)")
COLUMNS = ["id", "model", "hardware", "devices", "tp", "pp", "ep", "attn_dp",
           "redundant_experts", "comm_overlap", "pool", "weight_dtype", "kv_dtype", "isl",
           "osl", "batch_per_device", "runtime_max_batch", "runtime_max_num_tokens", "metric",
           "measured", "unit", "isl_assumed", "source_group", "hardware_family",
           "model_family", "reserved", "fitted", "trust", "assumptions", "source"]


def rows(configs: list[dict]) -> list[dict]:
    """Corpus rows of the configurations whose model, GPU and format the catalog has."""
    out = []
    keep = [c for c in configs if c["model_id"] in MODELS and c["gpu_model"] in GPUS
            and c["weight_precision"] in FORMATS and c["data_parallel"] == 1]
    keep.sort(key=lambda c: (c["model_id"], c["gpu_model"], c["num_gpus"], c["max_num_seqs"]))
    for i, c in enumerate(keep, 1):
        model, family = MODELS[c["model_id"]]
        hw, hw_family = GPUS[c["gpu_model"]]
        n = int(c["num_gpus"])
        moe = int(c["expert_parallel"]) > 1
        b = float(c["avg_batch_size"])
        tpot = b / float(c["output_throughput_tokens_per_sec"])
        osl = round(float(c["avg_output_len"]))
        out.append(dict(
            id=f"ME{i:03d}", model=model, hardware=hw, devices=n, tp=n, pp=1,
            ep=n if moe else 1, attn_dp=0, redundant_experts=0, comm_overlap=0,
            pool="colocated", weight_dtype=FORMATS[c["weight_precision"]], kv_dtype="bf16",
            isl=ISL, osl=osl, batch_per_device=max(round(b), 1), runtime_max_batch=0,
            runtime_max_num_tokens=8192, metric="server_tpot_at_concurrency",
            measured=f"{tpot:.6g}", unit="s", isl_assumed=True, source_group="mlenergy-v3",
            hardware_family=hw_family, model_family=family, reserved=False, fitted=False,
            trust="medium",
            assumptions=(
                f"ML.ENERGY Leaderboard V3, lm-arena-chat: {c['model_id']} "
                f"({c['weight_precision']}) on {n}x {c['gpu_model']}, vLLM TP{n}"
                + (f" with expert parallelism (EP{n})" if moe else "")
                + f", max_num_seqs {c['max_num_seqs']}; measured concurrency (avg batch) "
                f"{b:.1f}, output {float(c['output_throughput_tokens_per_sec']):.1f} tok/s, "
                f"mean output {osl} tokens; mean TPOT = avg batch / output tok/s = "
                f"{tpot * 1e3:.2f} ms (median ITL {float(c['median_itl_ms']):.2f} ms); "
                f"prompt {ISL} tokens assumed (not published per run); KV in BF16 "
                f"(vLLM's default); vLLM v0.11.1 image assumed (the benchmark's default); "
                "an engine-transfer check, not fitted (vLLM, while the fit is TensorRT-LLM and "
                "MLPerf)"),
            source=SOURCE))
    return out


def main(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        configs = json.load(fh)["configurations"]
    w = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    for r in rows(configs):
        w.writerow(r)


if __name__ == "__main__":
    main(sys.argv[1])
