"""Issue 12: when the preference solver refuses to draw a game's assignment
(a tied block too big to count, whose exact draw would pass the solver's
work limit), the game is not stuck. Nothing is assigned, the game stays
forming, its master reads why and what to send (SET PRFRAND then START, or
a change of the game), the players hear that the results come later, and
the same START is refused alike. End to end through a real judge, on
SQLite and PostgreSQL.

The refusal is the solver's own: 24 players each bracket every power but a
different one ("anything but X", tests/adversarial_cases.py), a block of
about 24!/e best assignments that no counting order handles, so the solver
hands it to its exact sampler. Only the sampler's work limit is lowered,
to 0, through solve()'s own default: with any positive limit a first trial
runs and may be accepted, which hangs on the game's secret seed (drawn at
CREATE), so the refusal would be left to chance; the default limit refuses
such a block only after seconds of work (docs/preference.md, "Bounded
work").
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from sqlalchemy import select

from judge.games import find_game
from judge.methods.preference.solver import assignment
from judge.resolution import run_resolution
from judge.store.models import Event, Resolution
from tests.adversarial_cases import anything_but, power_names, texts
from tests.harness import Harness

GM = "gm@example.test"
MOD = "mod@example.test"
N = 24
NAMES = power_names(N)  # Power00 ... Power23
# Player i brackets every power but Power i, as the players would send it.
LISTS = {f"{player}@example.test": text for player, text in texts(anything_but(N, list(range(N))), NAMES).items()}
PLAYERS = list(LISTS)


@pytest.fixture
def h(tmp_path, migrated_database_url, monkeypatch):
    monkeypatch.setitem(assignment.solve.__kwdefaults__, "work_limit", 0)
    harness = Harness(tmp_path / "data", migrated_database_url, sections={"variants": {"big": {"powers": NAMES}}},
                      default_method="preference", moderators=[MOD])
    yield harness
    harness.close()


def _state(h):
    with h.judge.sessions() as s:
        game = find_game(s, "big")
        resolutions = s.scalars(select(Resolution).where(Resolution.game_id == game.id)).all()
        refusals = s.scalars(select(Event).where(Event.game_id == game.id, Event.kind == "assignment_refused")).all()
        return game.state, game.error, game.deadline, len(resolutions), [e.data for e in refusals]


def _sign_on(h, players):
    for address in players:
        h.send(address, f"SIGNON ?big pw\nSET PREFERENCE {LISTS[address]}")
    h.run()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _refused_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "judge.games" and r.levelno == logging.INFO and "assignment refused" in r.getMessage()]


def _to(sent, address: str) -> list:
    # The outbox is read once per check (h.sent_to reads it all each time).
    return [m for m in sent if address in str(m["To"])]


def _nothing_stuck(h):
    sent = h.sent()
    assert not _to(sent, MOD)
    assert not [m for m in sent if "stuck" in str(m["Subject"])]


def _told_delayed(h, when: str) -> None:
    """Each player got one mail saying the powers are not assigned yet."""
    sent = h.sent()
    for address in PLAYERS:
        told = [m for m in _to(sent, address) if m["Subject"] == "?big: the powers are not assigned yet"]
        assert len(told) == 1, address
        text = _flat(h.body(told[0]))
        assert f"were to be assigned {when}" in text and "Until then you may still change your list" in text


def _results(h) -> dict[str, list]:
    """Each address -> the results mails it got."""
    sent = [m for m in h.sent() if str(m["Subject"]).startswith("?big: powers assigned")]
    return {address: _to(sent, address) for address in [*PLAYERS, GM]}


def test_refused_at_the_deadline_then_prfrand_and_start_assign_at_random(h, caplog):
    caplog.set_level(logging.INFO, logger="judge")
    h.mail(GM, "CREATE ?big gmpw big\nSET MANUAL START\nSET DEADLINE +24h")
    _sign_on(h, PLAYERS)
    assert _state(h)[0] == "forming"

    h.clock.advance(hours=25)
    h.run()
    state, error, deadline, resolved, refusals = _state(h)
    # Not a bug: not stuck, nothing resolved, the game as it was (forming),
    # its deadline cleared so that no pass tries again by itself.
    assert (state, error, deadline, resolved) == ("forming", None, None, 0)
    assert [(r["players"], r["powers"], r["limit"], r["command"]) for r in refusals] == [(24, 24, "work", "START")]
    _nothing_stuck(h)
    mail = h.last_to(GM)
    assert mail["Subject"] == "?big: the deadline passed, but the powers could not be assigned"
    body = _flat(h.body(mail))
    assert ("would have started the game as START does, but the powers of ?big were not assigned: "
            "24 players tie among 24 powers for the best assignment, in more ways than can be counted") in body
    assert "would pass the solver's work limit" in body and "rather than work for minutes" in body
    assert "the limit counts operations, not time, so the same lists are refused alike every time" in body
    assert "Nothing was assigned and ?big has not started: the players may still change their lists" in body
    assert "SIGNON Mbig yourpassword\n  SET PRFRAND\n  START\n" in h.body(mail)
    assert "split it into smaller games, or ask the players to change their lists" in body
    assert "The deadline is cleared, so the judge does not try again by itself: your START does" in body
    _told_delayed(h, "at its deadline")
    assert _refused_lines(caplog) == [
        "?big: assignment refused: 24 players tie among 24 powers; the exact draw passed the solver's work "
        "limit (the master is told)"]
    assert _lines(caplog, "judge.scheduler") == ["deadline: big: the assignment was refused at its deadline; "
                                                 "the master was told"]

    # Passes go by: the deadline fired once, the master was told once.
    before = len(h.sent())
    for _ in range(3):
        h.clock.advance(hours=1)
        h.run()
    assert len(h.sent()) == before and len(_refused_lines(caplog)) == 1

    # START with nothing changed: the same refusal, again not a bug.
    h.mail(GM, "SIGNON Mbig gmpw\nSTART")
    # START is taken at once; the draw runs as a job of its own, and its
    # refusal comes to the master in a mail of its own.
    assert "Done: ?big starts now: its powers are drawn as a job of their own" in \
        h.body(h.sent_to_kind(GM, "reply")[-1])
    notice = h.last_to(GM)
    assert notice["Subject"] == "?big: the powers could not be assigned"
    explained = h.body(notice).split("it had to stop:\n\n", 1)[1].split("\n\nNothing of the assignment")[0].strip()
    assert explained.startswith("the powers of ?big were not assigned:\n24 players tie among 24 powers")
    assert explained in h.body(mail)  # word for word what the deadline's mail said
    assert _state(h)[:4] == ("forming", None, None, 0) and len(_state(h)[4]) == 2
    assert len(_refused_lines(caplog)) == 2
    _nothing_stuck(h)

    # SET PRFRAND, then START: every power drawn at random; the lists do not count.
    h.mail(GM, "SIGNON Mbig gmpw\nSET PRFRAND\nSTART")
    reply = h.body(h.sent_to_kind(GM, "reply")[-1])
    assert "Done: PRFRAND: every power is assigned at random" in reply
    assert "Done: ?big starts now: its powers are drawn as a job of their own, and the results go to all 24 " \
        "players and to you" in " ".join(reply.split())
    with h.judge.sessions() as s:
        game = find_game(s, "big")
        assert game.state == "resolved"
        res = s.scalars(select(Resolution).where(Resolution.game_id == game.id)).one()
        assert run_resolution(res.input, bytes.fromhex(res.seed)) == res.result
    record = res.result
    assert record["params"]["mode"] == "random"
    assert sorted(record["assignment"]) == sorted(PLAYERS)
    assert sorted(record["assignment"].values()) == NAMES
    assert record["rounds"][0]["random"].keys() == set(PLAYERS)
    assert [d["what"] for d in record["draws"]] == ["random-power"] * (N - 1)  # the last power is left: no draw
    results = _results(h)
    for address in PLAYERS:
        assert len(results[address]) == 1, address
        assert results[address][0]["Subject"] == f"?big: powers assigned: you play {record['assignment'][address]}"
    assert len(results[GM]) == 1
    _nothing_stuck(h)


def test_refused_when_the_last_player_joins_then_new_lists_and_start_assign_by_the_lists(h, caplog):
    caplog.set_level(logging.INFO, logger="judge")
    h.mail(GM, "CREATE ?big gmpw big")
    _sign_on(h, PLAYERS[:-1])
    h.mail(PLAYERS[-1], f"SIGNON ?big pw\nSET PREFERENCE {LISTS[PLAYERS[-1]]}")
    # The last player joined, and the list counts; the start by itself was refused.
    assert "You are the last player" in h.body(h.sent_to_kind(PLAYERS[-1], "reply")[-1])
    assert _state(h)[:4] == ("forming", None, None, 0)
    _nothing_stuck(h)
    joined, notice = h.sent_to_kind(GM, "notice")[-2:]
    assert "p23 joined" in str(joined["Subject"]) and "The game has 24 of its 24 players" in _flat(h.body(joined))
    assert notice["Subject"] == "?big: the powers could not be assigned"
    body = _flat(h.body(notice))
    assert ("the game was to start by itself, but when the judge drew the assignment it had to stop: the powers "
            "of ?big were not assigned: 24 players tie among 24 powers") in body
    assert "SET PRFRAND" in body and "then send START again" in body
    _told_delayed(h, "when its last player joined")
    assert len(_refused_lines(caplog)) == 1

    # The players change their lists (each a power of their own first):
    # the master's START assigns by the lists now.
    for i, address in enumerate(PLAYERS):
        h.send(address, f"SIGNON ?big pw\nSET PREFERENCE {NAMES[i]}")
    h.run()
    assert _state(h)[0] == "forming"  # a change of list starts nothing by itself
    h.mail(GM, "SIGNON Mbig gmpw\nSTART")
    assert "Done: ?big starts now" in h.body(h.sent_to_kind(GM, "reply")[-1])
    with h.judge.sessions() as s:
        game = find_game(s, "big")
        assert game.state == "resolved"
        record = s.scalars(select(Resolution).where(Resolution.game_id == game.id)).one().result
    assert record["params"]["mode"] == "list"
    assert record["assignment"] == {address: NAMES[i] for i, address in enumerate(PLAYERS)}
    assert all(len(mails) == 1 for mails in _results(h).values())
    assert len(_refused_lines(caplog)) == 1
    _nothing_stuck(h)


def _lines(caplog, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.INFO]


def test_a_running_preference_game_is_refused_alike_by_process_and_its_deadline(h, caplog):
    """A preference game goes from forming to resolved in one step, so none
    is left running (bidding) by the judge today; one stored so (by a judge
    of another version, or by hand) reaches the solver through PROCESS and
    its deadline, and is refused alike: told what still works there."""
    caplog.set_level(logging.INFO, logger="judge")
    h.mail(GM, "CREATE ?big gmpw big\nSET MANUAL START")
    _sign_on(h, PLAYERS)
    with h.judge.sessions.begin() as s:
        game = find_game(s, "big")
        game.state, game.deadline = "bidding", h.clock.now() + timedelta(hours=1)

    h.mail(GM, "SIGNON Mbig gmpw\nPROCESS")
    assert "Done: ?big is resolved now, as a job of its own" in h.body(h.sent_to_kind(GM, "reply")[-1])
    reply = h.body(h.last_to(GM))  # the job's refusal, in a mail of its own
    assert "the powers of ?big were not assigned:\n24 players tie among 24 powers" in reply
    assert "?big is bidding: its lists and its mode can no longer change, so the same PROCESS" in _flat(reply)
    assert _state(h)[0] == "bidding"

    h.clock.advance(hours=2)
    h.run()
    state, error, deadline, resolved, refusals = _state(h)
    assert (state, error, deadline, resolved) == ("bidding", None, None, 0)
    assert [r["command"] for r in refusals] == ["PROCESS", "PROCESS"]
    body = _flat(h.body(h.last_to(GM)))
    assert "but the powers of ?big were not assigned: 24 players tie among 24 powers" in body
    assert "does not try again by itself: your PROCESS does." in body
    sent = h.sent()
    for address in PLAYERS:  # told, but not that lists may change: they cannot any more
        told = [m for m in _to(sent, address) if m["Subject"] == "?big: the powers are not assigned yet"]
        assert len(told) == 1 and "Until then" not in h.body(told[0]), address
    assert len(_refused_lines(caplog)) == 2
    _nothing_stuck(h)
