"""Tables (and later plots and HTML) made from results."""
