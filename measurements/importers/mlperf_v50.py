#!/usr/bin/env python3
"""Build corpus rows for MLPerf Inference v5.0 (datacenter, closed) LLM results.

Our own helper (no third-party code). Two parts:

1. parse_summary(text): reads the numbers we use out of a loadgen
   mlperf_log_summary.txt (samples/s, tokens/s, mean/p99 TTFT and TPOT), and
   parse_detail_tail(text) does the same for the result_* keys at the end of a
   mlperf_log_detail.txt (used where the index holds no summary file).
2. EXTRACT: the values transcribed from those files (read through the index
   mirror ntuhpc/mlperf_inference_results_v5.0 @ cf354115915ea369f05db424b051da8c5bf957dc,
   a copy of mlcommons/inference_results_v5.0), and CONFIG: the serving setup
   read from each submitter's configs / measurements / code. build_rows() turns
   them into rows of the corpus schema and writes mlperf_v5.0.csv.

Run: python3 mlperf_v50.py  (writes mlperf_v5.0.csv next to this file)
"""
import csv
import io
import os
import re

REPO = "ntuhpc/mlperf_inference_results_v5.0@cf35411"

# ---------------------------------------------------------------- parsing
_SUM_KEYS = {
    "samples_s": [r"Samples per second\s*:\s*([0-9.eE+-]+)",
                  r"Completed samples per second\s*:\s*([0-9.eE+-]+)"],
    "tok_s": [r"Tokens per second\s*:\s*([0-9.eE+-]+)",
              r"Completed tokens per second\s*:\s*([0-9.eE+-]+)"],
    "ttft_mean_ns": [r"Mean First Token latency \(ns\)\s*:\s*([0-9]+)"],
    "ttft_p99_ns": [r"99\.00 percentile first token latency \(ns\)\s*:\s*([0-9]+)"],
    "tpot_mean_ns": [r"Mean Time to Output Token \(ns\)\s*:\s*([0-9]+)"],
    "tpot_p99_ns": [r"99\.00 percentile time to output token \(ns\)\s*:\s*([0-9]+)"],
}


def parse_summary(text):
    """Return a dict of the numbers used here from a mlperf_log_summary.txt."""
    out = {}
    for key, pats in _SUM_KEYS.items():
        for p in pats:
            m = re.search(p, text)
            if m:
                out[key] = float(m.group(1))
                break
    out["valid"] = "Result is : VALID" in text
    return out


_DET_KEYS = {
    "samples_s": "result_completed_samples_per_sec",
    "tok_s": "result_completed_tokens_per_second",
    "ttft_mean_ns": "result_first_token_mean_latency_ns",
    "ttft_p99_ns": "result_first_token_99.00_percentile_latency_ns",
    "tpot_mean_ns": "result_time_to_output_token_mean",
    "tpot_p99_ns": "result_time_per_output_token_99.00_percentile_ns",
}


def parse_detail_tail(text):
    """Same numbers from the result_* MLLOG lines of a mlperf_log_detail.txt."""
    out = {}
    for key, name in _DET_KEYS.items():
        m = re.search(r'"key": "%s", "value": ([0-9.eE+-]+)' % re.escape(name), text)
        if m:
            out[key] = float(m.group(1))
    out["valid"] = '"key": "result_validity", "value": "VALID"' in text
    return out


