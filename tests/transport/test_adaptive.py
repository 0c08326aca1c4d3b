"""The AIMD bookkeeping of the in-flight limit."""

from __future__ import annotations

import pytest

from gavel.transport.adaptive import DECREASE, MAX_SLOWDOWN, AdaptiveLimit


def test_it_starts_at_the_ceiling_and_never_goes_above_it():
    limit = AdaptiveLimit(8)
    assert limit.current == 8
    for _ in range(100):
        limit.clean()
    assert limit.current == 8 and limit.value == 8.0


def test_a_429_shrinks_it_once_per_round():
    limit = AdaptiveLimit(16)
    epoch = limit.epoch
    assert limit.refused(epoch) is True
    assert limit.value == pytest.approx(16 * DECREASE) and limit.current == int(16 * DECREASE)
    # The other requests sent under the old limit are refused too: no new information.
    assert [limit.refused(epoch) for _ in range(7)] == [False] * 7
    assert limit.value == pytest.approx(16 * DECREASE) and limit.refusals == 8
    assert limit.decreases == 1
    assert limit.refused(limit.epoch, shrink=False) is False  # counted only
    assert limit.refusals == 9 and limit.decreases == 1
    assert limit.refused(limit.epoch) is True  # one sent after the decrease: it was still too many
    assert limit.value == pytest.approx(16 * DECREASE**2)
    halving = AdaptiveLimit(16, decrease=0.5)
    halving.refused(0)
    assert halving.current == 8


def test_never_below_one():
    limit = AdaptiveLimit(4)
    for _ in range(10):
        limit.refused(limit.epoch)
    assert limit.current == 1 and limit.value == 1.0


def test_clean_replies_grow_it_by_one_per_round_then_slowly_past_the_last_429():
    limit = AdaptiveLimit(64, decrease=0.5)
    for _ in range(3):
        limit.refused(limit.epoch)  # 64 -> 32 -> 16 -> 8; the last 429 came at 16
    assert limit.current == 8 and limit.loss == 16
    replies = 0
    while limit.value < 9:
        limit.clean()
        replies += 1
    assert 8 <= replies <= 9  # one round of about 8 replies: +1
    while limit.value < 16:
        limit.clean()
    replies = 0
    while limit.value < 17:
        limit.clean()
        replies += 1
    assert 4 * 16 <= replies <= 4 * 17  # four times slower beyond 16


def test_a_429_at_the_same_level_makes_probing_rarer_and_another_level_resets_it():
    limit = AdaptiveLimit(32)
    limit.refused(limit.epoch)  # at 32
    assert limit.slowdown == 4
    while limit.value < 32:
        limit.clean()
    limit.refused(limit.epoch)  # again at 32: the limit is where it was
    assert limit.slowdown == 8
    for _ in range(10):
        while limit.value < 32:
            limit.clean()
        limit.refused(limit.epoch)
    assert limit.slowdown == MAX_SLOWDOWN
    limit.set_ceiling(64)
    while limit.value < 40:
        limit.clean()
    limit.refused(limit.epoch)  # higher up than before: the limit rose
    assert limit.slowdown == 4 and limit.loss == pytest.approx(40, abs=0.1)


def test_a_new_ceiling_caps_what_was_learned():
    limit = AdaptiveLimit(16)
    limit.set_ceiling(4)
    assert limit.current == 4
    limit.set_ceiling(32)
    assert limit.current == 32  # nothing learned yet: start at the ceiling
    limit.refused(limit.epoch)
    limit.set_ceiling(64)
    assert limit.current == int(32 * DECREASE)  # learned: kept
    with pytest.raises(ValueError):
        AdaptiveLimit(0)


def test_once_a_429_has_come_it_paces_at_its_value_over_the_latency():
    limit = AdaptiveLimit(8)
    assert limit.rate(0.1) is None and limit.cap == 8  # nothing known to limit: not paced
    limit.refused(limit.epoch)  # 8 -> 5.6
    assert limit.rate(None) is None  # no reply timed yet
    # 5.6 in flight on average: 56 a second for 0.1 s replies, 6 at once so a slow one
    # does not hold the pace back (a whole-number limit had only 5, or 6 stepping over it).
    assert limit.rate(0.1) == pytest.approx(56) and limit.cap == 6 and limit.current == 5
    limit.value = 5.0
    assert limit.cap == 5 and limit.rate(0.25) == pytest.approx(20)
    for _ in range(10):
        limit.refused(limit.epoch)
    assert limit.cap == 1 and limit.rate(0.5) == pytest.approx(2)


def test_a_queue_at_the_server_lowers_it_without_a_pace_and_it_grows_back_slowly():
    limit = AdaptiveLimit(16)
    epoch = limit.epoch
    limit.lower_to(3)
    assert limit.current == 3 and limit.queue_cuts == 1 and limit.decreases == 0
    assert limit.epoch == epoch + 1  # what was sent before says nothing of the new limit
    assert limit.rate(1.0) is None and limit.cap == 3  # not a rate limit: nothing paced
    replies = 0
    while limit.value < 4:
        limit.clean()
        replies += 1
    assert replies >= 4 * 3  # four times slower than one per round beyond where it was put
    limit.lower_to(3)  # the queue came back at the same level: grown back slower still
    assert limit.slowdown == 8


def test_a_request_timed_out_in_the_servers_queue_cuts_it_once_a_round():
    limit = AdaptiveLimit(16)
    epoch = limit.epoch
    assert limit.queued(epoch) is True and limit.value == pytest.approx(16 * DECREASE)
    assert limit.queued(epoch) is False  # sent under the old limit: no news
    assert limit.queue_cuts == 1 and limit.rate(1.0) is None
