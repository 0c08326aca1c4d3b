"""Selection: which samples a run takes, worked out by hand on ten ids."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gavel.errors import ConfigError, DataError
from gavel.io.reading import ID_LIST_BYTES
from gavel.selection import Selection, kept_predictions, read_id_file, sample_ids_from

IDS = [f"s{i}" for i in range(10)]


def test_everything_by_default_in_file_order():
    assert Selection().choose(IDS) == list(range(10))
    assert Selection().everything


def test_limit_takes_the_first_n():
    assert Selection(limit=3).choose(IDS) == [0, 1, 2]
    assert Selection(limit=30).choose(IDS) == list(range(10))


def test_sample_ids_keep_file_order_and_drop_repeats():
    assert Selection(sample_ids=("s7", "s2", "s7")).choose(IDS) == [2, 7]
    # --limit applies after the ids: the first of those chosen
    assert Selection(limit=1, sample_ids=("s7", "s2")).choose(IDS) == [2]


def test_shuffle_takes_a_seeded_random_subset_in_file_order():
    first = Selection(limit=4, shuffle=True, seed=3).choose(IDS)
    assert first == Selection(limit=4, shuffle=True, seed=3).choose(IDS)
    assert len(first) == 4 and first == sorted(first) and set(first) <= set(range(10))
    others = {tuple(Selection(limit=4, shuffle=True, seed=s).choose(IDS)) for s in range(20)}
    assert len(others) > 1  # the seed decides


def test_unknown_id_is_an_error_naming_it():
    with pytest.raises(ConfigError, match=r"--sample-id: no pair with id 'nope' in the data"):
        Selection(sample_ids=("s1", "nope")).choose(IDS, "pair")


def test_shuffle_without_limit_and_a_zero_limit_are_refused():
    with pytest.raises(ConfigError, match="give --limit too"):
        Selection(shuffle=True)
    with pytest.raises(ConfigError, match="1 or more"):
        Selection(limit=0)


def test_predictions_of_left_out_samples_are_set_aside_unknown_ones_kept():
    class P:
        def __init__(self, id):
            self.id = id

    kept = kept_predictions([P("s1"), P("s2"), P("ghost")], kept={"s1"}, known=set(IDS))
    assert [p.id for p in kept] == ["s1", "ghost"]


def test_id_files(tmp_path):
    listed = tmp_path / "ids.txt"
    listed.write_text("# chosen by hand\ns3\n\n  s5  \n")
    assert read_id_file(listed) == ["s3", "s5"]
    assert sample_ids_from(["s1", f"@{listed}"]) == ("s1", "s3", "s5")
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(DataError, match="empty"):
        read_id_file(tmp_path / "empty.txt")
    with pytest.raises(DataError, match="no such file"):
        read_id_file(tmp_path / "absent.txt")


def test_an_id_list_is_a_small_regular_file(tmp_path):
    fifo = tmp_path / "ids.fifo"
    os.mkfifo(fifo)  # nobody writes to it: reading it would wait forever
    with pytest.raises(DataError, match="is a FIFO"):
        read_id_file(fifo)
    with pytest.raises(DataError, match="is a device"):
        read_id_file(Path("/dev/zero"))  # reading it would fill memory
    big = tmp_path / "ids.txt"
    with big.open("wb") as handle:
        handle.truncate(ID_LIST_BYTES + 1)  # sparse: no disk used
    with pytest.raises(DataError, match="too large for an id list"):
        read_id_file(big)
    listed = tmp_path / "bom.txt"
    listed.write_bytes(b"\xef\xbb\xbfs1\ns2\n")  # a BOM is not part of the first id
    assert read_id_file(listed) == ["s1", "s2"]
