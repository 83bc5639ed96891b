"""The measurement corpus: published serving results as steady-state forecasts and bounds.

``measurements/corpus.csv`` holds the public corpus of ``shared/reference/
measurements-public.csv`` (MLPerf Inference v4.1 and the TensorRT-LLM performance tables;
every row with its source path, its assumptions and a trust grade) and the columns the
library adds: the layout fields ``redundant_experts``, ``comm_overlap`` and ``pool``, the
group each row belongs to for cross-validation (``source_group``,
``hardware_family``, ``model_family``), whether its mean input length is assumed
(``isl_assumed``), the runtime's scheduler limits where the row runs at max load
(``runtime_max_batch``, ``runtime_max_num_tokens``: 0 when not applicable), ``reserved``
(True for results kept for independent validation: never fitted to, never tested against)
and two optional formats, empty where the weight format says it all: ``expert_dtype``, the
routed experts' storage where it differs from ``weight_dtype`` (gpt-oss's released
checkpoint: BF16 dense layers, MXFP4 experts), ``compute_dtype``, the format the matrix
products run at where the row states it (TensorRT-LLM runs that checkpoint W4A8, MXFP4 x
MXFP8, on Blackwell: at the FP8 rate, not the FP4 one; W4A16 on Hopper), and the optional
integer ``requests``, the size of a finite benchmark run where the source states it
(trtllm-bench's dataset of ``$num_requests``: 3,000 requests at 1,000/1,000, 1,000 at
20,000/2,000; 0 or absent: not a finite run, or not stated). Each column's kind, range and
allowed words are declared once, in :data:`tokenomics.data.kinds.CORPUS`, and checked row by
row by :func:`tokenomics.data.schema.check_record` (the schema page lists them).

Notes
-----
Every row is read as continuous batching in steady state
(:func:`tokenomics.serving.steady.steady_state`) on one replica of ``tp`` devices:

=============================  =============================================================
metric                         forecast
=============================  =============================================================
offline / fixed ISL-OSL        output tokens/s per device at max load: concurrency
tok/s per device               :math:`B = \\min(B_\\mathrm{fit}, B_\\mathrm{run},
                               \\lfloor N_\\mathrm{run} / (1 + I/O) \\rfloor, R)`, the memory
                               fit (90% of device memory) capped by the runtime's batch limit,
                               by its tokens-per-step budget (a step carries :math:`B` decodes
                               and :math:`B I / O` prompt tokens) and by the run's
                               :math:`R` requests (``requests``); a published engine batch
                               replaces :math:`B_\\mathrm{run}`
server TPOT at concurrency     mean TPOT at the published concurrency (Little's law on the
                               published throughput and TPOT)
TTFT                           time to first token at the published (light) concurrency
prefill tok/s per device       prompt tokens computed per second per device of a prefill
                               pool, its batch the memory fit (bound-only rows)
=============================  =============================================================

A row may run in one pool of a disaggregated deployment (``pool``: a decode pool's steps
carry no prefill, :func:`~tokenomics.serving.steady.steady_state` with ``pool="decode"``),
hold redundant experts (``redundant_experts``) and overlap communication with compute
(``comm_overlap``, as published). Rows with ``fitted`` False check the bound only.

The **bound** of a row is what no implementation of the same work can beat: every step at
its perfect-overlap lower bound :math:`\\max(\\sum F / P, \\sum Q / \\beta)` with
communication fully hidden, the concurrency as large as the whole device memory allows (or
the published one, if larger), and an assumed mean input length replaced by 1 token.

References
----------
.. [1] MLCommons, "MLPerf Inference v4.1 results", github.com/mlcommons/inference_results_v4.1.
.. [2] NVIDIA, TensorRT-LLM ``docs/source/performance/perf-overview.md`` (v0.14, v0.17,
   v1.0 revisions).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from tokenomics.core.dtypes import dtype
from tokenomics.core.errors import CatalogError, TokenomicsError
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.deployment import Deployment
from tokenomics.data.kinds import CORPUS
from tokenomics.data.lengths import RequestLengths, request_lengths
from tokenomics.data.schema import check_record
from tokenomics.data.specs import ROOFLINE, Efficiency
from tokenomics.physics.engine import operator_times
from tokenomics.physics.memory import max_batch, weight_bytes_per_device
from tokenomics.physics.operators import mixed_costs
from tokenomics.physics.step import prefill
from tokenomics.serving.steady import pipeline_microbatches, steady_state, steady_state_over

#: Corpus metric -> what it measures: a speed (higher is faster) or a time.
METRICS = {m: "time" if m in ("server_tpot_at_concurrency", "ttft_s") else "speed"
           for m in CORPUS.get("metric").words}
#: Where a row's steps run: a colocated replica, or one pool of a disaggregated deployment.
POOLS = CORPUS.get("pool").words
#: The groupings of the grouped cross-validation: the source family (MLPerf, the TensorRT-LLM
#: tables, ML.ENERGY, InferenceMAX...), the serving stack (vendor and engine), the hardware
#: family and the model family.
GROUPINGS = ("source_family", "stack", "hardware_family", "model_family")
#: Fraction of the memory the weights leave free that the forecast gives the KV cache
#: (TensorRT-LLM's ``kv_cache_free_gpu_mem_fraction``, 0.90-0.95 in the published runs).
MEMORY_FRACTION = 0.9
_COMPUTE = {"fp8": "fp8", "nvfp4": "nvfp4", "bf16": "bf16", "fp16": "fp16", "int8": "int8"}


@dataclass(frozen=True)
class CorpusRow:
    """One published measurement of the corpus (columns as in the module notes)."""

    id: str
    model: str
    hardware: str
    devices: int
    tp: int
    pp: int
    ep: int
    attn_dp: int
    redundant_experts: int
    comm_overlap: float
    pool: str
    weight_dtype: str
    kv_dtype: str
    isl: int
    osl: int
    batch_per_device: int
    runtime_max_batch: int
    runtime_max_num_tokens: int
    metric: str
    measured: float
    unit: str
    isl_assumed: bool
    source_family: str
    engine: str
    workload: str
    source_group: str
    hardware_family: str
    model_family: str
    reserved: bool
    fitted: bool
    trust: str
    assumptions: str
    source: str
    expert_dtype: str = ""
    compute_dtype: str = ""
    requests: int = 0

    @property
    def stack(self) -> str:
        """The serving stack, ``"<vendor>-<engine>"`` (e.g. ``"nvidia-trtllm"``,
        ``"amd-vllm"``): :func:`stack_of` of the row's hardware and engine."""
        return stack_of(self.hardware, self.engine)

    @property
    def lengths(self) -> Any:
        """The row's length distribution: its workload's
        (:func:`~tokenomics.data.lengths.request_lengths`), else every request at the
        row's ``isl`` / ``osl``."""
        if self.workload:
            return replace_lengths(request_lengths(self.workload), self)
        return RequestLengths.fixed(self.isl, self.osl)

    @property
    def kind(self) -> str:
        """``"speed"`` (token/s per device) or ``"time"`` (seconds)."""
        return METRICS[self.metric]

    def deployment(self, efficiency: Efficiency = ROOFLINE,
                   memory_fraction: float = MEMORY_FRACTION) -> Deployment:
        """One replica as the row ran it: ``tp`` devices, its formats, attention DP over
        ``tp`` when ``attn_dp`` is set, computing at the weight format.

        ``memory_fraction`` is the share of the memory the weights leave free that the KV
        cache may take, as TensorRT-LLM sizes it: the deployment's usable fraction of the
        whole device is :math:`(W + f (M - W)) / M` for weights :math:`W` per device and
        capacity :math:`M`. 1 gives the whole device.
        """
        d = Deployment(self.model, self.hardware, tp=self.tp, pp=self.pp, ep=self.ep,
                       dp_attention=self.tp if self.attn_dp else 1,
                       weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype,
                       expert_dtype=self.expert_dtype or None,
                       compute_dtype=self.compute_dtype or compute_format(
                           self.hardware, self.expert_dtype or self.weight_dtype),
                       efficiency=efficiency, usable_memory_fraction=1.0,
                       redundant_experts=self.redundant_experts,
                       comm_overlap=self.comm_overlap, engine=self.engine,
                       mlp_data_parallel=bool(self.attn_dp and self.tp > 1
                                              and self.engine in MLP_DP_ENGINES),
                       ep_exchange=ep_exchange_of(self))
        if memory_fraction >= 1.0:
            return d
        cap = d.hardware.mem_usable_bytes
        w = min(weight_bytes_per_device(d), cap)
        return d.with_(usable_memory_fraction=(w + memory_fraction * (cap - w)) / cap)


