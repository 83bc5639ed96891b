"""Fuzz every public function and input class, one hostile argument at a time (issue 13, item 5).

For each public callable of ``tokenomics`` (the top-level ``__all__``), :data:`VALID` holds a
valid call: keyword arguments by parameter name, overridden per function where one name
means different things (``k`` is a GEMM side in ``gemm_flops`` but a draft length in
``speculative_decode``). Hypothesis then replaces one argument (or none) with a hostile value
(NaN, inf, negatives, 1e300, bools, strings, None, empty and 2-D arrays, Quantities, objects,
ids where objects are expected) and requires that

* only the library's own :class:`~tokenomics.TokenomicsError` escapes, and
* a result (dataclass, tuple, array, DataFrame, Series, number) holds no NaN and no negative
  number, except the fields whose meaning is signed (:data:`SIGNED`) and the tables whose
  missing catalog figures are NaN by design (:data:`NAN_BY_DESIGN`).

:data:`NOT_FUZZED` names each public callable left out and why (result classes are outputs;
a few calls are too slow to repeat thousands of times). The ``ci`` profile runs a handful of
examples per function in the default suite; the long run is documented in the README:
``HYPOTHESIS_PROFILE=fuzz python -m pytest tests/test_fuzz_public.py`` (1,000 examples per
callable, 200 for the two that take about a second a call: 110,400 in all).
"""

from __future__ import annotations

import inspect
import math
import os
import signal
import sys
import tempfile
from dataclasses import fields, is_dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.core.units import registry

_TMP = Path(tempfile.mkdtemp(prefix="tk-fuzz-"))

HOSTILE = [0, -1, 1, 3, 0.5, -0.0, math.nan, math.inf, -math.inf, 1e300, -1e300, 2**60, True,
           False, None, "8", "", "h100-sxm", "llama-3.1-8b", [], [1, 2], [[1, 2], [3, 4]],
           np.array([]), np.array([[1.0, 2.0]]), np.array([1.0, np.nan]), np.array([4, 8]),
           registry().Quantity(8, "token"), registry().Quantity(1, "second"),
           registry().Quantity(80, "GB"), object(), {}, {"a": 1}]


@lru_cache(maxsize=1)
def _objects() -> dict:
    """Valid argument objects, built once (catalog lookups, deployments, curves)."""
    d8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
    d8b = tk.Deployment("llama-3.1-8b", "h200", tp=2)
    fr = tk.frontier([d8, d8b], 2048)
    return dict(
        d8=d8, d8b=d8b, frontier=fr, curve=tk.decode_curve(d8, 2048),
        workload=tk.Workload(1024, 128), slo=tk.SLO(ttft_s=2.0, tpot_s=0.05),
        price_id=tk.price_table().index[0] if isinstance(tk.price_table().index[0], str)
        else tk.price_table().iloc[0]["id"],
        cost=tk.deployment_cost(d8, 8, 2048, usd_per_device_hour=2.0),
        journey=tk.request_journey(d8, 512, 16, device_price=2.0),
        trace=tk.simulate_serving(d8, 5.0, 512, 16, steps=200),
        sessions=tk.agent_sessions(d8, 20, concurrent=2.0, horizon_s=600.0,
                                   context_tokens=4096),
        policy=tk.retention_policy(d8, 2048, usd_per_device_hour=2.0),
        ownership=tk.Ownership(purchase_usd=30000.0, amortisation_years=4.0),
        fac=tk.facility("gb300-nvl72", 1e7, 1000.0, device_price=2.0),
        lengths=tk.LengthDistribution([512, 2048], [0.5, 0.5]),
        ffn=tk.FFNPool("h100-sxm", 2), link=tk.Link(bytes_per_s=50e9),
        config={"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512,
                "intermediate_size": 1024, "num_attention_heads": 8,
                "num_key_value_heads": 8, "vocab_size": 1000,
                "max_position_embeddings": 4096},
    )


