"""Lowest Unique Integer by mail: the shell's hooks (judge.methods.interface)
around the pure engine.

- `begin` (the GM's START): the engine's game is made from the game's
  settings and players, the pregame opens; every player is mailed the rules,
  the board and the pregame's end.
- `mail_line`: a line of a signed-on mail that is LUI's own (BID, /bid, BUY,
  BOARD, EC, GIVE TOL, SET BOARD MAIL; the GM's SET PRIZE and settings) is
  applied to the engine at the time the judge stored the mail; the reply
  says what came of it (a rejection names the rule and the numbers, from
  the engine's event); the events' mails are queued: the outbid player at
  once, the board to every player who did not SET BOARD MAIL OFF (once a
  mail, after its last line), the news of seats won and the end game.
- `tick`: the scheduler fires games.next_tick; the engine fires everything
  due up to now, each at its own time (a timer that ran out while the
  daemon was down fires with its own time), and the news is mailed.

The state is stored whole in games.method_state (persist.py), with the
moment the auction opens (the engine's clock 0, in UTC) and each player's
name in the game (the part of the address before the @, the whole address
where two would clash). games.next_tick is the engine's next_tick on that
clock. Every event is written to the audit trail (kind "lui") with its own
time. All words are in templates/lui/.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from judge import audit
from judge.methods.live_support import mail as _mail, may_send, template_words
from judge.methods.lui import engine
from judge.methods.lui.commands import (
    Bid,
    Buy,
    ChooseEc,
    Eject,
    GiveTol,
    LuiSyntaxError,
    SetBoardMail,
    SetPrize,
    ShowBoard,
    ReplacePlayer,
    parse_line,
)
from judge.methods.lui.engine import GM, Event, State
from judge.methods.lui.persist import from_json, to_json

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from judge.config import Config
    from judge.store.models import Game

EPSILON_HOURS = 1e-6  # a timer stored to the microsecond fires at its engine time
_OWN_WORDS = {"BID", "BUY", "BOARD", "EC", "GIVE"}
# The GM's settings (before START), each a Settings field or the game's own.
_SETTINGS = {"PRESET", "TIMER", "CHIPS", "CHIP", "GARNETS", "PRIORITY", "PLAYERS", "PRIZE", "BOARD", "EC", "GIFT",
             "GIFTS"}


words, _w = template_words("lui/words.j2")  # every reply and notice line


# --------------------------------------------------------------------------
# The stored game
# --------------------------------------------------------------------------

class Live:
    """A running game's state, its clock and names, as stored."""

    def __init__(self, game: Game) -> None:
        data = game.method_state or {}
        self.state: State = from_json(data["state"])
        self.opens_at = datetime.fromisoformat(data["opens_at"])
        self.address = dict(data["names"])  # name in the game -> address (players still in)
        # Every command the engine was given, as a replay reads it ({at,
        # player (None: the GM), text}): the input of the final record.
        self.log: list[dict[str, Any]] = list(data.get("log", []))

    def hours(self, when: datetime) -> float:
        return (when - self.opens_at).total_seconds() / 3600

    def moment(self, hours: float) -> datetime:
        return self.opens_at + timedelta(hours=hours)

    def when(self, hours: float | None) -> str:
        from judge.deadlines import format_time

        return "-" if hours is None else format_time(self.moment(hours))

    def name_of(self, address: str) -> str | None:
        key = address.casefold()
        return next((n for n, a in self.address.items() if a.casefold() == key), None)

    def resolve_name(self, written: str) -> str:
        """A name as a player wrote it (their name in the game or address,
        case ignored) -> the name in the game; unknown names stay."""
        key = written.strip("<>").casefold()
        for n, a in self.address.items():
            if key in (n.casefold(), a.casefold()):
                return n
        return written

    def save(self, game: Game) -> None:
        game.method_state = {"state": to_json(self.state), "opens_at": self.opens_at.isoformat(),
                             "names": self.address, "log": self.log}
        t = engine.next_tick(self.state)
        game.next_tick = None if t is None else self.moment(t)


def _handles(addresses: Iterable[str]) -> dict[str, str]:
    """name in the game -> address: the address's local part, or the whole
    address where two local parts clash."""
    addresses = list(addresses)
    local = [a.split("@", 1)[0].casefold() for a in addresses]
    out = {}
    for a, lp in zip(addresses, local):
        name = lp if local.count(lp) == 1 and lp else a.casefold()
        out[name] = a
    return out


