"""Build corpus rows from MLPerf Inference v4.0 (datacenter, closed) llama2-70b results.

Our own helper (no third-party code). The numbers in RECORDS were transcribed by hand from
``results/<system>/llama2-70b-99.9/<scenario>/performance/run_1/mlperf_log_summary.txt`` of
mlcommons/inference_results_v4.0 (read through the file index at commit 3c4a1cf; the repository
snapshot itself is over the 500 MiB fetch limit). The setup fields in SYSTEMS were read from the
submitters' ``configs/llama2-70b/{Offline,Server}`` files. ``parse_summary`` re-reads a summary
file when one is at hand, so the transcription can be checked against the logs.

Usage: python mlperf_v40.py  -> writes mlperf_v4.0.csv next to this file.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

REPO = "mlcommons/inference_results_v4.0"
COMMIT = "3c4a1cf"           # 3c4a1cf196b70175cfe7c59e067cd1d923aa4f3f (all summaries and partner configs)
NV_CFG_COMMIT = "8121a81"    # 8121a811542bfc693e201dc55d63f580a17124e0 (closed/NVIDIA/configs/llama2-70b)
README = ("closed/ASUSTeK/code/llama2-70b/tensorrt/README.md@9201484 (copy of NVIDIA's llama2 README: "
          "quantize.py --qformat=fp8 --kv_cache_dtype=fp8)")

HEADER = ("id,model,hardware,devices,tp,pp,ep,attn_dp,redundant_experts,comm_overlap,pool,"
          "weight_dtype,kv_dtype,isl,osl,batch_per_device,runtime_max_batch,runtime_max_num_tokens,"
          "metric,measured,unit,isl_assumed,source_group,hardware_family,model_family,reserved,"
          "fitted,trust,assumptions,source,engine,workload").split(",")

# submitter|system|benchmark dir|scenario|samples_s|tok_s|ttft_mean_ns|ttft_p99_ns|tpot_mean_ns|tpot_p99_ns|target_qps
RECORDS = """
NVIDIA|DGX-H100_H100-SXM-80GBx2_TRT|llama2-70b-99.9|Offline|18.9752|5539.47|||||19
NVIDIA|DGX-H100_H100-SXM-80GBx2_TRT|llama2-70b-99.9|Server|18.06|5271.98|359334888|596238777|133326973|167933588|18.4
NVIDIA|DGX-H100_H100-SXM-80GBx8_TRT|llama2-70b-99.9|Offline|74.699|21805.8|||||76
NVIDIA|DGX-H100_H100-SXM-80GBx8_TRT|llama2-70b-99.9|Server|70.42|20556.40|381606663|568284028|136836695|156076924|71.2
NVIDIA|H200-SXM-141GBx8_TRT|llama2-70b-99.9|Offline|94.6223|27738.3|||||96
NVIDIA|H200-SXM-141GBx8_TRT|llama2-70b-99.9|Server|90.35|26485.43|412853972|753113481|164850844|194987874|91.5
Dell|XE8640_H100_SXM_80GBx4_TRT|llama2-70b-99.9|Offline|33.8626|9896.75|||||204
Dell|XE8640_H100_SXM_80GBx4_TRT|llama2-70b-99.9|Server|31.05|9063.78|382707035|749610788|136953813|170517603|32
Dell|XE9640_H100_SXM_80GBX4_TRT|llama2-70b-99.9|Offline|31.6981|9248.35|||||38
Dell|XE9640_H100_SXM_80GBX4_TRT|llama2-70b-99.9|Server|30.19|8812.69|366234270|1017570821|122464415|152247896|31
Dell|XE9680_H100_SXM_80GBx8_TRT|llama2-70b-99.9|Offline|74.9747|21884.2|||||384
Dell|XE9680_H100_SXM_80GBx8_TRT|llama2-70b-99.9|Server|71.80|20958.48|403281653|809717829|141377788|176169675|74.24
Fujitsu|GX2560M7_H100_SXM_80GBx4_TRT|llama2-70b-99.9|Offline|28.9009|8435.97|||||36
Fujitsu|GX2560M7_H100_SXM_80GBx4_TRT|llama2-70b-99.9|Server|27.74|8097.95|375712771|743014918|135354216|179485113|28.5
GigaComputing|GIGABYTE-G593-SD1_DGX-H100_H100-SXM-80GBx8_TRT|llama2-70b-99.9|Offline|76.3162|22289.7|||||760
GigaComputing|GIGABYTE-G593-SD1_DGX-H100_H100-SXM-80GBx8_TRT|llama2-70b-99.9|Server|72.44|21146.75|427945107|896018167|143500582|173126220|75
Google|H100-SXM-80GBx8_TRT|llama2-70b-99.9|Offline|71.9176|20992|||||76
Google|H100-SXM-80GBx8_TRT|llama2-70b-99.9|Server|69.50|20287.78|416670527|671174358|146225437|178337503|71.875
HPE|HPE_Cray_XD670_H100_SXM_80GBx8_TRT_TRT|llama2-70b-99.9|Offline|71.8287|20973.2|||||80
HPE|HPE_Cray_XD670_H100_SXM_80GBx8_TRT_TRT|llama2-70b-99.9|Server|64.77|18908.88|248315773|399969336|85226778|100128153|66
HPE|HPE_ProLiant_DL380a_H100_PCIe_80GBx4_TRT_TRT|llama2-70b-99.9|Offline|21.6363|6335.7|||||28
HPE|HPE_ProLiant_DL380a_H100_PCIe_80GBx4_TRT_TRT|llama2-70b-99.9|Server|19.68|5761.08|307151500|538884592|105646712|124255288|20
Oracle|OCI-H100_H100-SXM-80GBx8_TRT|llama2-70b-99.9|Offline|72.055|21032.4|||||76
Oracle|OCI-H100_H100-SXM-80GBx8_TRT|llama2-70b-99.9|Server|69.78|20370.48|382306746|604549146|136035002|165251155|72
Quanta_Cloud_Technology|D54U_3U_H100_PCIe_80GBx4_TRT|llama2-70b-99.9|Offline|15.0432|4407.75|||||32
Quanta_Cloud_Technology|D54U_3U_H100_PCIe_80GBx4_TRT|llama2-70b-99.9|Server|13.81|4044.90|388423733|675749719|131226476|156580560|14
Supermicro|SYS_821GE_TNHR_H100_SXM_80GBx8_TRT|llama2-70b-99.9|Offline|76.0618|22202.2|||||76
Supermicro|SYS_821GE_TNHR_H100_SXM_80GBx8_TRT|llama2-70b-99.9|Server|73.67|21504.11|419727773|1461647744|140235826|170657307|76.28
Intel-HabanaLabs|HLS-Gaudi2-PT|llama2-70b-99.9|Offline|27.5567|8034.85|||||1
Intel-HabanaLabs|HLS-Gaudi2-PT|llama2-70b-99.9|Server|21.60|6287.47|472384641|1621209252|113975674|130950205|21.9
"""

NV_KV = ("FP8 weights and FP8 KV cache (config precision='fp16' with use_fp8=True: the engine is built from "
         "the AMMO FP8 checkpoint quantized with --kv_cache_dtype=fp8, " + README + ")")


def _nv(cfg: str) -> str:
    return f"closed/NVIDIA/configs/llama2-70b/{{Offline,Server}}/__init__.py@{NV_CFG_COMMIT} {cfg}"


# per system: hardware, devices, tp, offline batch, server batch, engine, trust per scenario, config note
SYSTEMS = {
    "DGX-H100_H100-SXM-80GBx2_TRT": dict(
        hw="h100-sxm", dev=2, tp=2, b_off=896, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg=_nv("classes H100_SXM_80GB_TP2x1(_HighAccuracy): tensor_parallelism 2, gpu_batch_size 896 "
                "(Offline) / 1024 (Server), use_fp8")),
    "DGX-H100_H100-SXM-80GBx8_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=896, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg=_nv("classes H100_SXM_80GB_TP2x4(_HighAccuracy): tensor_parallelism 2 (4 instances), "
                "gpu_batch_size 896 (Offline) / 1024 (Server), use_fp8")),
    "H200-SXM-141GBx8_TRT": dict(
        hw="h200", dev=8, tp=1, b_off=806, b_srv=896, engine="trtllm", trust=("high", "high"),
        cfg=_nv("classes H200_SXM_141GBx8(_HighAccuracy): tensor_parallelism 1 (8 instances), "
                "gpu_batch_size 806 (Offline) / 896 (Server), use_fp8; the 700 W H200-SXM-141GB part "
                "(the CTS 1000 W systems are separate and skipped)")),
    "XE8640_H100_SXM_80GBx4_TRT": dict(
        hw="h100-sxm", dev=4, tp=2, b_off=1024, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/Dell/configs/llama2-70b/{Offline,Server}/custom.py class XE8640_H100_SXM_80GBx4 inherits "
            "Dell's H100_SXM_80GB_TP2x1 (Dell __init__.py): tensor_parallelism 2, gpu_batch_size 1024 "
            "(both scenarios), use_fp8"),
    "XE9640_H100_SXM_80GBX4_TRT": dict(
        hw="h100-sxm", dev=4, tp=2, b_off=920, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/Dell/configs/llama2-70b/{Offline,Server}/custom.py class XE9640_H100_SXM_80GBX4: "
            "tensor_parallelism 2, gpu_batch_size 920 (Offline) / 1024 (Server), use_fp8"),
    "XE9680_H100_SXM_80GBx8_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=896, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/Dell/configs/llama2-70b/{Offline,Server}/custom.py class XE9680_H100_SXM_80GBX8 (MaxP): "
            "tensor_parallelism 2, gpu_batch_size 896 (Offline) / 1024 (Server), use_fp8"),
    "GX2560M7_H100_SXM_80GBx4_TRT": dict(
        hw="h100-sxm", dev=4, tp=2, b_off=1024, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/Fujitsu/configs/llama2-70b/{Offline,Server}/custom.py class GX2560M7_H100_SXM_80GBX4: "
            "tensor_parallelism 2, gpu_batch_size 1024, use_fp8"),
    "GIGABYTE-G593-SD1_DGX-H100_H100-SXM-80GBx8_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=896, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/GigaComputing/configs/llama2-70b/{Offline,Server}/__init__.py class H100_SXM_80GB_TP2x4: "
            "tensor_parallelism 2, gpu_batch_size 896 (Offline) / 1024 (Server), use_fp8"),
    "H100-SXM-80GBx8_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=896, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/Google/configs/llama2-70b/{Offline,Server}/__init__.py class H100_SXM_80GB_TP2x4: "
            "tensor_parallelism 2, gpu_batch_size 896 (Offline) / 1024 (Server), use_fp8"),
    "HPE_Cray_XD670_H100_SXM_80GBx8_TRT_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=896, b_srv=896, engine="trtllm", trust=("high", "high"),
        cfg="closed/HPE/configs/llama2-70b/{Offline,Server}/custom.py class HPE_CRAY_XD670_H100_SXM_80GBX8_TRT "
            "(inherits H100_SXM_80GB_TP2x4, tensor_parallelism 2): gpu_batch_size 896 (both scenarios), "
            "kvcache_free_gpu_mem_frac 0.95 (Offline) / 0.97 (Server)"),
    "HPE_ProLiant_DL380a_H100_PCIe_80GBx4_TRT_TRT": dict(
        hw="h100-pcie", dev=4, tp=2, b_off=896, b_srv=896, engine="trtllm", trust=("high", "high"),
        cfg="closed/HPE/configs/llama2-70b/{Offline,Server}/custom.py class HPE_ProLiant_DL380a_H100_PCIe_80GBx4_TRT "
            "(OfflineGPUBaseConfig/ServerGPUBaseConfig, tensor_parallelism 2): gpu_batch_size 896, use_fp8; "
            "system json: NVIDIA H100-PCIe-80GB x4 with 4x NVLink bridge 900GB/s"),
    "OCI-H100_H100-SXM-80GBx8_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=0, b_srv=1024, engine="trtllm", trust=("medium", "high"),
        cfg="closed/Oracle/configs/llama2-70b/Server/__init__.py class H100_SXM_80GB_TP2x4: tensor_parallelism 2, "
            "gpu_batch_size 1024, use_fp8; Oracle's Offline config is not in the index: Offline TP2 assumed "
            "(NVIDIA/Oracle base config) and batch left 0 (NVIDIA's own Offline value is 896)"),
    "D54U_3U_H100_PCIe_80GBx4_TRT": dict(
        hw="h100-pcie", dev=4, tp=2, b_off=1024, b_srv=1024, engine="trtllm", trust=("high", "high"),
        cfg="closed/Quanta_Cloud_Technology/configs/llama2-70b/{Offline,Server}/__init__.py class "
            "D54U_3U_H100_PCIe_80GBx4: tensor_parallelism 2, gpu_batch_size 1024, use_fp8; system json: "
            "H100-PCIe-80GB x4, accelerator_interconnect N/A (no NVLink bridge listed)"),
    "SYS_821GE_TNHR_H100_SXM_80GBx8_TRT": dict(
        hw="h100-sxm", dev=8, tp=2, b_off=896, b_srv=1024, engine="trtllm", trust=("medium", "medium"),
        cfg="closed/Supermicro/configs/llama2-70b/{Offline,Server}/custom.py class SYS_821GE_TNHR_H100_SXM_80GBX8"
            "_HighAccuracy inherits H100_SXM_80GB_TP2x4_HighAccuracy; Supermicro's __init__.py is not in the "
            "index, so TP2 and gpu_batch_size 896 (Offline) / 1024 (Server) are NVIDIA's v4.0 values for that "
            "class (assumed unchanged)"),
    "HLS-Gaudi2-PT": dict(
        hw="gaudi2", dev=8, tp=8, b_off=1024, b_srv=768, engine="tgi-gaudi", trust=("medium", "medium"),
        cfg="closed/Intel-HabanaLabs/code/llama2-70b-99.9/scenarios.yaml@9201484: run_tgi_server.sh --bs 1024 "
            "(Offline) / --bs 768 (Server) --fp8; TGI-gaudi + optimum-habana, synapseAI 1.14.98; TP8 = one TGI "
            "server sharded over the 8 Gaudi2 (--sharded true --num-shard 8 in the run_tgi_server.sh text found in "
            "the index, and the FP8 calibration is the 8-card 'hqt/llama2-70b-8x' config run with deepspeed "
            "--num_gpus 8 per the README); README: weights and linear/matmul input activations in FP8-143; KV "
            "cache storage format not published, engine default bf16 (torch_dtype) assumed"),
}

VARIANT_NOTE = {
    "GigaComputing": " (closed/GigaComputing/summary.csv lists identical -99 and -99.9 results)",
    "Intel-HabanaLabs": " (README: the 99.9 results were used for 99 as well)",
    "Supermicro": " (Supermicro's -99 Server class targets 19.17x4 qps vs 19.07x4 for -99.9, so its -99 Server run may differ slightly)",
}


def parse_summary(text: str) -> dict:
    """Pull the numbers used here out of one mlperf_log_summary.txt (for re-checking RECORDS)."""
    def num(pat):
        m = re.search(pat, text)
        return float(m.group(1)) if m else None
    out = {"scenario": re.search(r"Scenario\s*:\s*(\w+)", text).group(1),
           "valid": "Result is : VALID" in text}
    if out["scenario"] == "Offline":
        out["samples_s"] = num(r"Samples per second:\s*([\d.]+)")
        out["tok_s"] = num(r"Tokens per second:\s*([\d.]+)")
    else:
        out["samples_s"] = num(r"Completed samples per second\s*:\s*([\d.]+)")
        out["tok_s"] = num(r"Completed tokens per second\s*:\s*([\d.]+)")
        out["ttft_mean_ns"] = num(r"Mean First Token latency \(ns\)\s*:\s*(\d+)")
        out["ttft_p99_ns"] = num(r"99\.00 percentile first token latency \(ns\)\s*:\s*(\d+)")
        out["tpot_mean_ns"] = num(r"Mean Time to Output Token \(ns\)\s*:\s*(\d+)")
        out["tpot_p99_ns"] = num(r"99\.00 percentile time to output token \(ns\)\s*:\s*(\d+)")
    return out


def rows():
    out = []
    n = 0
    for line in RECORDS.strip().splitlines():
        sub, sysname, bench, scen, sps, tps, ttm, tt99, tpm, tp99, tq = line.split("|")
        s = SYSTEMS[sysname]
        sps, tps = float(sps), float(tps)
        dev, tp = s["dev"], s["tp"]
        inst = dev // tp
        osl = tps / sps
        per_dev = tps / dev
        path = f"closed/{sub}/results/{sysname}/{bench}/{scen}/performance/run_1/mlperf_log_summary.txt"
        kv = NV_KV if s["engine"] == "trtllm" else ""
        wdt, kvdt = ("fp8", "fp8") if s["engine"] == "trtllm" else ("fp8", "bf16")
        head = (f"MLPerf Inference v4.0 closed {sub} {sysname} llama2-70b {scen}: log of the llama2-70b-99.9 "
                f"run (the -99 log is not in the file index; the -99.9 configs inherit the -99 ones unchanged, "
                f"same FP8 engine){VARIANT_NOTE.get(sub, '')}; VALID; {tps:g} output tok/s over {dev} "
                f"accelerators ({per_dev:.1f}/accelerator); mean OSL {osl:.1f} = tokens/s / samples/s "
                f"({sps:g}); ISL 0 placeholder (isl_assumed, to be filled from the dataset); "
                + (kv + "; " if kv else "") + s["cfg"] + f"; {inst} instance(s) of TP{tp}")
        if s["engine"] == "trtllm":
            head += ("; runtime_max_num_tokens 0: not set in the submitter file read (TRT-LLM builder "
                     "default max_num_tokens 16384; the parent configs/llama2-70b/__init__.py is not in the index)")
        trust = s["trust"][0 if scen == "Offline" else 1]
        if scen == "Offline":
            metric, meas, unit = "offline_tok_s_per_device", round(per_dev, 2), "tok/s"
            bpd = s["b_off"]
            rmb = s["b_off"]
            assum = head + (f"; batch_per_device = engine max batch (gpu_batch_size) {bpd} of one instance"
                            if bpd else "; batch_per_device 0 (engine batch not published)")
            assum += f"; loadgen target_qps {tq}"
        else:
            tpm_s = float(tpm) / 1e9
            conc = tps / inst * tpm_s
            metric, meas, unit = "server_tpot_at_concurrency", round(tpm_s, 5), "s"
            bpd = int(round(conc))
            rmb = s["b_srv"]
            assum = (head + f"; mean TPOT {tpm_s*1e3:.1f} ms (p99 {float(tp99)/1e6:.1f} ms); concurrency per "
                     f"instance by Little's law = ({tps:g}/{inst}) tok/s x {tpm_s:.4f} s = {conc:.0f} "
                     f"(engine max batch {rmb}); TTFT mean {float(ttm)/1e6:.0f} ms, p99 "
                     f"{float(tt99)/1e6:.0f} ms; completed {sps:g} samples/s at loadgen target_qps {tq}")
        n += 1
        out.append({
            "id": f"M4-{n:03d}", "model": "llama-2-70b", "hardware": s["hw"], "devices": dev, "tp": tp,
            "pp": 1, "ep": 1, "attn_dp": 0, "redundant_experts": 0, "comm_overlap": 0, "pool": "colocated",
            "weight_dtype": wdt, "kv_dtype": kvdt, "isl": 0, "osl": int(round(osl)),
            "batch_per_device": bpd, "runtime_max_batch": rmb, "runtime_max_num_tokens": 0,
            "metric": metric, "measured": meas, "unit": unit, "isl_assumed": True,
            "source_group": "mlperf-v4.0",
            "hardware_family": {"h100-sxm": "h100", "h100-pcie": "h100", "h200": "h200",
                                "gaudi2": "gaudi"}[s["hw"]],
            "model_family": "llama-2", "reserved": False, "fitted": True, "trust": trust,
            "assumptions": assum, "source": f"{REPO}@{COMMIT} {path}", "engine": s["engine"],
            "workload": "mlperf-llama2-70b"})
    return out


def main():
    here = Path(__file__).resolve().parent
    rs = rows()
    with open(here / "mlperf_v4.0.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        w.writerows(rs)
    print(f"wrote {len(rs)} rows")


if __name__ == "__main__":
    main()
