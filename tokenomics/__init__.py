"""tokenomics: sourced roofline, memory and token-economics numbers for LLM inference.

Quick tour::

    import tokenomics as tk
    d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", kv_dtype="fp8")
    tk.decode(d, batch=[1, 8, 64], context_tokens=8192).to_frame()
    tk.prefill(d, prompt_tokens=8192).ttft_s
    tk.max_batch(d, context_tokens=131072)
    tk.ridge_point(tk.hardware("mi355x"), "fp4")

Every function documents its units; catalogs carry a source for every number.
"""

from __future__ import annotations

from .calibration import calibration_report, efficiency_presets, forecast_interval
from .catalog import hardware, load_catalog, model, sources
from .disagg import (
    Goodput,
    PoolSplit,
    SLOAttainment,
    best_pool_ratio,
    colocated_at_rate,
    colocated_goodput,
    disaggregated_at_rate,
    disaggregated_goodput,
    mdl_mean_wait_s,
    mdl_wait_cdf,
    mdl_wait_quantile_s,
)
from .dtypes import DType, bytes_per_element, dtype, formats
from .economics import (
    ApiPrice,
    DeploymentCost,
    Energy,
    ServingDay,
    blended_price,
    cost_per_million_tokens,
    deployment_cost,
    energy_per_token,
    margin,
    price,
    price_table,
    rental_price,
    serving_day,
    tco_usd_per_device_hour,
)
from .errors import (
    CatalogError,
    DoesNotFitError,
    NotPublishedError,
    TokenomicsError,
    UnitError,
    UnknownEntryError,
)
from .export import export_sizing_sheet, export_table_csv, spreadsheet_formula
from .frontier import (
    DecodeCurve,
    best_at,
    cheapest_at,
    crossings,
    decode_curve,
    frontier,
    pareto_mask,
    sweep,
)
from .hf_config import model_from_hf_config
from .kv import kv_bytes_per_token, kv_bytes_per_token_per_layer, kv_cache_bytes
from .kvalloc import (
    KVCapacity,
    LengthDistribution,
    kv_capacity_sequences,
    kv_waste_fraction,
    kv_waste_fraction_over_decode,
    max_batch_ratio,
)
from .memory import (
    MemoryFit,
    devices_needed,
    max_batch,
    memory_fit,
    min_devices,
    weight_bytes,
    weight_bytes_per_device,
)
from .operators import expected_active_experts
from .parallel import (
    allgather_time,
    allreduce_time,
    alltoall_time,
    p2p_time,
    pipeline_bubble_fraction,
    reduce_scatter_time,
    step_comm,
    topology,
)
from .params import param_breakdown, param_count
from .performance import StepResult, decode, operator_table, prefill
from .plots import plot_cost, plot_frontier, plot_memory, plot_retention, plot_roofline
from .roofline import (
    attainable_flop_per_s,
    attention_decode_intensity,
    critical_batch,
    gemm_bytes,
    gemm_flops,
    gemm_intensity,
    ridge_point,
    roofline_time,
)
from .serving import (
    AttentionFFNSplit,
    BatchingThroughput,
    ChunkedPrefill,
    PrefixCachedPrefill,
    attention_ffn_split,
    batching_throughput,
    chunked_prefill,
    expected_max,
    mixed_step,
    prefix_cached_prefill,
    shared_prefix_kv_bytes,
)
from .specs import ROOFLINE, Attention, Deployment, Efficiency, Hardware, Model, MoE, Price
from .speculative import (
    SpeculativeResult,
    best_speculation_k,
    expected_accepted_from_table,
    expected_accepted_tokens,
    speculative_decode,
)
from .tables import hardware_table, model_table
from .tiering import (
    AgentStep,
    GapDistribution,
    ReloadOrRecompute,
    RetentionOccupancy,
    RetentionPolicy,
    Tier,
    agent_step,
    kv_tiers,
    reload_or_recompute,
    retention_policy,
    tier,
)
from .units import Q_, registry
from .validation import load_measurements, measured_vs_bound

__version__ = "0.1.0"

__all__ = [
    "calibration_report", "efficiency_presets", "forecast_interval",
    "plot_cost", "plot_frontier", "plot_memory", "plot_retention", "plot_roofline",
    "export_sizing_sheet", "export_table_csv", "spreadsheet_formula",
    "DecodeCurve", "best_at", "cheapest_at", "crossings", "decode_curve", "frontier",
    "pareto_mask", "sweep",
    "Goodput", "PoolSplit", "SLOAttainment", "best_pool_ratio", "colocated_at_rate",
    "colocated_goodput", "disaggregated_at_rate", "disaggregated_goodput", "mdl_mean_wait_s",
    "mdl_wait_cdf", "mdl_wait_quantile_s",
    "AgentStep", "GapDistribution", "ReloadOrRecompute", "RetentionOccupancy",
    "RetentionPolicy", "Tier",
    "agent_step", "kv_tiers", "reload_or_recompute", "retention_policy", "tier",
    "ApiPrice", "DeploymentCost", "Energy", "ServingDay", "blended_price",
    "cost_per_million_tokens", "deployment_cost", "energy_per_token", "margin", "price",
    "price_table", "rental_price", "serving_day", "tco_usd_per_device_hour",
    "KVCapacity", "LengthDistribution", "kv_capacity_sequences", "kv_waste_fraction",
    "kv_waste_fraction_over_decode", "max_batch_ratio",
    "SpeculativeResult", "best_speculation_k", "expected_accepted_from_table",
    "expected_accepted_tokens", "speculative_decode",
    "AttentionFFNSplit", "attention_ffn_split",
    "load_measurements", "measured_vs_bound",
    "BatchingThroughput", "ChunkedPrefill", "PrefixCachedPrefill", "batching_throughput",
    "chunked_prefill", "expected_max", "mixed_step", "prefix_cached_prefill",
    "shared_prefix_kv_bytes",
    "allgather_time", "allreduce_time", "alltoall_time", "p2p_time", "pipeline_bubble_fraction",
    "reduce_scatter_time", "step_comm", "topology", "weight_bytes_per_device",
    "Attention", "CatalogError", "DType", "Deployment", "DoesNotFitError", "Efficiency",
    "Hardware", "MemoryFit", "MoE", "Model", "NotPublishedError", "Price", "Q_", "ROOFLINE",
    "StepResult", "TokenomicsError", "UnitError", "UnknownEntryError", "attainable_flop_per_s",
    "attention_decode_intensity", "critical_batch", "bytes_per_element", "decode", "devices_needed", "dtype",
    "expected_active_experts", "formats", "gemm_bytes", "gemm_flops", "gemm_intensity",
    "hardware", "hardware_table", "kv_bytes_per_token", "kv_bytes_per_token_per_layer",
    "kv_cache_bytes", "load_catalog", "max_batch", "memory_fit", "min_devices", "model",
    "model_from_hf_config", "model_table", "operator_table", "param_breakdown", "param_count",
    "prefill", "registry", "ridge_point", "roofline_time", "sources", "weight_bytes",
]
