"""The training set as a torch Dataset, and the seeded order it is read in.

Examples are encoded when read (in DataLoader workers when there are any), not up front: the
vision inputs of a few thousand full-size images would not fit in memory.

The order is a permutation drawn from ``(seed, epoch)`` alone, the same on every process, so
(a) a run is reproducible, (b) every process of a multi-GPU run shards the same order (accelerate
gives each process its slice of each batch), and (c) a resumed run reads exactly the batches the
interrupted one had not reached yet.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gavel.train.masking import ChatEncoder, Encoded
from gavel.train.sft_data import ChatExample


class EncodedDataset:
    """Map-style dataset: index → :class:`~gavel.train.masking.Encoded`."""

    def __init__(self, examples: Sequence[ChatExample], encoder: ChatEncoder):
        self.examples = list(examples)
        self.encoder = encoder

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> Encoded:
        return self.encoder.encode(self.examples[index])


class EpochShuffle:
    """A sampler whose permutation depends on the seed and the epoch only (``set_epoch``)."""

    def __init__(self, size: int, seed: int, *, shuffle: bool = True):
        self.size = size
        self.seed = seed
        self.shuffle = shuffle
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def order(self) -> list[int]:
        if not self.shuffle:
            return list(range(self.size))
        import torch

        generator = torch.Generator()
        generator.manual_seed(self.seed * 1_000_003 + self.epoch)
        return torch.randperm(self.size, generator=generator).tolist()

    def __iter__(self) -> Iterator[int]:
        return iter(self.order())

    def __len__(self) -> int:
        return self.size
