"""The echo filter: whole prompt fragments are removed, parts of sentences and answers stay."""

from __future__ import annotations

import pytest

from gavel.parsing.echo import EchoFilter, fragments, template_pieces

TEMPLATE = (
    'Caption: "{caption}"\n'
    "Does the caption contain an error? Look **carefully**.\n"
    'Reply: {{"hallucination": true or false, "explanation": "one or two sentences"}}\n'
    "Use an empty list when there is no error."
)


def test_template_pieces_are_cut_at_fields_and_unescape_braces():
    pieces = template_pieces(TEMPLATE)
    assert pieces[0] == 'Caption: "'
    assert '{"hallucination": true or false' in pieces[1]


def test_fragments_are_lines_sentences_and_quoted_placeholders_of_three_words_or_more():
    found = fragments("Does the caption contain an error? Look carefully.\nCaption: x\n"
                      'Say "one short sentence" or "ok".')  # fmt: skip
    assert "Does the caption contain an error? Look carefully." in found
    assert "Does the caption contain an error?" in found
    assert "one short sentence" in found
    assert "Look carefully." not in found and "Caption: x" not in found and "ok" not in found


@pytest.mark.parametrize(
    "copy",
    [
        "Use an empty list when there is no error.",
        "use an EMPTY list   when\nthere is no error",  # case, blanks, no full stop
        "Does the caption contain an error? Look carefully.",  # markdown dropped
        'Reply: {"hallucination": true or false, "explanation": "one or two sentences"}',
    ],
)
def test_copies_are_removed_whatever_their_case_blanks_or_markdown(copy):
    stripped = EchoFilter.from_templates([TEMPLATE]).remove(copy)
    assert stripped.echoed and stripped.empty, stripped


def test_parts_of_a_sentence_and_real_answers_are_kept():
    echo = EchoFilter.from_templates([TEMPLATE])
    for answer in ("There is no error.", "The caption contains an error: the dog is brown.",
                   "when there is no error"):  # fmt: skip
        stripped = echo.remove(answer)
        assert (stripped.text, stripped.copied) == (answer, 0)


def test_only_the_copy_goes_and_the_answer_around_it_stays():
    echo = EchoFilter.from_templates([TEMPLATE])
    stripped = echo.remove("Use an empty list when there is no error. Yes, the dog is brown.")
    assert stripped.copied == 1 and stripped.text.strip() == "Yes, the dog is brown."


def test_a_placeholder_value_goes_but_its_json_stays():
    echo = EchoFilter.from_templates([TEMPLATE])
    stripped = echo.remove('{"hallucination": true, "explanation": "one or two sentences"}')
    assert stripped.text == '{"hallucination": true, "explanation": " "}'
