"""The command line's grammar: each subcommand's arguments, defaults and help text.

:func:`tokenomics.surfaces.cli.build_parser` makes the ``tokenomics`` parser from
:func:`add_subcommands`, handing it the function that runs each subcommand. Only the standard
library (and the library's exceptions) is imported here, so ``tokenomics --help`` loads no
numerical library.

Units are in the option names and help texts: ``--reserve-gb`` [GB = 1e9 B], ``--overhead-ms``
[ms], ``--link-gbps`` [Gb/s per direction], ``--price`` [USD per device-hour], ``--ttft`` and
``--tpot`` [s], ``--gap-median-min`` [min]; token counts are whole numbers of tokens.

References
----------
.. [1] Python Software Foundation, "argparse: parser for command-line options, arguments and
   subcommands", Python 3.11 standard library documentation.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from tokenomics.core.errors import TokenomicsError

__all__ = ["SUBCOMMANDS", "add_global_arguments", "add_subcommands"]

#: The subcommands, in the order ``tokenomics --help`` lists them.
SUBCOMMANDS = ("hardware", "models", "fit", "decode", "prefill", "steady", "roofline", "frontier",
               "cost", "facility", "plan", "disagg", "retention", "calibrate", "report")


def add_subcommands(sub: Any, commands: Mapping[str, Callable[..., Any]]) -> None:
    """Add every subcommand of :data:`SUBCOMMANDS` to an argparse subparsers object.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers``.
    commands : mapping of str to callable
        Subcommand name -> the function that runs it, given the parsed
        :class:`argparse.Namespace`; stored as the subcommand's ``func`` default.

    Raises
    ------
    TokenomicsError
        When ``commands`` lacks a subcommand or names one that does not exist.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="tokenomics")
    >>> run = {name: print for name in SUBCOMMANDS}
    >>> add_subcommands(p.add_subparsers(dest="command"), run)
    >>> a = p.parse_args(["decode", "llama-3.1-8b", "h100-sxm", "--batch", "1", "8"])
    >>> a.batch, a.context, a.tp, a.func is print
    ([1, 8], [8192], 1, True)
    """
    missing = [n for n in SUBCOMMANDS if n not in commands]
    unknown = sorted(set(commands) - set(SUBCOMMANDS))
    if missing or unknown:
        raise TokenomicsError(f"commands must map each of {', '.join(SUBCOMMANDS)} to a function"
                              f"; missing: {', '.join(missing) or 'none'}, unknown: "
                              f"{', '.join(unknown) or 'none'}")
    for name in SUBCOMMANDS:
        _ADD[name](sub, commands[name])


def add_global_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options given before the subcommand: ``--catalog DIR`` (repeatable).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The top-level parser; ``--catalog`` collects into ``catalog``, a list of folders
        (default empty), each a user catalog folder (``docs/user-catalogs.md``).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="tokenomics")
    >>> add_global_arguments(p)
    >>> p.parse_args(["--catalog", "a", "--catalog", "b"]).catalog
    ['a', 'b']
    """
    from importlib.metadata import version

    p.add_argument("--version", action="version",
                   version=f"tokenomics {version('inference-tokenomics')}",
                   help="print the version and exit")
    p.add_argument("--catalog", metavar="DIR", action="append", default=[],
                   help="a user catalog folder (hardware/*.toml, models/*.toml, each with its "
                        "sources.toml) read after the bundled catalogs and the folders of "
                        "TOKENOMICS_CATALOG; repeatable, later folders last")


# --------------------------------------------------------------------------------------------
# Arguments several subcommands share
# --------------------------------------------------------------------------------------------
def _output_arguments(p: argparse.ArgumentParser) -> None:
    """``--csv PATH`` and ``--json PATH`` (``-``: standard output), and ``--strict``."""
    p.add_argument("--csv", metavar="PATH",
                   help="also write the table as CSV; '-' writes it to standard output "
                        "instead of the printed table")
    p.add_argument("--json", metavar="PATH",
                   help="also write the table as JSON records; '-' for standard output")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 3 when a row does not fit in memory (default: a "
                        "warning on standard error, status 0)")


