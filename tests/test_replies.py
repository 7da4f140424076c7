"""Replies and results read well (issue 11): one line numbering for a bid
list in the player's reply, in the results and in the log; each violation
on a line of its own."""

from __future__ import annotations

import re

GM = "gm@example.test"
ANN = "ann@example.test"
OTHERS = [f"p{i}@example.test" for i in range(1, 7)]

# Ann's mail: her bids start on line 4, after a SIGNON, an ENTROPY line and
# a blank line; two lines of it break a rule each, and the list as a whole
# breaks two more (no bid on Turkey, two bids of 10).
ANN_MAIL = ("SIGNON ?g pw-ann\n"
            "ENTROPY a blue whale\n"
            "\n"
            "Austria 40\n"
            "England 30, France 20\n"
            "Austria 15\n"          # line 6: Austria a second time
            "Germany 15; Italy 10\n"
            "Prussia 5\n"           # line 8: no such power
            "Russia 10\n")


def violation_lines(text: str) -> list[tuple[int, str]]:
    """The lines of `text` that give one violation, as (mail line, the text)."""
    return [(int(n), line.strip()) for line, n in re.findall(r"^(\s+- line (\d+): .*)$", text, re.M)]


def _open_auction(h) -> None:
    """A Blind Auction of ann and six others, open for bids for 48 hours."""
    h.mail(GM, "CREATE ?g gmpw blind-auction standard\nSET DEADLINE +48h")
    h.mail(ANN, "SIGNON ?g pw-ann")
    for p in OTHERS:
        h.mail(p, "SIGNON ?g pw")
    h.mail(GM, "SIGNON Mg gmpw\nSTART")


def test_the_reply_and_the_results_name_the_same_lines_one_violation_each(harness):
    h = harness
    _open_auction(h)
    h.mail(ANN, ANN_MAIL)
    reply = h.body(h.last_to(ANN))
    assert "Rejected: bid list rejected, for 4 reasons." in reply
    in_reply = violation_lines(reply)
    assert [n for n, _ in in_reply] == [6, 8], reply
    # Each violation is a line of its own, never joined with "; ".
    notes = re.findall(r"^  - (.*)$", reply, re.M)
    assert len(notes) == 4 and not any("; line" in n for n in notes)

    for p in OTHERS:
        h.mail(p, "SIGNON ?g pw\nNo Preference")
    h.mail(GM, "SIGNON Mg gmpw\nPROCESS")
    for who in (ANN, GM):
        results = h.body(h.sent_to_kind(who, "result")[-1])
        part = results.split("Lists that broke a rule and stood as No Preference:")[1].split("\n\n")[0]
        assert violation_lines(part) == in_reply, part
        assert re.findall(r"^    - (.*)$", part, re.M) == notes, part

    # The log too: the list's first line, and each violation apart.
    with h.judge.sessions() as s:
        from judge import audit
        from judge.games import find_game

        events = [e for e in audit.game_events(s, find_game(s, "g"))
                  if e["kind"] == "command" and e.get("status") == "rejected" and e.get("line") == 4]
    assert len(events) == 1 and events[0]["notes"] == notes
    assert "; line" not in events[0]["message"]
    from judge.cli import _event_line

    shown = _event_line(events[0]).split("\n")
    assert "line 4 of mail" in shown[0]
    assert [line.strip() for line in shown[1:]] == [f"- {n}" for n in notes]


def test_the_auction_open_mail_says_a_refused_list_leaves_the_earlier_one(harness):
    h = harness
    _open_auction(h)
    opened = " ".join(h.body(h.last_to(ANN)).split())
    assert "your earlier valid list then still stands" in opened
    assert "stands as No Preference" not in opened
    # As it says: a valid list, then one that breaks a rule.
    h.mail(ANN, "SIGNON ?g pw-ann\nA 40\nE 30\nF 20\nG 18\nI 14\nR 12\nT 6")
    h.mail(ANN, "SIGNON ?g pw-ann\nA 40\nE 40")
    assert "still stands" in " ".join(h.body(h.last_to(ANN)).split())


