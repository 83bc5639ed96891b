"""Spreadsheet export: the sizing sheet's formulas, evaluated here, equal the library's numbers,
and keep equalling them when an input cell is changed (batch, bandwidth, context)."""

from __future__ import annotations

import csv
import math
import re

import numpy as np
import pandas as pd
import pytest
import sympy as sp

import tokenomics as tk
from tokenomics.surfaces.export import export_sizing_sheet, spreadsheet_formula
from tokenomics.surfaces.tables import export_table_csv

# --------------------------------------------------------------------------------------------
# A small, safe spreadsheet evaluator (tests only): + - * / ^, comparisons, parentheses, A1
# references and ranges, numbers in scientific notation, MAX MIN SUM IF INT FLOOR MOD.
# Nothing is passed to eval(): a tokenizer and a recursive-descent parser with Excel's
# precedence (unary minus binds tighter than ^; ^ is left-associative).
# --------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                    r"|(?P<ref>[A-Z]{1,3}[0-9]+)(?![A-Z0-9(])"
                    r"|(?P<fn>[A-Z]+)(?=\()"
                    r"|(?P<op><=|>=|<>|[-+*/^(),:<>=]))")


def _tokens(src: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    src = src.rstrip()
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise ValueError(f"bad formula at {src[pos:]!r}")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _addr(ref: str) -> tuple[str, int]:
    m = re.fullmatch(r"([A-Z]+)([0-9]+)", ref)
    assert m
    return m.group(1), int(m.group(2))


class _Parser:
    FUNCS = {"MAX", "MIN", "SUM", "IF", "INT", "FLOOR", "MOD"}

    def __init__(self, toks, cell):
        self.t, self.i, self.cell = toks, 0, cell

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise ValueError(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self):
        v = self.compare()
        if self.i != len(self.t):
            raise ValueError(f"unexpected {self.peek()[1]!r}")
        return v

    def compare(self):
        a = self.additive()
        ops = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
               "=": np.equal, "<>": np.not_equal}
        if self.peek()[1] in ops:
            op = ops[self.take()[1]]
            return float(op(a, self.additive()))
        return a

    def additive(self):
        a = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            b = self.term()
            a = a + b if op == "+" else a - b
        return a

    def term(self):
        a = self.power()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            b = self.power()
            a = a * b if op == "*" else a / b
        return a

    def power(self):
        a = self.unary()
        while self.peek()[1] == "^":
            self.take()
            a = a ** self.unary()
        return a

    def unary(self):
        if self.peek()[1] in ("-", "+"):
            sign = -1.0 if self.take()[1] == "-" else 1.0
            return sign * self.unary()
        return self.primary()

    def primary(self):
        kind, v = self.peek()
        if kind == "num":
            self.take()
            return float(v)
        if kind == "ref":
            self.take()
            if self.peek()[1] == ":":
                raise ValueError("a range is only allowed as a function argument")
            return self.cell(v)
        if kind == "fn":
            return self.call()
        if v == "(":
            self.take()
            x = self.compare()
            self.take(")")
            return x
        raise ValueError(f"unexpected {v!r}")

    def args(self):
        out = []
        self.take("(")
        while True:
            kind, v = self.peek()
            if kind == "ref" and self.i + 1 < len(self.t) and self.t[self.i + 1][1] == ":":
                self.take()
                self.take(":")
                (c1, r1), (c2, r2) = _addr(v), _addr(self.take()[1])
                assert c1 == c2, "ranges are one column"
                out.extend(self.cell(f"{c1}{r}") for r in range(r1, r2 + 1))
            else:
                out.append(self.compare())
            if self.peek()[1] == ",":
                self.take()
                continue
            self.take(")")
            return out

    def call(self):
        name = self.take()[1]
        if name not in self.FUNCS:
            raise ValueError(f"unknown function {name}")
        a = self.args()
        if name == "MAX":
            return max(a)
        if name == "MIN":
            return min(a)
        if name == "SUM":
            return math.fsum(a)
        if name == "IF":
            return a[1] if a[0] else a[2]
        if name == "INT":
            return float(math.floor(a[0]))
        if name == "FLOOR":
            return float(math.floor(a[0] / a[1]) * a[1])
        return a[0] - a[1] * math.floor(a[0] / a[1])   # MOD, Excel's sign convention


