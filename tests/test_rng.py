"""judge.rng: the documented SHA-256 counter stream (docs/randomness.md).

    word(k)  = first 8 bytes, big-endian, of SHA-256(seed || k as 8-byte big-endian)
    below(n) = next word w; rejected if w >= 2**64 - (2**64 mod n); else w mod n
    choice   = options[below(len(options))]; one option: no draw at all
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import judge.rng as rng
from judge.rng import DrawStream, parse_seed, word

SPAN = 2**64
SEED = bytes.fromhex("00112233445566778899aabbccddeeff")


def own_word(seed: bytes, k: int) -> int:
    digest = hashlib.sha256(seed + k.to_bytes(8, "big")).digest()
    return int.from_bytes(digest[:8], "big")


def own_below(seed: bytes, counter: int, n: int) -> tuple[int, int, int, int]:
    """(value, counter of the accepted word, words rejected, next counter)."""
    limit = SPAN - SPAN % n
    rejected = 0
    while True:
        w = own_word(seed, counter)
        if w < limit:
            return w % n, counter, rejected, counter + 1
        rejected += 1
        counter += 1


# --------------------------------------------------------------------------
# Known answers
# --------------------------------------------------------------------------

# Computed once with hashlib and written down, so that a change of algorithm
# cannot go unnoticed even if it were made in both places.
KNOWN = [
    (SEED, 0, 0x532864BD1D794DC0),
    (SEED, 1, 0xF4144B0DBDFF25C1),
    (SEED, 2, 0xAEFEAE3A04C19CDE),
    (SEED, 3, 0xD1A3EA1B5D884164),
    (b"judge", 0, 0xB5DE031348E78259),
    (b"judge", 1, 0xFA88090B452B0491),
    (b"judge", 2, 0x8C0C3ED8EA47F913),
]


@pytest.mark.parametrize("seed, k, expected", KNOWN)
def test_known_answer_words(seed, k, expected):
    assert own_word(seed, k) == expected
    assert word(seed, k) == expected


def test_word_is_sha256_of_seed_and_8_byte_counter():
    seed = b"\x01\x02"
    message = b"\x01\x02" + b"\x00" * 7 + b"\x05"
    assert word(seed, 5) == int(hashlib.sha256(message).hexdigest()[:16], 16)
    big = 2**40 + 3
    assert word(seed, big) == int(hashlib.sha256(seed + bytes.fromhex("0000010000000003")).hexdigest()[:16], 16)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=64), st.integers(0, 2**64 - 1))
def test_word_matches_independent_implementation(seed, k):
    assert word(seed, k) == own_word(seed, k)


def test_worked_example_below_seven():
    """The numbers of docs/randomness.md's worked example."""
    s = DrawStream(SEED)
    assert [s.below(7) for _ in range(3)] == [(6, 0, 0), (5, 1, 0), (1, 2, 0)]
    assert s.counter == 3


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=32), st.lists(st.integers(1, 50), min_size=1, max_size=20))
def test_below_sequence_matches_independent_implementation(seed, ns):
    s = DrawStream(seed)
    counter = 0
    for n in ns:
        value, used, rejected, counter = own_below(seed, counter, n)
        assert s.below(n) == (value, used, rejected)
        assert s.counter == counter


# --------------------------------------------------------------------------
# Rejection sampling
# --------------------------------------------------------------------------

def find_seed(n: int, rejections: int) -> bytes:
    """A one-byte seed whose first `rejections` words are rejected for n and whose next is not."""
    limit = SPAN - SPAN % n
    for i in range(256):
        seed = bytes([i])
        words = [own_word(seed, k) for k in range(rejections + 1)]
        if all(w >= limit for w in words[:-1]) and words[-1] < limit:
            return seed
    raise AssertionError("no such seed among one-byte seeds")


@pytest.mark.parametrize("rejections", [1, 2])
def test_rejection_for_huge_n(rejections):
    n = 2**63 + 1
    limit = SPAN - SPAN % n
    assert limit == 2**63 + 1  # words of 2**63+1 and above are rejected: about half of them
    seed = find_seed(n, rejections)
    s = DrawStream(seed)
    value, used, rejected = s.below(n)
    assert rejected == rejections
    assert used == rejections
    assert s.counter == rejections + 1
    assert value == own_word(seed, rejections) % n
    # the stream goes on after the accepted word
    value, used, rejected, after = own_below(seed, rejections + 1, 10)
    assert s.below(10) == (value, used, rejected)
    assert s.counter == after


@pytest.mark.parametrize("n", [3, 7, 10, 2**63 + 1])
def test_rejection_bound_is_exact(monkeypatch, n):
    """w = limit is rejected, w = limit - 1 accepted (scripted words)."""
    limit = SPAN - SPAN % n
    words = {0: limit, 1: limit - 1}
    monkeypatch.setattr(rng, "word", lambda seed, counter: words[counter])
    s = DrawStream(b"x")
    assert s.below(n) == ((limit - 1) % n, 1, 1)
    assert s.counter == 2


