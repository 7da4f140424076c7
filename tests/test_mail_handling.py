"""How the judge answers mail: one reply per mail, no reply where a reply
would loop, clear refusals, and the rules of who may do what."""

from __future__ import annotations

import re

from email.message import EmailMessage

import pytest
from sqlalchemy import select

from judge.games import find_game
from judge.store.models import InboundMessage, OutboxMessage, Submission
from tests.harness import Harness

GM = "gm@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


@pytest.fixture
def h(tmp_path):
    harness = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    yield harness
    harness.close()


def full_game(h: Harness, name: str = "g", players: int = 7, start: bool = True) -> list[str]:
    h.mail(GM, f"CREATE ?{name} gmpw\nSET DEADLINE +24h")
    addresses = [f"p{i}@example.test" for i in range(players)]
    for a in addresses:
        h.send(a, f"SIGNON ?{name} pw")
    h.run()
    if start:
        h.mail(GM, f"SIGNON M{name} gmpw\nSTART")
    return addresses


def statuses(h: Harness) -> dict[str, str]:
    with h.judge.sessions() as s:
        return {r.message_id: r.status for r in s.scalars(select(InboundMessage))}


@pytest.mark.parametrize("headers", [
    {"Auto-Submitted": "auto-replied"},
    {"Precedence": "bulk"},
    {"Precedence": "junk"},
    {"X-Autoreply": "yes"},
])
def test_auto_replies_and_bulk_mail_get_no_reply(h, headers):
    h.mail("ann@example.test", "LIST", headers=headers)
    assert h.sent_to("ann@example.test") == []
    assert set(statuses(h).values()) == {"ignored"}


def test_a_bounce_and_our_own_mail_get_no_reply(h):
    h.mail("MAILER-DAEMON@example.test", "Delivery failed\nLIST")
    h.mail(h.config.address, "LIST")  # a mail loop: the judge's own address
    assert h.sent() == []
    assert set(statuses(h).values()) == {"ignored"}


def test_mail_without_from_is_kept_in_quarantine(h):
    raw = b"To: judge@example.test\r\nSubject: hi\r\nMessage-ID: <nofrom@x>\r\n\r\nLIST\r\n"
    h.inbox.add(raw)
    h.run()
    assert statuses(h) == {"<nofrom@x>": "quarantined"}
    assert h.sent() == []


def test_html_only_mail_is_read(h):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "ann@example.test", "judge@example.test", "html"
    msg["Message-ID"] = "<html@x>"
    msg.set_content("<html><body><p>CREATE ?htm pw</p><p>LIST</p></body></html>", subtype="html")
    h.inbox.add(msg.as_bytes())
    h.run()
    reply = h.body(h.last_to("ann@example.test"))
    assert "Done: game ?htm created" in reply and "?htm: blind-auction" in reply


def test_every_line_has_an_outcome_and_passwords_are_masked(h):
    h.mail(GM, "CREATE ?g gmpw\nSET T x\n\nLIST ?nosuch\n> quoted text\nSIGNOFF\nBye")
    reply = h.body(h.last_to(GM))
    assert "gmpw" not in reply
    assert "> CREATE ?g ****" in reply and "Done: game ?g created" in reply
    assert "line 2: SET T x\n" in reply and "\n              ^\n" in reply and "expected a whole number" in reply
    assert "Rejected: there is no game ?nosuch" in reply
    assert "Ignored: 1 line after this point was not read" in reply
    assert "1 quoted line (starting with >) was not read" in reply


def test_a_mail_with_no_commands_is_answered(h):
    h.mail("ann@example.test", "\n\n")
    reply = h.body(h.last_to("ann@example.test"))
    assert "your mail held no commands" in reply and "Send HELP" in reply


