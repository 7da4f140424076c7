"""Murky's blinding protocol (judge/methods/blind_random/blinding.py and cli.py, docs/blinding.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.methods.blind_random.cli import blind, urandom_digits
from judge.methods.blind_random import blinding as bl
from judge.methods.blind_random.blinding import (
    Format,
    GMState,
    ProtocolError,
    ThirdPartyState,
    add,
    awaiting,
    sub,
)
from judge.rng import DrawStream

POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
PLAYERS = ["alice", "Bob", "carol", "dave", "Erin", "frank", "gina"]


# --------------------------------------------------------------------------
# The seed's worked example, digit for digit


def test_seed_example_digit_for_digit():
    message, gm_blind, player_blind = "44560464", "54646487", "87446534"
    gm_blinded = add(message, gm_blind)
    assert gm_blinded == "98106841"  # 4+7 = 1, not 11: no carry
    both = add(gm_blinded, player_blind)
    assert both == "75542375"
    without_gm = sub(both, gm_blind)
    assert without_gm == "21906998"
    restored = sub(without_gm, player_blind)
    assert restored == "44560464"
    fmt = Format.parse("4456x464", len(POWERS))
    assert fmt.decode(restored) == 0
    assert POWERS[fmt.decode(restored)] == "Austria"
    assert bl.reveal(without_gm, ["12345678", "55555555", player_blind, "90000001"], fmt) == [(2, 0)]


def test_add_and_sub_refuse_bad_input_clearly():
    with pytest.raises(ValueError, match="same number of digits: 123 has 3, 1234 has 4"):
        add("123", "1234")
    with pytest.raises(ValueError, match="only the digits 0-9"):
        sub("12a4", "1234")
    with pytest.raises(ValueError, match="empty"):
        add("", "")
    with pytest.raises(ValueError, match="digits 0-9"):
        add(1234, "1234")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only the digits"):
        add("١٢٣٤", "1234")  # Arabic-Indic digits are digits to Python, not to the protocol


# --------------------------------------------------------------------------
# Digit arithmetic properties

digits = st.integers(1, 20).flatmap(lambda n: st.tuples(*[st.text("0123456789", min_size=n, max_size=n)] * 3))


@given(digits)
def test_sub_undoes_add(abc):
    a, b, _ = abc
    assert sub(add(a, b), b) == a
    assert add(sub(a, b), b) == a


@given(digits)
def test_add_commutative_and_associative(abc):
    a, b, c = abc
    assert add(a, b) == add(b, a)
    assert add(add(a, b), c) == add(a, add(b, c))
    assert sub(sub(a, b), c) == sub(a, add(b, c))


@given(digits)
def test_zero_and_self(abc):
    a, _, _ = abc
    zeros = "0" * len(a)
    assert add(a, zeros) == a and sub(a, zeros) == a
    assert sub(a, a) == zeros
    assert len(add(a, a)) == len(a)


@given(digits)
def test_blinds_commute_so_the_gm_can_unblind_after_the_player(abc):
    message, g, p = abc
    assert sub(add(add(message, g), p), g) == add(message, p)


# --------------------------------------------------------------------------
# Formats


def test_format_two_digit_power_numbers():
    fmt = Format.parse("44XX0464", 12)
    assert fmt.pattern == "44xx0464" and fmt.positions == (2, 3) and fmt.width == 2
    assert fmt.message(0) == "44000464"
    assert fmt.message(3) == "44030464"
    assert fmt.message(11) == "44110464"
    assert fmt.decode("44110464") == 11
    assert fmt.decode("44120464") is None  # no power 12
    assert fmt.decode("44030465") is None  # a verification digit differs
    assert bl.power_messages(fmt) == [fmt.message(k) for k in range(12)]


def test_format_power_digits_need_not_be_adjacent():
    fmt = Format.parse("x12345x6", 30)
    assert fmt.message(27) == "21234576"
    assert fmt.decode("21234576") == 27
    assert fmt.decode("31234506") is None  # 30: no such power


def test_format_refusals():
    for pattern, words in [("44560464", "no x"), ("4456y464", "not y"), ("xxx", "no verification"),
                           ("", "empty"), ("4456x464", "need 2")]:
        with pytest.raises(ValueError, match=words):
            Format.parse(pattern, 12 if words == "need 2" else 7)
    fmt = Format.parse("4456x464", 7)
    with pytest.raises(ValueError, match="between 0 and 6"):
        fmt.message(7)
    with pytest.raises(ValueError, match="has 7 digits"):
        fmt.decode("4456046")
    assert fmt.decode("44567464") is None  # power 7 of a 7-power game


@settings(max_examples=60)
@given(st.integers(1, 150), st.integers(0, 10), st.binary(min_size=1, max_size=8))
def test_make_format_round_trips(n_powers, extra, seed):
    width = bl.power_width(n_powers)
    length = width + bl.MIN_VERIFICATION_DIGITS + extra
    stream = DrawStream(seed)
    fmt = bl.make_format(stream, n_powers, length)
    assert fmt.length == length and fmt.width == width
    messages = bl.power_messages(fmt, n_powers)
    assert [fmt.decode(m) for m in messages] == list(range(n_powers))
    assert len(set(messages)) == n_powers
    assert all(d["what"] in (bl.WHAT_POSITION, bl.WHAT_VERIFICATION) for d in stream.records())


def test_make_format_refuses_too_short_messages():
    with pytest.raises(ValueError, match="too short"):
        bl.make_format(DrawStream(b"s"), 7, 4)
    assert bl.make_format(DrawStream(b"s"), 7, 5).length == 5


def test_random_digits_are_recorded_draws():
    stream = DrawStream(bytes.fromhex("00112233445566778899aabbccddeeff"))
    value = bl.random_digits(stream, 8, "test-digits", who="gm")
    assert len(value) == 8 and value.isdigit()
    recs = stream.records()
    assert [r["chosen"] for r in recs] == list(value)
    assert recs[0]["context"] == {"digit": 0, "who": "gm"} and recs[0]["what"] == "test-digits"
    # docs/randomness.md: the first word of this seed is 6 mod 7; mod 10 it is...
    assert value[0] == str(5992150067622530496 % 10)


# --------------------------------------------------------------------------
# The whole protocol in memory


@dataclass
class Player:
    """A player, knowing only what is mailed to them and what is published."""

    name: str
    first: str = ""  # from the GM, step 2
    blind: str = ""  # their own, step 3
    final: str = ""  # from the GM, step 7
    published_blinds: list[str] = field(default_factory=list)
    published_format: str = ""
    n_powers: int = 7

    def make_blind(self, length: int) -> str:
        self.blind = bl.random_digits(DrawStream(b"player " + self.name.encode()), length, "player-blind")
        return add(self.first, self.blind)  # what goes to the third party

    def powers_seen(self) -> set[int]:
        """Every power this player can decode from anything they hold."""
        fmt = Format.parse(self.published_format, self.n_powers)
        seen = set()
        for number in (self.first, add(self.first, self.blind), self.final):
            seen |= {k for _, k in bl.reveal(number, self.published_blinds, fmt)}
        return seen


@dataclass
class Run:
    gm: GMState
    tp: ThirdPartyState
    players: dict[str, Player]
    first: dict[str, str]
    final: dict[str, str]
    blinds: list[str]
    record: bl.Record | None
    sent_list: list[str]


def run_protocol(players=PLAYERS, powers=POWERS, seed=b"gm seed", *, corrupt_list=None, receipts=False,
                 length=8) -> Run:
    gm_stream = DrawStream(seed)
    gm, first = bl.start(players, powers, gm_stream, third_party="referee@example.org", length=length,
                         receipts=receipts)
    assert set(first) == set(players)
    assert len(set(first.values())) == len(players)
    who = {p: Player(p, first=first[p], n_powers=len(powers)) for p in players}
    tp = ThirdPartyState.new(players, digits=length, gm="judge@example.org")
    for p in reversed(players):
        tp = tp.receive(p, who[p].make_blind(length))
    tp, lst = tp.shuffle(DrawStream(b"third party seed"))
    sent = list(lst)
    if corrupt_list:
        lst = corrupt_list(gm, list(lst))
    gm = bl.third_party_list(gm, lst)
    tp = tp.confirm_list()
    for p in players:
        tp = tp.receive_blind(p, who[p].blind)
    assert tp.has_all_blinds
    gm = bl.blinds_collected(gm)
    gm, final = bl.unblind(gm, gm_stream)
    assert set(final) == set(players)
    for p, m in final.items():
        who[p].final = m
    if receipts:
        for p in players:
            gm, ok = bl.receipt(gm, p, final[p])
            assert ok
    pattern = bl.public_format(gm)
    tp = tp.final_messages_sent()
    blinds = tp.publish()
    for p in who.values():
        p.published_blinds, p.published_format = list(blinds), pattern
    gm, record = bl.blinds_published(gm, blinds)
    return Run(gm, tp, who, first, final, blinds, record, sent)


def test_full_protocol_seven_players():
    run = run_protocol()
    record = run.record
    assert record.ok and run.gm.phase == bl.DONE and not record.corrections
    fmt = run.gm.fmt
    decoded = {}
    for name, player in run.players.items():
        found = bl.reveal(player.final, player.published_blinds, Format.parse(player.published_format, 7))
        assert len(found) == 1, name
        decoded[name] = POWERS[found[0][1]]
        # the player's whole view shows their own power and no other
        assert player.powers_seen() == {found[0][1]}
    assert sorted(decoded.values()) == sorted(POWERS)  # all distinct, every power given
    assert decoded == record.powers
    assert [p for p, _ in record.assignment] == sorted(PLAYERS, key=str.casefold)
    # the GM's record: every final message decodes with one blind, each blind used once
    assert sorted(d.blind for d in record.decodings) == list(range(7))
    # the blinds are published in numerical order, with no names
    assert run.blinds == sorted(p.blind for p in run.players.values())
    assert all(fmt.decode(sub(d.message, run.blinds[d.blind])) == d.power for d in record.decodings)


def test_the_final_assignment_is_not_the_first_one():
    """The step-2 messages decide nothing: the GM's step-7 draw does."""
    seen = set()
    for seed in (b"a", b"b", b"c", b"d"):
        run = run_protocol(seed=seed)
        first_power = {p: run.gm.fmt.decode(sub(m, run.gm.gm_blind)) for p, m in run.first.items()}
        seen.add(all(POWERS[first_power[p]] == run.record.powers[p] for p in PLAYERS))
    assert seen == {False}


