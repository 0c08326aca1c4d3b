"""The GAVEL paper's supervised baseline (appendix A.2): coordinate tokens, SFT data, training.

One concept per module, in the order data flows (docs/train.md describes the method):

- :mod:`~gavel.train.coords`: q(v, S), its inverse, and the 1,025 ``<p-512>``…``<p512>`` tokens;
- :mod:`~gavel.train.template`: the assistant response with one ``<BBX>`` per gold box;
- :mod:`~gavel.train.sft_data`: GAVEL lines → chat examples (the evaluation prompt + answer);
- :mod:`~gavel.train.masking`: chat example → tokens whose labels cover only the answer;
- :mod:`~gavel.train.collate`, :mod:`~gavel.train.dataset`: batches and the seeded order;
- :mod:`~gavel.train.model`, :mod:`~gavel.train.lora`: the tokens added, what trains;
- :mod:`~gavel.train.checkpoints`, :mod:`~gavel.train.progress`, :mod:`~gavel.train.trainer`:
  the resumable training loop on accelerate;
- :mod:`~gavel.train.tiny`: tiny offline models and data for tests, the benchmark and smoke runs.

``coords``, ``template`` and ``sft_data`` are pure Python; the rest imports torch only when
used, so ``import gavel`` never needs it.
"""
