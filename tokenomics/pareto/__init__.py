"""Pareto: interactivity against throughput, in closed form.

Decode curves as polylines through their kinks, the upper envelope over deployments, the
queries on it (best_at, cheapest_at), the brute-force sweep that checks it, and the SymPy
forms of its pieces.

Modules
-------
``curves``
    Decode curves: one deployment's throughput against interactivity, as a polyline.
``envelope``
    The upper envelope of decode curves over deployments, and the Pareto set on it.
``fleet``
    Sweeps beyond one machine: a lazy Dask frame over deployments x batch x context.
``inputs``
    What a frontier query takes in: deployments, an efficiency preset, device prices, labels.
``premium``
    What a faster tier costs: the frontier read at two interactivities (S27).
``queries``
    Queries at an interactivity floor (best, cheapest point) and the brute-force sweep.
``symbolic``
    SymPy derivations of the closed forms: the tests' oracles and the spreadsheet's source.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "CURVE_RTOL": ".curves",
    "DecodeCurve": ".curves",
    "decode_curve": ".curves",
    "frontier": ".envelope",
    "crossings": ".envelope",
    "pareto_mask": ".envelope",
    "with_efficiency": ".inputs",
    "efficiency_label": ".inputs",
    "config_columns": ".inputs",
    "device_price": ".inputs",
    "device_prices": ".inputs",
    "price_columns": ".inputs",
    "device_price_usd_per_hour": ".inputs",
    "deployment_label": ".inputs",
    "deployments_of": ".inputs",
    "SpeedPremium": ".premium",
    "speed_premium": ".premium",
    "premium_curve": ".premium",
    "OperatingPoint": ".queries",
    "best_at": ".queries",
    "interactivity_floor": ".queries",
    "cheapest_at": ".queries",
    "sweep": ".queries",
    "sweep_points": ".queries",
    "plain_strings": ".queries",
    "CHUNK_POINTS": ".fleet",
    "sweep_lazy": ".fleet",
    "lazy_pareto": ".fleet",
    "lazy_best_at": ".fleet",
    "frontier_line": ".symbolic",
    "roofline_step_time": ".symbolic",
    "ridge_batch": ".symbolic",
}
_MODULES = ('curves', 'envelope', 'fleet', 'inputs', 'premium', 'queries', 'symbolic',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
