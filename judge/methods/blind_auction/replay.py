"""The Blind Auction's record: bid texts in, assignment, chart and draws out."""

from __future__ import annotations

from typing import Any, Mapping

from judge.methods.blind_auction import submission
from judge.methods.blind_auction import engine as ba
from judge.rng import DrawStream
from judge.resolution.errors import ResolveInputError
from judge.variants import PowerList


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


def resolve(powers: PowerList, raw_params: Any, subs: Mapping[str, str], stream: DrawStream) -> dict[str, Any]:
    try:
        params = _params(raw_params, len(powers))
        warnings = ba.check_params(len(powers), params)
    except (ba.ParamError, TypeError) as err:
        raise ResolveInputError(f"params: {err}") from err
    if len(subs) > len(powers):
        raise ResolveInputError(f"{len(subs)} players for {len(powers)} powers")
    bidlists: dict[str, ba.BidList] = {}
    rejected: dict[str, str] = {}
    violations: dict[str, list[dict[str, Any]]] = {}
    for player, text in subs.items():
        checked = submission.check(submission.parse_text(text), powers, params)
        if checked.ok:
            bidlists[player] = checked.bids
        else:
            # The seed: a list that breaks a rule stands as No Preference.
            bidlists[player] = ba.NO_PREFERENCE
            rejected[player] = "; ".join(v.message for v in checked.violations)
            violations[player] = [v.as_dict() for v in checked.violations]
    outcome = ba.resolve(powers, params, bidlists, stream)
    return {
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
