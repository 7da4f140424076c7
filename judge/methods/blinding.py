"""Murky's blinding protocol: a secret, verifiable random power assignment.

The protocol (docs/blinding.md; seed ../shared/seeds/random-assignment-blinding.txt,
whose beginning is cut and was reconstructed) lets a GM hand out powers at
random in a blind game so that no player learns another's power, the GM
cannot bias who gets which power, and everybody can check the result.

This module holds the pure parts: digit arithmetic without carry, message
formats, and the two state machines a mail shell drives: `GMState` (the
judge as GM) and `ThirdPartyState` (the judge as third party). Nothing here
does I/O, reads a clock or uses global randomness: every random choice comes
from a passed `DrawStream`. States are frozen; every transition returns a new
state (and what to send), so a shell can store them (`as_dict`/`from_dict`)
between mails.

The GM side, step by step (numbers are the protocol's steps):

    state, out = start(players, powers, stream)        # 1-2: out[player] = GM-blinded message
    state = third_party_list(state, messages)          # 4: the third party's shuffled list
    state = blinds_collected(state)                    # 5: the third party holds every blind
    state, out = unblind(state, stream)                # 7: out[player] = final message
    fmt = public_format(state)                         # 7: publish this pattern
    state, record = blinds_published(state, blinds)    # 8: the GM's record
    verdict = check_claim(state, player, message)      # a player says the message was corrupted
    awaiting(state)                                    # whom the protocol waits for

With `start(..., receipts=True)` the GM asks every player to quote back the
final message (`receipt`) before the format is made public.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from judge.rng import DrawStream

NAME = "blinding"
DIGITS = tuple("0123456789")
DEFAULT_LENGTH = 8
# make_format keeps at least this many verification digits, so that a wrong
# blind practically never turns a message into one of the right format.
MIN_VERIFICATION_DIGITS = 4

# What the draws of the protocol are recorded as (DrawStream `what`).
WHAT_POSITION = "blinding-format-position"
WHAT_VERIFICATION = "blinding-format-digit"
WHAT_GM_BLIND = "blinding-gm-blind"
WHAT_FIRST = "blinding-first-message"
WHAT_FINAL = "blinding-final-message"
WHAT_SHUFFLE = "blinding-third-party-shuffle"


class ProtocolError(ValueError):
    """A step asked for out of turn, or with input the protocol refuses.

    The text names who or what is wrong, never a secret (the format, the GM
    blind, a player's blind or another player's message)."""


# --------------------------------------------------------------------------
# Digit arithmetic


def check_digits(value: Any, label: str = "number") -> str:
    """`value` if it is a non-empty string of the digits 0-9, else ValueError."""
    if not isinstance(value, str):
        raise ValueError(f"{label} must be written with the digits 0-9, got {value!r}")  # noqa: TRY004 (the callers catch ValueError)
    if not value:
        raise ValueError(f"{label} is empty")
    if not (value.isascii() and value.isdigit()):
        raise ValueError(f"{label} {value!r} must contain only the digits 0-9")
    return value


def _pair(a: str, b: str) -> None:
    check_digits(a, "the first number")
    check_digits(b, "the second number")
    if len(a) != len(b):
        raise ValueError(
            f"the two numbers must have the same number of digits: {a} has {len(a)}, {b} has {len(b)}"
        )


def add(a: str, b: str) -> str:
    """Digit-wise sum without carry: each digit is (a + b) mod 10."""
    _pair(a, b)
    return "".join(str((int(x) + int(y)) % 10) for x, y in zip(a, b))


def sub(a: str, b: str) -> str:
    """Digit-wise difference without borrow: each digit is (a - b) mod 10."""
    _pair(a, b)
    return "".join(str((int(x) - int(y)) % 10) for x, y in zip(a, b))


def random_digits(stream: DrawStream, n: int, what: str, **context: Any) -> str:
    """`n` digits, each one draw among 0-9 from `stream` (recorded as `what`,
    with context `digit` = its position counted from 0)."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of digits must be at least 1, not {n!r}")
    return "".join(stream.choice(DIGITS, what=what, digit=i, **context) for i in range(n))


def normal_token(token: str) -> str:
    """A token or run key as compared: blanks removed, capitals (a player may
    copy it in lower case, or split it in groups)."""
    return "".join(str(token).split()).upper()


def token_hash(token: str) -> str:
    """The SHA-256 (hex) of a token: what the GM side gives the third party,
    which can then check a player's token without being able to forge one."""
    import hashlib

    return hashlib.sha256(normal_token(token).encode("ascii", "replace")).hexdigest()


# --------------------------------------------------------------------------
# Message formats


def power_width(n_powers: int) -> int:
    """How many digit positions a power number takes: 1 up to 10 powers, 2 up to 100..."""
    if not isinstance(n_powers, int) or n_powers < 1:
        raise ValueError(f"the number of powers must be at least 1, not {n_powers!r}")
    return len(str(n_powers - 1))


