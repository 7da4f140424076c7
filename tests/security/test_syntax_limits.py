"""No line may cost more than linear time: a length limit before anything
reads the line, and a parser and a masking that are linear below it."""

from __future__ import annotations

import time

import pytest

import judge.syntax.parser as parser_module
from judge.syntax import CommandSyntaxError, mask_secret, parse_line
from judge.syntax.parser import MAX_LINE_LENGTH
from judge.syntax.preference import ListSyntaxError, parse_list


def _cost(f, line: str, reps: int = 5) -> float:
    """The best of several runs of this thread's CPU time (the least
    disturbed by the machine: the wall clock of a shared machine measures
    its neighbours)."""
    best = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        try:
            f(line)
        except (CommandSyntaxError, ListSyntaxError):
            pass
        best = min(best, time.thread_time() - t)
    return best


def _parse_unlimited(line: str):
    return parse_line(line, 1, max_length=10**9)


def test_overlong_line_refused_before_regex(monkeypatch):
    """A 10 MB line is refused at once, before the grammar (or any regex)
    sees it, with its length, the limit and what to do; the error shows a
    short, masked piece of it."""
    def no_grammar():
        raise AssertionError("the grammar read a line that is too long")

    monkeypatch.setattr(parser_module, "_parser", no_grammar)
    line = "SIGNON ?spring hunter2" + " " * 10_000_000 + "x"
    t = time.thread_time()
    with pytest.raises(CommandSyntaxError) as caught:
        parse_line(line, 7)
    assert time.thread_time() - t < 0.5
    err = caught.value
    assert err.line == 7 and err.column == 1
    assert f"{len(line)} characters" in err.hint and f"at most {MAX_LINE_LENGTH}" in err.hint
    assert "one command per line" in err.hint
    assert str(MAX_LINE_LENGTH) in err.expected
    assert "hunter2" not in err.text + err.hint + err.expected + err.render()
    assert err.text.startswith("SIGNON ?spring *******") and len(err.text) < 100
    assert all(len(row) < 200 for row in err.render().split("\n"))


def test_overlong_line_limit_is_a_parameter():
    line = "START" + " " * 200
    assert parse_line(line).__class__.__name__ == "Start"
    with pytest.raises(CommandSyntaxError) as caught:
        parse_line(line, max_length=100)
    assert "205 characters" in caught.value.hint and "at most 100" in caught.value.hint
    assert parse_line(line + "\r\n", max_length=205).__class__.__name__ == "Start"  # the newline is no part


# The worst lines we could build for the grammar (lark's lexer and LALR
# parser), the error path and the masking: long runs that regexes scan and
# give back, tokens that several terminals match, long lists of tokens.
WORST = {
    "spaces in a password": lambda n: "SIGNON ?a b" + " " * n + "x",
    "spaces in a new password": lambda n: "SET PASSWORD a" + " " * n + "x",
    "no-break spaces": lambda n: "SIGNON ?a b" + "\u00a0" * n + "x",
    "spaces, then a word": lambda n: " " * n + "x",
    "tabs, then a command": lambda n: "\t" * n + "START x",
    "question marks": lambda n: "?" * n,
    "a game of question marks": lambda n: "SIGNON " + "?" * n,
    "digits": lambda n: "1" * n,
    "digits with dots": lambda n: "A 1" + "." * n,
    "one long word": lambda n: "a" * n + "!",
    "many words": lambda n: "a " * (n // 2) + "!",
    "many words and a number": lambda n: "a " * (n // 2) + "40",
    "many bids": lambda n: "A 1," * (n // 4) + "x",
    "alternating separators": lambda n: ":=,;" * (n // 4),
    "nested brackets": lambda n: "SET PREFERENCE " + "[" * (n // 2) + "]" * (n // 2),
    "many players": lambda n: "TRACED ?a KEY " + "b " * (n // 2) + "?",
    "many numbers": lambda n: "BLINDLIST ?a KEY " + "1 " * (n // 2) + "x",
    "create, many names": lambda n: "CREATE ?a b " + "c " * (n // 2),
    "a control character at the end": lambda n: "SIGNON ?a b" + " " * n + "\x00",
    "keywords": lambda n: "SIGNON SET PASSWORD CREATE " * (n // 27),
}
SMALL, LARGE = 4000, 16000  # 4x the length: linear code costs 4x, quadratic 16x


def _linear(f, make) -> None:
    small, large = _cost(f, make(SMALL)), _cost(f, make(LARGE))
    # A generous bound (8, and 2 ms of noise) that linear code meets on a
    # busy machine and quadratic code (16x) cannot.
    assert large < 8 * small + 0.002, f"{small * 1e3:.2f} ms -> {large * 1e3:.2f} ms for 4x the length"


@pytest.mark.parametrize("name", WORST)
def test_parser_is_linear(name):
    _linear(_parse_unlimited, WORST[name])


@pytest.mark.parametrize("name", WORST)
def test_masking_is_linear(name):
    _linear(mask_secret, WORST[name])


@pytest.mark.parametrize("make", [
    lambda n: "[" * n, lambda n: "[a" + "]" * n, lambda n: "[a](b)" * (n // 6), lambda n: "a," * (n // 2) + "[",
    lambda n: "(" + "a " * (n // 2), lambda n: "*" * n,
], ids=["opening", "closing", "groups", "words, then an open bracket", "an open group of words", "stars"])
def test_preference_list_parser_is_linear(make):
    _linear(parse_list, make)


@pytest.mark.parametrize("name", WORST)
def test_line_of_exactly_max_length(name):
    """At the limit the line is read (not refused for its length), fast."""
    line = (WORST[name](MAX_LINE_LENGTH) + " " * MAX_LINE_LENGTH)[:MAX_LINE_LENGTH]
    assert len(line) == MAX_LINE_LENGTH
    try:
        parse_line(line)
    except CommandSyntaxError as err:
        assert "characters long" not in err.hint
    assert _cost(parse_line, line) < 0.05
