"""Lowest Unique Integer by mail: the method's hooks, pure functions of the
game (judge.methods.api.GameView) that the game driver (judge/driver/)
calls under the game's lock and whose Outcome it stores.

- `begin` (the GM's START): the engine's game is made from the game's
  settings and players, the pregame opens; every player is mailed the rules,
  the board and the pregame's end.
- `command`: a line of a signed-on mail that is LUI's own (BID, /bid, BUY,
  BOARD, EC, GIVE TOL, SET BOARD MAIL; the GM's SET PRIZE and settings) is
  applied to the engine at the time the judge stored the mail; the reply
  says what came of it (a rejection names the rule and the numbers, from
  the engine's event); the events' mails are queued: the outbid player at
  once, the news of seats won and the end game; the board to every player
  who did not SET BOARD MAIL OFF once the mail ends (`end_of_mail`: two
  bids in a mail, one board).
- `tick`: the driver fires games.next_tick; the engine fires everything
  due up to now, each at its own time (a timer that ran out while the
  daemon was down fires with its own time), and the news is mailed.

The state is stored whole in games.method_state (persist.py), with the
moment the auction opens (the engine's clock 0, in UTC), each player's name
in the game (the part of the address before the @, the whole address where
two would clash) and the log of every command (the replay's input).
games.next_tick is the engine's next_tick on that clock. Every event goes
to the audit trail (kind "lui") with its own time. All words are in
templates/lui/.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from judge.methods.api import JUDGE_PARAMS, Actor, GameView, Outcome, PlayerView, Refusal, Seed, done, rejected
from judge.methods.api import format_time, template_words
from judge.methods.lui import engine
from judge.methods.lui.commands import (
    Buy,
    ChooseEc,
    Eject,
    GiveTol,
    LuiSyntaxError,
    SetBoardMail,
    SetPrize,
    ReplacePlayer,
    parse_line,
    parse_setting,
)
from judge.methods.lui.engine import GM, Event, State
from judge.methods.lui.persist import Memo, from_json, to_json

EPSILON_HOURS = 1e-6  # a timer stored to the microsecond fires at its engine time
DIGEST_HOURS = 1  # SET BOARDMAIL DIGEST: the board at most once an hour
_OWN_WORDS = {"BID", "BUY", "BOARD", "EC", "GIVE"}
# The GM's settings (before START), each a Settings field or the game's own.
_SETTINGS = {"PRESET", "TIMER", "CHIPS", "CHIP", "GARNETS", "PRIORITY", "PLAYERS", "PRIZE", "BOARD", "EC", "GIFT",
             "GIFTS", "PREGAME", "QUIET", "BOARDMAIL"}


# What FOR player does not enter, and how the refusal names it.
_NOT_FOR = {Buy: "BUY", ChooseEc: "EC", SetBoardMail: "SET BOARD MAIL"}

# Its players take seats of their own, not a variant's powers (interface.plays_variant).
PLAYS_VARIANT = False

words, _w = template_words("lui/words.j2")  # every reply and notice line

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------
# The stored game
# --------------------------------------------------------------------------

class Live:
    """A running game's state, its clock and names, as stored."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        # What the state's objects were read from: save() stores again, as
        # it was, what the hook left unchanged (persist.py).
        self._memo: Memo = {}
        self.state: State = from_json(data["state"], self._memo)
        self.opens_at = datetime.fromisoformat(data["opens_at"])
        self.address = dict(data["names"])  # name in the game -> address (players still in)
        # Every command the engine was given, as a replay reads it ({at,
        # player (None: the GM), text}): the input of the final record.
        self.log: list[dict[str, Any]] = list(data.get("log", []))
        # The board digest waiting to go out (SET BOARDMAIL DIGEST): when, and
        # to whom (names whose board changed since the last one).
        digest = data.get("digest")
        self.digest_at = datetime.fromisoformat(digest["at"]) if digest else None
        self.digest_to: list[str] = list(digest["to"]) if digest else []

    @classmethod
    def of(cls, game: GameView) -> Live:
        return cls(game.method_state or {})

    def hours(self, when: datetime) -> float:
        return (when - self.opens_at).total_seconds() / 3600

    def moment(self, hours: float) -> datetime:
        return self.opens_at + timedelta(hours=hours)

    def when(self, hours: float | None) -> str:
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

    def save(self, out: Outcome) -> Outcome:
        """The state and its next tick, into the outcome the driver stores."""
        out.method_state = {"state": to_json(self.state, self._memo), "opens_at": self.opens_at.isoformat(),
                            "names": self.address, "log": self.log}
        if self.digest_at is not None:
            out.method_state["digest"] = {"at": self.digest_at.isoformat(), "to": self.digest_to}
        t = engine.next_tick(self.state)
        ticks = [x for x in (None if t is None else self.moment(t), self.digest_at) if x is not None]
        out.next_tick = min(ticks) if ticks else None
        return out


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


