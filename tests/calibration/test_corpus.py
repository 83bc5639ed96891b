"""The measurement corpus: every published row under the bound, read as the source says."""

from __future__ import annotations

import csv
import re

import pytest

import tokenomics as tk
from tokenomics.calibration.corpus import (
    GROUPINGS,
    bound,
    concurrency,
    corpus_frame,
    corpus_path,
    forecast,
    load_corpus,
    trtllm_bench_caps,
)

ROWS = {r.id: r for r in load_corpus()}


def test_the_corpus_is_broad_and_none_of_it_reserved():
    # issue 24: at least 600 rows from at least 4 independent source families, at least 35%
    # of them not TensorRT-LLM or not NVIDIA
    fitted = [r for r in ROWS.values() if r.fitted]
    assert len(fitted) >= 600
    families = {r.source_family for r in fitted}
    assert len([f for f in families
                if sum(r.source_family == f for r in fitted) >= 20]) >= 4
    other = [r for r in fitted if r.engine != "trtllm" or
             tk.hardware(r.hardware).vendor != "NVIDIA"]
    assert len(other) / len(fitted) >= 0.35
    assert sum(r.id.startswith("P") for r in ROWS.values()) == 220   # the public corpus
    me = [r for r in ROWS.values() if r.source_group == "mlenergy-v3"]
    assert len(me) == 251 and all(r.fitted for r in me)
    assert {r.id for r in ROWS.values() if r.source_group == "deepseek-open-infra"} == \
        {"DS-D1", "DS-P1"}
    for r in ROWS.values():
        # MLPerf Inference v5.1 and later and the LMSYS/SGLang blog's large-scale figures
        # are held out (v5.0 and earlier rounds are in)
        assert not re.search(r"inference_results_v(5\.[1-9]|[6-9])", r.source), r.id
        assert "lmsys.org" not in (r.source + r.assumptions).lower(), r.id
        assert all(getattr(r, g) for g in GROUPINGS)
        assert r.engine and r.stack.split("-")[0] in ("nvidia", "amd", "intel")


@pytest.mark.validation
def test_no_published_row_beats_the_bound():
    f = corpus_frame()
    worst = f.sort_values("measured_over_bound").iloc[-1]
    assert (f.measured_over_bound <= 1.0).all(), (
        f"{worst.id} measured {worst.measured} beats the bound {worst.bound}")


def test_light_load_ttft_bound_by_hand():
    # P064: Llama 3.1 8B BF16 on one H200, 202-token prompt. The prefill alone must read
    # every weight once: 16.06e9 B / 4.8e12 B/s = 3.35 ms; its FLOPs, 2 x 6.98e9 x 202 =
    # 2.8e12 at 989 TFLOP/s, take 2.9 ms, so memory sets the bound.
    r = ROWS["P064"]
    assert bound(r) == pytest.approx(16.06e9 / 4.8e12, rel=0.03)
    assert r.measured == 0.017 and bound(r) < r.measured


def test_trtllm_bench_caps_by_hand():
    # trtllm-bench's heuristic (tensorrt_llm/bench/build/tuning.py): b = min(R, 4096)/pp
    # rounded up (to 32 below 256 with a floor of 64, to 128 below 1,024, else to 256);
    # n = min(b (1 + I/O), 32768) rounded up (to 256 below 4,096 with a floor of 2,048, to
    # 512 below 8,192, else to 1,024)
    assert trtllm_bench_caps(300, 1000, 1000, 1) == (384, 2048)     # 600 tokens -> floor
    assert trtllm_bench_caps(40, 128, 128, 1) == (64, 2048)
    assert trtllm_bench_caps(5000, 128, 2048, 1) == (4096, 4608)    # 4096 x 1.0625 = 4352
    assert trtllm_bench_caps(5000, 2048, 128, 2) == (2048, 32768)   # 2048 x 17, capped