# --------------------------------------------------------------------------
# START
# --------------------------------------------------------------------------

def begin(session: Session, config: Config, now: datetime, game: Game) -> str:
    from judge.commands.base import CommandRejected
    from judge.commands.eml_start import tell_observers
    from judge.games import active_players, raw_params, set_state

    params = engine.params_from(raw_params(game), len(game.powers))
    settings = params.settings()
    players = active_players(game)
    names = _handles(p.address for p in players)
    by_address = {a.casefold(): n for n, a in names.items()}

    def table(items: tuple[tuple[str, int], ...]) -> dict[str, int]:
        return {by_address[a.casefold()]: v for a, v in items if a.casefold() in by_address}

    try:
        state = engine.new_game(settings, list(names), garnets=table(params.garnets),
                                priority=table(params.priority))
    except engine.GameError as err:
        raise CommandRejected(f"?{game.name} cannot start: {err}") from err
    live = Live.__new__(Live)
    live.state, live.opens_at, live.address = state, now + timedelta(hours=settings.pregame_hours), names
    live.log = []
    set_state(session, game, "bidding", now)
    game.started_at = now
    game.deadline = None  # the engine's timers run the game (games.next_tick)
    live.save(game)
    _event(session, now, game, live, "started", players=list(names))
    text, png = _board(live)
    for name, address in names.items():
        _mail(session, config, now, game, [address], "lui/start.txt.j2", live=live, you=name, board=text,
              png=png, kind="notice")
    tell_observers(session, config, now, game)
    return _w("started", game=game, players=len(names), pregame_end=live.when(0.0),
              bids_close=live.when(-settings.pregame_hours + settings.pregame_bids_hours),
              warnings=settings.warnings())


# --------------------------------------------------------------------------
# A line of a mail
# --------------------------------------------------------------------------

def claims(line: str) -> bool:
    words_ = line.strip().lstrip("/").split()
    if not words_:
        return False
    first = words_[0].upper()
    if first in _OWN_WORDS:
        return True
    return first == "SET" and len(words_) > 1 and words_[1].upper() in _SETTINGS


def mail_line(ctx: Any, number: int, line: str) -> tuple[str, str] | None:
    if not claims(line):
        return None
    game = ctx.game
    gm = ctx.role == "master"
    if not may_send(ctx):
        return "rejected", _w("not_a_player", game=game)
    text = line.strip()
    if game.state == "forming":
        if gm and text.split()[0].upper() == "SET":
            return _setting(ctx, game, text)
        return "rejected", _w("not_started", game=game, gm=gm)
    if game.method_state is None:
        return "rejected", _w("not_running", game=game)
    try:
        command = parse_line(text, number)
    except LuiSyntaxError as err:
        if gm and text.split()[0].upper() == "SET":
            return "rejected", _w("too_late_to_set", game=game)
        return "rejected", err.render()
    live = Live(ctx.game)
    actor = GM if gm else live.name_of(ctx.player.address)
    if not gm and actor is None:
        return "rejected", _w("not_a_player", game=game)
    if isinstance(command, (ChooseEc, GiveTol)):
        command = type(command)(name=live.resolve_name(command.name), line=command.line, column=command.column)
        text = f"{'EC' if isinstance(command, ChooseEc) else 'GIVE TOL'} {command.name}"  # as the engine read it
    at = _at(ctx, live)
    live.state, events = engine.apply(live.state, actor, command, at)
    live.log.append({"at": at, "player": actor, "text": text})
    live.save(game)
    outcome = _reply(live, actor, command, events)
    _dispatch(ctx.session, ctx.config, ctx.now, game, live, events, current=command, ctx=ctx)
    return outcome


def _at(ctx: Any, live: Live) -> float:
    """The engine's time of a mail's command: when the judge stored the mail."""
    stored = ctx.inbound.received_at if getattr(ctx, "inbound", None) is not None else ctx.now
    return max(live.hours(stored), live.state.clock)


# --------------------------------------------------------------------------
# EJECT and REPLACE (the shell's commands, Method.roster_changed)
# --------------------------------------------------------------------------

