"""What both sides of the blinding protocol's state machines check
(docs/blinding.md): the error they refuse a step with, the players and
powers of a round, and messages that come from outside."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class ProtocolError(ValueError):
    """A step asked for out of turn, or with input the protocol refuses.

    The text names who or what is wrong, never a secret (the format, the GM
    blind, a player's blind or another player's message)."""


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


def named_powers(powers: Iterable[Any]) -> tuple[str, ...]:
    names = tuple(p if isinstance(p, str) else p.name for p in powers)
    if not names:
        raise ProtocolError("the protocol needs at least one power")
    if len({n.casefold() for n in names}) != len(names):
        raise ProtocolError("a power is named twice in the power list")
    return names


def join_names(names: Iterable[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def message_arg(value: Any, length: int, label: str) -> str:
    """A message or blind from outside: N digits, else ProtocolError naming
    `label` (never echoing the value, which may be a secret)."""
    if not isinstance(value, str) or not value or not (value.isascii() and value.isdigit()):
        raise ProtocolError(f"{label} is not a number made of the digits 0-9")
    if len(value) != length:
        raise ProtocolError(f"{label} has {len(value)} digits; the protocol uses {length}")
    return value
