"""tokenomics: sourced roofline, memory and token-economics numbers for LLM inference.

Quick tour::

    import tokenomics as tk
    d = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", kv_dtype="fp8")
    tk.decode(d, batch=[1, 8, 64], context_tokens=8192).to_frame()
    tk.prefill(d, prompt_tokens=8192).ttft_s
    tk.max_batch(d, context_tokens=131072)
    tk.ridge_point(tk.hardware("mi355x"), "fp4")

The package is cut by stage, in the order data flows (``docs/architecture.md``)::

    core -> data -> physics -> serving -> economics | calibration -> pareto -> surfaces

Every public name is reachable here (``tk.decode``) and at its stage
(``tk.physics.decode``); a stage imports only the stages before it. Nothing numerical is
imported until a name is first used, so ``import tokenomics`` is instant.

Every function documents its units; catalogs carry a source for every number.
"""

from __future__ import annotations

from tokenomics.core.lazy import attach

__version__ = "0.1.0"

#: The stages, in data-flow order; each is a subpackage.
STAGES = ("core", "data", "physics", "serving", "economics", "calibration", "pareto",
          "surfaces")

#: The names promoted to ``tokenomics.*``, by the stage that defines them.
_TOP = {
    "core": (
        "bytes_per_element", "CatalogError", "DoesNotFitError", "DType", "dtype", "formats",
        "NotPublishedError", "Q_", "as_quantities", "unit_of", "registry", "TokenomicsError",
        "UnitError", "UnknownEntryError",
    ),
    "data": (
        "Attention", "Deployment", "Efficiency", "Hardware", "hardware", "Link", "load_catalog",
        "Model", "model", "model_from_hf_config", "MoE", "Price", "rental_price", "ROOFLINE",
        "search_path", "SLO", "sources", "topology", "use_catalog", "Workload",
        "RequestLengths", "request_lengths", "request_lengths_table",
    ),
    "physics": (
        "allgather_time", "allreduce_time", "alltoall_time", "attainable_flop_per_s",
        "attention_decode_intensity", "critical_batch", "decode", "devices_needed",
        "expected_active_experts", "gemm_bytes", "gemm_flops", "gemm_intensity",
        "kv_bytes_per_token", "kv_bytes_per_token_per_layer", "kv_cache_bytes", "max_batch",
        "memory_fit", "MemoryBudget", "MemoryFit", "min_devices", "operator_table", "p2p_time",
        "param_breakdown", "ParamBreakdown", "param_count", "pipeline_bubble_fraction", "prefill",
        "reduce_scatter_time", "ridge_point", "roofline_time", "step_comm", "StepResult",
        "weight_bytes", "weight_bytes_per_device",
    ),
    "serving": (
        "agent_step", "AgentStep", "attention_ffn_split", "AttentionFFNSplit",
        "batching_throughput", "BatchingThroughput", "best_pool_ratio", "best_speculation_k",
        "chunked_prefill", "ChunkedPrefill", "colocated_at_rate", "colocated_goodput",
        "disaggregated_at_rate", "disaggregated_goodput", "Drafter",
        "expected_accepted_from_table", "expected_accepted_tokens", "expected_max", "FFNPool",
        "Goodput", "kv_capacity_sequences", "kv_tiers", "kv_waste_fraction",
        "kv_waste_fraction_over_decode", "KVCapacity", "LengthDistribution", "max_batch_ratio",
        "mdl_mean_wait_s", "mdl_wait_cdf", "mdl_wait_quantile_s", "mixed_step", "PoolSplit",
        "prefix_cached_prefill", "PrefixCachedPrefill", "reload_or_recompute",
        "ReloadOrRecompute", "shared_prefix_kv_bytes", "SLOAttainment", "speculative_decode",
        "SpeculativeResult", "steady_state", "steady_state_over", "SteadyState", "Tier", "tier",
        "simulate_serving", "ServingTrace", "Admission", "replica_ttft", "ReplicaTTFT",
    ),
    "economics": (
        "replica_availability", "spare_replicas", "Spares",
        "ApiPrice", "blended_price", "cost_per_million_tokens", "deployment_cost",
        "DeploymentCost", "Energy", "energy_per_token", "GapDistribution", "margin", "Ownership",
        "price", "price_on_basis", "price_table", "PriceBasis", "retention_policy",
        "RetentionOccupancy", "RetentionPolicy", "RetentionPrices", "serving_day", "ServingDay",
        "tco_usd_per_device_hour", "request_journey", "Journey", "agent_sessions",
        "AgentSessions", "SessionStats", "facility", "Facility", "tco_parts",
        "fleet_plan", "FleetPlan", "Generation", "FleetTerms", "demand_path", "generation_of",
    ),
    "calibration": (
        "calibration_report", "transfer_report", "efficiency_presets", "forecast_interval",
        "interval_for",
        "load_measurements",
        "measured_vs_bound",
    ),
    "pareto": (
        "best_at", "cheapest_at", "interactivity_floor", "crossings", "decode_curve", "DecodeCurve", "frontier",
        "OperatingPoint", "sweep_lazy", "lazy_pareto", "lazy_best_at",
        "pareto_mask", "speed_premium", "SpeedPremium", "sweep",
    ),
    "surfaces": (
        "export_sizing_sheet", "export_sizing_workbook", "export_facility_sheet",
        "export_table_csv", "hardware_table",
        "model_table", "plot_cost",
        "plot_frontier", "plot_memory", "plot_retention", "plot_roofline", "spreadsheet_formula",
        "plot_journey", "plot_serving", "plot_sessions", "plot_cost_waterfall",
        "plot_tokens_per_mw",
    ),
}

#: Release 0.1 kept every module at the top (``tk.operators.step_costs``); those attribute
#: paths keep working and lead to the module's new home.
_MOVED: dict[str, str | tuple[str, ...]] = {
    "errors": "core.errors", "units": "core.units", "dtypes": "core.dtypes",
    "specs": ("data.specs", "data.deployment"), "hf_config": "data.hf_config",
    "catalog": "data.catalog", "params": "physics.params", "kv": "physics.kv",
    "roofline": "physics.roofline", "operators": "physics.operators",
    "memory": "physics.memory", "parallel": ("physics.collectives", "data.interconnect"),
    "performance": ("physics.step", "physics.engine"), "kvalloc": "serving.paged",
    "speculative": "serving.speculative",
    "disagg": ("serving.disagg", "serving.colocated", "serving.slo", "serving.queueing"),
    "tiering": ("serving.tiers", "economics.retention", "serving.agents"),
    "validation": "calibration.measurements", "symbolic": "pareto.symbolic",
    "tables": "surfaces.tables", "plots": "surfaces.plots", "export": "surfaces.export",
    "cli": "surfaces.cli", "docgen": "surfaces.docgen",
}

__getattr__, __dir__, __all__ = attach(
    __name__, globals(),
    {name: f".{stage}" for stage, names in _TOP.items() for name in names}, STAGES,
    moved={old: (f"{__name__}.{new}" if isinstance(new, str)
                 else tuple(f"{__name__}.{n}" for n in new)) for old, new in _MOVED.items()})