def stack_of(hardware: Any, engine: str) -> str:
    """``"<vendor>-<engine>"`` of a catalog hardware (id or entry) and an engine name."""
    from tokenomics.data.catalog import hardware as _hw

    return f"{_hw(hardware).vendor.lower()}-{engine}"


def compute_format(hardware: str, weight_dtype: str) -> str:
    """The format a row's matrix products run at: the weight format where the chip has a
    peak for it, else BF16 (weight-only quantisation: MXFP4 gpt-oss on Hopper runs W4A16)."""
    from tokenomics.data.catalog import hardware as _hw

    fmt = _COMPUTE.get(weight_dtype, weight_dtype)
    return fmt if dtype(fmt).peak in _hw(hardware).peak_flop_per_s else "bf16"


def replace_lengths(d: RequestLengths, row: CorpusRow) -> RequestLengths:
    """A workload's distribution with its output lengths scaled to the row's published mean
    output (MLPerf logs give each run's tokens per sample; a run's model and settings move
    it a few per cent from the dataset's reference)."""
    o = [max(x * row.osl / d.output_mean, 1.0) for x in d.output_nodes]
    return RequestLengths(d.name, d.input_nodes, d.input_weights, tuple(o),
                              d.output_weights, d.source)


def _parse(raw: dict[str, str | None], path: Path, where: str) -> CorpusRow:
    """One CSV record as a :class:`CorpusRow`, checked against
    :data:`tokenomics.data.kinds.CORPUS` (each column's kind, range and words, the formats,
    the workload and the engine); errors name the file, row and field."""
    vals = check_record(CORPUS, raw, path, where)
    return CorpusRow(**{k: v for k, v in vals.items() if v is not None})


