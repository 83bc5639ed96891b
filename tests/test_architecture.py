"""The architecture's rules, as tests (docs/architecture.md states them).

- stages import only the stages before them, modules of a stage have no import cycles
  (import-linter's contracts in pyproject.toml);
- ``import tokenomics`` and every public name load neither scipy.stats, scipy.optimize, sympy
  nor matplotlib; ``tokenomics --help`` loads no numerical library at all;
- size gates: complexity <= 15 and <= 8 parameters (ruff C901, PLR0913), no module over 800
  lines, no function over 60 code lines;
- tests mirror the package: ``tests/<stage>/test_<module>.py`` for every module;
- no underscore name is imported across modules;
- the modules docs/architecture.md names exist.
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "tokenomics"
MODULES = sorted(p for p in PKG.rglob("*.py") if p.name != "__init__.py")
MAX_MODULE_LINES = 800
MAX_FUNCTION_CODE_LINES = 60
STAGES = ("core", "data", "physics", "serving", "economics", "calibration", "pareto",
          "surfaces")


def _run(*cmd: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_stages_are_the_documented_ones_in_order():
    import tokenomics

    assert tokenomics.STAGES == STAGES
    assert sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").exists()) == \
        sorted(STAGES)


def test_layers_and_acyclic_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    r = _run(exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 kept, 0 broken" in r.stdout


def test_a_stage_imports_nothing_above_it():
    # The same rule read straight off the source, so that it holds even where import-linter's
    # configuration were edited: each module's tokenomics imports come from its own stage or
    # an earlier one (economics and calibration are siblings and may not import each other).
    rank = {s: i for i, s in enumerate(STAGES)}
    rank["calibration"] = rank["economics"]
    rank["(entry point)"] = len(STAGES)     # tokenomics/spec.py: above every stage
    bad = []
    for path in MODULES:
        rel = path.relative_to(PKG)
        stage = rel.parts[0] if len(rel.parts) > 1 else "(entry point)"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                parts = node.module.split(".")
                if parts[0] == "tokenomics" and len(parts) > 1 and parts[1] in rank:
                    other = parts[1]
                    if rank[other] > rank[stage] or (other != stage and rank[other] ==
                                                      rank[stage]):
                        bad.append(f"{path.relative_to(ROOT)}:{node.lineno} -> {node.module}")
            if isinstance(node, ast.ImportFrom) and node.level:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: relative import")
    assert not bad, "\n".join(bad)


HEAVY = ("scipy.stats", "scipy.optimize", "sympy", "matplotlib")


def test_import_and_every_public_name_stay_light():
    code = ("import sys, tokenomics as tk\n"
            "for n in tk.__all__: getattr(tk, n)\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    r = _run(sys.executable, "-c", code, cwd=Path("/"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_bare_import_loads_no_numerical_library():
    code = ("import sys, tokenomics\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'pint', 'scipy') if m in sys.modules))")
    r = _run(sys.executable, "-c", code, cwd=Path("/"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_cli_help_loads_no_numerical_library():
    code = ("import sys\n"
            "from tokenomics.surfaces.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'pint', 'scipy') if m in sys.modules),"
            " file=sys.stderr)")
    r = _run(sys.executable, "-c", code, cwd=Path("/"))
    assert "usage: tokenomics" in r.stdout
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr


def test_ruff_size_gates():
    exe = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    r = _run(exe, "check", "--no-cache", "--select", "C901,PLR0913", "tokenomics")
    assert r.returncode == 0, r.stdout + r.stderr


def test_no_module_over_800_lines():
    long = {str(p.relative_to(ROOT)): n for p in MODULES
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long


def _code_lines(src_lines: list[str], node: ast.AST) -> int:
    """Lines of a function that hold code: no blank lines, comments or its docstring."""
    body = node.body  # type: ignore[attr-defined]
    skip: set[int] = set()
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
            isinstance(first.value.value, str):
        skip = set(range(first.lineno, first.end_lineno + 1))  # type: ignore[operator]
    n = 0
    for i in range(node.lineno, node.end_lineno + 1):  # type: ignore[attr-defined]
        s = src_lines[i - 1].strip()
        if s and not s.startswith("#") and i not in skip:
            n += 1
    return n


def test_code_line_counter_on_a_known_function():
    src = 'def f(x):\n    """Doc.\n\n    More.\n    """\n    # note\n\n    y = x\n    return y\n'
    node = ast.parse(src).body[0]
    assert _code_lines(src.splitlines(), node) == 3      # def, y = x, return


def test_no_function_over_60_code_lines():
    long = []
    for p in MODULES:
        src = p.read_text()
        lines = src.splitlines()
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(lines, node)
                if n > MAX_FUNCTION_CODE_LINES:
                    long.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({n})")
    assert not long, "\n".join(long)


def test_tests_mirror_the_package():
    missing = []
    for p in MODULES:
        rel = p.relative_to(PKG)
        if len(rel.parts) != 2:
            continue
        want = ROOT / "tests" / rel.parts[0] / f"test_{p.stem}.py"
        if not want.exists():
            missing.append(str(want.relative_to(ROOT)))
    assert not missing, "modules without a test file: " + ", ".join(missing)


def test_architecture_page_names_only_modules_that_exist():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`(tokenomics(?:\.[a-z_]+)+)`", text))
    assert len(named) >= 30
    for name in sorted(named):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            mod, _, attr = name.rpartition(".")
            assert hasattr(importlib.import_module(mod), attr), name


def test_architecture_page_lists_every_module():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for p in MODULES:
        rel = p.relative_to(PKG).with_suffix("")
        name = "tokenomics." + ".".join(rel.parts)
        assert f"`{name}`" in text, f"docs/architecture.md does not say where {name} fits"


@pytest.mark.parametrize("stage", STAGES)
def test_stage_table_lists_every_public_name_of_its_modules(stage):
    pkg = importlib.import_module(f"tokenomics.{stage}")
    table = pkg._EXPORTS
    for mod_name in pkg._MODULES:
        mod = importlib.import_module(f"tokenomics.{stage}.{mod_name}")
        tree = ast.parse(Path(mod.__file__).read_text())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and \
                    not node.name.startswith("_"):
                assert node.name in table, f"tokenomics.{stage} does not list {node.name}"
    for name, where in table.items():
        obj = getattr(pkg, name)
        mod = importlib.import_module(where, pkg.__name__)
        assert getattr(mod, name) is obj


@pytest.mark.parametrize("stage", STAGES)
def test_no_module_shares_a_name_with_a_public_name_of_its_stage(stage):
    # Importing tokenomics.<stage>.<module> sets the attribute <module> on the stage package;
    # a public function of the same name would then be shadowed by the module.
    pkg = importlib.import_module(f"tokenomics.{stage}")
    assert not set(pkg._MODULES) & set(pkg._EXPORTS)


def test_no_stage_or_moved_module_shares_a_name_with_a_top_level_name():
    import tokenomics

    assert not set(tokenomics.STAGES) & set(tokenomics.__all__)
    assert not set(tokenomics._MOVED) & set(tokenomics.__all__)


def test_no_underscore_name_crosses_a_module_boundary():
    # Whatever one module takes from another is part of a named, documented interface.
    crossing = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tokenomics"):
                crossing += [f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{a.name}"
                             for a in node.names if a.name.startswith("_")]
    assert not crossing, "\n".join(crossing)