def _png(game: GameView, png: bytes | None) -> tuple[tuple[str, bytes, str], ...]:
    return ((f"{game.name}-board.png", png, "image/png"),) if png is not None else ()


# --------------------------------------------------------------------------
# START
# --------------------------------------------------------------------------

def begin(game: GameView, now: datetime, seed: Seed) -> Outcome:
    params = engine.params_from(game.raw_params, len(game.powers))
    settings = params.settings()
    players = game.active
    names = _handles(p.address for p in players)
    by_address = {a.casefold(): n for n, a in names.items()}

    def table(items: tuple[tuple[str, int], ...]) -> dict[str, int]:
        return {by_address[a.casefold()]: v for a, v in items if a.casefold() in by_address}

    try:
        state = engine.new_game(settings, list(names), garnets=table(params.garnets),
                                priority=table(params.priority))
    except engine.GameError as err:
        raise Refusal(f"?{game.name} cannot start: {err}") from err
    live = Live({"state": to_json(state), "opens_at": (now + timedelta(hours=settings.pregame_hours)).isoformat(),
                 "names": names, "log": []})
    # The engine's timers run the game (games.next_tick), not the shell's deadline.
    out = live.save(Outcome(state="bidding", deadline=None))
    out.event("lui", event="started", players=list(names))
    text, png = _board(live)
    for name, address in names.items():
        out.mail([address], "lui/start.txt.j2", live=live, you=name, board=text, attachments=_png(game, png))
    out.reply = ("done", _w("started", game=game, players=len(names), pregame_end=live.when(0.0),
                            bids_close=live.when(-settings.pregame_hours + settings.pregame_bids_hours),
                            warnings=settings.warnings()))
    return out


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


def command(game: GameView, actor: Actor, number: int, line: str, at: datetime,
            scratch: dict[str, Any]) -> Outcome:
    """One of the mail's lines (claims(line)), sent by `actor` and stored
    by the judge at `at`."""
    gm = actor.master
    if not actor.may_send:
        return rejected(_w("not_a_player", game=game))
    text = line.strip()
    if game.state == "forming":
        if gm and text.split()[0].upper() == "SET":
            return _setting(game, text, number)
        return rejected(_w("not_started", game=game, gm=gm))
    if game.method_state is None:
        return rejected(_w("not_running", game=game))
    try:
        command_ = parse_line(text, number)
    except LuiSyntaxError as err:
        if gm and text.split()[0].upper() == "SET":
            return rejected(_w("too_late_to_set", game=game))
        return rejected(err.render())
    if actor.for_player and type(command_) in _NOT_FOR:
        # FOR enters a player's bids and ToL gifts (docs/lui.md), never what
        # spends their garnets or changes their settings (issue 26, point 8);
        # the EC is the GM's own to choose once its deadline has passed.
        return rejected(_w("for_enters_only", game=game, line=_NOT_FOR[type(command_)]))
    live = Live.of(game)
    name = GM if gm else live.name_of(actor.player.address)
    if not gm and name is None:
        return rejected(_w("not_a_player", game=game))
    if isinstance(command_, (ChooseEc, GiveTol)):
        command_ = type(command_)(name=live.resolve_name(command_.name), line=command_.line,
                                  column=command_.column)
        text = f"{'EC' if isinstance(command_, ChooseEc) else 'GIVE TOL'} {command_.name}"  # as the engine read it
    hours = _hours(live, at)
    live.state, events = engine.apply(live.state, name, command_, hours)
    live.log.append({"at": hours, "player": name, "text": text})
    out = live.save(Outcome())
    out.reply = _reply(live, name, command_, events)
    _dispatch(out, game, live, events, current=command_, scratch=scratch)
    return out


