"""Catalog loading and validation: every bundled file loads; broken copies are rejected with the
file and the field in the message."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.data.bibliography import catalog_dir
from tokenomics.data.catalog import default_catalog, load_catalog

HW_IDS = ("a100-80gb h100-sxm h100-pcie h800 h200 b200 b300 gb200 gb300 l40s rubin mi300x "
          "mi325x mi355x tpu-v5e tpu-v5p tpu-v6e tpu-ironwood gaudi3 trainium2 groq-lpu "
          "cerebras-wse3 bertha").split()
MODEL_IDS = ("llama-2-13b llama-2-70b llama-3.1-8b llama-3.1-70b llama-3.1-405b llama-3.3-70b "
             "llama-4-scout llama-4-maverick deepseek-v3 kimi-k2 qwen3-32b qwen3-235b-a22b "
             "qwen3-30b-a3b mixtral-8x7b mixtral-8x22b gpt-oss-20b gpt-oss-120b gemma-3-27b "
             "mistral-large-2 opt-13b").split()


def test_bundled_catalog_has_every_required_entry():
    cat = default_catalog()
    assert set(HW_IDS) <= set(cat.hardware)
    assert set(MODEL_IDS) <= set(cat.models)


def test_every_number_has_a_resolvable_source():
    cat = default_catalog()
    for h in cat.hardware.values():
        assert h.sources, h.id
        assert set(h.sources.values()) <= set(cat.sources), h.id
        for p in h.prices:
            assert p.source in cat.sources and p.date
    for m in cat.models.values():
        assert {"config", "weights"} <= set(m.sources), m.id
        # a stated count has its source; a model without one says so ("not published":
        # Phi-4, whose vendor gives only the nominal "14B")
        assert ("official.total_params" in m.sources) == (m.official_total_params is not None), \
            m.id
        assert set(m.sources.values()) <= set(cat.sources), m.id


def test_statuses_and_conventions():
    assert tk.hardware("rubin").status == "announced"
    assert tk.hardware("bertha").status == "unverified"
    # NVLink 4 is quoted as 900 GB/s bidirectional: stored per direction.
    assert tk.hardware("h100-sxm").scale_up_bw_bytes_per_s == 450e9
    # NIC line rate 400 Gb/s per direction = 50 GB/s.
    assert tk.hardware("h100-sxm").scale_out_bw_bytes_per_s == 50e9
    # GiB where the vendor says GiB: Trainium2 96 GiB.
    assert tk.hardware("trainium2").mem_capacity_bytes == 96 * 2**30
    # Dense, not sparse: B200 FP4 9 PFLOP/s dense (18 with sparsity).
    assert tk.hardware("b200").peak("nvfp4") == 9000e12
    assert tk.hardware("gb200").scale_up_domain_size == 72


def test_mi355x_fp4_ridge():
    # 10,066.3 TFLOP/s dense FP4 / 8 TB/s = 1258 FLOP/B.
    assert tk.ridge_point(tk.hardware("mi355x"), "mxfp4") == pytest.approx(10066.3 / 8, rel=1e-6)


def test_not_published_raises_clearly():
    with pytest.raises(tk.NotPublishedError, match=r"h100-sxm: dense fp4 peak is not supported"):
        tk.hardware("h100-sxm").peak("nvfp4")


def test_lookup_aliases_and_errors():
    assert tk.hardware("H100").id == "h100-sxm"
    assert tk.model("deepseek-ai/DeepSeek-R1").id == "deepseek-v3"
    with pytest.raises(tk.UnknownEntryError, match=r"unknown hardware 'h1000'.*did you mean"):
        tk.hardware("h1000")
    with pytest.raises(tk.UnknownEntryError, match=r"unknown model 'llama-9'"):
        tk.model("llama-9")


def test_tables_are_numeric_and_unit_suffixed(tmp_path):
    t = tk.hardware_table()
    assert len(t) >= len(HW_IDS)
    assert t["mem_bw_tb_per_s"].dtype.kind == "f"
    t.reset_index().to_csv(tmp_path / "hw.csv", index=False)
    text = (tmp_path / "hw.csv").read_text()
    assert "GB" not in text.splitlines()[1].split(",")[5]  # numbers, not "80GB"
    m = tk.model_table()
    assert m.loc["deepseek-v3", "kv_bytes_per_token_bf16"] == 70_272


# ---- broken copies ------------------------------------------------------------------------
@pytest.fixture()
def cat_copy(tmp_path):
    hw = tmp_path / "hw"
    md = tmp_path / "md"
    hw.mkdir()
    md.mkdir()
    src = catalog_dir("hardware_catalog")
    shutil.copy(src / "sources.toml", hw / "sources.toml")
    shutil.copy(src / "h100-sxm.toml", hw / "h100-sxm.toml")
    msrc = catalog_dir("model_catalog")
    shutil.copy(msrc / "sources.toml", md / "sources.toml")
    shutil.copy(msrc / "llama-3.1-8b.toml", md / "llama-3.1-8b.toml")
    return hw, md


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_copy_loads(cat_copy):
    cat = load_catalog(*cat_copy)
    assert set(cat.hardware) == {"h100-sxm"} and set(cat.models) == {"llama-3.1-8b"}


# The whole [memory] capacity line of h100-sxm.toml, to delete it.
_H100_CAPACITY_LINE = next(
    line for line in (Path(__file__).resolve().parents[2] / "hardware_catalog" / "h100-sxm.toml")
    .read_text().splitlines() if line.startswith("capacity = "))


@pytest.mark.parametrize("old, new, field, why", [
    ('bandwidth = { value = 3.35, unit = "TB/s"', 'bandwidth = { value = 3.35, unit = "TFLOP/s"',
     "memory.bandwidth.unit", "dimension"),
    ('source = "glennklockwood-h100", note = "SXM5; NVIDIA',
     'source = "nowhere", note = "SXM5; NVIDIA', "memory.bandwidth.source", "not in the bibliography"),
    ('type = "HBM3"', 'type = "HBM3"\ncolour = "green"', "memory.colour", "unknown key"),
    ('capacity = { value = 80, unit = "GiB"', 'capacity = { value = 80000, unit = "TB"',
     "memory.capacity", "implausible"),
    ('convention = "dense"', 'convention = "sparse"', "compute.convention", "dense"),
    ('bf16 = { value = 989.4', 'bf16 = { value = 9894.0', "compute.fp8", "sparse/dense"),
    (_H100_CAPACITY_LINE, '', "memory.capacity", "required key is missing"),
    ('visible = { value = 81559, unit = "MiB"', 'visible = { value = 90000, unit = "MiB"',
     "memory.visible", "exceeds the physical capacity"),
    ('direction = "bidirectional"', 'direction = "both"', "scale_up.bandwidth.direction", "one of"),
    ('fp6 = "not supported"', 'fp6 = "unknown"', "compute.fp6", "not allowed"),
    ('id = "h100-sxm"', 'id = "h100"', "id", "file name stem"),
    ('date = "2024-12"', 'date = "Dec 2024"', "prices[1].date", "YYYY"),
    # the measured achievable matmul rate: a benchmark's, under the datasheet's dense peak
    ('convention = "measured"', 'convention = "datasheet"', "achievable.convention", "measured"),
    ('bf16 = { value = 794.5', 'bf16 = { value = 1500.0', "achievable.bf16", "above the format's"),
    # unit strings pint would evaluate (issue 25: ZeroDivisionError, RecursionError before)
    ('bandwidth = { value = 3.35, unit = "TB/s"', 'bandwidth = { value = 3.35, unit = "TB/s/0"',
     "memory.bandwidth.unit", "not a plain unit string"),
    ('bandwidth = { value = 3.35, unit = "TB/s"',
     'bandwidth = { value = 3.35, unit = "' + "(" * 3000 + "TB/s" + ")" * 3000 + '"',
     "memory.bandwidth.unit", "not a plain unit string"),
    # bits for bytes: 3.35 Tb/s would be read as 0.42 TB/s, 8x too slow
    ('bandwidth = { value = 3.35, unit = "TB/s"', 'bandwidth = { value = 3.35, unit = "Tb/s"',
     "memory.bandwidth.unit", "counts bits"),
    # a fractional count of devices was truncated (7.5 -> 7)
    ('value = 8, unit = "count"', 'value = 7.5, unit = "count"', "scale_up.domain_size",
     "must be a whole number, got 7.5"),
])
def test_broken_hardware_file_rejected(cat_copy, old, new, field, why):
    hw, md = cat_copy
    _edit(hw / "h100-sxm.toml", old, new)
    with pytest.raises(tk.CatalogError) as exc:
        load_catalog(hw, md)
    msg = str(exc.value)
    assert "h100-sxm.toml" in msg and f"field {field}" in msg and why in msg, msg


@pytest.mark.parametrize("old, new, field, why", [
    ('status = "shipping"', 'status = "sold"', "status", "is not one of"),
    ('value = 50, unit = "MB"', 'value = 50, unit = "MW"', "memory.sram.unit", "dimension"),
    ('name = "NVLink 4 (18 links)"', 'name = "NVLink 4 (18 links)"\nspeed = 1', "scale_up.speed",
     "unknown key"),
    ('value = 8, unit = "count"', 'value = 0, unit = "count"', "scale_up.domain_size",
     "implausible"),
    ('value = 2, unit = "us"', 'value = 2, unit = "GB"', "scale_out.latency.unit", "dimension"),
    ('tdp = { value = 700,', 'tdp = { value = 7e9,', "power.tdp", "implausible"),
    ('tier = "neocloud-on-demand"', 'tier = "spot"', "prices[2].tier", "is not one of"),
    # A price in plain USD is a purchase: 3.78 USD is below the 10 USD floor for a device.
    ('value = 3.78\nunit = "USD/hour"', 'value = 3.78\nunit = "USD"', "prices[2]", "implausible"),
])
def test_every_section_of_a_hardware_file_is_checked(cat_copy, old, new, field, why):
    hw, md = cat_copy
    _edit(hw / "h100-sxm.toml", old, new)
    with pytest.raises(tk.CatalogError) as exc:
        load_catalog(hw, md)
    msg = str(exc.value)
    assert "h100-sxm.toml" in msg and f"field {field}" in msg and why in msg, msg


def test_a_hardware_file_parses_into_canonical_units(cat_copy):
    hw, md = cat_copy
    h = load_catalog(hw, md).hardware["h100-sxm"]
    # 80 GiB = 85,899,345,920 B physical; 81,559 MiB = 85,520,809,984 B visible (nvidia-smi);
    # 50 MB L2 = 5e7 B; NVLink 900 GB/s both ways = 450e9 B/s each way;
    # 400 Gb/s = 50e9 B/s; 2 us = 2e-6 s; 700 W.
    assert (h.mem_capacity_bytes, h.sram_bytes, h.tdp_w) == (85_899_345_920, 50e6, 700.0)
    assert h.mem_visible_bytes == h.mem_usable_bytes == 85_520_809_984
    assert (h.scale_up_bw_bytes_per_s, h.scale_up_domain_size) == (450e9, 8)
    assert (h.scale_out_bw_bytes_per_s, h.scale_out_latency_s) == (50e9, 2e-6)
    assert h.scale_up_latency_s is None and h.memory_type == "HBM3"
    assert [(p.tier, p.date, p.usd) for p in h.prices] == [
        ("hyperscaler-on-demand", "2025-05", 12.29),
        ("hyperscaler-capacity-block", "2024-12", 4.916),
        ("neocloud-on-demand", "2026-05-07", 3.78),
        ("hyperscaler-on-demand", "2026-09-19", 10.0)]    # OCI BM.GPU.H100.8 per GPU-hour
    assert all(p.per_hour for p in h.prices)
    assert h.unavailable == {"compute.fp6": "not supported", "compute.fp4": "not supported"}
    assert h.sources["memory.bandwidth"] == "glennklockwood-h100"
    assert h.sources["scale_out.bandwidth"] == "aws-ec2-capacity-blocks-pricing"


@pytest.mark.parametrize("old, new, where, why", [
    ('num_key_value_heads = 8', '', "num_key_value_heads", None),  # default = MHA: loads
    ('hidden_size = 4096', 'hidden_size = "big"', "hidden_size", "non-negative integer"),
    ('num_hidden_layers = 32', '', "num_hidden_layers", "required key"),
    ('dtype = "bf16"', 'dtype = "bf17"', "weights.dtype", "unknown numeric format"),
    ('dtype = "bf16"', 'dtype = "bf16"\nembedding_dtype = "fp9"', "weights.embedding_dtype",
     "unknown numeric format"),
    ('schema = 1', 'schema = 2', "schema", "must be 1"),
])
def test_broken_model_file_rejected(cat_copy, old, new, where, why):
    hw, md = cat_copy
    _edit(md / "llama-3.1-8b.toml", old, new)
    if why is None:
        assert load_catalog(hw, md).models["llama-3.1-8b"].attention.kind == "MHA"
        return
    with pytest.raises(tk.CatalogError) as exc:
        load_catalog(hw, md)
    msg = str(exc.value)
    assert "llama-3.1-8b.toml" in msg and where in msg and why in msg, msg


def test_every_data_file_reader_names_a_missing_or_broken_file(tmp_path):
    # Catalogs, prices, tiers, measurements and the calibration all read through one helper.
    from tokenomics.calibration.measurements import load_measurements
    from tokenomics.serving.tiers import load_kv_tiers

    (tmp_path / "bad.toml").write_text("row = [\n")
    with pytest.raises(tk.CatalogError, match=r"missing\.toml: not found"):
        load_measurements(tmp_path / "missing.toml")
    with pytest.raises(tk.CatalogError, match=r"bad\.toml: not valid TOML"):
        load_measurements(tmp_path / "bad.toml")
    with pytest.raises(tk.CatalogError, match=r": cannot be read"):
        load_measurements(tmp_path)                       # a folder, not a file
    with pytest.raises(tk.CatalogError, match=r"kv_tiers\.toml: not found"):
        load_kv_tiers(tmp_path)


def test_malformed_toml_and_bad_source_entry(cat_copy):
    hw, md = cat_copy
    (hw / "broken.toml").write_text("schema = 1\nid = [\n")
    with pytest.raises(tk.CatalogError, match=r"broken.toml: not valid TOML"):
        load_catalog(hw, md)
    (hw / "broken.toml").unlink()
    with (hw / "sources.toml").open("a") as fh:
        fh.write('\n[no-url]\ntitle = "x"\npublisher = "y"\naccessed = "2026-01-01"\n'
                 'kind = "datasheet"\n')
    with pytest.raises(tk.CatalogError, match=r"sources.toml: \[no-url\].url: missing"):
        load_catalog(hw, md)


def test_achievable_matmul_rates_are_the_measured_table():
    # Bekman's MAMF table (ml-engineering, compute/accelerator): H100 SXM BF16 794.5 TFLOP/s
    # of the 989.4 dense peak = 80.3%; MI300X BF16 668.4 of 1,307.4 = 51.1%.
    h, m = tk.hardware("h100-sxm"), tk.hardware("mi300x")
    assert h.achievable_flop_per_s["bf16"] == pytest.approx(794.5e12)
    assert h.achievable_share("bf16") == pytest.approx(794.5 / 989.4, rel=1e-3)
    assert m.achievable_share("bf16") == pytest.approx(668.4 / 1307.4, rel=1e-3)
    # FP16 borrows BF16's share where FP16 is not measured
    assert m.achievable_share("fp16") == pytest.approx(m.achievable_share("bf16"))


def test_glm_46_and_47_are_glm_45_with_a_longer_context():
    # glm4x-config-diff: the three 355B configs are field-for-field identical except
    # max_position_embeddings, 131,072 -> 202,752 -> 202,752; Z.ai: 355B total, 32B active
    base = tk.model("glm-4.5")
    for mid in ("glm-4.6", "glm-4.7"):
        m = tk.model(mid)
        assert m.max_context == 202_752 and base.max_context == 131_072
        assert tk.param_count(m) == tk.param_count(base)
        assert tk.kv_bytes_per_token(m) == tk.kv_bytes_per_token(base) == 92 * 8 * 256 * 2
        assert m.official_total_params == 355e9 and m.official_active_params == 32e9


def test_deepseek_v31_is_its_own_entry_on_v3s_architecture():
    # model-card-deepseek-v31: V3.1-Base continues the original V3 base checkpoint; 671B
    # total, 37B activated; released 2025-08. V3.1-Terminus resolves to it, R1 stays on V3.
    m, v3 = tk.model("deepseek-v3.1"), tk.model("deepseek-v3")
    assert m.id == "deepseek-v3.1" and m.max_context == v3.max_context
    assert tk.param_count(m) == tk.param_count(v3)
    assert tk.kv_bytes_per_token(m) == (512 + 64) * 61 * 2        # MLA latent at BF16
    assert tk.model("deepseek-v3.1-terminus").id == "deepseek-v3.1"
    assert tk.model("deepseek-r1").id == "deepseek-v3"