def _valid(name: str) -> dict:
    """A valid keyword call of public callable ``name``."""
    o = _objects()
    common = dict(
        dep=o["d8"], deployment=o["d8"], target=o["d8"], prefill_dep=o["d8"],
        decode_dep=o["d8"], attention=o["d8"], deployments=[o["d8"], o["d8b"]],
        model="llama-3.1-8b", hardware="h100-sxm", hw="h100-sxm", batch=8,
        context_tokens=2048, prompt_tokens=1024, output_tokens=128, input_tokens=1024,
        cached_tokens=256, new_tokens=1, logits_tokens=1, decode_batch=8,
        decode_context_tokens=2048, prefill_tokens=512, token_budget=512, prefix_tokens=1024,
        suffix_tokens=128, concurrency=16, message_bytes=1e6, n_devices=8,
        link_bytes_per_s=450e9, latency_s=1e-6, intensity=100.0, peak_flop_per_s=989e12,
        mem_bw_bytes_per_s=3.35e12, flops=1e12, bytes_moved=1e9, m=4096, n=4096, k=4096,
        alpha=0.7, workload=o["workload"], slo=o["slo"], rate_per_s=1.0, n_instances=2,
        n_prefill=1, n_decode=1, total_devices=4, min_tokens_per_s_per_user=20.0,
        usd_per_device_hour=2.0, tokens_per_s_per_device=1000.0, power_w=700.0,
        num_experts=8, top_k=2, tokens=64, p=o["price_id"], provider_model_id=o["price_id"],
        price_usd_per_mtok=2.0, cost_usd_per_mtok=1.0, arrival_rate_per_s=0.5,
        service_time_s=1.0, wait_s=0.5, probability=0.9, lengths=o["lengths"],
        policy="paged", max_tokens=4096, ownership=o["ownership"], pp=4, microbatches=8,
        nodes=1, devices_per_node=8, cached_input_tokens=1e5, speed=50.0, bound=100.0,
        frontier=o["frontier"], base_tokens_per_s_per_user=30.0, ffn=o["ffn"], link=o["link"],
        config=o["config"], x=np.array([1.0, 2.0, 3.0]), y=np.array([3.0, 2.0, 1.0]),
        samples=np.array([1.0, 2.0, 3.0]), a=o["curve"], b=o["d8b"], costs=o["cost"],
        policies=o["policy"], frontier_df=o["frontier"], df=pd.DataFrame({"a": [1.0]}),
        path=_TMP / "out.csv", name="bf16", value=8.0, unit="token",
        devices=2, mu=5.0, sigma=1.0, ttft_s=2.0, tpot_s=0.05, bytes_per_s=50e9,
        purchase_usd=30000.0, amortisation_years=4.0,
    )
    per = {
        "hardware": dict(name="h100"), "model": dict(name="llama-3.1-8b"),
        "tier": dict(name="dram"), "speculative_decode": dict(k=4),
        "best_speculation_k": dict(), "expected_accepted_tokens": dict(k=4),
        "expected_max": dict(n=4), "blended_price": dict(input_tokens=1e6,
                                                         output_tokens=2e5),
        "export_sizing_sheet": dict(path=_TMP / "sheet.xlsx"),
        "Workload": dict(input_tokens=1024, output_tokens=128),
        "LengthDistribution": dict(tokens=[512, 2048], probabilities=[0.5, 0.5]),
        "Q_": dict(value=8.0, unit="token"),
        "as_quantities": dict(result=o["cost"]), "unit_of": dict(name="step_time_s"),
        "simulate_serving": dict(arrival_rate_per_s=10.0, steps=200),
        "Admission": dict(policy="smoothed"),
        "agent_sessions": dict(sessions=50, horizon_s=600.0, concurrent=2.0),
        "plot_journey": dict(journey=o["journey"]), "plot_serving": dict(traces=o["trace"]),
        "plot_sessions": dict(sessions=o["sessions"]),
        "plot_cost_waterfall": dict(facility=o["fac"], index=0),
        "plot_tokens_per_mw": dict(facilities=[o["fac"]]),
        "tco_parts": dict(ownership=tk.Ownership(30000.0, 4.0, 700.0)),
        "RequestLengths": dict(name="w", input_nodes=(512.0, 2048.0),
                               input_weights=(0.5, 0.5), output_nodes=(128.0,),
                               output_weights=(1.0,)),
        "request_lengths": dict(name="mlperf-llama2-70b"),
        "steady_state_over": dict(lengths="mlperf-llama2-70b"),
        "interval_for": dict(novel=("stack",)),
        "facility": dict(system_id="gb300-nvl72", power_w=1e7, device_price=2.0),
        "spare_replicas": dict(replicas=100, sla=0.999, devices_per_replica=8),
        "replica_availability": dict(devices_per_replica=72),
        "Generation": dict(name="h100", first_year=2024, purchase_usd=30000.0),
        "FleetTerms": dict(life_years=5.0),
        "generation_of": dict(device="gb200-nvl72", purchase_usd=50_000.0),
        "demand_path": dict(start_tokens_per_s=1e6, growth_per_year=7.0, years=4),
        "fleet_plan": dict(demand_tokens_per_s=[1e5, 7e5], start_year=2024,
                           generations=[tk.Generation("h100", 2024, 1000.0, power_w=1400.0,
                                                      purchase_usd=30000.0)]),
    }
    kw = dict(common)
    kw.update(per.get(name, {}))
    return kw


