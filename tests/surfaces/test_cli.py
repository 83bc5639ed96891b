"""The tokenomics command line: tables, CSV/JSON output, one-line errors with status 2."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import tokenomics as tk
from tokenomics.surfaces.cli import main


def test_decode_csv_and_json(tmp_path, capsys):
    csv, js = tmp_path / "d.csv", tmp_path / "d.json"
    rc = main(["decode", "llama-3.1-8b", "h100-sxm", "--batch", "1", "8", "--context", "1024",
               "--csv", str(csv), "--json", str(js)])
    assert rc == 0
    out = _both(capsys)
    assert "pure roofline bound" in out                 # the library's one default
    assert main(["decode", "llama-3.1-8b", "h100-sxm", "--efficiency", "calibrated"]) == 0
    assert "calibrated forecast" in _both(capsys)
    df = pd.read_csv(csv)
    assert list(df.batch) == [1, 8] and df.step_time_s.dtype.kind == "f"
    assert json.loads(js.read_text())[0]["context_tokens"] == 1024


def test_fit_reports_every_term(capsys):
    assert main(["fit", "llama-3.1-405b", "h100-sxm", "--batch", "32", "--context", "131072",
                 "--usable-fraction", "1", "--multiple-of", "8"]) == 0
    out = capsys.readouterr().out
    for col in ("weights_gb", "kv_gb", "workspace_gb", "reserve_gb", "usable_gb", "max_batch",
                "min_devices"):
        assert col in out
    assert " 40" in out.splitlines()[-1]   # S15: 38 -> 40 in multiples of 8


@pytest.mark.parametrize("args", [["hardware"], ["hardware", "h200"], ["models"],
                                  ["models", "gpt-oss-120b"],
                                  ["prefill", "llama-3.1-8b", "h100", "--prompt", "4096"],
                                  ["roofline", "llama-3.1-70b", "h100", "--tp", "4"]])
def test_commands_run(args, capsys):
    assert main(args) == 0
    assert capsys.readouterr().out.strip()


def test_facility_waterfall_adds_up_to_the_facilitys_cost(tmp_path, capsys):
    # Issue 29: the cost waterfall from the command line. At $3 a device-hour each serving
    # device-hour sells 3,600 x r tokens, so the rental part is 3 / (3,600 r) x 1e6 USD/Mtok
    # for r output tokens/s per device (the title states r); the parts add up to the plain
    # table's usd_per_mtok at each budget.
    args = ["facility", "llama-3.1-70b", "hgx-b200", "--tp", "8", "--power-mw", "1", "10",
            "--price", "3", "--sla", "0.999"]
    w, t = tmp_path / "w.csv", tmp_path / "t.csv"
    assert main([*args, "--waterfall", "--csv", str(w)]) == 0
    rate = float(capsys.readouterr().err.split(" output tok/s per device")[0].split()[-1])
    assert main([*args, "--csv", str(t)]) == 0
    parts = pd.read_csv(w).set_index("part")[["1 MW", "10 MW"]]    # one column per budget
    table = pd.read_csv(t)
    assert list(parts.index) == ["rental", "stranded", "spares", "total"]
    assert parts.loc["rental"].to_numpy() == pytest.approx(3 / (3600 * rate) * 1e6, rel=1e-3)
    assert parts.loc["total"].to_numpy() == pytest.approx(table.usd_per_mtok.to_numpy())
    assert parts.drop("total").sum().to_numpy() == pytest.approx(table.usd_per_mtok.to_numpy())
    assert (parts.loc["spares"] > 0).all()          # an SLA holds replicas back


def test_retention_shows_the_stated_default_beside_gpu_time_only(tmp_path, capsys):
    # S62 on the source's session: 119,000 tokens x 327,680 B = 39.0 GB of KV on 8 x H100.
    csv = tmp_path / "r.csv"
    assert main(["retention", "llama-3.1-70b", "h100-sxm", "--tp", "8", "--tier", "dram", "ssd",
                 "--efficiency", "calibrated", "--csv", str(csv)]) == 0
    assert "39.0 GB of KV" in _both(capsys)
    df = pd.read_csv(csv).set_index(["tier", "miss_pricing"])
    stated, gpu = df.loc[("dram", "stated default")], df.loc[("dram", "GPU time only")]
    assert stated.miss_usd == pytest.approx(119_000 * 8.4e-6)     # $8.40 per million tokens
    assert 5 <= stated.keep_in_hbm_min <= 10 and gpu.keep_in_hbm_min == 0
    assert stated.p_hbm_hit + stated.p_reload + stated.p_recompute == pytest.approx(1.0)
    assert df.loc[("ssd", "GPU time only")].drop_after_h > gpu.drop_after_h   # cheaper to hold
    # 100 sessions (the default): Little's law puts ~1.5 idle sessions in HBM and ~32 in DRAM
    # (the calibrated recompute of a 119,000-token prompt is slow: attention kernels run at
    # a fraction of the GEMMs' fraction of peak, so DRAM copies are kept for hours, not the
    # minutes HBM holds them).
    assert 1 < stated.idle_in_hbm < 2 and 20 < stated.idle_in_tier < 60
    assert 4 < stated.drop_after_h < 24
    assert stated.tier_fraction_used == pytest.approx(stated.idle_in_tier * 39.0e9 / 2e12,
                                                      rel=1e-3)
    # An explicit price replaces the default; zero prints one row per tier.
    assert main(["retention", "llama-3.1-70b", "h100-sxm", "--tp", "8", "--miss-usd", "0",
                 "--csv", str(csv)]) == 0
    assert list(pd.read_csv(csv).miss_pricing) == ["given"]


@pytest.mark.parametrize("args, match", [
    (["retention", "llama-3.1-70b", "h100-sxm", "--tp", "8", "--miss-usd", "-1"],
     "miss_usd must be >= 0 [USD], got -1"),
    (["retention", "llama-3.1-70b", "h100-sxm", "--tp", "8", "--tier", "disk"],
     "unknown KV tier 'disk'"),
    (["decode", "nope", "h100"], "unknown model 'nope'"),
    (["decode", "llama-3.1-8b", "h100", "--batch", "0"], "batch must be a whole number >= 1"),
    (["decode", "llama-3.1-8b", "h100", "--weight-dtype", "fp7"], "unknown numeric format"),
    (["decode", "llama-3.1-8b", "h100", "--context", "999999"], "maximum context"),
])
def test_bad_input_one_line_status_2(args, match, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and err.count("\n") == 1


def test_argparse_errors_are_one_line():
    with pytest.raises(SystemExit) as exc:
        main(["decode"])
    assert exc.value.code == 2


@pytest.mark.parametrize("args, cols", [
    (["frontier", "llama-3.1-8b", "--hardware", "h100-sxm", "h200", "--tp", "1", "2",
      "--context", "2048", "--slo", "100"], {"tokens_per_s_per_user", "cost_usd_per_mtok"}),
    (["cost", "llama-3.1-8b", "h100-sxm", "--batch", "32", "--context", "2048"],
     {"phase", "usd_per_mtok"}),
    (["disagg", "llama-3.1-8b", "h100-sxm", "--devices", "8", "--input", "1024", "--output",
      "128", "--tpot", "0.05"], {"layout", "goodput_req_per_s_per_device"}),
    (["fit", "llama-3.1-70b", "h200", "--tp", "2"], {"weights_gb", "kv_gb"}),
    (["prefill", "llama-3.1-8b", "h100", "--prompt", "4096"], {"ttft_s"}),
    (["roofline", "llama-3.1-8b", "h100", "--phase", "prefill"], {"operator", "bound"}),
    (["hardware"], {"id", "mem_bw_tb_per_s"}),
    (["report", "llama-3.1-8b", "h100-sxm", "--context", "1024", "--out", "{tmp}/r"],
     {"batch", "tokens_per_s_per_device"}),
    (["models"], {"id", "params_total_b"}),
])
def test_every_command_writes_parseable_csv(args, cols, tmp_path, capsys):
    out = tmp_path / "out.csv"
    args = [x.replace("{tmp}", str(tmp_path)) for x in args]
    assert main([*args, "--csv", str(out)]) == 0
    df = pd.read_csv(out)
    assert cols <= set(df.columns) and len(df) >= 1


def test_frontier_command_errors(capsys):
    assert main(["frontier", "llama-3.1-405b", "--hardware", "l40s", "--tp", "1"]) == 2
    err = capsys.readouterr().err
    assert "no deployment fits one sequence" in err and "add devices (--tp)" in err
    # tp=3 does not divide the 8B's 32 query heads: no valid layout, said once, status 2.
    assert main(["frontier", "llama-3.1-8b", "--hardware", "h100-sxm", "--tp", "3"]) == 2
    err = capsys.readouterr().err
    assert "skipped h100-sxm tp=3" in err and "no valid configuration" in err


def test_report_writes_its_files(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["report", "llama-3.1-8b", "h100-sxm", "--context", "2048", "--out",
                 str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"report.txt", "decode.csv", "memory.csv", "frontier.csv", "operators.csv",
            "roofline.png", "frontier.png", "memory.png"} <= names
    assert pd.read_csv(out / "decode.csv").tokens_per_s_per_device.dtype.kind == "f"
    assert (out / "roofline.png").read_bytes()[:4] == b"\x89PNG"
    assert "max batch" in (out / "report.txt").read_text()


def test_report_xlsx_writes_the_sizing_workbook(tmp_path, capsys):
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "rep"
    assert main(["report", "llama-3.1-8b", "h100-sxm", "--context", "2048", "--out",
                 str(out), "--xlsx", "--price", "2.5"]) == 0
    wb = openpyxl.load_workbook(out / "sizing.xlsx")
    assert wb.sheetnames == ["about", "1 llama-3.1-8b h100-sxm tp1", "compare"]
    rows = {r[0]: r[1] for r in wb.worksheets[1].iter_rows(values_only=True)}
    # batch min(64, max batch) at the report's context; the price typed on the command line
    assert (rows["batch"], rows["context tokens"], rows["price per device-hour"]) == \
        (64, 2048, 2.5)
    assert sorted(rows["step time"][1:].split("+")) == [
        "exposed_communication_1", "host_time_per_step_1", "overhead_per_step_1",
        "roofline_time_1"]
    # the report's own line and the workbook say the same tokens/s per device (issue 26)
    data = openpyxl.load_workbook(out / "sizing.xlsx", data_only=True).worksheets[1]
    cached = {r[0]: r[1] for r in data.iter_rows(values_only=True)}
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    assert cached["tokens/s per device"] == pytest.approx(
        tk.decode(d, 64, 2048).tokens_per_s_per_device, rel=1e-12)


def test_report_picks_the_smallest_tp_that_fits(tmp_path, capsys):
    assert main(["report", "llama-3.1-70b", "h100-sxm", "--context", "4096", "--out",
                 str(tmp_path / "r")]) == 0
    assert "tp=2" in capsys.readouterr().out


def test_report_bad_input(tmp_path, capsys):
    assert main(["report", "llama-3.1-405b", "l40s", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not fit" in err


def test_cli_module_level_imports_only_the_standard_library():
    # What `tokenomics --help` pays for: the module's own top-level imports (TYPE_CHECKING
    # blocks are not run); the commands import the library when they run.
    import ast
    import sys
    from pathlib import Path

    import tokenomics.surfaces.cli as cli

    tree = ast.parse(Path(cli.__file__).read_text())
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module)
    roots = {n.split(".")[0] for n in names}
    assert roots - {"__future__"} <= set(sys.stdlib_module_names), roots


def test_each_subcommand_runs_its_cmd_function():
    from tokenomics.surfaces import cli

    p = cli.build_parser()
    a = p.parse_args(["models"])
    assert a.func is cli.cmd_models
    a = p.parse_args(["report", "llama-3.1-8b", "h100-sxm"])
    assert a.func is cli.cmd_report and a.tp is None


def test_steady_reports_tpot_under_load_beside_the_decode_only_step(tmp_path, capsys):
    # Llama 3.1 8B on one H100, 2,048 in / 128 out: at 64 in flight 64/128 = 0.5 requests
    # join each step, 1,024 prompt tokens a step; "max" adds the largest concurrency that fits.
    csv = tmp_path / "s.csv"
    assert main(["steady", "llama-3.1-8b", "h100-sxm", "--input", "2048", "--output", "128",
                 "--concurrency", "1", "64", "max", "--csv", str(csv)]) == 0
    out = _both(capsys)
    assert "TPOT carries the prefill" in out and "pure roofline bound" in out
    df = pd.read_csv(csv)
    assert list(df.concurrency[:2]) == [1, 64]
    assert df.prefill_tokens_per_step[1] == 1024
    assert (df.tpot_s >= df.decode_only_tpot_s).all()
    assert df.concurrency.iloc[-1] == int(tk.max_batch(tk.Deployment("llama-3.1-8b",
                                                                     "h100-sxm"), 2048 + 128))


def test_steady_refuses_a_non_number_concurrency(capsys):
    assert main(["steady", "llama-3.1-8b", "h100-sxm", "--concurrency", "many"]) != 0
    assert "--concurrency takes whole numbers" in capsys.readouterr().err


def test_one_default_the_cli_and_the_library_agree(tmp_path):
    # Issue 12: the CLI printed the calibrated forecast (148.1 tok/s) where tk.decode printed
    # the bound (208.2) for Llama 3.1 8B on H100 at batch 1 and 8K. One default now: both the
    # bound, labelled; the forecast is asked for by name in both.
    csv = tmp_path / "d.csv"
    assert main(["decode", "llama-3.1-8b", "h100-sxm", "--batch", "1", "--context", "8192",
                 "--csv", str(csv)]) == 0
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    r = tk.decode(d, 1, 8192)
    assert r.efficiency == "roofline"
    assert pd.read_csv(csv).tokens_per_s_per_user[0] == pytest.approx(r.tokens_per_s_per_user)
    assert main(["decode", "llama-3.1-8b", "h100-sxm", "--batch", "1", "--context", "8192",
                 "--efficiency", "calibrated", "--csv", str(csv)]) == 0
    cal = tk.decode(d.with_(efficiency=tk.efficiency_presets()["calibrated"]), 1, 8192)
    assert cal.efficiency == "calibrated"
    assert pd.read_csv(csv).tokens_per_s_per_user[0] == pytest.approx(cal.tokens_per_s_per_user)
    assert cal.tokens_per_s_per_user < r.tokens_per_s_per_user


@pytest.mark.parametrize("args, match", [
    (["--slo", "nan"], "--slo must be"),
    (["--price", "-1"], "--price must be"),
    (["--prompt", "0"], "--prompt must be"),
    (["--mfu", "0"], "efficiency mfu must be in"),       # was reported as "does not fit"
])
def test_report_refuses_bad_arguments_before_writing_anything(tmp_path, capsys, args, match):
    # Issue 13, reproducer 11: 2-7 partial files were written into --out first.
    out = tmp_path / "rep"
    assert main(["report", "llama-3.1-8b", "h100-sxm", "--out", str(out), *args]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_report_on_a_device_without_a_compute_peak_names_the_missing_figure(tmp_path, capsys):
    # Bertha publishes no BF16 peak: that is what the error says, not "does not fit".
    assert main(["report", "llama-3.1-8b", "bertha", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "peak is not published" in err and "does not fit" not in err


BAD_ARGUMENTS = [
    "decode llama-3.1-8b h100-sxm --batch 0", "decode llama-3.1-8b h100-sxm --context -5",
    "decode nope h100-sxm", "decode llama-3.1-8b nope", "decode llama-3.1-8b h100-sxm --tp 3",
    "decode llama-3.1-8b h100-sxm --mfu 2", "decode llama-3.1-8b h100-sxm --overhead-ms nan",
    "decode llama-3.1-8b h100-sxm --weight-dtype fp3", "decode llama-3.1-8b h100-sxm --pp 100",
    "decode llama-3.1-8b h100-sxm --usable-fraction 0",
    "decode llama-3.1-8b h100-sxm --reserve-gb -1",
    "prefill llama-3.1-8b h100-sxm --prompt 0", "prefill llama-3.1-8b h100-sxm --cached 99999",
    "steady llama-3.1-8b h100-sxm --output 0", "steady llama-3.1-8b h100-sxm --chunk 0",
    "roofline llama-3.1-8b h100-sxm --batch 0", "frontier llama-3.1-8b --hardware nope",
    "frontier llama-3.1-8b --context 0", "cost llama-3.1-8b h100-sxm --price -3",
    "disagg llama-3.1-8b h100-sxm --devices 0",
    "disagg llama-3.1-8b h100-sxm --devices 10000000000",          # was a MemoryError
    "retention llama-3.1-8b h100-sxm --tier nope", "retention llama-3.1-8b h100-sxm --context 0",
    "fit llama-3.1-8b h100-sxm --batch 0", "fit llama-3.1-8b h100-sxm --multiple-of 0",
    "hardware nope", "models nope", "calibrate --write /nonexistent/dir/x.toml",
    "facility llama-3.1-8b nope", "facility llama-3.1-8b mi300x-platform",   # no power
    "facility llama-3.1-8b gb300-nvl72 --pue 0.5", "facility llama-3.1-8b gb300-nvl72 "
    "--power-mw 0", "facility llama-3.1-8b gb300-nvl72 --utilisation 0",
    "facility llama-3.1-8b gb300-nvl72 --concurrency 0",
    "facility llama-3.1-70b gb300-nvl72 --concurrency 100000",          # does not fit
]


@pytest.mark.parametrize("args", BAD_ARGUMENTS)
def test_bad_arguments_get_one_line_errors_not_tracebacks(args, capsys):
    # Issue 13: no traceback for any argument; exit status 2 and one "tokenomics: error:"
    assert main(args.split()) == 2
    err = capsys.readouterr().err
    assert "tokenomics: error:" in err and "Traceback" not in err


def test_fit_gives_the_layout_s_count_beside_the_pooled_one(tmp_path):
    # issue 11, item 6: DeepSeek-V3 at tp=8 on H200 already fits (8 devices, its MLA latent
    # replicated across the tp group); the 0.1 form pools weights and KV over devices without
    # replication and answers 6 = ceil(devices_needed), fewer than the layout can run on
    out = tmp_path / "fit.csv"
    assert main(["fit", "deepseek-v3", "h200", "--tp", "8", "--batch", "16", "--context",
                 "32768", "--csv", str(out)]) == 0
    row = pd.read_csv(out).iloc[-1]
    assert bool(row.fits) and row.min_devices == 8
    assert row.min_devices_pooled == math.ceil(row.devices_needed) == 6


def _both(capsys):
    """What a command printed: the title and warnings on stderr, the table on stdout."""
    c = capsys.readouterr()
    return c.err + c.out


def test_version_and_stdout_and_the_no_fit_warning(capsys):
    # issue 14, item 6: --version; '-' writes the data to stdout, prose to stderr; rows that
    # do not fit warn, and --strict turns the warning into exit status 3
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"tokenomics {tk.__version__}"
    # Llama 3.1 70B at BF16 (141 GB of weights) does not fit one 80 GB H100
    args = ["decode", "llama-3.1-70b", "h100-sxm", "--batch", "1", "--context", "1024",
            "--csv", "-"]
    assert main(args) == 0
    c = capsys.readouterr()
    assert c.out.splitlines()[0].startswith("batch,context_tokens,")      # CSV only
    assert "decode: llama-3.1-70b" in c.err and "1 of 1 rows do not fit" in c.err
    assert main(args + ["--strict"]) == 3
    capsys.readouterr()
    assert main(["decode", "llama-3.1-8b", "h100-sxm", "--batch", "1", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["fits"] is True


def test_every_flag_has_help_text():
    import argparse

    from tokenomics.surfaces.cli import build_parser

    p = build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {act.option_strings or act.dest}"
               for name, sp in [("tokenomics", p), *sub.choices.items()]
               for act in sp._actions
               if not act.help and not isinstance(act, argparse._SubParsersAction)]
    assert not missing, missing



def test_top_level_help_is_plain_text_and_price_errors_name_the_flag(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "--------" not in out and "\n::" not in out
    assert "Examples:" in out and "tokenomics hardware h200" in out
    assert main(["cost", "llama-3.1-8b", "h100-sxm", "--price", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--price must be USD per device-hour >= 0, got -1" in err


def _generated_bad_invocations() -> list[list[str]]:
    """Every subcommand's every numeric or valued flag at five values no flag accepts
    (negative, NaN, infinite, not a number, overflowing), positionals valid (issue 25)."""
    import argparse

    from tokenomics.surfaces.cli import build_parser
    sub = next(a for a in build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    positional = {"model": "llama-3.1-8b", "hardware": "h100-sxm", "system": "gb300-nvl72",
                  "devices": "gb300-nvl72"}
    out = []
    for name, sp in sub.choices.items():
        base = [positional.get(a.dest, "llama-3.1-8b") for a in sp._actions
                if not a.option_strings and a.nargs not in ("?", "*")]
        for a in sp._actions:
            if a.option_strings and a.type is not None:
                out += [[name, *base, a.option_strings[-1], v]
                        for v in ("-1", "nan", "inf", "x", "1e400")]
    return out


_GENERATED = _generated_bad_invocations()


def test_three_hundred_bad_invocations_one_line_each_nothing_written(tmp_path, capsys):
    # Issue 25: >= 300 bad invocations, each status 2 with one "tokenomics: error:" line, no
    # traceback, and a report writes nothing to --out when it fails (it wrote its CSVs and
    # figures first, then failed on --xlsx of a sparse-attention model)
    cases = _GENERATED + [["report", "deepseek-v3.2-exp", "h200", "--xlsx"],
                          ["report", "llama-3.1-8b", "h100-sxm", "--slo", "-5"]]
    assert len(cases) >= 300
    bad = []
    for k, args in enumerate(cases):
        out = tmp_path / f"r{k}"
        argv = [*args, "--out", str(out)] if args[0] == "report" else args
        try:
            rc = main(argv)
        except SystemExit as exc:          # argparse's own refusals exit with status 2
            rc = exc.code
        err = capsys.readouterr().err
        if rc != 2 or "Traceback" in err or "error:" not in err or out.exists():
            bad.append((" ".join(args), rc, err[-200:]))
    assert not bad, bad[:5]


def test_written_tables_say_what_produced_them(tmp_path, capsys):
    # issue 26: every CSV the CLI writes names its model, hardware, layout, formats,
    # efficiency and, for costs, the price with its tier and date (the terminal table stays
    # narrow); counts are whole numbers
    c = tmp_path / "c.csv"
    assert main(["cost", "llama-3.1-70b", "h200", "--tp", "2", "--batch", "8", "--csv",
                 str(c)]) == 0
    out = capsys.readouterr().out
    assert "price_tier" not in out and "tokenomics_version" not in out
    df = pd.read_csv(c)
    lib = tk.deployment_cost(tk.Deployment("llama-3.1-70b", "h200", tp=2), 8, 8192)
    assert set(df.model) == {"llama-3.1-70b"} and set(df.hardware) == {"h200"}
    assert set(df.tp) == {2} and set(df.devices) == {2} and set(df.efficiency) == {"roofline"}
    assert set(df.usd_per_device_hour) == {lib.usd_per_device_hour}
    assert set(df.price_tier) == {lib.price_tier} and set(df.price_date) == {lib.price_date}
    from importlib.metadata import version

    assert set(df.tokenomics_version) == {version("inference-tokenomics")}
    r = tmp_path / "r"
    assert main(["report", "llama-3.1-8b", "h100-sxm", "--context", "2048", "--out",
                 str(r)]) == 0
    for name in ("decode.csv", "memory.csv", "operators.csv", "frontier.csv", "cost.csv"):
        t = pd.read_csv(r / name)
        assert set(t.model) == {"llama-3.1-8b"} and set(t.hardware) == {"h100-sxm"}, name
        assert "efficiency" in t.columns, name
    dec = pd.read_csv(r / "decode.csv")
    assert dec.batch.dtype.kind == "i" and list(dec.batch[:2]) == [1, 8]
    assert {"price_tier", "price_date"} <= set(pd.read_csv(r / "cost.csv").columns)


def test_terminal_tables_fit_the_terminal_and_read_in_milliseconds(capsys, monkeypatch):
    # issue 26: tables were up to 359 characters wide with "1.95116e-05" seconds; the
    # terminal now wraps at its width and shows sub-second columns in ms (the files keep s)
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["decode", "llama-3.1-8b", "h100-sxm", "--batch", "1", "8", "64",
                 "--context", "4096"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "step_time_ms" in out and "step_time_s " not in out
    assert "e-0" not in out                              # no scientific notation left


def test_the_expert_exchange_is_a_layout_option(tmp_path, capsys):
    # --ep-exchange allgather: every attention-DP rank's tokens gathered for its experts
    # (TensorRT-LLM without NVLink). For Qwen3-30B-A3B's top-8 router over four cards the
    # all-to-all sends each of a device's N/4 tokens to 8 experts, 3/4 of them away
    # (1.5 N h bytes), the gather receives 3/4 of all N tokens (0.75 N h): it is cheaper here
    args = ["decode", "qwen3-30b-a3b", "rtx-pro-6000-server", "--tp", "4", "--ep", "4",
            "--dp-attention", "4", "--batch", "256", "--context", "2048", "--efficiency",
            "calibrated"]
    a, g = tmp_path / "a.json", tmp_path / "g.json"
    assert main([*args, "--json", str(a)]) == 0
    assert main([*args, "--ep-exchange", "allgather", "--json", str(g)]) == 0
    a2a, ag = json.loads(a.read_text())[0], json.loads(g.read_text())[0]
    comm = next(k for k in a2a if k.startswith("comm"))
    assert 0 < ag[comm] < a2a[comm]
    capsys.readouterr()
    assert main(["decode", "qwen3-30b-a3b", "rtx-pro-6000-server", "--tp", "4", "--ep", "4",
                 "--ep-exchange", "allgather"]) == 2
    assert "dp_attention > 1" in capsys.readouterr().err
