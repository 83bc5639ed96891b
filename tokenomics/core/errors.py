"""Exceptions raised by tokenomics.

Every error says what was wrong and what would be right. They subclass ``ValueError`` (or
``KeyError`` for lookups) so that generic handlers keep working.
"""

from __future__ import annotations


class TokenomicsError(ValueError):
    """Base class of the library's input errors."""


class CatalogError(TokenomicsError):
    """A catalog file is malformed: the message names the file and the field."""


class UnknownEntryError(TokenomicsError, KeyError):
    """A catalog id, alias or format name is not known."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class UnitError(TokenomicsError):
    """A quantity has the wrong dimension or cannot be parsed."""


class DoesNotFitError(TokenomicsError):
    """A model (or its workload) does not fit the devices' memory."""


class NotPublishedError(TokenomicsError):
    """A catalog field is not published (or not supported) for this entry."""