def _hours(live: Live, at: datetime) -> float:
    """The engine's time of a command stored at `at` (it never goes back)."""
    return max(live.hours(at), live.state.clock)


def end_of_mail(game: GameView, scratch: dict[str, Any], at: datetime) -> Outcome | None:
    """The mail's lines have all run: the board, once, to those whose
    board changed (a later line may have turned their board mail off)."""
    board_to = scratch.get("board")
    if not board_to or game.method_state is None:
        return None
    out = Outcome()
    _send_board(out, game, Live.of(game), board_to)
    return out


# --------------------------------------------------------------------------
# EJECT and REPLACE (the shell's commands)
# --------------------------------------------------------------------------

def roster_changed(game: GameView, old: PlayerView, new: PlayerView | None, at: datetime) -> Outcome:
    """The GM ejected `old` (new None) or replaced `old` by `new` in a
    started game: the engine is told, as the GM's EJECT name or REPLACE
    name newname at the time the mail was stored (logged for the replay);
    the replacement's name in the game is the part of their address before
    the @ (the whole address if another player has that name). The reply
    is what the GM's reply adds."""
    if game.method_state is None:
        return Outcome()  # forming: START reads the players as they are then
    live = Live.of(game)
    name = live.name_of(old.address)
    if name is None:
        return Outcome()
    if new is None:
        command_: Any = Eject(name=name)
    else:
        local = new.address.split("@", 1)[0].casefold()
        taken = {p.name for p in live.state.players} - {name}
        command_ = ReplacePlayer(old=name, new=local if local and local not in taken else new.address.casefold())
    hours = _hours(live, at)
    live.state, events = engine.apply(live.state, GM, command_, hours)
    refused = next((e for e in events if isinstance(e, engine.Rejected) and e.command is command_), None)
    if refused is None:
        text = f"EJECT {name}" if new is None else f"REPLACE {name} {command_.new}"
        live.log.append({"at": hours, "player": GM, "text": text})
        del live.address[name]
        if new is not None:
            live.address[command_.new] = new.address
    out = live.save(Outcome())
    _dispatch(out, game, live, events, current=command_, scratch=None)
    if refused is not None:
        out.reply = ("done", _w("roster_refused", e=refused))
    elif new is None:
        (e,) = [e for e in events if isinstance(e, engine.PlayerEjected)]
        out.reply = ("done", _w("roster_ejected", e=e, live=live))
    else:
        out.reply = ("done", _w("roster_replaced", old=name, new=command_.new))
    return out


