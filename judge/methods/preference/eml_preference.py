"""nJudge's preference commands: SET PREFERENCE list (players), and the
master's SET PREFERENCE OPTIMAL|SHORTCUT, SET PRFLIST|PRFBOTH|PRFRAND and
SET PLAYERS n."""

from __future__ import annotations

from sqlalchemy import bindparam, func, select

from judge import audit, notices
from judge.commands.base import CommandRejected, Context, handles
from judge.games import (active_players, counting_submission, find_player, game_params, notify, power_list,
                         replay_refusal, seats, standings)
from judge.methods.preference import engine as pref
from judge.methods.preference.replay import read_list
from judge.store.models import Game, Player, Submission
from judge.syntax import nodes

_OPTIONS = {"OPTIMAL": False, "SHORTCUT": True}
_MODE_NAMES = {"list": "PRFLIST", "both": "PRFBOTH", "random": "PRFRAND"}


def _preference_game(ctx: Context, game: Game) -> None:
    if game.method != pref.NAME:
        raise CommandRejected(f"?{game.name} uses the {game.method} method, not preference lists")


def _set_param(game: Game, **changes) -> None:
    game.params = {**game.params, **changes}


@handles(nodes.SetPreference)
def set_preference(ctx: Context, node: nodes.SetPreference) -> str:
    game = ctx.require_game()
    _preference_game(ctx, game)
    option = node.text.strip().upper()
    if ctx.role == "master" and option in _OPTIONS:
        ctx.require_master_in(("forming",), "the game's options can only change before it starts")
        _set_param(game, shortcut=_OPTIONS[option])
        return ("the uncontested first choices are given first, the rest by the best assignment (the seed's "
                "shortcut: it can cost total value)" if _OPTIONS[option]
                else "powers are assigned by the best total; uncontested first choices break ties (the default)")
    player = ctx.player
    if ctx.role == "master":
        player = find_player(game, ctx.sender)
        if player is None or player.status != "active" or player.address.casefold() != ctx.sender.casefold():
            raise CommandRejected(f"the master is not a player of ?{game.name}: to play as well, send "
                                  f"SIGNON ?{game.name} yourpassword before SET PREFERENCE")
    if player is None:
        ctx.require_player()
    if game.state != "forming":
        raise CommandRejected(f"?{game.name} has started: preference lists can no longer change")
    refusal = replay_refusal(counting_submission(ctx.session, game, player), ctx.sent_at)
    if refusal:
        raise CommandRejected(refusal)
    powers = power_list(game)
    start = node.text_column or node.column
    try:
        lst = read_list(node.text, powers, game_params(game), column=start)
    except pref.PreferenceError as err:
        column = err.column  # in the line, as every column of the message
        ctx.session.add(Submission(game_id=game.id, player_id=player.id, inbound_id=ctx.inbound.id,
                                   received_at=ctx.now, submitted_at=ctx.sent_at, text=node.text, valid=False,
                                   bids=None,
                                   violations=[{"rule": "preference", "message": str(err), "column": column}]))
        shown = f"SET PREFERENCE {node.text}"
        caret = " " * (len("SET PREFERENCE ") + column - start) + "^"
        raise CommandRejected(f"line {node.line}, column {column}: {err}. Your list is unchanged.\n"
                              f"    {shown}\n    {caret}") from err
    ctx.session.add(Submission(game_id=game.id, player_id=player.id, inbound_id=ctx.inbound.id,
                               received_at=ctx.now, submitted_at=ctx.sent_at, text=node.text, valid=True,
                               bids=lst.as_json(),
                               violations=[]))
    ctx.session.flush()
    _tell_master(ctx, game, player, lst)
    done = f"preference list for ?{game.name}: {describe(lst)}"
    if game_params(game).mode == "random":
        # nJudge keeps lists under PRFRAND too; say plainly that it will not count.
        done += (f". Note: ?{game.name} assigns every power at random (PRFRAND), so this list will not count "
                 "unless the master sends SET PRFLIST or SET PRFBOTH before the start")
    return done


def describe(lst: pref.Preference) -> str:
    if lst.random:
        return "* (a random power)"
    if not lst.groups:
        return "none (you do not mind which power you get)"
    parts = [g[0] if len(g) == 1 else "[" + ", ".join(g) + "]" for g in lst.groups]
    return ", then ".join(parts) + ("; any other power after these" if parts else "")


def stored_list(sub: Submission) -> pref.Preference:
    """A valid list as it was read when it came (Submission.bids): lists
    are read once and kept read (issue 29)."""
    data = sub.bids or {}
    return pref.Preference(tuple(tuple(g) for g in data.get("groups", ())), bool(data.get("random")))


