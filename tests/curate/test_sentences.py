"""Long captions into single sentences: what a captioning model writes, split as a reader would."""

from __future__ import annotations

from gavel.curate.sentences import MAX_CHARS, split_sentences


def test_prose_is_split_at_sentence_ends():
    text = "A red car is parked. Two people walk by! Is the sky blue? It is 3.5 m long."
    assert split_sentences(text) == [
        "A red car is parked.",
        "Two people walk by!",
        "Is the sky blue?",
        "It is 3.5 m long.",
    ]


def test_abbreviations_initials_and_ellipses_do_not_end_a_sentence():
    text = (
        "Mr. Smith, e.g. the man on the left, stands near St. Paul's church. "
        "A sign by J. Doe reads 'open'... The dog sleeps."
    )
    assert split_sentences(text) == [
        "Mr. Smith, e.g. the man on the left, stands near St. Paul's church.",
        "A sign by J. Doe reads 'open'...",
        "The dog sleeps.",
    ]


def test_a_lower_case_word_after_a_stop_does_not_start_a_sentence():
    assert split_sentences("The no. 5 bus is red. it waits.") == ["The no. 5 bus is red. it waits."]


def test_lists_headings_and_markdown_become_sentences():
    text = (
        "## Description\n"
        "In the image:\n"
        "- A **blue** bench sits near the tree.\n"
        "* Three birds fly overhead.\n"
        "1. A woman holds an umbrella.\n"
        "2) The ground is wet. Puddles reflect the light.\n"
    )
    assert split_sentences(text) == [
        "A blue bench sits near the tree.",
        "Three birds fly overhead.",
        "A woman holds an umbrella.",
        "The ground is wet.",
        "Puddles reflect the light.",
    ]


def test_quotes_close_a_sentence_and_fragments_are_dropped():
    text = 'The sign says "Stop." A cat naps. Yes. Nice view.'
    assert split_sentences(text) == ['The sign says "Stop."', "A cat naps."]
    assert split_sentences("Nice view. A cat naps.", min_words=1) == ["Nice view.", "A cat naps."]


def test_empty_and_huge_text_are_safe():
    assert split_sentences("") == []
    assert split_sentences("\n\n  \r\n") == []
    long = " ".join(["word"] * 1000) + "."
    (only,) = split_sentences(long)
    assert len(only) <= MAX_CHARS and not only.endswith(" ")
