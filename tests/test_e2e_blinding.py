"""Blind games by mail between two judges, on SQLite and PostgreSQL: this
judge runs the GM's side, another judge is the third party.

Each player does their part with `judge blind add` and `judge blind reveal`
only. The tests search every mail both judges send for every (player, power)
pair, forge each protocol line, mend a mistyped BLINDED, damage two
messages (traced by the third party, or ended by the master's RERUN), stall
a player, and let a player check their own part with `judge verify`.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import json
import re
import subprocess
import sys
import uuid
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, select, text

from judge.methods.blind_random.cli import blind
from judge.games import find_game
from judge.store.models import InboundMessage
from judge.transports.maildir import read_all
from tests.harness import Harness

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
GM = "gm@example.test"
TP = "tp-judge@other.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
MODERATOR = "mod@other.test"


@pytest.fixture
def tp_url(database_url, tmp_path, request):
    """The third party judge's store: of the same kind as this judge's."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'tp.sqlite3'}"
        return
    admin_url = request.getfixturevalue("postgres_admin_url")
    name = f"judge_tp_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    yield admin_url.rsplit("/", 1)[0] + "/" + name
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


class Post:
    """Carries every mail the two judges send to its recipients; `hold`
    keeps back the mails it matches (a lost mail, a silent third party)."""

    def __init__(self, a: Harness, b: Harness):
        self.a, self.b = a, b
        self.seen: set[bytes] = set()
        self.boxes: dict[str, list] = defaultdict(list)
        self.all: list = []  # (recipient, message) of every mail either judge sent
        self.hold = lambda msg: False

    def settle(self) -> None:
        for _ in range(40):
            moved = 0
            for h in (self.a, self.b):
                h.run()
                for raw in read_all(h.config.outbox_path):
                    key = hashlib.sha256(raw).digest()
                    if key in self.seen:
                        continue
                    self.seen.add(key)
                    moved += 1
                    msg = email.message_from_bytes(raw, policy=email.policy.default)
                    rcpts = [a.addr_spec.lower() for a in msg["To"].addresses]
                    for rcpt in rcpts:
                        self.all.append((rcpt, msg))
                    if self.hold(msg):
                        continue
                    for rcpt in rcpts:
                        if rcpt == self.a.config.address:
                            self.a.inbox.add(raw)
                        elif rcpt == self.b.config.address:
                            self.b.inbox.add(raw)
                        else:
                            self.boxes[rcpt].append(msg)
            if not moved:
                return
        raise AssertionError("the judges kept mailing each other")

    def texts(self, who: str) -> list[str]:
        return [self.a.body(m) for m in self.boxes[who]]

    def said(self, who: str, k: int = -1) -> str:
        """Mail k to `who`, its lines joined: replies wrap long lines."""
        return " ".join(self.texts(who)[k].split())

    def find(self, who: str, pattern: str) -> re.Match:
        for text_ in reversed(self.texts(who)):
            m = re.search(pattern, text_, re.M)
            if m:
                return m
        raise AssertionError(f"no mail to {who} matches {pattern!r}")

    def last_mail(self, who: str, subject: str):
        mails = [m for m in self.boxes[who] if subject in m["Subject"]]
        assert mails, f"no mail to {who} with {subject!r}"
        return mails[-1]


def judges(harness, tmp_path, tp_url, **tp_sections):
    a = harness  # this judge: the GM's side
    b = Harness(tmp_path / "tp", tp_url, address=TP, moderators=[MODERATOR],
                sections={"blinding": {"trusted_judges": [a.config.address]}, **tp_sections})
    return a, b, Post(a, b)


def start_game(a: Harness, post: Post, players=PLAYERS, game="bg") -> None:
    """The master creates the game with the other judge as third party;
    the players join; the master starts it."""
    a.send(GM, f"CREATE ?{game} gmpw blind-random\nSET THIRDPARTY " + TP)
    for p in players:
        a.send(p, f"SIGNON ?{game} pw")
    post.settle()
    a.send(GM, f"SIGNON M{game} gmpw\nSTART")
    post.settle()


def cli(*args: str) -> str:
    out = CliRunner().invoke(blind, list(args))
    assert out.exit_code == 0, out.output
    return out.output