class Sheet:
    """A sizing sheet read back: evaluate it, optionally with input cells overridden."""

    def __init__(self, path):
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ["label", "value", "unit", "note"]
        self.rows = rows
        self.raw = {f"B{i + 1}": r[1] for i, r in enumerate(rows)}
        self.addr = {r[0]: f"B{i + 1}" for i, r in enumerate(rows) if r[1] != ""}
        assert len(self.addr) == sum(1 for r in rows if r[1] != "")   # labels are unique

    def formula(self, label):
        return self.raw[self.addr[label]]

    def evaluate(self, **overrides):
        """Every numeric cell's value by label; ``overrides`` replace input cells by label."""
        raw = dict(self.raw)
        for label, v in overrides.items():
            a = self.addr[label.replace("_", " ")]
            assert not raw[a].startswith("="), f"{label} is a formula, not an input"
            raw[a] = repr(float(v))
        memo: dict[str, float] = {}
        busy: set[str] = set()

        def cell(ref):
            if ref in memo:
                return memo[ref]
            if ref in busy:
                raise ValueError(f"circular reference at {ref}")
            src = raw.get(ref, "")
            if not src.startswith("="):
                v = float(src)    # a reference to a text or empty cell is an error here
            else:
                busy.add(ref)
                v = float(_Parser(_tokens(src[1:]), cell).parse())
                busy.discard(ref)
            memo[ref] = v
            return v

        out = {}
        for label, a in self.addr.items():
            try:
                out[label] = cell(a)
            except ValueError:
                if raw[a].startswith("="):
                    raise
        return out


