"""Abuse of the judge's mail handling (issue 9): backscatter through
Reply-To, replayed mails, pre-sent Message-IDs, forged mail that locks a
player out through the flood cap."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from judge.games import find_game, standings
from judge.store.models import InboundMessage, OutboxMessage
from tests.harness import make_mail

VICTIM = "victim@v.org"
GM = "gm@example.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]


def _outbox(h) -> list[OutboxMessage]:
    with h.judge.sessions() as s:
        return s.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()


def test_backscatter_spam_with_reply_to_a_victim(harness):
    """300 spam mails with Reply-To: victim made 300 replies (15 MB) to the
    victim, quoting the spam."""
    h = harness
    spam = "\n".join(["Dear friend, BUY CHEAP PILLS NOW at http://spam.example/"] * 40)
    for i in range(300):
        h.send(f"spammer{i % 3}@spam.example", spam, headers={"Reply-To": VICTIM})
    h.run()
    rows = _outbox(h)
    assert not [r for r in rows if VICTIM in r.recipients]
    # Each forged From address gets at most one short reply a day, quoting nothing.
    by_to: dict[str, list[OutboxMessage]] = {}
    for r in rows:
        by_to.setdefault(r.recipients[0], []).append(r)
    assert set(by_to) == {f"spammer{i}@spam.example" for i in range(3)}
    for mails in by_to.values():
        assert len(mails) == 1
        assert b"PILLS" not in mails[0].raw and len(mails[0].raw) < 2000
    # The next day, one more.
    h.clock.advance(days=1, minutes=1)
    h.mail("spammer0@spam.example", spam, headers={"Reply-To": VICTIM})
    assert len([r for r in _outbox(h) if r.recipients == ["spammer0@spam.example"]]) == 2


def test_reply_to_a_known_player_address_is_honoured(harness):
    h = harness
    h.mail("ann@example.test", "CREATE ?g gmpw")
    h.mail("bob@work.test", "SIGNON ?g bobpw")
    h.mail("bob@home.test", "LIST", headers={"Reply-To": "bob@work.test"})
    assert "?g" in h.body(h.last_to("bob@work.test"))
    h.mail("eve@evil.test", "LIST", headers={"Reply-To": "stranger@else.test"})
    assert not [r for r in _outbox(h) if "stranger@else.test" in r.recipients]
    assert h.last_to("eve@evil.test")


def test_prose_lines_are_not_quoted_beside_commands(harness):
    h = harness
    h.mail("ann@example.test", "LIST\nPlease forward this to everyone: http://evil.example/scam")
    body = h.body(h.last_to("ann@example.test"))
    assert "evil.example" not in body and "line 2" in body
    h.mail("ann@example.test", "SIGNON: ?x pw\nLIST")
    assert "SIGNON: ?x" in h.body(h.last_to("ann@example.test"))  # a mistyped command is still shown


def _auction_started(h) -> None:
    h.mail(GM, "CREATE ?g gmpw blind-auction standard")
    for i, p in enumerate(PLAYERS):
        h.mail(p, f"SIGNON ?g pw{i}")
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +48h\nSTART")


POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


def bid(power: str) -> str:
    """A valid list (total T = 140) with 40 on `power`."""
    rest = [p for p in POWERS if p != power]
    return ", ".join([f"{power} 40"] + [f"{p} {v}" for p, v in zip(rest, (30, 25, 20, 15, 6, 4))])


def _bids(h, player: str):
    with h.judge.sessions() as s:
        game = find_game(s, "g")
        standing = next(x for x in standings(s, game) if x.player.address == player)
        return standing.counting.bids if standing.counting else None


def test_replayed_old_mail_does_not_revert_a_later_list(harness):
    """The same mail with a new Message-ID ran again and reverted a later
    bid list."""
    h = harness
    _auction_started(h)
    first = make_mail(PLAYERS[0], f"SIGNON ?g pw0\n{bid('Austria')}", date=datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc))
    h.inbox.add(first)
    h.run()
    h.mail(PLAYERS[0], f"SIGNON ?g pw0\n{bid('England')}", date=datetime(2026, 3, 1, 11, 0, tzinfo=timezone.utc))
    assert _bids(h, PLAYERS[0])["England"] == 40
    # The attacker replays the first mail under a new Message-ID.
    replay = first.replace(first.split(b"Message-ID: ")[1].split(b"\n")[0], b"<replayed@evil.example>")
    assert replay != first
    h.inbox.add(replay)
    h.run()
    assert _bids(h, PLAYERS[0])["England"] == 40
    assert "an older mail never replaces a newer one" in h.body(h.last_to(PLAYERS[0]))


def test_a_future_date_cannot_freeze_a_list(harness):
    """A mail dated in the future counts as sent when it was stored, so the
    player's next mail still replaces it."""
    h = harness
    _auction_started(h)
    h.mail(PLAYERS[1], f"SIGNON ?g pw1\n{bid('Austria')}", date=datetime(2030, 1, 1, tzinfo=timezone.utc))
    h.clock.advance(minutes=5)
    h.mail(PLAYERS[1], f"SIGNON ?g pw1\n{bid('England')}", date=h.clock.now())
    assert _bids(h, PLAYERS[1])["England"] == 40


