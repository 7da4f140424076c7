"""blind-random's mail commands as the parser reads them
(grammars/blind_random.lark, which extends the shell's command grammar):
their nodes, the callbacks that build them, and the words the parser's
replies and masks need (judge/syntax/parser.py reads them through the
method's SYNTAX)."""

from __future__ import annotations

from dataclasses import dataclass

from judge.syntax import nodes
from judge.syntax.parser import HERE, secret, who


@dataclass(frozen=True)
class SetThirdParty(nodes.Node):
    address: str


@dataclass(frozen=True)
class Blinding(nodes.Node, nodes.Secret):
    """A message of the blinding protocol (docs/blinding.md). Its secret
    (`password`) is a player's one-time token or the round's key, masked in
    replies and logs like a password; empty in CLAIM, which has none."""

    kind: str  # blinded, blind, blindlist, blinds, thirdparty, listreceived, blindsin, finalsent, claim,
    #            waiting, trace, traced, closeround
    game: str
    values: tuple[str, ...]  # digit strings; player addresses (and a hash) for thirdparty, waiting, traced


@dataclass(frozen=True)
class Rerun(nodes.Node):
    """The master: run the blinding protocol again, as a fresh round."""


def _blinding(kind: str, secret_word: bool = True):
    def make(self, c):
        if not secret_word:  # CLAIM: no token
            return Blinding(**HERE, kind=kind, game=str(c[0])[1:], password="", password_column=0,
                            values=tuple(str(x) for x in c[1:]))
        return Blinding(**HERE, kind=kind, game=str(c[0])[1:], **secret(c[1]),
                        values=tuple(str(x) for x in c[2:] if x is not None))
    return make


class Transform:
    """The grammar's rules -> nodes, mixed into the shell's transformer
    (one method per rule, run inline by the LALR parser)."""

    def set_third_party(self, c):
        return SetThirdParty(**HERE, address=who(c[0]))

    blinded = _blinding("blinded")
    blind_factor = _blinding("blind")
    blind_list = _blinding("blindlist")
    blinds_published = _blinding("blinds")
    third_party_start = _blinding("thirdparty")
    list_received = _blinding("listreceived")
    blinds_in = _blinding("blindsin")
    final_sent = _blinding("finalsent")
    claim = _blinding("claim", secret_word=False)
    tp_waiting = _blinding("waiting")
    trace = _blinding("trace")
    traced = _blinding("traced")
    close_round = _blinding("closeround")

    def rerun(self, c):
        return Rerun(**HERE)


# What a person should read for the grammar's own terminals.
EXPECTED = {
    "PLAYER": "a player's address",
    "NUMBER": "a number of digits",
    "TOKEN": "the token the judge mailed you (a word of letters)",
    "HASH": "a SHA-256 hash (64 hexadecimal digits)",
}

# Its commands, as "a command (...)" lists them.
LISTED = ("RERUN",)

# The lines whose word after the game is a token or key: a secret, masked
# in replies and logs (when it is a word: BLINDED ?g 1234 holds no token).
SECRET_WORDS = ("blinded", "blind", "blindlist", "blinds", "thirdparty", "listreceived", "blindsin", "finalsent",
                "waiting", "trace", "traced", "closeround")

# Commands that one judge sends another: accepted even in auto-generated mail.
JUDGE_TO_JUDGE = {"thirdparty", "listreceived", "finalsent", "blindlist", "blindsin", "blinds", "waiting", "trace",
                  "traced", "closeround"}


def judge_to_judge(node: nodes.Node) -> bool:
    """Whether a parsed line is a message one judge sends another."""
    return isinstance(node, Blinding) and node.kind in JUDGE_TO_JUDGE
