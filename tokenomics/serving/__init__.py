"""Serving: how an engine schedules steps.

Continuous and chunked batching, paged KV, speculative decoding, queueing, prefill/decode
disaggregation and KV tiers; built on the step engine.

Modules
-------
``batching``
    Serving mechanics on top of the step model: mixed prefill+decode steps, chunked prefill,
``disagg``
    Disaggregated prefill/decode serving against colocation: M/D/1 queues, goodput under SLOs.
``paged``
    Paged versus contiguous KV-cache allocation: wasted KV memory and concurrent sequences.
``speculative``
    Speculative decoding: expected accepted tokens, cycle time, speed-up and the best draft length.
``tiering``
    KV-cache memory tiers: reload against recompute, and how long to keep a session's KV in HBM.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "mixed_step_seconds": ".batching",
    "mixed_step": ".batching",
    "ChunkedPrefill": ".batching",
    "chunked_prefill": ".batching",
    "PrefixCachedPrefill": ".batching",
    "prefix_cached_prefill": ".batching",
    "shared_prefix_kv_bytes": ".batching",
    "expected_max": ".batching",
    "BatchingThroughput": ".batching",
    "batching_throughput": ".batching",
    "AttentionFFNSplit": ".batching",
    "attention_ffn_split": ".batching",
    "EXACT_WAIT_SPAN": ".disagg",
    "mdl_mean_wait_s": ".disagg",
    "mdl_wait_cdf": ".disagg",
    "mdl_wait_quantile_s": ".disagg",
    "SLOAttainment": ".disagg",
    "Goodput": ".disagg",
    "disaggregated_at_rate": ".disagg",
    "disaggregated_goodput": ".disagg",
    "PoolSplit": ".disagg",
    "best_pool_ratio": ".disagg",
    "colocated_at_rate": ".disagg",
    "colocated_goodput": ".disagg",
    "POLICIES": ".paged",
    "allocated_tokens": ".paged",
    "LengthDistribution": ".paged",
    "as_length_distribution": ".paged",
    "kv_waste_fraction": ".paged",
    "kv_waste_fraction_over_decode": ".paged",
    "KVCapacity": ".paged",
    "kv_capacity_sequences": ".paged",
    "max_batch_ratio": ".paged",
    "K_MAX_LIMIT": ".speculative",
    "PROBABILITY_SUM_TOLERANCE": ".speculative",
    "expected_accepted_tokens": ".speculative",
    "expected_accepted_from_table": ".speculative",
    "SpeculativeResult": ".speculative",
    "speculative_decode": ".speculative",
    "best_speculation_k": ".speculative",
    "GAP_MEDIAN_S": ".tiering",
    "GAP_MEAN_TO_MEDIAN": ".tiering",
    "AGENT_STEP_TOKENS": ".tiering",
    "Tier": ".tiering",
    "load_kv_tiers": ".tiering",
    "RetentionDefaults": ".tiering",
    "load_retention_defaults": ".tiering",
    "hbm_usd_per_byte_s": ".tiering",
    "hbm_tier": ".tiering",
    "kv_tiers": ".tiering",
    "tier": ".tiering",
    "ReloadOrRecompute": ".tiering",
    "reload_or_recompute": ".tiering",
    "lognormal_params": ".tiering",
    "GapDistribution": ".tiering",
    "RetentionPolicy": ".tiering",
    "RetentionOccupancy": ".tiering",
    "retention_policy": ".tiering",
    "AgentStep": ".tiering",
    "agent_step": ".tiering",
}
_MODULES = ('batching', 'disagg', 'paged', 'speculative', 'tiering',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
