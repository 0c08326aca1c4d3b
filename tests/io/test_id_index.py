"""The compact index of ids against a dict doing the same job."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gavel.io.id_index import IdIndex, id_index


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=300), st.lists(st.text(max_size=6), max_size=30))
def test_the_index_answers_as_a_dict_would(ids, others):
    index, expected = IdIndex(), {}
    for sample_id in ids:
        assert index.add(sample_id) == expected.get(sample_id)
        expected.setdefault(sample_id, len(expected))
    assert list(index) == list(expected) == [index[i] for i in range(len(index))]
    for sample_id in [*ids, *others]:
        assert index.get(sample_id) == expected.get(sample_id)
    if expected:
        assert index[-1] == list(expected)[-1]


def test_a_hundred_thousand_ids_survive_every_rebuild_of_the_table():
    ids = [f"sample-{i:06d}/é" for i in range(100_000)]
    index = id_index(ids)
    assert len(index) == len(ids)
    assert all(index.get(ids[i]) == i for i in range(0, len(ids), 997))
    assert [index.get(ids[i]) for i in (0, 1, 65_535, 99_999)] == [0, 1, 65_535, 99_999]
    assert index.get("sample-100000/é") is None
    assert index.add(ids[12_345]) == 12_345 and len(index) == len(ids)
    assert index[50_000:50_003] == ids[50_000:50_003]


def test_ids_no_encoder_takes_are_kept_as_python_holds_them():
    index = id_index(["a\udfffb", "ab"])
    assert index.get("a\udfffb") == 0 and index[0] == "a\udfffb" and index.get("ab") == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.text(min_size=1, max_size=6), max_size=30), max_size=4))
def test_joined_pieces_find_their_ids_and_the_first_repeat_as_one_index_would(pieces):
    # Each piece distinct on its own (as each process's loader makes it); across pieces, ids
    # may repeat: the first position that repeats an earlier id is found, with that id's first.
    pieces = [list(dict.fromkeys(piece)) for piece in pieces]
    joined, repeat = IdIndex.joined([id_index(piece).parts() for piece in pieces])
    every = [sample_id for piece in pieces for sample_id in piece]
    assert list(joined) == every
    first_seen: dict[str, int] = {}
    expected = None
    for position, sample_id in enumerate(every):
        if sample_id in first_seen:
            expected = (position, first_seen[sample_id])
            break
        first_seen[sample_id] = position
    assert repeat == expected
    if expected is None:
        assert all(joined.get(sample_id) == i for i, sample_id in enumerate(every))
        assert joined.get("\x00absent") is None


def test_an_index_without_lookups_collects_the_same_parts_and_finds_repeats_when_joined():
    distinct = [f"s{i}" for i in range(3000)] + ["é"]
    collected, looked_up = IdIndex(lookups=False), IdIndex()
    for sample_id in distinct:
        assert collected.add(sample_id) is None
        looked_up.add(sample_id)
    assert collected.parts() == looked_up.parts()
    with pytest.raises(TypeError):
        collected.get("s1")
    assert collected.add("s7") is None  # a repeat is not looked for here...
    joined, repeat = IdIndex.joined([collected.parts()])
    assert repeat == (len(distinct), 7)  # ...but found when the pieces are joined
    assert list(joined) == [*distinct, "s7"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=4), unique=True, min_size=1, max_size=200), st.data())
def test_a_table_built_at_once_finds_every_id_even_where_slots_wrap_around(ids, data):
    """The table built with numpy (sorted by home slot, wrapping past the end) finds what
    inserting the ids one by one finds, in tables from just large enough to roomy."""
    index = IdIndex()
    for sample_id in ids:
        index.add(sample_id)
    size = 1
    while size < len(ids):
        size *= 2
    index._rebuild(size * data.draw(st.sampled_from([1, 2, 4])))
    assert [index.get(sample_id) for sample_id in ids] == list(range(len(ids)))
    assert sorted(v for v in index._table if v >= 0) == list(range(len(ids)))
    if len(ids) < len(index._table):
        assert index.get("\x00absent-id") is None
