"""A batch of stored mail reads the senders' counts once (judge.mailbatch):
every mail of it still meets the flood cap and the day's one no-command
reply exactly as if it ran alone, also when the mails of one batch run at
different times (each mail's hour and day start later than the first's)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from judge.clock import ManualClock
from judge.store.models import InboundMessage, OutboxMessage
from tests.harness import Harness, make_mail

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
FLOODER = "flood@players.test"
CHATTER = "chat@players.test"
CAP = 3


class TickingClock(ManualClock):
    """Moves on by `step` each time the judge reads it: the daemon reads it
    once per mail it runs."""

    def __init__(self, start: datetime, step: timedelta) -> None:
        super().__init__(start)
        self.step = step

    def now(self) -> datetime:
        now = self._now
        self._now += self.step
        return now


def _outcomes(url: str, tmp_path, name: str, step: timedelta, batch: int) -> list[tuple]:
    h = Harness(tmp_path / name, url)
    try:
        h.judge.config = h.config = dataclasses.replace(h.config, max_mails_per_sender_per_hour=CAP)
        # Earlier mails: the flooder's cap's worth 59.5 minutes before T0, and
        # the chatter's no-command reply 23 h 59.5 min before: both leave the
        # window while the batch at T0 runs.
        h.clock.set(T0 - timedelta(days=1) + timedelta(seconds=30))
        h.send(CHATTER, "hello judge", message_id="<chat-old@players.test>")
        h.run()
        h.clock.set(T0 - timedelta(hours=1) + timedelta(seconds=30))
        for i in range(CAP):
            h.send(FLOODER, "LIST", message_id=f"<old{i}@players.test>")
        h.run()
        for i in range(12):
            h.inbox.add(make_mail(FLOODER, "LIST", message_id=f"<new{i}@players.test>"))
            h.inbox.add(make_mail(CHATTER, "just chatting", message_id=f"<chat{i}@players.test>"))
        assert h.judge.poll_sources() == 24
        h.judge.clock = TickingClock(T0, step)
        assert h.judge.process_pending(batch=batch) == 24
        with h.judge.sessions() as s:
            rows = s.execute(select(InboundMessage.message_id, InboundMessage.status, InboundMessage.reason,
                                    InboundMessage.processed_at).order_by(InboundMessage.id)).all()
            replies = s.execute(select(InboundMessage.message_id, OutboxMessage.kind)
                                .join(OutboxMessage, OutboxMessage.inbound_id == InboundMessage.id)
                                .order_by(OutboxMessage.id)).all()
        return [tuple(r) for r in rows] + [tuple(r) for r in replies]
    finally:
        h.close()


@pytest.mark.parametrize("step", [timedelta(seconds=7), timedelta(minutes=2)], ids=["seconds", "minutes"])
def test_a_batch_counts_each_mail_as_if_it_ran_alone(new_store, tmp_path, step):
    """Seconds apart, the batch's counts serve every mail; minutes apart,
    the later mails' hours start past the batch's margin and the store
    counts them: either way, the same outcomes as one mail a transaction."""
    alone = _outcomes(new_store("alone"), tmp_path, "alone", step, batch=1)
    batched = _outcomes(new_store("batched"), tmp_path, "batched", step, batch=100)
    assert batched == alone
    status = {m: (st, reason) for m, st, reason, *_ in (r for r in alone if len(r) == 4)}
    # The old mails leave the hour while the batch runs: capped first, then
    # answered again; at most CAP answered in any hour.
    new = [status[f"<new{i}@players.test>"][0] for i in range(12)]
    assert new[0] == "quarantined" and "done" in new
    assert "flood: 3 mails" in status["<new0@players.test>"][1]
    # The chatter's day's reply leaves the day: one more reply, then none.
    chat = [status[f"<chat{i}@players.test>"] for i in range(12)]
    assert [st for st, _ in chat].count("done") == 1
    kinds = [k for _, k in (r for r in alone if len(r) == 2)]
    assert kinds.count("no-command") == 2 and kinds.count("flood") == 1
