"""Systems (data/systems.py): racks, pods and supernodes as a count of one device and a wiring.

Published totals checked by hand here: GB200 NVL72 130 TB/s of NVLink = 72 x 1.8 TB/s
(bidirectional; 64.8 TB/s each way) and ~13.4 TB HBM = 72 x 186 "GB"; CloudMatrix 384 ~300
PF BF16 = 384 x 780 TF; Ironwood 42.5 EF FP8 = 9,216 x 4,614 TF.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

import tokenomics as tk
from tokenomics.data.systems import (
    TOTAL_TOLERANCE,
    load_systems,
    parse_system_file,
    system,
)

_DIR = Path(tk.data.catalog_dir("hardware_catalog")) / "systems"


def test_the_issue_s_systems_are_bundled():
    # issue 11: NVL72 racks, CloudMatrix 384, TPU pods, NVSwitch (HGX)
    ids = set(load_systems())
    assert {"gb200-nvl72", "gb300-nvl72", "cloudmatrix-384", "tpu-v5p-pod", "tpu-v5e-pod",
            "tpu-ironwood-superpod", "hgx-h100", "mi300x-platform"} <= ids
    assert system("hgx-h100").switch.chips == 4          # four third-generation NVSwitch chips


def test_nvl72_totals_by_hand():
    s = system("GB200-NVL72")
    assert s.devices == 72 and s.topology_kind == "switched"
    assert s.totals["scale_up_bandwidth"] == pytest.approx(130e12 / 2)       # per direction
    assert s.total("scale_up_bandwidth") == pytest.approx(72 * 900e9)
    # NVIDIA's 13.4 TB is 72 x 186 summed as decimal GB; the device holds 186 GiB
    assert s.totals["memory"] == 13.4e12
    assert s.total("memory") == pytest.approx(72 * 186 * 2**30)
    assert 72 * 186e9 == pytest.approx(13.4e12, rel=0.01)


def test_cloudmatrix_and_ironwood_totals_by_hand():
    # CloudMatrix384: 384 Ascend 910C at 752 TFLOPS BF16 each (the paper, as summarised in
    # reportify-cloudmatrix384-paper-summary) = 288.8 PF; the published "~289 PFLOPS"
    # (crc-cloudmatrix384)
    cm = system("cloudmatrix-384")
    assert cm.total("bf16") == pytest.approx(384 * 752e12)
    assert cm.totals["bf16"] == 289e15
    iw = system("ironwood-pod")
    assert iw.total("fp8") == pytest.approx(9216 * 4614e12)
    assert iw.totals["fp8"] == pytest.approx(42.5e18)


def test_a_system_s_hardware_carries_its_domain_and_wiring():
    pod = system("tpu-v5e-pod")
    hw = pod.hardware
    assert (hw.scale_up_domain_size, hw.scale_up_topology) == (256, "torus-2d")
    assert tk.hardware(pod) == hw
    assert pod.topology().kind == "torus-2d"


@pytest.mark.parametrize("sid", sorted(load_systems()))
def test_every_system_decodes_multi_chip(sid):
    # Llama 3.1 8B (16.06 GB of BF16 weights) over tp = min(8, domain) chips, with pipeline
    # stages where the chips are SRAM-only (Groq: 230 MB / 500 MB each)
    s = system(sid)
    hw = s.hardware
    tp = min(8, s.domain_size)
    pp = max(1, math.ceil(16.06e9 / tp / (0.9 * hw.mem_usable_bytes)))
    fmt = next(f for f in ("bf16", "fp16", "fp8") if f in hw.peak_flop_per_s) \
        if hw.peak_flop_per_s else "bf16"
    dep = tk.Deployment("llama-3.1-8b", hw, tp=tp, pp=pp, compute_dtype=fmt)
    assert dep.n_devices >= 2
    r = tk.decode(dep, 1, 1024)
    assert r.tokens_per_s_per_user > 0 and r.collective_time_s > 0


def test_a_mesh_slows_a_small_group_s_collectives():
    # MI300X: TP=2 crosses one 64 GB/s link; on a switched domain it would get all 448 GB/s
    mesh = tk.Deployment("llama-3.1-70b", system("mi300x-platform"), tp=2)
    switched = tk.Deployment("llama-3.1-70b", tk.hardware("mi300x").with_(
        scale_up_topology="switched"), tp=2)
    a = tk.decode(mesh, 64, 4096).collective_time_s
    b = tk.decode(switched, 64, 4096).collective_time_s
    assert a > b
    # at TP=8 every link is used: the two agree
    m8 = tk.Deployment("llama-3.1-70b", system("mi300x-platform"), tp=8)
    s8 = tk.Deployment("llama-3.1-70b", tk.hardware("mi300x").with_(
        scale_up_topology="switched"), tp=8)
    assert tk.decode(m8, 64, 4096).collective_time_s == pytest.approx(tk.decode(s8, 64, 4096).collective_time_s)


def _copy(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    shutil.copy(_DIR / name, p)
    return p


@pytest.mark.parametrize("name, old, new, match", [
    ("gb200-nvl72.toml", "value = 72, unit = \"count\"", "value = 36, unit = \"count\"",
     r"field totals.scale_up_bandwidth: published .* away from 36 x gb200"),
    ("gb200-nvl72.toml", 'device = "gb200"', 'device = "gb201"', r"field device: unknown"),
    ("gb200-nvl72.toml", 'topology = "switched"', 'topology = "ring"',
     r"field scale_up.topology: 'ring' is not one of"),
    ("gb200-nvl72.toml", 'source = "aiwiki-gb200-nvl72", note = "72 Blackwell',
     'source = "nowhere", note = "72 Blackwell', r"field devices.source"),
    ("gb200-nvl72.toml", "[scale_up]\n", "[scale_up]\ndomain_size = { value = 7, unit = "
     "\"count\", source = \"aiwiki-gb200-nvl72\" }\n", r"not whole scale-up domains of 7"),
    ("gb200-nvl72.toml", 'status = "shipping"', 'status = "sold"', r"field status"),
    ("gb200-nvl72.toml", "schema = 1", "schema = 1\nrack = 1", r"field rack: unknown key"),
    ("gb300-nvl72.toml", 'value = 142, unit = "kW"', 'value = 42, unit = "kW"',
     r"field power.system: .* less than 72 x 1400 W"),
    ("gb300-nvl72.toml", 'value = 142, unit = "kW"', 'value = 142, unit = "kWh"',
     r"field power.system"),
    ("gb200-nvl72.toml", 'device = "gb200"\n', '', r"field device: required key is missing"),
    ("gb200-nvl72.toml", 'value = 72, unit = "count"', 'value = "72", unit = "count"',
     r"field devices.value: must be a finite number"),
    ("gb200-nvl72.toml", 'value = 72, unit = "count"', 'value = -72, unit = "count"',
     r"field devices: implausible value"),
    ("gb200-nvl72.toml", "schema = 1", "schema = 1\n[[[", r"gb200-nvl72.toml"),
    ("hgx-h100.toml", 'note = "4 NVSwitch chips on the HGX H100 baseboard" }',
     'note = "" }\nbandwidth = { value = 1, unit = "TB/s", direction = "bidirectional", '
     'source = "textbookofai-nvlink" }', r"field switch.bandwidth: .* blocking"),
    # issue 25: read by the schema engine (tokenomics.data.kinds.SYSTEM), also these
    ("gb200-nvl72.toml", 'value = 72, unit = "count"', 'value = 72.5, unit = "count"',
     r"field devices: must be a whole number, got 72.5"),
    ("gb200-nvl72.toml", "[scale_up]\n", "[scale_up]\ndomain_size = { value = 7.5, unit = "
     "\"count\", source = \"aiwiki-gb200-nvl72\" }\n",
     r"field scale_up.domain_size: must be a whole number, got 7.5"),
    ("gb200-nvl72.toml", 'aliases = [', 'aliases = [3, ',
     r"field aliases: must be a list of non-empty strings"),
    ("gb200-nvl72.toml", 'vendor = "NVIDIA"', 'vendor = "  "', r"field vendor: must be a non-empty string"),
    ("gb200-nvl72.toml", "[scale_up]\n", "[scale_up]\nlanes = 18\n",
     r"field scale_up.lanes: unknown key; allowed keys here: name, topology"),
    ("gb200-nvl72.toml", "[totals]\n", "[totals]\nfp64 = { value = 1, unit = \"PFLOP/s\", "
     "source = \"aiwiki-gb200-nvl72\" }\n", r"field totals.fp64: unknown key"),
    ("gb200-nvl72.toml", 'direction = "bidirectional", ', '',
     r"field totals.scale_up_bandwidth.direction: a bandwidth needs direction"),
    ("gb200-nvl72.toml", "schema = 1", "schema = 2",
     r"field schema: must be 1, got 2"),
])
def test_corrupt_system_files_are_caught_by_field(tmp_path, name, old, new, match):
    p = _copy(tmp_path, name)
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(tk.CatalogError, match=match) as exc:
        parse_system_file(p, tk.data.sources())
    assert name in str(exc.value)


def test_tolerance_is_five_percent():
    assert TOTAL_TOLERANCE == 0.05


def test_a_user_catalog_adds_a_system(tmp_path):
    d = tmp_path / "mine" / "hardware" / "systems"
    d.mkdir(parents=True)
    (tmp_path / "mine" / "hardware" / "sources.toml").write_text(
        '[my-quote]\ntitle = "Vendor quote"\npublisher = "Vendor"\nurl = "https://example.com"\n'
        'accessed = "2026-12-01"\nkind = "documentation"\n')
    (d / "h200-16.toml").write_text(
        'schema = 1\nid = "my-h200-pair-of-nodes"\nname = "Two HGX H200 nodes"\nvendor = "me"\n'
        'device = "h200"\ndevices = { value = 16, unit = "count", source = "my-quote" }\n'
        '[scale_up]\ntopology = "switched"\n'
        'domain_size = { value = 8, unit = "count", source = "my-quote" }\n')
    before = tk.data.search_path()
    try:
        tk.data.use_catalog(tmp_path / "mine")
        s = system("my-h200-pair-of-nodes")
        assert (s.devices, s.domain_size) == (16, 8)
    finally:
        tk.data.use_catalog(*before)


def test_unknown_system_lists_the_known():
    with pytest.raises(tk.UnknownEntryError, match="gb200-nvl72"):
        system("nvl576")


def test_a_user_system_may_not_reuse_a_bundled_name(tmp_path):
    d = tmp_path / "mine" / "hardware" / "systems"
    d.mkdir(parents=True)
    (tmp_path / "mine" / "hardware" / "sources.toml").write_text(
        '[q]\ntitle = "t"\npublisher = "p"\nurl = "https://example.com"\n'
        'accessed = "2026-12-01"\nkind = "documentation"\n')
    (d / "x.toml").write_text(
        'schema = 1\nid = "my-rack"\nname = "r"\nvendor = "me"\naliases = ["NVL72_GB200"]\n'
        'device = "gb200"\ndevices = { value = 72, unit = "count", source = "q" }\n'
        '[scale_up]\ntopology = "switched"\n')
    before = tk.data.search_path()
    try:
        tk.data.use_catalog(tmp_path / "mine")
        with pytest.raises(tk.CatalogError, match="'NVL72_GB200' already names system "
                                                  "'gb200-nvl72'"):
            system("my-rack")
    finally:
        tk.data.use_catalog(*before)
