"""Password brute force (issue 9).

The attack: 300 guesses at a game's master password from 300 From
addresses, one per mail; the 251st was right and signed on, with no lockout
and no word to the master. Now the count of wrong tries belongs to the
password (the game's master password, or one player's), whatever the
sender: after 3 a back-off refuses every try unchecked, after 10 the
password is locked until the master (a player's) or a moderator (the
master's) lifts it. The master is told when a back-off starts and when a
lock happens; the moderators when the master's password is locked.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from judge import passwords
from judge.deadlines import format_time
from judge.games import find_game
from tests.harness import Harness

GM = "gm@example.test"
MODERATOR = "mod@example.test"
ANN = "ann@example.test"


@pytest.fixture
def h(tmp_path, database_url):
    harness = Harness(tmp_path / "data", database_url, moderators=[MODERATOR])
    yield harness
    harness.close()


def notices(h: Harness, address: str, words: str) -> list[str]:
    return [h.body(m) for m in h.sent_to_kind(address, "notice") if words in str(m["Subject"])]


def test_password_brute_force_of_the_master_from_300_addresses(h):
    h.mail(GM, "CREATE ?spring s3cret-251")
    guesses = [f"guess-{i}" for i in range(1, 301)]
    guesses[250] = "s3cret-251"
    # The first twenty a few hours apart, so that no back-off holds them up:
    # each is checked, and the tenth wrong one locks the password.
    for i, guess in enumerate(guesses[:20], 1):
        h.mail(f"guesser{i}@evil.example", f"SIGNON Mspring {guess}\nSET PASSWORD mine")
        h.clock.advance(hours=3)
    for i, guess in enumerate(guesses[20:], 21):
        h.send(f"guesser{i}@evil.example", f"SIGNON Mspring {guess}\nSET PASSWORD mine")
    for _ in range(4):  # a pass sends at most 100 mails
        h.run()

    found = h.body(h.last_to("guesser251@evil.example"))
    assert "signed on as master" not in found and "master password of ?spring changed" not in found
    assert "is locked after too many wrong tries" in found and "judge unlock spring" in found
    assert "wrong master password for ?spring" in h.body(h.last_to("guesser1@evil.example"))
    with h.judge.sessions() as s:
        game = find_game(s, "spring")
        assert (game.gm_failures, game.gm_locked) == (10, True)  # tries after the lock are not counted

    # The master: one notice when the back-off started, one at the lock; the
    # moderators only at the lock (only they can lift it).
    assert len(notices(h, GM, "wrong passwords")) == 1
    locked = notices(h, GM, "a password is locked")
    assert len(locked) == 1 and "judge unlock spring" in locked[0]
    assert [h.body(m) for m in h.sent_to_kind(MODERATOR, "notice")] == locked

    # The real master is locked out as well, until a moderator lifts the lock.
    h.mail(GM, "SIGNON Mspring s3cret-251")
    assert "is locked" in h.body(h.last_to(GM))
    from judge import lockout

    with h.judge.sessions.begin() as s:
        said = lockout.unlock(s, find_game(s, "spring"), None, h.clock.now())
    assert "it was locked after 10 wrong tries" in said
    h.mail(GM, "SIGNON Mspring s3cret-251\nLIST ?spring")
    assert "signed on as master of ?spring" in h.body(h.last_to(GM))
    with h.judge.sessions() as s:
        game = find_game(s, "spring")
        assert (game.gm_failures, game.gm_locked, game.gm_backoff_until) == (0, False, None)


def test_password_back_off_refuses_unchecked_and_a_player_lock_is_the_masters_to_lift(h, monkeypatch):
    h.mail(GM, "CREATE ?spring gmpw")
    h.mail(f"Ann <{ANN}>", "SIGNON ?spring annpw")
    for i in range(3):
        h.mail(ANN, f"SIGNON ?spring wrong-{i}")
    reply = h.body(h.last_to(ANN))
    until = h.clock.now() + timedelta(seconds=60)  # password_backoff_seconds after the third
    assert f"the next try is not checked before {format_time(until)}" in reply
    assert len(notices(h, GM, "wrong passwords")) == 1

    # Within the back-off even the right password is refused, unchecked.
    checked = []
    real = passwords.check_password
    monkeypatch.setattr(passwords, "check_password", lambda *a: checked.append(a) or real(*a))
    h.mail(ANN, "SIGNON ?spring annpw\nLIST")
    reply = h.body(h.last_to(ANN))
    assert "was not checked" in reply and f"Try again after {format_time(until)}" in reply
    assert "Ignored: 1 line" in reply and checked == []

    # After it, the right password is checked, signs on and clears the count.
    h.clock.advance(seconds=61)
    h.mail(ANN, "SIGNON ?spring annpw")
    assert "signed on to ?spring as Ann" in h.body(h.last_to(ANN)) and len(checked) == 1
    with h.judge.sessions() as s:
        ann = find_game(s, "spring").players[0]
        assert (ann.failures, ann.backoff_until) == (0, None)

    # Ten wrong tries lock Ann's password: no moderator is troubled for a
    # player's lock, the master lifts it.
    for i in range(10):
        h.mail(ANN, f"SIGNON ?spring bad-{i}")
        h.clock.advance(hours=3)
    h.mail(ANN, "SIGNON ?spring annpw")
    assert "locked after too many wrong tries" in h.body(h.last_to(ANN))
    assert f"UNLOCK {ANN}" in h.body(h.last_to(ANN))
    assert len(notices(h, GM, "wrong passwords")) == 2  # a back-off started again
    assert len(notices(h, GM, "a password is locked")) == 1 and not h.sent_to_kind(MODERATOR, "notice")

    h.mail("bob@example.test", "SIGNON ?spring bobpw\nUNLOCK ann@example.test")  # a player cannot
    assert "only the master of ?spring may do this" in h.body(h.last_to("bob@example.test"))
    h.mail(GM, "SIGNON Mspring gmpw\nUNLOCK Ann")
    assert "Ann <ann@example.test> in ?spring: the password is unlocked (it was locked after 10 wrong tries)" \
        in h.body(h.last_to(GM))
    h.mail(ANN, "SIGNON ?spring annpw")
    assert "signed on to ?spring as Ann" in h.body(h.last_to(ANN))