@dataclass(frozen=True)
class Format:
    """A message format such as `4456x464`: verification digits, and `x` where
    the power number goes. Power k (counted from 0 in power-list order) is
    written in decimal with leading zeros on the x positions, left to right:
    with `44xx0464`, power 3 is 44030464."""

    pattern: str
    n_powers: int

    def __post_init__(self) -> None:
        pattern = self.pattern
        if not isinstance(pattern, str):
            raise ValueError(f"a format must be text like 4456x464, not {pattern!r}")  # noqa: TRY004 (the callers catch ValueError)
        pattern = "".join(pattern.split()).lower()
        object.__setattr__(self, "pattern", pattern)
        if not pattern:
            raise ValueError("the format is empty; it looks like 4456x464")
        bad = sorted({c for c in pattern if c not in DIGITS and c != "x"})
        if bad:
            raise ValueError(
                f"format {pattern!r}: only digits and x (where the power number goes) are allowed, "
                f"not {' '.join(bad)}"
            )
        width = pattern.count("x")
        if width == 0:
            raise ValueError(f"format {pattern!r} has no x: it must show where the power number goes")
        if width == len(pattern):
            raise ValueError(f"format {pattern!r} has no verification digits")
        need = power_width(self.n_powers)
        if width < need:
            raise ValueError(
                f"format {pattern!r} has room for {width} power digit(s), "
                f"but {self.n_powers} powers need {need}"
            )

    @classmethod
    def parse(cls, pattern: str, n_powers: int) -> Format:
        """The format written as `pattern` (x or X, spaces ignored) for a game of `n_powers`."""
        return cls(pattern, n_powers)

    @property
    def length(self) -> int:
        return len(self.pattern)

    @property
    def positions(self) -> tuple[int, ...]:
        """Where the power digits go, counted from 0, left to right."""
        return tuple(i for i, c in enumerate(self.pattern) if c == "x")

    @property
    def width(self) -> int:
        return len(self.positions)

    def message(self, power_index: int) -> str:
        """The message of power `power_index` (0 = the first power of the list)."""
        if not isinstance(power_index, int) or not 0 <= power_index < self.n_powers:
            raise ValueError(f"power number must be between 0 and {self.n_powers - 1}, not {power_index!r}")
        number = iter(str(power_index).zfill(self.width))
        return "".join(next(number) if c == "x" else c for c in self.pattern)

    def decode(self, message: str) -> int | None:
        """The power number `message` carries, or None if it is not a message of
        this format (a verification digit differs, or the number is no power)."""
        check_digits(message, "message")
        if len(message) != self.length:
            raise ValueError(
                f"message {message} has {len(message)} digits; this format has {self.length}"
            )
        number = ""
        for c, m in zip(self.pattern, message):
            if c == "x":
                number += m
            elif c != m:
                return None
        k = int(number)
        return k if k < self.n_powers else None


def make_format(stream: DrawStream, n_powers: int, length: int = DEFAULT_LENGTH) -> Format:
    """A random format: the power digit positions (drawn one by one among the
    positions left, recorded as `blinding-format-position`), then a random
    verification digit for every other position (`blinding-format-digit`)."""
    width = power_width(n_powers)
    if not isinstance(length, int) or length < width + MIN_VERIFICATION_DIGITS:
        raise ValueError(
            f"messages of {length!r} digits are too short: {n_powers} powers need {width} power digit(s) "
            f"and at least {MIN_VERIFICATION_DIGITS} verification digits"
        )
    free = list(range(length))
    chosen = []
    for i in range(width):
        pos = stream.choice(free, what=WHAT_POSITION, digit=i)
        free.remove(pos)
        chosen.append(pos)
    chars = [
        "x" if pos in chosen else stream.choice(DIGITS, what=WHAT_VERIFICATION, position=pos)
        for pos in range(length)
    ]
    return Format("".join(chars), n_powers)


def power_messages(fmt: Format, n_powers: int | None = None) -> list[str]:
    """The message of every power, in power-list order."""
    n = fmt.n_powers if n_powers is None else n_powers
    if n > fmt.n_powers:
        raise ValueError(f"format made for {fmt.n_powers} powers, not {n}")
    return [fmt.message(k) for k in range(n)]


def reveal(message: str, blinds: Sequence[str], fmt: Format) -> list[tuple[int, int]]:
    """Every (blind index, power number) such that `message` minus that blind is
    a message of `fmt`. Indices count from 0. Normally exactly one."""
    check_digits(message, "message")
    if len(message) != fmt.length:
        raise ValueError(f"message {message} has {len(message)} digits; the format {fmt.pattern} has {fmt.length}")
    out = []
    for i, blind in enumerate(blinds):
        check_digits(blind, f"blind {i + 1}")
        if len(blind) != fmt.length:
            raise ValueError(f"blind {i + 1} ({blind}) has {len(blind)} digits; the message has {fmt.length}")
        k = fmt.decode(sub(message, blind))
        if k is not None:
            out.append((i, k))
    return out


# --------------------------------------------------------------------------
# Helpers for the state machines


def canonical_players(players: Iterable[str]) -> tuple[str, ...]:
    """Players in case-insensitive name order (exact text breaks ties), as
    docs/randomness.md orders tied players; duplicates refused."""
    names = []
    for p in players:
        if not isinstance(p, str) or not p.strip():
            raise ProtocolError(f"a player must be named, not {p!r}")
        names.append(p)
    folded = [n.casefold() for n in names]
    dup = sorted({n for n, f in zip(names, folded) if folded.count(f) > 1})
    if dup:
        raise ProtocolError(f"player named twice: {', '.join(dup)}")
    if not names:
        raise ProtocolError("the protocol needs at least one player")
    return tuple(sorted(names, key=lambda n: (n.casefold(), n)))


def _power_names(powers: Iterable[Any]) -> tuple[str, ...]:
    names = tuple(p if isinstance(p, str) else p.name for p in powers)
    if not names:
        raise ProtocolError("the protocol needs at least one power")
    if len({n.casefold() for n in names}) != len(names):
        raise ProtocolError("a power is named twice in the power list")
    return names