def _deployment_arguments(p: argparse.ArgumentParser, hardware: bool = True) -> None:
    """Model, hardware, layout, formats, efficiency and memory options of a Deployment
    (``hardware=False``: no hardware argument, the caller names the device another way)."""
    p.add_argument("model", help="model id or alias (see `tokenomics models`)")
    if hardware:
        p.add_argument("hardware", help="hardware id or alias (see `tokenomics hardware`)")
    p.add_argument("--tp", type=int, default=1,
                   help="tensor-parallel degree (default 1; report: smallest that fits)")
    p.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (default 1)")
    p.add_argument("--ep", type=int, default=1,
                   help="expert parallelism: 1 (experts tensor-parallel) or equal to --tp")
    p.add_argument("--dp-attention", type=int, default=1,
                   help="attention data-parallel degree inside a stage (divides --tp)")
    p.add_argument("--mlp-data-parallel", action="store_true",
                   help="with --dp-attention, run the dense FFN and shared experts "
                        "data-parallel too (as TensorRT-LLM does)")
    p.add_argument("--ep-exchange", default="alltoall", choices=["alltoall", "allgather"],
                   help="with --ep and --dp-attention, how tokens reach their experts: "
                        "all-to-all (default) or all-gather then reduce-scatter (TensorRT-LLM "
                        "without NVLink)")
    p.add_argument("--overlap", type=float, default=0.0,
                   help="fraction of communication hidden behind compute (default 0)")
    p.add_argument("--allreduce", default="auto",
                   choices=["auto", "ring", "tree", "one_shot", "two_shot"],
                   help="all-reduce algorithm (default auto: the fastest per message)")
    p.add_argument("--weight-dtype", help="weight format (default: the model's release)")
    p.add_argument("--kv-dtype", default="bf16", help="KV-cache format (default bf16)")
    p.add_argument("--act-dtype", default="bf16", help="activation format (default bf16)")
    p.add_argument("--compute-dtype", help="matrix-unit format (default: activation format)")
    p.add_argument("--efficiency", choices=["calibrated", "roofline"], default="roofline",
                   help="efficiency preset: the pure roofline bound (default, as in the "
                        "library) or the calibrated forecast; --mfu/--mbu/--overhead-ms "
                        "override its fields")
    p.add_argument("--mfu", type=float, help="achieved fraction of peak FLOP/s")
    p.add_argument("--mbu", type=float, help="achieved fraction of bandwidth")
    p.add_argument("--overhead-ms", type=float, help="fixed time per step [ms]")
    p.add_argument("--usable-fraction", type=float, default=0.9,
                   help="usable fraction of device memory (default 0.9)")
    p.add_argument("--reserve-gb", type=float, default=0.0,
                   help="runtime reserve per device [GB] (default 0)")
    p.add_argument("--allow-beyond-max-context", action="store_true",
                   help="permit contexts beyond the model's maximum")


# --------------------------------------------------------------------------------------------
# One function per subcommand: its arguments, defaults, help and example
# --------------------------------------------------------------------------------------------
def _hardware(sub: Any, run: Callable[..., Any]) -> None:
    """``hardware [ID]``: the accelerator table, or one entry with its sources."""
    h = sub.add_parser("hardware", help="list accelerators or show one with sources",
                       epilog="examples: tokenomics hardware; tokenomics hardware mi355x")
    h.add_argument("id", nargs="?", help="hardware id or alias")
    h.add_argument("--all-columns", action="store_true", help="every column of the table")
    _output_arguments(h)
    h.set_defaults(func=run)


def _models(sub: Any, run: Callable[..., Any]) -> None:
    """``models [ID]``: the model table, or one entry with its sources."""
    m = sub.add_parser("models", help="list models or show one with sources",
                       epilog="examples: tokenomics models; tokenomics models deepseek-v3")
    m.add_argument("id", nargs="?", help="model id or alias")
    _output_arguments(m)
    m.set_defaults(func=run)


def _fit(sub: Any, run: Callable[..., Any]) -> None:
    """``fit MODEL HARDWARE``: memory per device over ``--batch`` x ``--context`` [token]."""
    f = sub.add_parser("fit", help="memory per device: weights, KV, workspace; max batch",
                       epilog="example: tokenomics fit llama-3.1-405b h100-sxm --tp 8 --pp 5 "
                              "--batch 32 --context 131072 --multiple-of 8")
    _deployment_arguments(f)
    f.add_argument("--batch", type=int, nargs="+", default=[1],
                   help="concurrent sequences per step (default %(default)s)")
    f.add_argument("--context", type=int, nargs="+", default=[8192],
                   help="tokens in each sequence's KV cache (default %(default)s)")
    f.add_argument("--multiple-of", type=int, default=1, help="round min_devices up to this")
    _output_arguments(f)
    f.set_defaults(func=run)


