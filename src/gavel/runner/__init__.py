"""Running a model over a benchmark: requests in, an append-only predictions file out."""