def test_max_load_concurrency_is_capped_by_the_engine_settings():
    # P089: Llama 3.1 8B on H200, 2,048 in / 128 out at max load, engine caps as
    # trtllm-bench sets them: at most max_num_tokens / (1 + 2048/128) sequences in flight
    r = ROWS["P089"]
    dep = r.deployment()
    assert (r.isl, r.osl, r.runtime_max_batch) == (2048, 128, -1)
    fit = int(tk.max_batch(dep, r.isl + r.osl))     # TensorRT-LLM reserves I + O
    bs, tok = trtllm_bench_caps(fit, 2048, 128, 1)
    assert concurrency(r, dep) == min(fit, bs, int(tok / 17))


def test_runtime_caps_are_per_attention_data_parallel_rank():
    # P109: Llama 4 Maverick NVFP4 on 8 B200 with attention DP, 2,048 in / 128 out.
    # TensorRT-LLM's max_batch_size and max_num_tokens bind each attention-DP rank
    # ("max_batch_size is already the per-attention-DP-rank cap, so aggregate concurrency
    # is max_batch_size x dp_size": ai-dynamo/dynamo PR #11982, tracing the PyTorch
    # executor): eight ranks' worth.
    r = ROWS["P109"]
    dep = r.deployment()
    assert (r.tp, r.attn_dp) == (8, 1)
    fit = int(tk.max_batch(dep, r.isl + r.osl))
    bs, tok = trtllm_bench_caps(fit, r.isl, r.osl, 1)
    assert r.requests == 3000          # the doc's $num_requests at 2,048/128
    assert concurrency(r, dep) == min(fit, 8 * bs, int(8 * tok / (1 + r.isl / r.osl)), 3000)


def test_tensorrt_llms_attention_dp_rows_run_their_mlps_data_parallel():
    # TensorRT-LLM's model code, under enable_attention_dp: "If using attention DP, the MLP
    # also uses DP instead of TP" (mlp_tp_size = 1, modeling_deepseekv3.py), and the Llama 4
    # shared expert and dense MLPs take overridden_tp_size=1 (modeling_llama.py). Its
    # attention-DP rows take that layout; rows of other engines, or without attention DP,
    # keep the dense layers split over tp.
    for row in ROWS.values():
        dep = row.deployment()
        want = bool(row.attn_dp and row.tp > 1 and row.engine == "trtllm")
        assert dep.mlp_data_parallel is want, row.id
    p112 = ROWS["P112"].deployment()        # Llama 4 Maverick FP8 on 8 H100s, attention DP
    assert p112.mlp_copies == 8 and p112.dp_attention == 8


def test_tensorrt_llm_without_nvlink_gathers_instead_of_all_to_all():
    # TensorRT-LLM's fused MoE runs an all-to-all only where MnnvlMemory.supports_mnnvl()
    # (every NVLink up); otherwise its attention-DP MoE layers take the allgather /
    # reducescatter path. The RTX PRO 6000 Server cards talk over PCIe: its TensorRT-LLM
    # rows with attention DP and experts over the ranks gather; NVLink parts and other
    # engines keep the all-to-all.
    for row in ROWS.values():
        want = (row.engine == "trtllm" and row.attn_dp and row.ep > 1
                and row.hardware == "rtx-pro-6000-server")
        assert row.deployment().ep_exchange == ("allgather" if want else "alltoall"), row.id
    assert sum(r.deployment().ep_exchange == "allgather" for r in ROWS.values()) >= 70


def test_a_finite_run_holds_at_most_its_requests():
    # TensorRT-LLM's perf-overview runs trtllm-bench on a dataset of $num_requests requests
    # ("Reproducing Benchmarked Results": 3,000 at 1,000/1,000 and 1,024/1,024, 1,500 at
    # 1,024/8,192, 1,000 at 20,000/2,000 and 32,768/1,024). T2-121, DeepSeek-R1 NVFP4 on
    # 8 B200 with attention DP: eight ranks' caps and the memory fit would allow far more
    # than 3,000 sequences, but the run has only 3,000 to hold.
    r = ROWS["T2-121"]
    dep = r.deployment()
    assert (r.isl, r.osl, r.tp, r.attn_dp, r.requests) == (1000, 1000, 8, 1, 3000)
    assert int(tk.max_batch(dep, r.isl + r.osl)) > 3000
    assert concurrency(r, dep) == 3000
    counts = {(1000, 1000): 3000, (1024, 1024): 3000, (1024, 8192): 1500, (20000, 2000): 1000,
              (32768, 1024): 1000, (128, 128): 30000}
    for row in ROWS.values():          # every stated count read as the tables give it
        if row.requests and (row.isl, row.osl) in counts:
            assert row.requests == counts[row.isl, row.osl], row.id