def test_the_masters_digest_of_preference_lists(harness):
    """Each list is told to the master as it comes, with the counts (the
    subject and body alike), at a cost that does not grow with the game;
    SET NOTICES DAILY gathers the joinings and lists into one mail a day,
    in which a refused list is told apart from SET PREFERENCE alone and
    from nothing sent, and each row speaks of its player, not to them."""
    h = harness
    h.mail(GM, "CREATE ?p gmpw preference standard\nSET MANUAL START")
    h.mail("ann@example.test", "SIGNON ?p pw-ann")
    h.mail("ann@example.test", "SIGNON ?p pw-ann\nSET PREFERENCE E[FGR][TAI]")
    one = h.last_to(GM)
    assert one["Subject"] == "?p: ann's preference list (1 of 7 players has sent a list)"
    body = h.body(one)
    assert "E[FGR][TAI]  = England, then [France, Germany, Russia]" in body
    assert "1 of 7 players has sent a list; 1 of 7 has joined." in body

    h.clock.advance(minutes=1)
    h.mail(GM, "SIGNON Mp gmpw\nSET NOTICES DAILY")
    before = len(h.sent_to(GM))
    for n in ("bob", "cat", "dan", "eve"):
        h.mail(f"{n}@example.test", f"SIGNON ?p pw-{n}")
    h.mail("bob@example.test", "SIGNON ?p pw-bob\nSET PREFERENCE EFX")
    h.mail("cat@example.test", "SIGNON ?p pw-cat\nSET PREFERENCE")
    h.mail("dan@example.test", "SIGNON ?p pw-dan\nSET PREFERENCE FRG")
    h.mail("dan@example.test", "SIGNON ?p pw-dan\nSET PREFERENCE FQ")
    assert len(h.sent_to(GM)) == before  # all of it waits for the digest
    h.clock.advance(hours=25)
    h.run()
    digest = h.last_to(GM)
    body = h.body(digest)
    assert digest["Subject"] == "?p: the day's digest (5 of 7 players in)"
    assert "4 players joined:\n  bob <bob@example.test>" in body
    assert "as they stand now: 3 of 7 players have sent a list;\n5 of 7 have joined." in body

    def row(name: str) -> str:
        return re.split(r"\n  (?! )", body.split(f"  {name} <{name}@example.test>:\n")[1])[0]

    assert row("ann").strip().startswith("E[FGR][TAI]  = England, then [France, Germany, Russia]")
    assert "tried, but the list was refused" in row("bob") and "'X' is not a power's letter" in row("bob")
    assert "sent SET PREFERENCE with no list: does not mind" in row("cat")
    assert row("dan").strip().startswith("FRG") and "a later list was refused; the list above stands" in row("dan")
    assert "has sent nothing yet" in row("eve")
    rows = body.split("have joined.\n\n")[1].split("\n\nYou get this")[0]
    assert not re.search(r"\byou\b", rows, re.I), rows
    # One digest: nothing more came, nothing more is sent.
    h.clock.advance(hours=25)
    h.run()
    assert h.last_to(GM)["Message-ID"] == digest["Message-ID"]


def test_a_refused_older_mail_shows_both_times_to_the_second(harness):
    """Issue 25: two mails sent in the same minute were told "sent 13:00,
    before your list of 13:00": to the minute, the refusal explained nothing."""
    from datetime import datetime, timezone

    h = harness
    h.mail(GM, "CREATE ?p gmpw preference standard\nSET MANUAL START")
    h.mail(ANN, "SIGNON ?p pw-ann\nSET PREFERENCE EFG", date=datetime(2026, 3, 1, 11, 0, 40, tzinfo=timezone.utc))
    h.mail(ANN, "SIGNON ?p pw-ann\nSET PREFERENCE GFE", date=datetime(2026, 3, 1, 11, 0, 5, tzinfo=timezone.utc))
    reply = " ".join(h.body(h.last_to(ANN)).split())
    assert ("this mail was sent Sun 01 Mar 2026 11:00:05 UTC, before your list of Sun 01 Mar 2026 11:00:40 UTC, "
            "which stands") in reply, reply
