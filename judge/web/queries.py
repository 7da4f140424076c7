"""What the public pages show, read from the store: plain dicts, no
addresses. Every function takes a session and only reads.

A player is named by their public name (`public_names`); the stored
results, keyed by address, are shown with each address replaced by that
name. A blind game (its Method's BLIND) shows no power beside a player, no
record, no seed and no secret.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from judge import games
from judge.games import active_players, find_game
from judge.templating import natural_key
from judge.methods import UnknownMethod, method_of
from judge.methods.interface import plays_variant
from judge.names import clean_name
from judge.store.models import Game, Player, Resolution, Submission


def _method(game: Game):
    try:
        return method_of(game)
    except UnknownMethod:  # a game of a method this judge no longer has: shown plainly
        return None


def is_blind(game: Game) -> bool:
    m = _method(game)
    return bool(m and m.BLIND)


def public_names(game: Game) -> dict[str, str]:
    """address -> the name the web shows: the player's name, never an
    address ("player 3" where the name holds an @); names that clash get
    their place in the game, so two players are never one name."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for k, p in enumerate(game.players, 1):
        name = clean_name(p.name)
        if not name or "@" in name:
            name = f"player {k}"
        key = name.casefold()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            name = f"{name} ({seen[key]})"
        out[p.address] = name
        out.setdefault(p.address.casefold(), name)
    return out


def seats(game: Game) -> int:
    """How many players the game takes (the shell's reading: LUI's board
    has its own number of seats, a duplex game fewer than its powers)."""
    try:
        return games.seats(game)
    except Exception:  # noqa: BLE001 - a method this judge lacks, or settings it cannot read
        return len(game.powers or [])


def _plays_variant(game: Game) -> bool:
    """LUI and PT3 give out seats of their own: no variant is shown for them."""
    method = _method(game)
    return method is None or plays_variant(method)


def games_list(session: Session) -> list[dict[str, Any]]:
    """Every game: name, method, variant, state, deadline (while one is
    awaited), players (active) of the seats."""
    counts = dict(session.execute(
        select(Player.game_id, func.count()).where(Player.status == "active").group_by(Player.game_id)).all())
    return [{"name": g.name, "method": g.method, "variant": g.variant if _plays_variant(g) else "-",
             "state": g.state,
             "deadline": g.deadline if g.state != "resolved" else None, "players": counts.get(g.id, 0),
             "seats": seats(g)}
            for g in session.scalars(select(Game).order_by(Game.name))]


def find(session: Session, name: str) -> Game | None:
    return find_game(session, name.lstrip("?"))


def latest_resolution(session: Session, game: Game) -> Resolution | None:
    return session.scalars(select(Resolution).where(Resolution.game_id == game.id)
                           .order_by(Resolution.id.desc()).limit(1)).first()


def submitted(session: Session, game: Game) -> set[int]:
    """Ids of the active players with a valid submission in (never what)."""
    return set(session.scalars(select(Submission.player_id).where(
        Submission.game_id == game.id, Submission.valid.is_(True)).distinct()))


def rename(value: Any, names: dict[str, str]) -> Any:
    """A stored record with every player's address (as a key, a value, or
    inside a text) replaced by the player's public name."""
    if not names:
        return value
    return _rename(value, names, _pattern(tuple(sorted(names))))


def _rename(value: Any, names: dict[str, str], pattern: re.Pattern) -> Any:
    if isinstance(value, dict):
        return {_rename(k, names, pattern): _rename(v, names, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, names, pattern) for v in value]
    if isinstance(value, str) and "@" in value:
        return pattern.sub(lambda m: names.get(m.group(0), names.get(m.group(0).casefold(), m.group(0))), value)
    return value


@lru_cache(maxsize=256)
def _pattern(addresses: tuple[str, ...]) -> re.Pattern:
    # Longest first: "ab@x.org" must not be cut short by "b@x.org".
    return re.compile("|".join(re.escape(a) for a in sorted(addresses, key=len, reverse=True)), re.IGNORECASE)


def rename_in_game(value: Any, names: dict[str, str]) -> Any:
    """A record whose players are named by the method's own names (LUI's
    address local parts: Method.names_in_game) with each such name, as a
    key, a value or a word of a text, replaced by names[name]."""
    if not names:
        return value
    # Inside a text only a name that cannot be a word of the text ("u1",
    # "john.doe1"): a player called "bid" is renamed where a value is the
    # name, not in "your bid of 5".
    wordy = [n for n in names if not n.isalpha() or len(n) > 8]
    pattern = re.compile(r"(?<![\w.@+-])(" + "|".join(re.escape(n) for n in sorted(wordy, key=len, reverse=True))
                         + r")(?![\w@+-]|\.\w)") if wordy else None

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str):
            if v in names:
                return names[v]
            return pattern.sub(lambda m: names[m.group(1)], v) if pattern else v
        return v

    return walk(value)