def _setting(game: GameView, text: str, number: int = 1) -> Outcome:
    """The GM's settings before START: SET PRESET F8, SET TIMER 24, SET CHIPS
    20, SET CHIP PRICE 1, SET GARNETS name 2, SET PRIORITY name 3, SET
    PLAYERS 11, SET PRIZE Z 3 1, SET EC DEADLINE 48, SET GIFT DEADLINE 72.
    Read by the settings' grammar (commands.parse_setting), so that a number
    that is no number ("²") is refused with its column instead of crashing
    int() and the mail with it."""
    w = text.split()
    if len(w) > 1 and w[1].upper() == "BOARD":
        return rejected(_w("not_started", game=game, gm=True))
    try:
        setting = parse_setting(text, number)
    except LuiSyntaxError as err:
        return rejected(f"{err.render()}\n  ({_w('setting_form')})")
    raw = dict(game.raw_params)
    what: str
    if isinstance(setting, SetPrize):
        prizes = dict(raw.get("prizes") or {})
        prizes[setting.seat] = [setting.garnets, setting.priority]
        raw["prizes"] = prizes
        what = f"seat {setting.seat}'s prize {setting.garnets} garnets, {setting.priority} priority"
    elif setting.key == "preset":
        raw = {k: v for k, v in raw.items() if k in ("garnets", "priority", "players", "prizes")}
        raw["preset"] = setting.value
        what = f"preset {setting.value}"
    elif setting.key in ("garnets", "priority"):
        if setting.key == "garnets" and int(setting.value) < 0:
            return rejected(_w("setting_form"))
        player = _player(game, setting.who or "")
        if player is None:
            return rejected(_w("no_such_player", game=game, name=setting.who))
        table = dict(raw.get(setting.key) or {})
        table[player.address] = int(setting.value)
        raw[setting.key] = table
        what = f"{player.address}'s starting {setting.key} {int(setting.value)}"
    elif setting.key == "board_mails":
        raw["board_mails"] = setting.value
        what = _w("board_mails_set", mode=setting.value)
    elif setting.key in ("pregame_hours", "quiet_hours"):
        return _duration(game, raw, setting.key, float(setting.value), text.split()[-1])
    else:
        value = setting.value
        # The old reading's bounds: hours in (0, 10000), counts at least 1
        # (and not so large that a table of them would never be filled).
        if setting.key in ("timer_hours", "ec_hours", "gift_hours") and not 0 < float(value) < 10_000:
            return rejected(_w("setting_form"))
        if setting.key in ("starting_chips", "players", "chip_price") and not 0 < int(value) <= 1_000_000:
            return rejected(_w("setting_form"))
        raw[setting.key] = value
        shown = text.split()[-1]
        what = {"timer_hours": f"each bid's timer {shown} h", "starting_chips": f"starting chips {shown}",
                "chip_price": f"a chip costs {shown} garnets", "players": f"{shown} players",
                "ec_hours": f"the winner's time to choose the EC {shown} h",
                "gift_hours": f"the time for the ToL gifts {shown} h (then the GM is told who still owes them)",
                }[setting.key]
    return _settings_stored(game, raw, what)


def _settings_stored(game: GameView, raw: dict[str, Any], what: str) -> Outcome:
    """The GM's settings `raw` checked by the engine and kept, or refused."""
    try:
        params = engine.params_from(raw, len(game.powers))
        warnings = engine.check_params(len(game.powers), params)
    except engine.ParamError as err:
        return rejected(str(err))
    new = game.with_params(params.as_dict())
    return done(_w("setting_done", what=what, describe=describe(new), warnings=warnings), params=new)


def _duration(game: GameView, raw: dict[str, Any], key: str, hours: float, written: str) -> Outcome:
    """SET PREGAME / SET QUIET: within the operator's limits (the shortest,
    [methods.lui] gm_limits, copied into the game at CREATE; at most 30
    days). A shorter pregame keeps the time between the pregame bids'
    close and the auction's opening (the seed's hour), as far as it fits."""
    try:
        params = engine.params_from(raw, len(game.powers))
    except engine.ParamError as err:
        return rejected(str(err))
    shortest = params.shortest(key)
    what = "the pregame" if key == "pregame_hours" else "the quiet period (no new valid bid: the game ends)"
    if not shortest <= hours <= engine.GM_LONGEST:
        return rejected(_w("duration_range", what=what, written=written, shortest=shortest,
                           longest=engine.GM_LONGEST))
    raw[key] = hours
    if key == "pregame_hours":
        s = params.settings()
        gap = s.pregame_hours - s.pregame_bids_hours
        raw["pregame_bids_hours"] = hours - gap if hours > gap else hours
    return _settings_stored(game, raw, f"{what} {written} ({hours:g} h)")


def _player(game: GameView, written: str) -> PlayerView | None:
    players = game.active
    key = written.strip("<>").casefold()
    names = _handles(p.address for p in players)
    for p in players:
        if key == p.address.casefold():
            return p
    if key in names:
        return next(p for p in players if p.address == names[key])
    return None


def describe(raw: Mapping[str, Any]) -> str:
    try:
        params = engine.params_from({k: v for k, v in raw.items() if k not in JUDGE_PARAMS}, 0)
        s = params.settings()
    except engine.ParamError as err:
        return f"settings not usable: {err}"
    return _w("describe", p=params, s=s, board=s.board.describe())


# An engine time in a message ("ended at 0.0456623 h", "closed at -0.015 h"):
# the engine counts hours from the auction's opening; a player reads UTC.
_ENGINE_TIME = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?) h\b")


