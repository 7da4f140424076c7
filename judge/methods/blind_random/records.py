"""The GM's record of a round of the blinding protocol (docs/blinding.md):
how each final message decoded, the corrections, and the verdict on a
player's claim that their message was corrupted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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