def test_published_engine_batch_binds_when_memory_allows_more():
    # P011: MLPerf v4.1 H200 Llama 2 70B FP8 offline, engine batch 806 (NVIDIA's config).
    # The FP8 weights and FP16 embeddings take ~69.5e9 of H200's 150.75e9 B; the KV cache
    # gets 90% of the rest (TensorRT-LLM's kv_cache_free_gpu_mem_fraction), 73.1e9 B; each
    # sequence of the task's mean 222 + 291 tokens holds 513 x 163,840 B of FP8 KV
    # (2 x 8 heads x 128 x 80 layers): ~73.1e9 / 84.0e6 = 870 would fit, so the published
    # batch binds (with the 300 tokens once assumed, 755 fit and memory bound it).
    r = ROWS["P011"]
    assert r.isl == 222 and r.workload == "mlperf-llama2-70b"
    assert 860 <= int(tk.max_batch(r.deployment(), r.isl + r.osl)) <= 875
    assert concurrency(r, r.deployment()) == 806


def test_tpot_rows_run_at_the_published_concurrency():
    r = ROWS["P035"]           # 10 requests in flight on TP4 (Little's law on the table)
    assert concurrency(r, r.deployment()) == 10
    t = forecast(r, tk.ROOFLINE)
    assert 0 < t < r.measured


def _write(tmp_path, rows):
    src = list(csv.DictReader(corpus_path().open()))
    p = tmp_path / "corpus.csv"
    with p.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(src[0]))
        w.writeheader()
        for edit in rows:
            rec = dict(src[0])
            rec.update(edit)
            w.writerow(rec)
    return p


@pytest.mark.parametrize("edit, match", [
    ({"measured": "fast"}, r"row 2 \(P001\): field measured: 'fast' is not valid"),
    ({"measured": "-3"}, "field measured: must be a number from 1e-09 to 1e[+]09"),
    ({"metric": "tokens"}, "field metric: 'tokens' is not one of"),
    ({"tp": "two"}, "field tp: 'two' is not valid"),
    ({"reserved": "yes"}, "field reserved: 'yes' is not valid"),
    ({"requests": "-5"}, "field requests: must be a whole number from 0 to 1e[+]08"),
    ({"requests": "1.5e3"}, "field requests: '1.5e3' is not valid"),
    # issue 25: the schema engine (tokenomics.data.kinds.CORPUS) also refuses these
    ({"tp": "2.5"}, "field tp: '2.5' is not valid"),
    ({"tp": "0"}, "field tp: must be a whole number from 1 to 4096"),
    ({"attn_dp": "2"}, "field attn_dp: must be a whole number from 0 to 1"),
    ({"comm_overlap": "1.5"}, "field comm_overlap: must be a number from 0 to 1"),
    ({"trust": "certain"}, "field trust: 'certain' is not one of high, medium, low"),
    ({"pool": "both"}, "field pool: 'both' is not one of colocated, decode, prefill"),
    ({"unit": "tok/min"}, "field unit: 'tok/min' is not one of tok/s, s"),
    ({"engine": ""}, "field engine: empty"),
    ({"workload": "sharegpt"}, "field workload: 'sharegpt' is not a bundled workload"),
    ({"kv_dtype": "fp5"}, "field kv_dtype: "),
])
def test_corrupt_rows_are_named(tmp_path, edit, match):
    with pytest.raises(tk.CatalogError, match=match):
        load_corpus(_write(tmp_path, [edit]))


def test_a_missing_required_column_is_named(tmp_path):
    src = list(csv.DictReader(corpus_path().open()))
    p = tmp_path / "corpus.csv"
    with p.open("w", newline="") as fh:
        cols = [c for c in src[0] if c != "trust"]
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerow(src[0])
    with pytest.raises(tk.CatalogError, match=r"row 2 \(P001\): field trust: missing"):
        load_corpus(p)