def judge_cli(h: Harness, *args: str) -> subprocess.CompletedProcess:
    cfg = h.config
    env_args = ["--data-dir", str(cfg.data_dir)]
    toml = cfg.data_dir / "judge.toml"
    toml.write_text(f'[judge]\naddress = "{cfg.address}"\ndatabase = "{cfg.database_url}"\n')
    return subprocess.run([JUDGE_BIN, "--config", str(toml), *env_args, *args], capture_output=True, text=True)


def first_round(post: Post, p: str) -> tuple[str, str]:
    """The GM-blinded message and the token of the newest round's mail to `p`."""
    mail = [m for m in post.boxes[p] if "your blinded power message" in m["Subject"]][-1]
    body = post.a.body(mail)
    return (re.search(r"^    (\d{8})$", body, re.M).group(1), re.search(r"^    ([A-Z]{12})$", body, re.M).group(1))


def blind_of(k: int, salt: int = 0) -> str:
    return "".join(str((k * 7 + i * 3 + 1 + salt) % 10) for i in range(8))


def play_round(a: Harness, b: Harness, post: Post, players=PLAYERS, *, blinded_twist=None, salt=0) -> dict:
    """Every player blinds the GM's message, mails it to the third party,
    and sends their blind when asked. `blinded_twist(player, number)` may
    change the number a player sends (a mistake). Returns player -> blind."""
    blinds = {}
    for k, p in enumerate(players):
        first, token = first_round(post, p)
        blinds[p] = blind_of(k, salt)
        summed = cli("add", first, blinds[p]).strip().split()[-1]
        if blinded_twist:
            summed = blinded_twist(p, summed)
        b.send(p, f"BLINDED ?bg {token} {summed}")
    post.settle()
    for p in players:
        _, token = first_round(post, p)
        b.send(p, f"BLIND ?bg {token} {blinds[p]}")
    post.settle()
    return blinds


def the_record(a: Harness, game="bg") -> dict[str, str]:
    with a.judge.sessions() as s:
        g = find_game(s, game)
        assert g.state == "resolved", g.state
        return {pl.address: pl.power for pl in g.players if pl.status == "active"}


def reveal(post: Post, p: str) -> str:
    final = post.find(p, r"^    (\d{8})$").group(1)  # the newest: the final message
    pattern = post.find(p, r"format: ([0-9x]{8})").group(1)
    published = post.find(p, r"^    ((?:\d{8} ?)+)$").group(1).split()
    out = cli("reveal", final, *published, "--format", pattern)
    return re.search(r"power \d+, (\w+)", out).group(1)


def assert_no_leak(post: Post, record: dict[str, str], names: dict[str, str]) -> None:
    """Every (player, power) pair is found only in that player's mails and
    the master's; no player's mail names another player's address."""
    for rcpt, msg in post.all:
        body = post.a.body(msg)
        for p, power in record.items():
            if rcpt in (p, GM):
                continue
            said = re.search(rf"you play {power}|Your power is {power}", body)
            assert not (said and rcpt in record), (rcpt, p, power, body)
            for line in body.splitlines():
                if re.search(rf"\b{re.escape(power)}\b", line) and (
                        p in line or re.search(rf"(?<![\w@.]){re.escape(names[p])}(?![\w@])", line)):
                    raise AssertionError(f"{p}'s power {power} in a mail to {rcpt}: {line!r}")
        if rcpt in record:
            others = [q for q in record if q != rcpt]
            assert not any(q in body for q in others), (rcpt, body)
            assert not any(q in str(msg["To"]) + str(msg.get("Cc", "")) for q in others)


