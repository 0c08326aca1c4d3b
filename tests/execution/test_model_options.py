"""The model settings only some kinds of model take, checked against the adapters."""

from __future__ import annotations


def test_the_model_flags_table_agrees_with_the_adapters():
    from gavel.execution.model_options import MODEL_FLAGS
    from gavel.models import hf, openai_compat

    accepted = {"openai": set(openai_compat.SPEC_OPTIONS), "hf": {*hf.SPEC_OPTIONS, "max_tokens"}}
    for flag, (option, kinds) in MODEL_FLAGS.items():
        assert {kind for kind, options in accepted.items() if option in options} == set(kinds), flag
