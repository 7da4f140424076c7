"""A random game of every registered method, through the shell (issue 28),
as OpenSpiel's api_test plays random games of every registered game.

Only the shell's public way in is used: mails into the harness's inbox, the
clock the harness moves, the replies and mails in its outbox, and the
game's row (its state). Each method has a random player here that draws
its lines from the commands its docs list for each role (docs/*.md), as a
player might send them: most are taken, some are refused, and a refusal is
part of the game. A method in judge/methods/registry.py without a random
player here fails the test, so a new method is played from its first day.

What every game must show: it ends ("resolved"; Payola, which ends at 18
centres, is played for its first year), every mail is answered and done
(none quarantined, none failed), no reply speaks of an internal error, and
every player hears of the end. The draws are seeded (the same game every
run); JUDGE_RANDOM_GAMES_SEED=n plays other games.
"""

from __future__ import annotations

import os
import random
import re
import zlib
from datetime import timedelta

import pytest
from sqlalchemy import select

from judge.games import find_game
from judge.methods.registry import METHODS
from judge.store.models import InboundMessage, OutboxMessage
from tests.harness import Harness
from tests.test_e2e_blinding import judges, play_round, start_game, tp_url  # noqa: F401 (tp_url: a fixture)

GM = "gm@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
SEED = int(os.environ.get("JUDGE_RANDOM_GAMES_SEED", "0"))


def addr(k: int) -> str:
    return f"p{k}@example.test"


class Table:
    """One game by mail: who says what, and the clock."""

    def __init__(self, h: Harness, rnd: random.Random, game: str = "g") -> None:
        self.h, self.rnd, self.game = h, rnd, game

    def say(self, who: str, text: str) -> str:
        """`who` (the GM: GM) signs on and sends `text`; the reply, its blanks collapsed."""
        signon = f"SIGNON M{self.game} gmpw" if who == GM else f"SIGNON ?{self.game} pw"
        self.h.mail(who, f"{signon}\n{text}")
        return " ".join(self.h.body(self.h.last_to(who)).split())

    def later(self, hours: float) -> None:
        self.h.clock.advance(seconds=hours * 3600)
        self.h.run()

    def state(self) -> str:
        with self.h.judge.sessions() as s:
            return find_game(s, self.game).state

    def players(self, players: list[str]) -> None:
        for p in players:
            self.h.send(p, f"SIGNON ?{self.game} pw")
        self.h.run()


# --- the random players, one per method --------------------------------------

def auction_bids(rnd: random.Random) -> str:
    """A valid Blind Auction list (docs/blind-auction.md: every power, whole
    numbers 1..M, all different, at most T in all; T 140, M 70), in one of
    the spellings the docs give; or No Preference."""
    if rnd.random() < 0.2:
        return "NO PREFERENCE"
    while True:
        bids = rnd.sample(range(1, 41), len(POWERS))
        if sum(bids) <= 140:
            break
    style = rnd.choice(["{name} {n}", "{name}: {n}", "{letter}={n}", "{abbr} {n}"])
    lines = [style.format(name=p, letter=p[0], abbr=p[:3].lower(), n=n) for p, n in zip(POWERS, bids)]
    return "\n".join(lines) if rnd.random() < 0.5 else ", ".join(lines)


def play_blind_auction(t: Table, request) -> list[str]:
    players = [addr(k) for k in range(7)]
    t.h.mail(GM, "CREATE ?g gmpw blind-auction")
    t.players(players)
    assert "> START Done" in t.say(GM, "START")
    late = set(t.rnd.sample(players, t.rnd.randint(0, 2)))
    for p in t.rnd.sample(players, len(players)):
        if p in late:
            continue
        if t.rnd.random() < 0.2:  # a list that breaks the rules first: refused, then a good one
            assert "Rejected" in t.say(p, "Austria 71\nEngland 71")
        assert "Rejected" not in t.say(p, auction_bids(t.rnd))
    if late:
        t.later(73)  # the deadline: the master is asked about the late players
        assert t.state() == "waiting"
        t.say(GM, "\n".join(f"NO PREFERENCE FOR {p}" for p in sorted(late)) + "\nPROCESS")
    elif t.rnd.random() < 0.5:
        t.say(GM, "PROCESS")
    else:
        t.later(73)
    return players


def play_preference(t: Table, request) -> list[str]:
    """Lists in nJudge's forms (docs/preference.md); the game starts when
    its last player signs on."""
    players = [addr(k) for k in range(7)]
    t.h.mail(GM, "CREATE ?g gmpw preference")
    for p in players:
        letters = t.rnd.sample("AEFGIRT", t.rnd.randint(1, 7))
        if len(letters) > 2 and t.rnd.random() < 0.4:  # brackets: equal preferences
            i = t.rnd.randrange(len(letters) - 1)
            letters[i:i + 2] = ["[" + "".join(letters[i:i + 2]) + "]"]
        t.h.send(p, f"SIGNON ?g pw\nSET PREFERENCE {''.join(letters)}")
    t.h.run()
    return players