def roster_changed(ctx: Any, game: Game, old: Any, new: Any) -> str:
    """The GM ejected `old` (new None) or replaced `old` by `new` in a
    started game: the engine is told, as the GM's EJECT name or REPLACE
    name newname at the time the mail was stored (logged for the replay);
    the replacement's name in the game is the part of their address before
    the @ (the whole address if another player has that name). What the
    GM's reply adds."""
    if game.method_state is None or old is None:
        return ""  # forming: START reads the players as they are then
    live = Live(game)
    name = live.name_of(old.address)
    if name is None:
        return ""
    if new is None:
        command: Any = Eject(name=name)
    else:
        local = new.address.split("@", 1)[0].casefold()
        taken = {p.name for p in live.state.players} - {name}
        command = ReplacePlayer(old=name, new=local if local and local not in taken else new.address.casefold())
    at = _at(ctx, live)
    live.state, events = engine.apply(live.state, GM, command, at)
    refused = next((e for e in events if isinstance(e, engine.Rejected) and e.command is command), None)
    if refused is None:
        text = f"EJECT {name}" if new is None else f"REPLACE {name} {command.new}"
        live.log.append({"at": at, "player": GM, "text": text})
        del live.address[name]
        if new is not None:
            live.address[command.new] = new.address
    live.save(game)
    _dispatch(ctx.session, ctx.config, ctx.now, game, live, events, current=command, ctx=ctx)
    if refused is not None:
        return _w("roster_refused", e=refused)
    if new is None:
        (e,) = [e for e in events if isinstance(e, engine.PlayerEjected)]
        return _w("roster_ejected", e=e, live=live)
    return _w("roster_replaced", old=name, new=command.new)


def _setting(ctx: Any, game: Game, text: str) -> tuple[str, str]:
    """The GM's settings before START: SET PRESET F8, SET TIMER 24, SET CHIPS
    20, SET CHIP PRICE 1, SET GARNETS name 2, SET PRIORITY name 3, SET
    PLAYERS 11, SET PRIZE Z 3 1."""
    from judge.games import active_players, raw_params

    w = text.split()
    key = w[1].upper()
    raw = dict(raw_params(game))
    judge_own = {k: v for k, v in game.params.items() if k not in raw}

    def number(word: str) -> int | None:
        return int(word) if word.isdigit() else None

    what: str
    if key == "PRESET" and len(w) == 3:
        raw = {k: v for k, v in raw.items() if k in ("garnets", "priority", "players")}
        raw["preset"] = w[2].upper()
        what = f"preset {w[2].upper()}"
    elif key == "TIMER" and len(w) == 3 and _positive(w[2]):
        raw["timer_hours"] = float(w[2])
        what = f"each bid's timer {w[2]} h"
    elif key == "CHIPS" and len(w) == 3 and number(w[2]):
        raw["starting_chips"] = number(w[2])
        what = f"starting chips {w[2]}"
    elif key == "CHIP" and len(w) == 4 and w[2].upper() == "PRICE" and number(w[3]):
        raw["chip_price"] = number(w[3])
        what = f"a chip costs {w[3]} garnets"
    elif key in ("EC", "GIFT", "GIFTS") and len(w) == 4 and w[2].upper() == "DEADLINE" and _positive(w[3]):
        field = "ec_hours" if key == "EC" else "gift_hours"
        raw[field] = float(w[3])
        what = (f"the winner's time to choose the EC {w[3]} h" if key == "EC" else
                f"the time for the ToL gifts {w[3]} h (then the GM is told who still owes them)")
    elif key == "PLAYERS" and len(w) == 3 and number(w[2]):
        raw["players"] = number(w[2])
        what = f"{w[2]} players"
    elif key in ("GARNETS", "PRIORITY") and len(w) == 4 and (number(w[3]) is not None or
                                                            (key == "PRIORITY" and _integer(w[3]))):
        player = _player(game, w[2], active_players(game))
        if player is None:
            return "rejected", _w("no_such_player", game=game, name=w[2])
        table = dict(raw.get(key.lower()) or {})
        table[player.address] = int(w[3])
        raw[key.lower()] = table
        what = f"{player.address}'s starting {key.lower()} {int(w[3])}"
    elif key == "PRIZE" and len(w) == 5 and number(w[3]) is not None and number(w[4]) is not None:
        prizes = dict(raw.get("prizes") or {})
        prizes[w[2].upper()] = [int(w[3]), int(w[4])]
        raw["prizes"] = prizes
        what = f"seat {w[2].upper()}'s prize {w[3]} garnets, {w[4]} priority"
    elif key == "BOARD":
        return "rejected", _w("not_started", game=game, gm=True)
    else:
        return "rejected", _w("setting_form")
    try:
        params = engine.params_from(raw, len(game.powers))
        warnings = engine.check_params(len(game.powers), params)
    except engine.ParamError as err:
        return "rejected", str(err)
    game.params = {**judge_own, **params.as_dict()}
    return "done", _w("setting_done", what=what, describe=describe(game.params), warnings=warnings)