# ---------------------------------------------------------------- transcribed values
# file: summary = mlperf_log_summary.txt, detail = result_* keys of mlperf_log_detail.txt
EXTRACT = """
submitter,system,bench,scenario,file,samples_s,tok_s,ttft_mean_ns,ttft_p99_ns,tpot_mean_ns,tpot_p99_ns
NVIDIA,B200-SXM-180GBx8_TRT,llama2-70b-99.9,Offline,summary,363.895,98858,,,,
NVIDIA,B200-SXM-180GBx8_TRT,llama2-70b-99,Server,detail,361.038,98443.3,525802611,1567234976,150215005,159122423
NVIDIA,B200-SXM-180GBx8_TRT,llama2-70b-interactive-99,Server,summary,217.93,59409.25,85598458,212337410,36129344,39122504
NVIDIA,B200-SXM-180GBx8_TRT,llama3_1-405b,Offline,summary,2.32353,1526.29,,,,
NVIDIA,B200-SXM-180GBx8_TRT,mixtral-8x7b,Server,summary,870.82,126844.55,209738009,343175097,110007327,121282835
NVIDIA,B200-SXM-180GBx8_TRT,mixtral-8x7b,Offline,summary,886.233,128148,,,,
NVIDIA,B200-SXM-180GBx8_TRT,llama3_1-405b,Server,summary,1.29,845.82,1860083007,4296681261,87022478,113518660
NVIDIA,B200-SXM-180GBx1_TRT,llama2-70b-99,Server,summary,44.30,12078.40,365115684,1292939719,145304149,159006221
NVIDIA,B200-SXM-180GBx1_TRT,llama2-70b-99.9,Offline,summary,45.1644,12269.3,,,,
NVIDIA,H200-SXM-141GBx8_TRT,llama2-70b-99,Offline,summary,120.008,34988.2,,,,
NVIDIA,H200-SXM-141GBx8_TRT,llama2-70b-99.9,Server,summary,113.04,33071.46,397824116,937554527,169962807,181933574
NVIDIA,H200-SXM-141GBx8_TRT,llama2-70b-interactive-99.9,Server,summary,66.50,19424.25,119447699,363336225,33723979,35677921
NVIDIA,H200-SXM-141GBx8_TRT,llama3_1-405b,Offline,summary,0.863357,560.651,,,,
NVIDIA,H200-SXM-141GBx8_TRT,llama3_1-405b,Server,summary,0.45,291.37,1830994317,5636870909,53873926,100731357
NVIDIA,H200-SXM-141GBx8_TRT,mixtral-8x7b,Offline,summary,431.448,62629.6,,,,
NVIDIA,H200-SXM-141GBx8_TRT,mixtral-8x7b,Server,summary,427.58,61801.95,326020081,560482007,170391575,191519997
NVIDIA,H200-SXM-141GBx8_TRT_Triton,llama2-70b-99,Offline,summary,117.65,34300.2,,,,
NVIDIA,H200-SXM-141GBx8_TRT_Triton,llama2-70b-99.9,Server,summary,112.88,33024.68,364993232,748450832,184956143,198054543
NVIDIA,DGX-H100_H100-SXM-80GBx8_TRT,llama2-70b-99,Offline,summary,107.256,31306.8,,,,
NVIDIA,DGX-H100_H100-SXM-80GBx8_TRT,llama2-70b-99.9,Server,summary,106.21,31106.28,517082793,1450716485,139313889,141400436
NVIDIA,GB200-NVL72_GB200-186GB_aarch64x72_TRT_Triton,llama3_1-405b,Offline,summary,21.1733,13886.4,,,,
NVIDIA,GB200-NVL72_GB200-186GB_aarch64x72_TRT_Triton,llama3_1-405b,Server,summary,13.46,8850.10,1647855640,3307866478,109977196,133556783
Dell,XE9680_H200_SXM_141GBx8_TRT,llama2-70b-99,Server,detail,112.981,33051.9,413925999,960595850,171738705,183567316
Dell,XE9680_H200_SXM_141GBx8_TRT,llama2-70b-99.9,Offline,summary,119.44,34822.6,,,,
Dell,XE9680_H200_SXM_141GBx8_TRT,llama2-70b-interactive-99.9,Server,summary,66.50,19428.41,135746070,397062361,34711817,36869757
Dell,XE9680L_H200_SXM_141GBx8_TRT,llama2-70b-99.9,Offline,summary,119.236,34763.2,,,,
Dell,XE9680L_H200_SXM_141GBx8_TRT,llama2-70b-99,Server,summary,112.88,33023.50,461555240,1157661194,179237905,191059020
Dell,XE9680L_H200_SXM_141GBx8_TRT,mixtral-8x7b,Offline,summary,426.975,62042.2,,,,
Dell,XE9680L_H200_SXM_141GBx8_TRT,mixtral-8x7b,Server,summary,403.80,58972.61,247676336,416333512,128016408,143530570
Dell,XE9680_H100_SXM_80GBx8_TRT,llama2-70b-99,Offline,summary,106.952,31216.8,,,,
Dell,XE9680_H100_SXM_80GBx8_TRT,llama2-70b-99.9,Server,summary,105.52,30903.64,665403810,1938815289,142010301,146047086
Dell,vXE9680_H100_SXM_80GBx8_TRT,mixtral-8x7b,Offline,summary,354.321,51514.5,,,,
Dell,vXE9680_H100_SXM_80GBx8_TRT,mixtral-8x7b,Server,summary,347.72,50895.98,193995901,850919658,87616999,98008347
Dell,XE7745_L40Sx8_TRT,llama2-70b-99.9,Offline,summary,11.8941,3481.53,,,,
Dell,XE7745_L40Sx8_TRT,llama2-70b-99,Server,summary,10.91,3201.13,208442022,469200493,98736560,110277533
Google,B200-SXM-180GBx8_TRT,llama2-70b-99,Offline,summary,356.041,97124,,,,
Google,B200-SXM-180GBx8_TRT,llama2-70b-99,Server,summary,337.25,92338.70,226344197,401683989,120008121,129349581
Google,B200-SXM-180GBx8_TRT,llama3_1-405b,Offline,summary,2.28216,1498.56,,,,
Google,B200-SXM-180GBx8_TRT,llama3_1-405b,Server,summary,1.29,847.48,1898974067,4284108197,88984174,117526780
Google,B200-SXM-180GBx8_TRT,mixtral-8x7b,Offline,summary,839.895,121489,,,,
Google,B200-SXM-180GBx8_TRT,mixtral-8x7b,Server,summary,839.15,122411.02,203012113,310082660,107298435,119203340
Google,H200-SXM-141GBx8_TRT,llama2-70b-99.9,Offline,summary,117.115,34144.7,,,,
Google,H200-SXM-141GBx8_TRT,llama2-70b-99,Server,summary,107.30,31390.23,359165889,759755085,166726792,180414126
Google,H200-SXM-141GBx8_TRT,llama3_1-405b,Offline,summary,0.854214,552.592,,,,
Google,H200-SXM-141GBx8_TRT,llama3_1-405b,Server,summary,0.43,276.43,1824619424,5537263388,54851056,101919418
Google,H200-SXM-141GBx8_TRT,mixtral-8x7b,Offline,summary,424.455,61614.5,,,,
Google,H200-SXM-141GBx8_TRT,mixtral-8x7b,Server,summary,406.05,59100.08,279393957,462354001,146580151,163989037
AMD,8xMI325X_2xEPYC_9575F,llama2-70b-99.9,Offline,summary,114.262,33928.1,,,,
AMD,8xMI325X_2xEPYC_9575F,llama2-70b-99.9,Server,summary,103.83,30724.51,1060314084,1936541021,159983981,199404544
ASUSTeK,ESC_A8A_MI325X_256GBx8,llama2-70b-99.9,Offline,summary,113.04,33366.5,,,,
ASUSTeK,ESC_A8A_MI325X_256GBx8,llama2-70b-99.9,Server,summary,101.88,30086.52,1021782330,1848642327,142313193,179994549
ASUSTeK,H200-SXM-141GBx8_TRT,llama2-70b-99,Offline,summary,119.387,34807.1,,,,
ASUSTeK,H200-SXM-141GBx8_TRT,llama2-70b-99,Server,summary,112.92,33037.22,517285682,1364547385,184629908,193658172
ASUSTeK,H200-SXM-141GBx8_TRT,llama2-70b-interactive-99,Server,summary,66.48,19418.47,125729065,382354955,34384903,36565513
ASUSTeK,H200-SXM-141GBx8_TRT,llama3_1-405b,Offline,summary,0.863815,557.097,,,,
ASUSTeK,H200-SXM-141GBx8_TRT,llama3_1-405b,Server,summary,0.45,291.18,1854996316,5701027415,56681436,106364788
HPE,HPE_Cray_XD670_H200_SXM_141GBx8_TRT,llama2-70b-99,Offline,summary,115.872,33781.8,,,,
HPE,HPE_Cray_XD670_H200_SXM_141GBx8_TRT,llama2-70b-99,Server,summary,106.92,31281.09,319945483,666012302,155568684,168543199
HPE,HPE_Cray_XD670_H200_SXM_141GBx8_TRT,llama2-70b-interactive-99,Server,summary,66.43,19405.71,132308895,410022331,36843427,38394415
HPE,HPE_Cray_XD670_H100_SXM_80GBx8_TRT,llama2-70b-99,Offline,summary,105.871,31174.7,,,,
HPE,HPE_Cray_XD670_H100_SXM_80GBx8_TRT,llama2-70b-99,Server,summary,103.22,30498.87,459442408,1295043805,139911552,142883769
HPE,HPE_Cray_XD670_H100_SXM_80GBx8_HPE_VAST_TRT,llama2-70b-99,Offline,summary,106.096,31238,,,,
HPE,HPE_Cray_XD670_H100_SXM_80GBx8_HPE_VAST_TRT,llama2-70b-99,Server,summary,103.09,30457.70,429675647,1113300572,138898382,141661371
HPE,HPE_Cray_XD670_H100_SXM_80GBx8_HPE_VAST_TRT,llama2-70b-interactive-99,Server,summary,47.58,14008.54,126293074,428777032,28265098,30193776
HPE,HPE_ProLiant_DL380a_L40S_PCIe_48GBx8_TRT_9.0,llama2-70b-99.9,Offline,summary,12.4864,3655.89,,,,
HPE,HPE_ProLiant_DL380a_L40S_PCIe_48GBx8_TRT_9.0,llama2-70b-99,Server,summary,10.90,3181.65,226164543,525500719,103942581,115516335
Supermicro,SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT,llama2-70b-99.9,Offline,summary,362.121,98782.4,,,,
Supermicro,SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT,llama2-70b-99,Server,summary,356.58,97629.84,341116096,779682815,144573463,154791850
Supermicro,SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT,mixtral-8x7b,Offline,summary,890.236,128795,,,,
Supermicro,SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT,mixtral-8x7b,Server,summary,884.53,129046.90,238151548,434892318,122752815,137073671
Supermicro,SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT,llama3_1-405b,Offline,summary,2.34247,1538.17,,,,
Supermicro,SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT,llama3_1-405b,Server,summary,1.61,1057.52,2139986089,5361381339,105881289,134256975
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,llama2-70b-99.9,Offline,summary,357.115,97416.9,,,,
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,llama2-70b-99.9,Server,summary,356.29,97552.14,590624050,1905494266,151888454,160398084
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,llama2-70b-interactive-99,Server,summary,228.24,62265.73,86677236,213242615,36411259,38941920
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,llama3_1-405b,Offline,summary,2.31745,1521.74,,,,
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,llama3_1-405b,Server,summary,1.65,1080.31,2222258609,5384075536,110896082,142256642
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,mixtral-8x7b,Offline,summary,868.074,125534,,,,
Supermicro,SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT,mixtral-8x7b,Server,summary,883.93,128961.31,535277104,1287368193,149541869,159590011
Supermicro,SYS_821GE_TNHR_H200_SXM_141GBX8_TRT,llama2-70b-99.9,Offline,summary,118.774,34628.3,,,,
Supermicro,SYS_821GE_TNHR_H200_SXM_141GBX8_TRT,llama2-70b-99.9,Server,summary,112.98,33052.94,401636815,944798120,171263234,184062153
Supermicro,SYS_821GE_TNHR_H200_SXM_141GBX8_TRT,llama2-70b-interactive-99.9,Server,summary,66.52,19431.89,119325136,356261585,33773810,35863689
Supermicro,SYS_821GE_TNHR_H200_SXM_141GBX8_TRT,mixtral-8x7b,Offline,summary,426.867,61964.1,,,,
Supermicro,SYS_821GE_TNHR_H200_SXM_141GBX8_TRT,mixtral-8x7b,Server,summary,407.76,59627.25,263340222,438542174,137833939,155371272
Supermicro,AS_4125GS_TNHR2_LCC_H200_SXM_141GBX8_TRT,llama2-70b-99,Offline,summary,120.14,35026.8,,,,
Supermicro,AS_4125GS_TNHR2_LCC_H200_SXM_141GBX8_TRT,llama2-70b-99,Server,summary,112.95,33045.72,434864594,1098542198,175883605,187290787
Supermicro,8xMI325X_2xEPYC_9575F,llama2-70b-99.9,Offline,summary,112.029,33069.1,,,,
Supermicro,8xMI325X_2xEPYC_9575F,llama2-70b-99.9,Server,summary,97.39,28770.18,1025691121,1821773735,132677432,152115512
Lenovo,H200-SXM-141GBx8_TRT,llama2-70b-99,Offline,summary,122.004,35453,,,,
Lenovo,H200-SXM-141GBx8_TRT,llama2-70b-99,Server,summary,113.09,32976.40,361844131,758475233,163743619,173977395
Lenovo,H200-SXM-141GBx8_TRT,mixtral-8x7b,Offline,summary,437.083,63446.7,,,,
Lenovo,H200-SXM-141GBx8_TRT,mixtral-8x7b,Server,summary,419.52,61317.21,293740092,480807011,154276770,172343822
Lenovo,H200-SXM-141GBx8_TRT,llama2-70b-interactive-99,Server,summary,66.67,19492.49,118376224,347770508,33418785,35325079
Lenovo,SR675v3_H200_SXMx4_TRT,llama2-70b-99,Offline,summary,60.7523,17654.1,,,,
Lenovo,SR675v3_H200_SXMx4_TRT,llama2-70b-99.9,Server,summary,50.25,14652.78,268531760,533624179,142484183,155601966
Lenovo,SR675v3_H200_SXMx4_TRT,mixtral-8x7b,Offline,summary,217.023,31503.7,,,,
Lenovo,SR675v3_H200_SXMx4_TRT,mixtral-8x7b,Server,summary,200.22,29301.55,218930052,393479457,116894630,134211400
Lenovo,SR780a_V3_H200SXMx8,llama2-70b-99.9,Offline,summary,121.822,35400.2,,,,
Lenovo,SR780a_V3_H200SXMx8,llama2-70b-99.9,Server,summary,112.95,32934.70,365804105,800025647,164855021,175614949
Lenovo,SR780a_V3_H200SXMx8,llama2-70b-interactive-99.9,Server,summary,66.51,19448.12,116888233,348956788,33484749,35479594
Lenovo,SR780a_V3_H200SXMx8,mixtral-8x7b,Offline,summary,437.548,63514.7,,,,
Lenovo,SR780a_V3_H200SXMx8,mixtral-8x7b,Server,summary,419.63,61074.17,294436800,481411512,154449442,172461964
Cisco,C885A_M8_H200_SXM_141GBx8_TRT,llama2-70b-99,Offline,summary,116.897,34081.1,,,,
Cisco,C885A_M8_H200_SXM_141GBx8_TRT,llama2-70b-99,Server,summary,104.13,30420.23,276614407,500898818,141640565,157318227
Cisco,C885A_M8_H200_SXM_141GBx8_TRT,llama2-70b-interactive-99,Server,summary,66.53,19437.40,120668438,366888632,33601599,35631380
Cisco,C885A_M8_H200_SXM_141GBx8_TRT,llama3_1-405b,Offline,summary,0.868817,573.573,,,,
Cisco,C885A_M8_H200_SXM_141GBx8_TRT,llama3_1-405b,Server,summary,0.45,294.28,1815922412,5567366781,51984062,99156832
Cisco,C885A_H100_SXMx8_TRT,llama2-70b-99,Offline,summary,105.866,30899.7,,,,
Cisco,C885A_H100_SXMx8_TRT,llama2-70b-99.9,Server,summary,91.17,26599.38,534602033,1828417973,160996038,165593249
Cisco,C885A_H100_SXMx8_TRT,mixtral-8x7b,Offline,summary,362.446,52724.4,,,,
Cisco,C885A_H100_SXMx8_TRT,mixtral-8x7b,Server,summary,363.72,53299.32,468718056,1669154656,100073888,109139263
Oracle,H200-SXM-141GBx8_TRT,llama2-70b-99,Offline,summary,118.528,34556.6,,,,
Oracle,H200-SXM-141GBx8_TRT,llama2-70b-99.9,Server,summary,112.80,33000.97,402271159,951473371,171396502,182389637
Oracle,H200-SXM-141GBx8_TRT,mixtral-8x7b,Offline,summary,418.226,60708.6,,,,
Oracle,H200-SXM-141GBx8_TRT,mixtral-8x7b,Server,summary,404.69,59149.82,301455044,494271199,158134787,183115784
MangoBoost,32xMI300X_2xEPYC_9534,llama2-70b-99.9,Offline,summary,349.64,103182,,,,
MangoBoost,32xMI300X_2xEPYC_9534,llama2-70b-99,Server,summary,315.38,93039.93,1158195338,1798724915,115514746,148251246
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,llama2-70b-99.9,Offline,summary,119.671,34889.5,,,,
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,llama2-70b-99.9,Server,summary,112.98,33054.00,407747086,942312458,172481579,183139103
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,llama2-70b-interactive-99.9,Server,summary,69.27,20234.47,128172696,392696412,34696783,37016113
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,llama3_1-405b,Offline,summary,0.86489,558.526,,,,
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,llama3_1-405b,Server,summary,0.45,288.60,1844260200,5663640047,57940841,107911705
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,mixtral-8x7b,Offline,summary,429.781,62386.2,,,,
GigaComputing,G893-SD1_H200-SXM-141GBx8_TRT,mixtral-8x7b,Server,summary,413.66,60205.01,293835172,482424241,154410424,172631032
GigaComputing,G893-ZX1-AAX2,llama2-70b-99.9,Offline,summary,112.589,33251.3,,,,
GigaComputing,G893-ZX1-AAX2,llama2-70b-99,Server,summary,98.54,29094.35,966222489,1753416373,128041847,169899622
Quanta_Cloud_Technology,D74U_7U_H100_SXM_80GBx8_TRT,llama2-70b-99.9,Offline,summary,106.494,31083.6,,,,
Quanta_Cloud_Technology,D74U_7U_H100_SXM_80GBx8_TRT,llama2-70b-99,Server,summary,102.15,29916.03,406893073,968932071,139308796,143049087
Quanta_Cloud_Technology,D74U_7U_H100_SXM_80GBx8_TRT,llama3_1-405b,Offline,summary,0.683288,436.218,,,,
Quanta_Cloud_Technology,D74U_7U_H100_SXM_80GBx8_TRT,llama3_1-405b,Server,summary,0.42,261.98,1869628531,5717922626,60967160,111098951
Quanta_Cloud_Technology,D74U_7U_H100_SXM_80GBx8_TRT,mixtral-8x7b,Offline,summary,351.259,51048.7,,,,
Quanta_Cloud_Technology,D74U_7U_H100_SXM_80GBx8_TRT,mixtral-8x7b,Server,summary,347.91,50924.71,190282374,361708234,96099110,108149515
Quanta_Cloud_Technology,D54U_3U_H100_PCIe_80GBx4_TRT,llama2-70b-99,Offline,summary,24.0332,7013.17,,,,
Quanta_Cloud_Technology,D54U_3U_H100_PCIe_80GBx4_TRT,llama2-70b-99.9,Server,summary,16.82,4889.92,245992604,532604127,125187591,146717399
Lambda,H200-SXM-141GBx8_TRT,llama2-70b-99.9,Offline,summary,121.369,35385.1,,,,
Lambda,H200-SXM-141GBx8_TRT,llama2-70b-99.9,Server,summary,112.95,33045.32,376017119,860010814,165617580,176294945
Lambda,H200-SXM-141GBx8_TRT,llama2-70b-interactive-99,Server,summary,66.35,19381.04,123286540,362127783,34017936,36000984
Sustainable_Metal_Cloud,H200-SXM-141GBx8_TRT,llama2-70b-99,Offline,summary,117.524,34264,,,,
Sustainable_Metal_Cloud,H200-SXM-141GBx8_TRT,llama2-70b-99,Server,summary,112.89,33027.30,577548982,1700791702,187782617,197301136
Sustainable_Metal_Cloud,H200-SXM-141GBx8_TRT,mixtral-8x7b,Offline,summary,419.695,60923.3,,,,
Sustainable_Metal_Cloud,H200-SXM-141GBx8_TRT,mixtral-8x7b,Server,summary,391.80,57054.39,234476615,401780042,121834169,137427929
HPE,HPE_Cray_XD670_H100_SXM_80GBx8_TRT,llama2-70b-interactive-99,Server,summary,47.59,14004.93,125872660,426748987,28262064,30250538
Dell,XE9680_H100_SXM_80GBx8_TRT,llama3_1-405b,Offline,summary,0.614247,397.31,,,,
Dell,XE9680_H100_SXM_80GBx8_TRT,llama3_1-405b,Server,summary,0.43,277.12,1868812012,5730568726,62129868,111219291
"""