def test_protocol_is_deterministic_from_the_seeds_and_recorded():
    a, b = run_protocol(seed=b"same"), run_protocol(seed=b"same")
    assert a.gm == b.gm and a.record == b.record
    c = run_protocol(seed=b"other")
    assert c.gm.gm_blind != a.gm.gm_blind
    stream = DrawStream(b"x")
    bl.start(PLAYERS, POWERS, stream)
    whats = [d["what"] for d in stream.records()]
    assert whats[0] == bl.WHAT_POSITION and whats.count(bl.WHAT_VERIFICATION) == 7
    assert whats.count(bl.WHAT_GM_BLIND) == 8 and whats.count(bl.WHAT_FIRST) == 6  # the last has one option


def test_twelve_powers_use_two_power_digits():
    powers = [f"Power{chr(65 + i)}" for i in range(12)]
    players = [f"p{i:02}" for i in range(12)]
    run = run_protocol(players, powers, seed=b"twelve")
    assert run.gm.fmt.width == 2 and run.record.ok
    assert sorted(run.record.powers.values()) == sorted(powers)
    for p in run.players.values():
        assert p.powers_seen() == {powers.index(run.record.powers[p.name])}


def test_fewer_players_than_powers():
    run = run_protocol(PLAYERS[:5], POWERS, seed=b"five")
    assert len(run.gm.in_play) == 5 and run.record.ok
    assert set(run.record.powers.values()) == {POWERS[k] for k in run.gm.in_play}
    with pytest.raises(ProtocolError, match="8 players for 7 powers"):
        bl.start(PLAYERS + ["hank"], POWERS, DrawStream(b"s"))


