"""Indexes: one module per kind, plus the on-disk store."""