#: Public callables not fuzzed here, and why.
NOT_FUZZED = {
    **{n: "an exception class" for n in ("CatalogError", "DoesNotFitError", "NotPublishedError",
                                         "TokenomicsError", "UnitError", "UnknownEntryError")},
    **{n: "needs the optional Dask extra; its bad inputs are tested in tests/pareto/test_fleet.py"
       for n in ("sweep_lazy", "lazy_pareto", "lazy_best_at")},
    "OperatingPoint": "a result (what best_at and cheapest_at return), not an input",
    "ParamBreakdown": "a result (what param_breakdown returns), not an input",
    "calibration_report": "refits the calibration once per held-out group (minutes a call)",
    "measured_vs_bound": "reads the bound-check file; no arguments a caller supplies",
    "use_catalog": "changes the process-wide catalog search path (tests/data/test_user_catalog)",
    "load_catalog": "reads folders; fuzzed as files in tests/surfaces/test_validate.py",
    "spreadsheet_formula": "takes a SymPy expression (tests/surfaces/test_export.py)",
    "export_table_csv": "writes the file it is given; covered in tests/surfaces/test_export.py",
    "export_sizing_workbook": "writes the file it is given; bad arguments in "
                              "tests/surfaces/test_workbook.py",
    "export_sizing_sheet": "writes a workbook per call (seconds under 1,000 examples)",
    "export_facility_sheet": "writes the file it is given (a corrupted path would be a file "
                             "in the working folder); bad arguments in "
                             "tests/surfaces/test_facility_sheet.py",
}


def _is_result_class(obj) -> bool:
    """Result dataclasses (outputs of the library, not inputs) are not fuzzed."""
    return inspect.isclass(obj) and is_dataclass(obj) and obj.__module__.split(".")[1] in (
        "physics", "serving", "economics", "pareto", "calibration") and obj.__name__ not in (
        "Drafter", "GapDistribution", "LengthDistribution", "RetentionPrices", "FFNPool",
        "Ownership", "PriceBasis", "MemoryBudget", "Admission", "SessionStats",
        "Generation", "FleetTerms")


def _targets() -> list[str]:
    out = []
    for n in sorted(tk.__all__):
        obj = getattr(tk, n)
        if n in NOT_FUZZED or not callable(obj) or _is_result_class(obj):
            continue
        if n in ("Hardware", "Model", "Attention", "MoE", "DType", "Price", "ApiPrice", "Tier",
                 "Source", "Catalog", "Topology", "System", "Switch"):
            continue    # catalog records: built by the loaders, fuzzed as files
        out.append(n)
    return out


