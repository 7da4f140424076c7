"""A judge on Maildir folders with a ManualClock: tests mail it, move time
forward, and read what it sent."""

from __future__ import annotations

import email
import email.policy
import mailbox
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from judge.app import build_judge
from judge.clock import ManualClock
from judge.config import load_config
from judge.transports.maildir import read_all

JUDGE = "judge@example.test"


def open_lui_f8(h: Harness, gm: str, name: str, players: list[str], *, after_hours: float) -> None:
    """A LUI game ?name of the F8 preset, the 8 `players` (From addresses)
    signed on, every seat's prize 1 0, a bid's timer 1 h, started by `gm`
    (password gmpw), the clock then moved `after_hours` on (the pregame is
    24 h) and a pass run."""
    h.form_game(gm, f"CREATE ?{name} gmpw lui\nSET PRESET F8", players)
    prizes = "\n".join(f"SET PRIZE {seat} 1 0" for seat in "RSTUVWXYZ")
    h.mail(gm, f"SIGNON M{name} gmpw\n{prizes}\nSET TIMER 1\nSTART")
    h.clock.advance(hours=after_hours)
    h.run()


def make_mail(sender: str, body: str, *, subject: str = "commands", to: str = JUDGE,
              message_id: str | None = None, headers: dict[str, str] | None = None,
              date: datetime | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(date or datetime(2026, 1, 1, tzinfo=timezone.utc))
    msg["Message-ID"] = message_id or make_msgid(domain="players.test")
    for k, v in (headers or {}).items():
        msg[k] = v
    msg.set_content(body)
    return msg.as_bytes()


class Harness:
    def __init__(self, data_dir: Path, database_url: str, sections: dict | None = None, **judge_options) -> None:
        """`judge_options`: the [judge] table's; `sections`: other tables,
        like {"blinding": {"trusted_judges": [...]}}."""
        self.clock = ManualClock(datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc))
        # Most tests were written when CREATE without a method made a Blind
        # Auction; the real default (preference, as on nJudge) is tested by
        # passing default_method="preference" or by load_config itself.
        options = {"address": JUDGE, "database": database_url, "password_cost": 4,
                   "default_method": "blind-auction", **judge_options}
        self.config = load_config(None, data_dir=data_dir, overrides={"judge": options, **(sections or {})})
        self.judge = build_judge(self.config, self.clock)
        self.inbox = mailbox.Maildir(self.config.inbox_path, create=True)
        # Raw mail -> its parsed message: a test reads the outbox after every
        # mail, and parsing all of it again each time made long games
        # quadratic (a mail, once written, never changes).
        self._parsed: dict[bytes, EmailMessage] = {}

    def _parse(self, raw: bytes) -> EmailMessage:
        msg = self._parsed.get(raw)
        if msg is None:
            msg = self._parsed[raw] = email.message_from_bytes(raw, policy=email.policy.default)
        return msg

    def send(self, sender: str, body: str, **kw) -> bytes:
        raw = make_mail(sender, body, **kw)
        self.inbox.add(raw)
        return raw

    def run(self) -> dict:
        return self.judge.run_once()

    def mail(self, sender: str, body: str, **kw) -> dict:
        self.send(sender, body, **kw)
        return self.run()

    def form_game(self, gm: str, create: str, players: list[str], password: str = "pw") -> None:
        """The master's CREATE mail (`create`: "CREATE ?name ..." and any
        lines after it), then each of `players` (From addresses) signing
        on with `password`, run in one pass."""
        self.mail(gm, create)
        name = create.split()[1]  # "?name"
        for player in players:
            self.send(player, f"SIGNON {name} {password}")
        self.run()

    def sent(self) -> list[EmailMessage]:
        return [self._parse(raw) for raw in read_all(self.config.outbox_path)]

    def sent_to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.sent() if address.lower() in str(m["To"]).lower()]

    def _rows_to(self, address: str, kind: str | None = None) -> list[EmailMessage]:
        """Mails to `address` in the outbox table, oldest first, that the
        transport has delivered to the outbox Maildir."""
        from sqlalchemy import select

        from judge.store.models import OutboxMessage

        delivered = {str(m["Message-ID"]) for m in self.sent()}
        with self.judge.sessions() as s:
            rows = s.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()
            return [self._parse(r.raw) for r in rows
                    if address.lower() in [x.lower() for x in r.recipients]
                    and (kind is None or r.kind == kind) and r.message_id in delivered]

    def last_to(self, address: str) -> EmailMessage:
        mails = self._rows_to(address)
        assert mails, f"no mail to {address}"
        return mails[-1]

    def sent_to_kind(self, address: str, kind: str) -> list[EmailMessage]:
        return self._rows_to(address, kind)

    def body(self, msg: EmailMessage) -> str:
        part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
        return part.get_content().replace("\r\n", "\n")

    def close(self) -> None:
        self.judge.sessions.kw["bind"].dispose()
