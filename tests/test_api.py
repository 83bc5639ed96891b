"""The public surface: every name release 0.1 had in ``tokenomics.*`` still resolves.

The list below is release 0.1's ``tokenomics.__all__`` (139 names), written out so that a
name dropped by a refactor fails here; and the 0.1 modules, which were reachable as
attributes (``tk.operators.step_costs``), lead to the module behind them now.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

import tokenomics as tk

RELEASE_0_1_NAMES = (
    "agent_step", "AgentStep", "allgather_time", "allreduce_time", "alltoall_time", "ApiPrice",
    "attainable_flop_per_s", "Attention", "attention_decode_intensity", "attention_ffn_split",
    "AttentionFFNSplit", "batching_throughput", "BatchingThroughput", "best_at",
    "best_pool_ratio", "best_speculation_k", "blended_price", "bytes_per_element",
    "calibration_report", "CatalogError", "cheapest_at", "chunked_prefill", "ChunkedPrefill",
    "colocated_at_rate", "colocated_goodput", "cost_per_million_tokens", "critical_batch",
    "crossings", "decode", "decode_curve", "DecodeCurve", "Deployment", "deployment_cost",
    "DeploymentCost", "devices_needed", "disaggregated_at_rate", "disaggregated_goodput",
    "DoesNotFitError", "DType", "dtype", "Efficiency", "efficiency_presets", "Energy",
    "energy_per_token", "expected_accepted_from_table", "expected_accepted_tokens",
    "expected_active_experts", "expected_max", "export_sizing_sheet", "export_table_csv",
    "forecast_interval", "formats", "frontier", "GapDistribution", "gemm_bytes", "gemm_flops",
    "gemm_intensity", "Goodput", "Hardware", "hardware", "hardware_table", "kv_bytes_per_token",
    "kv_bytes_per_token_per_layer", "kv_cache_bytes", "kv_capacity_sequences", "kv_tiers",
    "kv_waste_fraction", "kv_waste_fraction_over_decode", "KVCapacity", "LengthDistribution",
    "load_catalog", "load_measurements", "margin", "max_batch", "max_batch_ratio",
    "mdl_mean_wait_s", "mdl_wait_cdf", "mdl_wait_quantile_s", "measured_vs_bound", "memory_fit",
    "MemoryFit", "min_devices", "mixed_step", "Model", "model", "model_from_hf_config",
    "model_table", "MoE", "NotPublishedError", "operator_table", "p2p_time", "param_breakdown",
    "param_count", "pareto_mask", "pipeline_bubble_fraction", "plot_cost", "plot_frontier",
    "plot_memory", "plot_retention", "plot_roofline", "PoolSplit", "prefill",
    "prefix_cached_prefill", "PrefixCachedPrefill", "price", "Price", "price_table", "Q_",
    "reduce_scatter_time", "registry", "reload_or_recompute", "ReloadOrRecompute",
    "rental_price", "retention_policy", "RetentionOccupancy", "RetentionPolicy", "ridge_point",
    "ROOFLINE", "roofline_time", "serving_day", "ServingDay", "shared_prefix_kv_bytes",
    "SLOAttainment", "sources", "speculative_decode", "SpeculativeResult",
    "spreadsheet_formula", "step_comm", "StepResult", "sweep", "tco_usd_per_device_hour",
    "Tier", "tier", "TokenomicsError", "topology", "UnitError", "UnknownEntryError",
    "weight_bytes", "weight_bytes_per_device",
)

RELEASE_0_1_MODULES = (
    "errors", "units", "dtypes", "specs", "hf_config", "catalog", "params", "kv", "roofline",
    "operators", "memory", "parallel", "performance", "serving", "kvalloc", "speculative",
    "disagg", "tiering", "economics", "validation", "calibration", "symbolic", "tables",
    "plots", "export", "cli", "docgen",
)


def test_the_list_is_release_0_1s_whole_surface():
    assert len(RELEASE_0_1_NAMES) == len(set(RELEASE_0_1_NAMES)) == 139


@pytest.mark.parametrize("name", RELEASE_0_1_NAMES)
def test_name_resolves_and_is_listed(name):
    obj = getattr(tk, name)
    assert obj is not None
    assert name in tk.__all__
    assert name in dir(tk)


@pytest.mark.parametrize("name", RELEASE_0_1_NAMES)
def test_name_is_also_reachable_at_its_stage(name):
    obj = getattr(tk, name)
    stages = [s for s in tk.STAGES if name in importlib.import_module(f"tokenomics.{s}")._EXPORTS]
    assert len(stages) == 1, (name, stages)
    assert getattr(getattr(tk, stages[0]), name) is obj


@pytest.mark.parametrize("module", RELEASE_0_1_MODULES)
def test_release_0_1_module_attribute_still_leads_somewhere(module):
    mod = getattr(tk, module)
    assert inspect.ismodule(mod)
    assert mod.__name__.startswith("tokenomics.")


def test_old_module_paths_keep_their_functions():
    assert tk.operators.step_costs is tk.physics.operators.step_costs
    assert tk.performance.decode is tk.decode
    assert tk.economics.ApiPrice is tk.ApiPrice
    assert tk.kv.kv_cache_bytes is tk.kv_cache_bytes
    # Modules split in two or three keep every 0.1 attribute path.
    assert tk.tiering.retention_policy is tk.retention_policy
    assert tk.tiering.tier is tk.tier and tk.tiering.agent_step is tk.agent_step
    assert tk.specs.Deployment is tk.Deployment and tk.specs.Model is tk.Model
    assert tk.disagg.mdl_mean_wait_s is tk.mdl_mean_wait_s
    assert tk.disagg.colocated_goodput is tk.colocated_goodput
    assert tk.parallel.topology is tk.topology and tk.parallel.allreduce_time is tk.allreduce_time
    assert tk.performance.StepResult is tk.StepResult
    assert "retention_policy" in dir(tk.tiering)


def test_moved_module_names_its_new_homes_for_a_missing_name():
    with pytest.raises(AttributeError, match="economics.retention"):
        tk.tiering.no_such_function  # noqa: B018


def test_unknown_name_is_an_attribute_error_that_names_it():
    with pytest.raises(AttributeError, match="no_such_thing"):
        tk.no_such_thing  # noqa: B018


def test_every_public_function_documents_its_parameters_and_units():
    # issue 26 (docs a reader enjoys): each tk.* function that takes arguments has a numpydoc
    # Parameters section naming every one of them
    import inspect

    missing = {}
    for name in tk.__all__:
        f = getattr(tk, name)
        if not callable(f) or isinstance(f, type):
            continue
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if not params:
            continue
        doc = inspect.getdoc(f) or ""
        if "Parameters\n----------" not in doc:
            missing[name] = "no Parameters section"
            continue
        section = doc.split("Parameters\n----------", 1)[1]
        section = section.split("\n\n" + next((h for h in ("Returns", "Raises", "Notes",
                                                             "Examples", "References")
                                               if f"\n{h}\n---" in section), "\0"), 1)[0]
        named = {n.strip() for line in section.splitlines() if line and not line[0].isspace()
                 for n in line.split(":")[0].split(",")}
        absent = [p.name for p in params if p.name not in named]
        if absent:
            missing[name] = f"does not describe {absent}"
    assert not missing, missing