# --------------------------------------------------------------------------------------------
# Deployments
# --------------------------------------------------------------------------------------------
FP8 = dict(weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8")
CASES = {
    "llama8b-h100": (lambda: tk.Deployment("llama-3.1-8b", "h100-sxm"), 16, 4096),
    "llama70b-h200-tp4-fp8": (lambda: tk.Deployment("llama-3.1-70b", "h200", tp=4, **FP8),
                              32, 8192),
    "gemma27b-sliding": (lambda: tk.Deployment("gemma-3-27b", "h100-sxm"), 8, 16384),
    "gpt-oss-20b-moe-sliding": (lambda: tk.Deployment("gpt-oss-20b", "h100-sxm"), 24, 2048),
    "llama4-scout-chunked": (lambda: tk.Deployment("llama-4-scout", "h200", tp=2, **FP8),
                             4, 10000),
    "deepseek-v3-mla-tp8": (lambda: tk.Deployment("deepseek-v3", "h200", tp=8,
                                                  weight_dtype="fp8", compute_dtype="fp8"),
                            16, 4096),
    "llama70b-tp4-pp2-efficiency": (lambda: tk.Deployment(
        "llama-3.1-70b", "h100-sxm", tp=4, pp=2, comm_overlap=0.5, workspace_bytes=2e9,
        runtime_reserve_bytes=1e9, efficiency=tk.Efficiency(
            mfu=0.6, mbu=0.8, step_overhead_s=1e-4, layer_overhead_s=2e-6)), 32, 4096),
}
REL = 1e-9


def _comm(dep, batch):
    return sum(float(c.time_s) for c in tk.step_comm(dep, batch / dep.pp, 1.0, 1.0, "decode"))


def _check(v, dep, batch, ctx, price=None):
    """Every output of the sheet against the library at (batch, ctx)."""
    r = tk.decode(dep, batch, ctx, on_oom="mark")
    fit = tk.memory_fit(dep, batch, ctx)
    assert v["ridge point"] == pytest.approx(tk.ridge_point(dep.hardware, dep.compute_dtype),
                                             rel=REL)
    assert v["roofline time"] == pytest.approx(r.roofline_s, rel=REL)
    assert v["step time"] == pytest.approx(r.step_time_s, rel=REL)
    assert v["tokens/s per user"] == pytest.approx(r.tokens_per_s_per_user, rel=REL)
    assert v["tokens/s per device"] == pytest.approx(r.tokens_per_s_per_device, rel=REL)
    assert v["KV bytes per device"] == pytest.approx(fit.kv_bytes, rel=REL)
    assert v["memory total per device"] == pytest.approx(fit.total_bytes, rel=REL)
    assert v["usable memory per device"] == pytest.approx(fit.usable_bytes, rel=REL)
    assert v["fits"] == float(bool(fit.fits))
    assert v["max batch"] == tk.max_batch(dep, ctx)
    if price is not None:
        assert v["cost per million tokens"] == pytest.approx(
            tk.cost_per_million_tokens(price, r.tokens_per_s_per_device), rel=REL)
    assert v["joules per token"] == pytest.approx(
        dep.hardware.tdp_w / r.tokens_per_s_per_device, rel=REL)
    return r


@pytest.fixture(params=list(CASES), scope="module")
def case(request, tmp_path_factory):
    make, batch, ctx = CASES[request.param]
    dep = make()
    path = tmp_path_factory.mktemp("sheets") / f"{request.param}.csv"
    export_sizing_sheet(path, dep, batch, ctx, usd_per_device_hour=2.5)
    return dep, batch, ctx, Sheet(path)


def test_sheet_reproduces_the_library(case):
    dep, batch, ctx, sheet = case
    v = sheet.evaluate()
    r = _check(v, dep, batch, ctx, price=2.5)
    assert r.fits   # the chosen points fit; fits=0 is tested below
    assert v["communication time per step"] == pytest.approx(_comm(dep, batch), rel=REL)
    if dep.n_devices == 1:
        assert v["communication time per step"] == 0.0


def test_changing_the_batch_recomputes(case):
    # The spreadsheet user's point: type another batch and read the new results, the
    # communication of a parallel layout included (each collective is fixed + per-sequence
    # time, the automatic all-reduce the fastest of its algorithms).
    dep, batch, ctx, sheet = case
    for new in (1, 3, 32, 200):
        v = sheet.evaluate(batch=new)
        _check(v, dep, new, ctx, price=2.5)
        assert v["communication time per step"] == pytest.approx(_comm(dep, new), rel=REL,
                                                                 abs=1e-15)


def test_changing_bandwidth_recomputes(case):
    dep, batch, ctx, sheet = case
    hw = dep.hardware
    for f in (2.0, 0.5):
        v = sheet.evaluate(memory_bandwidth=f * hw.mem_bw_bytes_per_s)
        d2 = dep.with_(hardware=hw.with_(mem_bw_bytes_per_s=f * hw.mem_bw_bytes_per_s))
        r = tk.decode(d2, batch, ctx)
        assert v["roofline time"] == pytest.approx(r.roofline_s, rel=REL)
        # Collectives do not use the memory bandwidth: the whole step matches too.
        assert v["step time"] == pytest.approx(r.step_time_s, rel=REL)
        assert v["ridge point"] == pytest.approx(tk.ridge_point(d2.hardware,
                                                                dep.compute_dtype), rel=REL)


def test_changing_the_context_recomputes(case):
    # Attention work and KV memory are formulas of the context cell (windows, chunks, MLA).
    dep, batch, ctx, sheet = case
    for c in (1, 100, 1023, 1024, 1025, 8191, 8192, 8193, 20000):
        if c > dep.model.max_context:
            continue
        v = sheet.evaluate(context_tokens=c)
        _check(v, dep, batch, c, price=2.5)


def test_outputs_are_formulas_of_inputs(case):
    dep, _b, _c, sheet = case
    section = None
    for label, value, unit, _note in sheet.rows[1:]:
        if value == "":
            section = label
            continue
        if section == "Inputs":
            float(value)                       # a plain number
            assert unit
        elif section == "Outputs":
            assert value.startswith("="), label
            # Only cell references, operators, functions and the identity's constants: the
            # layout's tp and pp (structural, not inputs) and the grouped GEMM tile's 4th power
            consts = re.findall(r"(?<![A-Z0-9.])\d+(?:\.\d*)?(?:[eE][+-]?\d+)?", value[1:])
            allowed = {"0", "1", "3600", "1000000", "4", str(dep.tp), str(dep.pp),
                       str(dep.tp * dep.pp)}
            assert set(consts) <= allowed, (label, value)
    for label in ("step time", "fits", "max batch", "roofline time", "tokens/s per device"):
        assert sheet.formula(label).startswith("=")
    assert sheet.formula("fits").startswith("=IF(")
    assert sheet.formula("roofline time").startswith("=SUM(")
    assert "INT(" in sheet.formula("max batch")


def test_operator_times_come_from_the_sympy_form(tmp_path):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    s = Sheet(export_sizing_sheet(tmp_path / "s.csv", d, 4, 1024))
    f = s.formula("lm_head: time")
    a = s.addr
    # the engine's law: max(tc, tm) + (1 - overlap) min(tc, tm), tc = F1 b / (P s), tm =
    # (Q0 + Q1 b) / beta, each a reference to its own input or output cell
    tc = (f"{a['lm_head: FLOPs per sequence per device']}*{a['micro-batch']}/"
          f"({a['lm_head: fraction of MFU']}*{a['achievable FLOP/s']})")
    tm = (f"({a['lm_head: fixed bytes per device']}+"
          f"{a['lm_head: bytes per sequence per device']}*{a['micro-batch']})/"
          f"{a['achievable bandwidth']}")
    assert f == f"=(1-{a['operator overlap']})*MIN({tm},{tc})+MAX({tm},{tc})"
    # Per-operator rows equal operator_table's times.
    t = tk.operator_table(d, "decode", batch=4, context_tokens=1024).set_index("operator")
    v = s.evaluate()
    for op in t.index[:-1]:
        assert v[f"{op}: time"] == pytest.approx(t.loc[op, "time_s"], rel=REL)


def test_moe_experts_are_exact_not_linearised(tmp_path):
    d = tk.Deployment("qwen3-30b-a3b", "h100-sxm", **FP8)
    s = Sheet(export_sizing_sheet(tmp_path / "s.csv", d, 8, 4096))
    assert "^" in s.formula("moe_experts: time")
    for b in (1, 2, 7, 64, 300):
        v = s.evaluate(batch=b)
        assert v["step time"] == pytest.approx(tk.decode(d, b, 4096, on_oom="mark").step_time_s,
                                               rel=REL)


def test_not_fitting_point_is_marked(tmp_path):
    d = tk.Deployment("llama-3.1-70b", "h100-sxm", tp=2)
    s = Sheet(export_sizing_sheet(tmp_path / "s.csv", d, 64, 32768))
    v = s.evaluate()
    assert v["fits"] == 0.0 and not tk.memory_fit(d, 64, 32768).fits
    assert v["max batch"] == tk.max_batch(d, 32768)
    assert v["step time"] == pytest.approx(
        tk.decode(d, 64, 32768, on_oom="mark").step_time_s, rel=REL)


def test_price_defaults_and_missing_rows(tmp_path):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    s = Sheet(export_sizing_sheet(tmp_path / "a.csv", d, 16, 2048))
    p = tk.rental_price(d.hardware).usd
    v = s.evaluate()
    assert v["price per device-hour"] == p
    _check(v, d, 16, 2048, price=p)
    hw = d.hardware.with_(prices=(), tdp_w=None)
    s = Sheet(export_sizing_sheet(tmp_path / "b.csv", d.with_(hardware=hw), 16, 2048))
    assert "cost per million tokens" not in s.addr and "joules per token" not in s.addr
    labels = [r[0] for r in s.rows]
    assert "cost per million tokens" in labels      # a note row says why it is missing
    v = s.evaluate()
    assert v["step time"] == pytest.approx(tk.decode(d, 16, 2048).step_time_s, rel=REL)


def test_printer_precedence_and_functions():
    x, y = sp.symbols("B2 B3", positive=True)
    sheet_vals = {"B2": 3.0, "B3": 2.0}

    def ev(expr):
        f = spreadsheet_formula(expr)
        assert f.startswith("=") and " " not in f
        return _Parser(_tokens(f[1:]), lambda r: sheet_vals[r]).parse()

    for e in (-x**2, -(x**y), 1 / x, x**-2, (1 - y / x) ** x, sp.Max(x, y) - sp.Min(x, y),
              sp.floor(x / y), sp.Mod(x + 4, y), sp.Rational(3, 4) * x - 1):
        want = float(e.subs({x: 3.0, y: 2.0}))
        assert ev(e) == pytest.approx(want, rel=1e-15), spreadsheet_formula(e)
    assert spreadsheet_formula(sp.Max(x, y), {x: "C7"}) == "=MAX(B3,C7)"


def test_evaluator_is_safe():
    with pytest.raises(ValueError):
        _Parser(_tokens("__import__('os')"), lambda r: 0.0).parse()
    with pytest.raises(ValueError):
        _Parser(_tokens("EXEC(B1)"), lambda r: 0.0).parse()
    assert _Parser(_tokens("SUM(B1:B3)+1.5e3^1"), lambda r: 1.0).parse() == 1503.0


def test_bad_inputs(tmp_path):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    for bad in (-1, 0, 2.5):
        with pytest.raises(tk.TokenomicsError, match="batch"):
            export_sizing_sheet(tmp_path / "x.csv", d, bad, 1024)
    with pytest.raises(tk.TokenomicsError, match="single numbers"):
        export_sizing_sheet(tmp_path / "x.csv", d, [1, 2], 1024)
    with pytest.raises(tk.TokenomicsError, match="context_tokens"):
        export_sizing_sheet(tmp_path / "x.csv", d, 1, 0)
    with pytest.raises(tk.TokenomicsError, match="maximum context"):
        export_sizing_sheet(tmp_path / "x.csv", d, 1, 10**7)
    with pytest.raises(tk.TokenomicsError, match="usd_per_device_hour"):
        export_sizing_sheet(tmp_path / "x.csv", d, 1, 1024, usd_per_device_hour=-1)
    with pytest.raises(tk.TokenomicsError, match="Deployment"):
        export_sizing_sheet(tmp_path / "x.csv", "llama-3.1-8b", 1, 1024)
    with pytest.raises(OSError):
        export_sizing_sheet(tmp_path / "no-such-dir" / "x.csv", d, 1, 1024)
    assert not (tmp_path / "x.csv").exists()


# --------------------------------------------------------------------------------------------
# Plain tables
# --------------------------------------------------------------------------------------------
def test_table_round_trips_numbers(tmp_path):
    d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    df = tk.decode(d, np.arange(1, 65), 2048).to_frame()
    p = export_table_csv(df, tmp_path / "decode.csv")
    back = pd.read_csv(p)
    assert list(back.columns) == list(df.columns)
    for col in df.columns:
        if pd.api.types.is_float_dtype(df[col]):
            assert np.allclose(back[col], df[col], rtol=1e-12, atol=0)
            assert (back[col].to_numpy() == df[col].to_numpy()).all()   # repr: exact
        else:
            assert (back[col].astype(str) == df[col].astype(str)).all()
    rng = np.random.default_rng(0)
    x = rng.random(500) * 10.0 ** rng.integers(-30, 30, 500)
    t = pd.DataFrame({"value_s": x, "n": np.arange(500)})
    back = pd.read_csv(export_table_csv(t, tmp_path / "x.csv"))
    assert (back.value_s.to_numpy() == x).all() and back.n.dtype.kind == "i"
    text = (tmp_path / "x.csv").read_text()
    assert "s]" not in text and "B/s" not in text                      # no units in cells


def test_table_errors(tmp_path):
    with pytest.raises(tk.TokenomicsError, match="DataFrame"):
        export_table_csv({"a": [1]}, tmp_path / "x.csv")
    q = pd.DataFrame({"t": [tk.Q_(1.0, "s")]})
    with pytest.raises(tk.TokenomicsError, match="column name"):
        export_table_csv(q, tmp_path / "x.csv")
    with pytest.raises(OSError):
        export_table_csv(pd.DataFrame({"a": [1.0]}), tmp_path / "missing" / "x.csv")


def test_sheet_refuses_a_hybrid_model_it_cannot_reproduce(tmp_path):
    # Qwen3-Next keeps a fixed Gated DeltaNet state per sequence in 36 of its 48 layers; the
    # sheet's KV formulas count per-token KV in every layer, so it would disagree with the
    # library: it says so instead of writing wrong numbers.
    d = tk.Deployment("qwen3-next-80b-a3b", "b200")
    with pytest.raises(NotImplementedError, match="hybrid linear attention"):
        export_sizing_sheet(tmp_path / "sheet.csv", d, 8, 4096)


def test_a_csv_path_that_is_not_a_path_is_named():
    with pytest.raises(tk.TokenomicsError, match="path must be a file path"):
        tk.export_table_csv(pd.DataFrame({"a": [1]}), 3.0)