def test_oversized_mail_is_answered_not_processed(tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.config = h.judge.config = type(h.config)(**{**h.config.__dict__, "max_message_bytes": 2000})
    h.mail("ann@example.test", "CREATE ?big pw\n" + "x" * 5000)
    assert "the judge reads mails of at most 2000 bytes" in h.body(h.last_to("ann@example.test"))
    with h.judge.sessions() as s:
        assert find_game(s, "big") is None


def test_players_cannot_use_master_commands_and_bad_passwords_change_nothing(h):
    players = full_game(h, start=False)
    h.mail(players[0], "SIGNON ?g pw\nSTART\nSET T 500")
    reply = h.body(h.last_to(players[0]))
    assert reply.count("only the master of ?g may do this") == 2
    h.mail(players[1], "SIGNON Mg pw\nSTART")
    reply = h.body(h.last_to(players[1]))
    assert "wrong master password" in reply and "Ignored: 1 line" in reply
    with h.judge.sessions() as s:
        assert find_game(s, "g").state == "forming"
    h.mail("late@example.test", "SIGNON ?g pw")
    assert "?g is full (7 players)" in h.body(h.last_to("late@example.test"))
    h.mail(players[2], "SIGNON ?g")
    assert "expected a password" in h.body(h.last_to(players[2]))


def test_bids_need_an_open_auction(h):
    players = full_game(h, start=False)
    h.mail(players[0], "SIGNON ?g pw\nAustria 7")
    assert "not open for bids (it is forming)" in h.body(h.last_to(players[0]))
    h.mail("stranger@example.test", "Austria 7")
    assert "no game yet: begin with SIGNON" in h.body(h.last_to("stranger@example.test"))


def test_no_preference_cannot_be_mixed_with_bids(h):
    players = full_game(h)
    h.mail(players[0], "SIGNON ?g pw\nAustria 7\nNo Preference")
    reply = h.body(h.last_to(players[0]))
    assert "No Preference applies to all powers; it cannot be combined with bids" in reply
    with h.judge.sessions() as s:
        assert [x.valid for x in s.scalars(select(Submission))] == [False]


def test_deadline_resolves_by_itself_when_everybody_has_bid(h):
    players = full_game(h)
    for k, p in enumerate(players):
        values = [(v + k) % 7 + 1 for v in range(7)]
        h.send(p, "SIGNON ?g pw\n" + "\n".join(f"{n} {v}" for n, v in zip(POWERS, values)))
    h.run()
    h.clock.advance(hours=23)
    assert h.run()["deadlines"] == []
    h.clock.advance(hours=2)
    assert h.run()["deadlines"] == ["g: resolved"]
    for p in players:
        assert len(h.sent_to_kind(p, "result")) == 1
    # No second resolution on later ticks.
    h.clock.advance(hours=48)
    assert h.run()["deadlines"] == []


def test_eject_and_replace(h):
    players = full_game(h)
    h.mail(GM, f"SIGNON Mg gmpw\nREPLACE {players[6]} with new@example.test\nEJECT {players[5]}\nEJECT nobody")
    reply = h.body(h.last_to(GM))
    assert "replaced by new@example.test" in reply and "ejected from ?g" in reply
    assert "no player 'nobody' in ?g" in reply
    invitation = h.body(h.last_to("new@example.test"))
    assert "named you to replace" in invitation
    token = re.search(r"^SIGNON \?g (\S+)$", invitation, re.M).group(1)  # the one-time token
    assert "taken you out of the game" in h.body(h.last_to(players[5]))
    h.mail(players[6], "SIGNON ?g pw\nNo Preference")
    assert "no longer in ?g (replaced)" in h.body(h.last_to(players[6]))
    h.mail("new@example.test", f"SIGNON ?g {token}\nNo Preference")
    assert "No Preference accepted" in h.body(h.last_to("new@example.test"))
    for p in players[:5]:
        h.send(p, "SIGNON ?g pw\nNo Preference")
    h.run()
    h.mail(GM, "SIGNON Mg gmpw\nPROCESS")
    with h.judge.sessions() as s:
        game = find_game(s, "g")
        powered = {p.address: p.power for p in game.players if p.power}
    assert set(powered) == set(players[:5]) | {"new@example.test"}
    assert len(set(powered.values())) == 6


def test_master_gets_warnings_and_impossible_parameters_block_start(h):
    full_game(h, start=False)
    h.mail(GM, "SIGNON Mg gmpw\nSET T 90\nSET M 80\nSET D 3")
    reply = h.body(h.last_to(GM))
    assert "Warning: T should be a round number greater than 2*U^2 = 98" in reply
    assert "Warning: M should be about half of T" in reply
    assert "cannot start like this: D must be 1" in reply
    h.mail(GM, "SIGNON Mg gmpw\nSTART")
    assert "Rejected: ?g cannot start: D must be 1" in h.body(h.last_to(GM))
    h.mail(GM, "SIGNON Mg gmpw\nSET T 140\nSET M 70\nSET D T/U\nSTART\nSET T 200")
    reply = h.body(h.last_to(GM))
    assert "the auction of ?g is open" in reply and "can only change before the auction starts" in reply
    with h.judge.sessions() as s:
        assert find_game(s, "g").params == {"T": 140, "M": 70, "D": "T/U"}
    # (The last mail to p0 is the reminder: 24 hours are left at START.)
    opened = [m for m in h.sent_to("p0@example.test") if "Blind Auction is open" in m["Subject"]]
    assert "D = 20 points on every power" in h.body(opened[-1])


def test_set_password_and_custom_variant(tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.config = h.judge.config = type(h.config)(**{**h.config.__dict__, "variants": {
        "trio": [{"name": "Red", "letter": "R"}, "Green", "Blue"]}})
    h.mail(GM, "CREATE ?t gmpw blind-auction trio\nSET PASSWORD newgm")
    assert "Red (R), Green (G), Blue (B)" in h.body(h.last_to(GM))
    h.mail(GM, "SIGNON Mt gmpw")
    assert "wrong master password" in h.body(h.last_to(GM))
    h.mail(GM, "SIGNON Mt newgm\nLIST")
    assert "T = 60, M = 30, D = 1" in h.body(h.last_to(GM))


def test_outbox_rows_carry_auto_submitted(h):
    h.mail("ann@example.test", "HELP")
    with h.judge.sessions() as s:
        row = s.scalars(select(OutboxMessage)).one()
    assert row.status == "sent"
    msg = h.last_to("ann@example.test")
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["In-Reply-To"]
    assert "CREATE ?game password" in h.body(msg)


def test_replies_go_out_through_a_real_smtp_server_and_wait_while_it_is_down(h, smtp_server_factory):
    from judge.transports.smtp import SmtpTransport

    server = smtp_server_factory("starttls", auth=True)
    h.judge.transport = SmtpTransport(server.settings())
    h.mail("ann@example.test", "CREATE ?smtp pw")
    assert len(server.messages) == 1
    got = server.messages[0]
    assert got.rcpt_tos == ("ann@example.test",) and b"Done: game ?smtp created" in got.raw
    server.stop()
    h.mail("bob@example.test", "LIST")
    with h.judge.sessions() as s:
        row = s.scalars(select(OutboxMessage).where(OutboxMessage.recipients.is_not(None))
                        .order_by(OutboxMessage.id.desc())).first()
        assert row.status == "queued" and row.attempts == 1
    server.start()
    h.clock.advance(hours=1)
    h.run()
    assert [m.rcpt_tos for m in server.messages] == [("ann@example.test",), ("bob@example.test",)]


def test_passwords_are_masked_by_position_even_in_errors(h):
    h.mail(GM, "CREATE ?spring stand blind-auction standard\nSIGNON ?spring my secret\nSET PASSWORD two words")
    reply = h.body(h.last_to(GM))
    assert "> CREATE ?spring **** blind-auction standard" in reply
    assert "line 2: SIGNON ?spring *********" in reply and "A password is one word" in reply
    assert "line 3: SET PASSWORD *********" in reply
    assert "secret" not in reply and "stand " not in reply and "words" not in reply
    from judge import audit

    with h.judge.sessions() as s:
        events = audit.game_events(s, find_game(s, "spring"))
    text = str(events)
    assert "secret" not in text and "stand " not in text and "words" not in text


def test_power_names_that_would_read_as_commands_are_refused():
    from judge.variants import PowerListError, make_power_list

    with pytest.raises(PowerListError, match="begins with the command word"):
        make_power_list(["Start", "Finish"])
    with pytest.raises(PowerListError, match="begins with the command word"):
        make_power_list(["No Man's Land", "Sparta"])
    powers = make_power_list(["Setonia", "Helvetia", "Listria"])
    # "Set" would read as the SET command: that power is named in full instead.
    assert [p.abbreviation for p in powers] == ["Setonia", "Hel", "Lis"]
    assert powers.lookup("hel").name == "Helvetia"


def test_replies_stay_small_whatever_was_sent(h):
    h.mail("ann@example.test", "\n".join(f"garbage line {k} !" for k in range(5000)), subject="x" * 5000)
    msg = h.last_to("ann@example.test")
    body = h.body(msg)
    assert len(msg.as_bytes()) < 150_000
    assert "300 more entries not shown (300 of them rejected)" in body
    assert "4500 lines from line 501 on were not read" in body
    assert len(str(msg["Subject"])) < 260
    h.mail("bob@example.test", "SIGNON ?g " + "pw " * 20000)
    body = h.body(h.last_to("bob@example.test"))
    assert "at most 1000" in body and "pw pw" not in body and len(body) < 3000


def test_the_master_enters_forum_posts_for_players(h):
    players = full_game(h)
    bids = "\n".join(f"{w}: {v}" for w, v in zip(POWERS, [40, 30, 20, 15, 10, 5, 1]))
    h.mail(GM, f"SIGNON Mg gmpw\nFOR {players[0]}\n{bids}\nFOR {players[1]}\nNo Preference\nSTART")
    reply = h.body(h.last_to(GM))
    assert reply.count("the lines that follow count as") == 2
    assert "bid list accepted: Austria 40" in reply and "No Preference accepted" in reply
    assert "only the master of ?g may do this" in reply  # START: the master's commands are off after FOR
    with h.judge.sessions() as s:
        subs = s.scalars(select(Submission).order_by(Submission.id)).all()
        game = find_game(s, "g")
        by_id = {p.id: p.address for p in game.players}
    assert [(by_id[x.player_id], x.valid, x.bids is None) for x in subs] == [
        (players[0], True, False), (players[1], True, True)]
    h.mail(players[2], f"SIGNON ?g pw\nFOR {players[3]}\nAustria 40")
    assert "only the master of ?g may do this" in h.body(h.last_to(players[2]))