_LISTS_IN = (select(func.count(func.distinct(Submission.player_id)))
             .join(Player, Player.id == Submission.player_id)
             .where(Submission.game_id == bindparam("game"), Submission.valid.is_(True), Player.status == "active"))


_JOINED = select(func.count(Player.id)).where(Player.game_id == bindparam("game"), Player.status == "active")


def _tell_master(ctx: Context, game: Game, player, lst: pref.Preference) -> None:
    """nJudge tells the master of every list as it changes: this list, and
    how many are in (what every list says: LIST, or the daily digest of SET
    NOTICES DAILY). Its cost does not grow with the number of players."""
    from judge.commands.eml_autostart import starts_by_itself

    joined = ctx.session.scalar(_JOINED, {"game": game.id})
    if joined == seats(game) and starts_by_itself(game):
        return  # the last player's list: the game starts once the mail has run, and its notice says all
    if notices.held(ctx.session, ctx.now, game):
        return
    sent = ctx.session.scalar(_LISTS_IN, {"game": game.id})
    notify(ctx.session, ctx.config, ctx.now, "gm/preference_list.txt.j2", [game.gm_address], game=game,
           player=player, list=lst, described=describe(lst), text=lst.as_text(power_list(game)), sent=sent,
           joined=joined, seats=seats(game), params=game_params(game))


def list_rows(session, game: Game) -> list[dict]:
    """Each player's row of the master's table of lists (the daily digest):
    which of four things stands: a list; SET PREFERENCE with no list (does
    not mind); only refused lists (tried, and stands as not minding until a
    valid one comes); nothing sent."""
    rows = []
    for s in standings(session, game):
        lst = stored_list(s.counting) if s.counting is not None else None
        refused = s.latest if s.latest is not None and not s.latest.valid else None
        rows.append({
            "player": s.player,
            "state": ("nothing" if s.latest is None else "refused" if lst is None
                      else "list" if lst.groups or lst.random else "indifferent"),
            "list": lst,
            # The newest list, if refused: for a player whose earlier list stands, too.
            "refusal": [v.get("message", "") for v in refused.violations] if refused else [],
        })
    return rows


@handles(nodes.SetPrefMode)
def set_mode(ctx: Context, node: nodes.SetPrefMode) -> str:
    game = ctx.require_master_in(("forming",), "the assignment mode can only change before the game starts")
    _preference_game(ctx, game)
    _set_param(game, mode=node.mode)
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id, mode=node.mode)
    return {
        "list": "PRFLIST: powers are assigned by the preference lists",
        "both": "PRFBOTH: a player may send SET PREFERENCE * for a random power, given before the lists",
        "random": "PRFRAND: every power is assigned at random",
    }[node.mode]


@handles(nodes.SetPlayers)
def set_players(ctx: Context, node: nodes.SetPlayers) -> str:
    game = ctx.require_master_in(("forming",), "the number of players can only change before the game starts")
    _preference_game(ctx, game)
    U = len(game.powers)
    if not 1 <= node.count <= U:
        raise CommandRejected(f"a game of {U} powers takes between 1 and {U} players")
    joined = len(active_players(game))
    if joined > node.count:
        raise CommandRejected(f"{joined} players have joined already")
    _set_param(game, players=None if node.count == U else node.count)
    if node.count == U:
        return f"?{game.name} takes {U} players, one power each"
    return (f"?{game.name} is a duplex game: {node.count} players share the {U} powers, "
            f"assigned in rounds until every power is taken")


def pasted_line(ctx: Context, line: str) -> bool:
    """Whether a line the master pastes after FOR (a player's forum post),
    which no command reads, is part of the player's list: a line that reads
    as a list of the game's powers (`1. France`, `France > England`)."""
    try:
        return bool(read_list(line, power_list(ctx.game), game_params(ctx.game)).groups)
    except pref.PreferenceError:
        return False


def enter_pasted(ctx: Context, lines: list[tuple[int, str]]) -> tuple[str, str]:
    """The pasted lines of a list, in order, as one SET PREFERENCE of the
    player the master named with FOR: ("done" or "rejected", the message)."""
    text = " ".join(line.strip() for _, line in lines)
    node = nodes.SetPreference(line=lines[0][0], column=1, text=text, text_column=1)
    try:
        done = set_preference(ctx, node)
    except CommandRejected as err:
        return "rejected", str(err)
    several = " (the lines in order)" if len(lines) > 1 else ""
    return "done", f"read as one list{several}, as SET PREFERENCE {text}: {done}"