def test_choice_records_rejected_words(monkeypatch):
    """A rejected word is recorded in the draw, and the counter of the accepted one."""
    scripted = {0: SPAN - 1, 1: 5}  # 2**64 - 1 is rejected for n = 3 (2**64 mod 3 = 1)
    monkeypatch.setattr(rng, "word", lambda seed, counter: scripted[counter])
    s = DrawStream(b"x")
    assert s.choice(["a", "b", "c"], what="thing", step=1) == "c"
    (d,) = s.records()
    assert d == {
        "what": "thing",
        "options": ["a", "b", "c"],
        "n": 3,
        "index": 2,
        "chosen": "c",
        "counter": 1,
        "rejected": 1,
        "context": {"step": 1},
    }
    assert s.counter == 2


def test_below_needs_positive_n():
    with pytest.raises(ValueError):
        DrawStream(b"x").below(0)


# --------------------------------------------------------------------------
# choice
# --------------------------------------------------------------------------

def test_choice_with_one_option_consumes_nothing():
    s = DrawStream(SEED)
    assert s.choice(["only"], what="power") == "only"
    assert s.counter == 0
    assert s.records() == []
    # the next real draw still uses word 0
    assert s.choice(list("abcdefg"), what="power") == "abcdefg"[own_word(SEED, 0) % 7]
    assert s.records()[0]["counter"] == 0


def test_choice_from_nothing_is_refused():
    with pytest.raises(ValueError):
        DrawStream(SEED).choice([], what="power")


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=32), st.lists(st.integers(1, 9), min_size=1, max_size=12))
def test_choice_is_options_at_below_len(seed, sizes):
    s = DrawStream(seed)
    counter = 0
    expected_records = []
    for k, n in enumerate(sizes):
        options = [f"o{k}.{i}" for i in range(n)]
        got = s.choice(options, what="x", k=k)
        if n == 1:
            assert got == options[0]
            continue
        index, used, rejected, counter = own_below(seed, counter, n)
        assert got == options[index]
        expected_records.append({
            "what": "x", "options": options, "n": n, "index": index, "chosen": options[index],
            "counter": used, "rejected": rejected, "context": {"k": k},
        })
    assert s.records() == expected_records
    assert s.counter == counter


def test_records_omit_empty_context():
    s = DrawStream(SEED)
    s.choice([1, 2], what="x")
    assert "context" not in s.records()[0]


def test_same_seed_same_draws():
    a, b = DrawStream(SEED), DrawStream(SEED)
    assert [a.choice(range(5), what="x") for _ in range(20)] == [b.choice(range(5), what="x") for _ in range(20)]
    assert a.records() == b.records()


def test_empty_seed_is_refused():
    with pytest.raises(ValueError):
        DrawStream(b"")


# --------------------------------------------------------------------------
# parse_seed / new_seed
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, expected",
    [
        ("00112233445566778899aabbccddeeff", SEED),
        ("0x00112233445566778899aabbccddeeff", SEED),
        ("0X00112233445566778899AABBCCDDEEFF", SEED),
        ("  00112233445566778899AaBbCcDdEeFf\n", SEED),
        ("ff", b"\xff"),
    ],
)
def test_parse_seed_accepts_hex(text, expected):
    assert parse_seed(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "0x", "xyz", "0xgg", "abc", "12 34 zz", "seed"])
def test_parse_seed_rejects_non_hex_and_empty(text):
    with pytest.raises(ValueError):
        parse_seed(text)


def test_new_seed_is_32_bytes_and_round_trips():
    seed = rng.new_seed()
    assert len(seed) == 32
    s = DrawStream(seed)
    assert parse_seed(s.seed_hex) == seed
    assert parse_seed("0x" + s.seed_hex) == seed


def test_replay_script_in_docs_gives_the_worked_example(capsys):
    """The standalone script of docs/randomness.md, run as a player would."""
    import re
    import sys

    doc = (Path(__file__).resolve().parent.parent / "docs" / "randomness.md").read_text(encoding="utf-8")
    (script,) = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert "import hashlib" in script and "judge" not in script
    argv = sys.argv
    try:
        sys.argv = ["replay.py", SEED.hex(), "7", "7", "7"]
        exec(compile(script, "replay.py", "exec"), {"__name__": "__main__"})
    finally:
        sys.argv = argv
    printed = capsys.readouterr().out.splitlines()
    s = DrawStream(SEED)
    expected = []
    for _ in range(3):
        index, counter, _rejected = s.below(7)
        expected.append(f"counter {counter}: word {word(SEED, counter):#018x} -> index {index} of 7")
    assert printed == expected
    for line in expected:
        assert line in doc
