"""Reductions from per-sample scores to the numbers in the tables."""