def _positive(word: str) -> bool:
    try:
        return 0 < float(word) < 10_000
    except ValueError:
        return False


def _integer(word: str) -> bool:
    return word.lstrip("+-").isdigit()


def _player(game: Game, written: str, players: list) -> Any:
    key = written.strip("<>").casefold()
    names = _handles(p.address for p in players)
    for p in players:
        if key == p.address.casefold():
            return p
    if key in names:
        return next(p for p in players if p.address == names[key])
    return None


def describe(raw: dict[str, Any]) -> str:
    from judge.games import JUDGE_PARAMS

    try:
        params = engine.params_from({k: v for k, v in raw.items() if k not in JUDGE_PARAMS}, 0)
        s = params.settings()
    except engine.ParamError as err:
        return f"settings not usable: {err}"
    return _w("describe", p=params, s=s, board=s.board.describe())


def _reply(live: Live, actor: str | None, command: Any, events: tuple[Event, ...]) -> tuple[str, str]:
    for e in events:
        if isinstance(e, engine.Rejected) and e.command is command and e.player == actor:
            return "rejected", _w("rejected", e=e)
    for e in events:
        if isinstance(e, engine.BidPlaced) and not e.pregame and e.player == actor:
            fee = e.fee
            return "done", _w("bid_placed", e=e, ends=live.when(e.ends_at), fee=fee,
                              left=live.state.chips_left(actor))
        if isinstance(e, engine.PregameBidTaken):
            return "done", _w("pregame_bid", e=e, opens=live.when(0.0))
        if isinstance(e, engine.ChipsBought):
            return "done", _w("bought_reply", e=e)
        if isinstance(e, engine.BoardShown):
            return "done", _w("board_reply")
        if isinstance(e, engine.BoardMailSet):
            return "done", _w("board_mail_set", e=e)
        if isinstance(e, engine.PrizeSet):
            return "done", _w("prize_set", e=e)
        if isinstance(e, engine.EcDecided) and e.by != "rule":
            return "done", _w("ec_chosen", e=e)
        if isinstance(e, engine.TolGiven) and e.giver == actor:
            return "done", _w("tol_given", e=e)
    return "done", "done"


# --------------------------------------------------------------------------
# The clock
# --------------------------------------------------------------------------

def tick(session: Session, config: Config, now: datetime, game: Game, at: datetime) -> str | None:
    if game.method_state is None:
        return None
    live = Live(game)
    t = engine.next_tick(live.state)
    until = max(live.hours(now), live.state.clock)
    if t is not None and t <= live.hours(at) + EPSILON_HOURS:
        until = max(until, t)
    live.state, events = engine.tick(live.state, until)
    live.save(game)
    _dispatch(session, config, now, game, live, events, current=None, ctx=None)
    fired = ", ".join(f"{type(e).__name__} at {live.when(e.at)}" for e in events
                      if not isinstance(e, engine.BoardChanged))
    return f"{game.name}: {fired or 'nothing due'}"


# --------------------------------------------------------------------------
# Events -> the audit trail and mails
# --------------------------------------------------------------------------

def _event(session: Session, now: datetime, game: Game, live: Live, what: str, **data: Any) -> None:
    audit.record(session, now, "lui", game_id=game.id, event=what, **data)


def _record(session: Session, now: datetime, game: Game, live: Live, e: Event) -> None:
    from judge.methods.lui.replay import event_dict

    data = event_dict(e)
    data.pop("type")
    hours = data.pop("at")
    audit.record(session, now, "lui", game_id=game.id, event=type(e).__name__, hours=hours,
                 fired_at=live.moment(hours).isoformat(), **{k: v for k, v in data.items() if k != "command"})