def _shown(live: Live, e: Any) -> Any:
    """A Rejected or GmWarning with its engine times as the UTC times they
    are (the engine's own message stays as it was in the record)."""
    message = _ENGINE_TIME.sub(lambda m: live.when(float(m.group(1))), e.message)
    return replace(e, message=message)


def _reply(live: Live, actor: str | None, command_: Any, events: tuple[Event, ...]) -> tuple[str, str]:
    for e in events:
        if isinstance(e, engine.Rejected) and e.command is command_ and e.player == actor:
            return "rejected", _w("rejected", e=_shown(live, e))
    for e in events:
        if isinstance(e, engine.BidPlaced) and not e.pregame and e.player == actor:
            fee = e.fee
            return "done", _w("bid_placed", e=e, ends=live.when(e.ends_at), fee=fee,
                              left=live.state.chips_left(actor), live=live)
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

def tick(game: GameView, now: datetime, at: datetime) -> Outcome:
    if game.method_state is None:
        return Outcome()
    live = Live.of(game)
    t = engine.next_tick(live.state)
    until = max(live.hours(now), live.state.clock)
    if t is not None and t <= live.hours(at) + EPSILON_HOURS:
        until = max(until, t)
    live.state, events = engine.tick(live.state, until)
    out = live.save(Outcome())
    _dispatch(out, game, live, events, current=None, scratch=None)
    if live.digest_at is not None and live.digest_at <= max(now, at):
        to, live.digest_at, live.digest_to = live.digest_to, None, []
        _send_board(out, game, live, [n for n in to if n in live.address])
        live.save(out)
    fired = ", ".join(f"{type(e).__name__} at {live.when(e.at)}" for e in events
                      if not isinstance(e, engine.BoardChanged))
    out.log = f"{game.name}: {fired or 'nothing due'}"
    return out


# --------------------------------------------------------------------------
# Events -> the audit trail and mails
# --------------------------------------------------------------------------

def _record(out: Outcome, live: Live, e: Event) -> None:
    from judge.methods.lui.replay import event_dict

    data = event_dict(e)
    data.pop("type")
    hours = data.pop("at")
    out.event("lui", event=type(e).__name__, hours=hours, fired_at=live.moment(hours).isoformat(),
              **{k: v for k, v in data.items() if k != "command"})


def _dispatch(out: Outcome, game: GameView, live: Live, events: tuple[Event, ...], *, current: Any,
              scratch: dict[str, Any] | None) -> None:
    """The events into the outcome: each to the audit trail, and the mails
    they call for. `scratch`: a mail's (the board waits for its end), None
    for a tick."""
    everyone = list(live.address)
    news: dict[str | None, list[str]] = {}  # name (None: the GM) -> lines

    def tell(who: Iterable[str | None], item: str) -> None:
        for n in who:
            news.setdefault(n, []).append(item)

    board_to: list[str | None] = []
    finished = False
    # A pregame bid outbid by a later one in the same opening is told
    # "outbid" only, not also "your bid stands" in the same second.
    outbid = {(e.player, e.seat, e.amount) for e in events if isinstance(e, engine.Outbid)}
    warnings: list[str] = []
    for e in events:
        _record(out, live, e)
        kind = type(e).__name__
        if isinstance(e, engine.Outbid):
            out.mail([live.address[e.player]], "lui/outbid.txt.j2", live=live, e=e)
        elif isinstance(e, engine.BoardChanged):
            board_to.extend(n for n in e.recipients if n not in board_to)
        elif isinstance(e, engine.BoardShown):
            _send_board(out, game, live, [e.player], asked=True)
        elif isinstance(e, engine.ChipsBought):
            out.mail([live.address[e.player]], "lui/bought.txt.j2", private=True, live=live, e=e)
        elif isinstance(e, engine.Rejected):
            if getattr(e, "command", None) is not current or current is None:
                tell([e.player], _w("news_rejected", e=_shown(live, e)))  # a pregame bid judged when the auction opens
        elif isinstance(e, engine.BidPlaced):
            if e.pregame and (e.player, e.seat, e.amount) not in outbid:
                tell([e.player], _w("news_pregame_placed", e=e, ends=live.when(e.ends_at)))
        elif isinstance(e, (engine.PregameBidTaken, engine.BoardMailSet, engine.PrizeSet)):
            pass  # the reply says it
        elif isinstance(e, engine.GmWarning):
            warnings.append(_shown(live, e).message)
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
            for name, count in e.kept:
                # ToL nobody may receive stay with their holder: they and the GM are told.
                tell([name, GM], _w("news_kept", name=name, count=count))
        else:  # AuctionOpened, SeatWon, FeeStarts, BidsCancelled, EcDecided, TolGiven
            tell(everyone + [GM], _w("news_" + kind, e=e, live=live))
    for item in _merged(warnings):
        tell([GM], _w("news_warning", message=item))
    for who, items in news.items():
        to = game.gm_address if who is GM else live.address.get(who)
        if to is not None:
            out.mail([to], "lui/news.txt.j2", live=live, items=items)
    mode = _board_mode(game)
    if board_to and mode == "digest":
        # One board an hour at most, to those whose board changed since the last.
        moment = live.moment(max(e.at for e in events if isinstance(e, engine.BoardChanged)))
        if live.digest_at is None:
            live.digest_at = moment + timedelta(hours=DIGEST_HOURS)
        live.digest_to.extend(n for n in board_to if n not in live.digest_to)
        live.save(out)
    elif board_to and mode == "bid":
        if scratch is not None:
            # Once a mail, after its last line (end_of_mail): two bids in a mail, one board.
            pending = scratch.setdefault("board", [])
            pending.extend(n for n in board_to if n not in pending)
        else:
            _send_board(out, game, live, board_to)
    if finished:
        live.digest_at, live.digest_to = None, []  # the final standings say it all
        live.save(out)
        _finish(out, game, live)


