"""The `blind-random` method: powers assigned at random and kept secret from
the other players, by Murky's blinding protocol (docs/blinding.md).

The protocol's pure steps are judge.methods.blinding; this module holds the
method's settings. The game runs by mail only (judge/blindmail.py): there is
nothing to resolve offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

NAME = "blind-random"


class ParamError(ValueError):
    pass


@dataclass(frozen=True)
class Params:
    third_party: str | None = None  # the address of the third party: a person, or another judge

    def as_dict(self) -> dict[str, Any]:
        return {"third_party": self.third_party}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    raw = dict(raw or {})
    unknown = set(raw) - {"third_party"}
    if unknown:
        raise ParamError(f"unknown params: {', '.join(sorted(unknown))}")
    return Params(raw.get("third_party"))


def check_params(U: int, params: Params) -> list[str]:
    if not params.third_party:
        raise ParamError("the blinding protocol needs a third party: SET THIRDPARTY address")
    return []


def step_stream(seed: bytes, step: str):
    """The GM side draws from one stream per step ("start": format, G and the
    first messages; "final": who gets which list entry), both from the game's
    seed (commit and reveal, docs/randomness.md)."""
    import hashlib

    from judge.rng import DrawStream

    return DrawStream(hashlib.sha256(seed + b"blinding " + step.encode()).digest())


def replay(data: Mapping[str, Any], seed: bytes) -> dict[str, Any]:
    """Re-run the GM's side of a finished run from its input (players, powers,
    the third party's list and the published blinds) and the seed: the
    record `judge verify` compares with the one the master was sent."""
    from judge.methods import blinding

    first_stream, final_stream = step_stream(seed, "start"), step_stream(seed, "final")
    state, first = blinding.start(data["players"], data["powers"], first_stream,
                                  third_party=data.get("third_party", "the third party"))
    state = blinding.blinds_collected(blinding.third_party_list(state, data["blinded_list"]))
    state, final = blinding.unblind(state, final_stream)
    state, record = blinding.blinds_published(state, data["blinds"])
    return {
        "seed": seed.hex(),
        "format": state.fmt.pattern,
        "gm_blind": state.gm_blind,
        "first": first,
        "final": final,
        "assignment": dict(record.assignment),
        "corrections": [c.as_dict() for c in record.corrections],
        "rerun_reason": record.rerun_reason,
        "draws": [{"step": "start", **d} for d in first_stream.records()]
        + [{"step": "final", **d} for d in final_stream.records()],
    }