def _decode(sub: Any, run: Callable[..., Any]) -> None:
    """``decode MODEL HARDWARE``: step time and throughput over batch x context."""
    d = sub.add_parser("decode", help="decode step time and throughput over batch x context",
                       epilog="example: tokenomics decode llama-3.1-70b h200 --weight-dtype fp8 "
                              "--kv-dtype fp8 --batch 1 8 64 --context 8192")
    _deployment_arguments(d)
    d.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32, 64],
                   help="concurrent sequences per step (default %(default)s)")
    d.add_argument("--context", type=int, nargs="+", default=[8192],
                   help="tokens in each sequence's KV cache (default %(default)s)")
    _output_arguments(d)
    d.set_defaults(func=run)


def _prefill(sub: Any, run: Callable[..., Any]) -> None:
    """``prefill MODEL HARDWARE``: TTFT over ``--prompt`` [token] x ``--batch``."""
    pf = sub.add_parser("prefill", help="prefill time (TTFT), optionally on a cached prefix",
                        epilog="example: tokenomics prefill llama-3.1-8b h100-sxm --prompt 8192")
    _deployment_arguments(pf)
    pf.add_argument("--prompt", type=int, nargs="+", default=[8192],
                    help="prompt tokens to prefill (default %(default)s)")
    pf.add_argument("--batch", type=int, nargs="+", default=[1],
                    help="concurrent sequences per step (default %(default)s)")
    pf.add_argument("--cached", type=int, default=0, help="cached prefix tokens")
    _output_arguments(pf)
    pf.set_defaults(func=run)


def _steady(sub: Any, run: Callable[..., Any]) -> None:
    """``steady MODEL HARDWARE``: continuous batching in steady state over concurrency."""
    st = sub.add_parser("steady", help="TPOT, TTFT and throughput under load (continuous "
                        "batching in steady state)",
                        epilog="example: tokenomics steady llama-3.1-8b h100-sxm --input 2048 "
                               "--output 128 --concurrency 1 16 64 max")
    _deployment_arguments(st)
    st.add_argument("--input", type=int, default=2048, help="mean prompt tokens")
    st.add_argument("--output", type=int, default=256, help="mean output tokens")
    st.add_argument("--cached", type=int, default=0, help="prefix-cached prompt tokens")
    st.add_argument("--chunk", type=int, default=None, help="prefill chunk tokens")
    st.add_argument("--concurrency", nargs="+", default=["1", "8", "32", "64", "max"],
                    help="sequences in flight; 'max' is the largest that fits")
    _output_arguments(st)
    st.set_defaults(func=run)


def _facility(sub: Any, run: Callable[..., Any]) -> None:
    """``facility MODEL SYSTEM``: what a power budget of those systems serves and costs."""
    f = sub.add_parser("facility", help="systems, tokens, $/Mtok and margin of a facility "
                       "sized by its power at the meter",
                       epilog="example: tokenomics facility llama-3.1-70b gb300-nvl72 --tp 8 "
                              "--weight-dtype fp8 --power-mw 10 100 --price 3 --sell 0.6")
    _deployment_arguments(f, hardware=False)
    f.add_argument("system", help="system id or alias (gb300-nvl72, hgx-b200...): its device "
                                  "and published power")
    f.add_argument("--power-mw", type=float, nargs="+", default=[100.0],
                   help="power at the meter [MW] (default %(default)s)")
    f.add_argument("--pue", type=float, help="power usage effectiveness (default: the "
                                             "sourced industry average)")
    f.add_argument("--input", type=int, default=2048, help="mean prompt tokens")
    f.add_argument("--output", type=int, default=256, help="mean output tokens")
    f.add_argument("--concurrency", type=int, default=64,
                   help="sequences in flight per replica (default %(default)s)")
    f.add_argument("--utilisation", type=float, default=1.0,
                   help="fraction of the time the fleet serves at that load (default 1)")
    f.add_argument("--price", type=float, help="USD per device-hour (default catalog)")
    f.add_argument("--sell", type=float, help="selling price, USD per million output tokens")
    f.add_argument("--sla", type=float, help="availability target, e.g. 0.999: replicas that "
                   "may be down at once are held as spares (Llama 3's failure rate)")
    f.add_argument("--repair-hours", type=float, help="mean hours to restore a failed replica "
                   "(default: the library's stated assumption)")
    f.add_argument("--waterfall", action="store_true", help="the cost per million tokens part "
                   "by part (device-hour parts, stranded devices, spares) at each power")
    _output_arguments(f)
    f.set_defaults(func=run)


