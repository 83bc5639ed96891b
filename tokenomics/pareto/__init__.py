"""Pareto: interactivity against throughput, in closed form.

Decode curves as polylines through their kinks, the upper envelope over deployments, the
queries on it (best_at, cheapest_at), the brute-force sweep that checks it, and the SymPy
forms of its pieces.

Modules
-------
``envelope``
    Pareto frontiers of throughput per device against tokens per second per user.
``symbolic``
    SymPy forms of the closed-form results: derivations used as oracles in the tests and as
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "CURVE_RTOL": ".envelope",
    "DecodeCurve": ".envelope",
    "decode_curve": ".envelope",
    "frontier": ".envelope",
    "best_at": ".envelope",
    "cheapest_at": ".envelope",
    "crossings": ".envelope",
    "sweep": ".envelope",
    "pareto_mask": ".envelope",
    "frontier_line": ".symbolic",
    "roofline_step_time": ".symbolic",
    "ridge_batch": ".symbolic",
}
_MODULES = ('envelope', 'symbolic',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
