"""Resolution records: a `judge resolve` file in, a JSON-ready record out.

Pure: the same file and seed always give the same record. The daemon builds
the same file from a game and calls the same function, so a game's recorded
input and seed replay to its result. Each method's package has the module
(its Method's REPLAY) that reads the method's submissions (texts as players
mail them) and writes its record.
"""

from __future__ import annotations

import importlib
from typing import Any

from judge.methods import METHODS, get_method
from judge.methods.interface import Method
from judge.rng import DrawStream
from judge.resolution.errors import ResolveInputError
from judge.variants import STANDARD_POWERS, make_power_list

__all__ = ["RESOLVERS", "ResolveInputError", "run_resolution"]



def __getattr__(name: str) -> Any:
    if name == "RESOLVERS":
        # Each method with an offline resolution: the module that reads its
        # file (made when asked: it imports every method's package).
        return {n: m.REPLAY for n, m in METHODS.items() if m.REPLAY}
    raise AttributeError(name)


def run_resolution(data: dict[str, Any], seed: bytes) -> dict[str, Any]:
    """Resolve a resolver file's content with `seed`; a JSON-ready record."""
    if not isinstance(data, dict):
        raise ResolveInputError("the file must hold a JSON object")
    try:
        module = get_method(str(data.get("method", "blind-auction")))
    except ValueError as err:
        raise ResolveInputError(str(err)) from err
    return module.resolve_file(data, seed)


def resolve_assignment(module: Method, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
    """The file of an assignment method (Method.resolve_file's default):
    powers and each player's submission in, the method's REPLAY module's
    record out, with the method, seed and powers."""
    try:
        powers = make_power_list(data.get("powers") or STANDARD_POWERS)
    except ValueError as err:
        raise ResolveInputError(f"powers: {err}") from err
    subs = data.get("submissions")
    if not isinstance(subs, dict) or not subs:
        raise ResolveInputError("submissions must be an object {player: text}")
    for player, text in subs.items():
        if not isinstance(text, str):
            raise ResolveInputError(f"submission of {player!r} must be text")
    if module.REPLAY is None:
        raise ResolveInputError(f"{module.NAME} runs by mail only (docs/blinding.md); it has no offline resolution")
    # Only the method's own reader: a Blind Auction needs no numpy.
    resolver = importlib.import_module(module.REPLAY)
    record = resolver.resolve(powers, data.get("params"), subs, DrawStream(seed))
    return {"method": module.NAME, "seed": seed.hex(), "powers": powers.as_json(), **record}