_TIED = " are tied in priority now and in every earlier standing known"


def _merged(warnings: list[str]) -> list[str]:
    """The GM's notes of one moment, each once; the priority ties the seed
    has no rule for in one note (the engine notes each tied group as the
    order is built, a..h then b..h then c..h: eleven notes at an F11
    pregame's opening), naming the groups no other group holds."""
    ties = [tuple(w.split(_TIED)[0].split(", ")) for w in warnings if _TIED in w]
    out = list(dict.fromkeys(w for w in warnings if _TIED not in w))
    widest = [g for g in dict.fromkeys(ties) if not any(set(g) < set(o) for o in ties)]
    if widest:
        out.insert(0, _w("news_ties", groups=[", ".join(g) for g in widest]))
    return out


# The board mode of each game's settings as read (their JSON -> mode):
# every bid asks, and reading the settings (a preset, twelve prizes, each
# checked) cost as much as the rest of the bid's own work.
_MODES: dict[tuple[str, int], str] = {}
_MODES_KEPT = 256


def _board_mode(game: GameView) -> str:
    raw, seats = game.raw_params, len(game.powers)
    try:
        key: tuple[str, int] | None = (json.dumps(raw, sort_keys=True), seats)
    except (TypeError, ValueError):
        key = None  # not JSON: read every time
    mode = _MODES.get(key) if key is not None else None
    if mode is None:
        try:
            mode = engine.params_from(raw, seats).board_mode
        except engine.ParamError:
            mode = "bid"
        if key is not None:
            if len(_MODES) >= _MODES_KEPT:
                _MODES.clear()
            _MODES[key] = mode
    return mode


def _board(live: Live, picture: bool = True) -> tuple[str, bytes | None]:
    from judge.methods.lui import render

    view = engine.board_view(live.state)
    png = render.board_png(view, opens_at=live.opens_at) if picture else None
    return render.board_text(view, opens_at=live.opens_at), png


def public_board(game: GameView, names: Mapping[str, str]) -> dict | None:
    """The board for the game's public web page: the names in the game are
    address local parts, so each is shown by the player's public name
    instead (`names`: address -> name)."""
    from judge.methods.lui import render

    if not game.method_state:
        return None  # not started: no board yet
    live = Live.of(game)
    shown = {n: names.get(a, names.get(a.casefold(), "?")) for n, a in live.address.items()}
    view = engine.board_view(live.state)
    # The picture only when asked: the page polls the text every few seconds.
    return {"text": render.board_text(view, shown, opens_at=live.opens_at),
            "png": lambda: render.board_png(view, shown, opens_at=live.opens_at)}