# ---------------------------------------------------------------- serving setup
# Each profile: engine, tp, pp, weight/kv dtype, engine batch (gpu_batch_size or
# max_num_seqs), runtime max batch, runtime max_num_tokens, trust, and a note that
# names the config class and the file it was read from (paths under closed/).
def P(tp, pp, w, kv, batch, rmb, mnt, trust, cfg, src, engine="trtllm", inst=None):
    return dict(tp=tp, pp=pp, w=w, kv=kv, batch=batch, rmb=rmb, mnt=mnt,
                trust=trust, cfg=cfg, src=src, engine=engine, inst=inst)

G = "Google/configs"
NVC = "NVIDIA-copyright TensorRT-LLM config copied in"
# NVIDIA reference classes (NVIDIA's own configs/ folder is not in the index; the
# same NVIDIA classes are read from partners' unmodified copies).
H200_L2_OFF = P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high",
                "class H200_SXM_141GBx8 (HopperOfflineGPUBaseConfig TP1 PP1, precision fp8, kv_cache_dtype fp8, gpu_batch_size 2048, max_num_tokens 1536)",
                NVC + " closed/Google/configs/llama2-70b/Offline/__init__.py and closed/Cisco/configs/llama2-70b/Offline/__init__.py")
H200_L2_SRV = P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high",
                "class H200_SXM_141GBx8 (HopperServerGPUBaseConfig TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)",
                NVC + " closed/Oracle/configs/llama2-70b/Server/__init__.py")
B200_L2_OFF = P(1, 1, "nvfp4", "fp8", 2048, 2048, 3584, "high",
                "class B200_SXM_180GBx8 (BlackwellOfflineGPUBaseConfig TP1 PP1, precision fp4, kv_cache_dtype fp8, gpu_batch_size 2048, max_num_tokens 3584)",
                NVC + " closed/Google/configs/llama2-70b/Offline/__init__.py")
B200_L2_SRV = P(1, 1, "nvfp4", "fp8", 2048, 2048, 3584, "high",
                "class B200_SXM_180GBx8 (BlackwellServerGPUBaseConfig TP1 PP1, fp4, kv fp8, gpu_batch_size 2048, max_num_tokens 3584)",
                NVC + " closed/Oracle/configs/llama2-70b/Server/__init__.py")
