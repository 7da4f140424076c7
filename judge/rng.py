"""The judge's one source of chance: a SHA-256 counter stream.

Every random draw of a resolution comes from a DrawStream built from one seed,
and every draw is recorded, so anybody can replay a result with nothing but
the seed and the algorithm in docs/randomness.md:

    word(k)     = first 8 bytes, big-endian, of SHA-256(seed || k as 8-byte big-endian)
                  for k = 0, 1, 2, ...  (each word is used once, in order)
    below(n)    = with k = max(1, ceil(bitlen(n-1) / 64)) words per try (k = 1
                  for every n <= 2**64): join the next k words big-endian into w;
                  if w >= 2**(64k) - (2**(64k) mod n) the k words are rejected
                  and k new ones taken; else the result is w mod n

Python's `random` is deliberately not used: its algorithms may change between
versions and it cannot be re-implemented from a short description.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Sequence, TypeVar

T = TypeVar("T")

WORD_BYTES = 8
SEED_BYTES = 32
_ONE_WORD = 1 << (8 * WORD_BYTES)  # a word's span: below(n) takes one word a try up to it


def new_seed() -> bytes:
    """A fresh secret seed for a resolution (the only use of OS randomness)."""
    return os.urandom(SEED_BYTES)


def parse_seed(text: str) -> bytes:
    """A seed written as hexadecimal (as `judge resolve --seed` takes it)."""
    cleaned = text.strip().lower().removeprefix("0x")
    try:
        seed = bytes.fromhex(cleaned)
    except ValueError as err:
        raise ValueError(f"seed must be hexadecimal, got {text!r}") from err
    if not seed:
        raise ValueError("seed must not be empty")
    return seed


def word(seed: bytes, counter: int) -> int:
    """Word number `counter` of the stream for `seed` (see module docstring)."""
    digest = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
    return int.from_bytes(digest[:WORD_BYTES], "big")


@dataclass
class Draw:
    """One recorded draw: what was drawn among which options, and how."""

    what: str
    options: list[Any]
    index: int
    chosen: Any
    counter: int  # stream position of the accepted word
    rejected: int  # words rejected before it (almost always 0)
    context: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        record = {
            "what": self.what,
            "options": list(self.options),
            "n": len(self.options),
            "index": self.index,
            "chosen": self.chosen,
            "counter": self.counter,
            "rejected": self.rejected,
        }
        if self.context:  # (set after: no dictionary built to be unpacked, a resolution records several draws)
            record["context"] = self.context
        return record


class DrawStream:
    """A seeded, recorded stream of uniform draws."""

    def __init__(self, seed: bytes) -> None:
        if not seed:
            raise ValueError("seed must not be empty")
        self.seed = bytes(seed)
        self.counter = 0
        self.draws: list[Draw] = []

    @property
    def seed_hex(self) -> str:
        return self.seed.hex()

    def _next_word(self) -> int:
        w = word(self.seed, self.counter)
        self.counter += 1
        return w

    def below(self, n: int) -> tuple[int, int, int]:
        """A uniform integer in [0, n): (value, counter of the first word of
        the accepted try, number of rejected tries). Any n >= 1: counts of
        tied assignments reach 36! and need several words (module docstring)."""
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        if n <= _ONE_WORD:  # one word a try (k = 1), the commonest draw, without the general loop
            limit = _ONE_WORD - (_ONE_WORD % n)
            rejected = 0
            while True:
                counter = self.counter
                w = self._next_word()
                if w < limit:
                    return w % n, counter, rejected
                rejected += 1
        k = max(1, -(-(n - 1).bit_length() // (8 * WORD_BYTES)))
        span = 1 << (8 * WORD_BYTES * k)
        limit = span - (span % n)
        rejected = 0
        while True:
            counter = self.counter
            w = 0
            for _ in range(k):
                w = (w << (8 * WORD_BYTES)) | self._next_word()
            if w < limit:
                return w % n, counter, rejected
            rejected += 1

    def choice(self, options: Sequence[T], *, what: str, **context: Any) -> T:
        """Draw one of `options` uniformly and record the draw.

        The caller passes the options in a canonical order (never an order that
        depends on how the input was written), so that the draw is replayable.
        A single option is returned without consuming the stream.
        """
        if not options:
            raise ValueError("choice() from no options")
        if len(options) == 1:
            return options[0]
        index, counter, rejected = self.below(len(options))
        chosen = options[index]
        # (`context` is this call's own dictionary: kept as it is)
        self.draws.append(Draw(what, list(options), index, chosen, counter, rejected, context))
        return chosen

    def records(self) -> list[dict[str, Any]]:
        return [d.as_dict() for d in self.draws]
