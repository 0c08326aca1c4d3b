"""Telling a server that queues from one that works on many requests at once, by hand-made
reply times."""

from __future__ import annotations

from gavel.transport.queueing import QueueWatch


def test_a_serialized_server_is_seen_at_the_end_of_a_round():
    watch = QueueWatch()
    # 16 sent at once to a server generating one at a time, 0.5 s and 10 tokens each: they
    # come back 0.5 s apart, the k-th after k * 0.5 s.
    verdicts = [watch.reply(0.5 * k, 0.5 * k, 10, limit=16) for k in range(1, 9)]
    assert verdicts[:-1] == [None] * 7  # a round is as many replies as the limit, 8 at most
    assert verdicts[-1] == 3  # it works on one at a time: one generating, two waiting


def test_a_batching_server_is_not():
    watch = QueueWatch()
    # 16 at once, answered together in about 0.5 s, the longer answers later.
    verdicts = [watch.reply(0.5 + 0.01 * k, 0.5 + 0.01 * k, 10 + k, limit=16) for k in range(16)]
    assert verdicts == [None] * 16
    # Steady: replies spread out, each 0.5 s for its tokens (long answers take longer).
    verdicts = [watch.reply(1 + k / 32, 0.05 * (5 + k % 20), 5 + k % 20, 16) for k in range(64)]
    assert verdicts == [None] * 64


def test_a_long_answer_is_not_taken_for_a_queue():
    watch = QueueWatch()
    # One in flight; a reply of 400 tokens takes 40 times one of 10: it generated, not waited.
    replies = [(1.0, 0.1, 10), (5.1, 4.0, 400), (5.3, 0.1, 10), (9.4, 4.0, 400)]
    assert [watch.reply(*reply, limit=1) for reply in replies] == [None] * 4


def test_restart_forgets_the_round_but_not_the_quickest_reply():
    watch = QueueWatch()
    for k in range(1, 4):
        watch.reply(0.5 * k, 0.5 * k, 10, limit=16)
    watch.restart()
    assert watch.replies == [] and watch.quickest == 0.05