def test_states_serialise_to_json_and_back():
    run = run_protocol(receipts=True)
    for state in (run.gm, run.tp):
        text = json.dumps(state.as_dict())
        assert type(state).from_dict(json.loads(text)) == state
    gm, _ = bl.start(PLAYERS, POWERS, DrawStream(b"s"))
    assert GMState.from_dict(json.loads(json.dumps(gm.as_dict()))) == gm


# --------------------------------------------------------------------------
# Corruption


def _verification_position(fmt: Format) -> int:
    return next(i for i, c in enumerate(fmt.pattern) if c != "x")


def _bump(message: str, position: int, by: int = 1) -> str:
    return message[:position] + str((int(message[position]) + by) % 10) + message[position + 1:]


def test_one_corrupted_message_is_flagged_and_corrected():
    def corrupt(gm, lst):
        lst[3] = _bump(lst[3], _verification_position(gm.fmt))
        return lst

    clean = run_protocol(seed=b"corrupt one")
    run = run_protocol(seed=b"corrupt one", corrupt_list=corrupt)
    record = run.record
    assert record.ok and run.gm.phase == bl.DONE
    assert len(record.corrections) == 1
    fix = record.corrections[0]
    victim = fix.player
    # the player whose message was corrupted cannot decode it...
    player = run.players[victim]
    assert bl.reveal(player.final, player.published_blinds, Format.parse(player.published_format, 7)) == []
    # ...and the GM gives them the one power left over, which is what the clean run gives
    assert fix.power == clean.record.powers[victim] == record.powers[victim]
    assert record.powers == clean.record.powers
    assert sorted(record.powers.values()) == sorted(POWERS)
    assert [d.corrected for d in record.decodings].count(True) == 1
    verdict = bl.check_claim(run.gm, victim, player.final)
    assert verdict.accepted and verdict.power == fix.power and "left over" in verdict.explanation