def _in_game(game: Game, method: Any) -> dict[str, str]:
    """name in the game's record -> address, for a live game whose record
    names players by names of its own (LUI: the part of the address before
    the @; its live module's `names_in_game(game)`); {} when the record
    names them by address, or the method cannot read its state."""
    live = getattr(method, "LIVE_GAME", None)
    hook = live.hook("names_in_game") if live is not None else None
    if hook is None or not game.method_state:
        return {}
    from judge.driver.view import game_view

    try:
        return dict(hook(game_view(game)))
    except Exception:  # noqa: BLE001 - a state the method cannot read: the record as it is
        return {}


def game_page(session: Session, game: Game) -> dict[str, Any]:
    """The public facts of one game, for templates/web/public/game.html.j2."""
    method = _method(game)
    blind = bool(method and method.BLIND)
    names = public_names(game)
    ins = submitted(session, game)
    asks = bool(method and method.SUBMITS) and game.state in ("bidding", "waiting")
    players = [{"name": names[p.address], "submitted": (p.id in ins) if asks else None,
                # A power is public once the results are out, except in a blind game.
                "power": p.power if (game.state == "resolved" and not blind) else None}
               for p in active_players(game)]
    # In the order the results mails list them: by name, numbers as numbers.
    players.sort(key=lambda row: natural_key(row["name"]))
    page: dict[str, Any] = {
        "name": game.name, "method": game.method, "variant": game.variant if _plays_variant(game) else None,
        "state": game.state, "seated": not _plays_variant(game),
        "deadline": game.deadline, "created_at": game.created_at, "resolved_at": game.resolved_at,
        "players": players, "seats": seats(game), "blind": blind, "asks": asks,
        "powers": [p.get("name") for p in (game.powers or []) if isinstance(p, dict)],
        "commitment": game.commitment, "results": None, "reveal": None, "record": False,
    }
    resolution = latest_resolution(session, game) if game.state == "resolved" else None
    if resolution is not None and not blind:
        page["resolution_id"] = resolution.id
        own = _in_game(game, method)
        page["results"] = rename_in_game(rename(resolution.result, names),
                                         {n: names.get(a, names.get(a.casefold(), "?")) for n, a in own.items()})
        page["results_folder"] = method.RESULTS if method else None
        reveal = resolution.reveal or {}
        page["reveal"] = {"seed": resolution.seed, "secret": reveal.get("secret"),
                          "commitment": reveal.get("commitment") or game.commitment,
                          "entropy": len(reveal.get("entropy") or [])}
        page["record"] = True
    return page


def public_record(session: Session, game: Game) -> dict[str, Any] | None:
    """The game's resolution.json as the web publishes it (None for a blind
    game or one not resolved): the sealed record of the results mails, with
    each address replaced by a stand-in that sorts as the addresses did
    (the replays read players in that order, so `judge verify` re-runs it
    the same) and the players' public names in its `names`."""
    from judge import record

    if is_blind(game) or game.state != "resolved":
        return None
    resolution = latest_resolution(session, game)
    if resolution is None:
        return None
    names = public_names(game)
    addresses = sorted({p.address for p in game.players})
    width = len(str(len(addresses)))
    stand_in = {a: f"player{k:0{width}d}@players.invalid" for k, a in enumerate(addresses, 1)}
    reveal = resolution.reveal
    if reveal and reveal.get("entropy"):
        # ENTROPY lines are hashed into the seed with their senders'
        # addresses: with stand-ins the seed would not check. The record
        # goes without the reveal (verify then checks every draw from the
        # recorded seed); the page shows the secret and commitment, and the
        # players' mailed copy checks the seed itself.
        reveal = None
    public = {stand_in[a]: names[a] for a in addresses}
    # A method naming players by names of its own (LUI: address local parts)
    # gets stand-ins for those too ("player01"): no word of an address left.
    own = _in_game(game, _method(game))
    by_address = {a.casefold(): a for a in addresses}
    taken = set(own)
    own_stand_in = {}
    for name, address in sorted(own.items()):
        k = addresses.index(by_address[address.casefold()]) + 1 if address.casefold() in by_address else len(own_stand_in) + 1
        candidate = f"player{k:0{width}d}"
        while candidate in taken:
            candidate = "_" + candidate
        own_stand_in[name] = candidate
        taken.add(candidate)
        public[candidate] = names.get(address, names.get(address.casefold(), "?"))
    sealed = record.sealed(game.name, resolution.method, rename_in_game(resolution.input, own_stand_in), reveal,
                           rename_in_game(resolution.result, own_stand_in), public)
    return rename(sealed, stand_in) | {"names": public}


def feed_entries(session: Session, game: Game | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Resolved games, newest first (one game's, or the judge's): what the
    Atom feeds publish. A blind game's entry says only that it is assigned."""
    q = (select(Resolution, Game).join(Game, Resolution.game_id == Game.id)
         .options(selectinload(Game.players)).order_by(Resolution.created_at.desc(), Resolution.id.desc())
         .limit(limit))
    if game is not None:
        q = q.where(Resolution.game_id == game.id)
    out = []
    for resolution, g in session.execute(q).all():
        blind = is_blind(g)
        names = public_names(g)
        assignment = {} if blind else rename(resolution.result.get("assignment") or {}, names)
        out.append({"game": g.name, "method": g.method, "id": resolution.id, "at": resolution.created_at,
                    "blind": blind, "assignment": assignment,
                    "seed": None if blind else resolution.seed})
    return out
