"""Making GAVEL-style data: candidate image–sentence pairs and their alignment filtering.

The GAVEL paper (section 2, appendix A.1) builds its training data in two stages: candidate
pairs from image-to-text captioning and text-to-image generation, rated for alignment by a VLM,
with the low-rated pairs going to human annotators (:mod:`gavel.annotate`). See docs/curate.md.
"""
