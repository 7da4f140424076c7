"""Attacks on blind games that once got through (issue 10): a power shown
by LIST or a CLAIM to someone else, forged protocol lines, a THIRDPARTY
request from a stranger. Played between two real judges, as in
tests/test_e2e_blinding.py.
"""

from __future__ import annotations

import hashlib

from tests.test_e2e_blinding import (  # noqa: F401 (tp_url: a fixture)
    GM,
    MODERATOR,
    PLAYERS,
    TP,
    blind_of,
    cli,
    first_round,
    judge_cli,
    judges,
    play_round,
    start_game,
    the_record,
    tp_url,
)
from judge.games import find_game


def test_list_and_claim_show_a_power_only_to_its_player_at_their_address(harness, tmp_path, tp_url):
    """Before: LIST ?game after the end showed every player's power to
    anyone, and a forged CLAIM (From bob, Reply-To mallory) mailed bob's
    final message and power to mallory."""
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    play_round(a, b, post)
    record = the_record(a)
    bob, carol = PLAYERS[1], PLAYERS[2]
    a.send("stranger@else.test", "LIST ?bg")
    a.send(bob, "LIST ?bg")  # From alone proves nothing: no power
    a.send(bob, "SIGNON ?bg pw\nLIST ?bg", headers={"Reply-To": carol})  # carol is a player too
    final = post.find(bob, r"^    (\d{8})$").group(1)
    a.send(bob, f"CLAIM ?bg {final}", headers={"Reply-To": "mallory@evil.example"})
    a.send(bob, f"CLAIM ?bg {final}", headers={"Reply-To": carol})
    post.settle()
    assert not any(pw in post.said("stranger@else.test").split("Players")[1] for pw in record.values())
    assert not post.boxes["mallory@evil.example"]
    assert not any(record[bob] in t for t in post.texts(carol) if "your power" not in t and "you play" not in t)
    texts = [" ".join(t.split()) for t in post.texts(bob)]
    assert "p1: secret (blind game)" in texts[-4]
    assert f"p1: {record[bob]}" in texts[-3]
    assert all(f"Your power is {record[bob]}" in t for t in texts[-2:])
    b.close()


def test_forged_protocol_lines_are_refused(harness, tmp_path, tp_url):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    grace = PLAYERS[6]
    first, token = first_round(post, grace)
    # Mallory forges grace's BLINDED: without her token it is refused...
    b.send(grace, f"BLINDED ?bg {'A' * 12} 12345678")
    b.send(grace, "BLINDED ?bg 12345678")  # (and the old form, without a token, is no command now)
    post.settle()
    assert "with that token" in post.said(grace, -2)
    assert "expected the token the judge mailed you" in post.said(grace)
    # Her real line is accepted.
    b.send(grace, f"BLINDED ?bg {token} {cli('add', first, blind_of(6)).split()[-1]}")
    post.settle()
    assert "your blinded message for ?bg is in" in post.said(grace)
    assert token not in post.said(grace)  # masked in the reply, like a password

    # A forged BLINDLIST "from" the third party, without the round's key,
    # moves nothing on the GM's side.
    a.send(TP, "BLINDLIST ?bg ABCDEFGHJKLM " + " ".join(["12345678"] * 7))
    post.settle()
    with a.judge.sessions() as s:
        from judge.methods.blind_random import runs
        g = find_game(s, "bg")
        assert runs.gm_state(runs.gm_run(s, g)).phase == "awaiting-list"
    assert "not the key of ?bg's current round" in " ".join(a.body(a.last_to(TP)).split())

    # THIRDPARTY from a stranger is not acted on: the operator is asked.
    token_zz = "ZEDTOKENZEDT"
    b.send("stranger@else.test", "THIRDPARTY ?zz KEYKEYKEYKEY zed@else.test "
           + hashlib.sha256(token_zz.encode()).hexdigest())
    post.settle()
    assert "its operator was asked" in post.said("stranger@else.test")
    assert any("asked to be the third party" in m["Subject"] for m in post.boxes[MODERATOR])
    # A second request of the same stranger (any game) waits behind the first:
    # no flood of requests, nor of mails to the moderators.
    b.send("stranger@else.test", "\n".join(f"THIRDPARTY ?g{i} OTHERKEYKEYK zed@else.test " + "ab" * 32
                                            for i in range(50)))
    b.send("zed@else.test", f"BLINDED ?zz {token_zz} 12345678")
    post.settle()
    assert post.said("stranger@else.test").count("waits for this judge's operator already") == 50
    assert len([m for m in post.boxes[MODERATOR] if "asked to be the third party" in m["Subject"]]) == 1
    assert "waits for an operator" in judge_cli(b, "games").stdout
    assert "not yet accepted" in post.said("zed@else.test")
    refused = judge_cli(b, "thirdparty", "refuse", "zz")
    assert refused.returncode == 0, refused.stderr
    assert "refused" in judge_cli(b, "games").stdout
    # A genuine request from a judge not configured: accepted by the operator.
    b.send("gm@third.test", "THIRDPARTY ?yy KEYKEYKEYKEY zed@else.test "
           + hashlib.sha256(token_zz.encode()).hexdigest())
    post.settle()
    accepted = judge_cli(b, "thirdparty", "accept", "yy")
    assert accepted.returncode == 0 and "this judge is its third party" in accepted.stdout, accepted.stderr
    b.send("zed@else.test", f"BLINDED ?yy {token_zz} 12345678")
    post.settle()
    assert "your blinded message for ?yy is in" in post.said("zed@else.test")
    b.close()


def test_a_replaced_player_starts_a_fresh_round_without_the_old_one(harness, tmp_path, tp_url):
    """REPLACE (or EJECT) while the protocol runs: the old player's token is
    dead and the new player is in a fresh round; no RERUN needed."""
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    old = PLAYERS[3]
    _, old_token = first_round(post, old)
    a.send(GM, f"SIGNON Mbg gmpw\nREPLACE {old} olga@example.test")
    post.settle()
    assert "a fresh round of the blinding protocol starts" in post.said(GM)
    b.send(old, f"BLINDED ?bg {old_token} 12345678")
    post.settle()
    assert "with that token" in post.said(old)
    players = [p for p in PLAYERS if p != old] + ["olga@example.test"]
    play_round(a, b, post, players=players)
    record = the_record(a)
    assert set(record) == set(players) and len(set(record.values())) == len(players)
    b.close()
