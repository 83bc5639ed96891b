"""The sources' point claims swept over the conditions they depend on (issue 28).

A claim such as "continuous batching gives 2-4x" (S21) or "prefix reads are ~60% of an
agent step's cost" (S61) is true at some conditions and not at others. A test at one chosen
point says only that the point exists; :func:`claim_conditions` sweeps the claim over the
two conditions it depends on most, computes the library's figure at each, marks where it
falls inside the source's stated range, and states the region in a sentence. The docs page
``docs/generated/conditions.md`` shows each sweep as a table and a figure.

Notes
-----
Each sweep is a grid over two conditions, every other input held at the value the claim's
reproduction in ``tests/test_claims.py`` uses:

* **S17** (the seed's sentence beside it: NVFP4 "contributes up to 5x end-to-end
  inference speed over Hopper"): the best throughput per GPU at an interactivity
  (:func:`tokenomics.best_at`) on B200 at NVFP4 over H200 at FP8, for a dense model
  (Llama 3.3 70B, tensor parallel over 1-8 GPUs) and a MoE (DeepSeek-V3, tensor and expert
  parallel over 4-32 GPUs, with and without attention data parallelism), 2,048 tokens of
  context, FP8 KV, under the calibrated forecast (``ratio``), the bound (``ratio_bound``) and
  with B200 at FP8 (``ratio_fp8``: the chip without the format). "Up to 5x" is read as 5x or
  more.
* **S18** (contiguous KV allocation wastes 60-80% of KV memory; paged allocation gives 2-4x
  throughput): :func:`tokenomics.kv_waste_fraction` and
  :func:`tokenomics.kv_capacity_sequences` for OPT-13B on an A100 80GB, final lengths
  lognormal with median 420 tokens, over the length spread :math:`\\sigma` and the length a
  contiguous allocator reserves per sequence.
* **S21** (continuous batching gives 2-4x older systems):
  :func:`tokenomics.batching_throughput` for Llama 3.1 8B on an H100 with 512-token prompts
  and lognormal outputs of median 200 tokens (20,000 seeded draws), over the output spread and
  the batch slots.
* **S27** (a fast mode gives ~2.5x the speed for ~6x the price): the throughput per device
  given up for 2.5x the speed per user (:func:`tokenomics.speed_premium` on
  :func:`tokenomics.frontier`, 8,192 tokens of context, FP8 weights and KV) from a base
  tier, for a dense 70B (Llama 3.3 70B on H100 or H200, tensor parallel over 2-8 GPUs) and a
  671B MoE on one node (DeepSeek-V3 on 8 x B200, expert parallel), under the calibrated
  forecast (``premium``) and the bound (``premium_bound``), over the base tier. The physics
  explains the price where the premium is 5.5x or more ("6x" to one significant figure).
* **S33** (two providers with the same headline price differ 3x on real traffic):
  :func:`tokenomics.blended_price` of a $3 / $15 price with cached input at $0.30 against the
  same price without a cache discount, over the input tokens per output token and the cache
  hit rate. "3x" is read to one significant figure: 2.5 to 3.5.
* **S41** (GB200 NVL72 gives up to 30x an H100 cluster on trillion-parameter models):
  the best throughput per GPU at an interactivity (:func:`tokenomics.best_at`) of Kimi K2 (a
  1.04T-parameter MoE; NVIDIA's GPT-MoE-1.8T is not public) on GB200 at NVFP4 (tensor,
  expert and attention-data parallel over 8-64 GPUs of the rack's NVLink domain) over the
  same on H100 at FP8 (8-GPU NVLink nodes: pipelines of 2-4 nodes, or tensor, expert and
  attention-data parallel over 16-64 GPUs across InfiniBand), FP8 KV on both, under the calibrated
  forecast (``ratio``) and the bound (``ratio_bound``), over the interactivity and the
  context (the vendor's 32,768 in / 1,024 out decodes at about 33,280 tokens). "Up to 30x"
  is read as 30x or more.
* **S61** (prefix reads are ~60% of an agent step's cost): the prefix KV share of
  :func:`tokenomics.agent_step` for Llama 3.1 70B FP8 on 8 x H100 with 875 new and 214 output
  tokens, over the cached prefix and the agents stepping together (a point whose prefixes do
  not fit the HBM has no share, ``fits`` False). "~60%" is read as 55-65%.
* **S62** (keep an idle session's KV in HBM for a 5-10 minute "golden time", then offload):
  the HBM residence of :func:`tokenomics.retention_policy` for a 119,000-token Llama 3.1 70B
  context on 8 x H100 (BF16 KV, 39.0 GB) with DRAM as the next tier, over the price put on
  a cache miss (per million context tokens: the user's wait and the provider's lost work,
  which the sources do not price) and the median gap between a session's requests (the
  mean 15x the median, as S60 has it).

References
----------
.. [1] The seed digest's claims S18, S21, S33 and S61 (``shared/docs/seed-digest.md``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core.errors import DoesNotFitError, TokenomicsError

#: The claims :func:`claim_conditions` sweeps.
CLAIMS = ("S17", "S18", "S21", "S27", "S33", "S41", "S61", "S62")


@dataclass(frozen=True)
class ClaimSweep:
    """A claim swept over two conditions.

    Attributes
    ----------
    claim : str
        The digest id (``"S21"``...).
    statement : str
        The claim as the source states it.
    value : str
        The figure swept (a column of :attr:`frame`).
    low, high : float
        The range the source's words allow for it.
    rows, columns : str
        The two conditions (columns of :attr:`frame`): one line per ``columns`` value.
    frame : pandas.DataFrame
        One row per grid point: both conditions, the figure(s) and ``holds`` (the figure
        within ``[low, high]``).
    condition : str
        Where the claim holds, in a sentence computed from :attr:`frame`.
    """

    claim: str
    statement: str
    value: str
    low: float
    high: float
    rows: str
    columns: str
    frame: pd.DataFrame
    condition: str


def claim_conditions(claim: str) -> ClaimSweep:
    """Sweep one of the sources' point claims over the two conditions it depends on.

    Parameters
    ----------
    claim : str
        A digest id of :data:`CLAIMS`: ``"S17"``, ``"S18"``, ``"S21"``, ``"S33"``, ``"S41"``
        or ``"S61"``.

    Returns
    -------
    ClaimSweep
        The grid (:attr:`ClaimSweep.frame`), the source's range and a sentence saying where
        the library's figure falls inside it (module notes give each sweep's inputs).

    Raises
    ------
    TokenomicsError
        For a claim that is not one of :data:`CLAIMS`.

    Examples
    --------
    By hand, 20 input tokens per output token at a 90% hit rate:
    (20 x 3 + 15) / (20 x (0.1 x 3 + 0.9 x 0.3) + 15) = 75 / 26.4 = 2.84.

    >>> s = claim_conditions("S33")
    >>> row = s.frame.query("input_per_output == 20 and cache_hit_rate == 0.9")
    >>> round(float(row.ratio.iloc[0]), 4), bool(row.holds.iloc[0])
    (2.8409, True)
    """
    if not isinstance(claim, str) or claim not in _SWEEPS:
        raise TokenomicsError(f"claim must be one of {', '.join(CLAIMS)} (the digest ids "
                              f"claim_conditions sweeps), got {claim!r}")
    return _SWEEPS[claim]()


def _grid(rows: str, row_values: Any, columns: str, column_values: Any) -> pd.DataFrame:
    r, c = np.meshgrid(np.asarray(row_values), np.asarray(column_values), indexing="ij")
    return pd.DataFrame({rows: r.ravel(), columns: c.ravel()})


def condition_label(v: Any) -> str:
    """A condition's value as text: numbers in ``%g``, anything else as it is."""
    return f"{v:g}" if isinstance(v, (int, float, np.number)) else str(v)