def test_power_digit_corrupted_out_of_range_is_corrected():
    def corrupt(gm, lst):
        # make entry 0 decode to power 9 (no such power in a 7-power game)
        d = next(d for d in clean.record.decodings if d.message == sub(lst[0], gm.gm_blind))
        return [_bump(lst[0], gm.fmt.positions[0], 9 - d.power)] + lst[1:]

    clean = run_protocol(seed=b"power digit")
    run = run_protocol(seed=b"power digit", corrupt_list=corrupt)
    assert run.record.ok and len(run.record.corrections) == 1
    assert run.record.powers == clean.record.powers


def test_two_corrupted_messages_are_traced_by_the_third_party():
    def corrupt(gm, lst):
        pos = _verification_position(gm.fmt)
        return [_bump(lst[0], pos), _bump(lst[1], pos, 3)] + lst[2:]

    clean = run_protocol(seed=b"corrupt two")
    run = run_protocol(seed=b"corrupt two", corrupt_list=corrupt)
    assert run.gm.phase == bl.AWAITING_TRACE and not run.record.ok
    assert run.record.assignment == ()
    assert "2 messages decode with no blind" in run.record.rerun_reason
    assert "trace" in awaiting(run.gm) and "RERUN" in awaiting(run.gm)
    with pytest.raises(ProtocolError, match="only be checked once"):
        bl.check_claim(run.gm, "alice", run.final["alice"])
    # The third party says who sent each entry: every power follows from
    # the step-2 messages, the same as without the damage.
    senders = run.tp.trace()
    with pytest.raises(ProtocolError, match=f"names {senders[0]} twice"):
        bl.traced(run.gm, [senders[0]] * len(senders))
    with pytest.raises(ProtocolError, match="no player"):
        bl.traced(run.gm, ["mallory", *senders[1:]])
    gm, record = bl.traced(run.gm, senders)
    assert gm.phase == bl.DONE and record.ok
    assert record.powers == clean.record.powers
    assert len(record.corrections) == 2 and all(c.reason.startswith("traced") for c in record.corrections)


