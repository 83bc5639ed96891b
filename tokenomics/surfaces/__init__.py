"""Surfaces: what a person reads.

Tables, plots, the spreadsheet sizing sheet, the command line and the docs generator. Nothing
below this stage imports it.

Modules
-------
``arguments``
    The command line's grammar: each subcommand's arguments, defaults and help text.
``canvas``
    Figure plumbing the plots share: a pyplot-free Axes, series colours, labels, argument checks.
``cli``
    The ``tokenomics`` command line.
``cli_plan``
    The ``tokenomics plan`` command's work: a fleet plan over years from the command line.
``conditions``
    The sources' point claims swept over the conditions they depend on: where each holds.
``docgen``
    Generate the documentation pages that come from the code and the catalogs.
``docstrings``
    Numpydoc docstrings as Markdown for the docs site: sections, math, cross-references.
``export``
    Spreadsheet export: a decode sizing sheet whose outputs are live formulas, and plain tables.
``facility_sheet``
    A facility's sizing as a live spreadsheet: power at the meter to systems, tokens and dollars.
``plots``
    Matplotlib figures: roofline with operators, throughput frontier, memory budget, cost split.
``spec``
    The physics spec: laws every catalog entry must obey, checked against the installed library.
``spreadsheet``
    Spreadsheet building blocks: SymPy expressions as formulas, and a four-column worksheet.
``tables``
    Catalog tables: one row per entry, unit-suffixed numeric columns, sources beside values.
``terminal``
    Terminal output for the command line: docstrings as plain help text, progress bars.
``timeplots``
    Figures of the token factory in time: a request's waterfall, a serving trace, sessions.
``validate``
    Validate every data file the package reads, by kind, naming the file and field that fails.
``workbook``
    An .xlsx sizing workbook: one sheet per deployment, named cells, live formulas, a comparison.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "SUBCOMMANDS": ".arguments",
    "add_subcommands": ".arguments",
    "add_global_arguments": ".arguments",
    "axes_or_new": ".canvas",
    "in_notebook": ".canvas",
    "single_count": ".canvas",
    "labelled_items": ".canvas",
    "si_prefixed": ".canvas",
    "usd_text": ".canvas",
    "series_colours": ".canvas",
    "true_runs": ".canvas",
    "cmd_hardware": ".cli",
    "build_report": ".report",
    "check_sheet_supports": ".export",
    "layout_min_devices": ".report",
    "cmd_models": ".cli",
    "cmd_fit": ".cli",
    "cmd_plan": ".cli",
    "cmd_decode": ".cli",
    "cmd_steady": ".cli",
    "cmd_prefill": ".cli",
    "cmd_roofline": ".cli",
    "cmd_frontier": ".cli",
    "cmd_cost": ".cli",
    "cmd_facility": ".cli",
    "cmd_disagg": ".cli",
    "cmd_retention": ".cli",
    "cmd_calibrate": ".cli",
    "cmd_report": ".cli",
    "build_parser": ".cli",
    "main": ".cli",
    "plan_table": ".cli_plan",
    "catalog_pages": ".docgen",
    "validation_page": ".docgen",
    "calibration_page": ".docgen",
    "conditions_page": ".docgen",
    "claim_conditions": ".conditions",
    "ClaimSweep": ".conditions",
    "CLAIMS": ".conditions",
    "condition_label": ".conditions",
    "validate_data": ".validate",
    "CHECKS": ".validate",
    "WORST_CAUSES": ".docgen",
    "api_pages": ".docgen",
    "gallery": ".docgen",
    "highlight_css": ".docgen",
    "export_sizing_sheet": ".export",
    "export_facility_sheet": ".facility_sheet",
    "facility_worksheet": ".facility_sheet",
    "sizing_sheet": ".export",
    "export_sizing_workbook": ".workbook",
    "plain_help": ".terminal",
    "docstring_markdown": ".docstrings",
    "linking": ".docstrings",
    "api_link": ".docgen",
    "with_provenance": ".report",
    "whole_counts": ".report",
    "inline": ".docstrings",
    "block": ".docstrings",
    "ProgressBar": ".terminal",
    "export_table_csv": ".tables",
    "GB": ".plots",
    "plot_roofline": ".plots",
    "plot_frontier": ".plots",
    "plot_memory": ".plots",
    "plot_cost": ".plots",
    "GOLDEN_TIME_MIN": ".plots",
    "plot_retention": ".plots",
    "plot_journey": ".timeplots",
    "plot_serving": ".timeplots",
    "plot_sessions": ".timeplots",
    "plot_cost_waterfall": ".timeplots",
    "plot_tokens_per_mw": ".timeplots",
    "PRECISION_PAIRS": ".spec",
    "MEMORY_RANGES": ".spec",
    "PARAM_TOLERANCE": ".spec",
    "Law": ".spec",
    "Violation": ".spec",
    "SpecReport": ".spec",
    "NotApplicable": ".spec",
    "Context": ".spec",
    "LAWS": ".spec",
    "check_catalog": ".spec",
    "HEADER": ".spreadsheet",
    "spreadsheet_formula": ".spreadsheet",
    "Worksheet": ".spreadsheet",
    "hardware_table": ".tables",
    "model_table": ".tables",
}
_MODULES = ('arguments', 'canvas', 'cli', 'cli_plan', 'conditions', 'docgen', 'docstrings', 'export', 'facility_sheet', 'plots', 'report', 'spec', 'spreadsheet', 'tables', 'terminal', 'timeplots', 'validate', 'workbook',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