def _join(names: Iterable[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _message_arg(value: Any, length: int, label: str) -> str:
    """A message or blind from outside: N digits, else ProtocolError naming
    `label` (never echoing the value, which may be a secret)."""
    if not isinstance(value, str) or not value or not (value.isascii() and value.isdigit()):
        raise ProtocolError(f"{label} is not a number made of the digits 0-9")
    if len(value) != length:
        raise ProtocolError(f"{label} has {len(value)} digits; the protocol uses {length}")
    return value


# --------------------------------------------------------------------------
# The GM's record

@dataclass(frozen=True)
class Decoding:
    """How one final message decodes with the published blinds."""

    player: str  # who was sent the message (step 7)
    message: str  # the message sent (list entry minus the GM blind)
    candidates: tuple[tuple[int, int], ...]  # every (blind index, power number) that decodes it
    power: int | None  # the power number the GM's record gives it (None: undecodable / unresolved)
    blind: int | None  # the index of the blind that decodes it to that power
    corrected: bool = False  # True: undecodable, given the one power left over

    def as_dict(self) -> dict[str, Any]:
        return {"player": self.player, "message": self.message,
                "candidates": [list(c) for c in self.candidates], "power": self.power,
                "blind": self.blind, "corrected": self.corrected}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Decoding:
        return cls(d["player"], d["message"], tuple(tuple(c) for c in d["candidates"]),
                   d["power"], d["blind"], d.get("corrected", False))


@dataclass(frozen=True)
class Correction:
    """A message the GM had to correct (the seed's one-corrupted-message rule)."""

    player: str
    message: str
    power: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"player": self.player, "message": self.message, "power": self.power, "reason": self.reason}


@dataclass(frozen=True)
class Record:
    """The GM's record after the blinds are published.

    `assignment` gives every player's power (canonical player order) when the
    protocol succeeded; it is empty when it must be run again (`rerun_reason`)."""

    assignment: tuple[tuple[str, str], ...]
    decodings: tuple[Decoding, ...]
    corrections: tuple[Correction, ...] = ()
    rerun_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.rerun_reason is None

    @property
    def powers(self) -> dict[str, str]:
        """player -> power name."""
        return dict(self.assignment)

    def as_dict(self) -> dict[str, Any]:
        return {"assignment": [list(a) for a in self.assignment],
                "decodings": [d.as_dict() for d in self.decodings],
                "corrections": [c.as_dict() for c in self.corrections],
                "rerun_reason": self.rerun_reason}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Record:
        return cls(tuple(tuple(a) for a in d["assignment"]),
                   tuple(Decoding.from_dict(x) for x in d["decodings"]),
                   tuple(Correction(**c) for c in d.get("corrections", ())),
                   d.get("rerun_reason"))


@dataclass(frozen=True)
class Verdict:
    """The GM's answer to a player who says their final message was corrupted.

    The power is always the one of the GM's record: a claim can never change
    it. `accepted` says whether the claim of corruption holds: the message the
    player quotes differs from the one the GM sent, or the GM had itself
    flagged that message as corrupted."""

    player: str
    sent: str
    claimed: str
    power: str
    accepted: bool
    explanation: str

    def as_dict(self) -> dict[str, Any]:
        return {"player": self.player, "sent": self.sent, "claimed": self.claimed,
                "power": self.power, "accepted": self.accepted, "explanation": self.explanation}


# --------------------------------------------------------------------------
# The GM side

# Phases, in order (rerun ends a failed run).
AWAITING_LIST = "awaiting-list"  # step 3-4: players blind, the third party collects and forwards
AWAITING_BLINDS = "awaiting-blinds"  # step 5: the third party collects the players' blinds
READY = "ready"  # the third party holds every blind: the GM may send the final messages
AWAITING_RECEIPTS = "awaiting-receipts"  # step 7 with receipts: players quote their message back
AWAITING_PUBLICATION = "awaiting-publication"  # step 8: the third party publishes the blinds
# Two or more messages were corrupted: the third party traces the list
# (which player sent each entry), and the GM side assigns by the trace.
AWAITING_TRACE = "awaiting-trace"
DONE = "done"
RERUN = "rerun"
PHASES = (AWAITING_LIST, AWAITING_BLINDS, READY, AWAITING_RECEIPTS, AWAITING_PUBLICATION, AWAITING_TRACE, DONE,
          RERUN)


@dataclass(frozen=True)
class GMState:
    """The GM's side of one run of the protocol. Everything in it is the GM's
    secret until the protocol says otherwise: never show it to a player."""

    players: tuple[str, ...]  # canonical order
    powers: tuple[str, ...]  # power-list order
    fmt: Format
    gm_blind: str
    first: tuple[tuple[str, str], ...]  # step 2: (player, GM-blinded message), canonical order
    in_play: tuple[int, ...]  # the power numbers whose messages were sent
    third_party: str = "the third party"
    receipts_required: bool = False
    phase: str = AWAITING_LIST
    blinded_list: tuple[str, ...] = ()  # step 4, in the third party's order
    final: tuple[tuple[str, str], ...] = ()  # step 7: (player, list entry minus G), canonical order
    receipts: tuple[str, ...] = ()  # players who quoted their final message back correctly
    blinds: tuple[str, ...] = ()  # step 8, as published
    record: Record | None = None
    rerun_reason: str | None = None  # why the blinds alone did not assign the powers
    round: int = 1  # the master's RERUN starts round 2, 3...
    trace: tuple[str, ...] = ()  # the third party's trace: who sent each list entry, in list order

    @property
    def length(self) -> int:
        return self.fmt.length

    def as_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players), "powers": list(self.powers),
            "format": self.fmt.pattern, "gm_blind": self.gm_blind,
            "first": [list(x) for x in self.first], "in_play": list(self.in_play),
            "third_party": self.third_party, "receipts_required": self.receipts_required,
            "phase": self.phase, "blinded_list": list(self.blinded_list),
            "final": [list(x) for x in self.final], "receipts": list(self.receipts),
            "blinds": list(self.blinds),
            "record": self.record.as_dict() if self.record else None,
            "rerun_reason": self.rerun_reason, "round": self.round, "trace": list(self.trace),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GMState:
        return cls(
            players=tuple(d["players"]), powers=tuple(d["powers"]),
            fmt=Format(d["format"], len(d["powers"])), gm_blind=d["gm_blind"],
            first=tuple(tuple(x) for x in d["first"]), in_play=tuple(d["in_play"]),
            third_party=d.get("third_party", "the third party"),
            receipts_required=d.get("receipts_required", False), phase=d["phase"],
            blinded_list=tuple(d.get("blinded_list", ())), final=tuple(tuple(x) for x in d.get("final", ())),
            receipts=tuple(d.get("receipts", ())), blinds=tuple(d.get("blinds", ())),
            record=Record.from_dict(d["record"]) if d.get("record") else None,
            rerun_reason=d.get("rerun_reason"), round=d.get("round", 1), trace=tuple(d.get("trace", ())),
        )


