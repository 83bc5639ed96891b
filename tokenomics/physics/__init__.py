"""Physics: what one forward step of one replica costs.

Parameter counts, KV bytes, per-operator FLOPs and bytes (one formula each, in
:mod:`~tokenomics.physics.formulas`), memory fit, collectives, and the step engine
(:mod:`~tokenomics.physics.step`: roofline + exposed communication + overhead) that every
later stage builds on.

Modules
-------
``collectives``
    Collective communication: times of all-reduce, all-gather, reduce-scatter, all-to-all and
    point-to-point sends; a step's collectives.
``engine``
    The step engine: the time of one forward step from its operator costs.
``formulas``
    The per-unit cost formulas of a transformer step, each written once.
``grid``
    A decode over many (batch, context) points from a deployment's plan: the vector engine
    on the plans' coefficients.
``kv``
    KV-cache bytes: per token, per layer, and for a context (windows and chunks honoured).
``memory``
    Weight bytes, the per-device memory budget, maximum batch and minimum device count.
``operators``
    Per-operator FLOPs and bytes of one forward step: prefill, midfill and decode.
``params``
    Parameter counts computed from the architecture.
``plan``
    A deployment's decode and prefill as precomputed coefficients: the scalar fast paths.
``roofline``
    Roofline quantities: ridge point, arithmetic intensity, attainable FLOP/s, roofline time.
``step``
    Prefill (TTFT), midfill and decode step time and throughput for a deployment.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "p2p_time": ".collectives",
    "allreduce_time": ".collectives",
    "allgather_time": ".collectives",
    "reduce_scatter_time": ".collectives",
    "alltoall_time": ".collectives",
    "group_allreduce_time": ".collectives",
    "group_allgather_time": ".collectives",
    "group_alltoall_time": ".collectives",
    "remote_copies": ".collectives",
    "group_p2p_time": ".collectives",
    "pipeline_bubble_fraction": ".collectives",
    "CommCost": ".collectives",
    "step_comm": ".collectives",
    "check_on_oom": ".engine",
    "StepResult": ".engine",
    "OperatorTimes": ".engine",
    "operator_times": ".engine",
    "operator_seconds": ".engine",
    "exposed_comm_s": ".engine",
    "exposed_comm": ".engine",
    "collectives_s": ".engine",
    "operator_time": ".engine",
    "operator_terms": ".engine",
    "overhead_s": ".engine",
    "step_seconds": ".engine",
    "compute_scale": ".engine",
    "expert_load_factor": ".engine",
    "operator_scale": ".engine",
    "grouped_gemm_efficiency": ".engine",
    "weight_only": ".engine",
    "effective_peaks": ".engine",
    "achievable_factor": ".engine",
    "load_factor": ".engine",
    "fixed_overhead": ".engine",
    "step_result": ".engine",
    "attention_pair_flops": ".formulas",
    "mla_absorbed_pair_flops": ".formulas",
    "mla_up_projection_flops_per_token": ".formulas",
    "kv_elements_per_token_per_layer": ".formulas",
    "attention_io_elements_per_token": ".formulas",
    "attention_pair_flops_as_run": ".formulas",
    "span_sum": ".formulas",
    "kv_read_tokens": ".formulas",
    "distinct_experts": ".formulas",
    "tokens_for_distinct_fraction": ".formulas",
    "gdn_state_elements_per_layer": ".formulas",
    "gdn_flops_per_token_per_layer": ".formulas",
    "mamba2_flops_per_token_per_layer": ".formulas",
    "dsa_indexer_flops_per_query": ".formulas",
    "dsa_read_tokens": ".formulas",
    "kv_bytes_per_token_per_layer": ".kv",
    "kv_bytes_per_token": ".kv",
    "linear_state_bytes_per_sequence": ".kv",
    "kv_tokens_held": ".kv",
    "kv_bytes_held": ".kv",
    "group_kv_bytes": ".kv",
    "replicated_kv_bytes": ".memory",
    "kv_cache_bytes": ".kv",
    "kv_context_crossover_tokens": ".kv",
    "weight_bytes": ".memory",
    "weight_bytes_per_device": ".memory",
    "redundancy_factor": ".memory",
    "activation_workspace_bytes_per_token": ".memory",
    "logits_workspace_bytes_per_sequence": ".memory",
    "MemoryFit": ".memory",
    "memory_fit": ".memory",
    "kv_per_sequence_bytes": ".memory",
    "max_batch": ".memory",
    "MemoryBudget": ".memory",
    "devices_needed": ".memory",
    "min_devices": ".memory",
    "MAX_DEVICES": ".memory",
    "ensure_fits": ".memory",
    "OPERATORS": ".operators",
    "expected_active_experts": ".operators",
    "OpCost": ".operators",
    "step_costs": ".operators",
    "param_breakdown": ".params",
    "ParamBreakdown": ".params",
    "param_count": ".params",
    "ridge_point": ".roofline",
    "gemm_flops": ".roofline",
    "gemm_bytes": ".roofline",
    "gemm_intensity": ".roofline",
    "attention_decode_intensity": ".roofline",
    "roofline_time": ".roofline",
    "attainable_flop_per_s": ".roofline",
    "critical_batch": ".roofline",
    "decode": ".step",
    "prefill": ".step",
    "operator_table": ".step",
    "decode_reference": ".step",
    "prefill_reference": ".step",
    "PrefillPlan": ".plan",
    "build_prefill_plan": ".plan",
    "prefill_plan": ".plan",
    "DecodePlan": ".plan",
    "build_decode_plan": ".plan",
    "decode_plan": ".plan",
    "decode_grid_plan": ".plan",
    "DecodeGrid": ".grid",
    "decode_grid": ".grid",
    "GRID_POINTS": ".grid",
    "GRID_BLOCK": ".grid",
    "GRID_TABLE": ".grid",
    "GRID_FIELDS": ".grid",
    "WARM_UP_CALLS": ".plan",
    "MixedPlan": ".plan",
    "build_mixed_plan": ".plan",
    "mixed_plan": ".plan",
    "batch_budget": ".memory",
    "mixed_costs": ".operators",
    "Experts": ".lines",
    "StepLines": ".lines",
    "crossing_batch": ".lines",
    "step_lines": ".lines",
    "experts_of": ".lines",
    "two_point_line": ".lines",
    "host_seconds": ".engine",
    "mixed_costs_over": ".operators",
}
_MODULES = ('collectives', 'engine', 'formulas', 'grid', 'kv', 'lines', 'memory', 'operators', 'params', 'plan', 'roofline', 'step',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