def test_the_trace_comes_only_after_the_final_messages():
    tp = ThirdPartyState.new(PLAYERS)
    for i, p in enumerate(PLAYERS):
        tp = tp.receive(p, str(10_000_000 + i))
    tp, _ = tp.shuffle(DrawStream(b"x"))
    with pytest.raises(ProtocolError, match="only after"):
        tp.trace()


def test_power_digit_corrupted_into_another_power_asks_for_a_trace():
    def corrupt(gm, lst):
        d = next(d for d in clean.record.decodings if d.message == sub(lst[0], gm.gm_blind))
        other = (d.power + 1) % 7  # now two messages decode to `other`
        return [_bump(lst[0], gm.fmt.positions[0], other - d.power)] + lst[1:]

    clean = run_protocol(seed=b"duplicate")
    run = run_protocol(seed=b"duplicate", corrupt_list=corrupt)
    assert run.gm.phase == bl.AWAITING_TRACE
    assert "decode to the same power" in run.record.rerun_reason
    gm, record = bl.traced(run.gm, run.tp.trace())
    assert record.powers == clean.record.powers


def test_false_corruption_claim_is_refused():
    run = run_protocol(seed=b"claims")
    name = "carol"
    verdict = bl.check_claim(run.gm, name, run.final[name])
    assert not verdict.accepted
    assert verdict.power == run.record.powers[name]
    assert "refused" in verdict.explanation
    # a copy damaged on the way to the player: the claim holds, but the power stays the record's
    damaged = _bump(run.final[name], 0)
    verdict = bl.check_claim(run.gm, name, damaged)
    assert verdict.accepted and verdict.power == run.record.powers[name]
    assert verdict.sent == run.final[name] and verdict.claimed == damaged
    # claiming another player's message gets you nothing either
    verdict = bl.check_claim(run.gm, name, run.final["dave"])
    assert verdict.power == run.record.powers[name]
    with pytest.raises(ProtocolError, match="not a player"):
        bl.check_claim(run.gm, "mallory", run.final[name])


def test_receipts_before_the_format_is_public():
    gm_stream = DrawStream(b"receipts")
    gm, first = bl.start(PLAYERS, POWERS, gm_stream, receipts=True)
    gm = bl.third_party_list(gm, [add(m, "1" * 8) for m in first.values()])
    gm = bl.blinds_collected(gm)
    gm, final = bl.unblind(gm, gm_stream)
    assert gm.phase == bl.AWAITING_RECEIPTS
    with pytest.raises(ProtocolError, match="Waiting for alice, Bob, carol"):
        bl.public_format(gm)
    gm, ok = bl.receipt(gm, "alice", _bump(final["alice"], 2))
    assert not ok and bl.message_for(gm, "alice") == final["alice"]
    for p in PLAYERS[:-1]:
        gm, ok = bl.receipt(gm, p, final[p])
        assert ok
    assert awaiting(gm) == "Waiting for gina to confirm receipt of their final message."
    gm, ok = bl.receipt(gm, "gina", final["gina"])
    assert ok and bl.public_format(gm) == gm.fmt.pattern
    gm, record = bl.blinds_published(gm, ["1" * 8] * 7)
    assert record.ok and sorted(record.powers.values()) == sorted(POWERS)


