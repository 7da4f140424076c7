"""A 7-player blind game through the blinding protocol, by mail, with two
judges: this judge runs the GM's side, another judge is the third party.

Each player does their part with `judge blind add` and `judge blind reveal`
only; each player's mailbox holds only their own power; the GM's record and
every player's reveal agree.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from collections import defaultdict

from click.testing import CliRunner
from sqlalchemy import select

from judge.cli_blind import blind
from judge.games import find_game
from judge.store.models import InboundMessage
from judge.transports.maildir import read_all
from tests.harness import Harness

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
GM = "gm@example.test"
TP = "tp-judge@other.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


class Post:
    """Carries every mail the two judges send to its recipients."""

    def __init__(self, a: Harness, b: Harness):
        self.a, self.b = a, b
        self.seen: set[bytes] = set()
        self.boxes: dict[str, list] = defaultdict(list)

    def settle(self) -> None:
        for _ in range(30):
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
                    for rcpt in [a.addr_spec.lower() for a in msg["To"].addresses]:
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

    def find(self, who: str, pattern: str) -> re.Match:
        for text in reversed(self.texts(who)):
            m = re.search(pattern, text, re.M)
            if m:
                return m
        raise AssertionError(f"no mail to {who} matches {pattern!r}")


def start_game(a: Harness, post: Post) -> None:
    """The master creates ?bg with the other judge as third party; seven
    players join; the master starts it."""
    a.send(GM, "CREATE ?bg gmpw blind-random\nSET THIRDPARTY " + TP)
    for p in PLAYERS:
        a.send(p, "SIGNON ?bg pw")
    post.settle()
    a.send(GM, "SIGNON Mbg gmpw\nSTART")
    post.settle()


def cli(*args: str) -> str:
    out = CliRunner().invoke(blind, list(args))
    assert out.exit_code == 0, out.output
    return out.output


def test_blind_game_by_mail_between_two_judges(harness, tmp_path):
    a = harness  # this judge: the GM's side
    b = Harness(tmp_path / "tp", f"sqlite:///{tmp_path / 'tp.sqlite3'}", address=TP)
    post = Post(a, b)

    start_game(a, post)
    assert "third party tp-judge@other.test takes it from here" in post.texts(GM)[-1]

    # Steps 3-4: every player blinds the message the GM's judge sent them and
    # mails the result to the third party judge.
    blinds = {}
    for k, p in enumerate(PLAYERS):
        first = post.find(p, r"^    (\d{8})$").group(1)
        blinds[p] = "".join(str((k * 7 + i * 3 + 1) % 10) for i in range(8))
        summed = cli("add", first, blinds[p]).strip().split()[-1]
        b.send(p, f"BLINDED ?bg {summed}")
    post.settle()
    # The third party judge forwarded the shuffled list; the GM's judge
    # confirmed; the third party asked every player for their blind.
    for p in PLAYERS:
        assert any("please send your blinding factor" in t.lower() or "BLIND ?bg YOURBLIND" in t
                   for t in post.texts(p)), p
        b.send(p, f"BLIND ?bg {blinds[p]}")
    post.settle()

    with a.judge.sessions() as s:
        game = find_game(s, "bg")
        assert game.state == "resolved"
        record = {pl.address: pl.power for pl in game.players}
    master = post.texts(GM)[-1]
    assert "the powers are assigned (the GM's record)" in a.sent_to_kind(GM, "blinding")[-1]["Subject"]
    assert sorted(record.values()) == sorted(POWERS)

    published = post.find(PLAYERS[0], r"^BLINDS \?bg ((?:\d{8} ?)+)$").group(1).split()
    assert sorted(published) == sorted(blinds.values())
    for p in PLAYERS:
        final = post.find(p, r"^    (\d{8})$")  # the newest: the final message
        pattern = post.find(p, r"format: ([0-9x]{8})").group(1)
        out = cli("reveal", final.group(1), *published, "--format", pattern)
        revealed = re.search(r"power \d+, (\w+)", out).group(1)
        assert revealed == record[p], (p, out)
        # Only their own power reaches a player: the GM's record goes to the master alone.
        said = [re.search(r"you play (\w+)", t) for t in post.texts(p)]
        assert [m.group(1) for m in said if m] == [record[p]]
        others = [pw for q, pw in record.items() if q != p]
        assert not any(f"{q}" in t and record[q] in t for q in record if q != p for t in post.texts(p)), p
        assert others  # (seven distinct powers, checked above)
    assert all(record[p] in master for p in PLAYERS)

    # The master's record re-runs from the mail alone, and a changed blind is caught.
    raw = a.sent_to_kind(GM, "blinding")[-1].as_bytes()
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

    # A player cannot see their power and claim corruption to get another.
    final = post.find(PLAYERS[0], r"^    (\d{8})$").group(1)
    a.send(PLAYERS[0], f"CLAIM ?bg {final}")
    post.settle()
    reply = post.texts(PLAYERS[0])[-1]
    assert "the claim is refused" in reply and f"Your power is {record[PLAYERS[0]]}" in reply

    # Judge-to-judge mail was run, never answered.
    for h in (a, b):
        with h.judge.sessions() as s:
            protocol = [m for m in s.scalars(select(InboundMessage)) if "judge-to-judge" in (m.reason or "")]
            assert protocol, h.config.address
    b.close()


def test_a_missing_player_stalls_the_protocol_without_leaking(harness, tmp_path):
    a = harness
    b = Harness(tmp_path / "tp", f"sqlite:///{tmp_path / 'tp.sqlite3'}", address=TP)
    post = Post(a, b)
    start_game(a, post)
    for k, p in enumerate(PLAYERS[:6]):
        first = post.find(p, r"^    (\d{8})$").group(1)
        b.send(p, f"BLINDED ?bg {cli('add', first, '1234567' + str(k)).split()[-1]}")
    post.settle()
    # p6 never sends: the third party waits, and says for whom; no list goes out.
    waiting = post.texts(PLAYERS[5])[-1]
    assert "Waiting for the blinded message of p6@example.test" in waiting
    assert not any("BLINDLIST" in t for box in post.boxes.values() for t in [a.body(m) for m in box])
    with a.judge.sessions() as s:
        assert find_game(s, "bg").state == "bidding"
    # A second, different message from a player is refused, not silently replaced.
    b.send(PLAYERS[0], "BLINDED ?bg 12345678")
    post.settle()
    assert "has sent a different message already" in post.texts(PLAYERS[0])[-1]
    # The master cannot make this judge its own third party.
    a.send(GM, "CREATE ?solo gmpw blind-random\nSET THIRDPARTY " + a.config.address)
    post.settle()
    assert "the third party must be someone else" in post.texts(GM)[-1]
    b.close()
