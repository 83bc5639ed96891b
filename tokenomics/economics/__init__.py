"""Economics: what tokens cost.

Device-hour prices (rental and TCO), cost and energy per million tokens, API prices and
margins, and the KV retention policy that prices HBM against a cache miss.

Modules
-------
``api_prices``
    Provider API prices: the price catalog, blended prices, margins, a serving day's books.
``availability``
    Spare replicas for an availability target, from published failure rates.
``basis``
    One price basis for comparing devices: which rental tier, and which date, a price is read at.
``ownership``
    Owning a device instead of renting it: its hourly cost from a purchase price.
``cost``
    Token economics: cost per million tokens (rental or total cost of ownership), energy per
    token, a deployment's cost per phase.
``factory``
    A token factory at facility scale: from the power at the meter to systems, tokens and
    dollars.
``fleet``
    A plan over years: the cheapest fleet each year that serves a growing demand.
``journey``
    A request's journey from the user's keypress to its last token: the latency budget.
``sessions``
    Agent sessions over time: sampled sessions, their KV in each tier over a day, their cost.
``retention``
    How long to keep an idle session's KV in HBM: its rent against the price of a miss.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "LLAMA3_FAILURES_PER_GPU_HOUR": ".availability",
    "REPAIR_HOURS": ".availability",
    "MAX_REPLICAS": ".availability",
    "replica_availability": ".availability",
    "down_quantile": ".availability",
    "Spares": ".availability",
    "spare_replicas": ".availability",
    "check_sla": ".availability",
    "JOURNEY_TERMS": ".journey",
    "FABRIC_HOPS": ".journey",
    "JourneyDefault": ".journey",
    "load_journey_defaults": ".journey",
    "Journey": ".journey",
    "request_journey": ".journey",
    "RENTAL_TIERS": ".basis",
    "PriceBasis": ".basis",
    "DEFAULT_PRICE_BASIS": ".basis",
    "BasisPrice": ".basis",
    "as_price_basis": ".basis",
    "price_on_basis": ".basis",
    "warn_if_mixed_tiers": ".basis",
    "warn_if_mixed_ages": ".basis",
    "HOURS_PER_YEAR": ".ownership",
    "DAY_S": ".factory",
    "MAX_TOKENS_PER_S_PER_DEVICE": ".factory",
    "Facility": ".factory",
    "GROWTH_PRESETS": ".fleet",
    "PRICE_DECLINE_PRESETS": ".fleet",
    "USEFUL_LIFE_YEARS": ".fleet",
    "MAX_YEARS": ".fleet",
    "Generation": ".fleet",
    "FleetTerms": ".fleet",
    "FleetPlan": ".fleet",
    "demand_path": ".fleet",
    "generation_of": ".fleet",
    "fleet_plan": ".fleet",
    "facility": ".factory",
    "cost_per_million_tokens": ".cost",
    "default_assumptions": ".ownership",
    "Ownership": ".ownership",
    "tco_usd_per_device_hour": ".ownership",
    "tco_parts": ".ownership",
    "TCO_PARTS": ".ownership",
    "DeploymentCost": ".cost",
    "device_hour_price": ".cost",
    "device_hour_usd": ".cost",
    "deployment_cost": ".cost",
    "Energy": ".cost",
    "energy_per_token": ".cost",
    "ApiPrice": ".api_prices",
    "price": ".api_prices",
    "price_table": ".api_prices",
    "blended_price": ".api_prices",
    "margin": ".api_prices",
    "ServingDay": ".api_prices",
    "serving_day": ".api_prices",
    "GAP_MEDIAN_S": ".retention",
    "GAP_MEAN_TO_MEDIAN": ".retention",
    "RetentionDefaults": ".retention",
    "load_retention_defaults": ".retention",
    "lognormal_params": ".retention",
    "GapDistribution": ".retention",
    "RetentionPrices": ".retention",
    "RetentionPolicy": ".retention",
    "RetentionOccupancy": ".retention",
    "retention_policy": ".retention",
    "SESSION_MEAN_S": ".sessions",
    "REQUESTS_PER_SESSION": ".sessions",
    "STEPS_PER_REQUEST": ".sessions",
    "TIME_SPLIT": ".sessions",
    "SessionStats": ".sessions",
    "AgentSessions": ".sessions",
    "agent_sessions": ".sessions",
}
_MODULES = ('api_prices', 'availability', 'basis', 'ownership', 'cost', 'factory', 'fleet', 'journey', 'retention',
            'sessions',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
