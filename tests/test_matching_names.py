"""The light list of policy names is the registry's own."""

from __future__ import annotations

from gavel.matching import policy_names
from gavel.matching_names import POLICY_NAMES


def test_the_names_are_exactly_the_registered_policies_in_order():
    assert list(POLICY_NAMES) == policy_names()