#: Result fields whose meaning is signed.
SIGNED = {"headroom_bytes", "free_bytes", "spare_bytes", "margin", "cost_profit_margin",
          "room_bytes", "breakeven_tokens", "speedup", "delta", "profit_usd",
          "mu"}   # GapDistribution.mu: the mean of log-seconds, any real number
#: Calls whose tables carry NaN for figures a catalog does not publish, or signed columns.
NAN_BY_DESIGN = {"hardware_table", "model_table", "price_table", "formats", "kv_tiers",
                 "sources", "efficiency_presets", "frontier", "sweep", "decode_curve",
                 "operator_table", "crossings", "cheapest_at", "best_at", "param_breakdown",
                 "margin", "serving_day", "reload_or_recompute", "plot_cost", "plot_frontier",
                 "plot_memory", "plot_retention", "plot_roofline", "retention_policy",
                 "search_path", "forecast_interval",
                 "facility", "fleet_plan"}   # documented: inf $/Mtok where no replica fits, NaN revenue
                               # without a price


#: Result fields that are NaN by their documented meaning where there is nothing to count.
NAN_DOCUMENTED = {"hbm_hit_rate"}    # AgentSessions: no return inside the window


def _numbers(r, depth=0):
    if depth > 4:
        return
    if is_dataclass(r) and not isinstance(r, type):
        for f in fields(r):
            if f.name not in SIGNED and f.name not in NAN_DOCUMENTED:
                yield from _numbers(getattr(r, f.name), depth + 1)
    elif isinstance(r, (tuple, list)):
        for x in r:
            yield from _numbers(x, depth + 1)
    elif isinstance(r, pd.DataFrame):
        for c in r.columns:
            if str(c) not in SIGNED and r[c].dtype.kind in "fiu":
                yield from r[c].to_numpy(float)
    elif isinstance(r, pd.Series):
        if r.dtype.kind in "fiu":
            yield from r.to_numpy(float)
    elif isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, bool):
        yield float(r)
    elif isinstance(r, np.ndarray) and r.dtype.kind in "fiu":
        yield from r.astype(float).ravel()


def _params(name: str) -> list[str]:
    sig = inspect.signature(getattr(tk, name))
    return [p.name for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


#: Under the fuzz profile every call runs under a 2 s timer and the process under an address-
#: space limit of 1 GiB above what it holds when this module is imported (Linux), so a hang or
#: a blow-up on any input is a failure, not a stuck or killed run. The default run sets
#: neither: speed is measured in benchmarks, not tests.
FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
CALL_LIMIT_S = 2.0
#: Calls whose work is a fit by design, with the limit they run under instead (documented in
#: their docstrings): transfer_report refits the calibration without one source family;
#: simulate_serving is one loop iteration per step, at most 100,000 steps (about 5-12 s).
LONG_CALLS_S = {"transfer_report": 120.0, "simulate_serving": 15.0}
_SLOW: list[str] = []


def _limit_address_space() -> None:
    if not (FUZZ and sys.platform.startswith("linux")):
        return
    import resource
    with open("/proc/self/status") as fh:
        vm_kb = next(int(x.split()[1]) for x in fh if x.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (vm_kb * 1024 + 2**30, resource.RLIM_INFINITY))


_limit_address_space()


class _TooSlow(Exception):
    """Raised by the fuzz profile's timer inside a call that ran over CALL_LIMIT_S."""


def _timed_out(signum, frame):
    _SLOW.append("timer")
    raise _TooSlow(f"over {CALL_LIMIT_S:g} s")


def _run_limited(fn, kw, name=""):
    """``fn(**kw)``, under the fuzz profile's per-call timer (a flag survives even if the
    library swallowed the timer's exception)."""
    if not (FUZZ and hasattr(signal, "setitimer")):
        return fn(**kw)
    _SLOW.clear()
    old = signal.signal(signal.SIGALRM, _timed_out)
    signal.setitimer(signal.ITIMER_REAL, LONG_CALLS_S.get(name, CALL_LIMIT_S))
    try:
        return fn(**kw)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)
        assert not _SLOW, (f"{name or fn.__name__}: a call ran over "
                           f"{LONG_CALLS_S.get(name, CALL_LIMIT_S):g} s ({kw})")