def play_random(t: Table, request) -> list[str]:
    players = [addr(k) for k in range(7)]
    t.h.mail(GM, "CREATE ?g gmpw random")
    t.players(players)
    if t.rnd.random() < 0.5:
        t.say(GM, "START")
    else:
        t.say(GM, "SET DEADLINE +24h")
        t.later(25)  # starts at its deadline
    return players


def play_blind_random(t: Table, request) -> list[str]:
    """Between two judges (tests/test_e2e_blinding.py's post): this one the
    GM's, the other the third party; each player blinds with blinds of their own."""
    players = [addr(k) for k in range(7)]
    a, b, post = judges(t.h, request.getfixturevalue("tmp_path"), request.getfixturevalue("tp_url"))
    try:
        start_game(a, post, players, game=t.game)
        play_round(a, b, post, players, salt=t.rnd.randrange(10))
    finally:
        b.close()
    t.post = post
    return players


def play_lui(t: Table, request) -> list[str]:
    """F8 with 3 to 8 players (docs/lui.md): pregame bids, an open auction of
    random bids, buys and board requests until it goes quiet, then the EC and
    the gifts, tried by whoever may (the winner, the GM after the deadline)."""
    n = t.rnd.randint(3, 8)
    players = [addr(k) for k in range(n)]
    names = [p.split("@")[0] for p in players]
    t.h.mail(GM, "CREATE ?g gmpw lui\nSET PRESET F8")
    t.players(players)
    prizes = "\n".join(f"SET PRIZE {seat} {t.rnd.randint(0, 3)} {t.rnd.randint(0, 3)}" for seat in "RSTUVWXYZ")
    assert "> START Done" in t.say(GM, f"{prizes}\nSET PLAYERS {n}\nSTART")
    for p in players:
        if t.rnd.random() < 0.6:
            t.say(p, f"BID {t.rnd.choice('RSTUVWXYZ')} {t.rnd.randint(1, 6)}")
    t.later(24.5)  # the pregame's results; the auction is open
    for _ in range(t.rnd.randint(5, 25)):
        p = t.rnd.choice(players)
        line = t.rnd.choices([f"BID {t.rnd.choice('RSTUVWXYZ')} {t.rnd.randint(1, 9)}", "BUY", "BOARD",
                              "SET BOARD MAIL OFF"], [0.8, 0.05, 0.1, 0.05])[0]
        t.say(p, line)
        t.later(t.rnd.uniform(0.1, 8))
    # The end, as the mails tell it (the auction's last news: its EC
    # candidates and who holds Tokens of Life): quiet hours, the EC chosen
    # by whoever may, the gifts given to whoever may take them.
    ec_chosen = False
    for _ in range(40):
        if t.state() == "resolved":
            break
        t.later(t.rnd.uniform(4, 30))
        news = " ".join(" ".join(t.h.body(m).split()) for m in t.h.sent())
        over = re.findall(r"EC candidates: ([^.]*)\. ", news)
        if not over:
            continue
        candidates = over[-1].split(", ")
        for who in t.rnd.sample(players, len(players)) + [GM]:
            if ec_chosen or t.state() == "resolved":
                break
            ec_chosen = " is the EC" in t.say(who, f"EC {t.rnd.choice(candidates)}")
        tol = dict(pair.rsplit(" ", 1) for pair in (re.findall(r"Tokens of Life: ([^.]*)\.", news) or [""])[-1]
                   .split(", ") if pair)
        for giver in [p for p in players if int(tol.get(p.split("@")[0], 0)) > 1]:
            if t.state() != "resolved":
                t.say(giver, f"GIVE TOL {t.rnd.choice(names)}")
    return players


def play_pt3(t: Table, request) -> list[str]:
    """Two players (docs/pt3.md): sealed bids with a square each season, a
    missing bid now and then (the deadline closes the season), until X's
    line or a full board."""
    players = [addr(0), addr(1)]
    t.h.mail(GM, "CREATE ?g gmpw pt3")
    t.players(players)
    balance = {"X": t.rnd.randint(20, 100), "O": t.rnd.randint(20, 100)}
    assert "> START Done" in t.say(GM, f"SET BALANCE X {balance['X']}\nSET BALANCE O {balance['O']}\n"
                                  f"SET SEASON 24\nSTART")
    for _ in range(30):
        if t.state() == "resolved":
            break
        for p in t.rnd.sample(players, 2):
            if t.rnd.random() < 0.85:
                t.say(p, f"BID {t.rnd.randint(0, 9)}.{t.rnd.randint(0, 99):02d} {t.rnd.randint(1, 9)}")
        if t.state() != "resolved":
            t.later(25)  # a bid missing, or a square taken: the deadline closes the season
    return players


