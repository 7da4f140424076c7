"""Mail as clients write it (issue 25), through the daemon: the corpus of
tests/mail_clients/ (Gmail, Outlook desktop and web, Thunderbird, Apple Mail,
mutt, K-9 Mail, FairEmail; plain, HTML, format=flowed with and without DelSp,
top- and bottom-posted, signatures, PGP) sent to one judge, in order.

Each mail replies to a judge's mail whose example holds a SIGNON with a
placeholder password, a preference list and SIGNOFF: before the fix, Outlook's
unmarked original and HTML quotes ran them (three such replies locked the
player out), a flowed line lost its last word, an introduction line drew a
syntax error, and lines after SIGNOFF, a signature or a refused SIGNON were
quoted back with their passwords. Here every mail runs exactly the commands
its entry in cases.toml lists, no password counts as wrong, and no password
stands in any reply or outbox row."""

from __future__ import annotations

import email
import email.policy
import tomllib
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from judge.store.models import Event, Game, InboundMessage, OutboxMessage, Player
from judge.syntax import looks_like_command
from tests.harness import Harness

CORPUS = Path(__file__).parent / "mail_clients"
CASES = tomllib.loads((CORPUS / "cases.toml").read_text(encoding="utf-8"))["mail"]
PASSWORDS = ("anna-Secret-7", "gm-Secret-9")
ANNA, GM = "anna@players.test", "gm@example.test"
# Words of the judge's own mails that the corpus quotes: a reply that holds
# them quoted the mail replied to.
QUOTED_TEXT = ("Send your list, best first", "Without one you count as not minding", "You asked for a manual start")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def judge(request, tmp_path_factory):
    """A preference game ?spring (master gm@example.test) that Anna joined;
    its reminder to her was sent, and the clock is just past her replies'
    Date."""
    tmp = tmp_path_factory.mktemp("mail-clients")
    drop = None
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'judge.sqlite3'}"
    else:
        admin_url = request.getfixturevalue("postgres_admin_url")
        name = f"judge_t_{uuid.uuid4().hex[:12]}"
        admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        url = admin_url.rsplit("/", 1)[0] + "/" + name

        def drop() -> None:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
    h = Harness(tmp / "data", url)
    h.mail(GM, f"CREATE ?spring {PASSWORDS[1]} preference standard\nSET MANUAL START\nSET DEADLINE +48h")
    h.mail(f"Anna <{ANNA}>", f"SIGNON ?spring {PASSWORDS[0]}")
    h.clock.advance(hours=25, minutes=30)  # the reminder goes out at 24 h; the replies are dated 25 h
    h.run()
    assert "SIGNON ?spring yourpassword" in h.body(h.last_to(ANNA))  # what the corpus quotes
    yield h
    h.close()
    if drop is not None:
        drop()


def _events(h, inbound_id: int) -> list[dict]:
    with h.judge.sessions() as s:
        rows = s.scalars(select(Event).where(Event.inbound_id == inbound_id, Event.kind == "command")
                         .order_by(Event.id)).all()
        return [r.data for r in rows]


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_a_client_mail_runs_its_commands_and_nothing_it_quotes(judge, case):
    h = judge
    raw = (CORPUS / case["file"]).read_bytes()
    message_id = email.message_from_bytes(raw, policy=email.policy.default)["Message-ID"].strip()
    h.inbox.add(raw)
    h.run()
    with h.judge.sessions() as s:
        row = s.scalars(select(InboundMessage).where(InboundMessage.message_id == message_id)).one()
        assert row.status == "done", (row.status, row.reason)
        replies = s.scalars(select(OutboxMessage).where(OutboxMessage.inbound_id == row.id)).all()
        players = {p.address: p for p in s.scalars(select(Player))}
        game = s.scalars(select(Game).where(Game.name == "spring")).one()
        row_id = row.id

    got = []
    for event in _events(h, row_id):
        kind = event["status"]
        if kind == "rejected" and not looks_like_command(event["text"]):
            kind = "prose"
        got.append([kind, event["text"].strip()])
    assert got == case["events"], f"{case['file']} ({case['client']})"

    # No password taken for a wrong one: the quoted examples never ran.
    assert players[ANNA].failures == 0 and not players[ANNA].locked
    assert game.gm_failures == 0 and not game.gm_locked

    [reply] = replies
    body = h.body(email.message_from_bytes(reply.raw, policy=email.policy.default))
    for secret in PASSWORDS:
        assert secret not in body and secret.encode() not in reply.raw, (case["file"], body)
    for words in QUOTED_TEXT:
        assert words not in body, (case["file"], body)
    if "list" in case:
        [done] = [e for e in _events(h, row_id) if e["text"].startswith("SET PREFERENCE")]
        assert case["list"] in done["message"], done["message"]
    if "ignored" in case:
        assert case["ignored"] in body, body


def test_no_password_in_any_outbox_row_or_event(judge):
    """Whatever of the corpus ran before on this judge: no row keeps a
    password (the raw inbound mails aside, until their retention ends)."""
    h = judge
    with h.judge.sessions() as s:
        outbox = b"".join(r.raw for r in s.scalars(select(OutboxMessage)))
        events = repr([e.data for e in s.scalars(select(Event))])
    for secret in PASSWORDS:
        assert secret.encode() not in outbox and secret not in events
