"""A LUI game's settings as the shell stores them (games.params): the
preset, the settings changed from it, the prizes, the players, the GM's
limits and board mails. Pure. engine.py names all of it (issue 26).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from judge.methods.lui.settings import Settings


# --------------------------------------------------------------------------
# The game's settings as the shell stores them (games.params)
# --------------------------------------------------------------------------

class ParamError(ValueError):
    """Settings the game cannot be played with."""


# Players a preset's game takes unless the GM says otherwise (SET PLAYERS).
PRESET_PLAYERS = {"F11": 11, "F8": 8}
_NOT_SETTINGS = ("preset", "prizes", "players", "garnets", "priority", "gm_limits", "board_mails")
# How the board goes out by mail when it changes (the GM's SET BOARDMAIL):
# each player's board after every bid, one digest an hour, or none (the web
# board). By default a digest for 9 players or more: a bid of an F11 game
# composed ten board mails (issue 26: 252 mails, 12 MB a game).
BOARD_MAILS = ("bid", "digest", "none")
DIGEST_FROM_PLAYERS = 9
# The shortest pregame and quiet period the GM may set by mail (SET PREGAME,
# SET QUIET), unless the operator's [methods.lui] gm_limits say otherwise.
GM_LIMITS = {"pregame_hours": 1.0, "quiet_hours": 1.0}
GM_LONGEST = 30 * 24.0


@dataclass(frozen=True)
class Params:
    """games.params of a LUI game: the preset, the settings changed from it,
    the prize table, the number of players, each player's starting garnets
    and priority (by address: they are set before the names are known)."""

    preset: str = "F11"
    changes: tuple[tuple[str, object], ...] = ()  # Settings fields: timer_hours, starting_chips, chip_price...
    prizes: tuple[tuple[str, tuple[int, int]], ...] = ()
    players: int | None = None
    garnets: tuple[tuple[str, int], ...] = ()
    priority: tuple[tuple[str, int], ...] = ()
    gm_limits: tuple[tuple[str, float], ...] = ()  # the operator's: the shortest durations the GM may set
    board_mails: str | None = None  # bid, digest or none; None: by the number of players

    @property
    def board_mode(self) -> str:
        if self.board_mails is not None:
            return self.board_mails
        return "digest" if self.seats >= DIGEST_FROM_PLAYERS else "bid"

    def shortest(self, key: str) -> float:
        return dict(self.gm_limits).get(key, GM_LIMITS[key])

    @property
    def seats(self) -> int:
        return self.players if self.players is not None else PRESET_PLAYERS.get(self.preset, 11)

    def settings(self) -> Settings:
        from judge.methods.lui.settings import SettingsError, preset

        try:
            out = preset(self.preset, **dict(self.changes))
            if self.prizes:
                out = out.with_prizes(dict(self.prizes))
        except (SettingsError, TypeError) as err:
            raise ParamError(str(err)) from err
        return out

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"preset": self.preset, **dict(self.changes)}
        if self.prizes:
            out["prizes"] = {s: list(p) for s, p in self.prizes}
        if self.players is not None:
            out["players"] = self.players
        if self.garnets:
            out["garnets"] = dict(self.garnets)
        if self.priority:
            out["priority"] = dict(self.priority)
        if self.gm_limits:
            out["gm_limits"] = dict(self.gm_limits)
        if self.board_mails is not None:
            out["board_mails"] = self.board_mails
        return out


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, object] | None, U: int) -> Params:
    raw = dict(raw or {})
    name = str(raw.get("preset", "F11"))
    changes = tuple(sorted((k, v) for k, v in raw.items() if k not in _NOT_SETTINGS))
    prizes = raw.get("prizes") or {}
    if not isinstance(prizes, Mapping):
        raise ParamError("prizes map seats to [garnets, priority]")
    players = raw.get("players")
    if players is not None and (not isinstance(players, int) or isinstance(players, bool) or players < 2):
        raise ParamError(f"players must be a whole number, at least 2, not {players!r}")
    tables = []
    for label in ("garnets", "priority"):
        table = raw.get(label) or {}
        if not isinstance(table, Mapping):
            raise ParamError(f"{label} map players to numbers")
        tables.append(tuple(sorted((str(k), int(v)) for k, v in table.items())))
    try:
        prize_items = tuple(sorted((str(s).upper(), (int(v[0]), int(v[1]))) for s, v in prizes.items()))
    except (TypeError, ValueError, IndexError) as err:
        raise ParamError(f"a prize is [garnets, priority]: {err}") from err
    limits = raw.get("gm_limits") or {}
    if not isinstance(limits, Mapping) or not set(limits) <= set(GM_LIMITS) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= GM_LONGEST for v in limits.values()):
        raise ParamError(f"gm_limits maps {' and '.join(GM_LIMITS)} to the shortest hours the GM may set")
    board_mails = raw.get("board_mails")
    if board_mails is not None and board_mails not in BOARD_MAILS:
        raise ParamError(f"board_mails is one of {', '.join(BOARD_MAILS)}, not {board_mails!r}")
    params = Params(name, changes, prize_items, players, tables[0], tables[1],
                    tuple(sorted((k, float(v)) for k, v in limits.items())), board_mails)
    params.settings()  # ParamError if unusable
    return params


def check_params(U: int, params: Params) -> list[str]:
    """The GM's warnings (the placeholder prizes); ParamError if unusable."""
    return params.settings().warnings()
