"""Orders written on an offer sheet, checked against the variant's map and
the units on the board (the `diplomacy` package's maps).

`Board` holds one position: which unit stands where and whose it is, and
every order the map allows there (the package's own list, so that an order
accepted here is one its adjudicator takes). `Board.resolve` turns a
RawOrder into the canonical text ("A PAR - BUR", "F STP/SC H",
"A MUN S A BER - SIL", "F NTH C A LON - NWY", "A LON - NWY VIA") or raises
OrderError with the reason a player reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Mapping

from judge.methods.payola.sheet import RawOrder, UnitRef


class OrderError(ValueError):
    """An order the map (or the position) does not allow: the reason."""


class BoardError(ValueError):
    """A position that cannot be set up (unknown variant, bad unit)."""


_TYPE_WORD = {"A": "an army", "F": "a fleet"}


@cache
def _map(variant: str) -> Any:
    from diplomacy.engine.map import Map

    try:
        m = Map(variant)
    except Exception as err:  # the package raises bare exceptions for an unknown map
        raise BoardError(f"unknown variant {variant!r}") from err
    if not m.locs:
        raise BoardError(f"unknown variant {variant!r}")
    return m


def power_names(variant: str) -> list[str]:
    """The variant's powers, title case, in the map's (alphabetical) order."""
    return [p.title() for p in sorted(_map(variant).powers)]


def power_letters(variant: str) -> dict[str, str]:
    """Power -> the letter that stands for it in an acceptance list (its
    initial, as DPjudge writes them: PayolaPower.abbrev)."""
    names = power_names(variant)
    letters = {n: n[0].upper() for n in names}
    if len(set(letters.values())) != len(letters):
        raise BoardError(f"variant {variant!r}: two powers share an initial; acceptance lists cannot name them")
    return letters


def initial_units(variant: str) -> dict[str, str]:
    """The variant's starting position: unit -> owner (title case)."""
    from diplomacy import Game

    game = Game(map_name=variant)
    return {u: p.title() for p, us in sorted(game.get_units().items()) for u in us}


