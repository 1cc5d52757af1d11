"""Importers: one module per source, each writing only through the Store."""