def start(
    players: Iterable[str],
    powers: Iterable[Any],
    stream: DrawStream,
    *,
    third_party: str = "the third party",
    length: int = DEFAULT_LENGTH,
    receipts: bool = False,
    round: int = 1,
) -> tuple[GMState, dict[str, str]]:
    """Steps 1-2: make the format, the power messages and the GM blind G; give
    each player (in canonical order) the GM-blinded message of a power drawn
    among those left (power-list order). Returns the state and what to send:
    player -> GM-blinded message. `powers` are names or a PowerList.

    With fewer players than powers, the powers whose messages nobody gets are
    not in play; more players than powers are refused."""
    names = canonical_players(players)
    power_names = _power_names(powers)
    if len(names) > len(power_names):
        raise ProtocolError(f"{len(names)} players for {len(power_names)} powers: everyone needs a power")
    fmt, gm_blind, first = deal(names, len(power_names), stream, length)
    in_play = tuple(sorted(fmt.decode(sub(m, gm_blind)) for _, m in first))
    state = GMState(players=names, powers=power_names, fmt=fmt, gm_blind=gm_blind, first=tuple(first),
                    in_play=in_play, third_party=third_party, receipts_required=receipts, round=round)
    return state, dict(first)


def deal(players: Sequence[str], n_powers: int, stream: DrawStream, length: int = DEFAULT_LENGTH
         ) -> tuple[Format, str, list[tuple[str, str]]]:
    """Steps 1-2's draws: the format, G, and for each player in the order
    given a power drawn among those left (power-list order), as its
    GM-blinded message. Only the number of players and their order change
    the draws, not their names: a player who knows only their own place can
    re-run it (judge.methods.blind_random.player_replay)."""
    fmt = make_format(stream, n_powers, length)
    gm_blind = random_digits(stream, fmt.length, WHAT_GM_BLIND)
    left = list(range(n_powers))
    first = []
    for player in players:
        k = stream.choice(left, what=WHAT_FIRST, player=player)
        left.remove(k)
        first.append((player, add(fmt.message(k), gm_blind)))
    return fmt, gm_blind, first


def _need(state: GMState, *phases: str, doing: str) -> None:
    if state.phase in phases:
        return
    if state.phase == RERUN:
        raise ProtocolError(f"cannot {doing}: this run failed and the protocol must be run again "
                            f"({state.rerun_reason})")
    raise ProtocolError(f"cannot {doing} now. {awaiting(state)}")


def third_party_list(state: GMState, messages: Sequence[str]) -> GMState:
    """Step 4: the third party's shuffled list, one blinded message per player.
    Refuses a list of the wrong size, malformed entries and duplicates (the
    errors give positions, counted from 1, never the digits)."""
    _need(state, AWAITING_LIST, doing="take the third party's list")
    if isinstance(messages, str):
        raise ProtocolError("the list must be a sequence of messages, not one text")
    entries = list(messages)
    if len(entries) != len(state.players):
        raise ProtocolError(
            f"the list from {state.third_party} has {len(entries)} message(s); "
            f"it must have one per player, {len(state.players)}"
        )
    for i, m in enumerate(entries, 1):
        _message_arg(m, state.length, f"message {i} of the list")
    seen: dict[str, int] = {}
    for i, m in enumerate(entries, 1):
        if m in seen:
            raise ProtocolError(
                f"messages {seen[m]} and {i} of the list are the same: every player's message must appear once"
            )
        seen[m] = i
    return replace(state, phase=AWAITING_BLINDS, blinded_list=tuple(entries))


def blinds_collected(state: GMState) -> GMState:
    """Step 5 done: the third party confirms it holds every player's blind."""
    _need(state, AWAITING_BLINDS, doing="note that the third party holds every blind")
    return replace(state, phase=READY)


