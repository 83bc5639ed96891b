"""Core: the units registry, number formats, errors and input checks every stage uses.

Nothing here knows about models or hardware.

Modules
-------
``checks``
    Input checks shared by the pure functions: clear errors instead of NaNs or clamps.
``dtypes``
    Numeric formats: effective storage bits per element and the hardware peak each runs at.
``errors``
    Exceptions raised by tokenomics.
``lazy``
    Lazy attribute tables for the package and its stage subpackages.
``units``
    The library's one unit registry and the conversions at its boundary.
"""

from tokenomics.core.lazy import attach

# name -> module that defines it (tests/test_api.py checks that every entry resolves and
# that every public name of the modules is listed)
_EXPORTS = {
    "MAX_COUNT": ".checks",
    "counts": ".checks",
    "together": ".checks",
    "positive": ".checks",
    "non_negative": ".checks",
    "context_within": ".checks",
    "single_amount": ".checks",
    "single_whole": ".checks",
    "seed": ".checks",
    "fraction": ".checks",
    "choice": ".checks",
    "flag": ".checks",
    "open_probability": ".checks",
    "fmt": ".checks",
    "scalar_or_array": ".checks",
    "DType": ".dtypes",
    "PEAK_KEYS": ".dtypes",
    "dtype": ".dtypes",
    "bytes_per_element": ".dtypes",
    "formats": ".dtypes",
    "TokenomicsError": ".errors",
    "CatalogError": ".errors",
    "UnknownEntryError": ".errors",
    "UnitError": ".errors",
    "DoesNotFitError": ".errors",
    "NotPublishedError": ".errors",
    "MovedModule": ".lazy",
    "attach": ".lazy",
    "CANONICAL": ".units",
    "registry": ".units",
    "Q_": ".units",
    "as_quantities": ".units",
    "made": ".units",
    "readable": ".units",
    "ReadableRepr": ".units",
    "Result": ".units",
    "unit_of": ".units",
    "parse_quantity": ".units",
    "check_unit_string": ".units",
    "is_bit_unit": ".units",
    "as_magnitude": ".units",
    "to_array": ".units",
    "coerce_fields": ".units",
}
_MODULES = ('checks', 'dtypes', 'errors', 'lazy', 'units',)

__getattr__, __dir__, __all__ = attach(__name__, globals(), _EXPORTS, _MODULES)