def names_in_game(game: GameView) -> dict[str, str]:
    """name in the game -> address, for the players still in and those who
    left (the record names all of them): the web shows public names."""
    live = Live.of(game)
    out = {}
    for p in game.players:
        if p.status == "observer":
            continue
        local = p.address.split("@", 1)[0].casefold()
        for name in (local, p.address.casefold()):
            if name in {q.name for q in live.state.start} | {q.name for q in live.state.players}:
                out.setdefault(name, p.address)
    out.update(live.address)
    return out


def list_view(game: GameView) -> dict | None:
    """What LIST adds once the game has started: the board, the same text
    table as the BOARD mail."""
    if not game.method_state:
        return None  # forming: no board yet
    text, _ = _board(Live.of(game), picture=False)
    return {"board": text}


# No standing_line: SIGNON adds nothing about a LUI player (the shell's
# default), and the shell then reads no view of the game for it.


def not_in_yet(game: GameView) -> list[tuple[int, dict]] | None:
    return None


def at_deadline(game: GameView, now: datetime, seed: Seed) -> Outcome:
    # The engine's timers run a started game, not the shell's deadline.
    return Outcome(deadline=None, log=f"{game.name}: a LUI game has no deadline once started (its timers run it)")


def _send_board(out: Outcome, game: GameView, live: Live, who: list[str | None], asked: bool = False) -> None:
    text, png = _board(live)
    for n in who:
        if n is not GM and not asked and not live.state.player(n).board_mail:
            continue  # SET BOARD MAIL OFF since (a later line of the same mail)
        to = game.gm_address if n is GM else live.address[n]
        out.mail([to], "lui/board_mail.txt.j2", live=live, board=text, asked=asked, attachments=_png(game, png))


def record(live: Live) -> dict[str, Any]:
    """The final standings as `judge resolve` gives them (replay.output),
    with the real time of the auction's opening."""
    from judge.methods.lui.replay import Replayed, output

    out = output(Replayed(live.state, (), {}, ()))
    out.pop("log")
    out["opens_at"] = live.opens_at.isoformat()
    return out


def replay_input(game: GameView, live: Live) -> dict[str, Any]:
    """The game as a `judge resolve` file (issue 13's offline JSON): the
    settings and players as they were at START, and every command the
    engine was given, with its time (hours after the pregame's end)."""
    params = engine.params_from(game.raw_params, len(game.powers))
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


def _store_record(out: Outcome, game: GameView, live: Live) -> None:
    """The final record, as every method's: the replay's input and its
    result, which `judge verify` re-runs. LUI draws nothing: its seed is
    empty. The replay is run here, once, and compared with the live game:
    a difference is a bug, logged and kept in the audit trail."""
    from judge.methods.lui.replay import replay

    data = replay_input(game, live)
    result = replay(data)
    live_result = record(live)
    differs = [k for k in _CHECKED if result.get(k) != live_result.get(k)]
    if differs:
        log.error("?%s: the replay of the record differs from the game in %s", game.name, ", ".join(differs))
        out.event("lui", event="record_differs", fields=differs)
    out.record = {"seed": "", "input": data, "result": result, "reveal": None}


def _finish(out: Outcome, game: GameView, live: Live) -> None:
    result = record(live)
    out.state = "resolved"
    # The seats won, in the players' power column (the web page and LIST of
    # a finished game: "Seat Z", not "Power: -").
    won: dict[str, list[str]] = {}
    for seat, row in sorted((result.get("seats") or {}).items()):
        winner = row.get("winner") if isinstance(row, Mapping) else None
        if winner in live.address:
            won.setdefault(live.address[winner], []).append(seat)
    out.powers = {a: ", ".join(seats) for a, seats in won.items()}
    _store_record(out, game, live)
    for name, address in [*live.address.items(), (None, game.gm_address)]:
        out.mail([address], "results/lui/player.txt.j2", kind="result", result=result, you=name, when=live.when)