def test_duplicate_ids_and_missing_files_are_named(tmp_path):
    with pytest.raises(tk.CatalogError, match="field id: 'P001' appears twice"):
        load_corpus(_write(tmp_path, [{}, {}]))
    with pytest.raises(tk.CatalogError, match="cannot read the corpus"):
        load_corpus(tmp_path / "absent.csv")


def test_reserved_rows_are_left_out_unless_asked(tmp_path):
    p = _write(tmp_path, [{"id": "V1", "reserved": "True"}, {"id": "F1"}])
    assert [r.id for r in load_corpus(p)] == ["F1"]
    assert [r.id for r in load_corpus(p, include_reserved=True)] == ["V1", "F1"]


def test_deepseek_decode_row_reads_day_6_by_hand():
    # 14.8k output tok/s per 8-GPU node = 1,850 per GPU at 20-22 tok/s per user (1/21 s);
    # Little: 1,850 x 144 GPUs x (1/21) = 12,686 in flight on the EP144 instance. Mean KV
    # 4,989 = I + O/2 with I/O = 608B / 168B = 3.62 gives O = 1,211 and I = 4,384.
    r = ROWS["DS-D1"]
    assert r.batch_per_device == round(14_800 / 8 * 144 / 21)
    assert r.measured == pytest.approx(1 / 21, rel=1e-4)
    assert r.isl + r.osl / 2 == pytest.approx(4989, abs=1)
    assert r.isl / r.osl == pytest.approx(608 / 168, rel=0.01)
    d = r.deployment()
    assert (d.tp, d.ep, d.dp_attention, d.physical_experts) == (144, 144, 144, 288)
    assert r.pool == "decode" and bound(r) < r.measured


def test_deepseek_prefill_row_counts_only_computed_tokens():
    # 73.7k input tok/s per node including the 56.3% that hit the disk cache (342B of 608B):
    # 73,700 x (1 - 0.563) / 8 GPUs = 4,026 computed prompt tokens/s per GPU, under the bound.
    r = ROWS["DS-P1"]
    assert r.measured == pytest.approx(73_700 * (1 - 342 / 608) / 8, rel=0.002)
    assert not r.fitted and r.pool == "prefill"
    assert r.measured < bound(r)


@pytest.mark.validation
def test_the_public_roofline_is_never_beaten():
    # issue 24: the library's default is a bound everywhere. Each row through the public
    # functions under the roofline preset (steady_state over its workload at its
    # concurrency, or prefill): no published row is faster.
    worst = None
    for r in load_corpus():
        f = forecast(r, tk.ROOFLINE)
        over = r.measured / f if r.kind == "speed" else f / r.measured   # measured / bound
        worst = max(worst or (0, ""), (over, r.id))
        assert over <= 1.0, f"{r.id}: measured {r.measured} beats the roofline {f}"
    assert worst[0] < 1.0


def test_deepseeks_day6_figures_are_under_the_public_bound():
    # DeepSeek-AI, open-infra-index day 6 (2025-03-01): decode on EP144 H800 units serves
    # ~14.8k output tok/s per 8-GPU node (1,850 per GPU) with 12,686 sequences in flight at
    # a mean KV length of 4,989; prefill on EP32 units computes ~4,026 prompt tok/s per GPU
    # (73.7k per node, 43.7% of it not from the cache). tk.decode and tk.prefill at the
    # roofline preset (collectives hidden, FP8 dispatch, one copy per remote node) must not
    # be beaten, whatever the unpublished prompt length.
    dec = ROWS["DS-D1"].deployment(tk.ROOFLINE)
    assert (dec.ep, dec.redundant_experts, dec.comm_overlap) == (144, 32, 1.0)
    assert tk.decode(dec, 12_686, 4_989).tokens_per_s_per_device >= 14_800 / 8
    pre = ROWS["DS-P1"].deployment(tk.ROOFLINE)
    assert (pre.ep, pre.dp_attention) == (32, 32)
    for prompt in (1024, 4384, 8192):
        r = tk.prefill(pre, prompt, batch=32, on_oom="mark")     # a prompt per DP rank
        assert r.tokens_per_s_per_device >= 73_700 * 0.437 / 8, prompt
