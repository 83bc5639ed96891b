"""The command line's grammar: every subcommand, its defaults and the function it runs."""

from __future__ import annotations

import argparse

import pytest

import tokenomics as tk
from tokenomics.surfaces.arguments import SUBCOMMANDS, add_subcommands


def _parser(commands=None):
    p = argparse.ArgumentParser(prog="tokenomics")
    sub = p.add_subparsers(dest="command", required=True)
    add_subcommands(sub, commands or {n: n for n in SUBCOMMANDS})
    return p, sub


def test_every_subcommand_is_added_in_order_and_runs_its_function():
    p, sub = _parser()
    assert tuple(sub.choices) == SUBCOMMANDS
    assert len(SUBCOMMANDS) == 15   # 12 of release 0.1, steady (issue 12), facility, plan (29)
    # Each subcommand's func is what the caller gave for it (here its own name).
    args = {"hardware": [], "models": [], "calibrate": [], "frontier": ["m"]}
    for name in SUBCOMMANDS:
        a = p.parse_args([name, *args.get(name, ["m", "h"])])
        assert a.func == name and a.command == name


def test_defaults_stated_in_the_help():
    p, _ = _parser()
    d = p.parse_args(["decode", "m", "h"])
    assert (d.batch, d.context, d.tp, d.pp, d.kv_dtype, d.usable_fraction, d.reserve_gb) == (
        [1, 8, 32, 64], [8192], 1, 1, "bf16", 0.9, 0.0)
    assert d.efficiency == "roofline" and d.allreduce == "auto"   # the library's one default
    assert p.parse_args(["report", "m", "h"]).tp is None     # report picks the smallest tp
    r = p.parse_args(["retention", "m", "h"])
    assert (r.context, r.gap_median_min, r.gap_mean_to_median, r.tier) == (
        119_000, 25.0, 15.0, ["dram"])                        # S61, S62, S60
    c = p.parse_args(["cost", "m", "h"])
    assert (c.batch, c.context, c.prompt, c.input_ratio, c.output_ratio) == (
        [64], [4096], None, 3.0, 1.0)
    g = p.parse_args(["disagg", "m", "h"])
    assert (g.link_gbps, g.ttft, g.tpot) == (1600.0, 2.0, 0.05)


def test_types_and_choices_are_enforced():
    p, _ = _parser()
    for argv in (["fit", "m", "h", "--batch", "x"], ["decode", "m", "h", "--allreduce", "x"],
                 ["roofline", "m", "h", "--phase", "x"], ["decode", "m"]):
        with pytest.raises(SystemExit) as exc:
            p.parse_args(argv)
        assert exc.value.code == 2
    a = p.parse_args(["fit", "m", "h", "--batch", "1", "32", "--reserve-gb", "1.5"])
    assert a.batch == [1, 32] and a.reserve_gb == 1.5


def test_missing_or_unknown_commands_are_refused():
    run = {n: print for n in SUBCOMMANDS}
    sub = argparse.ArgumentParser().add_subparsers()
    with pytest.raises(tk.TokenomicsError, match="missing: report"):
        add_subcommands(sub, {k: v for k, v in run.items() if k != "report"})
    with pytest.raises(tk.TokenomicsError, match="unknown: plot"):
        add_subcommands(sub, {**run, "plot": print})
