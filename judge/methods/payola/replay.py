"""`judge resolve` of one Payola movement phase, no database (issue 14):

    {"method": "payola", "variant": "standard", "phase": "S1901M",
     "units": {"A PAR": "France", "F LON": "England"},
     "balances": {"France": 48, "England": 48},
     "acceptance": {"France": "FEGRAIT", "England": "E?"},
     "sheets": {"France": "4 : A PAR - BUR", "England": "..."},
     "random_order": {"England": ["Turkey", "Austria", ...]},
     "rules": ["EBAYOLA"], "dummies": ["Italy"]}

`units` may be left out at the variant's first phase (its starting
position); `random_order` replays the "?" draws of a record; `rules` are
DPjudge's rules in force (rules.py; "tax", "taxes" and "cap" are read too,
though one movement phase pays no income); `dummies` the powers in civil
disorder (issue 26). The bribes choose each unit's order
(bribes.choose_orders) and the `diplomacy` package adjudicates them.
"""

from __future__ import annotations

import re
from typing import Any

from judge.methods.payola import bribes
from judge.methods.payola.orders import BoardError, initial_units
from judge.methods.payola.rules import RuleError, rules_from
from judge.resolution.errors import ResolveInputError
from judge.rng import DrawStream

NAME = "payola"
_KEYS = {"method", "variant", "phase", "units", "balances", "acceptance", "sheets", "random_order", "rules", "tax",
         "taxes", "cap", "dummies"}
_PHASE = re.compile(r"^[SF]\d{4}M$")


def resolve_file(data: Any, seed: bytes) -> dict[str, Any]:
    """The issue's file in, the record out (the same file and seed, the
    same record)."""
    if not isinstance(data, dict):
        raise ResolveInputError("the file must hold a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ResolveInputError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                                f"the keys are {', '.join(sorted(_KEYS))}")
    variant = data.get("variant", "standard")
    phase = data.get("phase", "S1901M")
    if not isinstance(variant, str):
        raise ResolveInputError("variant: a map's name, like standard")
    if not isinstance(phase, str) or not _PHASE.match(phase.upper()):
        raise ResolveInputError(f"phase: a movement phase like S1901M or F1905M, not {phase!r}")
    phase = phase.upper()
    for key in ("balances", "acceptance", "sheets", "random_order"):
        if not isinstance(data.get(key, {}), dict):
            raise ResolveInputError(f"{key}: an object keyed by power")
    units = data.get("units")
    dummies = data.get("dummies", [])
    if not isinstance(dummies, list) or not all(isinstance(d, str) for d in dummies):
        raise ResolveInputError('dummies: a list of powers, like ["Italy"]')
    try:
        rules = rules_from({k: data[k] for k in ("rules", "tax", "taxes", "cap") if k in data})
        if units is None:
            units = _start(variant, phase)
        elif not isinstance(units, dict):
            raise ResolveInputError('units: an object {"A PAR": "France", ...}')
        stream = DrawStream(seed)
        result = bribes.choose_orders(variant=variant, units=units, balances=data.get("balances", {}),
                                      acceptance=data.get("acceptance", {}), sheets=data.get("sheets", {}),
                                      stream=stream, random_order=data.get("random_order"), rules=rules,
                                      dummies=dummies)
    except (bribes.PayolaInputError, BoardError, RuleError) as err:
        raise ResolveInputError(str(err)) from err
    adjudication, after, dislodged = adjudicate(variant, phase, units, result.orders)
    return {
        "method": NAME,
        "seed": seed.hex(),
        "variant": variant,
        "phase": phase,
        "orders": result.orders,
        "spent": result.spent,
        "balances": result.balances,
        "reductions": result.reductions,
        "savings": result.savings,
        "passes": result.passes,
        "accepted": result.accepted,
        "rejected": [{"power": r.power, "line": r.line, "text": r.text, "reason": r.reason} for r in result.rejected],
        "random_order": result.random_order,
        "draws": result.draws,
        "adjudication": adjudication,
        "units_after": after,
        "dislodged": dislodged,
        "chart": result.chart,
        "rules": sorted(rules.flags),
        "dummies": sorted(d.title() for d in dummies),
        "dummy_holds": result.dummy_holds,
        "profits": result.profits,
    }


def _start(variant: str, phase: str) -> dict[str, str]:
    from diplomacy import Game

    try:
        first = Game(map_name=variant).get_current_phase()
    except Exception as err:  # the package raises bare exceptions for an unknown map
        raise ResolveInputError(f"unknown variant {variant!r}") from err
    if phase != first:
        raise ResolveInputError(f"units: needed for {phase} (only {variant}'s first phase, {first}, has a "
                                f"known position)")
    return initial_units(variant)


def adjudicate(variant: str, phase: str, units: dict[str, str], orders: dict[str, str]
               ) -> tuple[dict[str, list[str]], dict[str, str], list[str]]:
    """The chosen orders through the `diplomacy` package: per unit the
    engine's results (an empty list: the order succeeded), the units after
    the phase (unit -> owner) and the units dislodged."""
    from diplomacy import Game

    game = Game(map_name=variant)
    game.set_current_phase(phase)
    game.clear_units()
    owners: dict[str, list[str]] = {}
    for unit, owner in units.items():
        owners.setdefault(owner.upper(), []).append(" ".join(unit.upper().split()))
    for power, us in sorted(owners.items()):
        game.set_units(power, us)
    by_power: dict[str, list[str]] = {}
    for unit, order in orders.items():
        owner = next(p for p, us in owners.items() if unit in us)
        by_power.setdefault(owner, []).append(order)
    for power, given in sorted(by_power.items()):
        game.set_orders(power, given)
    game.process()
    results = game.result_history[phase]
    adjudication = {unit: sorted(str(r) for r in results.get(unit, [])) for unit in orders}
    after: dict[str, str] = {}
    dislodged: list[str] = []
    for power, us in sorted(game.get_units().items()):
        for u in us:
            if u.startswith("*"):
                dislodged.append(u[1:])
            else:
                after[u] = power.title()
    return adjudication, dict(sorted(after.items())), sorted(dislodged)


def resolve(powers: Any, raw_params: Any, submissions: Any, stream: Any) -> dict[str, Any]:
    """The assignment's resolver signature (judge.resolution): Payola is no
    assignment. A phase is resolved from its whole file (`resolve_file`,
    which `judge resolve FILE` reaches through the method)."""
    raise ResolveInputError("a Payola phase is resolved from its file (judge resolve FILE), not from submissions")
