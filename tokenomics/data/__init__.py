"""Data: the catalogs and the value objects they are read into.

Hardware, models, prices and deployments (specs), the TOML loader with its validation, and
the Hugging Face config.json reader. Depends only on :mod:`tokenomics.core`.

Modules
-------
``bibliography``
    The bibliography and the sourced quantity: how every data file names where a number is from.
``boundary``
    The public boundary's argument roles: a deployment, a model, a device, as objects or ids.
``catalog``
    Load and validate the hardware and model catalogs (TOML files) and their bibliography.
``counts``
    Parameter counts of an architecture from its fields, and the check of a file's stated totals.
``deployment``
    A deployment: a model served on a group of identical devices, with its formats and layout.
``hf_config``
    Read a Hugging Face ``config.json`` into a :class:`~tokenomics.data.specs.Model`.
``hf_gemma4``
    Gemma 4's config reader: full-attention layers of their own shape, keys as values.
``interconnect``
    The links a device's collectives cross: its scale-up domain and its scale-out NIC.
``rentals``
    A device's dated catalog prices: the latest rental of a tier, on or before a date.
``specs``
    Frozen specifications: hardware and its prices, model architecture.
``layers``
    The shapes of a model's layers: attention, linear attention, mixture of experts.
``systems``
    Racks, pods and supernodes: a count of one catalog device and how its domain is wired.
``user_catalog``
    Where users' own catalog folders are found: the search path of the catalog loader.
``workload``
    Small value objects for argument groups that travel together: a workload, an SLO, a link.
``kinds``
    The data-file kinds, each declared once: every field's kind, unit, range and meaning.
``lengths``
    Request-length distributions of benchmark workloads, as weighted quadrature nodes.
``efficiency``
    Achieved fractions of peak and fixed overheads: a serving stack against the bound.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "attention_params_per_layer": ".counts",
    "attention_params": ".counts",
    "gemma4_model": ".hf_gemma4",
    "GEMMA4_DEFAULTS": ".hf_gemma4",
    "router_params_per_layer": ".counts",
    "per_layer_embedding_params": ".counts",
    "latent_projection_params_per_layer": ".counts",
    "dsa_indexer_params_per_layer": ".counts",
    "linear_attention_params_per_layer": ".counts",
    "ffn_params": ".counts",
    "expert_params": ".counts",
    "check_official_params": ".counts",
    "OFFICIAL_PARAMS_TOLERANCE": ".counts",
    "component_params": ".counts",
    "counted_params": ".counts",
    "hardware_repr": ".display",
    "model_repr": ".display",
    "deployment_repr": ".display",
    "entry_html": ".display",
    "checked_quoted": ".peaks",
    "with_quoted_peaks": ".peaks",
    "ROLES": ".boundary",
    "inputs": ".boundary",
    "catalog_dir": ".bibliography",
    "Source": ".bibliography",
    "read_toml": ".bibliography",
    "load_sources": ".bibliography",
    "parse_hardware_file": ".catalog",
    "parse_model_file": ".catalog",
    "Catalog": ".catalog",
    "load_catalog": ".catalog",
    "default_catalog": ".catalog",
    "hardware": ".catalog",
    "model": ".catalog",
    "sources": ".catalog",
    "main": ".catalog",
    "data_sources": ".bibliography",
    "sourced_quantity": ".bibliography",
    "FIELD_KINDS": ".schema",
    "Field": ".schema",
    "Schema": ".schema",
    "SCHEMAS": ".kinds",
    "JOURNEY": ".kinds",
    "ASSUMPTIONS": ".kinds",
    "API_PRICES": ".kinds",
    "check_entry": ".schema",
    "check_record": ".schema",
    "CORPUS": ".kinds",
    "SYSTEM": ".kinds",
    "read_entries": ".schema",
    "schema_markdown": ".kinds",
    "HARDWARE": ".kinds",
    "MODEL": ".kinds",
    "PRICE": ".kinds",
    "KV_TIER": ".kinds",
    "RETENTION": ".kinds",
    "MEASUREMENTS": ".kinds",
    "UNAVAILABLE": ".bibliography",
    "counts_bits": ".bibliography",
    "Deployment": ".deployment",
    "check_deployment": ".deployment",
    "EP_EXCHANGES": ".deployment",
    "model_from_hf_config": ".hf_config",
    "ALGORITHMS": ".interconnect",
    "DEFAULT_SCALE_UP_LATENCY_S": ".interconnect",
    "DEFAULT_SCALE_OUT_LATENCY_S": ".interconnect",
    "Topology": ".interconnect",
    "topology": ".interconnect",
    "link_share": ".interconnect",
    "PRICE_TIERS": ".specs",
    "SCALE_UP_TOPOLOGIES": ".specs",
    "Price": ".specs",
    "Hardware": ".specs",
    "rental_price": ".rentals",
    "DEFAULT_RENTAL_TIERS": ".rentals",
    "latest_rental": ".rentals",
    "latest_purchase": ".rentals",
    "rentals_listed": ".rentals",
    "Attention": ".layers",
    "LinearAttention": ".layers",
    "MoE": ".layers",
    "check_whole": ".layers",
    "Model": ".specs",
    "Efficiency": ".efficiency",
    "ROOFLINE": ".efficiency",
    "CATALOG_ENV": ".user_catalog",
    "USER_SUBDIRS": ".user_catalog",
    "check_folders": ".user_catalog",
    "user_subdir": ".user_catalog",
    "search_path": ".user_catalog",
    "use_catalog": ".user_catalog",
    "catalog_generation": ".user_catalog",
    "TOTAL_TOLERANCE": ".systems",
    "TOTALS": ".systems",
    "Switch": ".systems",
    "System": ".systems",
    "parse_system_file": ".systems",
    "systems_dirs": ".systems",
    "load_systems": ".systems",
    "system": ".systems",
    "Workload": ".workload",
    "SLO": ".workload",
    "Link": ".workload",
    "accepts_legacy": ".workload",
    "accepts_legacy_forms": ".workload",
    "RequestLengths": ".lengths",
    "workloads_path": ".lengths",
    "request_lengths": ".lengths",
    "request_lengths_table": ".lengths",
}
_MODULES = ('bibliography', 'boundary', 'catalog', 'counts', 'deployment', 'display', 'peaks', 'hf_config', 'hf_gemma4', 'interconnect', 'kinds', 'rentals', 'schema', 'specs', 'layers', 'systems', 'user_catalog', 'workload', 'lengths', 'efficiency',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