def _dispatch(session: Session, config: Config, now: datetime, game: Game, live: Live,
              events: tuple[Event, ...], *, current: Any, ctx: Any) -> None:
    everyone = list(live.address)
    news: dict[str | None, list[str]] = {}  # name (None: the GM) -> lines

    def tell(who: Iterable[str | None], item: str) -> None:
        for n in who:
            news.setdefault(n, []).append(item)

    board_to: list[str | None] = []
    finished = False
    for e in events:
        _record(session, now, game, live, e)
        kind = type(e).__name__
        if isinstance(e, engine.Outbid):
            _mail(session, config, now, game, [live.address[e.player]], "lui/outbid.txt.j2", live=live, e=e,
                  kind="notice")
        elif isinstance(e, engine.BoardChanged):
            board_to.extend(n for n in e.recipients if n not in board_to)
        elif isinstance(e, engine.BoardShown):
            _send_board(session, config, now, game, live, [e.player], asked=True)
        elif isinstance(e, engine.ChipsBought):
            _mail(session, config, now, game, [live.address[e.player]], "lui/bought.txt.j2", live=live, e=e,
                  kind="notice", private=True)
        elif isinstance(e, engine.Rejected):
            if getattr(e, "command", None) is not current or current is None:
                tell([e.player], _w("news_rejected", e=e))  # a pregame bid judged when the auction opens
        elif isinstance(e, engine.BidPlaced):
            if e.pregame:
                tell([e.player], _w("news_pregame_placed", e=e, ends=live.when(e.ends_at)))
        elif isinstance(e, (engine.PregameBidTaken, engine.BoardMailSet, engine.PrizeSet)):
            pass  # the reply says it
        elif isinstance(e, engine.GmWarning):
            tell([GM], _w("news_warning", e=e))
        elif isinstance(e, (engine.EcOverdue, engine.GiftsOverdue)):
            tell([GM], _w("news_" + kind, e=e, live=live))
        elif isinstance(e, engine.GameOver):
            tell(everyone + [GM], _w("news_GameOver", e=e, live=live))
            if e.chooser is not None:
                tell([e.chooser], _w("news_choose_ec", e=e, live=live))
            elif len(e.ec_candidates) > 1:
                tell([GM], _w("news_gm_chooses_ec", e=e))
        elif isinstance(e, engine.GiftsDue):
            tell(everyone + [GM], _w("news_GiftsDue", e=e, live=live))
            for name, count in e.owed:
                tell([name], _w("news_give", count=count, eligible=e.eligible, live=live))
        elif isinstance(e, engine.GameFinished):
            finished = True
        else:  # AuctionOpened, SeatWon, FeeStarts, BidsCancelled, EcDecided, TolGiven
            tell(everyone + [GM], _w("news_" + kind, e=e, live=live))
    for who, items in news.items():
        to = game.gm_address if who is GM else live.address.get(who)
        if to is not None:
            _mail(session, config, now, game, [to], "lui/news.txt.j2", live=live, items=items, kind="notice")
    if board_to:
        if ctx is not None:
            # Once a mail, after its last line: two bids in a mail, one board.
            pending = ctx.__dict__.setdefault("_lui_board", [])
            if not pending:
                ctx.after.append(lambda: _send_board(session, config, now, game, Live(game), list(pending)))
            pending.extend(n for n in board_to if n not in pending)
        else:
            _send_board(session, config, now, game, live, board_to)
    if finished:
        _finish(session, config, now, game, live)


def _board(live: Live, picture: bool = True) -> tuple[str, bytes | None]:
    from judge.methods.lui import render

    view = engine.board_view(live.state)
    png = render.board_png(view, opens_at=live.opens_at) if picture else None
    return render.board_text(view, opens_at=live.opens_at), png


def public_board(game: Game, names: Mapping[str, str]) -> dict | None:
    """The board for the game's public web page (Method.public_board): the
    names in the game are address local parts, so each is shown by the
    player's public name instead (`names`: address -> name)."""
    from judge.methods.lui import render

    if not game.method_state:
        return None  # not started: no board yet
    live = Live(game)
    shown = {n: names.get(a, names.get(a.casefold(), "?")) for n, a in live.address.items()}
    view = engine.board_view(live.state)
    # The picture only when asked: the page polls the text every few seconds.
    return {"text": render.board_text(view, shown, opens_at=live.opens_at),
            "png": lambda: render.board_png(view, shown, opens_at=live.opens_at)}


