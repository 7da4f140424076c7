"""The blinding protocol's numbers (docs/blinding.md): digit arithmetic
without carry, tokens, and the message formats that carry a power number
between verification digits. Pure: every random digit comes from a passed
DrawStream."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judge.rng import DrawStream

DIGITS = tuple("0123456789")
DEFAULT_LENGTH = 8
# make_format keeps at least this many verification digits, so that a wrong
# blind practically never turns a message into one of the right format.
MIN_VERIFICATION_DIGITS = 4

# What the format's draws are recorded as (DrawStream `what`).
WHAT_POSITION = "blinding-format-position"
WHAT_VERIFICATION = "blinding-format-digit"


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
