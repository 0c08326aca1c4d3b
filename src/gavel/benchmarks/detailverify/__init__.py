"""DetailVerifyBench: tag the hallucinated words of a long caption."""