# --------------------------------------------------------------------------
# Missing parties, refusals, and nothing leaked


def _secrets(gm: GMState, *more: str) -> list[str]:
    verification = gm.fmt.pattern.replace("x", "")
    return [gm.gm_blind, gm.fmt.pattern, verification, *(m for _, m in gm.first), *gm.blinded_list,
            *(m for _, m in gm.final), *more]


def _no_secret(text: str, secrets: list[str]) -> None:
    for s in secrets:
        assert s not in text, (s, text)


def test_missing_player_stalls_the_third_party():
    gm_stream = DrawStream(b"missing")
    gm, first = bl.start(PLAYERS, POWERS, gm_stream, third_party="referee@example.org")
    tp = ThirdPartyState.new(PLAYERS, gm="judge@example.org")
    blinds = {p: f"{i}" * 8 for i, p in enumerate(PLAYERS)}
    sent = {}
    for p in PLAYERS:
        if p not in ("dave", "alice"):
            sent[p] = add(first[p], blinds[p])
            tp = tp.receive(p, sent[p])
    secrets = _secrets(gm, *blinds.values(), *sent.values())
    assert awaiting(tp) == ("Waiting for the blinded message of alice and dave (each player adds their own "
                            "blind to the message the GM sent them and sends the result to the third party).")
    with pytest.raises(ProtocolError) as err:
        tp.shuffle(DrawStream(b"tp"))
    assert "alice and dave" in str(err.value)
    _no_secret(str(err.value), secrets)
    # the GM waits for the third party, and refuses to go on without it
    text = awaiting(gm)
    assert "referee@example.org" in text
    _no_secret(text, secrets)
    for step in (lambda: bl.unblind(gm, gm_stream), lambda: bl.blinds_collected(gm),
                 lambda: bl.public_format(gm), lambda: bl.blinds_published(gm, list(blinds.values())),
                 lambda: bl.check_claim(gm, "alice", "12345678")):
        with pytest.raises(ProtocolError) as err:
            step()
        assert "referee@example.org" in str(err.value)
        _no_secret(str(err.value), secrets)


def test_missing_blind_stalls_publication_and_the_final_messages():
    gm_stream = DrawStream(b"missing blind")
    gm, first = bl.start(PLAYERS, POWERS, gm_stream, third_party="referee@example.org")
    tp = ThirdPartyState.new(PLAYERS, gm="judge@example.org")
    blinds = {p: bl.random_digits(DrawStream(p.encode()), 8, "b") for p in PLAYERS}
    for p in PLAYERS:
        tp = tp.receive(p, add(first[p], blinds[p]))
    tp, lst = tp.shuffle(DrawStream(b"tp"))
    assert tp.shuffle(DrawStream(b"another"))[1] == lst  # the list is made once
    assert awaiting(tp) == "Waiting for judge@example.org to confirm receipt of the list of blinded messages."
    gm = bl.third_party_list(gm, lst)
    tp = tp.confirm_list()
    for p in PLAYERS:
        if p != "Erin":
            tp = tp.receive_blind(p, blinds[p])
    secrets = _secrets(gm, *blinds.values())
    assert awaiting(tp) == "Waiting for the blinding factor of Erin."
    assert not tp.has_all_blinds
    for step in (tp.publish, tp.final_messages_sent):
        with pytest.raises(ProtocolError, match="Erin") as err:
            step()
        _no_secret(str(err.value), secrets)
    # the GM does not send the final messages while the third party lacks a blind
    assert awaiting(gm) == "Waiting for referee@example.org to confirm that it holds every player's blinding factor."
    with pytest.raises(ProtocolError, match="has not confirmed") as err:
        bl.unblind(gm, gm_stream)
    _no_secret(str(err.value), secrets)
    # with every blind in, the third party still waits for the GM's final messages
    tp = tp.receive_blind("Erin", blinds["Erin"])
    assert awaiting(tp) == "Waiting for judge@example.org to send every player their final message."
    with pytest.raises(ProtocolError, match="has not sent the final messages"):
        tp.publish()
    gm = bl.blinds_collected(gm)
    gm, _ = bl.unblind(gm, gm_stream)
    assert awaiting(gm) == "Waiting for referee@example.org to publish the players' blinding factors."
    tp = tp.final_messages_sent()
    assert tp.publish() == sorted(blinds.values())
    gm, record = bl.blinds_published(gm, tp.publish())
    assert record.ok and awaiting(gm) == "Nothing: every player's power is known."