def unblind(state: GMState, stream: DrawStream) -> tuple[GMState, dict[str, str]]:
    """Steps 6-7: subtract G from every entry of the list and send one to each
    player: for each player in canonical order, an entry drawn among those
    left (in list order). Returns the state and player -> final message.

    Refused until the list is in and the third party has confirmed it holds
    every blind: sending earlier would let a player hold back their blind."""
    if state.phase == AWAITING_BLINDS:
        raise ProtocolError(
            f"cannot send the final messages yet: {state.third_party} has not confirmed "
            "that it holds every player's blind"
        )
    _need(state, READY, doing="send the final messages")
    left = [sub(m, state.gm_blind) for m in state.blinded_list]
    final = []
    for player in state.players:
        m = stream.choice(left, what=WHAT_FINAL, player=player)
        left.remove(m)
        final.append((player, m))
    phase = AWAITING_RECEIPTS if state.receipts_required else AWAITING_PUBLICATION
    return replace(state, phase=phase, final=tuple(final)), dict(final)


def message_for(state: GMState, player: str) -> str:
    """The message to send `player` again at this point (if their mail was
    lost): the final message once sent, else the GM-blinded one."""
    if player not in state.players:
        raise ProtocolError(f"{player} is not a player of this assignment")
    return dict(state.final or state.first)[player]


def receipt(state: GMState, player: str, message: str) -> tuple[GMState, bool]:
    """With receipts: `player` quotes back the final message received. True if
    it is the one sent (recorded); False if it differs: send `message_for`
    again. Once every player has confirmed, the format may be published."""
    _need(state, AWAITING_RECEIPTS, doing="take a receipt")
    if player not in state.players:
        raise ProtocolError(f"{player} is not a player of this assignment")
    if message != dict(state.final)[player]:
        return state, False
    receipts = state.receipts if player in state.receipts else state.receipts + (player,)
    phase = AWAITING_PUBLICATION if len(receipts) == len(state.players) else AWAITING_RECEIPTS
    return replace(state, receipts=receipts, phase=phase), True


def public_format(state: GMState) -> str:
    """The format to publish (step 7), once the final messages are sent (and,
    with receipts, every player has confirmed). Refused before."""
    _need(state, AWAITING_PUBLICATION, DONE, doing="publish the message format")
    return state.fmt.pattern


def _resolve(cands: list[set[int]]) -> tuple[list[int | None], list[tuple[int, ...]], list[int]]:
    """Give each message one power: a message with one candidate fixes it and
    removes it from the others, until nothing changes. Returns per message the
    power (or None), the conflicts (messages that alone decode to one same
    power), and the messages left ambiguous."""
    cands = [set(c) for c in cands]
    power: list[int | None] = [None] * len(cands)
    while True:
        singles: dict[int, list[int]] = {}
        for j, c in enumerate(cands):
            if power[j] is None and len(c) == 1:
                singles.setdefault(next(iter(c)), []).append(j)
        conflicts = [tuple(js) for js in singles.values() if len(js) > 1]
        if conflicts or not singles:
            break
        for k, (j,) in singles.items():
            power[j] = k
            for i, c in enumerate(cands):
                if i != j:
                    c.discard(k)
    ambiguous = [j for j, c in enumerate(cands) if power[j] is None and len(c) > 1]
    return power, conflicts, ambiguous


def blinds_published(state: GMState, blinds: Sequence[str]) -> tuple[GMState, Record]:
    """Step 8: the third party has published the players' blinds. Decode every
    final message with them: the GM's record of who has which power.

    One message that no blind decodes (corrupted in transit) is corrected to
    the one power left over and flagged. Two or more, two messages decoding to
    the same power, or a message that stays ambiguous: state `awaiting-trace`
    (the third party tells which player sent each list entry: `traced`)."""
    _need(state, AWAITING_PUBLICATION, doing="take the published blinds")
    if isinstance(blinds, str):
        raise ProtocolError("the blinds must be a sequence of numbers, not one text")
    blinds = list(blinds)
    if len(blinds) != len(state.players):
        raise ProtocolError(f"{len(blinds)} blind(s) published; there must be one per player, {len(state.players)}")
    for i, b in enumerate(blinds, 1):
        _message_arg(b, state.length, f"blind {i}")
    in_play = set(state.in_play)
    decoded = [[(b, k) for b, k in reveal(m, blinds, state.fmt) if k in in_play] for _, m in state.final]
    power, conflicts, ambiguous = _resolve([{k for _, k in c} for c in decoded])
    undecodable = [j for j, p in enumerate(power) if p is None and j not in ambiguous
                   and not any(j in c for c in conflicts)]

    def name(j: int) -> str:
        return state.final[j][0]

    reason = None
    if conflicts:
        js = conflicts[0]
        reason = (f"the messages sent to {_join(name(j) for j in js)} decode to the same power: one was "
                  "corrupted in transit and the GM cannot tell which")
    elif len(undecodable) >= 2:
        reason = (f"{len(undecodable)} messages decode with no blind (those sent to "
                  f"{_join(name(j) for j in undecodable)}): more than one was corrupted in transit")
    elif ambiguous:
        reason = (f"the messages sent to {_join(name(j) for j in ambiguous)} decode to more than one power")
    leftover = sorted(in_play - {p for p in power if p is not None})
    if reason is None and undecodable and len(leftover) != 1:  # pragma: no cover - cannot happen
        reason = "the powers left over do not match the undecodable message"
    corrections = []
    if reason is None and undecodable:
        (j,) = undecodable
        power[j] = leftover[0]
        corrections.append(Correction(
            player=name(j), message=state.final[j][1], power=state.powers[leftover[0]],
            reason="no published blind decodes this message (corrupted in transit); every other power "
                   "is accounted for, so it is the one power left over",
        ))
    decodings = []
    for j, ((player, message), cands) in enumerate(zip(state.final, decoded)):
        blind = next((b for b, k in cands if k == power[j]), None)
        decodings.append(Decoding(player, message, tuple(cands), power[j], blind,
                                  corrected=bool(corrections) and j == undecodable[0]))
    if reason is not None:
        record = Record((), tuple(decodings), (), reason)
        return (replace(state, phase=AWAITING_TRACE, blinds=tuple(blinds), record=record, rerun_reason=reason),
                record)
    by_player = {player: state.powers[p] for (player, _), p in zip(state.final, power)}
    assignment = tuple((p, by_player[p]) for p in state.players)
    record = Record(assignment, tuple(decodings), tuple(corrections))
    return replace(state, phase=DONE, blinds=tuple(blinds), record=record), record


