"""Importers: one module per upstream benchmark source."""