STANDARD_UNITS = {"Austria": ["A VIE", "A BUD", "F TRI"], "England": ["F LON", "F EDI", "A LVP"],
                  "France": ["F BRE", "A PAR", "A MAR"], "Germany": ["F KIE", "A BER", "A MUN"],
                  "Italy": ["F NAP", "A ROM", "A VEN"], "Russia": ["A WAR", "A MOS", "F SEV", "F STP/SC"],
                  "Turkey": ["F ANK", "A CON", "A SMY"]}


def play_payola(t: Table, request) -> list[str]:
    """Seven players, powers drawn at START (docs/payola.md); its first
    year: offer sheets (holds with a price, to one's own units or another's),
    acceptance lists, transfers, ledgers; each phase played by the GM's
    PROCESS or at its deadline, the retreats and adjustments left to the
    engine's defaults."""
    from diplomacy import Game

    players = [addr(k) for k in range(7)]
    t.h.mail(GM, "CREATE ?g gmpw payola standard")
    t.players(players)
    assert "> START Done" in t.say(GM, "START")
    power_of = {}
    for p in players:
        subject = str(next(m for m in t.h.sent_to(p) if "you are " in str(m["Subject"]))["Subject"])
        power_of[p] = re.search(r"you are (\w+)", subject).group(1)
    moves = Game(map_name="standard").get_all_possible_orders()  # the opening's orders, by location
    phases = 0
    for _ in range(8):
        if t.state() == "resolved" or phases >= 4:
            break
        for p in t.rnd.sample(players, len(players)):
            lines = []
            for unit in t.rnd.sample([u for us in STANDARD_UNITS.values() for u in us], t.rnd.randint(0, 4)):
                order = t.rnd.choice(moves[unit.split()[1].split("/")[0]] or [f"{unit} H"])
                lines.append(f"{t.rnd.randint(0 if unit in STANDARD_UNITS[power_of[p]] else 1, 9)} : {order}")
            extra = t.rnd.choice(["", "LEDGER", f"SET ACCEPT {''.join(t.rnd.sample('AEFGIRT', 7))}",
                                  f"TRANSFER {t.rnd.randint(1, 5)} TO {t.rnd.choice(POWERS)}"])
            t.say(p, "\n".join(lines + [extra]))
        with t.h.judge.sessions() as s:
            deadline = find_game(s, t.game).deadline
        if t.rnd.random() < 0.5:
            t.say(GM, "PROCESS")
        else:
            t.later((deadline - t.h.clock.now()) / timedelta(hours=1) + 0.5)
        phases += 1
    assert phases == 4, "Payola's first year was not played"
    return players


PLAYERS = {"blind-auction": play_blind_auction, "preference": play_preference, "random": play_random,
           "blind-random": play_blind_random, "lui": play_lui, "pt3": play_pt3, "payola": play_payola}


# --- the test -----------------------------------------------------------------

INTERNAL = re.compile(r"internal error|Traceback|quarantin", re.I)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_random_game_of_every_registered_method(method, harness, request):
    if method not in PLAYERS:
        pytest.fail(f"the registered method {method!r} has no random player in tests/test_random_games.py")
    rnd = random.Random(zlib.crc32(method.encode()) + SEED)
    t = Table(harness, rnd, game="bg" if method == "blind-random" else "g")
    players = PLAYERS[method](t, request)

    if method != "payola":
        assert t.state() == "resolved", f"the {method} game did not end"
    with harness.judge.sessions() as s:
        mails = s.scalars(select(InboundMessage)).all()
        assert mails and {m.status for m in mails} == {"done"}, [(m.id, m.status, m.reason) for m in mails
                                                                if m.status != "done"]
        replied = {r.inbound_id for r in s.scalars(select(OutboxMessage).where(OutboxMessage.kind == "reply"))}
        assert not [m.id for m in mails if m.id not in replied and m.sender != "tp-judge@other.test"]
    for p in players:
        assert not [m for m in harness.sent_to(p) if INTERNAL.search(harness.body(m))]
    if method == "payola":  # every player saw the year played, phase by phase
        for p in players:
            played = {re.search(r"Payola (\w+) results", str(m["Subject"])).group(1) for m in harness.sent_to(p)
                      if "results" in str(m["Subject"])}
            assert {"S1901M", "F1901M"} <= played, (p, played)
        return
    # Every player hears of the end: a result mail (a blind game's player,
    # their final power message, which only they can read).
    for p in players:
        if method == "blind-random":
            assert any("your final power message" in str(m["Subject"]) for m in t.post.boxes[p]), p
        else:
            assert harness.sent_to_kind(p, "result"), p