def test_third_party_list_refusals_name_positions_not_digits():
    gm, first = bl.start(PLAYERS, POWERS, DrawStream(b"list"))
    good = [add(m, "3" * 8) for m in first.values()]
    cases = [(good[:6], "has 6 message"), (good + good[:1], "has 8 message"),
             (good[:6] + [good[2]], "messages 3 and 7 of the list are the same"),
             (good[:6] + ["1234567x"], "message 7 of the list is not a number"),
             (good[:6] + ["1234567"], "message 7 of the list has 7 digits"), ("12345678", "not one text")]
    for lst, words in cases:
        with pytest.raises(ProtocolError, match=words) as err:
            bl.third_party_list(gm, lst)
        _no_secret(str(err.value), _secrets(gm, *good))
    gm = bl.third_party_list(gm, good)
    with pytest.raises(ProtocolError, match="cannot take the third party's list now"):
        bl.third_party_list(gm, good)


def test_third_party_refusals():
    tp = ThirdPartyState.new(PLAYERS)
    with pytest.raises(ProtocolError, match="mallory is not a player"):
        tp.receive("mallory", "12345678")
    with pytest.raises(ProtocolError, match="your blinded message has 4 digits"):
        tp.receive("alice", "1234")
    tp = tp.receive("alice", "12345678")
    assert tp.receive("alice", "12345678") == tp  # the same mail twice is harmless
    # A mistyped message is mended (the shell checked the player's token)
    # until the list goes to the GM.
    tp = tp.receive("alice", "87654321")
    assert dict(tp.messages)["alice"] == "87654321"
    with pytest.raises(ProtocolError, match="no list"):
        tp.confirm_list()
    for i, p in enumerate(PLAYERS[1:]):
        tp = tp.receive(p, str(20_000_000 + i))
    tp, _ = tp.shuffle(DrawStream(b"refusals"))
    with pytest.raises(ProtocolError, match="cannot change any more"):
        tp.receive("alice", "12345678")
    tp = tp.confirm_list()
    tp = tp.receive_blind("Bob", "11112222")
    tp = tp.receive_blind("Bob", "11112223")  # mended: not every blind is in yet
    for i, p in enumerate(PLAYERS):
        if p != "Bob":
            tp = tp.receive_blind(p, str(30_000_000 + i))
    assert tp.has_all_blinds
    with pytest.raises(ProtocolError, match="cannot change any more"):
        tp.receive_blind("Bob", "11112224")
    with pytest.raises(ProtocolError, match="player named twice: Alice, alice"):
        ThirdPartyState.new(["alice", "Alice"])


def test_blinds_published_checks_the_list():
    run_gm_stream = DrawStream(b"checks")
    gm, first = bl.start(PLAYERS, POWERS, run_gm_stream)
    gm = bl.blinds_collected(bl.third_party_list(gm, list(first.values())))
    gm, _ = bl.unblind(gm, run_gm_stream)
    with pytest.raises(ProtocolError, match="6 blind"):
        bl.blinds_published(gm, ["0" * 8] * 6)
    with pytest.raises(ProtocolError, match="blind 2 has 3 digits"):
        bl.blinds_published(gm, ["0" * 8, "000"] + ["0" * 8] * 5)


# --------------------------------------------------------------------------
# The players' commands