def _where(frame: pd.DataFrame, rows: str, columns: str) -> str:
    """Per value of ``columns``, the ``rows`` values at which the claim holds."""
    parts = []
    for c, g in frame.groupby(columns, sort=False):
        at = np.flatnonzero(g.holds.to_numpy())
        held = [f"{v:g}" for v in g[rows].to_numpy()[at]]
        run = len(at) > 1 and bool(np.all(np.diff(at) == 1))    # neighbours on the grid
        span = ("nowhere on the grid" if not held else f"{held[0]} to {held[-1]}" if run
                else ", ".join(held))
        parts.append(f"{columns} {condition_label(c)}: {rows} {span}")
    return "; ".join(parts)


def _sweep(claim: str, statement: str, value: str, band: tuple[float, float],
           axes: tuple[str, str], frame: pd.DataFrame, lead: str) -> ClaimSweep:
    (low, high), (rows, columns) = band, axes
    frame = frame.assign(holds=(frame[value] >= low) & (frame[value] <= high))
    return ClaimSweep(claim, statement, value, low, high, rows, columns, frame,
                      f"{lead} Holds at {_where(frame, rows, columns)}.")


def _s17_layouts(model: str, hw: str, dtype: str, eff: Any) -> list[Any]:
    import tokenomics as tk

    m = tk.model(model)
    layouts = (((4, 1), (4, 4), (8, 1), (8, 8), (16, 1), (16, 16), (32, 32)) if m.moe
               else ((1, 1), (2, 1), (4, 1), (8, 1)))
    out = []
    for tp, dp in layouts:
        try:
            out.append(tk.Deployment(m, hw, tp=tp, ep=tp if m.moe else 1, dp_attention=dp,
                                     weight_dtype=dtype, compute_dtype=dtype, kv_dtype="fp8",
                                     efficiency=eff))
        except TokenomicsError:                    # a layout the model cannot take
            continue
    return out


