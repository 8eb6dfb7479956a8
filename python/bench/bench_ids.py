"""Placeholder: the ID benchmarks land with the fast path."""
