"""Passwords in mail lines: masked in every reply, log and syntax error, read
from the line's first words in linear time (judge.syntax.mask_secret)."""

from __future__ import annotations

import time

import pytest

from judge.syntax import CommandSyntaxError, mask_secret, nodes, parse_line


def _best(f, reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        f()
        best = min(best, time.thread_time() - t)
    return best


def test_quadratic_signon_masking():
    """The old pattern ^\\s*signon\\s+\\S+\\s+(.+?)\\s*$ took 65 s on this line
    (quadratic in the run of spaces); masking now reads it in one pass."""
    for spaces in (10_000, 100_000):  # the short one first: the old code fails it in a second
        line = "SIGNON ?a b" + " " * spaces + "x"
        assert _best(lambda: mask_secret(line), reps=1) < 0.05
    assert mask_secret(line) == "SIGNON ?a " + "*" * 100_002
    with pytest.raises(CommandSyntaxError) as caught:
        # The grammar and the error path too: "x" names no variant, so the
        # line is a password of two words.
        parse_line(line, max_length=len(line), is_variant=lambda name: False)
    assert set(caught.value.text[10:]) <= {"*", ".", " "}
    assert _best(lambda: _refused(line)) < 0.05


def _refused(line: str) -> None:
    try:
        parse_line(line, max_length=len(line), is_variant=lambda name: False)
    except CommandSyntaxError:
        pass


# (line as sent, the password(s) it holds, the line with stars of the same length)
MISTYPED = [
    ("SET PASSWORD: MyN3wSecret", ["MyN3wSecret"], "SET PASSWORD: ***********"),
    ("SIGNON: ?spring pwa", ["pwa"], "SIGNON: ?spring ***"),
    ("CREATE: ?autumn AutumnGmPw", ["AutumnGmPw"], "CREATE: ?autumn **********"),
    ("signon ?a b   x", ["b   x"], "signon ?a *****"),
    ("Set Password = x y", ["x y"], "Set Password = ***"),
    ("SIGNON ?spring\tpw extra", ["pw", "extra"], "SIGNON ?spring\t********"),
    ("sEt pAsSwOrD,s3cr3t more", ["s3cr3t", "more"], "sEt pAsSwOrD,***********"),
    ("SET PASSWORD=s3cr3t more", ["s3cr3t", "more"], "SET PASSWORD=***********"),
    ("SETPASSWORD s3cr3t", ["s3cr3t"], "SETPASSWORD ******"),
    ("  Signon=Mspring gmSecret9 ", ["gmSecret9"], "  Signon=Mspring ********* "),
    ("SIGNON ?spring:pw9 x", ["pw9"], "SIGNON ?spring:*****"),
    ("SIGNON?spring pw9 x", ["pw9"], "SIGNON?spring *****"),
    ("SIGNON spring hunter2", ["hunter2"], "SIGNON spring *******"),
    ("SIGNON ¿spring hunter2", ["hunter2"], "SIGNON ¿spring *******"),
    ("1. SIGNON ?spring hunter2 please", ["hunter2"], "1. SIGNON ?spring **************"),
    ("CREATE ?autumn AutumnGmPw blind-auction standard extra", ["AutumnGmPw"],
     "CREATE ?autumn ********** blind-auction standard extra"),
    ("create ?autumn,AutumnGmPw x y z", ["AutumnGmPw"], "create ?autumn,********** x y z"),
    ("SIGNON ?spring\u00a0pw9\u3000x", ["pw9"], "SIGNON ?spring\u00a0*****"),
    ("SIGNON ?spring pw9\x00", ["pw9"], "SIGNON ?spring ****"),
]


@pytest.mark.parametrize("line,secrets,masked", MISTYPED)
def test_mistyped_set_password_is_masked(line, secrets, masked):
    """Every password position of SIGNON, CREATE and SET PASSWORD is masked,
    also when the line does not parse: keywords in any case, ':', '=' or ','
    glued to them, tabs and Unicode spaces, a password of several words."""
    assert mask_secret(line) == masked
    try:
        # A word after SIGNON's password that names no variant makes the
        # line a password of two words (refused, all masked).
        node = parse_line(line, 4, is_variant=lambda name: False)
    except CommandSyntaxError as caught:
        err = caught
    else:
        # "SIGNON spring hunter2" reads as nJudge's Xgame (power S of a game
        # "pring"): parsed, so the reply masks the password by its column.
        assert isinstance(node, nodes.Signon) and node.power == "S"
        for secret in secrets:
            assert secret not in mask_secret(line, node)
        return
    for secret in secrets:
        for part in (err.text, err.expected, err.hint, err.render(), str(err)):
            assert secret not in part, (secret, part)
    # stars of the same length: the caret stays under the right column
    assert len(err.text) == len(line.rstrip("\r\n"))


@pytest.mark.parametrize("line,password", [
    ("SIGNON ?spring hunter2", "hunter2"),
    ("signon Mspring hunter2", "hunter2"),
    ("CREATE ?spring hunter2 blind-auction", "hunter2"),
    ("set password hunter2", "hunter2"),
    ("SIGNON ?spring\u00a0hunter2\u3000", "hunter2"),
])
def test_parsed_password_is_masked_with_four_stars(line, password):
    """mailrunner quotes a parsed command as mask_secret(line, node)."""
    node = parse_line(line)
    assert isinstance(node, nodes.Secret) and node.password == password
    shown = mask_secret(line, node)
    assert password not in shown and "****" in shown


@pytest.mark.parametrize("line", [
    "SIGNON ?spring", "SIGNON", "SET PASSWORD", "SET DEADLINE +48h", "Austria 40", "SETTLE ?spring pw",
    "signonx ?spring pw", "ENTROPY signon ?a pw", "",
])
def test_lines_without_a_password_are_shown_as_sent(line):
    assert mask_secret(line) == line
