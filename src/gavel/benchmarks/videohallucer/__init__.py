"""VideoHallucer: paired basic / hallucinated yes-no questions on videos."""