H100_L2_OFF = P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "high",
                "class H100_SXM_80GB_PP2x4 (TP1 PP2 -> 4 instances, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)",
                NVC + " closed/Cisco/configs/llama2-70b/Offline/__init__.py")
H100_L2_SRV = P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "medium",
                "class H100_SXM_80GB_PP2x4 (TP1 PP2, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024); a TP2x4 variant (batch 2048) is also registered for this system and which one ran is not stated - the PP2 entry is registered first (the default pick)",
                NVC + " closed/Oracle/configs/llama2-70b/Server/__init__.py")
H200_INT = P(1, 1, "fp8", "fp8", 512, 512, 256, "high",
             "class H200_SXM_141GBx8 (llama2-70b-interactive Server: TP1 PP1, fp8, kv fp8, gpu_batch_size 512, max_num_tokens 256)",
             NVC + " closed/GigaComputing/configs/llama2-70b-interactive/Server/__init__.py")
B200_INT = P(1, 1, "nvfp4", "fp8", 768, 768, 768, "medium",
             "class B200_SXM_180GBx8 (llama2-70b-interactive Server: TP1 PP1, precision fp4, gpu_batch_size 768, max_num_tokens 768); kv dtype not set in the class read - fp8 assumed as in every other llama2-70b Blackwell config",
             NVC + " closed/GigaComputing/configs/llama2-70b-interactive/Server/__init__.py")
H200_MIX_OFF = P(1, 1, "fp8", "fp8", 3072, 3072, 9216, "high",
                 "class H200_SXM_141GBx8 (mixtral Offline: TP1 PP1, precision fp8 with effective_bits 8.75 i.e. mostly FP8 with some 16-bit layers, kv fp8, gpu_batch_size 3072, runtime max_num_tokens 9216, build 16384)",
                 NVC + " closed/Google/configs/mixtral-8x7b/Offline/__init__.py")
H200_MIX_SRV = P(1, 1, "fp8", "fp8", 3072, 3072, 8192, "high",
                 "class H200_SXM_141GBx8 (mixtral Server: TP1 PP1, fp8 effective_bits 8.75, kv fp8, gpu_batch_size 3072, max_num_tokens 8192)",
                 NVC + " closed/Google/configs/mixtral-8x7b/Server/__init__.py")
B200_MIX_OFF = P(1, 1, "fp8", "fp8", 6144, 6144, 14336, "medium",
                 "class B200_SXM_180GBx8 (mixtral Offline: TP1 PP1, precision fp4 with AutoQuantize effective_bits 7.25 = a mix of NVFP4 and FP8 layers; recorded as fp8, the closer byte size; kv fp8, gpu_batch_size 6144, runtime max_num_tokens 14336)",
                 NVC + " closed/Google/configs/mixtral-8x7b/Offline/__init__.py")
B200_MIX_SRV = P(1, 1, "fp8", "fp8", 6144, 6144, 10240, "medium",
                 "class B200_SXM_180GBx8 (mixtral Server: TP1 PP1, fp4 with effective_bits 7.25 = mixed NVFP4/FP8 layers, recorded as fp8; kv fp8, gpu_batch_size 6144, max_num_tokens 10240)",
                 NVC + " closed/Google/configs/mixtral-8x7b/Server/__init__.py")
H200_405_OFF = P(4, 2, "fp8", "fp8", 512, 512, 1536, "high",
                 "class H200_SXM_141GBx8_TP4PP2 (TP4 PP2 -> 1 instance of 8 GPUs, fp8, kv fp8, gpu_batch_size 512, runtime max_num_tokens 1536)",
                 NVC + " closed/Cisco/configs/llama3_1-405b/Offline/__init__.py and closed/Google/configs/llama3_1-405b/Offline/__init__.py")
H200_405_SRV = P(8, 1, "fp8", "fp8", 512, 64, 2560, "high",
                 "class H200_SXM_141GBx8_TP8PP1 (TP8 PP1 -> 1 instance, fp8, kv fp8, gpu_batch_size 512 at build, runtime max_batch_size 64, runtime max_num_tokens 2560)",
                 NVC + " closed/Oracle/configs/llama3_1-405b/Server/__init__.py")
B200_405_OFF = P(2, 2, "nvfp4", "fp8", 128, 128, 1536, "high",
                 "class B200_SXM_180GB_TP2PP2x2 (TP2 PP2 -> 2 instances, precision fp4, kv fp8, gpu_batch_size 128, max_num_tokens 1536)",
                 NVC + " closed/Google/configs/llama3_1-405b/Offline/__init__.py")
B200_405_SRV = P(2, 2, "nvfp4", "fp8", 128, 128, 1024, "high",
                 "class B200_SXM_180GB_TP2PP2x2 (TP2 PP2 -> 2 instances, fp4, kv fp8, gpu_batch_size 128, max_num_tokens 1024)",
                 NVC + " closed/Oracle/configs/llama3_1-405b/Server/__init__.py")
GB200_405_OFF = P(2, 2, "nvfp4", "fp8", 128, 128, 1536, "high",
                  "class GB200_NVL_186GB_ARM_TP2PP2x18_Triton (TP2 PP2 x 18 instances = 72 GPUs, Triton, fp4, kv fp8, gpu_batch_size 128, max_num_tokens 1536; expected qps 1.17 x 18 = 21.06 matches the log's target_qps)",
                  NVC + " closed/Cisco/configs/llama3_1-405b/Offline/__init__.py")
GB200_405_SRV = P(2, 2, "nvfp4", "fp8", 128, 128, 1024, "high",
                  "class GB200_NVL_186GB_ARM_TP2PP2x18_Triton (TP2 PP2 x 18 instances, Triton, fp4, kv fp8, gpu_batch_size 128, max_num_tokens 1024; target qps 0.75 x 18 = 13.5 matches the log)",
                  NVC + " closed/Oracle/configs/llama3_1-405b/Server/__init__.py")


def med(p, why):
    q = dict(p)
    q["trust"] = "medium"
    q["cfg"] = p["cfg"] + "; " + why
    return q


def with_(p, **kw):
    q = dict(p)
    q.update(kw)
    return q


NVNAME = "system name identical to NVIDIA's, so NVIDIA's registered class applies"
AMD_RECIPE = P(1, 1, "fp8", "fp8", 0, 0, 0, "high",
               "AMD vLLM (ROCm) harness, data_parallel_size=8 (TP1 x 8 engines); OCP FP8-e4m3 weights/activations and FP8 KV cache quantized with AMD Quark; batch settings in harness yaml not in the index",
               "closed/AMD/measurements/8xMI325X_2xEPYC_9575F/llama2-70b-99*/{Offline,Server}/README.md and closed/AMD/documentation/calibration.md",
               engine="vllm")
AMD_PARTNER = med(AMD_RECIPE, "partner MI325X submission; its own harness files are not in the index - AMD's vLLM recipe (TP1 x 8, FP8/FP8) assumed")
T = {}
def put(sub, sysn, base, scen, prof):
    T[(sub, sysn, base, scen)] = prof

# NVIDIA
for s in ["B200-SXM-180GBx8_TRT", "B200-SXM-180GBx1_TRT"]:
    x = s.split("GBx")[1][0]
    put("NVIDIA", s, "l2", "Offline", with_(B200_L2_OFF, cfg=B200_L2_OFF["cfg"].replace("B200_SXM_180GBx8", "B200_SXM_180GBx" + x)))
    put("NVIDIA", s, "l2", "Server", with_(B200_L2_SRV, cfg=B200_L2_SRV["cfg"].replace("B200_SXM_180GBx8", "B200_SXM_180GBx" + x)))
s = "B200-SXM-180GBx8_TRT"
put("NVIDIA", s, "int", "Server", B200_INT); put("NVIDIA", s, "405", "Offline", B200_405_OFF)
put("NVIDIA", s, "405", "Server", B200_405_SRV); put("NVIDIA", s, "mix", "Offline", B200_MIX_OFF)
put("NVIDIA", s, "mix", "Server", B200_MIX_SRV)
s = "H200-SXM-141GBx8_TRT"
put("NVIDIA", s, "l2", "Offline", H200_L2_OFF); put("NVIDIA", s, "l2", "Server", H200_L2_SRV)
put("NVIDIA", s, "int", "Server", H200_INT); put("NVIDIA", s, "405", "Offline", H200_405_OFF)
put("NVIDIA", s, "405", "Server", H200_405_SRV); put("NVIDIA", s, "mix", "Offline", H200_MIX_OFF)
put("NVIDIA", s, "mix", "Server", H200_MIX_SRV)
s = "H200-SXM-141GBx8_TRT_Triton"
put("NVIDIA", s, "l2", "Offline", with_(H200_L2_OFF, cfg="class H200_SXM_141GBx8_Triton (Triton server front end over TRT-LLM; TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)"))
put("NVIDIA", s, "l2", "Server", with_(H200_L2_SRV, cfg="class H200_SXM_141GBx8_Triton (Triton server over TRT-LLM, 8 Triton servers, TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)"))
s = "DGX-H100_H100-SXM-80GBx8_TRT"
put("NVIDIA", s, "l2", "Offline", H100_L2_OFF); put("NVIDIA", s, "l2", "Server", H100_L2_SRV)
s = "GB200-NVL72_GB200-186GB_aarch64x72_TRT_Triton"
put("NVIDIA", s, "405", "Offline", GB200_405_OFF); put("NVIDIA", s, "405", "Server", GB200_405_SRV)

