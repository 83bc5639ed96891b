"""Figures: the numbers drawn are the numbers the library computes (read back from artists)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

import tokenomics as tk  # noqa: E402
from tokenomics.pareto import best_at, frontier  # noqa: E402
from tokenomics.surfaces.plots import (  # noqa: E402
    plot_cost,
    plot_frontier,
    plot_memory,
    plot_retention,
    plot_roofline,
)

L8 = tk.Deployment("llama-3.1-8b", "h100-sxm")
L70_FP8 = tk.Deployment("llama-3.1-70b", "h200", weight_dtype="fp8", kv_dtype="fp8",
                        compute_dtype="fp8")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def front():
    return frontier([L8, tk.Deployment("llama-3.1-8b", "h200"),
                     tk.Deployment("llama-3.1-8b", "h100-sxm", tp=2)], 2048)


def _render(ax: Axes) -> None:
    """Draw the figure once with Agg: errors that only appear at draw time surface here."""
    FigureCanvasAgg(ax.figure).draw()


def _by_gid(ax: Axes, gid: str) -> list:
    return [a for a in ax.get_children() if a.get_gid() == gid]


def _ops(dep, phase, batch, **kw) -> pd.DataFrame:
    t = tk.operator_table(dep, phase, batch=batch, **kw)
    t = t[(t.operator != "total") & (t.flops > 0) & (t.bytes > 0)]
    return t.reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Roofline
# --------------------------------------------------------------------------------------------
def test_roofline_ridge_roofs_and_operators_match_the_library():
    dep = L70_FP8.with_(tp=2)
    ax = plot_roofline(dep, batch=32, context_tokens=4096, prompt_tokens=2048)
    assert isinstance(ax, Axes)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    hw = dep.hardware
    ridge = tk.ridge_point(hw, "fp8")
    peak = hw.peak("fp8")
    (rm,) = _by_gid(ax, "ridge")
    assert rm.get_xdata()[0] == pytest.approx(ridge, rel=1e-12)
    assert rm.get_ydata()[0] == pytest.approx(peak, rel=1e-12)
    (roof,) = _by_gid(ax, "compute_roof")
    assert np.allclose(roof.get_ydata(), peak, rtol=1e-12)
    assert roof.get_xdata()[0] == pytest.approx(ridge)
    (slope,) = _by_gid(ax, "memory_roof")
    x, y = np.asarray(slope.get_xdata()), np.asarray(slope.get_ydata())
    assert np.allclose(y / x, hw.mem_bw_bytes_per_s, rtol=1e-12)   # slope is the bandwidth
    # Operators sit at operator_table's intensities, on the roof min(P, I beta).
    for gid, phase, batch, kw in [
            ("operators:prefill", "prefill", 1, dict(prompt_tokens=2048)),
            ("operators:decode_b1", "decode", 1, dict(context_tokens=4096)),
            ("operators:decode_bB", "decode", 32, dict(context_tokens=4096))]:
        (sc,) = _by_gid(ax, gid)
        t = _ops(dep, phase, batch, **kw)
        off = sc.get_offsets()
        assert np.allclose(off[:, 0], t.intensity_flop_per_byte, rtol=1e-12)
        assert np.allclose(off[:, 1], tk.attainable_flop_per_s(
            t.intensity_flop_per_byte.to_numpy(), peak, hw.mem_bw_bytes_per_s), rtol=1e-9)
    assert "Arithmetic intensity [FLOP/B]" == ax.get_xlabel()
    assert "[FLOP/s]" in ax.get_ylabel()
    assert ax.get_legend() is not None
    _render(ax)


def test_roofline_colours_attention_and_ffn_apart_and_batch_raises_decode_intensity():
    ax = plot_roofline(L8, batch=64, context_tokens=4096, phases=("decode",))
    assert not _by_gid(ax, "operators:prefill")
    (b1,) = _by_gid(ax, "operators:decode_b1")
    (bB,) = _by_gid(ax, "operators:decode_bB")
    assert not np.array_equal(b1.get_paths()[0].vertices, bB.get_paths()[0].vertices)
    ops = _ops(L8, "decode", 1, context_tokens=4096).operator.tolist()
    col = {o: tuple(c) for o, c in zip(ops, b1.get_edgecolors(), strict=True)}   # hollow
    assert col["attn_core"] == col["attn_qkv"] != col["ffn_dense"]
    # The FFN GEMM's intensity grows ~B with the batch; attention's KV read does not.
    i1 = dict(zip(ops, b1.get_offsets()[:, 0], strict=True))
    iB = dict(zip(ops, bB.get_offsets()[:, 0], strict=True))
    assert iB["ffn_dense"] > 30 * i1["ffn_dense"]
    assert iB["attn_core"] == pytest.approx(i1["attn_core"], rel=0.05)
    # Operator names are written beside the markers.
    names = {n for t in ax.texts if t.get_gid() == "operator_label"
             for n in t.get_text().split(", ")}
    assert names == set(ops)


def test_roofline_batch_one_draws_decode_once_and_moe_is_ffn_family():
    ds = tk.Deployment("deepseek-v3", "b200", tp=8, weight_dtype="fp8", compute_dtype="fp8",
                       kv_dtype="fp8", kv_shard="all")
    ax = plot_roofline(ds, batch=1, context_tokens=4096, annotate=False)
    assert _by_gid(ax, "operators:decode_b1") and not _by_gid(ax, "operators:decode_bB")
    assert not [t for t in ax.texts if t.get_gid() == "operator_label"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "FFN / MoE" in labels and "attention" in labels


def test_roofline_draws_the_derated_roof_with_efficiency():
    dep = tk.Deployment("llama-3.1-8b", "h100-sxm", efficiency=tk.Efficiency(mfu=0.5, mbu=0.8))
    ax = plot_roofline(dep, batch=8, context_tokens=1024)
    (d,) = _by_gid(ax, "derated_roof")
    assert max(d.get_ydata()) == pytest.approx(0.5 * dep.hardware.peak("bf16"))
    (sc,) = _by_gid(ax, "operators:decode_bB")
    assert sc.get_offsets()[:, 1].max() <= 0.5 * dep.hardware.peak("bf16") * (1 + 1e-9)


def test_roofline_draws_into_a_given_axes():
    fig, ax = plt.subplots()
    out = plot_roofline(L8, batch=4, context_tokens=1024, ax=ax)
    assert out is ax and out.figure is fig


@pytest.mark.parametrize("kw, match", [
    (dict(batch=-1), "batch"), (dict(batch=0), "batch"), (dict(batch=2.5), "batch"),
    (dict(phases=()), "phases"), (dict(phases=("train",)), "phases"),
    (dict(context_tokens=-5), "context_tokens")])
def test_roofline_rejects_bad_input(kw, match):
    args = dict(batch=8, context_tokens=1024) | kw
    with pytest.raises(tk.TokenomicsError, match=match):
        plot_roofline(L8, **args)


# --------------------------------------------------------------------------------------------
# Frontier
# --------------------------------------------------------------------------------------------
def test_frontier_slo_line_and_best_point_match_best_at(front):
    ax = plot_frontier(front, slo_tokens_per_s_per_user=150)
    assert isinstance(ax, Axes)
    (slo,) = _by_gid(ax, "slo")
    assert np.allclose(slo.get_xdata(), 150)
    best = best_at(front, 150)
    (star,) = _by_gid(ax, "slo_best")
    assert star.get_xdata()[0] == pytest.approx(best.tokens_per_s_per_user)
    assert star.get_ydata()[0] == pytest.approx(best.tokens_per_s_per_device, rel=1e-12)
    assert ax.get_xlabel() == "Interactivity [tokens/s per user]"
    assert ax.get_ylabel() == "Throughput [tokens/s per device]"
    _render(ax)


def test_frontier_lines_hold_every_vertex_of_their_group(front):
    ax = plot_frontier(front, label_cost=False)
    (env,) = _by_gid(ax, "envelope")
    assert np.allclose(env.get_xdata(), front.tokens_per_s_per_user)
    for g, rows in front.groupby("label"):
        (line,) = _by_gid(ax, f"frontier:{g}")
        x = np.asarray(line.get_xdata(), float)
        y = np.asarray(line.get_ydata(), float)
        ok = np.isfinite(x)
        assert np.allclose(np.sort(x[ok]), np.sort(rows.tokens_per_s_per_user))
        assert np.allclose(np.sort(y[ok]), np.sort(rows.tokens_per_s_per_device))
    assert not _by_gid(ax, "cost_label")


def test_frontier_cost_labels_show_the_cost_column(front):
    ax = plot_frontier(front, max_cost_labels=3)
    labels = _by_gid(ax, "cost_label")
    assert 1 <= len(labels) <= 3
    shown = {t.get_text() for t in labels}
    expected = {f"${c:.3g}/Mtok" for c in front.cost_usd_per_mtok}
    assert shown <= expected


def test_frontier_by_hardware_and_with_dominated_points():
    f = frontier([L8, tk.Deployment("llama-3.1-8b", "h200")], 2048, include_dominated=True)
    ax = plot_frontier(f, by="hardware", slo_tokens_per_s_per_user=100)
    assert {a.get_gid() for a in ax.lines} >= {"frontier:h100-sxm", "frontier:h200",
                                               "envelope", "slo", "slo_best"}
    (star,) = _by_gid(ax, "slo_best")
    env = f[~f.dominated]
    assert star.get_ydata()[0] == pytest.approx(best_at(env, 100).tokens_per_s_per_device)
    _render(ax)


def test_frontier_unreachable_slo_draws_the_line_and_a_note(front):
    ax = plot_frontier(front, slo_tokens_per_s_per_user=1e6)
    assert _by_gid(ax, "slo") and not _by_gid(ax, "slo_best")
    (note,) = _by_gid(ax, "slo_note")
    assert "no configuration reaches" in note.get_text()


def test_a_far_slo_renders(front):
    # 1e9 tokens/s per user: the note sat at x = 1e9 in data units, far off the canvas, and
    # the text renderer failed with a raster overflow after the report had written files
    ax = plot_frontier(front, slo_tokens_per_s_per_user=1e9)
    (note,) = _by_gid(ax, "slo_note")
    assert "beyond the frame" in note.get_text()
    _render(ax)


def test_frontier_draws_into_a_given_axes(front):
    fig, ax = plt.subplots()
    assert plot_frontier(front, ax=ax) is ax


@pytest.mark.parametrize("make, match", [
    (lambda f: f.iloc[0:0], "empty"),
    (lambda f: f.drop(columns="tokens_per_s_per_device"), "tokens_per_s_per_device"),
    (lambda f: f.drop(columns="label"), "label"),
    (lambda f: f.to_dict(), "DataFrame")])
def test_frontier_rejects_bad_frames(front, make, match):
    with pytest.raises(tk.TokenomicsError, match=match):
        plot_frontier(make(front))


def test_frontier_rejects_bad_slo(front):
    with pytest.raises(tk.TokenomicsError, match="slo"):
        plot_frontier(front, slo_tokens_per_s_per_user=-3)


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------
def test_memory_bars_sum_to_memory_fit_total_in_gb():
    batches = np.array([1, 16, 64])
    ax = plot_memory(L70_FP8, batches, 8192)
    assert isinstance(ax, Axes)
    fit = tk.memory_fit(L70_FP8, batches, 8192)
    labels = [c.get_label() for c in ax.containers]
    assert labels == ["weights", "KV cache", "workspace", "runtime reserve"]
    heights = np.array([[b.get_height() for b in c] for c in ax.containers])
    assert np.allclose(heights.sum(axis=0), np.asarray(fit.total_bytes) / 1e9, rtol=1e-12)
    assert np.allclose(heights[0], np.asarray(fit.weights_bytes) / 1e9)
    assert np.allclose(heights[1], np.asarray(fit.kv_bytes) / 1e9)
    # Stacked: each bar starts where the previous term ends.
    assert np.allclose([b.get_y() for b in ax.containers[1]], heights[0])
    (usable,) = _by_gid(ax, "usable")
    (cap,) = _by_gid(ax, "capacity")
    assert usable.get_ydata()[0] == pytest.approx(fit.usable_bytes / 1e9)
    assert cap.get_ydata()[0] == pytest.approx(fit.capacity_bytes / 1e9)
    assert "[GB]" in ax.get_ylabel()
    _render(ax)


def test_memory_marks_points_that_do_not_fit_and_broadcasts_context():
    ax = plot_memory(L70_FP8, 256, [4096, 131_072])
    assert len(ax.containers[0]) == 2
    notes = [t.get_text() for t in _by_gid(ax, "total_label")]
    fits = tk.memory_fit(L70_FP8, 256, np.array([4096, 131_072])).fits
    assert ["does not fit" in n for n in notes] == [not f for f in fits]
    assert "C=131072" in ax.get_xticklabels()[1].get_text()


def test_memory_draws_into_a_given_axes():
    fig, ax = plt.subplots()
    assert plot_memory(L8, 1, 1024, ax=ax) is ax


@pytest.mark.parametrize("batch, ctx", [(-1, 1024), (0, 1024), (1.5, 1024), (4, -1)])
def test_memory_rejects_bad_input(batch, ctx):
    with pytest.raises(tk.TokenomicsError):
        plot_memory(L8, batch, ctx)


# --------------------------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------------------------
def test_cost_bar_heights_equal_deployment_cost():
    a = tk.deployment_cost(L70_FP8, 64, 4096, usd_per_device_hour=3.0)
    b = tk.deployment_cost(L8, 32, 2048, usd_per_device_hour=2.0)
    ax = plot_cost([a, b], labels=["70B", "8B"])
    assert isinstance(ax, Axes)
    assert [c.get_label() for c in ax.containers] == ["70B", "8B"]
    for c, cost in zip(ax.containers, (a, b), strict=True):
        h = [bar.get_height() for bar in c]
        assert h == pytest.approx([cost.input_usd_per_mtok, cost.cached_input_usd_per_mtok,
                                   cost.output_usd_per_mtok], rel=1e-12)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["input", "cached input", "output"]
    shown = {t.get_text() for t in ax.texts}
    assert f"${float(a.output_usd_per_mtok):.3g}" in shown
    assert "USD" in ax.get_ylabel()
    _render(ax)


def test_cost_single_log_axes_and_given_axes():
    c = tk.deployment_cost(L8, 8, 1024, usd_per_device_hour=2.5)
    fig, ax = plt.subplots()
    out = plot_cost(c, logy=True, ax=ax)
    assert out is ax and ax.get_yscale() == "log"
    assert "$2.5/device-h" in ax.containers[0].get_label()


@pytest.mark.parametrize("costs, labels, match", [
    ([], None, "empty"), (["x"], None, "DeploymentCost"), (None, ["a", "b"], "labels")])
def test_cost_rejects_bad_input(costs, labels, match):
    if costs is None:
        costs = [tk.deployment_cost(L8, 8, 1024, usd_per_device_hour=2.0)]
    with pytest.raises(tk.TokenomicsError, match=match):
        plot_cost(costs, labels=labels)


def test_cost_rejects_array_costs():
    c = tk.deployment_cost(L8, np.array([8, 16]), 1024, usd_per_device_hour=2.0)
    with pytest.raises(tk.TokenomicsError, match="one"):
        plot_cost(c)


# --------------------------------------------------------------------------------------------
# Retention (S62)
# --------------------------------------------------------------------------------------------
def test_retention_curves_optimum_and_golden_time():
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    stated, gpu = tk.retention_policy(d, 119_000), tk.retention_policy(d, 119_000, miss_usd=0)
    ax = plot_retention([stated, gpu], labels=["stated", "GPU time"])
    by = {}
    for a in ax.get_children():
        by.setdefault(a.get_gid(), []).append(a)
    # The curves are the policies' cost curves over t1 > 0 in minutes.
    for line, p in zip(by["cost_curve"], (stated, gpu), strict=True):
        f = p.to_frame()
        f = f[(f.t1_s > 0) & np.isfinite(f.t1_s)]
        assert np.allclose(line.get_xdata(), f.t1_min) and np.allclose(line.get_ydata(),
                                                                       f.expected_cost_usd)
    assert [line.get_label() for line in by["cost_curve"]] == ["stated", "GPU time"]
    # The stated price's optimum inside 5-10 minutes at its expected cost; GPU time alone at
    # once, drawn at the left edge, its cost the dotted t1 = 0 level.
    (opt,) = by["optimum"]
    assert 5 <= opt.get_xdata()[0] <= 10
    assert opt.get_ydata()[0] == pytest.approx(stated.expected_cost_usd)
    (now,) = by["optimum_at_once"]
    assert now.get_ydata()[0] == pytest.approx(gpu.expected_cost_usd)
    assert by["offload_now"][1].get_ydata()[0] == pytest.approx(gpu.cost_curve_usd[0])
    (span,) = by["golden_time"]
    assert (span.get_x(), span.get_x() + span.get_width()) == (5, 10)
    assert ax.get_xscale() == "log" and "USD" in ax.get_ylabel()
    _render(ax)


@pytest.mark.parametrize("policies, labels, match", [
    ([], None, "empty"), (["x"], None, "RetentionPolicy"), (None, ["a", "b"], "labels")])
def test_retention_rejects_bad_input(policies, labels, match):
    if policies is None:
        policies = tk.retention_policy(tk.Deployment("llama-3.1-8b", "h100-sxm"), 8192)
    with pytest.raises(tk.TokenomicsError, match=match):
        plot_retention(policies, labels=labels)


def test_plots_module_imports_no_pyplot_state():
    """Creating a figure without ax leaves pyplot's figure list untouched."""
    plt.close("all")
    plot_cost(tk.deployment_cost(L8, 8, 1024, usd_per_device_hour=2.0))
    assert plt.get_fignums() == []