def _plan(sub: Any, run: Callable[..., Any]) -> None:
    """``plan MODEL DEVICE...``: the cheapest fleet each year for a growing demand."""
    f = sub.add_parser("plan", help="the cheapest fleet each year that serves a growing "
                       "demand: devices bought, rented, retired, capex, $/Mtok, margin",
                       epilog="example: tokenomics plan llama-3.1-70b hgx-h100 gb200-nvl72 "
                              "--tp 8 --weight-dtype fp8 --purchase 25000 50000 "
                              "--start-tokens-per-s 1e7 --growth s34-usage --years 4")
    _deployment_arguments(f, hardware=False)
    f.add_argument("devices", nargs="+", help="system ids (their power per device) or "
                                              "hardware ids (their TDP), one per generation")
    f.add_argument("--purchase", type=float, nargs="+", help="USD per device, one value or "
                   "one per device (default: not bought)")
    f.add_argument("--first-year", type=int, nargs="+", help="year each is first offered "
                   "(default its release year)")
    f.add_argument("--no-rent", action="store_true", help="do not rent (default: rent at "
                   "the catalog's price where it has one)")
    f.add_argument("--start-year", type=int, default=2026, help="first year of the plan "
                   "(default %(default)s)")
    f.add_argument("--years", type=int, default=4, help="years planned (default %(default)s)")
    f.add_argument("--start-tokens-per-s", type=float, default=1e7,
                   help="the first year's mean demand [token/s] (default %(default)g)")
    f.add_argument("--growth", default="s34-usage", help="demand factor a year, or a preset "
                   "(s34-usage: 7x; s34-google-2025-2026) (default %(default)s)")
    f.add_argument("--price-decline", default="1", help="selling price divides by this a "
                   "year, or a preset (s34-unit-cost: 200x) (default %(default)s)")
    f.add_argument("--sell", type=float, help="first year's selling price, USD per million "
                                              "tokens (revenue and margin)")
    f.add_argument("--life", type=float, help="service life [year] (default: the sourced 5)")
    f.add_argument("--pue", type=float, help="power usage effectiveness (default: the "
                                             "sourced industry average)")
    f.add_argument("--utilisation", type=float, default=1.0,
                   help="fraction of the time devices serve at their rate (default 1)")
    f.add_argument("--input", type=int, default=2048, help="mean prompt tokens")
    f.add_argument("--output", type=int, default=256, help="mean output tokens")
    f.add_argument("--concurrency", type=int, default=64,
                   help="sequences in flight per replica (default %(default)s)")
    f.add_argument("--by-generation", action="store_true",
                   help="devices owned, bought, rented, retired per generation and year")
    _output_arguments(f)
    f.set_defaults(func=run)


def _roofline(sub: Any, run: Callable[..., Any]) -> None:
    """``roofline MODEL HARDWARE``: the operator table of one phase at one point."""
    r = sub.add_parser("roofline", help="per-operator FLOPs, bytes, intensity and bound",
                       epilog="example: tokenomics roofline llama-3.1-70b h100-sxm --tp 4 "
                              "--phase decode --batch 1 --context 4096")
    _deployment_arguments(r)
    r.add_argument("--phase", choices=["decode", "prefill", "midfill"], default="decode",
                   help="which step to break down (default %(default)s)")
    r.add_argument("--batch", type=int, nargs="+", default=[1],
                   help="concurrent sequences per step (default %(default)s)")
    r.add_argument("--context", type=int, nargs="+", default=[8192],
                   help="tokens in each sequence's KV cache (default %(default)s)")
    r.add_argument("--prompt", type=int, default=8192,
                   help="prompt tokens to prefill (default %(default)s)")
    r.add_argument("--cached", type=int, default=0,
                   help="prompt tokens already in the prefix cache (default %(default)s)")
    _output_arguments(r)
    r.set_defaults(func=run)


