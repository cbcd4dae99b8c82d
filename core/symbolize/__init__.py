"""Symbolization: the markup filter, resolvers from build ID + address to frames."""