@dataclass(frozen=True)
class Board:
    variant: str
    units: Mapping[str, str]  # canonical unit ("F STP/SC") -> owner
    at: Mapping[str, str]  # province (no coast) -> the unit standing there
    possible: frozenset[str]  # every order the map allows this position
    coasts: Mapping[tuple[str, str], tuple[str, ...]]  # (fleet, province) -> the coasts it can move to

    @property
    def map(self) -> Any:
        return _map(self.variant)

    def owner(self, unit: str) -> str:
        return self.units[unit]

    def resolve(self, raw: RawOrder, unit: str | None = None) -> str:
        """The canonical order, or OrderError. `unit`: the unit of the line's
        first order, for an alternative that leaves it out."""
        if raw.unit is not None:
            found = self.find_unit(raw.unit)
            if unit is not None and found != unit:
                raise OrderError(f"an alternative after '|' orders the same unit ({unit}), not {found}")
            unit = found
        assert unit is not None
        text = self._canonical(unit, raw)
        if text in self.possible:
            return text
        raise OrderError(self._why_not(unit, raw, text))

    def find_unit(self, ref: UnitRef) -> str:
        loc = self.province(ref.loc)
        base = loc.split("/")[0]
        unit = self.at.get(base)
        if unit is None:
            raise OrderError(f"there is no unit in {base}")
        if ref.type is not None and unit[0] != ref.type:
            raise OrderError(f"the unit in {base} is {_TYPE_WORD[unit[0]]} ({unit}), not {_TYPE_WORD[ref.type]}")
        if "/" in loc and loc != unit.split()[1]:
            raise OrderError(f"the unit in {base} is {unit}, not on {loc}")
        return unit

    def province(self, written: str) -> str:
        """A province (maybe with its coast) as the map names it."""
        m = self.map
        name = written.upper()
        base, _, coast = name.partition("/")
        found = base if base in _locs(self.variant) else m.aliases.get(base)
        if found is None or found.split("/")[0] not in _locs(self.variant):
            raise OrderError(f"there is no province {base} on the {self.variant} map")
        found = found.split("/")[0]
        if coast:
            coast = coast.rstrip("C") or coast
            full = f"{found}/{coast[:1]}C"
            if full not in _locs(self.variant):
                coasts = [c for c in m.loc_coasts.get(found, ()) if "/" in c]
                raise OrderError(f"{found} has no coast {written.split('/', 1)[1].upper()}"
                                 + (f" (its coasts: {', '.join(coasts)})" if coasts else " (it has no coasts)"))
            return full
        return found

    def _canonical(self, unit: str, raw: RawOrder) -> str:
        if raw.kind == "H":
            return f"{unit} H"
        if raw.kind == "-":
            dest = self.province(raw.dest or "")
            if unit[0] == "A":
                dest = dest.split("/")[0]  # an army goes to the province, whatever coast was named
            elif "/" not in dest:
                dest = self._coast_for(unit, dest)
            text = f"{unit} - {dest}"
            if raw.via:
                return text + " VIA"
            if text not in self.possible and text + " VIA" in self.possible:
                return text + " VIA"  # not adjacent: only a convoy can take it there (DPjudge, the same)
            return text
        target = self.find_unit(raw.target) if raw.target else ""
        if raw.kind == "S":
            if raw.dest is None:
                return f"{unit} S {target}"
            # Support goes to a province, never a coast (DPjudge, pages/Questions).
            return f"{unit} S {target} - {self.province(raw.dest).split('/')[0]}"
        return f"{unit} C {target} - {self.province(raw.dest or '').split('/')[0]}"

    def _coast_for(self, unit: str, dest: str) -> str:
        """A fleet's move to a province with coasts: the one coast it can
        reach (DPjudge's defaultCoast); two reachable coasts must be named."""
        reach = self.coasts.get((unit, dest), ())
        if len(reach) == 1:
            return reach[0]
        if len(reach) > 1:
            raise OrderError(f"{unit} can reach {' and '.join(sorted(reach))}: name the coast")
        return dest

    def _why_not(self, unit: str, raw: RawOrder, text: str) -> str:
        m = self.map
        loc = unit.split()[1]
        if raw.kind == "-":
            dest = text.split(" - ")[1].split()[0]
            if dest.split("/")[0] == loc.split("/")[0]:
                return f"{unit} cannot move to where it stands"
            if unit[0] == "A" and m.area_type(dest) == "WATER":
                return f"an army cannot move to {dest}: it is water"
            if unit[0] == "F" and m.area_type(dest.split("/")[0]) == "LAND":
                return f"a fleet cannot move to {dest}: it is inland"
            if raw.via:
                return f"{unit} cannot reach {dest} by convoy: no chain of fleets leads there"
            return f"{dest} is not adjacent to {loc}: {unit} cannot move there"
        if raw.kind == "S":
            target = text.split(" S ")[1]
            if target.split(" - ")[0] == unit:
                return f"{unit} cannot support itself"
            where = target.split(" - ")[1] if " - " in target else target.split()[1].split("/")[0]
            if where == loc.split("/")[0]:
                return f"{unit} cannot support a move into {where}, where it stands itself"
            if " - " in target and target.split()[1].split("/")[0] == where:
                return f"{target.split(' - ')[0]} cannot move to where it stands"
            if " - " in target and not any(o.startswith(target) for o in self._moves_of(target.split(" - ")[0])):
                return f"{target.split(' - ')[0]} cannot move to {where}: there is nothing to support"
            return f"{unit} cannot support {target}: it cannot reach {where}"
        if raw.kind == "C":
            if unit[0] != "F":
                return f"only a fleet convoys; {unit} is an army"
            target = text.split(" C ")[1]
            if target[0] != "A":
                return f"only an army is convoyed; {target.split(' - ')[0]} is a fleet"
            if m.area_type(loc) != "WATER":
                return f"{unit} is on a coast: only a fleet at sea convoys"
            return f"{unit} cannot convoy {target}: no chain of fleets through {loc} leads there"
        return f"the map does not allow {text}"

    def _moves_of(self, unit: str) -> list[str]:
        return [o for o in self.possible if o.startswith(unit + " - ")]


# The amount and kind of an offer line ("4 :", "2*5#3 !", ":"), the orders
# after it, and a comment.
_LINE = re.compile(r"^(\s*(?:[0-9][0-9*#+\s]*)?[:!>@&]\s*)?([^%]*)(%.*)?$")
_ALTERNATIVE_WORDS = 16  # DPjudge's longest order is ~12 words; longer is no order (and would cost more)
# A line to rewrite: a few orders in DPjudge's words (its players write one to
# three); the package's alias search costs a few hundred microseconds an
# order, so a line of 200 alternatives is refused as written instead.
_LINE_WORDS = 48