def invoke(*args: str):
    return CliRunner().invoke(blind, list(args))


def test_cli_add_and_sub_on_the_seed_example():
    assert invoke("add", "44560464", "54646487").output == "98106841\n"
    assert invoke("add", "98106841", "87446534").output == "75542375\n"
    assert invoke("sub", "75542375", "54646487").output == "21906998\n"
    assert invoke("sub", "21906998", "87446534").output == "44560464\n"
    bad = invoke("add", "123", "1234")
    assert bad.exit_code == 1 and "same number of digits" in bad.output
    bad = invoke("sub", "12x4", "1234")
    assert bad.exit_code == 1 and "only the digits 0-9" in bad.output


def test_cli_new_makes_random_digits():
    one, two = invoke("new"), invoke("new", "--digits", "12")
    assert one.exit_code == 0 and len(one.output.strip()) == 8 and one.output.strip().isdigit()
    assert len(two.output.strip()) == 12 and two.output.strip().isdigit()
    assert "os.urandom" in invoke("new", "--help").output
    values = [urandom_digits(10) for _ in range(50)]
    assert len(set(values)) == 50
    assert set("".join(values)) == set("0123456789")


def test_cli_reveal_seed_example():
    result = invoke("reveal", "21906998", "12345678", "55555555", "87446534", "90000001",
                    "--format", "4456x464")
    assert result.exit_code == 0, result.output
    assert result.output == "blind 3 (87446534) gives 44560464: power 0, Austria\n"
    # blinds pasted as one comma-separated list work too
    pasted = invoke("reveal", "21906998", "12345678, 55555555,87446534", "--format", "4456X464")
    assert pasted.output == "blind 3 (87446534) gives 44560464: power 0, Austria\n"


def test_cli_reveal_failures():
    none = invoke("reveal", "21906998", "12345678", "55555555", "--format", "4456x464")
    assert none.exit_code == 1 and "no blind turns 21906998" in none.output and "tell the GM" in none.output
    second = sub("21906998", "44561464")  # a blind that makes it England's message
    several = invoke("reveal", "21906998", "87446534", second, "--format", "4456x464")
    assert several.exit_code == 1
    assert "power 0, Austria" in several.output and "power 1, England" in several.output
    assert "Ask the GM" in several.output
    short = invoke("reveal", "2190699", "87446534", "--format", "4456x464")
    assert short.exit_code == 1 and "7 digits" in short.output
    fmt = invoke("reveal", "21906998", "87446534", "--format", "44560464")
    assert fmt.exit_code == 1 and "no x" in fmt.output
    assert invoke("reveal", "21906998", "--format", "4456x464").exit_code == 2  # no blinds at all


def test_cli_reveal_with_other_power_lists():
    custom = invoke("reveal", "21906998", "87446534", "--format", "4456x464", "--powers", "Rome,Carthage,Egypt")
    assert custom.output == "blind 1 (87446534) gives 44560464: power 0, Rome\n"
    twelve = ",".join(f"Power{chr(65 + i)}" for i in range(12))
    message = add("44110464", "87446534")
    out = invoke("reveal", message, "87446534", "--format", "44xx0464", "--powers", twelve)
    assert out.output == "blind 1 (87446534) gives 44110464: power 11, PowerL\n"
    std = invoke("reveal", "21906998", "87446534", "--format", "4456x464", "--powers", "standard")
    assert "Austria" in std.output
    unknown = invoke("reveal", "21906998", "87446534", "--format", "4456x464", "--powers", "nosuchvariant")
    assert unknown.exit_code == 1 and "unknown variant" in unknown.output


def test_cli_help_explains_the_protocol_to_players():
    text = invoke("--help").output
    for words in ("judge blind new", "third party", "reveal", "WRITE IT DOWN"):
        assert words in text
    assert "no carrying" in invoke("add", "--help").output
    assert "published" in invoke("reveal", "--help").output
