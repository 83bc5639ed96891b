"""Issue 13's reproducers (a first part): each once crashed, returned nonsense or passed."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tokenomics as tk

M405, H100 = tk.model("llama-3.1-405b"), tk.hardware("h100-sxm")
D8B = tk.Deployment("llama-3.1-8b", "h100-sxm")


@pytest.mark.parametrize("kwargs, match", [
    (dict(workspace_bytes=float("nan")), "workspace_bytes must be >= 0"),       # was -2**63
    (dict(runtime_reserve_bytes=-1e12), "runtime_reserve_bytes must be >= 0"),  # was 1 device
])
def test_r1_min_devices_refuses_nan_and_negative_budgets(kwargs, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.min_devices(M405, H100, 1, 8192, **kwargs)


def test_r1_min_devices_refuses_an_uncountable_fleet():
    with pytest.raises(tk.TokenomicsError, match="needs more than"):
        tk.min_devices(M405, H100, 1e15, 8192)     # 1e15 sequences: 1.25e13 devices > 2**40
    with pytest.raises(tk.TokenomicsError, match=r"at most 2\*\*53, got 1e\+300"):
        tk.min_devices(M405, H100, 1e300, 8192)                                # was -2**63


def test_r2_pipeline_on_a_device_without_published_links_decodes_or_says_why():
    try:
        r = tk.decode(tk.Deployment("llama-3.1-8b", "mi355x", pp=2), 8, 1024)
        assert r.time_s > 0
    except tk.TokenomicsError:
        pass                                                  # a library error is fine


def test_r7_prefill_with_an_array_prompt_names_the_cached_excess():
    with pytest.raises(tk.TokenomicsError, match="got cached=2000 for a prompt of 1000"):
        tk.prefill(D8B, np.array([4096, 1000]), cached_tokens=2000)             # IndexError


@pytest.mark.parametrize("call, match", [
    (lambda: tk.gemm_flops(-1, 2, 3), "m must be a whole number >= 0"),        # was -12.0
    (lambda: tk.gemm_bytes(None, 2, 3), "m must be"),                          # was NaN
    (lambda: tk.forecast_interval(-5, 10), "speed must be >= 0"),              # was (-5, -5)
    (lambda: tk.pipeline_bubble_fraction(4, float("nan")), "microbatches"),    # was NaN
    (lambda: tk.expected_active_experts(float("inf"), 2, 4), "num_experts"),   # was NaN
])
def test_r9_nonsense_numbers_are_refused(call, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        call()


@pytest.mark.parametrize("kwargs, match", [
    (dict(runtime_reserve_bytes=float("inf")), "runtime_reserve_bytes must be finite"),
    (dict(comm_overlap=True), "comm_overlap must be a number"),
    (dict(usable_memory_fraction=True), "usable_memory_fraction must be a number"),
])
def test_r10_deployment_refuses_inf_and_bools(kwargs, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.Deployment("llama-3.1-8b", "h100-sxm", **kwargs)


@pytest.mark.parametrize("bad", [True, np.array([True, False]), [1, True]])
def test_r10_a_bool_is_not_a_batch(bad):
    with pytest.raises(tk.TokenomicsError, match="not a bool"):
        tk.decode(D8B, bad, 1024)


def test_r10_efficiency_refuses_arrays_and_bools():
    for bad in (dict(mfu=np.array([0.5])), dict(mfu=True)):
        with pytest.raises(tk.TokenomicsError, match="must be a number"):
            tk.Efficiency(**bad)


@pytest.mark.parametrize("fn", [lambda x: tk.decode(x, 1, 1024), lambda x: tk.prefill(x, 1024),
                                lambda x: tk.steady_state(x, 1, 1024, 16)])
def test_r13_an_id_where_a_deployment_is_needed_says_how_to_build_one(fn):
    with pytest.raises(tk.TokenomicsError, match=r"needs a Deployment, got str.*tk.Deployment"):
        fn("llama-3.1-8b")


_LLAMA = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=4096,
              intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
              num_hidden_layers=32, vocab_size=128256, max_position_embeddings=8192,
              head_dim=128)


@pytest.mark.parametrize("key, value, match", [
    ("head_dim", -128, "head_dim must be a whole number from 1"),        # was negative KV
    ("head_dim", 0, "head_dim must be a whole number from 1"),           # was read as absent
    ("intermediate_size", 0, "intermediate_size"),                       # dropped 5.6B params
    ("hidden_size", 1e30, "beyond any model"),                           # was accepted
    ("num_key_value_heads", 0, "must be >= 1"),                          # ZeroDivisionError
    ("num_attention_heads", 0, "must be >= 1"),                          # ZeroDivisionError
    ("num_hidden_layers", 10**12, "beyond any model"),                   # MemoryError / hang
])
def test_r3_r4_implausible_configs_are_refused_by_name(key, value, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        tk.model_from_hf_config({**_LLAMA, key: value})


def test_a_hidden_size_that_is_not_heads_times_a_whole_head_is_refused():
    # issue 25: 4,097 over 32 heads with no head_dim was read as heads of 128 (4,097 // 32);
    # with head_dim given, heads x head_dim may differ from hidden_size (Gemma 3, Qwen3 do)
    cfg = {k: v for k, v in _LLAMA.items() if k != "head_dim"}
    with pytest.raises(tk.TokenomicsError, match="4097 is not a multiple of num_attention_heads 32"):
        tk.model_from_hf_config({**cfg, "hidden_size": 4097})
    assert tk.model_from_hf_config({**_LLAMA, "hidden_size": 4097}).attention.head_dim == 128


@pytest.mark.parametrize("content, match", [
    (b'id = "\xff\xfe"\n', "not UTF-8 text"),                            # UnicodeDecodeError
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),  # RecursionError
])
def test_r5_catalog_reader_names_the_file_for_bad_bytes(tmp_path, content, match):
    from tokenomics.data.bibliography import read_toml

    p = tmp_path / "bad.toml"
    p.write_bytes(content)
    with pytest.raises(tk.CatalogError, match=match):
        read_toml(p)


@pytest.mark.parametrize("call, match", [
    (lambda: tk.chunked_prefill(D8B, 10**12, 32), "exceeds llama-3.1-8b's maximum context"),
    (lambda: tk.LengthDistribution.uniform(8, 2**63), r"at most 2\*\*53"),       # ZeroDivision
    (lambda: tk.LengthDistribution.uniform(1, 10**12), "more than 10,000,000"),  # 7.3 TiB
    (lambda: tk.LengthDistribution.lognormal(400, 0.7, 10**12), "more than 10,000,000"),
])
def test_r8_sizes_are_checked_before_allocation(call, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        call()


def test_python_m_tokenomics_catalog_validates_every_data_kind():
    # issue 13, item 2: `python -m tokenomics.catalog` checks each data kind by its loader
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "tokenomics.catalog"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    kinds = [line.split(":")[1].strip() for line in r.stdout.splitlines() if line.startswith("ok")]
    assert kinds == ["catalogs", "systems", "api_prices", "assumptions", "kv_tiers",
                     "journey", "measurements", "corpus", "calibration"]


# simulate_serving and request_journey on the catalog's deployments at their most extreme
# valid shapes (one-token prompts let the KV budget hold millions of sequences: the runs
# issue 25 found taking 2.3 GB, and 24 GB until OOM-killed), each at 0.9 and 0.5 of the
# replica's capacity, under an address-space limit of 1 GiB above the interpreter's after
# import. The default run takes four devices; HYPOTHESIS_PROFILE=fuzz every catalog device.
_BOUNDED = """
import resource, sys, tokenomics as tk
vm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize'))
resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + 2**30, resource.RLIM_INFINITY))
devices = sys.argv[1].split(',') if sys.argv[1] != 'all' else list(tk.hardware_table().index)
runs = 0
for hw in devices:
    for model in ('llama-3.1-8b', 'qwen3-30b-a3b'):
        dep = tk.Deployment(model, hw)
        for i, o in ((1, 1), (1, 8), (2048, 256)):
            try:
                cap = tk.steady_state(dep, 'max', i, o).requests_per_s
            except tk.TokenomicsError:          # does not fit: refused by name, fine
                continue
            tk.simulate_serving(dep, 0.9 * cap, i, o, steps=100)
            tk.request_journey(dep, i, o, arrival_rate_per_s=0.5 * cap, device_price=2.0)
            runs += 1
print(runs)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the address-space limit reads /proc and sets RLIMIT_AS (Linux)")
def test_serving_runs_fit_in_one_gib_of_address_space():
    import os
    import subprocess
    devices = ("all" if os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
               else "h100-sxm,gaudi3,mi355x,b200")
    r = subprocess.run([sys.executable, "-c", _BOUNDED, devices], capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    assert int(r.stdout.strip()) >= 20, r.stdout
