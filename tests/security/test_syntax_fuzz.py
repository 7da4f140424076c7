"""Fuzzing the command parser over the grammar's own alphabet, Unicode spaces
and control characters: a line gives a node or a CommandSyntaxError, nothing
else (a KeyError of lark's once quarantined 315 of 120,000 fuzzed lines), its
error renders, and a password never shows in it.

Derandomized in CI (tests/conftest.py); hunt further with
HYPOTHESIS_PROFILE=deep pytest tests/security/test_syntax_fuzz.py."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from judge.methods import METHODS
from judge.syntax import CommandSyntaxError, mask_secret, nodes, parse_line

GRAMMAR = Path(__file__).resolve().parents[2] / "grammars" / "commands.lark"
# With the methods' grammars that extend it (blind-random's protocol lines).
GRAMMARS = [GRAMMAR, *(GRAMMAR.parent / METHODS[m].GRAMMAR for m in METHODS if METHODS[m].GRAMMAR)]
KEYWORDS = sorted({w for g in GRAMMARS for w in re.findall(r'"([A-Za-z]+)"i', g.read_text(encoding="utf-8"))})
SPACES = [" ", "\t", "\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", "\u2000", "\u2005", "\u200a", "\u202f",
          "\u205f", "\u1680", "\ufeff", "\x0b", "\x0c"]
CONTROLS = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x9b", "\u00ad", "\u200b", "\u200e", "\u202e", "\u2066",
            "\r", "\ue000", "\U000f0000", "\ufffd", "\ufff9"]
PUNCTUATION = list("+-.:=,;[]()*/?!@<>'\"\\#%&~") + ["T/U"]
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey", "North Africa", "St. Petersburg",
          "A", "E", "F", "G", "I", "R", "T", "Côte d'Ivoire"]
ADDRESSES = ["bob@example.org", "Olga <olga@example.net>", "ivy", "x@y", "<a@b.c>"]
GAMES = ["?spring", "?Spring-2026", "?a", "?x.y_z", "Mspring", "mautumn", "M", "?", "spring"]


def mixed_case(word: str, mask: int) -> str:
    return "".join(c.upper() if (mask >> i) & 1 else c.lower() for i, c in enumerate(word))


keyword = st.builds(mixed_case, st.sampled_from(KEYWORDS), st.integers(0, 2**16))
space = st.sampled_from(SPACES)
token = st.one_of(
    keyword, keyword, keyword,
    st.sampled_from(GAMES), st.sampled_from(POWERS), st.sampled_from(ADDRESSES), st.sampled_from(PUNCTUATION),
    st.sampled_from(["0", "1", "40", "-3", "+5", "4.5", "12.", "007", "999999", "1.2.3"]),
    st.sampled_from(CONTROLS), st.sampled_from(SPACES),
)
# Tokens run together or apart, white space of every kind between them.
line = st.lists(st.tuples(token, st.one_of(st.just(" "), st.just(""), space)), max_size=12).map(
    lambda parts: "".join(t + s for t, s in parts))


def check(text: str) -> nodes.Node | CommandSyntaxError:
    """The contract of parse_line; anything else raised fails the test."""
    try:
        node = parse_line(text, 5)
    except CommandSyntaxError as err:
        rendered = err.render()
        if len(err.text) <= 120:  # a longer line is shown as a window around the fault
            assert rendered.startswith(f"line 5: {err.text}\n")
        assert 1 <= err.column <= len(text) + 1
        assert len(err.text) == len(text.rstrip("\r\n")), "one character shown for one sent: carets stay true"
        assert err.expected
        assert all(row.isprintable() for row in rendered.split("\n"))
        return err
    assert isinstance(node, nodes.Node)
    return node


@settings(max_examples=2500, deadline=None)
@given(line)
def test_fuzzed_line_gives_a_node_or_a_syntax_error(text):
    check(text)


# A password line as people write them, right or wrong: the command in any
# case, with ':' '=' ',' glued or not, Unicode spaces, then anything at all.
PASSWORD = st.text("abcXYZ0189!@#$%^&*:;=,.?/-", min_size=4, max_size=12).map("Qz".__add__)
COMMAND = st.one_of(
    st.tuples(st.builds(mixed_case, st.sampled_from(["SIGNON", "CREATE"]), st.integers(0, 2**6)),
              st.sampled_from(["", ":", "=", ","]), space, st.sampled_from(GAMES)).map("".join),
    st.tuples(st.builds(mixed_case, st.just("SET"), st.integers(0, 7)), space,
              st.builds(mixed_case, st.just("PASSWORD"), st.integers(0, 2**8)),
              st.sampled_from(["", ":", "=", ","])).map("".join),
)


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(["", " ", "\t", "\ufeff", "  "]), COMMAND, space, PASSWORD, line)
def test_fuzzed_password_line_never_shows_its_password(lead, command, sep, password, tail):
    text = lead + command + sep + password + tail
    out = check(text)
    if isinstance(out, CommandSyntaxError):
        for part in (out.text, out.expected, out.hint, out.render()):
            assert password not in part
    else:
        assert isinstance(out, nodes.Secret), out
        assert password not in mask_secret(text, out)
