"""Serving: how an engine schedules steps.

Continuous and chunked batching, paged KV, speculative decoding, queueing, prefill/decode
disaggregation and KV tiers; built on the step engine.

Modules
-------
``agents``
    One step of an agent session: a midfill on a long cached prefix, then decode (S61).
``batching``
    Serving mechanics on top of the step model: mixed prefill+decode steps, chunked prefill,
``colocated``
    Colocated prefill and decode with chunked prefill: goodput under SLOs.
``disagg``
    Disaggregated prefill/decode serving: pool sizing and goodput under SLOs.
``dynamics``
    Continuous batching in time: arrivals, admission, KV growth, preemption (S53).
``paged``
    Paged versus contiguous KV-cache allocation: wasted KV memory and concurrent sequences.
``queueing``
    The M/D/1 queue: Poisson arrivals, one server, a deterministic service time.
``replica_queue``
    Time to first token on a loaded continuous-batching replica: one queue, from the steps up.
``slo``
    Goodput under service-level objectives: what disaggregated and colocated pools share.
``split_pools``
    Attention and FFN on two hardware pools, activations crossing a link each layer.
``speculative``
    Speculative decoding: expected accepted tokens, cycle time, speed-up and the best draft length.
``steady``
    Steady-state continuous batching: TPOT, TTFT and throughput at a fixed concurrency.
``tiers``
    KV-cache memory tiers, and reloading a prefix's KV from one against recomputing it.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "AGENT_STEP_TOKENS": ".agents",
    "MAX_AGENT_OUTPUT": ".agents",
    "AgentStep": ".agents",
    "agent_step": ".agents",
    "mixed_step_seconds": ".batching",
    "mixed_step": ".batching",
    "ChunkedPrefill": ".batching",
    "chunked_prefill": ".batching",
    "MAX_CHUNKS": ".batching",
    "PrefixCachedPrefill": ".batching",
    "prefix_cached_prefill": ".batching",
    "shared_prefix_kv_bytes": ".batching",
    "expected_max": ".batching",
    "BatchingThroughput": ".batching",
    "batching_throughput": ".batching",
    "AttentionFFNSplit": ".split_pools",
    "FFNPool": ".split_pools",
    "attention_ffn_split": ".split_pools",
    "colocated_at_rate": ".colocated",
    "colocated_goodput": ".colocated",
    "disaggregated_at_rate": ".disagg",
    "disaggregated_goodput": ".disagg",
    "PoolSplit": ".disagg",
    "best_pool_ratio": ".disagg",
    "MAX_POOL_DEVICES": ".disagg",
    "POLICIES": ".paged",
    "allocated_tokens": ".paged",
    "LengthDistribution": ".paged",
    "MAX_SUPPORT": ".paged",
    "as_length_distribution": ".paged",
    "kv_waste_fraction": ".paged",
    "kv_waste_fraction_over_decode": ".paged",
    "KVCapacity": ".paged",
    "kv_capacity_sequences": ".paged",
    "max_batch_ratio": ".paged",
    "TOKEN_BUDGET": ".replica_queue",
    "EXACT_SLOTS": ".replica_queue",
    "slot_wait": ".replica_queue",
    "ReplicaTTFT": ".replica_queue",
    "replica_ttft": ".replica_queue",
    "EXACT_WAIT_SPAN": ".queueing",
    "mdl_mean_wait_s": ".queueing",
    "mdl_wait_cdf": ".queueing",
    "mdl_wait_quantile_s": ".queueing",
    "mdl_max_utilisation": ".queueing",
    "LEGACY_REQUEST_PARAMS": ".slo",
    "LEGACY_DEFAULTS": ".slo",
    "single_count": ".slo",
    "single_value": ".slo",
    "request_rates": ".slo",
    "RequestTargets": ".slo",
    "request_targets": ".slo",
    "legacy_workload_slo": ".slo",
    "DecodeTable": ".slo",
    "decode_table": ".slo",
    "SLOAttainment": ".slo",
    "Goodput": ".slo",
    "slo_attainment": ".slo",
    "K_MAX_LIMIT": ".speculative",
    "PROBABILITY_SUM_TOLERANCE": ".speculative",
    "expected_accepted_tokens": ".speculative",
    "expected_accepted_from_table": ".speculative",
    "SpeculativeResult": ".speculative",
    "Drafter": ".speculative",
    "speculative_decode": ".speculative",
    "best_speculation_k": ".speculative",
    "SteadyState": ".steady",
    "steady_state": ".steady",
    "steady_state_reference": ".steady",
    "ADMISSION_POLICIES": ".dynamics",
    "Admission": ".dynamics",
    "as_admission": ".dynamics",
    "ServingTrace": ".dynamics",
    "simulate_serving": ".dynamics",
    "Tier": ".tiers",
    "load_kv_tiers": ".tiers",
    "read_kv_tiers_file": ".tiers",
    "rental_usd_per_hour": ".tiers",
    "hbm_usd_per_byte_s": ".tiers",
    "hbm_tier": ".tiers",
    "kv_tiers": ".tiers",
    "tier": ".tiers",
    "offload_tier": ".tiers",
    "check_tier_capacity": ".tiers",
    "ReloadOrRecompute": ".tiers",
    "reload_or_recompute": ".tiers",
    "mixed_step_seconds_over": ".batching",
    "pipeline_microbatches": ".steady",
    "steady_state_over": ".steady",
    "chunk_counts": ".steady",
}
_MODULES = ('agents', 'batching', 'colocated', 'disagg', 'dynamics', 'paged', 'queueing', 'replica_queue', 'slo', 'speculative', 'split_pools', 'steady', 'tiers',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
