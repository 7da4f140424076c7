"""The preference method's record: lists in, assignment, values and draws out."""

from __future__ import annotations

import re
from typing import Any, Mapping

from judge.methods.preference import engine as pref
from judge.rng import DrawStream
from judge.resolution.errors import ResolveInputError
from judge.variants import PowerList


_PREFIX = re.compile(r"\s*(?:set\s+(?:preferences?|pref)(?=\s|$))?\s*", re.IGNORECASE)


def strip_command(text: str) -> str:
    """The list of a submission written as a whole `SET PREFERENCE list` line."""
    return text[_PREFIX.match(text).end():]


def read_list(text: str, powers: PowerList, params: pref.Params, column: int | None = None) -> pref.Preference:
    """A submission as a player mails it: the list itself, or a whole
    `SET PREFERENCE list` line. Error columns count in `text` as given, or
    from `column` (where `text` starts in the player's line)."""
    start = _PREFIX.match(text).end()
    first = (column or 1) + start
    result = pref.read_preference(text[start:], powers, column=first)
    if result.random and params.mode == "list":
        raise pref.PreferenceError(first, "this game takes lists only (PRFLIST); * is not allowed")
    return result


def resolve(powers: PowerList, raw_params: Any, subs: Mapping[str, str], stream: DrawStream) -> dict[str, Any]:
    if raw_params is not None and not isinstance(raw_params, dict):
        raise ResolveInputError("params must be an object like {\"mode\": \"list\", \"shortcut\": true}")
    try:
        params = pref.params_from(raw_params, len(powers))
    except pref.ParamError as err:
        raise ResolveInputError(f"params: {err}") from err
    limit = pref.seats(len(powers), params)
    if len(subs) > limit:
        raise ResolveInputError(f"{len(subs)} players for {limit} places")
    lists: dict[str, pref.Preference] = {}
    rejected: dict[str, str] = {}
    for player, text in subs.items():
        try:
            lists[player] = read_list(text, powers, params)
        except pref.PreferenceError as err:
            # Like nJudge: an unusable list counts as no list (don't care).
            lists[player] = pref.Preference()
            rejected[player] = f"column {err.column}: {err}"
    outcome = pref.resolve(powers, params, lists, stream)
    duplex = params.players is not None
    return {
        "params": params.as_dict(),
        "preferences": {pl: {**lists[pl].as_json(), "text": lists[pl].as_text(powers)} for pl in outcome.assignment},
        "rejected": rejected,
        "assignment": {pl: (ws if duplex else (ws[0] if ws else None)) for pl, ws in outcome.assignment.items()},
        "values": outcome.values,
        "total": outcome.total,
        "stddev": outcome.stddev,
        "tied": outcome.tied,
        "exact": outcome.exact,
        # an estimated count carries its bounds (issue 12); a counted one is exact
        **({} if outcome.exact else {"tied_low": outcome.tied_bounds[0], "tied_high": outcome.tied_bounds[1]}),
        "unassigned": outcome.unassigned,
        "rounds": [r.as_dict() for r in outcome.rounds],
        "draws": outcome.draws,
    }