def test_a_whole_blind_game_leaks_no_power_and_each_player_verifies(harness, tmp_path, tp_url):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    assert "third party tp-judge@other.test takes it from here" in post.said(GM)

    # A player's LIST while it runs: the step, and whom it waits for.
    a.send(PLAYERS[0], "LIST ?bg")
    post.settle()
    listing = post.said(PLAYERS[0])
    assert "assigning (blinding protocol)" in listing and "steps 3-4" in listing
    assert "bidding" not in listing and "does not mind" not in listing

    blinds = play_round(a, b, post)
    record = the_record(a)
    assert sorted(record.values()) == sorted(POWERS)
    names = {p: p.split("@")[0] for p in PLAYERS}

    # The master's record, and each player's reveal, agree.
    master = a.sent_to_kind(GM, "blinding")[-1]
    assert "the powers are assigned (the GM's record)" in master["Subject"]
    for p in PLAYERS:
        assert reveal(post, p) == record[p], p
        said = [re.search(r"you play (\w+)", t) for t in post.texts(p)]
        assert [m.group(1) for m in said if m] == [record[p]]
    published = post.find(PLAYERS[0], r"^    ((?:\d{8} ?)+)$").group(1).split()
    assert sorted(published) == sorted(blinds.values())

    # After the end: LIST from a stranger, a player and the master.
    a.send("stranger@else.test", "LIST ?bg")
    a.send(PLAYERS[1], "SIGNON ?bg pw\nLIST ?bg", headers={"Reply-To": PLAYERS[2]})
    a.send(PLAYERS[3], "LIST ?bg")  # no password: no power
    a.send(GM, "SIGNON Mbg gmpw\nLIST ?bg")
    # A forged CLAIM: From bob, Reply-To mallory (and one to another player).
    final0 = post.find(PLAYERS[0], r"^    (\d{8})$").group(1)
    a.send(PLAYERS[0], f"CLAIM ?bg {final0}", headers={"Reply-To": "mallory@evil.example"})
    a.send(PLAYERS[0], f"CLAIM ?bg {final0}", headers={"Reply-To": PLAYERS[4]})
    post.settle()
    stranger = post.said("stranger@else.test")
    assert "secret (blind game)" in stranger and not any(pw in stranger for pw in POWERS[:0])
    assert not any(re.search(rf"\b{pw}\b", stranger.split("Players")[1]) for pw in POWERS)
    own = post.said(PLAYERS[1])  # to the registered address, not the Reply-To
    assert f"{names[PLAYERS[1]]}: {record[PLAYERS[1]]}" in own
    assert sum(pw in own.split("Players")[1] for pw in POWERS) == 1
    assert f"{names[PLAYERS[3]]}: secret" in post.said(PLAYERS[3])
    gm_list = post.said(GM)
    assert all(f"<{p}>: {record[p]}" in gm_list for p in PLAYERS)
    assert not post.boxes["mallory@evil.example"]
    claims = [" ".join(t.split()) for t in post.texts(PLAYERS[0]) if "the claim is refused" in " ".join(t.split())]
    assert len(claims) == 2 and f"Your power is {record[PLAYERS[0]]}" in claims[-1]
    assert_no_leak(post, record, names)
    # Every mail of the protocol to a player is private: on a forum it is a
    # private message, never a post in a topic (tests/security/test_private_mail_on_forum.py).
    for rcpt, msg in post.all:
        if rcpt in record and msg["Auto-Submitted"] and "Re:" not in msg["Subject"]:
            assert msg["X-Judge-Private"] == "yes", (rcpt, msg["Subject"])
    # No auction wording anywhere in a blind game.
    for rcpt, msg in post.all:
        if rcpt in record or rcpt == GM:
            body = post.a.body(msg)
            assert not re.search(r"auction|\bbid|T, M and D", body, re.I), (rcpt, msg["Subject"], body)

    # The master's record re-runs from the mail alone; a changed blind is caught.
    raw = master.as_bytes()
    (tmp_path / "record.eml").write_bytes(raw)
    run = subprocess.run([JUDGE_BIN, "verify", str(tmp_path / "record.eml")], capture_output=True, text=True)
    assert run.returncode == 0 and "OK: the resolution checks out" in run.stdout, run.stdout + run.stderr
    rec = json.loads(next(part.get_payload(decode=True) for part in
                          email.message_from_bytes(raw, policy=email.policy.default).walk()
                          if part.get_filename() == "resolution.json"))
    rec["result"]["gm_blind"] = "0" * 8
    (tmp_path / "bad.json").write_text(json.dumps(rec))
    run = subprocess.run([JUDGE_BIN, "verify", str(tmp_path / "bad.json")], capture_output=True, text=True)
    assert run.returncode == 1 and "result.gm_blind" in run.stdout

    # Each player checks their own part with judge verify, on their own
    # mail; the record holds no other player's address, message or power.
    for p in PLAYERS:
        mail = post.last_mail(p, "your power")
        path = tmp_path / f"{p}.eml"
        path.write_bytes(mail.as_bytes())
        run = subprocess.run([JUDGE_BIN, "verify", str(path)], capture_output=True, text=True)
        assert run.returncode == 0 and "OK" in run.stdout, run.stdout + run.stderr
        own_record = next(part.get_payload(decode=True) for part in mail.walk()
                          if part.get_filename() == "resolution.json").decode()
        assert record[p] in own_record
        assert not any(q in own_record for q in PLAYERS if q != p)
        assert "final_key\"" not in own_record
    # A player's record with a changed power is caught.
    rec = json.loads(next(part.get_payload(decode=True) for part in post.last_mail(PLAYERS[0], "your power").walk()
                          if part.get_filename() == "resolution.json"))
    wrong = next(pw for pw in POWERS if pw != record[PLAYERS[0]])
    rec["input"]["power"] = rec["result"]["power"] = wrong
    (tmp_path / "bad-player.json").write_text(json.dumps(rec))
    run = subprocess.run([JUDGE_BIN, "verify", str(tmp_path / "bad-player.json")], capture_output=True, text=True)
    assert run.returncode == 1 and "result.power" in run.stdout, run.stdout

    # The log shows the real seed; the third party's judge knows its run.
    with a.judge.sessions() as s:
        from judge import audit
        events = audit.game_events(s, find_game(s, "bg"))
    seed = rec["result"]["seed"]
    assert any(e["kind"] == "resolution" and e.get("seed") == seed for e in events)
    games = judge_cli(b, "games")
    assert games.returncode == 0 and "bg" in games.stdout and "third party of judge@example.test" in games.stdout
    log = judge_cli(b, "log", "bg")
    assert log.returncode == 0, log.stderr
    assert "third party's shuffle" in log.stdout and log.stdout.count("third party's shuffle") == len(PLAYERS) - 1  # the last place: no choice
    assert "BLINDED ?bg ****" in log.stdout and not any(t in log.stdout for t in (first_round(post, PLAYERS[0])[1],))

    # Judge-to-judge mail was run, never answered.
    for h in (a, b):
        with h.judge.sessions() as s:
            protocol = [m for m in s.scalars(select(InboundMessage)) if "judge-to-judge" in (m.reason or "")]
            assert protocol, h.config.address
    b.close()


