"""The judge against a corpus of malformed and hostile mail (tests/bad_mail),
fed as one backlog: nothing raises, every mail is kept, each gets the outcome
it should, and a flood from one address is capped."""

from __future__ import annotations

import email
import email.policy
from collections import defaultdict

import pytest
from sqlalchemy import select

from judge.config import ConfigError, load_config
from judge.games import find_game
from judge.mail.inbound import parse_message
from judge.store.models import InboundMessage, OutboxMessage
from tests.bad_mail.corpus import GAME, GM, REPLY_CONTAINS, REPLY_LACKS, SETUP, corpus
from tests.harness import Harness, make_mail

FLOODER = "flood@players.test"


def harness(tmp_path, **limits) -> Harness:
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.config = h.judge.config = type(h.config)(**{**h.config.__dict__, "max_message_bytes": 2_000_000, **limits})
    return h


def body_of(raw: bytes) -> str:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    return part.get_content().replace("\r\n", "\n")


def test_the_bad_mail_corpus_as_one_backlog(tmp_path):
    h = harness(tmp_path)
    h.mail(GM, SETUP)
    with h.judge.sessions() as s:
        setup_ids = set(s.scalars(select(InboundMessage.id)))
    cases = corpus()
    assert len(cases) >= 40
    expected: dict[str, tuple[str, str, bytes]] = {}
    for name, raw, outcome in cases:
        message_id = parse_message(raw).message_id
        if message_id in expected:  # a duplicate: dropped, whichever copy came first
            assert expected[message_id][1] == outcome
        else:
            expected[message_id] = (name, outcome, raw)
        h.inbox.add(raw)

    h.run()  # raises if the daemon does
    assert h.run()["processed"] == 0

    with h.judge.sessions() as s:
        rows = [r for r in s.scalars(select(InboundMessage).order_by(InboundMessage.id)) if r.id not in setup_ids]
        replies: dict[int, list[OutboxMessage]] = defaultdict(list)
        for o in s.scalars(select(OutboxMessage)):
            replies[o.inbound_id].append(o)
        assert len(rows) == len(expected)
        assert {r.message_id for r in rows} == set(expected)
        wrong = []
        for row in rows:
            name, outcome, raw = expected[row.message_id]
            if row.oversize is not None:
                # Over the size limit: only the header block is kept (read
                # before the mail is read whole), with the mail's size.
                assert row.oversize == len(raw) and raw.startswith(row.raw) and len(row.raw) < 70_000, name
            elif row.message_id != "<duplicate_id@players.test>":
                assert row.raw == raw, name  # kept byte for byte
            out = replies.get(row.id, [])
            got = {"done": "answered"}.get(row.status, row.status)
            if got != outcome or (outcome == "answered") != bool(out):
                wrong.append(f"{name}: expected {outcome}, got {row.status} ({row.reason}), {len(out)} mail(s)")
                continue
            assert row.reason is None or "Traceback" not in row.reason, name  # no bug met it
            if outcome == "answered":
                assert len(out) == 1, name
                reply = out[0]
                # A mail without any command gets the short no-command reply.
                assert reply.kind in ("reply", "no-command") and reply.status == "sent", name
                assert reply.recipients == [row.sender], name
                text = body_of(reply.raw)
                for needle in REPLY_CONTAINS.get(name, []):
                    assert needle in text, (name, needle)
                for needle in REPLY_LACKS.get(name, []):
                    assert needle not in text, (name, needle)
                headers = email.message_from_bytes(reply.raw, policy=email.policy.default)
                assert headers["Bcc"] is None and headers["X-Evil"] is None, name
                assert headers.get_all("To") == [row.sender], name
            else:
                assert row.reason, name
        assert not wrong, "\n".join(wrong)

        # The forged From with a wrong password changed nothing.
        game = find_game(s, GAME)
        assert game.state == "forming" and game.params.get("T") == 140
        # Commands in signed mail and in 8-bit charsets ran; a forwarded mail's did not.
        for made in ("signed", "cp", "cpu", "sjis", "jis", "rtl"):
            assert find_game(s, made) is not None, made
        assert find_game(s, "fwd") is None
    # Every reply reached the transport; nothing went to the 1000 other recipients.
    assert all("evil.test" not in str(m["To"]) for m in h.sent())
    h.close()


def test_a_flood_from_one_address_is_capped(tmp_path):
    h = harness(tmp_path, max_mails_per_sender_per_hour=60)
    for i in range(1000):
        h.inbox.add(make_mail(FLOODER, "LIST", message_id=f"<flood{i}@players.test>"))
    h.send("calm@players.test", "LIST")
    h.run()
    h.run()
    reason = f"flood: 60 mails from {FLOODER} in the last hour (limit 60)"
    with h.judge.sessions() as s:
        rows = list(s.scalars(select(InboundMessage).where(InboundMessage.sender == FLOODER)))
        assert len(rows) == 1000 and all(r.raw for r in rows)
        done = [r for r in rows if r.status == "done"]
        held = [r for r in rows if r.status == "quarantined"]
        assert len(done) == 60 and len(held) == 940
        assert {r.reason for r in held} == {reason}
        kinds = [o.kind for o in s.scalars(select(OutboxMessage)) if o.recipients == [FLOODER]]
    assert sorted(kinds) == ["flood"] + ["reply"] * 60
    notices = h.sent_to_kind(FLOODER, "flood")
    assert len(notices) == 1 and "stops answering you for a while" in h.body(notices[0])
    assert len(h.sent_to("calm@players.test")) == 1  # others are not affected

    # Half an hour later: still capped, and no second notice this hour.
    h.clock.advance(minutes=30)
    h.send(FLOODER, "LIST", message_id="<flood-later@players.test>")
    h.run()
    assert len(h.sent_to(FLOODER)) == 61
    # Past the hour the sender is answered again.
    h.clock.advance(minutes=31)
    h.send(FLOODER, "LIST", message_id="<flood-after@players.test>")
    h.run()
    with h.judge.sessions() as s:
        status = {r.message_id: r.status for r in s.scalars(select(InboundMessage).where(
            InboundMessage.message_id.in_(["<flood-later@players.test>", "<flood-after@players.test>"])))}
    assert status == {"<flood-later@players.test>": "quarantined", "<flood-after@players.test>": "done"}
    assert len(h.sent_to(FLOODER)) == 62
    h.close()


def test_the_flood_limit_is_configurable(tmp_path):
    assert load_config(None, data_dir=tmp_path).max_mails_per_sender_per_hour == 60
    config = load_config(None, data_dir=tmp_path, overrides={"limits": {"max_mails_per_sender_per_hour": 5}})
    assert config.max_mails_per_sender_per_hour == 5
    with pytest.raises(ConfigError, match="max_mails_per_sender_per_hour"):
        load_config(None, data_dir=tmp_path, overrides={"limits": {"max_mails_per_sender_per_hour": "many"}})
