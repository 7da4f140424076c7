"""The offline resolver: a `judge resolve` file in, a result record out.

Pure: the same file and seed always give the same record. The daemon uses the
same function, so a game's recorded input and seed replay to its result.
"""

from __future__ import annotations

from typing import Any

from judge import submission
from judge.methods import blind_auction as ba
from judge.methods import get_method
from judge.rng import DrawStream
from judge.variants import STANDARD_POWERS, make_power_list


class ResolveInputError(ValueError):
    """A resolver file that cannot be used; the message says which field."""


def _params(raw: Any, U: int) -> ba.Params:
    base = ba.default_params(U).as_dict()
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ResolveInputError("params must be an object like {\"T\": 140, \"M\": 70, \"D\": 1}")
    unknown = set(raw) - {"T", "M", "D"}
    if unknown:
        raise ResolveInputError(f"unknown params: {', '.join(sorted(unknown))} (blind-auction takes T, M, D)")
    merged = {**base, **raw}
    if merged["D"] == "T/U":
        if not isinstance(merged["T"], int) or merged["T"] % U:
            raise ResolveInputError(f"D = T/U needs T divisible by U = {U}")
        merged["D"] = merged["T"] // U
    return ba.Params(**merged)


def run_resolution(data: dict[str, Any], seed: bytes) -> dict[str, Any]:
    """Resolve a resolver file's content with `seed`; a JSON-ready record."""
    if not isinstance(data, dict):
        raise ResolveInputError("the file must hold a JSON object")
    method = data.get("method", "blind-auction")
    try:
        module = get_method(str(method))
    except ValueError as err:
        raise ResolveInputError(str(err)) from err
    try:
        powers = make_power_list(data.get("powers") or STANDARD_POWERS)
    except ValueError as err:
        raise ResolveInputError(f"powers: {err}") from err
    try:
        params = _params(data.get("params"), len(powers))
        warnings = module.check_params(len(powers), params)
    except (ba.ParamError, TypeError) as err:
        raise ResolveInputError(f"params: {err}") from err
    subs = data.get("submissions")
    if not isinstance(subs, dict) or not subs:
        raise ResolveInputError("submissions must be an object {player: text}")
    if len(subs) > len(powers):
        raise ResolveInputError(f"{len(subs)} players for {len(powers)} powers")
    bidlists: dict[str, ba.BidList] = {}
    rejected: dict[str, str] = {}
    violations: dict[str, list[dict[str, Any]]] = {}
    for player, text in subs.items():
        if not isinstance(text, str):
            raise ResolveInputError(f"submission of {player!r} must be text")
        checked = submission.check(submission.parse_text(text), powers, params)
        if checked.ok:
            bidlists[player] = checked.bids
        else:
            # The seed: a list that breaks a rule stands as No Preference.
            bidlists[player] = ba.NO_PREFERENCE
            rejected[player] = "; ".join(v.message for v in checked.violations)
            violations[player] = [v.as_dict() for v in checked.violations]
    stream = DrawStream(seed)
    outcome = module.resolve(powers, params, bidlists, stream)
    return {
        "method": module.NAME,
        "seed": seed.hex(),
        "powers": powers.as_json(),
        "params": params.as_dict(),
        "warnings": warnings,
        "assignment": outcome.assignment,
        "unassigned": outcome.unassigned,
        "rejected": rejected,
        "violations": violations,
        "no_preference": outcome.no_preference,
        "chart": outcome.chart,
        "steps": [s.as_dict() for s in outcome.steps],
        "draws": outcome.draws,
    }
