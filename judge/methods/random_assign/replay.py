"""The random method's record: players in, a uniformly random assignment out."""

from __future__ import annotations

from typing import Any, Mapping

from judge.methods.random_assign import engine as random_assign
from judge.rng import DrawStream
from judge.resolution.errors import ResolveInputError
from judge.variants import PowerList


def resolve(powers: PowerList, raw_params: Any, subs: Mapping[str, str], stream: DrawStream) -> dict[str, Any]:
    try:
        params = random_assign.params_from(raw_params, len(powers))
        assignment = random_assign.resolve(powers, list(subs), stream)
    except random_assign.ParamError as err:
        raise ResolveInputError(str(err)) from err
    return {
        "params": params.as_dict(),
        "assignment": assignment,
        "unassigned": [p for p in powers.names if p not in assignment.values()],
        "draws": stream.records(),
    }