def _call(name: str, which: str | None, value) -> None:
    fn = getattr(tk, name)
    valid = _valid(name)
    sig = inspect.signature(fn)
    kw = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name == which:
            kw[p.name] = value
        elif p.default is p.empty:
            kw[p.name] = valid[p.name]
    try:
        r = _run_limited(fn, kw, name)
    except tk.TokenomicsError:
        return
    finally:
        import matplotlib.pyplot as plt
        plt.close("all")
    _check_numbers(name, f"{name}({which}={value!r})", r)
    _call_methods(name, r)


def _check_numbers(name: str, what: str, r) -> None:
    if name in NAN_BY_DESIGN:
        return
    for v in _numbers(r):
        assert not math.isnan(v), f"{what}: NaN in the result"
        assert v >= 0, f"{what}: negative {v} in the result"


#: Result methods that take arguments beyond self, or write files, are called elsewhere.
_METHOD_SKIP = {"with_", "plot", "savefig", "to_csv", "to_excel", "to_json", "efficiency"}


def _call_methods(name: str, r) -> None:
    """Every public method of a result that needs no argument (``to_frame``, ``summary``,
    ``describe``...): a library error or a sane value, under the same limits."""
    if not type(r).__module__.startswith("tokenomics"):
        return                               # numbers, arrays, frames, Quantities, figures
    for m in dir(r):
        if m.startswith("_") or m in _METHOD_SKIP:
            continue
        attr = getattr(type(r), m, None)
        if not inspect.isfunction(attr):
            continue
        sig = inspect.signature(attr)
        if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in list(sig.parameters.values())[1:]):
            continue
        try:
            out = _run_limited(getattr(r, m), {}, name)
        except tk.TokenomicsError:
            continue
        finally:
            import matplotlib.pyplot as plt
            plt.close("all")
        if m not in ("summary",) or name not in ("simulate_serving",):   # NaN documented
            _check_numbers(name, f"{name}(...).{m}()", out)


TARGETS = _targets()


def test_every_public_callable_is_fuzzed_or_named():
    every = {n for n in tk.__all__ if callable(getattr(tk, n))}
    covered = set(TARGETS) | set(NOT_FUZZED)
    rest = {n for n in every - covered if not _is_result_class(getattr(tk, n))}
    records = {"Hardware", "Model", "Attention", "MoE", "DType", "Price", "ApiPrice", "Tier",
               "Source", "Catalog", "Topology", "System", "Switch"}
    assert rest <= records, sorted(rest - records)
    assert len(TARGETS) >= 100, len(TARGETS)


@pytest.mark.parametrize("name", TARGETS)
def test_the_valid_call_runs(name):
    # the baseline: the call VALID describes succeeds (so the fuzz below corrupts a real call)
    _call(name, None, None)


#: Calls of about a second each (a pool-split search, a goodput solve): a fifth of the examples.
SLOW = ("best_pool_ratio", "colocated_goodput")


def _one_hostile_call(name, data):
    which = data.draw(st.sampled_from(_params(name) or [None]))
    value = data.draw(st.one_of(st.sampled_from(HOSTILE),
                                st.floats(allow_nan=True, allow_infinity=True),
                                st.integers(-10, 10**7)))
    _call(name, which, value)


@pytest.mark.parametrize("name", [t for t in TARGETS if t not in SLOW])
@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=settings().max_examples
          // 5 or 1)
@given(data=st.data())
def test_one_hostile_argument_gets_a_library_error_or_a_sane_result(name, data):
    _one_hostile_call(name, data)


@pytest.mark.parametrize("name", SLOW)
@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=settings().max_examples
          // 25 or 1)
@given(data=st.data())
def test_slow_calls_get_a_library_error_or_a_sane_result(name, data):
    _one_hostile_call(name, data)
