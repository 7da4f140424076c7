"""The commands a mail can hold, one frozen dataclass each (a method whose
commands extend the grammar keeps their nodes in its own package, its
Method's SYNTAX, made of Node and Secret).

`line` is the line number in the mail's text, `column` the 1-based column of
the command's first character; they let replies point at the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field



@dataclass(frozen=True)
class BidEntry:
    """One bid as written: "Austria 40" -> power "Austria", amount "40"."""

    power: str
    amount: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Node:
    line: int
    column: int


@dataclass(frozen=True, kw_only=True)
class MethodCommand:
    """The base of a method's own commands (LUI, PT3; their grammars under
    grammars/). Where the command stood in its mail is not part of what it
    means: two alike commands compare equal wherever they stood, and a pure
    engine or a test builds one without a place."""

    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Secret:
    """Mixin of the commands that carry a password: where it stands, so that
    replies and logs can mask exactly that word."""

    password: str
    password_column: int


@dataclass(frozen=True)
class Create(Node, Secret):
    game: str
    method: str | None
    variant: str | None


@dataclass(frozen=True)
class Signon(Node, Secret):
    game: str
    master: bool  # SIGNON Mgame: the game's master (GM); SIGNON ?game: a player
    observer: bool = False  # SIGNON Ogame: an observer (every public mail and the results)
    power: str | None = None  # SIGNON Xgame: take over power X (its letter, upper case)
    variant: str | None = None  # SIGNON ?game password VARIANT: checked against the game's


@dataclass(frozen=True)
class Signoff(Node):
    pass


@dataclass(frozen=True)
class SetPassword(Node, Secret):
    pass


@dataclass(frozen=True)
class SetDeadline(Node):
    text: str


@dataclass(frozen=True)
class SetParam(Node):
    name: str  # "T", "M" or "D"
    value: str  # digits, or "T/U" for D


@dataclass(frozen=True)
class SetVariant(Node):
    name: str


@dataclass(frozen=True)
class SetMethod(Node):
    name: str


@dataclass(frozen=True)
class SetPreference(Node):
    text: str  # the list as written ("" for none); OPTIMAL / SHORTCUT are the master's game options
    text_column: int  # where the list begins in the line


@dataclass(frozen=True)
class SetPrefMode(Node):
    mode: str  # list | both | random (nJudge's PRFLIST, PRFBOTH, PRFRAND)


@dataclass(frozen=True)
class SetPlayers(Node):
    count: int


@dataclass(frozen=True)
class SetReminders(Node):
    text: str  # as written: "24h 1h", "24h,1h", "OFF"


@dataclass(frozen=True)
class SetStart(Node):
    manual: bool  # SET MANUAL START: only START starts it; SET AUTO START / SET NO MANUAL START: by itself


@dataclass(frozen=True)
class SetNotices(Node):
    mode: str  # "each" (a mail per player joining and per list) or "daily" (one digest a day)


@dataclass(frozen=True)
class Start(Node):
    pass


@dataclass(frozen=True)
class Process(Node):
    pass


@dataclass(frozen=True)
class Eject(Node):
    player: str


@dataclass(frozen=True)
class Unlock(Node):
    player: str  # the player whose password lock the master lifts


@dataclass(frozen=True)
class Replace(Node):
    player: str
    new_player: str  # an address, possibly with a name: "Olga <olga@example.net>"
    # The whole line after REPLACE, and whether WITH (or BY) said where the
    # old player ends: without it, the handler finds the old player's name
    # (which may hold spaces) among the game's players.
    text: str = field(default="", compare=False)
    split: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class NoPreference(Node):
    player: str | None  # None: the sender's own; else the GM's decision for a player


@dataclass(frozen=True)
class ListGame(Node):
    game: str | None


@dataclass(frozen=True)
class Help(Node):
    topic: str | None = None  # HELP preference: a method's (or a topic's) own page


@dataclass(frozen=True)
class OnBehalf(Node):
    player: str


@dataclass(frozen=True)
class Entropy(Node):
    text: str


@dataclass(frozen=True)
class Bids(Node):
    entries: tuple[BidEntry, ...]
    # Read as forums post bids (`Austria: 40 points`, `1. Germany 20`,
    # `[b]Italy[/b] 12`; judge/syntax/forum.py): the reply says how it was read.
    forum: bool = False


@dataclass(frozen=True)
class Markup(Node):
    """A line of forum markup and nothing else (`[code]`, `[/quote]`): the
    frame of a pasted post, no command."""
