"""Folio: an offline desktop knowledge-base reader."""

__version__ = "0.1.0"