def list_view(game: Game) -> dict | None:
    """What LIST adds once the game has started: the board, the same text
    table as the BOARD mail."""
    if not game.method_state:
        return None  # forming: no board yet
    text, _ = _board(Live(game), picture=False)
    return {"board": text}


def _send_board(session: Session, config: Config, now: datetime, game: Game, live: Live,
                who: list[str | None], asked: bool = False) -> None:
    text, png = _board(live)
    for n in who:
        if n is not GM and not asked and not live.state.player(n).board_mail:
            continue  # SET BOARD MAIL OFF since (a later line of the same mail)
        to = game.gm_address if n is GM else live.address[n]
        _mail(session, config, now, game, [to], "lui/board_mail.txt.j2", live=live, board=text, png=png,
              asked=asked, kind="notice")


def record(live: Live) -> dict[str, Any]:
    """The final standings as `judge resolve` gives them (replay.output),
    with the real time of the auction's opening."""
    from judge.methods.lui.replay import Replayed, output

    out = output(Replayed(live.state, (), {}, ()))
    out.pop("log")
    out["opens_at"] = live.opens_at.isoformat()
    return out


def replay_input(game: Game, live: Live) -> dict[str, Any]:
    """The game as a `judge resolve` file (issue 13's offline JSON): the
    settings and players as they were at START, and every command the
    engine was given, with its time (hours after the pregame's end)."""
    from judge.games import raw_params

    params = engine.params_from(raw_params(game), len(game.powers))
    s = live.state
    # The engine renames a replaced player everywhere; the log starts with the first names.
    back = {}
    for change in s.roster_changes:
        if change.new is not None:
            back[change.new] = back.pop(change.old, change.old)

    def first(name: str) -> str:
        return back.get(name, name)

    data: dict[str, Any] = {
        "method": engine.NAME,
        "params": {"preset": params.preset, **dict(params.changes)},
        "players": [first(p.name) for p in s.start],
        "garnets": {first(p.name): p.garnets for p in s.start},
        "priority": {first(p.name): p.priority for p in s.start},
        "prizes": {seat: list(prize) for seat, prize in params.prizes},
        "events": list(live.log),
    }
    if s.previous_priority:
        data["previous_priority"] = [{first(k): v for k, v in standing} for standing in s.previous_priority]
    return data


# What the live game and the replay of its record must agree on.
_CHECKED = ("seats", "chips", "garnets", "priority", "winner", "tol", "ec", "gifts", "history", "ejected")


def _store_record(session: Session, now: datetime, game: Game, live: Live) -> None:
    """The final record in `resolutions`, as every method's: the replay's
    input and its result, which `judge verify` re-runs. LUI draws nothing:
    its seed is empty. The replay is run here, once, and compared with the
    live game: a difference is a bug, logged and kept in the audit trail."""
    import logging

    from judge.methods.lui.replay import replay
    from judge.store.models import Resolution

    data = replay_input(game, live)
    result = replay(data)
    live_result = record(live)
    differs = [k for k in _CHECKED if result.get(k) != live_result.get(k)]
    if differs:
        logging.getLogger(__name__).error("?%s: the replay of the record differs from the game in %s",
                                          game.name, ", ".join(differs))
        _event(session, now, game, live, "record_differs", fields=differs)
    session.add(Resolution(game_id=game.id, method=engine.NAME, seed="", input=data, result=result, reveal=None,
                           created_at=now))


def _finish(session: Session, config: Config, now: datetime, game: Game, live: Live) -> None:
    from judge.games import set_state
    from judge.outbox import queue_mail
    from judge.templating import render_mail

    result = record(live)
    set_state(session, game, "resolved", now)
    game.resolved_at = now
    _store_record(session, now, game, live)
    for name, address in [*live.address.items(), (None, game.gm_address)]:
        subject, body = render_mail("results/lui/player.txt.j2", game=game, result=result, you=name,
                                    when=live.when, docs_url=config.docs_url)
        queue_mail(session, config, now, to=[address], subject=subject, body=body, kind="result", game_id=game.id)