def traced(state: GMState, senders: Sequence[str]) -> tuple[GMState, Record]:
    """The third party's trace, after two or more messages were corrupted:
    `senders[i]` is the player who sent entry i of its list. Entry i is then
    that player's GM-blinded message plus their blind, so it carries the
    power of the message the GM sent that player in step 2, whatever the
    damage to its digits; the player who got entry i in step 7 plays it.

    The trace comes after the final messages were sent (the GM side could
    otherwise choose who gets which power); it must name every player once."""
    _need(state, AWAITING_TRACE, doing="take the third party's trace")
    if isinstance(senders, str):
        raise ProtocolError("the trace must be a sequence of players, not one text")
    senders = list(senders)
    if len(senders) != len(state.blinded_list):
        raise ProtocolError(f"the trace names {len(senders)} player(s); the list has {len(state.blinded_list)} "
                            "entries")
    by_fold = {p.casefold(): p for p in state.players}
    named = []
    for i, who in enumerate(senders, 1):
        player = by_fold.get(str(who).casefold())
        if player is None:
            raise ProtocolError(f"entry {i} of the trace names {who}, who is no player of this assignment")
        if player in named:
            raise ProtocolError(f"the trace names {player} twice: every player sent one entry")
        named.append(player)
    first_power = {p: state.fmt.decode(sub(m, state.gm_blind)) for p, m in state.first}
    index = {m: i for i, m in enumerate(state.blinded_list)}
    assert state.record is not None
    decodings, corrections, assignment = [], [], {}
    for d in state.record.decodings:
        i = index[add(d.message, state.gm_blind)]
        k = first_power[named[i]]
        assignment[d.player] = state.powers[k]
        decodes = any(c == k for _, c in d.candidates)
        blind = next((b for b, c in d.candidates if c == k), None)
        decodings.append(replace(d, power=k, blind=blind, corrected=not decodes))
        if not decodes:
            corrections.append(Correction(
                player=d.player, message=d.message, power=state.powers[k],
                reason=f"traced: the third party says entry {i + 1} of its list came from {named[i]}, whose "
                       f"step-2 message carries {state.powers[k]}; no published blind decodes it to that"))
    record = Record(tuple((p, assignment[p]) for p in state.players), tuple(decodings), tuple(corrections))
    return replace(state, phase=DONE, trace=tuple(named), record=record), record


def check_claim(state: GMState, player: str, claimed_message: str) -> Verdict:
    """A player says their final message was corrupted and quotes what they
    got. The answer is always the power of the GM's record, which decoded the
    message the GM sent: a claim cannot get the player another power."""
    if state.phase == RERUN:
        raise ProtocolError(f"this run failed and the protocol is run again ({state.rerun_reason}); "
                            "there is no power to claim about")
    if state.phase != DONE:
        raise ProtocolError(f"a corruption claim can only be checked once the blinds are published. "
                            f"{awaiting(state)}")
    if player not in state.players:
        raise ProtocolError(f"{player} is not a player of this assignment")
    assert state.record is not None
    sent = dict(state.final)[player]
    power = state.record.powers[player]
    decoding = next(d for d in state.record.decodings if d.player == player)
    claimed = "".join(str(claimed_message).split())
    if decoding.corrected:
        explanation = (f"The message sent to you, {sent}, was corrupted in transit: no published blind decodes "
                       f"it. Every other power is accounted for, so yours is the one left over: {power}.")
        return Verdict(player, sent, claimed, power, True, explanation)
    blind = decoding.blind
    if claimed == sent:
        explanation = (f"The message you quote, {sent}, is exactly the one the GM sent you, and it is not "
                       f"corrupted: minus published blind {blind + 1} ({state.blinds[blind]}) it gives "
                       f"{sub(sent, state.blinds[blind])}, which is in the published format "
                       f"{state.fmt.pattern}. Your power is {power}; the claim is refused.")
        return Verdict(player, sent, claimed, power, False, explanation)
    explanation = (f"The message you quote, {claimed}, is not the one the GM sent you, {sent}: it was changed "
                   f"in transit. The message sent minus published blind {blind + 1} ({state.blinds[blind]}) "
                   f"gives {sub(sent, state.blinds[blind])}, in the published format {state.fmt.pattern}. "
                   f"Your power is {power}.")
    return Verdict(player, sent, claimed, power, True, explanation)


# --------------------------------------------------------------------------
# The third party's side