def _frontier(sub: Any, run: Callable[..., Any]) -> None:
    """``frontier MODEL``: the Pareto frontier over ``--hardware`` x ``--tp``."""
    fr = sub.add_parser("frontier", help="Pareto frontier over hardware and TP degrees",
                        epilog="example: tokenomics frontier llama-3.3-70b --hardware h100-sxm "
                               "h200 b200 --tp 1 2 4 8 --weight-dtype fp8 --compute-dtype fp8 "
                               "--kv-dtype fp8 --context 4096 --slo 100")
    fr.add_argument("model", help="model id or alias")
    fr.add_argument("--hardware", nargs="+", default=["h100-sxm", "h200", "b200"],
                    help="catalog hardware ids to compare (default %(default)s)")
    fr.add_argument("--tp", type=int, nargs="+", default=[1, 2, 4, 8],
                    help="tensor-parallel degrees to try (default %(default)s)")
    fr.add_argument("--weight-dtype",
                    help="weight format (default: the model's release)")
    fr.add_argument("--kv-dtype", default="bf16",
                    help="KV-cache format (default %(default)s)")
    fr.add_argument("--compute-dtype",
                    help="format the matrix units run at (default: the activation format)")
    fr.add_argument("--usable-fraction", type=float, default=0.9,
                    help="share of device memory a deployment may use (default %(default)s)")
    fr.add_argument("--efficiency", choices=["calibrated", "roofline"], default="roofline",
                    help="efficiency preset (default: the roofline bound, as in the library)")
    fr.add_argument("--context", type=int, default=4096,
                    help="tokens in each sequence's KV cache (default %(default)s)")
    fr.add_argument("--slo", type=float, help="tokens/s per user floor: print the best there")
    _output_arguments(fr)
    fr.set_defaults(func=run)


def _cost(sub: Any, run: Callable[..., Any]) -> None:
    """``cost MODEL HARDWARE``: USD per million tokens by phase at one decode point."""
    co = sub.add_parser("cost", help="cost per million tokens by phase, blended, energy",
                        epilog="example: tokenomics cost llama-3.1-70b h200 --weight-dtype fp8 "
                               "--compute-dtype fp8 --kv-dtype fp8 --batch 64 --context 4096 "
                               "--price 3.0 --input-ratio 3 --output-ratio 1 --hit-rate 0.5")
    _deployment_arguments(co)
    co.add_argument("--batch", type=int, nargs=1, default=[64],
                    help="concurrent sequences per step (default %(default)s)")
    co.add_argument("--context", type=int, nargs=1, default=[4096],
                    help="tokens in each sequence's KV cache (default %(default)s)")
    co.add_argument("--prompt", type=int, default=None, help="prompt length (default context)")
    co.add_argument("--price", type=float, help="USD per device-hour (default: the catalog price on the default basis, as tk.price_on_basis)")
    co.add_argument("--tier", help="catalog rental tier to use")
    co.add_argument("--input-ratio", type=float, default=3.0,
                    help="input tokens per request, relative to --output-ratio (default %(default)s)")
    co.add_argument("--output-ratio", type=float, default=1.0,
                    help="output tokens per request, relative to --input-ratio (default %(default)s)")
    co.add_argument("--hit-rate", type=float, default=0.0,
                    help="share of input tokens served from the prefix cache (default %(default)s)")
    _output_arguments(co)
    co.set_defaults(func=run)


def _disagg(sub: Any, run: Callable[..., Any]) -> None:
    """``disagg MODEL HARDWARE``: goodput of split and colocated layouts under SLOs."""
    dg = sub.add_parser("disagg", help="disaggregated vs colocated goodput under SLOs",
                        epilog="example: tokenomics disagg llama-3.1-70b h100-sxm --tp 4 "
                               "--devices 32 --input 2048 --output 256 --ttft 2 --tpot 0.05")
    _deployment_arguments(dg)
    dg.add_argument("--devices", type=int, default=32, help="device budget")
    dg.add_argument("--input", type=int, default=2048, help="input tokens per request")
    dg.add_argument("--output", type=int, default=256, help="output tokens per request")
    dg.add_argument("--ttft", type=float, default=2.0, help="TTFT SLO [s]")
    dg.add_argument("--tpot", type=float, default=0.05, help="TPOT SLO [s]")
    dg.add_argument("--slo-fraction", type=float, default=0.9,
                    help="share of requests that must meet the TTFT target (default %(default)s)")
    dg.add_argument("--link-gbps", type=float, default=1600.0,
                    help="prefill-to-decode link per prefill instance [Gb/s per direction]")
    dg.add_argument("--token-budget", type=int, default=2048,
                    help="chunked-prefill token budget of the colocated layout")
    _output_arguments(dg)
    dg.set_defaults(func=run)