# Google (its own copies of NVIDIA's configs)
def gsrc(p, f):
    return with_(p, src="closed/Google/configs/" + f)
for s, l2o, l2s, o405, s405, mo, ms in [
        ("B200-SXM-180GBx8_TRT", B200_L2_OFF, B200_L2_SRV, B200_405_OFF, B200_405_SRV, B200_MIX_OFF, B200_MIX_SRV),
        ("H200-SXM-141GBx8_TRT", H200_L2_OFF, H200_L2_SRV, H200_405_OFF, H200_405_SRV, H200_MIX_OFF, H200_MIX_SRV)]:
    put("Google", s, "l2", "Offline", gsrc(l2o, "llama2-70b/Offline/__init__.py"))
    put("Google", s, "l2", "Server", med(gsrc(l2s, "llama2-70b/Server/__init__.py (not read; class as in NVIDIA's Server config copied by Oracle)"), "Google's own Server file not read (Google lowered the target qps by 0.95 in its other configs)"))
    put("Google", s, "405", "Offline", gsrc(o405, "llama3_1-405b/Offline/__init__.py"))
    put("Google", s, "405", "Server", gsrc(s405, "llama3_1-405b/Server/__init__.py"))
    put("Google", s, "mix", "Offline", gsrc(mo, "mixtral-8x7b/Offline/__init__.py"))
    put("Google", s, "mix", "Server", gsrc(ms, "mixtral-8x7b/Server/__init__.py"))