@dataclass(frozen=True)
class ThirdPartyState:
    """The third party's side: collect the players' blinded messages, shuffle
    them and send the list to the GM; collect the players' blinds and publish
    them once the GM has sent the final messages."""

    players: tuple[str, ...]  # canonical order
    digits: int = DEFAULT_LENGTH
    gm: str = "the GM"
    key: str = ""  # the run's key: the GM side's protocol lines carry it, and ours to it
    hashes: tuple[tuple[str, str], ...] = ()  # (player, SHA-256 of the player's token), canonical order
    messages: tuple[tuple[str, str], ...] = ()  # (player, blinded message), canonical order
    shuffled: tuple[str, ...] = ()  # the list sent to the GM (empty: not yet sent)
    list_confirmed: bool = False  # the GM confirmed receipt of the list (step 5)
    blinds: tuple[tuple[str, str], ...] = ()  # (player, blind), canonical order
    final_sent: bool = False  # the GM says the final messages are sent (step 7)

    @classmethod
    def new(cls, players: Iterable[str], digits: int = DEFAULT_LENGTH, gm: str = "the GM", key: str = "",
            hashes: Mapping[str, str] | None = None) -> ThirdPartyState:
        if not isinstance(digits, int) or digits < 1:
            raise ProtocolError(f"messages must have at least one digit, not {digits!r}")
        names = canonical_players(players)
        hashes = dict(hashes or {})
        return cls(players=names, digits=digits, gm=gm, key=normal_token(key) if key else "",
                   hashes=tuple((p, hashes[p].lower()) for p in names if p in hashes))

    def with_player(self, player: str, hash_: str) -> ThirdPartyState:
        """One more player (and their token's hash), while the GM side's
        THIRDPARTY lines arrive; refused once a message is in."""
        if self.messages:
            raise ProtocolError("the players are fixed once the first blinded message is in")
        hashes = dict(self.hashes)
        if any(p.casefold() == player.casefold() for p in self.players):
            raise ProtocolError(f"{player} is named twice")
        if hash_.lower() in hashes.values():
            raise ProtocolError(f"{player}'s token hash is another player's too")
        hashes[player] = hash_.lower()
        names = canonical_players([*self.players, player])
        return replace(self, players=names, hashes=tuple((p, hashes[p]) for p in names))

    def player_for(self, token: str) -> str | None:
        """The player whose token this is, if any: a line that carries it
        comes from that player (or someone they gave it to), whatever its
        From header says."""
        h = token_hash(token)
        return next((p for p, x in self.hashes if x == h), None)

    def _known(self, player: str) -> None:
        if player not in self.players:
            raise ProtocolError(f"{player} is not a player of this assignment")

    def _put(self, pairs: tuple[tuple[str, str], ...], player: str, value: str) -> tuple[tuple[str, str], ...]:
        d = dict(pairs)
        d[player] = value
        return tuple((p, d[p]) for p in self.players if p in d)

    @property
    def missing_messages(self) -> list[str]:
        have = dict(self.messages)
        return [p for p in self.players if p not in have]

    @property
    def missing_blinds(self) -> list[str]:
        have = dict(self.blinds)
        return [p for p in self.players if p not in have]

    def receive(self, player: str, message: str) -> ThirdPartyState:
        """Step 3: `player`'s message (the GM's message plus their blind). A
        new one replaces the old (a mistyped message mended) until the list
        has gone to the GM; after that it is refused. The caller has checked
        the player's token: only the player can replace their message."""
        self._known(player)
        _message_arg(message, self.digits, "your blinded message")
        have = dict(self.messages)
        if player in have and have[player] != message and self.shuffled:
            raise ProtocolError(f"the list has gone to {self.gm} already: your message cannot change any more. "
                                "If it was mistyped, the GM side finds and mends it at the end")
        if player not in have and self.shuffled:  # pragma: no cover - shuffle needs every message
            raise ProtocolError(f"the list has gone to {self.gm} already")
        return replace(self, messages=self._put(self.messages, player, message))

    def shuffle(self, stream: DrawStream) -> tuple[ThirdPartyState, list[str]]:
        """Step 4: once every player has sent a message, the list for the GM in
        a random order (each place drawn among the messages left, in
        numerical order). Refused, naming who is missing, before; the same
        list again once made."""
        if self.shuffled:
            return self, list(self.shuffled)
        missing = self.missing_messages
        if missing:
            raise ProtocolError(f"cannot send the list to {self.gm} yet: waiting for the blinded message of "
                                f"{_join(missing)}")
        left = sorted(m for _, m in self.messages)
        out = []
        for i in range(len(self.players)):
            m = stream.choice(left, what=WHAT_SHUFFLE, position=i)
            left.remove(m)
            out.append(m)
        return replace(self, shuffled=tuple(out)), out

    def confirm_list(self) -> ThirdPartyState:
        """Step 5: the GM confirmed receipt of the list; now ask every player for their blind."""
        if not self.shuffled:
            raise ProtocolError(f"no list has been sent to {self.gm} yet")
        return replace(self, list_confirmed=True)

    def receive_blind(self, player: str, blind: str) -> ThirdPartyState:
        """Step 5: `player`'s blinding factor. A new one replaces the old
        until every blind is in; then it is refused: the GM side sends the
        final messages and the format next, and a player who could change
        their blind after seeing those could choose their power."""
        self._known(player)
        _message_arg(blind, self.digits, "your blinding factor")
        have = dict(self.blinds)
        if player in have and have[player] != blind and self.has_all_blinds:
            raise ProtocolError("every blinding factor is in and the final messages are on their way: "
                                "yours cannot change any more")
        return replace(self, blinds=self._put(self.blinds, player, blind))

    @property
    def has_all_blinds(self) -> bool:
        """True when the third party may confirm to the GM that it holds every blind."""
        return self.list_confirmed and not self.missing_blinds

    def final_messages_sent(self) -> ThirdPartyState:
        """Step 7: the GM says the final messages are sent; the blinds may be published."""
        if not self.has_all_blinds:
            raise ProtocolError(f"the GM cannot have sent the final messages: {self.awaiting()}")
        return replace(self, final_sent=True)

    def publish(self) -> list[str]:
        """Step 8: the players' blinds, in numerical order and without names.
        Refused, naming who is awaited, until every blind is in and the GM has
        sent the final messages (publishing earlier would let the GM see whose
        message is whose before sending them)."""
        if self.missing_blinds or not self.list_confirmed:
            raise ProtocolError(f"cannot publish the blinds yet: {self.awaiting()}")
        if not self.final_sent:
            raise ProtocolError(f"cannot publish the blinds yet: {self.gm} has not sent the final messages")
        return sorted(b for _, b in self.blinds)

    def trace(self) -> list[str]:
        """Who sent each entry of the list (in the list's order), for the GM
        side after two or more messages were corrupted. Only once the GM has
        sent the final messages: before, it would let the GM choose who gets
        which power."""
        if not self.final_sent:
            raise ProtocolError(f"the list can be traced only after {self.gm} has sent the final messages")
        senders = {}
        for player, message in self.messages:
            senders.setdefault(message, []).append(player)
        return [senders[m].pop(0) for m in self.shuffled]

    def waiting_for(self) -> tuple[str, list[str]]:
        """(step, players): the players the third party waits for and for
        what ("blinded": their blinded message, "blind": their blinding
        factor), or ("", []) when it waits for no player."""
        if not self.shuffled:
            return "blinded", self.missing_messages
        if self.list_confirmed and self.missing_blinds:
            return "blind", self.missing_blinds
        return "", []

    def awaiting(self) -> str:
        """Who the third party waits for (names only, no secret)."""
        if not self.shuffled:
            missing = self.missing_messages
            if not missing:
                return f"Every blinded message is in: shuffle them and send the list to {self.gm}."
            return (f"Waiting for the blinded message of {_join(missing)} (each player adds their own blind to "
                    "the message the GM sent them and sends the result to the third party).")
        if not self.list_confirmed:
            return f"Waiting for {self.gm} to confirm receipt of the list of blinded messages."
        if self.missing_blinds:
            return f"Waiting for the blinding factor of {_join(self.missing_blinds)}."
        if not self.final_sent:
            return f"Waiting for {self.gm} to send every player their final message."
        return "Nothing: the blinds can be published."

    def as_dict(self) -> dict[str, Any]:
        return {"players": list(self.players), "digits": self.digits, "gm": self.gm, "key": self.key,
                "hashes": [list(x) for x in self.hashes],
                "messages": [list(x) for x in self.messages], "shuffled": list(self.shuffled),
                "list_confirmed": self.list_confirmed, "blinds": [list(x) for x in self.blinds],
                "final_sent": self.final_sent}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ThirdPartyState:
        return cls(players=tuple(d["players"]), digits=d["digits"], gm=d.get("gm", "the GM"), key=d.get("key", ""),
                   hashes=tuple(tuple(x) for x in d.get("hashes", ())),
                   messages=tuple(tuple(x) for x in d.get("messages", ())),
                   shuffled=tuple(d.get("shuffled", ())), list_confirmed=d.get("list_confirmed", False),
                   blinds=tuple(tuple(x) for x in d.get("blinds", ())), final_sent=d.get("final_sent", False))