def _s17() -> ClaimSweep:
    import tokenomics as tk

    models = ("llama-3.3-70b", "deepseek-v3")
    f = _grid("tokens_per_s_per_user", (10, 25, 50, 75, 100, 150), "model", models)
    cal = tk.efficiency_presets()["calibrated"]
    cols: dict[str, list[float]] = {}
    for name, eff, fmt in (("", cal, "nvfp4"), ("_fp8", cal, "fp8"),
                           ("_bound", tk.ROOFLINE, "nvfp4")):
        h200 = {m: _s17_layouts(m, "h200", "fp8", eff) for m in models}
        b200 = {m: _s17_layouts(m, "b200", fmt, eff) for m in models}
        h = _best_per_row(f.model.map(h200), f.tokens_per_s_per_user, 2048)
        b = _best_per_row(f.model.map(b200), f.tokens_per_s_per_user, 2048)
        cols[f"ratio{name}"] = list(np.divide(b, h))
    f = f.assign(**cols)
    low = f[f.tokens_per_s_per_user <= 25]
    return _sweep("S17", "NVFP4 contributes up to 5x end-to-end inference speed over Hopper",
                  "ratio", (5.0, math.inf), ("tokens_per_s_per_user", "model"), f,
                  f"At low interactivity (up to 25 tokens/s per user) B200 at NVFP4 gives "
                  f"{low.ratio.min():.1f}-{low.ratio.max():.1f}x H200 at FP8 per GPU, of "
                  f"which B200 at FP8 already gives {low.ratio_fp8.min():.1f}-"
                  f"{low.ratio_fp8.max():.1f}x (the bound: {low.ratio_bound.min():.1f}-"
                  f"{low.ratio_bound.max():.1f}x). Like S41's, the multiple grows where "
                  f"Hopper nears the fastest its layouts reach.")


