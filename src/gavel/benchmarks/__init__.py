"""Benchmarks: each module loads its data, parses answers and scores them."""
