"""Parse one line of a mail into a command (LALR, grammar loaded once)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from lark import Lark, Token, Transformer, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from judge.resources import data_dir
from judge.syntax import nodes
from judge.syntax.errors import CommandSyntaxError

# What a person should read for each terminal lark may expect next.
_EXPECTED = {
    "GAME": "a game name starting with ? (like ?spring)",
    "TARGET": "?game to play, or Mgame as the game's master",
    "PASSWORD": "a password",
    "PLAYER": "a player's address",
    "NAME": "a name",
    "REST": "a date and time (like 2026-12-01 18:00 UTC) or a delay (like +48h)",
    "NEW_PLAYER": "the new player's address",
    "PREF_LIST": "a preference list (like E[FGR][TAI])",
    "COUNT": "a number of players",
    "ENTROPY_TEXT": "any text",
    "NUMBER": "a number of digits",
    "AMOUNT": "a number of points",
    "PARAM_VALUE": "a whole number (or T/U for D)",
    "WORD": "a power's name",
    "$END": "the end of the line",
}
_COMMANDS = "CREATE, SIGNON, SET, SIGNOFF, START, PROCESS, EJECT, UNLOCK, REPLACE, NO PREFERENCE, FOR, ENTROPY, LIST, HELP"


@cache
def _parser() -> Lark:
    text = (data_dir("grammars") / "commands.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", maybe_placeholders=True, transformer=_ToNodes())


def _describe(expected: set[str]) -> str:
    names = []
    keywords = []
    for term in sorted(expected):
        if term in _EXPECTED:
            names.append(_EXPECTED[term])
        else:
            pattern = _parser().get_terminal(term).pattern
            value = getattr(pattern, "value", term)
            keywords.append(value.upper() if value.isalpha() else f"'{value}'")
    if "WORD" in expected and len(keywords) > 5:
        return f"a command ({_COMMANDS}) or a bid like 'Austria 40'"
    if keywords:
        names.append("one of " + ", ".join(sorted(set(keywords))) if len(keywords) > 1 else keywords[0])
    return " or ".join(names) if names else "something else"


class _ToNodes(Transformer):
    """Rules -> nodes, run inline by the LALR parser (no parse tree is built).

    Line and column of a command are filled in by parse_line, which knows the
    line; the columns of passwords and bids come from their tokens."""

    def start(self, c):
        return c[0]

    def set_cmd(self, c):
        return c[0]

    def create(self, c):
        game, password, method, variant = c
        return nodes.Create(**_HERE, game=str(game)[1:], **_secret(password),
                            method=_opt(method), variant=_opt(variant))

    def signon(self, c):
        target, password = c
        t = str(target)
        if t.startswith("?"):
            return nodes.Signon(**_HERE, game=t[1:], **_secret(password), master=False)
        if t[0] in "mM":
            return nodes.Signon(**_HERE, game=t[1:], **_secret(password), master=True)
        raise _Semantic(target.column, "?game to play, or Mgame as the game's master",
                        f"'{t}' starts with neither ? nor M: write SIGNON ?{t} yourpassword to play.")

    def signoff(self, c):
        return nodes.Signoff(**_HERE)

    def set_password(self, c):
        return nodes.SetPassword(**_HERE, **_secret(c[0]))

    def set_deadline(self, c):
        return nodes.SetDeadline(**_HERE, text=str(c[0]).strip())

    def param(self, c):
        return str(c[0])[0].upper()

    def set_param(self, c):
        return nodes.SetParam(**_HERE, name=c[0], value=str(c[1]).upper())

    def set_variant(self, c):
        return nodes.SetVariant(**_HERE, name=str(c[0]))

    def set_method(self, c):
        return nodes.SetMethod(**_HERE, name=str(c[0]))

    def set_preference(self, c):
        tok = c[0]
        if tok is None:
            return nodes.SetPreference(**_HERE, text="", text_column=0)
        return nodes.SetPreference(**_HERE, text=str(tok).rstrip(), text_column=tok.column)

    def set_mode(self, c):
        return nodes.SetPrefMode(**_HERE, mode={"PRFLIST": "list", "PRFBOTH": "both",
                                                "PRFRAND": "random"}[str(c[0]).upper()])

    def set_players(self, c):
        return nodes.SetPlayers(**_HERE, count=int(c[0]))

    def start_game(self, c):
        return nodes.Start(**_HERE)

    def process(self, c):
        return nodes.Process(**_HERE)

    def eject(self, c):
        return nodes.Eject(**_HERE, player=str(c[0]))

    def unlock(self, c):
        return nodes.Unlock(**_HERE, player=str(c[0]))

    def replace(self, c):
        player, rest = c
        words = str(rest).split(None, 1)
        if words[0].casefold() in ("with", "by"):
            words = words[1:]
        if not words:
            raise _Semantic(rest.column + len(str(rest)), "the new player's address",
                            f"Write REPLACE {player} new.player@example.com")
        return nodes.Replace(**_HERE, player=str(player), new_player=words[0] if len(words) == 1
                             else " ".join(words))

    def no_preference(self, c):
        return nodes.NoPreference(**_HERE, player=_opt(c[-1] if c else None))

    def list_game(self, c):
        game = _opt(c[0] if c else None)
        return nodes.ListGame(**_HERE, game=game[1:] if game else None)

    def set_third_party(self, c):
        return nodes.SetThirdParty(**_HERE, address=str(c[0]))

    def _blinding(kind):
        def make(self, c):
            return nodes.Blinding(**_HERE, kind=kind, game=str(c[0])[1:], values=tuple(str(x) for x in c[1:]))
        return make

    blinded = _blinding("blinded")
    blind_factor = _blinding("blind")
    blind_list = _blinding("blindlist")
    blinds_published = _blinding("blinds")
    third_party_start = _blinding("thirdparty")
    list_received = _blinding("listreceived")
    blinds_in = _blinding("blindsin")
    final_sent = _blinding("finalsent")
    claim = _blinding("claim")

    def on_behalf(self, c):
        return nodes.OnBehalf(**_HERE, player=str(c[0]))

    def entropy(self, c):
        return nodes.Entropy(**_HERE, text=str(c[0]).rstrip() if c[0] is not None else "")

    def help(self, c):
        return nodes.Help(**_HERE)

    def power(self, c):
        return " ".join(str(w) for w in c), c[0].column

    def bid(self, c):
        (name, column), amount = c[0], c[-1]
        return nodes.BidEntry(power=name, amount=str(amount), line=0, column=column)

    def bids(self, c):
        return nodes.Bids(**_HERE, entries=tuple(c))


class _Semantic(Exception):
    def __init__(self, column: int, expected: str, hint: str) -> None:
        self.column, self.expected, self.hint = column, expected, hint


_HERE = {"line": 0, "column": 0}  # placeholders, filled in by parse_line


def _opt(tok: Token | None) -> str | None:
    return None if tok is None else str(tok)


def _secret(tok: Token) -> dict:
    return {"password": str(tok), "password_column": tok.column}


# Lines that carry a password, for masking lines that did not parse:
# (pattern, group that is secret). Stars of the same length keep the caret
# of a syntax error under the right column.
_SECRET_LINES = [
    re.compile(r"^\s*signon\s+\S+\s+(.+?)\s*$", re.I),
    re.compile(r"^\s*create\s+\S+\s+(\S+)", re.I),
    re.compile(r"^\s*set\s+password\s+(.+?)\s*$", re.I),
]


def mask_secret(line: str, node: nodes.Node | None = None) -> str:
    """The line with its password replaced: '****' for a parsed command,
    stars of the same length for a line that did not parse."""
    if isinstance(node, nodes.Secret):
        start = node.password_column - 1
        return line[:start] + "****" + line[start + len(node.password):]
    for pattern in _SECRET_LINES:
        m = pattern.match(line)
        if m:
            return line[:m.start(1)] + "*" * (m.end(1) - m.start(1)) + line[m.end(1):]
    return line


def parse_line(text: str, line_no: int = 1) -> nodes.Node:
    """Parse one line (without its newline); CommandSyntaxError if it is no command."""
    line = text.rstrip("\r\n").replace("\t", " ")  # a tab is one column: keep carets true
    try:
        node = _parser().parse(line)
    except UnexpectedInput as err:
        masked = mask_secret(line)
        raise _syntax_error(err, masked, line_no, secret=masked != line) from err
    except Exception as err:  # raised by a transformer callback during the parse
        inner = getattr(err, "orig_exc", err)
        if isinstance(inner, _Semantic):
            raise CommandSyntaxError(line_no, inner.column, mask_secret(line), inner.expected,
                                     inner.hint) from err
        raise
    column = len(line) - len(line.lstrip()) + 1
    if isinstance(node, nodes.Bids):
        entries = tuple(replace(e, line=line_no) for e in node.entries)
        return replace(node, line=line_no, column=column, entries=entries)
    return replace(node, line=line_no, column=column)


def _syntax_error(err: UnexpectedInput, line: str, line_no: int, secret: bool) -> CommandSyntaxError:
    """The error for a line (already masked) that lark could not parse."""
    if isinstance(err, UnexpectedToken):
        expected = set(err.accepts or err.expected)
        if err.token.type == "$END":
            column = len(line.rstrip()) + 1
            found = "the line ends"
        else:
            column = err.column
            # Quote the word from the (masked) line, never the raw token: the
            # token may be a password, or the whole rest of the line.
            rest = line[column - 1:].split()
            found = f"'{rest[0][:20]}'" if rest else "the line ends"
        hint = f"Instead {found}."
    elif isinstance(err, UnexpectedCharacters):
        expected = set(err.allowed or ())
        column = err.column
        hint = f"'{line[column - 1]}' cannot stand here."
    else:
        expected, column, hint = set(), getattr(err, "column", 1), ""
    if expected == {"$END"} and secret:
        hint += " A password is one word, without spaces."
    if not expected or expected >= {"WORD", "GAME"}:
        what = f"a command ({_COMMANDS}) or a bid like 'Austria 40'"
    else:
        what = _describe(expected)
    if "AMOUNT" in expected and "WORD" in expected:
        # The line began with a word that is no command: a bid, or just prose.
        what = f"a number of points for a bid (like 'Austria 40'), or a command ({_COMMANDS})"
    return CommandSyntaxError(line_no, column, line, what, hint.strip())
