"""The `blind-random` method: powers assigned at random and kept secret from
the other players, by Murky's blinding protocol (docs/blinding.md).

The protocol's pure steps are blinding.py's; this module holds the method's
settings, the draws of its steps from the game's seed and the replay of a
round. The game runs by mail only (runs.py): there is nothing to resolve
offline.
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
    """A stream of the GM side's draws for one step, from the game's seed
    (commit and reveal, docs/randomness.md)."""
    import hashlib

    from judge.rng import DrawStream

    return DrawStream(hashlib.sha256(seed + b"blinding " + step.encode()).digest())


def start_stream(seed: bytes, round: int = 1):
    """Steps 1-2 (the format, G and who gets which GM-blinded message) of a
    round: from the game's seed alone, so every player can re-run them once
    the seed is revealed."""
    return step_stream(seed, "start" if round == 1 else f"start round {round}")


def final_stream(seed: bytes, final_key: bytes | None, round: int = 1):
    """Step 7 (who gets which list entry) of a round: from the seed and the
    round's final key, which only the master is given. With the seed alone a
    player could re-run this draw too and, with the published list and
    blinds, decode every player's power."""
    if final_key is None:  # a run from before the final key existed
        return step_stream(seed, "final")
    return step_stream(seed + final_key, "final" if round == 1 else f"final round {round}")


def final_key_commitment(final_key: bytes) -> str:
    import hashlib

    return hashlib.sha256(b"blinding final key " + final_key).hexdigest()


def replay(data: Mapping[str, Any], seed: bytes) -> dict[str, Any]:
    """Re-run a finished round from its record's input and the seed: the
    master's record (the GM side whole: `data` holds the final key) or a
    player's (`data` has "player": their own part only, player_replay)."""
    if "player" in data:
        return player_replay(data, seed)
    from judge.methods.blind_random import blinding

    rnd = data.get("round", 1)
    final_key = bytes.fromhex(data["final_key"]) if data.get("final_key") else None
    first_stream, last_stream = start_stream(seed, rnd), final_stream(seed, final_key, rnd)
    state, first = blinding.start(data["players"], data["powers"], first_stream,
                                  third_party=data.get("third_party", "the third party"), round=rnd)
    state = blinding.blinds_collected(blinding.third_party_list(state, data["blinded_list"]))
    state, final = blinding.unblind(state, last_stream)
    state, record = blinding.blinds_published(state, data["blinds"])
    if data.get("trace"):
        state, record = blinding.traced(state, data["trace"])
    out = {
        "seed": seed.hex(),
        "format": state.fmt.pattern,
        "gm_blind": state.gm_blind,
        "first": first,
        "final": final,
        "assignment": dict(record.assignment),
        "corrections": [c.as_dict() for c in record.corrections],
        "rerun_reason": record.rerun_reason,
        "draws": [{"step": "start", **d} for d in first_stream.records()]
        + [{"step": "final", **d} for d in last_stream.records()],
    }
    if final_key is not None:
        out["final_key_commitment"] = final_key_commitment(final_key)
    return out


def player_replay(data: Mapping[str, Any], seed: bytes) -> dict[str, Any]:
    """What one player can check of their own round with the revealed seed,
    without learning another's power (docs/blinding.md, "What a player can
    check"): the format, G and their own GM-blinded message re-run from the
    seed (only their place in the player order is needed); their final
    message is an entry of the published list minus G; and the published
    blind that decodes it gives their power.

    `data`: player, place (0-based, in the canonical order), players (how
    many), powers, round, first_message and final_message (as mailed to the
    player), blinded_list and blinds (as published), power (what the GM's
    record told the player)."""
    from judge.methods.blind_random import blinding

    stream = start_stream(seed, data.get("round", 1))
    n, place = int(data["players"]), int(data["place"])
    if not 0 <= place < n:
        raise ValueError(f"place {place} is not among {n} players")
    order = [f"player {i + 1}" for i in range(n)]
    order[place] = data["player"]
    powers = list(data["powers"])
    fmt, gm_blind, first = blinding.deal(order, len(powers), stream)
    mine = first[place][1]
    if mine != data["first_message"]:
        raise ValueError(f"the seed gives place {place + 1} the GM-blinded message {mine}, not "
                         f"{data['first_message']}, the one you were mailed")
    final = data["final_message"]
    if blinding.add(final, gm_blind) not in data["blinded_list"]:
        raise ValueError("your final message plus G is no entry of the published list: the GM side did not "
                         "send you one of the list's entries")
    found = blinding.reveal(final, data["blinds"], fmt)
    decoded = powers[found[0][1]] if len(found) == 1 else None
    return {
        "seed": seed.hex(),
        "format": fmt.pattern,
        "gm_blind": gm_blind,
        "first_message": mine,
        "blind": data["blinds"][found[0][0]] if len(found) == 1 else None,
        # Decodable: the published blinds decide, whatever the record says.
        # Not (a corrupted message): the GM side's correction, which the
        # player cannot check alone.
        "power": decoded if decoded is not None else data["power"],
        "decoded": decoded is not None,
        "draws": [{"step": "start", **d} for d in stream.records()],
    }