def test_a_mistyped_blinded_line_is_mended(harness, tmp_path, tp_url):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    first, token = first_round(post, PLAYERS[2])
    # p2 mistypes first (the others have not all sent yet), then corrects.
    b.send(PLAYERS[2], f"BLINDED ?bg {token} 99999999")
    post.settle()
    play_round(a, b, post)  # sends p2's right line too, which replaces the mistyped one
    assert any("It replaces the one you sent before" in " ".join(t.split()) for t in post.texts(PLAYERS[2]))
    record = the_record(a)
    assert reveal(post, PLAYERS[2]) == record[PLAYERS[2]]
    with a.judge.sessions() as s:
        from judge.store.models import Resolution
        assert not s.scalars(select(Resolution)).one().result["corrections"]
    b.close()


def _damage_two(p: str, number: str) -> str:
    """p1 and p4 send a wrong number (a mistake noticed by nobody). Every
    digit changes, so the verification digits too: a change of power digits
    alone could turn one power's message into another's, which no protocol
    can notice."""
    if p in (PLAYERS[1], PLAYERS[4]):
        # (Not the same change at each digit: that is the difference of two
        # of the test's blinds, and would decode with the wrong one.)
        return cli("add", number, "12345678").strip().split()[-1]
    return number


def test_two_damaged_messages_are_traced_by_the_third_party(harness, tmp_path, tp_url):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    play_round(a, b, post, blinded_twist=_damage_two)
    record = the_record(a)
    assert sorted(record.values()) == sorted(POWERS)
    assert any("the blinds do not assign every power" in m["Subject"] for m in post.boxes[GM])
    # Undamaged players still reveal their own power; the others are told
    # how the GM side worked it out.
    for p in PLAYERS:
        own = [" ".join(t.split()) for t in post.texts(p)]
        if any("does not decode to it" in t for t in own):
            continue
        assert reveal(post, p) == record[p]
    assert_no_leak(post, record, {p: p.split("@")[0] for p in PLAYERS})
    b.close()