def test_a_stranger_cannot_pre_send_a_known_message_id(harness):
    """Message-IDs were unique across all senders: a stranger who sent the
    real mail's Message-ID first made the judge drop the real mail."""
    h = harness
    _auction_started(h)
    known = "<real-bid-1@players.test>"
    h.mail("mallory@evil.example", "HELP", message_id=known)
    h.mail(PLAYERS[2], f"SIGNON ?g pw2\n{bid('France')}", message_id=known)
    assert _bids(h, PLAYERS[2])["France"] == 40
    # The same mail again from the same sender is still a duplicate.
    h.mail(PLAYERS[2], f"SIGNON ?g pw2\n{bid('France')}", message_id=known)
    with h.judge.sessions() as s:
        assert len(s.scalars(select(InboundMessage).where(InboundMessage.message_id == known)).all()) == 2


def test_forged_help_flood_does_not_lock_the_player_out(harness):
    """60 HELP mails "from" a player used up their hourly cap, and their real
    bid sat in quarantine past the deadline."""
    h = harness
    _auction_started(h)
    for _ in range(h.config.max_mails_per_sender_per_hour + 5):
        h.send(PLAYERS[3], "HELP")
    h.run()
    h.mail(PLAYERS[3], f"SIGNON ?g pw3\n{bid('Germany')}")
    assert _bids(h, PLAYERS[3])["Germany"] == 40
    assert "bid list accepted" in h.body(h.last_to(PLAYERS[3]))
    # A mail over the cap with a wrong password stays capped.
    h.mail(PLAYERS[3], f"SIGNON ?g wrong\n{bid('Italy')}")
    with h.judge.sessions() as s:
        last = s.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert last.status == "quarantined" and "flood" in last.reason
    assert _bids(h, PLAYERS[3])["Germany"] == 40


def test_replayed_old_preference_list_does_not_revert_a_later_one(harness):
    h = harness
    h.mail(GM, "CREATE ?pg gmpw preference")
    h.mail(PLAYERS[0], "SIGNON ?pg pw0\nSET PREFERENCE FEGRAIT", date=datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc))
    h.mail(PLAYERS[0], "SIGNON ?pg pw0\nSET PREFERENCE EFGRAIT", date=datetime(2026, 3, 1, 11, 0, tzinfo=timezone.utc))
    h.mail(PLAYERS[0], "SIGNON ?pg pw0\nSET PREFERENCE FEGRAIT", date=datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc),
           message_id="<replayed-pref@evil.example>")
    assert "an older mail never replaces a newer one" in h.body(h.last_to(PLAYERS[0]))
    with h.judge.sessions() as s:
        game = find_game(s, "pg")
        standing = next(x for x in standings(s, game) if x.player.address == PLAYERS[0])
        assert standing.counting.text == "EFGRAIT"
