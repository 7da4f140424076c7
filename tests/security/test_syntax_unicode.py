"""Unicode in a command line: its white space is white space, other control
and format characters give a clean syntax error, never an exception (which
sent the whole mail to quarantine)."""

from __future__ import annotations

import sys

import pytest
from lark import UnexpectedCharacters

import judge.syntax.parser as parser_module
from judge.syntax import CommandSyntaxError, mask_secret, nodes, parse_line

SPACES = ["\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", *map(chr, range(0x2000, 0x200B)), "\u202f",
          "\u205f", "\u1680", "\ufeff", "\t", "\x0b", "\x0c"]


def _outcome(line: str):
    try:
        return parse_line(line, 2)
    except CommandSyntaxError as err:
        err.render()
        return err


@pytest.mark.parametrize("line", [
    "FOR x\x0c", "SIGNOFF\x0b", "PROCESS\u00a0", "HELP\u3000", "LIST ?g\u2028", "SIGNON ?a pw\u00a0",
    "SIGNON ?a pw\u00a0x", "FOR)\x0c ", "SIGNON SET 12 \x0b -", "FOR\u200b\u00a0?g", "FOR/ \u00a0 \\ ",
    "FOR? \u00a0? \x0c", "START\x00", "START \x1b[2J", "EJECT bob \x7f", "SIGNOFF\U000f0000", "\ud800",
])
def test_end_of_file_keyerror(line):
    """lark names the end of the line '<END-OF-FILE>' where a character no
    terminal matches follows a complete command; the error's description
    looked that name up and raised KeyError (315 of 120,000 fuzzed lines)."""
    assert isinstance(_outcome(line), (nodes.Node, CommandSyntaxError))


def test_end_of_file_is_described_as_the_end_of_the_line():
    """The same lark error, made by hand (normalising the spaces made it rare)."""
    err = UnexpectedCharacters("START!", 5, 1, 6, allowed={"<END-OF-FILE>"})
    out = parser_module._syntax_error(err, "START!", "START!", 1)
    assert (out.column, out.expected) == (6, "the end of the line")


@pytest.mark.parametrize("space", SPACES, ids=lambda ch: f"U+{ord(ch):04X}")
@pytest.mark.parametrize("line,kind,fields", [
    ("SIGNOFF{}", nodes.Signoff, {}),
    ("{}START{}", nodes.Start, {"column": 2}),
    ("SIGNON{}?spring{}pw{}", nodes.Signon, {"game": "spring", "password": "pw", "password_column": 16}),
    ("SET{}T{}140", nodes.SetParam, {"name": "T", "value": "140"}),
    ("Austria{}40,{}England{}30{}", nodes.Bids, {}),
    ("SET DEADLINE{}+48h{}", nodes.SetDeadline, {"text": "+48h"}),
    ("UNLOCK{}bob@example.org{}", nodes.Unlock, {"player": "bob@example.org"}),
])
def test_unicode_spaces_are_spaces(space, line, kind, fields):
    text = line.replace("{}", space)
    node = parse_line(text, 1)
    assert type(node) is kind, node
    for name, value in fields.items():
        assert getattr(node, name) == value
    if isinstance(node, nodes.Secret):
        assert mask_secret(text, node) == text[:15] + "****" + text[17:]


def test_every_python_space_is_a_space():
    """Every character str.isspace() knows (and the BOM) separates words."""
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()] + ["\ufeff"]
    for ch in spaces:
        assert isinstance(parse_line(f"{ch}EJECT{ch}bob{ch}", 1), nodes.Eject), f"U+{ord(ch):04X}"


@pytest.mark.parametrize("line,column,code", [
    ("START\x00", 6, "U+0000"),
    ("START \x1b[2J", 7, "U+001B"),
    ("Aus\u00adtria 40", 4, "U+00AD"),  # a soft hyphen
    ("SIGNON ?spring \u202epw", 16, "U+202E"),  # right-to-left override
    ("\u200eSIGNOFF", 1, "U+200E"),
    ("ENTROPY abc\x07", 12, "U+0007"),
])
def test_control_characters_give_a_clean_error(line, column, code):
    """Columns true to the line as sent; the character named, not shown."""
    err = _outcome(line)
    assert isinstance(err, CommandSyntaxError)
    assert err.column == column and code in err.hint
    assert len(err.text) == len(line) and err.text.isprintable()
    assert all(row.isprintable() for row in err.render().split("\n"))


def test_error_columns_stay_true_after_unicode_spaces():
    line = "\u3000\u00a0SIGNON\u2003?spring"
    err = _outcome(line)
    assert isinstance(err, CommandSyntaxError)
    assert err.column == len(line) + 1 and err.expected == "a password"
    assert err.text == "  SIGNON ?spring"