def corpus_path() -> Path:
    """The bundled corpus, ``measurements/corpus.csv``."""
    return catalog_dir("measurements") / "corpus.csv"


def load_corpus(path: str | Path | None = None, *, include_reserved: bool = False
                ) -> list[CorpusRow]:
    """Read and validate the measurement corpus.

    Parameters
    ----------
    path : str or Path, optional
        Default: the bundled ``measurements/corpus.csv``.
    include_reserved : bool
        Also return rows held for independent validation (default False: they are neither
        fitted to nor tested against).

    Returns
    -------
    list of CorpusRow

    Raises
    ------
    CatalogError
        Naming the file, the row and the field of a missing or malformed value, or of a
        duplicate id.
    """
    p = Path(path) if path else corpus_path()
    try:
        with p.open(newline="", encoding="utf-8") as fh:
            records = list(csv.DictReader(fh))
    except OSError as exc:
        raise CatalogError(f"{p}: cannot read the corpus ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{p}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except csv.Error as exc:
        raise CatalogError(f"{p}: not valid CSV ({exc})") from None
    if not records:
        # an empty file (or a header alone) would fit nothing and fail later, deep inside
        raise CatalogError(f"{p}: the corpus holds no rows; give a header line and at least "
                           f"one measurement row (see measurements/corpus.csv)")
    rows, seen = [], set()
    for i, raw in enumerate(records):
        row = _parse(raw, p, f"row {i + 2} ({raw.get('id', '?')})")
        if row.id in seen:
            raise CatalogError(f"{p}: row {i + 2}: field id: {row.id!r} appears twice")
        seen.add(row.id)
        if include_reserved or not row.reserved:
            rows.append(row)
    return rows


#: ``runtime_max_batch`` of a row whose engine caps trtllm-bench chose itself
#: (:func:`trtllm_bench_caps`).
TRTLLM_BENCH = -1


def trtllm_bench_caps(requests: float, isl: int, osl: int, pp: int) -> tuple[int, int]:
    """The (max batch size, max tokens per step) trtllm-bench picks for a run [-], [token].

    ``trtllm-bench throughput`` without explicit limits sets them from the requests that fit
    the KV cache at ``isl + osl`` tokens each (here :func:`tokenomics.max_batch`'s count):
    :math:`b = \\min(R, 4096)/pp`, :math:`n = \\min(b(1 + I/O), 32768)`, each rounded up
    optimistically (batch: to 32 below 256 with a floor of 64, to 128 below 1,024, else to
    256; tokens: to 256 below 4,096 with a floor of 2,048, to 512 below 8,192, else to
    1,024). Facts from ``tensorrt_llm/bench/build/tuning.py`` (``calc_engine_setting``,
    ``finetune_setting``; NVIDIA/TensorRT-LLM), used for the performance tables' rows
    (``runtime_max_batch = -1``).
    """
    raw_bs = min(requests, 4096) / pp
    raw_tok = min(raw_bs * (1 + isl / osl), 32768)
    bs = _tiered_ceil(raw_bs, 64, ((256, 32), (1024, 128), (math.inf, 256)))
    tok = _tiered_ceil(raw_tok, 2048, ((4096, 256), (8192, 512), (math.inf, 1024)))
    return bs, tok


def _tiered_ceil(x: float, floor: int, tiers: tuple[tuple[float, int], ...]) -> int:
    """``x`` rounded up to the multiple of the first tier whose limit it is below, at least
    ``floor`` (the floor binds in the first tier only: the later tiers' multiples exceed it)."""
    q = next(q for limit, q in tiers if x < limit)
    return int(max(floor, q * math.ceil(x / q)))


def runtime_caps(row: CorpusRow, dep: Deployment) -> tuple[int, int]:
    """The engine's (max batch size, max tokens per step) of a row, 0 where none applies
    (the row's columns, or :func:`trtllm_bench_caps` where ``runtime_max_batch`` is -1)."""
    if row.runtime_max_batch == TRTLLM_BENCH:
        return trtllm_bench_caps(float(max_batch(dep, row.isl + row.osl)), row.isl, row.osl,
                                 row.pp)
    return max(row.runtime_max_batch, 0), max(row.runtime_max_num_tokens, 0)


#: Engines that run the dense FFN layers and shared experts data-parallel whenever attention
#: runs data-parallel (``Deployment.mlp_data_parallel``): TensorRT-LLM's model code sets
#: ``mlp_tp_size = 1`` / ``overridden_tp_size=1`` for them under ``enable_attention_dp``
#: (tensorrt_llm/_torch/models/modeling_deepseekv3.py, modeling_llama.py).
MLP_DP_ENGINES = ("trtllm",)

#: Engines whose expert-parallel all-to-all needs NVLink between the devices: without it,
#: attention-DP MoE layers all-gather every rank's tokens and reduce-scatter the outputs
#: (TensorRT-LLM: ``select_alltoall_method_type`` returns ``NotEnabled`` unless
#: ``MnnvlMemory.supports_mnnvl()``, which asks that every NVLink be up; the fused MoE then
#: takes its ``allgather`` / ``reducescatter`` path; tensorrt_llm/_torch/modules/fused_moe,
#: tensorrt_llm/_mnnvl_utils.py).
NVLINK_ALLTOALL_ENGINES = ("trtllm",)


def ep_exchange_of(row: CorpusRow) -> str:
    """The row's :attr:`~tokenomics.data.deployment.Deployment.ep_exchange`: ``"allgather"``
    where an engine of :data:`NVLINK_ALLTOALL_ENGINES` runs attention-DP experts over
    ``ep > 1`` devices whose scale-up link is PCIe (no NVLink), else ``"alltoall"``."""
    from tokenomics.data.catalog import hardware as _hw

    if (row.engine in NVLINK_ALLTOALL_ENGINES and row.attn_dp and row.ep > 1 and row.tp > 1
            and _hw(row.hardware).scale_up_name.lower().startswith("pcie")):
        return "allgather"
    return "alltoall"


#: Engines whose scheduler reserves a sequence's whole final length when it admits it
#: (TensorRT-LLM's default capacity policy ``GUARANTEED_NO_EVICT``); the others allocate
#: KV blocks as a sequence grows and preempt when the cache runs out (vLLM, SGLang).
RESERVING_ENGINES = ("trtllm",)


def held_tokens(row: CorpusRow) -> int:
    """Tokens of KV memory a sequence takes from the cache at the engine's admission [token].

    Engines that reserve (:data:`RESERVING_ENGINES`) hold :math:`I + O` for each admitted
    sequence; paged engines that allocate on demand hold a slot's mean context over its
    life, :math:`I + O/2` (length-biased over a workload's distribution:
    :attr:`~tokenomics.data.lengths.RequestLengths.slot_context_mean`), rounded up.
    """
    if row.engine in RESERVING_ENGINES:
        return row.isl + row.osl
    return int(math.ceil(row.lengths.slot_context_mean))


def concurrency(row: CorpusRow, dep: Deployment) -> int:
    """The concurrency the forecast runs the row at (module notes) [sequences]."""
    if row.kind == "time":
        return max(int(row.batch_per_device), 1)
    fit = int(max_batch(dep, held_tokens(row)))
    if fit < 1:
        raise TokenomicsError(f"{row.id}: {row.model} does not fit {row.tp} x {row.hardware}")
    caps = [fit]
    if row.batch_per_device > 0:
        caps.append(row.batch_per_device)
    ranks = row.tp if row.attn_dp else 1      # the runtime's caps are per attention-DP rank
    max_b, max_tok = runtime_caps(row, dep)
    stages = row.pp if row.runtime_max_batch == TRTLLM_BENCH else 1   # per micro-batch
    if max_b > 0:
        caps.append(max_b * ranks * stages)
    if max_tok > 0:
        caps.append(int(stages * ranks * max_tok / (1.0 + row.isl / row.osl)))
    if row.requests > 0:               # a finite run cannot hold more than it was given
        caps.append(row.requests)
    return max(min(caps), 1)


def chunk_tokens(row: CorpusRow, dep: Deployment | None = None) -> int | None:
    """Prefill chunk of a row's prompts [token]: the runtime's tokens-per-step budget when a
    prompt is longer than it (the scheduler cannot run it whole), else None (unchunked)."""
    if row.runtime_max_batch == TRTLLM_BENCH:
        budget = runtime_caps(row, dep if dep is not None else row.deployment())[1]
    else:
        budget = row.runtime_max_num_tokens
    return budget if 0 < budget < row.isl else None


def forecast(row: CorpusRow, efficiency: Efficiency) -> float:
    """The row's measured quantity forecast under an efficiency model (its unit).

    Token/s per device for speed rows, seconds for TPOT and TTFT rows, from
    :func:`~tokenomics.serving.steady.steady_state` at :func:`concurrency`, prompts chunked
    at :func:`chunk_tokens`; a row that runs a dataset (``workload``) through
    :func:`~tokenomics.serving.steady.steady_state_over` over its length distribution.
    """
    dep = row.deployment(efficiency)
    if row.pool == "prefill":      # prompts of a prefill pool at its memory-limited batch
        return float(prefill(dep, row.isl, concurrency(row, dep)).tokens_per_s_per_device)
    pool = "decode" if row.pool == "decode" else "colocated"
    if row.workload:               # over the dataset's lengths, not at their means
        budget = runtime_caps(row, dep)[1]
        r = steady_state_over(dep, concurrency(row, dep), row.lengths,
                              chunk_tokens=budget if budget > 0 else None, pool=pool)
    else:
        r = steady_state(dep, concurrency(row, dep), row.isl, row.osl,
                         chunk_tokens=chunk_tokens(row, dep), pool=pool)
    if row.metric == "server_tpot_at_concurrency":
        return float(r.tpot_s)
    if row.metric == "ttft_s":
        return float(r.ttft_s)
    return float(r.output_tokens_per_s_per_device)


def bound(row: CorpusRow) -> float:
    """What no implementation can beat on the row (module notes), in its unit.

    Speed rows: an upper bound [token/s per device]; time rows: a lower bound [s].
    """
    dep = row.deployment(ROOFLINE, memory_fraction=1.0)
    isl = 1 if row.isl_assumed else row.isl
    o = row.osl
    if row.kind == "speed":
        b = max(int(max_batch(dep.with_(workspace_bytes=0.0), isl + o)),
                row.batch_per_device, 1)
    else:
        b = max(int(row.batch_per_device), 1)
    a = b / o
    dec = b - a
    if row.metric == "ttft_s":    # the request's own prefill, alone
        dec, a = 0.0, 1.0
    elif row.pool == "decode":    # a decode pool's steps carry no prefill
        dec, a = float(b), 0.0
    elif row.pool == "prefill":   # b prompts, no decodes; throughput counts prompt tokens
        dec, a = 0.0, float(b)
    m, _ = pipeline_microbatches(dep, b)     # a pipeline's micro-batches
    t = operator_times(dep, mixed_costs(dep, dec / m, isl + o / 2.0, isl, 0.0, a / m)
                       ).lower_bound_s
    t = float(t)
    per_step = b * isl if row.pool == "prefill" else b
    return per_step / t / dep.n_devices if row.kind == "speed" else t


def speed_ratio(row: CorpusRow, value: float) -> float:
    """A forecast (or bound) over the measurement, as speeds: > 1 means faster than measured.

    For time rows the ratio of speeds is measured time / forecast time.
    """
    return value / row.measured if row.kind == "speed" else row.measured / value


def corpus_frame(path: str | Path | None = None) -> pd.DataFrame:
    """The corpus as a DataFrame, one row per measurement, with each row's bound.

    Returns
    -------
    pandas.DataFrame
        The corpus columns, ``bound`` (the row's unit), ``measured_over_bound`` as speeds
        (<= 1 when the physics is right: a row above the bound is a bug in the model, the
        catalog or the row).
    """
    recs = []
    for r in load_corpus(path):
        b = bound(r)
        rec = {f.name: getattr(r, f.name) for f in fields(CorpusRow)}
        rec.update(bound=b, measured_over_bound=1.0 / speed_ratio(r, b))
        recs.append(rec)
    return pd.DataFrame(recs)