# --------------------------------------------------------------------------


def awaiting(state: GMState | ThirdPartyState) -> str:
    """Whom the protocol waits for, in words for a status mail. Names people
    and steps, never a secret."""
    if isinstance(state, ThirdPartyState):
        return state.awaiting()
    tp = state.third_party
    if state.phase == AWAITING_LIST:
        return (f"Waiting for {tp} to send the list of blinded messages (each player adds their own blind to the "
                f"message the GM sent them and sends the result to {tp}).")
    if state.phase == AWAITING_BLINDS:
        return f"Waiting for {tp} to confirm that it holds every player's blinding factor."
    if state.phase == READY:
        return "Waiting for the GM to send every player their final message."
    if state.phase == AWAITING_RECEIPTS:
        missing = [p for p in state.players if p not in state.receipts]
        return f"Waiting for {_join(missing)} to confirm receipt of their final message."
    if state.phase == AWAITING_PUBLICATION:
        return f"Waiting for {tp} to publish the players' blinding factors."
    if state.phase == AWAITING_TRACE:
        return (f"Waiting for {tp} to trace its list (who sent each entry): {state.rerun_reason}. "
                "Or the master sends RERUN for a fresh round.")
    if state.phase == DONE:
        return "Nothing: every player's power is known."
    return f"The protocol must be run again: {state.rerun_reason}."


__all__ = [
    "AWAITING_BLINDS",
    "AWAITING_LIST",
    "AWAITING_PUBLICATION",
    "AWAITING_RECEIPTS",
    "AWAITING_TRACE",
    "DIGITS",
    "DONE",
    "PHASES",
    "READY",
    "RERUN",
    "Correction",
    "Decoding",
    "Format",
    "GMState",
    "ProtocolError",
    "Record",
    "ThirdPartyState",
    "Verdict",
    "add",
    "awaiting",
    "blinds_collected",
    "blinds_published",
    "canonical_players",
    "check_claim",
    "check_digits",
    "deal",
    "make_format",
    "normal_token",
    "message_for",
    "power_messages",
    "power_width",
    "public_format",
    "random_digits",
    "receipt",
    "reveal",
    "start",
    "sub",
    "third_party_list",
    "token_hash",
    "traced",
    "unblind",
]
