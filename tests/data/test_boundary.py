"""The boundary's argument roles (data/boundary.py): ids where objects are, clear refusals."""

from __future__ import annotations

import pytest

import tokenomics as tk
from tokenomics.data.boundary import ROLES, inputs


def test_an_id_is_accepted_wherever_an_entry_is():
    # H100 SXM: 989.4 TFLOP/s dense BF16 over 3.35 TB/s = 295.3 FLOP/B
    assert tk.ridge_point("h100-sxm") == pytest.approx(989.4e12 / 3.35e12)
    assert tk.ridge_point("h100-sxm") == tk.ridge_point(tk.hardware("h100-sxm"))
    # Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 B = 131,072 B per token
    assert tk.kv_bytes_per_token("llama-3.1-8b") == 131072
    assert tk.topology("b200").domain_size == 8


@pytest.mark.parametrize("bad", [0, None, 3.5, [1], "llama-3.1-8b"])
def test_a_deployment_argument_refuses_anything_else(bad):
    with pytest.raises(tk.TokenomicsError, match=r"decode\(dep=\.\.\.\) needs a Deployment"):
        tk.decode(bad, 1, 1024)


def test_a_model_argument_names_the_closest_ids():
    with pytest.raises(tk.UnknownEntryError, match="llama-3.1-8b"):
        tk.param_count("llama-3.1-8")


def test_deployment_like_takes_a_memory_budget():
    budget = tk.MemoryBudget("llama-3.1-70b", "h100-sxm")
    # 70.55e9 parameters x 2 B = 141.1 GB of BF16 weights over 0.9 x 85.52 GB usable: 2 devices
    assert tk.min_devices(budget, 1, 1024) == 2
    with pytest.raises(tk.TokenomicsError, match=r"needs a Deployment \(or a MemoryBudget\)"):
        tk.min_devices(deployment=42)


def test_roles_are_checked_when_decorating():
    with pytest.raises(tk.TokenomicsError, match="unknown argument roles"):
        inputs(x="gpu")
    with pytest.raises(tk.TokenomicsError, match="has no argument 'hw'"):
        inputs(hw="hardware")(lambda dev: dev)
    assert set(ROLES) == {"deployment", "deployment_like", "model", "hardware"}


def test_arrays_that_do_not_broadcast_are_named_not_numpys_error():
    d8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
    with pytest.raises(tk.TokenomicsError, match=r"do not broadcast together \(.*batch \(3,\)"):
        tk.decode(d8, [1, 8, 64], [1024, 2048])
    # a column against a row does broadcast: 3 batches x 2 contexts
    assert tk.decode(d8, [[1], [8], [64]], [1024, 2048]).time_s.shape == (3, 2)