def _retention(sub: Any, run: Callable[..., Any]) -> None:
    """``retention MODEL HARDWARE``: keep, offload or drop a session's KV."""
    rt = sub.add_parser("retention", help="keep a session's KV in HBM, offload it, or drop "
                        "it over an idle gap (S62)",
                        epilog="example: tokenomics retention llama-3.1-70b h100-sxm --tp 8 "
                               "--context 119000 --tier dram ssd")
    _deployment_arguments(rt)
    rt.add_argument("--context", type=int, default=119_000,
                    help="tokens in the session's KV (default 119000, S61)")
    rt.add_argument("--tier", nargs="+", default=["dram"],
                    help="offload tier(s) from price_catalog/kv_tiers.toml (default dram)")
    rt.add_argument("--miss-usd", type=float, default=None,
                    help="price of a return that misses HBM [USD] (default: the stated "
                         "$8.40 per million context tokens; 0 for GPU time only)")
    rt.add_argument("--price", type=float, help="USD per device-hour (default: the catalog price on the default basis, as tk.price_on_basis)")
    rt.add_argument("--gap-median-min", type=float, default=25.0,
                    help="median idle gap [min] (default 25, S62)")
    rt.add_argument("--gap-mean-to-median", type=float, default=15.0,
                    help="mean over median of the gap (default 15, S60)")
    rt.add_argument("--sessions", type=float, default=100.0,
                    help="agent sessions per replica, each idling one mean gap per request "
                         "(default 100): mean idle sessions in HBM and in the tier, and the "
                         "tier's fraction used (Little's law)")
    _output_arguments(rt)
    rt.set_defaults(func=run)


def _calibrate(sub: Any, run: Callable[..., Any]) -> None:
    """``calibrate [--write]``: the fit of the efficiencies to the measurements."""
    cb = sub.add_parser("calibrate", help="fit efficiencies to the published measurements",
                        epilog="example: tokenomics calibrate (report); tokenomics calibrate "
                               "--write measurements/calibrated.toml (refit, in a checkout)")
    cb.add_argument("--write", nargs="?", const="calibrated.toml", default=None, metavar="PATH",
                    help="refit and write the calibration to PATH (default ./calibrated.toml; "
                         "never into the installed package)")
    _output_arguments(cb)
    cb.set_defaults(func=run)


def _report(sub: Any, run: Callable[..., Any]) -> None:
    """``report MODEL HARDWARE``: a sizing report folder (``--tp`` default: smallest)."""
    rp = sub.add_parser("report", help="sizing report: text, CSV tables and PNG figures",
                        epilog="example: tokenomics report llama-3.1-70b h200 --weight-dtype fp8 "
                               "--compute-dtype fp8 --kv-dtype fp8 --out report")
    _deployment_arguments(rp)
    rp.set_defaults(tp=None)
    rp.add_argument("--context", type=int, nargs=1, default=[8192],
                    help="tokens in each sequence's KV cache (default %(default)s)")
    rp.add_argument("--prompt", type=int, default=2048, help="prompt length for TTFT")
    rp.add_argument("--slo", type=float, default=30.0, help="tokens/s per user floor")
    rp.add_argument("--price", type=float, help="USD per device-hour (default catalog)")
    rp.add_argument("--out", default="report", help="output folder (default ./report)")
    rp.add_argument("--xlsx", action="store_true",
                    help="also write sizing.xlsx: the deployment's sizing workbook at batch "
                         "min(64, max batch), every output a live formula (needs openpyxl: "
                         "pip install 'inference-tokenomics[workbook]'; default off)")
    _output_arguments(rp)
    rp.set_defaults(func=run)


#: Subcommand name -> the function that adds it.
_ADD: dict[str, Callable[[Any, Callable[..., Any]], None]] = {
    "hardware": _hardware, "models": _models, "fit": _fit, "decode": _decode,
    "prefill": _prefill, "steady": _steady, "roofline": _roofline, "frontier": _frontier,
    "cost": _cost, "facility": _facility, "plan": _plan,
    "disagg": _disagg, "retention": _retention, "calibrate": _calibrate, "report": _report,
}
