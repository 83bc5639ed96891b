"""Economics: what tokens cost.

Device-hour prices (rental and TCO), cost and energy per million tokens, API prices and
margins, and the KV retention policy that prices HBM against a cache miss.

Modules
-------
``cost``
    Token economics: cost per million tokens (rental or total cost of ownership), energy per
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "HOURS_PER_YEAR": ".cost",
    "cost_per_million_tokens": ".cost",
    "default_assumptions": ".cost",
    "tco_usd_per_device_hour": ".cost",
    "DeploymentCost": ".cost",
    "deployment_cost": ".cost",
    "Energy": ".cost",
    "energy_per_token": ".cost",
    "ApiPrice": ".cost",
    "price": ".cost",
    "price_table": ".cost",
    "blended_price": ".cost",
    "margin": ".cost",
    "ServingDay": ".cost",
    "serving_day": ".cost",
}
_MODULES = ('cost',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