def _s18() -> ClaimSweep:
    import tokenomics as tk

    dep = tk.Deployment("opt-13b", "a100-80gb")
    f = _grid("length_sigma", (0.3, 0.5, 0.7, 0.9, 1.1), "reserved_tokens", (768, 1024, 2048))
    waste, paged, gain = [], [], []
    for s, cap in zip(f.length_sigma, f.reserved_tokens, strict=True):
        mix = tk.LengthDistribution.lognormal(420, float(s), int(cap))
        waste.append(float(tk.kv_waste_fraction(mix, "contiguous", max_tokens=int(cap))))
        paged.append(float(tk.kv_waste_fraction(mix, "paged", max_tokens=int(cap))))
        gain.append(float(tk.kv_capacity_sequences(dep, mix, "paged", max_tokens=int(cap))
                          .paged_over_contiguous))
    f = f.assign(contiguous_waste=waste, paged_waste=paged, paged_over_contiguous=gain)
    spans = ", ".join(f"{cap / 420:.1f}x the median ({cap:,} tokens) wastes "
                      f"{g.min():.0%}-{g.max():.0%}"
                      for cap, g in f.groupby("reserved_tokens").contiguous_waste)
    return _sweep("S18", "contiguous KV allocation wastes 60-80% of KV memory; paged "
                  "allocation wastes little and gives 2-4x throughput", "contiguous_waste",
                  (0.60, 0.80), ("length_sigma", "reserved_tokens"), f,
                  f"The waste is set by what a contiguous allocator reserves per sequence "
                  f"against what the sequence uses: reserving {spans}. 16-token paged blocks "
                  f"waste at most {max(paged):.1%}, and hold "
                  f"{min(gain):.1f}-{max(gain):.1f}x the sequences.")


def _s21() -> ClaimSweep:
    import tokenomics as tk

    dep = tk.Deployment("llama-3.1-8b", "h100-sxm")
    f = _grid("output_sigma", (0.25, 0.5, 0.75, 1.0, 1.25, 1.5), "slots", (8, 32, 128))
    ratio = []
    for s, slots in zip(f.output_sigma, f.slots, strict=True):
        rng = np.random.default_rng(0)
        outs = np.round(rng.lognormal(np.log(200), float(s), 20_000)) + 1
        ratio.append(float(tk.batching_throughput(dep, int(slots), 512, outs).ratio))
    f = f.assign(continuous_over_static=ratio)
    return _sweep("S21", "continuous batching gives 2-4x older (static-batch) serving systems",
                  "continuous_over_static", (2.0, 4.0), ("output_sigma", "slots"), f,
                  "A static batch waits for its longest output, so the gain grows with the "
                  "spread of output lengths and with the slots a batch holds (more draws, a "
                  "longer maximum).")