def test_two_damaged_messages_and_a_silent_third_party_end_in_rerun(harness, tmp_path, tp_url):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    post.hold = lambda msg: msg["Subject"].endswith("please trace the list")  # the trace never arrives
    play_round(a, b, post, blinded_twist=_damage_two)
    with a.judge.sessions() as s:
        assert find_game(s, "bg").state == "bidding"
    a.send(PLAYERS[0], "LIST ?bg")
    post.settle()
    assert "traces its list" in post.said(PLAYERS[0])
    a.send(GM, "SIGNON Mbg gmpw\nRERUN")
    post.settle()
    assert "round 2 of the blinding protocol started" in post.said(GM)
    post.hold = lambda msg: False
    blinds = play_round(a, b, post, salt=3)
    record = the_record(a)
    for p in PLAYERS:
        assert reveal(post, p) == record[p]
    assert sorted(post.find(PLAYERS[0], r"^    ((?:\d{8} ?)+)$").group(1).split()) == sorted(blinds.values())
    # A line of round 1 counts no more.
    old_token = [re.search(r"^    ([A-Z]{12})$", post.a.body(m), re.M).group(1) for m in post.boxes[PLAYERS[0]]
                 if "your blinded power message" in m["Subject"]][0]
    b.send(PLAYERS[0], f"BLINDED ?bg {old_token} 12345678")
    post.settle()
    assert "with that token" in post.said(PLAYERS[0])
    b.close()


def test_a_stalled_player_is_named_and_the_master_mends_it(harness, tmp_path, tp_url):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    late = PLAYERS[5]
    for k, p in enumerate(PLAYERS):
        if p == late:
            continue
        first, token = first_round(post, p)
        b.send(p, f"BLINDED ?bg {token} {cli('add', first, blind_of(k)).split()[-1]}")
    post.settle()
    # Players hear how many are awaited, never who.
    assert "Waiting for the blinded message of 1 more player." in post.said(PLAYERS[6])  # the last to send
    assert late not in "".join(post.texts(PLAYERS[0]))
    # LIST names the step and the player it waits for.
    a.send("stranger@else.test", "LIST ?bg")
    post.settle()
    listing = post.said("stranger@else.test")
    assert "Waiting for: p5" in listing and "steps 3-4" in listing
    # A day later the master hears it; at the deadline, who stalled and what to do.
    a.clock.advance(hours=25)
    post.settle()
    daily = post.last_mail(GM, "the blinding protocol waits")
    assert "It waits for: p5" in a.body(daily)
    # Another game's mail goes on while the blind game's deadline passes.
    a.clock.advance(days=3)
    a.send("someone@else.test", "CREATE ?other pw random")
    post.settle()
    assert "?other" in post.said("someone@else.test")
    deadline = post.last_mail(GM, "the deadline passed")
    assert "It waits for: p5" in a.body(deadline) and "RERUN" in a.body(deadline)
    with a.judge.sessions() as s:
        assert find_game(s, "bg").state == "waiting"
    # START and PROCESS say what to do instead.
    a.send(GM, "SIGNON Mbg gmpw\nSTART\nPROCESS")
    post.settle()
    reply = post.said(GM)
    assert "send RERUN" in reply and "RERUN starts a fresh round" in reply and "internal" not in reply
    # The master ejects the stalled player and runs a fresh round.
    a.send(GM, f"SIGNON Mbg gmpw\nEJECT {late}\nRERUN")
    post.settle()
    assert "round 2" in post.said(GM) and "a fresh round of the blinding protocol starts" in post.said(GM)
    # One fresh round, not one for EJECT and another for RERUN.
    assert len([m for m in post.boxes[PLAYERS[0]] if "your blinded power message" in m["Subject"]]) == 2
    with a.judge.sessions() as s:
        assert find_game(s, "bg").state == "bidding"  # running again, with a deadline ahead
    rest = [p for p in PLAYERS if p != late]
    play_round(a, b, post, players=rest, salt=1)
    record = the_record(a)
    assert len(record) == 6 and len(set(record.values())) == 6
    for p in rest:
        assert reveal(post, p) == record[p]
    b.close()