# Dell
D = "closed/Dell/configs/"
put("Dell", "XE9680_H200_SXM_141GBx8_TRT", "l2", "Offline", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class XE9680_H200_SXM_141GBX8 (TP1 PP1 explicit, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)", D + "llama2-70b/Offline/custom.py"))
put("Dell", "XE9680_H200_SXM_141GBx8_TRT", "l2", "Server", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class XE9680_H200_SXM_141GBX8 (TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)", D + "llama2-70b/Server/custom.py"))
put("Dell", "XE9680_H200_SXM_141GBx8_TRT", "int", "Server", P(1, 1, "fp8", "fp8", 512, 512, 256, "high", "class XE9680_H200_SXM_141GBX8 (interactive: TP1 PP1, fp8, kv fp8, gpu_batch_size 512, max_num_tokens 256)", D + "llama2-70b-interactive/Server/custom.py"))
put("Dell", "XE9680L_H200_SXM_141GBx8_TRT", "l2", "Offline", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class XE9680L_H200_SXM_141GBX8 (TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536); liquid-cooled H200 SXM", D + "llama2-70b/Offline/custom.py"))
put("Dell", "XE9680L_H200_SXM_141GBx8_TRT", "l2", "Server", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class XE9680L_H200_SXM_141GBX8 (HopperServerGPUBaseConfig TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)", D + "llama2-70b/Server/custom.py"))
put("Dell", "XE9680L_H200_SXM_141GBx8_TRT", "mix", "Offline", P(1, 1, "fp8", "fp8", 3072, 3072, 16384, "high", "class XE9680L_H200_SXM_141GBX8 (mixtral: Hopper base TP1 PP1, fp8 effective_bits 8.75, kv fp8, gpu_batch_size 3072, runtime max_num_tokens 16384)", D + "mixtral-8x7b/Offline/custom.py"))
put("Dell", "XE9680L_H200_SXM_141GBx8_TRT", "mix", "Server", P(1, 1, "fp8", "fp8", 3072, 3072, 8192, "high", "class XE9680L_H200_SXM_141GBX8 (mixtral Server: TP1 PP1, fp8, kv fp8, gpu_batch_size 3072, max_num_tokens 8192)", D + "mixtral-8x7b/Server/custom.py"))
put("Dell", "XE9680_H100_SXM_80GBx8_TRT", "l2", "Offline", P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "high", "class XE9680_H100_SXM_80GBX8 (TP1 PP2 -> 4 instances, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)", D + "llama2-70b/Offline/custom.py"))
put("Dell", "XE9680_H100_SXM_80GBx8_TRT", "l2", "Server", P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "high", "class XE9680_H100_SXM_80GBX8 (TP1 PP2, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)", D + "llama2-70b/Server/custom.py"))
put("Dell", "XE9680_H100_SXM_80GBx8_TRT", "405", "Offline", P(8, 1, "fp8", "fp8", 512, 512, 1536, "high", "class XE9680_H100_SXM_80GBx8 (TP8 PP1 -> 1 instance, fp8, kv fp8, gpu_batch_size 512, runtime max_num_tokens 1536)", D + "llama3_1-405b/Offline/custom.py"))
put("Dell", "XE9680_H100_SXM_80GBx8_TRT", "405", "Server", P(4, 2, "fp8", "fp8", 128, 64, 2560, "high", "class XE9680_H100_SXM_80GBX8 (TP4 PP2 -> 1 instance, fp8, kv fp8, gpu_batch_size 128, runtime max_batch_size 64, max_num_tokens 2560)", D + "llama3_1-405b/Server/custom.py"))
for sc in ["Offline", "Server"]:
    put("Dell", "vXE9680_H100_SXM_80GBx8_TRT", "mix", sc, P(1, 1, "fp8", "fp8", 0, 0, 0, "medium", "virtualized XE9680 (8x H100 SXM); no config class for this system is in the index - NVIDIA's Hopper mixtral base (TP1 PP1, fp8, kv fp8) assumed, batch not published", D + "mixtral-8x7b/" + sc + "/custom.py (no vXE9680 class)"))
put("Dell", "XE7745_L40Sx8_TRT", "l2", "Offline", P(2, 1, "fp8", "fp8", 1024, 1024, 2048, "medium", "class XE7745_L40SX8 (TP2 PP1 -> 4 instances, precision fp8, gpu_batch_size 1024); kv dtype not set - fp8 assumed (base config enables use_fp8_context_fmha); max_num_tokens 2048 from the llama2-70b base config", D + "llama2-70b/Offline/custom.py"))
put("Dell", "XE7745_L40Sx8_TRT", "l2", "Server", P(2, 1, "fp8", "fp8", 1024, 1024, 2048, "medium", "class XE7745_L40SX8 (TP2 PP1, fp8, gpu_batch_size 1024); kv dtype not set - fp8 assumed; max_num_tokens 2048 from base", D + "llama2-70b/Server/custom.py"))

# AMD and MI3xx partners
for sc in ["Offline", "Server"]:
    put("AMD", "8xMI325X_2xEPYC_9575F", "l2", sc, AMD_RECIPE)
    put("ASUSTeK", "ESC_A8A_MI325X_256GBx8", "l2", sc, AMD_PARTNER)
    put("Supermicro", "8xMI325X_2xEPYC_9575F", "l2", sc, AMD_PARTNER)
    put("GigaComputing", "G893-ZX1-AAX2", "l2", sc, AMD_PARTNER)
    put("MangoBoost", "32xMI300X_2xEPYC_9534", "l2", sc, P(1, 1, "fp8", "fp16", 768, 768, 0, "medium",
        "MangoBoost LLMBoost 0.5.2 over vLLM (ROCm 6.3), 4 nodes x 8 MI300X, server.py -tp 1 -dp 8 per node (32 engines), max_num_seqs 768" + (", gpu_batch_size 48 per dispatch, batcher_threshold 0.2" if sc == "Server" else "") + "; FP8-quantized llama2-70b (README); kv_cache_dtype not passed (default 'auto' = model dtype) - recorded fp16",
        "closed/MangoBoost/code/llama2-70b-99*/server_%s.sh and closed/MangoBoost/README.md" % ("online" if sc == "Server" else "offline"),
        engine="vllm"))

# partners that keep NVIDIA's system names
for sub in ["ASUSTeK", "Lenovo", "Oracle", "Lambda", "Sustainable_Metal_Cloud"]:
    s = "H200-SXM-141GBx8_TRT"
    note = NVNAME + " (partner config folder read only for Server custom files where present)"
    put(sub, s, "l2", "Offline", with_(H200_L2_OFF, cfg=H200_L2_OFF["cfg"] + "; " + note))
    put(sub, s, "l2", "Server", with_(H200_L2_SRV, cfg=H200_L2_SRV["cfg"] + "; " + note))
    put(sub, s, "int", "Server", with_(H200_INT, cfg=H200_INT["cfg"] + "; " + note))
    put(sub, s, "405", "Offline", with_(H200_405_OFF, cfg=H200_405_OFF["cfg"] + "; " + note))
    put(sub, s, "405", "Server", with_(H200_405_SRV, cfg=H200_405_SRV["cfg"] + "; " + note))
    put(sub, s, "mix", "Offline", with_(H200_MIX_OFF, cfg=H200_MIX_OFF["cfg"] + "; " + note))
    put(sub, s, "mix", "Server", with_(H200_MIX_SRV, cfg=H200_MIX_SRV["cfg"] + "; " + note))
put("Oracle", "H200-SXM-141GBx8_TRT", "mix", "Server", med(H200_MIX_SRV, "Oracle ships a modified mixtral Server __init__.py (an .ORIG copy sits beside it) that was not read"))
put("Sustainable_Metal_Cloud", "H200-SXM-141GBx8_TRT", "mix", "Server", med(H200_MIX_SRV, "SMC ships its own mixtral Server __init__.py that was not read"))

# Supermicro (generated custom classes inherit NVIDIA's)
SM = "closed/Supermicro/configs/"
for s in ["SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT", "SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT"]:
    put("Supermicro", s, "l2", "Offline", with_(B200_L2_OFF, cfg="custom class inherits B200_SXM_180GBx8: " + B200_L2_OFF["cfg"], src=SM + "llama2-70b/Offline/custom.py + NVIDIA class"))
    put("Supermicro", s, "l2", "Server", with_(B200_L2_SRV, cfg="custom class inherits B200_SXM_180GBx8: " + B200_L2_SRV["cfg"], src=SM + "llama2-70b/Server/custom.py + NVIDIA class"))
    put("Supermicro", s, "int", "Server", with_(B200_INT, cfg="custom class inherits B200_SXM_180GBx8: " + B200_INT["cfg"], src=SM + "llama2-70b-interactive/Server/custom.py + NVIDIA class"))
    put("Supermicro", s, "405", "Offline", with_(B200_405_OFF, cfg="custom class inherits B200_SXM_180GB_TP2PP2x2: " + B200_405_OFF["cfg"], src=SM + "llama3_1-405b/Offline/custom.py + NVIDIA class"))
    put("Supermicro", s, "405", "Server", with_(B200_405_SRV, cfg="custom class inherits B200_SXM_180GB_TP2PP2x2 (target qps raised to ~1.6-1.66): " + B200_405_SRV["cfg"], src=SM + "llama3_1-405b/Server/custom.py + NVIDIA class"))
    put("Supermicro", s, "mix", "Offline", with_(B200_MIX_OFF, cfg="custom class inherits B200_SXM_180GBx8: " + B200_MIX_OFF["cfg"], src=SM + "mixtral-8x7b/Offline/custom.py + NVIDIA class"))
    put("Supermicro", s, "mix", "Server", with_(B200_MIX_SRV, cfg="custom class inherits B200_SXM_180GBx8: " + B200_MIX_SRV["cfg"], src=SM + "mixtral-8x7b/Server/custom.py + NVIDIA class"))
for s in ["SYS_821GE_TNHR_H200_SXM_141GBX8_TRT", "AS_4125GS_TNHR2_LCC_H200_SXM_141GBX8_TRT"]:
    put("Supermicro", s, "l2", "Offline", with_(H200_L2_OFF, cfg="custom class inherits H200_SXM_141GBx8: " + H200_L2_OFF["cfg"], src=SM + "llama2-70b/Offline/custom.py + NVIDIA class"))
    put("Supermicro", s, "l2", "Server", with_(H200_L2_SRV, cfg="custom class inherits H200_SXM_141GBx8: " + H200_L2_SRV["cfg"], src=SM + "llama2-70b/Server/custom.py + NVIDIA class"))
    put("Supermicro", s, "int", "Server", with_(H200_INT, cfg="custom class inherits H200_SXM_141GBx8: " + H200_INT["cfg"], src=SM + "llama2-70b-interactive/Server/custom.py + NVIDIA class"))
    put("Supermicro", s, "mix", "Offline", with_(H200_MIX_OFF, cfg="custom class inherits H200_SXM_141GBx8: " + H200_MIX_OFF["cfg"], src=SM + "mixtral-8x7b/Offline/custom.py + NVIDIA class"))
    put("Supermicro", s, "mix", "Server", with_(H200_MIX_SRV, mnt=16384, cfg="custom class inherits H200_SXM_141GBx8 with max_num_tokens 16384 (TP1 PP1, fp8, kv fp8, gpu_batch_size 3072)", src=SM + "mixtral-8x7b/Server/custom.py + NVIDIA class"))

# Lenovo custom systems
L = "closed/Lenovo/configs/"
s = "SR675v3_H200_SXMx4_TRT"
put("Lenovo", s, "l2", "Offline", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class SR675V3_H200_SXMX4 (Hopper base TP1 PP1 -> 4 instances, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)", L + "llama2-70b/Offline/custom.py"))
put("Lenovo", s, "l2", "Server", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class SR675V3_H200_SXMX4 (TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)", L + "llama2-70b/Server/custom.py"))
put("Lenovo", s, "mix", "Offline", P(1, 1, "fp8", "fp8", 3072, 3072, 9216, "high", "class SR675V3_H200_SXMX4 (mixtral: TP1, fp8, kv fp8, gpu_batch_size 3072, runtime max_num_tokens 9216)", L + "mixtral-8x7b/Offline/custom.py"))
put("Lenovo", s, "mix", "Server", P(1, 1, "fp8", "fp8", 1200, 1200, 16384, "high", "class SR675V3_H200_SXMX4 (mixtral Server: TP1, fp8, kv fp8, gpu_batch_size 1200, max_num_tokens 16384)", L + "mixtral-8x7b/Server/custom.py"))
s = "SR780a_V3_H200SXMx8"
why = "no class for this system name was found in Lenovo's custom.py files read; NVIDIA's H200x8 class assumed"
put("Lenovo", s, "l2", "Offline", med(H200_L2_OFF, why)); put("Lenovo", s, "l2", "Server", med(H200_L2_SRV, why))
put("Lenovo", s, "int", "Server", med(H200_INT, why)); put("Lenovo", s, "mix", "Offline", med(H200_MIX_OFF, why))
put("Lenovo", s, "mix", "Server", med(H200_MIX_SRV, why))

# Cisco
C = "closed/Cisco/configs/"
s = "C885A_M8_H200_SXM_141GBx8_TRT"
put("Cisco", s, "l2", "Offline", P(1, 1, "fp8", "fp8", 2048, 2048, 1536, "high", "class C885A_M8_H200_SXM_141GBx8 (HopperOfflineGPUBaseConfig TP1 PP1, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1536)", C + "llama2-70b/Offline/__init__.py"))
put("Cisco", s, "l2", "Server", med(H200_L2_SRV, "Cisco's Server class for C885A not read; NVIDIA H200 Server class assumed"))
put("Cisco", s, "int", "Server", med(H200_INT, "Cisco's interactive class not read; NVIDIA H200 class assumed"))
put("Cisco", s, "405", "Offline", P(4, 2, "fp8", "fp8", 512, 512, 1536, "high", "class C885A_M8_H200_SXM_141GBx8_TP4PP2 (TP4 PP2 -> 1 instance, fp8, kv fp8, gpu_batch_size 512, runtime max_num_tokens 1536)", C + "llama3_1-405b/Offline/__init__.py"))
put("Cisco", s, "405", "Server", med(H200_405_SRV, "Cisco's 405b Server class not read; NVIDIA TP8 class assumed"))
s = "C885A_H100_SXMx8_TRT"
put("Cisco", s, "l2", "Offline", P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "high", "class C885A_H100_SXMx8_PP2x1 (TP1 PP2 -> 4 instances, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)", C + "llama2-70b/Offline/__init__.py"))
put("Cisco", s, "l2", "Server", med(H100_L2_SRV, "Cisco's Server class not read; PP2 as in its Offline class assumed"))
for sc in ["Offline", "Server"]:
    put("Cisco", s, "mix", sc, P(1, 1, "fp8", "fp8", 0, 0, 0, "medium", "Cisco's C885A mixtral class not read; NVIDIA Hopper mixtral base (TP1 PP1, fp8 effective_bits 8.75, kv fp8) assumed, batch not read", C + "mixtral-8x7b/%s/__init__.py (not read)" % sc))

# HPE
HP = "closed/HPE/configs/"
s = "HPE_Cray_XD670_H200_SXM_141GBx8_TRT"
put("HPE", s, "l2", "Offline", P(1, 1, "fp8", "fp8", 806, 806, 1536, "high", "class HPE_CRAY_XD670_H200_SXM_141GBX8 (inherits H200_SXM_141GBx8: TP1 PP1, fp8, kv fp8, max_num_tokens 1536; gpu_batch_size 806)", HP + "llama2-70b/Offline/custom.py"))
put("HPE", s, "l2", "Server", P(1, 1, "fp8", "fp8", 896, 896, 1536, "high", "class HPE_CRAY_XD670_H200_SXM_141GBX8 (inherits H200_SXM_141GBx8: TP1 PP1, fp8, kv fp8, max_num_tokens 1536; gpu_batch_size 896)", HP + "llama2-70b/Server/custom.py"))
put("HPE", s, "int", "Server", P(1, 1, "fp8", "fp8", 512, 512, 256, "high", "class HPE_CRAY_XD670_H200_SXM_141GBX8 (interactive: TP1 PP1, fp8, kv fp8, gpu_batch_size 512, max_num_tokens 256)", HP + "llama2-70b-interactive/Server/custom.py"))
for s, tr in [("HPE_Cray_XD670_H100_SXM_80GBx8_TRT", "high"), ("HPE_Cray_XD670_H100_SXM_80GBx8_HPE_VAST_TRT", "medium")]:
    extra = "" if tr == "high" else "; VAST-storage variant of the XD670 H100 system - its own class not found, the XD670 H100 class is assumed"
    put("HPE", s, "l2", "Offline", P(1, 2, "fp8", "fp8", 1024, 1024, 1024, tr, "class HPE_CRAY_XD670_H100_SXM_80GBX8 (inherits H100_SXM_80GB_PP2x4: TP1 PP2 -> 4 instances, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)" + extra, HP + "llama2-70b/Offline/custom.py"))
    put("HPE", s, "l2", "Server", P(2, 1, "fp8", "fp8", 2048, 2048, 2048, tr, "class HPE_CRAY_XD670_H100_SXM_80GBX8 (inherits H100_SXM_80GB_TP2x4: TP2 PP1 -> 4 instances, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 2048 from the llama2-70b base)" + extra, HP + "llama2-70b/Server/custom.py"))
    put("HPE", s, "int", "Server", P(2, 1, "fp8", "fp8", 512, 512, 256, tr, "class HPE_CRAY_XD670_H100_SXM_80GBX8 (interactive: inherits the H200x8 interactive class with TP2 PP1 -> 4 instances, fp8, kv fp8, gpu_batch_size 512, max_num_tokens 256)" + extra, HP + "llama2-70b-interactive/Server/custom.py"))
s = "HPE_ProLiant_DL380a_L40S_PCIe_48GBx8_TRT_9.0"
put("HPE", s, "l2", "Server", P(2, 1, "fp8", "fp8", 512, 512, 2048, "medium", "class HPE_PROLIANT_DL380A_L40S_PCIE_48GBX8 (TP2 PP1 -> 4 instances, fp8, gpu_batch_size 512, runtime max_batch_size 512, batch_scheduler_policy no_evict; kv dtype not set - fp8 assumed; max_num_tokens 2048 from base); the log's SUT name (llama2-70b-Server-SUT-LoadGen) differs from NVIDIA's harness and the '_TRT_9.0' suffix suggests an older TRT-LLM stack - engine version not confirmed", HP + "llama2-70b/Server/custom.py"))
put("HPE", s, "l2", "Offline", P(2, 1, "fp8", "fp8", 0, 0, 0, "medium", "no Offline class for the L40S x8 system found (only commented-out x4 classes); TP2 and fp8 assumed as in its Server class; batch not published; SUT name suggests an older TRT-LLM harness", HP + "llama2-70b/Offline/custom.py"))

# GigaComputing (own system name, NVIDIA-derived configs; only some files in the index)
GG = "closed/GigaComputing/configs/"
s = "G893-SD1_H200-SXM-141GBx8_TRT"
why = "Giga's class for its system name not read; NVIDIA H200x8 class assumed"
put("GigaComputing", s, "l2", "Offline", med(H200_L2_OFF, why)); put("GigaComputing", s, "l2", "Server", med(H200_L2_SRV, why))
put("GigaComputing", s, "int", "Server", with_(H200_INT, cfg=H200_INT["cfg"] + "; Giga's copy sets target qps 70 = the log's target_qps", src=GG + "llama2-70b-interactive/Server/__init__.py"))
put("GigaComputing", s, "405", "Offline", med(H200_405_OFF, why)); put("GigaComputing", s, "405", "Server", med(H200_405_SRV, why))
put("GigaComputing", s, "mix", "Offline", med(H200_MIX_OFF, why)); put("GigaComputing", s, "mix", "Server", med(H200_MIX_SRV, why))

# QCT
Q = "closed/Quanta_Cloud_Technology/configs/"
s = "D74U_7U_H100_SXM_80GBx8_TRT"
put("Quanta_Cloud_Technology", s, "l2", "Offline", P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "high", "class D74U_7U_H100_SXM_80GBx8 (TP1 PP2 -> 4 instances, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)", Q + "llama2-70b/Offline/__init__.py"))
put("Quanta_Cloud_Technology", s, "l2", "Server", P(1, 2, "fp8", "fp8", 1024, 1024, 1024, "high", "class D74U_7U_H100_SXM_80GBx8 (TP1 PP2, fp8, kv fp8, gpu_batch_size 1024, max_num_tokens 1024)", Q + "llama2-70b/Server/__init__.py"))
put("Quanta_Cloud_Technology", s, "405", "Offline", P(8, 1, "fp8", "fp8", 256, 256, 1536, "high", "class D74U_7U_H100_SXM_80GBx8 (TP8 PP1 -> 1 instance, fp8, kv fp8, gpu_batch_size 256, runtime max_num_tokens 1536)", Q + "llama3_1-405b/Offline/__init__.py"))
put("Quanta_Cloud_Technology", s, "405", "Server", P(8, 1, "fp8", "fp8", 256, 64, 2560, "high", "class D74U_7U_H100_SXM_80GBx8 (TP8 PP1, fp8, kv fp8, gpu_batch_size 256, runtime max_batch_size 64, max_num_tokens 2560)", Q + "llama3_1-405b/Server/__init__.py"))
put("Quanta_Cloud_Technology", s, "mix", "Offline", P(1, 1, "fp8", "fp8", 896, 896, 8192, "high", "class D74U_7U_H100_SXM_80GBx8 (Hopper mixtral base TP1 PP1, fp8 effective_bits 8.75, kv fp8, gpu_batch_size 896, max_num_tokens 8192)", Q + "mixtral-8x7b/Offline/__init__.py"))
put("Quanta_Cloud_Technology", s, "mix", "Server", P(1, 1, "fp8", "fp8", 896, 896, 0, "high", "class D74U_7U_H100_SXM_80GBx8 (mixtral Server: TP1 PP1, fp8, kv fp8, gpu_batch_size 896; max_num_tokens not set in the class)", Q + "mixtral-8x7b/Server/__init__.py"))
s = "D54U_3U_H100_PCIe_80GBx4_TRT"
put("Quanta_Cloud_Technology", s, "l2", "Offline", P(1, 2, "fp8", "fp8", 2048, 2048, 1024, "high", "class D54U_3U_H100_PCIe_80GBx4 (TP1 PP2 -> 2 instances, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 1024)", Q + "llama2-70b/Offline/__init__.py"))
put("Quanta_Cloud_Technology", s, "l2", "Server", P(2, 1, "fp8", "fp8", 2048, 2048, 2048, "high", "class D54U_3U_H100_PCIe_80GBx4 (Server: TP2 PP1 -> 2 instances, fp8, kv fp8, gpu_batch_size 2048, max_num_tokens 2048 from base)", Q + "llama2-70b/Server/__init__.py"))
CONFIG = T

# ---------------------------------------------------------------- systems
# system folder -> (catalog hardware, accelerators in the system, description)
SYSTEMS = {
    "B200-SXM-180GBx8_TRT": ("b200", 8, "8x B200-SXM-180GB (TGP 1000 W per NVIDIA's system description)"),
    "B200-SXM-180GBx1_TRT": ("b200", 1, "1x B200-SXM-180GB"),
    "H200-SXM-141GBx8_TRT": ("h200", 8, "8x H200-SXM-141GB"),
    "H200-SXM-141GBx8_TRT_Triton": ("h200", 8, "8x H200-SXM-141GB, Triton"),
    "DGX-H100_H100-SXM-80GBx8_TRT": ("h100-sxm", 8, "DGX H100, 8x H100-SXM-80GB"),
    "GB200-NVL72_GB200-186GB_aarch64x72_TRT_Triton": ("gb200", 72, "GB200 NVL72, 72x GB200-186GB, Triton"),
    "XE9680_H200_SXM_141GBx8_TRT": ("h200", 8, "Dell XE9680, 8x H200-SXM-141GB"),
    "XE9680L_H200_SXM_141GBx8_TRT": ("h200", 8, "Dell XE9680L (liquid-cooled), 8x H200-SXM-141GB"),
    "XE9680_H100_SXM_80GBx8_TRT": ("h100-sxm", 8, "Dell XE9680, 8x H100-SXM-80GB"),
    "vXE9680_H100_SXM_80GBx8_TRT": ("h100-sxm", 8, "Dell XE9680 virtualized, 8x H100-SXM-80GB"),
    "XE7745_L40Sx8_TRT": ("l40s", 8, "Dell XE7745, 8x L40S"),
    "8xMI325X_2xEPYC_9575F": ("mi325x", 8, "8x MI325X 256GB"),
    "ESC_A8A_MI325X_256GBx8": ("mi325x", 8, "ASUS ESC A8A, 8x MI325X 256GB"),
    "G893-ZX1-AAX2": ("mi325x", 8, "Giga G893-ZX1, 8x MI325X 256GB (system json)"),
    "32xMI300X_2xEPYC_9534": ("mi300x", 32, "4 nodes x 8 MI300X 192GB"),
    "HPE_Cray_XD670_H200_SXM_141GBx8_TRT": ("h200", 8, "HPE Cray XD670, 8x H200-SXM-141GB"),
    "HPE_Cray_XD670_H100_SXM_80GBx8_TRT": ("h100-sxm", 8, "HPE Cray XD670, 8x H100-SXM-80GB"),
    "HPE_Cray_XD670_H100_SXM_80GBx8_HPE_VAST_TRT": ("h100-sxm", 8, "HPE Cray XD670 (VAST storage), 8x H100-SXM-80GB"),
    "HPE_ProLiant_DL380a_L40S_PCIe_48GBx8_TRT_9.0": ("l40s", 8, "HPE DL380a, 8x L40S"),
    "SYS_A21GE_NBRT_B200_SXM_180GBx8_TRT": ("b200", 8, "Supermicro SYS-A21GE-NBRT, 8x B200-SXM-180GB"),
    "SYS_421GE_NBRT_LCC_B200_SXM_180GBx8_TRT": ("b200", 8, "Supermicro SYS-421GE-NBRT-LCC (liquid), 8x B200-SXM-180GB"),
    "SYS_821GE_TNHR_H200_SXM_141GBX8_TRT": ("h200", 8, "Supermicro SYS-821GE-TNHR, 8x H200-SXM-141GB"),
    "AS_4125GS_TNHR2_LCC_H200_SXM_141GBX8_TRT": ("h200", 8, "Supermicro AS-4125GS-TNHR2-LCC (liquid), 8x H200-SXM-141GB, hw_notes 'H200 TGP 700W'"),
    "SR675v3_H200_SXMx4_TRT": ("h200", 4, "Lenovo SR675 V3, 4x H200-SXM-141GB"),
    "SR780a_V3_H200SXMx8": ("h200", 8, "Lenovo SR780a V3 (liquid), 8x H200-SXM-141GB"),
    "C885A_M8_H200_SXM_141GBx8_TRT": ("h200", 8, "Cisco C885A M8, 8x H200-SXM-141GB"),
    "C885A_H100_SXMx8_TRT": ("h100-sxm", 8, "Cisco C885A, 8x H100-SXM-80GB"),
    "G893-SD1_H200-SXM-141GBx8_TRT": ("h200", 8, "Giga G893-SD1, 8x H200-SXM-141GB"),
    "D74U_7U_H100_SXM_80GBx8_TRT": ("h100-sxm", 8, "QCT D74U-7U, 8x H100-SXM-80GB"),
    "D54U_3U_H100_PCIe_80GBx4_TRT": ("h100-pcie", 4, "QCT D54U-3U, 4x H100-PCIe-80GB"),
}
HW_FAMILY = {"b200": "b200", "gb200": "b200", "h200": "h200", "h100-sxm": "h100", "h100-pcie": "h100",
             "l40s": "l40s", "mi300x": "mi300x", "mi325x": "mi300x"}
MODELS = {"l2": ("llama-2-70b", "llama-2", "mlperf-llama2-70b"),
          "int": ("llama-2-70b", "llama-2", "mlperf-llama2-70b"),
          "mix": ("mixtral-8x7b", "mixtral", "mlperf-mixtral-8x7b"),
          "405": ("llama-3.1-405b", "llama-3.1", "mlperf-llama3.1-405b")}


def bench_base(b):
    if "interactive" in b:
        return "int"
    if b.startswith("llama2"):
        return "l2"
    if b.startswith("mixtral"):
        return "mix"
    return "405"


HEADER = ("id,model,hardware,devices,tp,pp,ep,attn_dp,redundant_experts,comm_overlap,pool,weight_dtype,kv_dtype,isl,osl,"
          "batch_per_device,runtime_max_batch,runtime_max_num_tokens,metric,measured,unit,isl_assumed,source_group,"
          "hardware_family,model_family,reserved,fitted,trust,assumptions,source,engine,workload").split(",")

ORDER = ["NVIDIA", "Google", "AMD", "ASUSTeK", "Cisco", "Dell", "GigaComputing", "HPE", "Lambda", "Lenovo",
         "MangoBoost", "Oracle", "Quanta_Cloud_Technology", "Supermicro", "Sustainable_Metal_Cloud"]
BORDER = {"l2": 0, "int": 1, "mix": 2, "405": 3}


def build_rows():
    data = list(csv.DictReader(io.StringIO(EXTRACT.strip())))
    data.sort(key=lambda r: (ORDER.index(r["submitter"]), r["system"], BORDER[bench_base(r["bench"])],
                             r["scenario"] != "Offline"))
    out = []
    for r in data:
        base = bench_base(r["bench"])
        prof = CONFIG[(r["submitter"], r["system"], base, r["scenario"])]
        hw, devices, sysdesc = SYSTEMS[r["system"]]
        model, mfam, workload = MODELS[base]
        tp, pp = prof["tp"], prof["pp"]
        inst = prof["inst"] or devices // (tp * pp)
        assert inst * tp * pp == devices, (r, prof)
        tok, smp = float(r["tok_s"]), float(r["samples_s"])
        osl = tok / smp
        per_dev = tok / devices
        fname = "mlperf_log_summary.txt" if r["file"] == "summary" else "mlperf_log_detail.txt"
        src = "%s closed/%s/results/%s/%s/%s/performance/run_1/%s" % (REPO, r["submitter"], r["system"], r["bench"], r["scenario"], fname)
        bname = r["bench"]
        notes = []
        if base in ("l2", "int") and bname.endswith("99.9"):
            notes.append("-99.9 result used (no -99 %s summary in the index; the -99.9 configs read inherit the -99 class/recipe, same precision)" % r["scenario"])
            if r["submitter"] == "NVIDIA" and r["system"] == "B200-SXM-180GBx8_TRT":
                notes.append("summary.html lists identical -99 and -99.9 results (98858 tok/s Offline)")
        elif base in ("l2", "int"):
            notes.append("-99 result")
        if r["file"] == "detail":
            notes.append("numbers read from the result_* keys at the end of mlperf_log_detail.txt (summary file not in the index)")
        if base == "int":
            notes.append("llama2-70b-interactive benchmark (Server scenario with p99 TTFT <= 450 ms and p99 TPOT <= 40 ms)")
        a = ["MLPerf v5.0 closed %s %s (%s) %s %s" % (r["submitter"], r["system"], sysdesc, bname, r["scenario"]),
             "%.1f output tok/s over %d GPUs (%.1f/GPU)" % (tok, devices, per_dev),
             "%.3f samples/s -> mean OSL %.1f" % (smp, osl)
             + (" (samples/s printed with 2 decimals: OSL uncertain by ~%.1f%%)" % (0.005 / smp * 100) if (r["scenario"] == "Server" and smp < 10) else ""),
             "ISL 0 placeholder with isl_assumed True (mean input of the dataset is not in the summary; filled later)",
             "weights %s, KV %s" % (prof["w"], prof["kv"]),
             ("engine %s; " % prof["engine"]) + prof["cfg"] + " [" + prof["src"] + "]",
             "%d instance(s) of TP%d x PP%d" % (inst, tp, pp)]
        a += notes
        if pp > 1 and r["scenario"] == "Server":
            notes.append("with pipeline parallelism TRT-LLM keeps one micro-batch per stage in flight, so in-flight sequences may exceed gpu_batch_size")
            a.append(notes[-1])
        if r["scenario"] == "Offline":
            metric, measured, unit = "offline_tok_s_per_device", round(per_dev, 2), "tok/s"
            bpd = prof["batch"]
            if bpd:
                a.append("batch_per_device = engine gpu_batch_size/max_num_seqs of one instance (%d)" % bpd)
            else:
                a.append("batch not published in the files read (0)")
        else:
            tpot = float(r["tpot_mean_ns"]) / 1e9
            conc = tok / inst * tpot
            metric, measured, unit = "server_tpot_at_concurrency", round(tpot, 5), "s"
            bpd = int(round(conc))
            a.append("mean TPOT %.1f ms (p99 %.1f ms); concurrency per instance = tok/s per instance x mean TPOT = %.1f/%d x %.4f = %d"
                     % (tpot * 1e3, float(r["tpot_p99_ns"]) / 1e6, tok, inst, tpot, bpd))
            a.append("TTFT mean %.0f ms, p99 %.0f ms" % (float(r["ttft_mean_ns"]) / 1e6, float(r["ttft_p99_ns"]) / 1e6))
        trust = prof["trust"]
        out.append({
            "model": model, "hardware": hw, "devices": devices, "tp": tp, "pp": pp, "ep": 1, "attn_dp": 0,
            "redundant_experts": 0, "comm_overlap": 0, "pool": "colocated", "weight_dtype": prof["w"],
            "kv_dtype": prof["kv"], "isl": 0, "osl": int(round(osl)), "batch_per_device": bpd,
            "runtime_max_batch": prof["rmb"], "runtime_max_num_tokens": prof["mnt"], "metric": metric,
            "measured": measured, "unit": unit, "isl_assumed": True, "source_group": "mlperf-v5.0",
            "hardware_family": HW_FAMILY[hw], "model_family": mfam, "reserved": False, "fitted": True,
            "trust": trust, "assumptions": "; ".join(a), "source": src, "engine": prof["engine"],
            "workload": workload})
    for i, row in enumerate(out, 1):
        row["id"] = "M5-%03d" % i
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    rows = build_rows()
    with open(os.path.join(here, "mlperf_v5.0.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        for row in rows:
            w.writerow(row)
    print("wrote %d rows" % len(rows))


if __name__ == "__main__":
    main()