def _s27() -> ClaimSweep:
    import tokenomics as tk

    fp8 = dict(weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8")
    fleets = {"llama-3.3-70b": [tk.Deployment("llama-3.3-70b", h, tp=t, **fp8)
                                for h in ("h100-sxm", "h200") for t in (2, 4, 8)],
              "deepseek-v3": [tk.Deployment("deepseek-v3", "b200", tp=8, ep=8, kv_shard="all",
                                            **fp8)]}
    f = _grid("base_tokens_per_s_per_user", (10, 15, 20, 30, 40, 50, 60), "model",
              tuple(fleets))
    cols: dict[str, list[float]] = {}
    for name, preset in (("", "calibrated"), ("_bound", "roofline")):
        with warnings.catch_warnings():             # layouts too small for the context
            warnings.simplefilter("ignore", UserWarning)
            fronts = {m: tk.frontier(d, context_tokens=8192, efficiency=preset, on_oom="skip")
                      for m, d in fleets.items()}
        cols[f"premium{name}"] = [_premium(fronts[m], x) for x, m in
                                  zip(f.base_tokens_per_s_per_user, f.model, strict=True)]
    f = f.assign(**cols)
    dense = f[f.model == "llama-3.3-70b"]
    tiers = f[(f.model == "deepseek-v3") & (f.premium_bound >= 5.5)].base_tokens_per_s_per_user
    return _sweep("S27", "a fast mode gives ~2.5x the speed for ~6x the price", "premium",
                  (5.5, math.inf), ("base_tokens_per_s_per_user", "model"), f,
                  f"A dense 70B widens its tensor parallelism for speed, so 2.5x the speed "
                  f"costs it at most {dense.premium.max():.1f}x its throughput (the bound: "
                  f"{dense.premium_bound.max():.1f}x), and a 6x price is mostly margin. A 671B "
                  f"MoE on one node reads fewer experts at a smaller batch, and its "
                  f"throughput collapses past a base tier that moves with the efficiency "
                  f"assumed: under the bound the premium is 5.5x or more from "
                  f"{tiers.min():g} to {tiers.max():g} tokens/s per user.")


def _premium(frontier: Any, base: float) -> float:
    from tokenomics.pareto.premium import speed_premium

    try:
        return float(speed_premium(frontier, base, 2.5).throughput_ratio)
    except TokenomicsError:                        # 2.5x the base is past the frontier
        return math.nan


def _s33() -> ClaimSweep:
    import tokenomics as tk

    cached = tk.price("anthropic/claude-sonnet-4.x")
    plain = tk.ApiPrice(id="c/no-cache", provider="C", model="x", date="2026", input=3.0,
                        cached_input=3.0, cache_write_5m=None, cache_write_1h=None,
                        output=15.0, batch_discount=None, sources={})
    f = _grid("input_per_output", (1, 5, 10, 20, 50), "cache_hit_rate", (0.0, 0.5, 0.8, 0.9,
                                                                          0.95))
    r = np.asarray(f.input_per_output, float)
    h = np.asarray(f.cache_hit_rate, float)
    ratio = np.asarray(tk.blended_price(plain, r, 1, h) / tk.blended_price(cached, r, 1, h))
    f = f.assign(ratio=ratio)
    return _sweep("S33", "two providers with the same headline price can differ 3x on real "
                  "traffic (input:output ratio, cache hit rate, tier)", "ratio", (2.5, 3.5),
                  ("input_per_output", "cache_hit_rate"), f,
                  "Only a cache discount separates the two, so the spread needs input-heavy "
                  "traffic and a high hit rate.")


def _s61() -> ClaimSweep:
    import tokenomics as tk

    dep = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8, weight_dtype="fp8",
                        compute_dtype="fp8")
    f = _grid("batch", (1, 2, 4, 8, 16), "cached_tokens", (16_000, 32_000, 64_000, 119_000))
    share = []
    for b, c in zip(f.batch, f.cached_tokens, strict=True):
        try:
            share.append(float(tk.agent_step(dep, int(c), 875, 214, batch=int(b))
                               .prefix_kv_share))
        except DoesNotFitError:                    # the agents' prefixes overflow the HBM
            share.append(math.nan)
    f = f.assign(prefix_kv_share=share, fits=np.isfinite(share))
    held = f[(f.prefix_kv_share >= 0.55) & (f.prefix_kv_share <= 0.65)]
    read = held.batch * held.cached_tokens
    return _sweep("S61", "a typical agent step reads a ~119K-token cached prefix; prefix reads "
                  "are ~60% of the cost", "prefix_kv_share", (0.55, 0.65),
                  ("batch", "cached_tokens"), f,
                  f"One agent alone is bound by the weights it reads every step; the prefix "
                  f"reads dominate once several agents share the steps or the prefix is "
                  f"long: the share is near 60% where a step reads {read.min():,.0f}-"
                  f"{read.max():,.0f} prefix tokens in all (agents x prefix).")


def _best_per_row(fleets: Any, interactivity: Any, context: Any) -> list[float]:
    """:func:`_best` of each grid row: its fleet, interactivity and context (a scalar context
    serves every row)."""
    ctxs = np.broadcast_to(np.asarray(context), (len(interactivity),))
    return [_best(d, float(x), int(c)) for d, x, c in zip(fleets, interactivity, ctxs,
                                                          strict=True)]


def _best(deps: list[Any], x: float, ctx: int) -> float:
    import tokenomics as tk

    try:
        with warnings.catch_warnings():            # layouts too small for the context are
            warnings.simplefilter("ignore", UserWarning)   # skipped: expected in a sweep
            return float(tk.best_at(deps, x, context_tokens=ctx).tokens_per_s_per_device)
    except TokenomicsError:                        # no layout reaches the interactivity
        return math.nan