def dpjudge_form(variant: str, line: str) -> str | None:
    """An offer line whose orders are written as DPjudge's players write
    them, rewritten in the sheet grammar's form, as DPjudge's expandOrder
    reads them (the `diplomacy` package's Map.compact and rearrange are its
    Map.norm, alias and rearrange): keywords (ARMY, SUPPORTS, MOVES TO,
    HOLDS, CONVOYS...), place names of several words (NORTH SEA), a coast in
    brackets (STP(SC)) or as a word (SPA NC), a hyphen left out (A PAR BUR),
    a power's name or adjective (FRENCH A PAR H), and a support to hold
    written with H (A PAR S A BUR H: expandOrder drops the H). None when
    nothing changes, or an alternative (or the line) is too long to be
    DPjudge's orders."""
    m = _LINE.match(line)
    if m is None:
        return None
    prefix, body, comment = m.group(1) or "", m.group(2), m.group(3) or ""
    parts = body.split("|")
    if len(body.split()) > _LINE_WORDS or any(len(p.split()) > _ALTERNATIVE_WORDS for p in parts):
        return None
    board_map = _map(variant)
    first = _expand(board_map, parts[0])
    if first is None or len(first) < 2:
        return None
    unit = first[:2] if first[0] in ("A", "F") else first[:1]
    out = [" ".join(first)]
    for part in parts[1:]:
        words = board_map.compact(part)
        own = bool(words) and (words[0] in ("A", "F") or words[0].split("/")[0] == unit[-1].split("/")[0])
        expanded = _expand(board_map, part if own else " ".join(unit) + " " + part)
        if expanded is None:
            return None
        out.append(" ".join(expanded if own else expanded[len(unit):]))
    rewritten = (prefix + " | ".join(out) + (" " + comment if comment else "")).strip()
    return None if rewritten == line.strip() else rewritten


def _expand(board_map: Any, text: str) -> list[str] | None:
    """The words of one order as expandOrder makes them; None if one of them
    is no word of the map (expandOrder's UNKNOWN PLACENAME: the line is then
    refused as written, with its column)."""
    words = board_map.rearrange(board_map.compact(text))
    if any(kind < 0 for _, kind in board_map.vet(words, 1)):
        return None
    powers = set(board_map.powers)
    words = [w for w in words if w not in powers]
    if len(words) > 2 and "S" in words and words[-1] == "H":
        words = words[:-1]  # "u xxx S xxx H": the H of a support to hold (expandOrder)
    return words


@cache
def _locs(variant: str) -> frozenset[str]:
    return frozenset(loc.upper() for loc in _map(variant).locs)


def board(variant: str, units: Mapping[str, str]) -> Board:
    """The position: units (unit -> owner, title case or upper) on the
    variant's map. BoardError if the variant, a unit or an owner is wrong.
    The last few positions are kept: every sheet of a phase, checked as it
    comes, is checked against the same one."""
    try:
        return _board(variant, tuple(sorted(units.items(), key=repr)))
    except TypeError as err:  # an unhashable owner
        raise BoardError(f"units: unit -> owner's name, not {units!r}") from err


@lru_cache(maxsize=16)
def _board(variant: str, units: tuple[tuple[str, str], ...]) -> Board:
    from diplomacy import Game

    m = _map(variant)
    powers = {p.upper() for p in m.powers}
    by_power: dict[str, list[str]] = {}
    at: dict[str, str] = {}
    canonical: dict[str, str] = {}
    for unit, owner in units:
        text = " ".join(str(unit).upper().split())
        if not m.is_valid_unit(text):
            raise BoardError(f"unit {unit!r} cannot stand on the {variant} map")
        if not isinstance(owner, str) or owner.upper() not in powers:
            raise BoardError(f"unit {unit}: owner {owner!r} is not a power of {variant}")
        base = text.split()[1].split("/")[0]
        if base in at:
            raise BoardError(f"two units in {base}: {at[base]} and {text}")
        at[base] = text
        canonical[text] = owner.upper().title()
        by_power.setdefault(owner.upper(), []).append(text)
    game = Game(map_name=variant)
    game.clear_units()
    for power, us in sorted(by_power.items()):
        game.set_units(power, us)
    possible = frozenset(o for orders in game.get_all_possible_orders().values() for o in orders)
    coasts: dict[tuple[str, str], list[str]] = {}
    for order in possible:
        words = order.split()
        if len(words) == 4 and words[2] == "-" and "/" in words[3]:
            coasts.setdefault((f"{words[0]} {words[1]}", words[3].split("/")[0]), []).append(words[3])
    return Board(variant, canonical, at, possible, {k: tuple(sorted(v)) for k, v in coasts.items()})
