"""The three-stage annotation tool: annotators, reviewers and spot-checkers (docs/annotate.md).

The GAVEL paper (section 2.2) has each candidate pair annotated (is it wrong, why, where),
reviewed with corrections, and a random sample inspected again. This package keeps such a
project in one SQLite file (:mod:`~gavel.annotate.db`), serves it to the three roles as a
small web app (:mod:`~gavel.annotate.app`), and exports the result as GAVEL JSONL
(:mod:`~gavel.annotate.export`). The web parts need the ``annotate`` extra.
"""