def _s41_layouts(eff: Any) -> tuple[list[Any], list[Any]]:
    import tokenomics as tk

    def make(hw: str, dtype: str, layouts: tuple[tuple[int, int, int], ...]) -> list[Any]:
        return [tk.Deployment("kimi-k2", hw, tp=tp, pp=pp, ep=tp, dp_attention=dp,
                              weight_dtype=dtype, compute_dtype=dtype, kv_dtype="fp8",
                              efficiency=eff) for tp, pp, dp in layouts]

    h100 = make("h100-sxm", "fp8", ((8, 2, 1), (8, 4, 1), (16, 1, 1), (16, 1, 16), (32, 1, 32),
                                     (64, 1, 64)))
    gb200 = make("gb200", "nvfp4", ((8, 1, 1), (8, 1, 8), (16, 1, 16), (32, 1, 32),
                                     (64, 1, 64)))
    return h100, gb200


def _s41() -> ClaimSweep:
    import tokenomics as tk

    f = _grid("tokens_per_s_per_user", (10, 20, 30, 50, 75, 100, 150), "context_tokens",
              (4096, 33_280))
    cols: dict[str, list[float]] = {}
    for name, eff in (("", tk.efficiency_presets()["calibrated"]), ("_bound", tk.ROOFLINE)):
        h100, gb200 = _s41_layouts(eff)
        h = _best_per_row([h100] * len(f), f.tokens_per_s_per_user, f.context_tokens)
        g = _best_per_row([gb200] * len(f), f.tokens_per_s_per_user, f.context_tokens)
        cols |= {f"h100{name}": h, f"gb200{name}": g, f"ratio{name}": list(np.divide(g, h))}
    f = f.assign(**cols)
    low = f[f.tokens_per_s_per_user <= 30]
    bw = tk.hardware("gb200").mem_bw_bytes_per_s / tk.hardware("h100-sxm").mem_bw_bytes_per_s
    return _sweep("S41", "GB200 NVL72 gives up to 30x an H100 cluster on trillion-parameter "
                  "models", "ratio", (30.0, math.inf), ("tokens_per_s_per_user",
                                                        "context_tokens"), f,
                  f"At low interactivity (up to 30 tokens/s per user) GB200 gives "
                  f"{low.ratio.min():.1f}-{low.ratio.max():.1f}x per GPU (the bound "
                  f"{low.ratio_bound.min():.1f}-{low.ratio_bound.max():.1f}x): FP4 against "
                  f"FP8, {bw:.1f}x the HBM bandwidth and the rack's NVLink against "
                  f"InfiniBand between nodes. The multiple grows with the interactivity asked for, because "
                  f"H100's throughput collapses near the fastest its layouts reach; 30x is "
                  f"a figure of that edge.")


def _s62() -> ClaimSweep:
    import tokenomics as tk

    dep = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=8)
    f = _grid("miss_usd_per_mtok", (0.0, 1.0, 2.0, 4.0, 8.4, 16.0, 32.0), "median_gap_min",
              (5, 10, 25, 60))
    t1 = [float(tk.retention_policy(dep, 119_000, miss_usd=m * 1e-6 * 119_000,
                                    gap=tk.GapDistribution.from_median_mean(g * 60.0, 15.0)
                                    ).t1_s) / 60.0
          for m, g in zip(f.miss_usd_per_mtok, f.median_gap_min, strict=True)]
    f = f.assign(golden_time_min=t1)
    at25 = f[(f.median_gap_min == 25)]
    return _sweep("S62", "keep an idle session's KV in HBM for a 5-10 minute golden time, then "
                  "offload", "golden_time_min", (5.0, 10.0), ("miss_usd_per_mtok",
                                                             "median_gap_min"), f,
                  f"On GPU cost alone (a miss priced at $0) the KV leaves HBM at once: "
                  f"reloading it from DRAM costs less than holding it. The golden time is the "
                  f"price of a miss: at the source's 25-minute median gap it runs from "
                  f"{at25.golden_time_min.min():.1f} to {at25.golden_time_min.max():.1f} min "
                  f"as that price goes from $0 to $32 per million context tokens, and "
                  f"shorter gaps keep the KV longer at the same price.")


_SWEEPS = {"S17": _s17, "S18": _s18, "S21": _s21, "S27": _s27, "S33": _s33, "S41": _s41,
           "S61": _s61, "S62": _s62}

__all__ = ["CLAIMS", "ClaimSweep", "claim_conditions", "condition_label"]
