"""Payola Tic-Tac-Toe by mail: the shell's hooks (judge.methods.interface)
around the pure engine.

- The GM's settings before START (`SET BALANCE X 58.04`, `SET X ann`,
  `SET PLACES 3`, `SET SEASON 48`, `SET ADVICE ON`) are games.params.
- `begin` (START): X is the player the GM named with SET X (or SET O's
  other), else the first to sign on; season 1 opens; both players get the
  rules and the board (text and picture), observers the notice.
- `mail_line`: a player's BID and ADVICE, the GM's SET SEASON and SET
  ADVICE, applied to the engine at the time the judge stored the mail; a
  refusal says where, why and what to send. When a season resolves, every
  player, observer and the GM get its results (the board as text, PNG and
  BBCode); the last season's mail is the final results.
- `tick`: the scheduler fires the season's deadline with its own time.

games.method_state holds the engine's state (persist.py), each side's
address, the game's origin (players, balances, settings, the start: the
head of its replay file) and the engine's clock (the latest time applied).
Every command the engine took is in the audit trail (kind "pt3", event
"command", with its engine time): `log_file` turns them into the file
`judge resolve` replays to the same state. Words: templates/pt3/.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from judge import audit
from judge.methods.live_support import mail as _mail, may_send, template_words
from judge.methods.pt3 import engine
from judge.methods.pt3.commands import Pt3SyntaxError, parse_line
from judge.methods.pt3.engine import GM, SIDES, State, money, square_name
from judge.methods.pt3.persist import from_json, to_json

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from judge.config import Config
    from judge.store.models import Game

_BEFORE_START_ONLY = (engine.SetBalance, engine.SetPlaces, engine.SetSide)


words, _w = template_words("pt3/words.j2")  # every reply and notice line


class Live:
    """A running game as stored."""

    def __init__(self, game: Game) -> None:
        data = game.method_state
        self.state: State = from_json(data["state"])
        self.address: dict[str, str] = dict(data["addresses"])  # side -> address
        self.origin: dict[str, Any] = dict(data["origin"])
        self.clock = datetime.fromisoformat(data["clock"])

    def save(self, game: Game) -> None:
        game.method_state = {"state": to_json(self.state), "addresses": self.address, "origin": self.origin,
                             "clock": self.clock.isoformat()}
        game.next_tick = engine.next_tick(self.state)

    def side_of(self, address: str) -> str | None:
        key = address.casefold()
        return next((s for s, a in self.address.items() if a.casefold() == key), None)

    def money(self, value: Any) -> str:
        return money(value, self.state.places)


def _when(t: datetime | None) -> str:
    from judge.deadlines import format_time

    return "-" if t is None else format_time(t)


# --------------------------------------------------------------------------
# The GM's settings, before START
# --------------------------------------------------------------------------

def describe(raw: dict[str, Any]) -> str:
    from judge.games import JUDGE_PARAMS

    try:
        p = engine.params_from({k: v for k, v in raw.items() if k not in JUDGE_PARAMS}, 2)
    except engine.ParamError as err:
        return f"settings not usable: {err}"
    return _w("describe", p=p, x_player=p.x_player)


def _player(game: Game, who: str) -> Any:
    """A player of the game by address or name (case ignored)."""
    from judge.games import active_players

    key = who.strip("<>").casefold()
    return next((p for p in active_players(game) if key in (p.address.casefold(), p.name.casefold())), None)


def _setting(ctx: Any, game: Game, command: engine.Command) -> tuple[str, str]:
    from judge.games import active_players, raw_params

    raw = dict(raw_params(game))
    judge_own = {k: v for k, v in game.params.items() if k not in raw}
    if isinstance(command, engine.SetBalance):
        raw[f"balance_{command.side.lower()}"] = command.written
        what = f"{command.side}'s starting balance {command.written}"
    elif isinstance(command, engine.SetPlaces):
        raw["places"] = command.places
        what = f"bids and balances with up to {command.places} decimal places"
    elif isinstance(command, engine.SetSeason):
        raw["season_hours"] = command.hours
        what = f"each season closes after {command.hours} h"
    elif isinstance(command, engine.SetAdvice):
        raw["advice"] = command.on
        what = f"ADVICE {'allowed' if command.on else 'not allowed'}"
    else:  # SetSide
        player = _player(game, command.who)
        if player is None:
            return "rejected", _w("no_such_player", game=game, who=command.who)
        x = player.address
        if command.side == "O":  # SET O ann: the other player is X
            others = [p for p in active_players(game) if p.address != player.address]
            if not others:
                return "rejected", _w("no_such_player", game=game, who="X (nobody else has signed on)")
            x = others[0].address
        raw["x_player"] = x
        what = f"X is {x}"
    try:
        params = engine.params_from(raw, 2)
        warnings = engine.check_params(2, params)
    except engine.ParamError as err:
        return "rejected", str(err)
    game.params = {**judge_own, **params.as_dict()}
    return "done", _w("setting_done", what=what, describe=describe(game.params), warnings=warnings)


# --------------------------------------------------------------------------
# START
# --------------------------------------------------------------------------

def sides(game: Game, params: engine.Params) -> dict[str, Any]:
    """side -> player: the GM's SET X, else the sign-on order."""
    from judge.games import active_players

    players = sorted(active_players(game), key=lambda p: (p.joined_at, p.id))
    if params.x_player:
        x = [p for p in players if p.address.casefold() == params.x_player.casefold()]
        if x:
            players = x + [p for p in players if p is not x[0]]
    return dict(zip(SIDES, players))


def begin(session: Session, config: Config, now: datetime, game: Game) -> str:
    from judge.commands.base import CommandRejected
    from judge.commands.eml_start import tell_observers
    from judge.games import raw_params, set_state

    params = engine.params_from(raw_params(game), 2)
    by_side = sides(game, params)
    try:
        state = engine.new_game(params, (by_side["X"].name, by_side["O"].name), now)
    except (engine.GameError, KeyError) as err:
        raise CommandRejected(f"?{game.name} cannot start: Payola Tic-Tac-Toe takes two players") from err
    live = Live.__new__(Live)
    live.state, live.clock = state, now
    live.address = {s: p.address for s, p in by_side.items()}
    live.origin = {"method": engine.NAME, "players": {"X": state.names[0], "O": state.names[1]},
                   "balances": {"X": params.balance_x, "O": params.balance_o}, "places": params.places,
                   "season_hours": params.season_hours, "advice": params.advice, "start": now.isoformat()}
    set_state(session, game, "bidding", now)
    game.started_at = now
    game.deadline = None  # the seasons' deadlines are the engine's (games.next_tick)
    live.save(game)
    audit.record(session, now, "pt3", game_id=game.id, event="started", x=live.address["X"], o=live.address["O"])
    view, text, png, _ = _board(game, live)
    for side, address in live.address.items():
        _mail(session, config, now, game, [address], "pt3/start.txt.j2", png=png, side=side, view=view,
              board=text, places=state.places, hours=state.season_hours, advice=state.advice,
              deadline=_when(state.deadline))
    tell_observers(session, config, now, game)
    return _w("started", game=game, x=f"{state.names[0]} <{live.address['X']}>",
              o=f"{state.names[1]} <{live.address['O']}>", deadline=_when(state.deadline))


# --------------------------------------------------------------------------
# A line of a mail
# --------------------------------------------------------------------------

def mail_line(ctx: Any, number: int, line: str) -> tuple[str, str] | None:
    # A line PT3 claims (commands.claims): Method.mail_line asks that before
    # it imports this module.
    game = ctx.game
    gm = ctx.role == "master"
    if not may_send(ctx):
        return "rejected", _w("not_a_player", game=game)
    try:
        command = parse_line(line, number)
    except Pt3SyntaxError as err:
        return "rejected", err.render()
    setting = isinstance(command, (*_BEFORE_START_ONLY, engine.SetSeason, engine.SetAdvice))
    if setting and not gm:
        return "rejected", _w("gm_sets", game=game)
    if game.state == "forming":
        return _setting(ctx, game, command) if setting else ("rejected", _w("not_started", game=game))
    if game.method_state is None:
        return "rejected", _w("not_started", game=game)
    if isinstance(command, _BEFORE_START_ONLY):
        return "rejected", _w("too_late_to_set", game=game)
    live = Live(game)
    actor = GM if gm else live.side_of(ctx.player.address)
    if actor is None:
        return "rejected", _w("not_a_player", game=game)
    stored = ctx.inbound.received_at if getattr(ctx, "inbound", None) is not None else ctx.now
    at = max(stored, live.clock)  # the engine's time never goes back
    before = live.state
    live.state, events = engine.apply(live.state, actor, command, at)
    live.clock = at
    live.save(game)
    rejected = next((e for e in events if isinstance(e, engine.Rejected) and e.command is command), None)
    audit.record(ctx.session, ctx.now, "pt3", game_id=game.id, inbound_id=ctx.inbound.id, event="command",
                 by=actor, text=line.strip(), engine_at=at.isoformat(),
                 outcome=rejected.reason if rejected else "done")
    for e in events:  # the GM's settings in the game: games.params too, so LIST says them
        if isinstance(e, engine.SettingChanged):
            game.params = {**game.params, e.what: e.value}
    _dispatch(ctx.session, ctx.config, ctx.now, game, live, events, asker=ctx.player)
    if rejected is not None:
        return "rejected", _rejection(game, live, before, rejected, line)
    return "done", _reply(game, live, actor, command, events)


def _column(line: str, token: str, default: int) -> int:
    """The 1-based column of `token` after the command's first word."""
    k = line.upper().find(token.upper(), len(line) - len(line.lstrip()) + 3)
    return k + 1 if k >= 0 else default


def _rejection(game: Game, live: Live, before: State, e: engine.Rejected, line: str) -> str:
    c = e.command
    square = square_name(c.square) if isinstance(c, engine.Bid) else ""
    # The column of what is wrong: the amount, the square, or the command.
    amount_wrong = e.reason in ("over_balance", "too_many_places", "negative", "not_amount")
    where_token = c.written if amount_wrong else ""
    if e.reason == "over_balance":
        text = _w("rejected_over_balance", e=e, money=live.money, square=square)
    elif e.reason == "occupied":
        where_token = _square_as_written(line, c.square)
        empty = [square_name(i) for i, m in enumerate(before.board) if m == "."]
        text = _w("rejected_occupied", e=e, square=square, taken_by=before.board[c.square], empty=empty)
    elif e.reason == "too_many_places":
        text = _w("rejected_too_many_places", e=e, places=e.places)
    elif e.reason in ("negative", "not_amount", "season_hours"):
        text = _w("rejected_" + e.reason, e=e)
    elif e.reason == "over":
        text = _w("rejected_over", game=game, winner=before.winner)
    else:  # advice_off, gm_only, not_gm, before_start
        text = _w("rejected_" + e.reason, game=game)
    column = _column(line, where_token, c.column) if where_token else c.column
    return _w("rejection", line=c.line, column=column, text=text)


def _square_as_written(line: str, index: int) -> str:
    for word in reversed(line.split()):
        if word.upper() == square_name(index) or word == str(index + 1):
            return word
    return square_name(index)


def _reply(game: Game, live: Live, actor: str, command: engine.Command, events: tuple) -> str:
    for e in events:
        if isinstance(e, engine.BidTaken) and e.side == actor:
            resolved = next((x.season for x in events if isinstance(x, engine.SeasonResolved)
                             and x.season.number == e.season), None)
            if resolved is not None:
                season = {"mark": resolved.mark, "square": square_name(resolved.square), "winner": resolved.winner,
                          "bid": None if resolved.bid is None else live.money(resolved.bid)}
                return _w("bid_resolved", e=e, square=square_name(e.square), money=live.money, season=season)
            other = "O" if actor == "X" else "X"
            replaced = e.replaced
            ev = {"amount": e.amount, "season": e.season, "replaced": replaced,
                  "replaced_square": square_name(replaced.square) if replaced else ""}
            return _w("bid_taken", e=ev, square=square_name(e.square), money=live.money,
                      deadline=_when(live.state.deadline), other=other, other_in=False)
        if isinstance(e, engine.AdviceAsked):
            return _w("advice_sent")
        if isinstance(e, engine.SettingChanged):
            return _w("setting_changed", e=e)
    return "done"


# --------------------------------------------------------------------------
# The clock
# --------------------------------------------------------------------------

def tick(session: Session, config: Config, now: datetime, game: Game, at: datetime) -> str | None:
    if game.method_state is None or game.state != "bidding":
        return None
    live = Live(game)
    until = max(now, at, live.clock)
    live.state, events = engine.tick(live.state, until)
    live.clock = until
    live.save(game)
    _dispatch(session, config, now, game, live, events, asker=None)
    fired = ", ".join(f"season {e.season.number} at {_when(e.at)}" for e in events
                      if isinstance(e, engine.SeasonResolved))
    return f"{game.name}: {fired or 'nothing due'}"


# --------------------------------------------------------------------------
# Events -> mails
# --------------------------------------------------------------------------

def _board(game: Game, live: Live) -> tuple[dict[str, Any], str, bytes, str]:
    from judge.methods.pt3 import render

    v = render.view(live.state, game.name)
    return v, render.board_text(v), render.board_png(v), render.board_bbcode(v)


def _dispatch(session: Session, config: Config, now: datetime, game: Game, live: Live, events: tuple,
              *, asker: Any) -> None:
    from judge.games import observers, set_state

    for e in events:
        if isinstance(e, engine.SeasonResolved):
            s = e.season
            audit.record(session, now, "pt3", game_id=game.id, event="season", number=s.number, mark=s.mark,
                         winner=s.winner, bid=None if s.bid is None else str(s.bid), square=square_name(s.square),
                         by_deadline=s.by_deadline, engine_at=s.at.isoformat(), board=s.board,
                         balances={"X": str(s.balances[0]), "O": str(s.balances[1])})
        elif isinstance(e, engine.AdviceAsked):
            _advice(session, config, now, game, live, e.side)
    resolved = [e.season for e in events if isinstance(e, engine.SeasonResolved)]
    if not resolved:
        return
    view, text, png, bbcode = _board(game, live)
    last = resolved[-1]
    season = {"number": last.number, "mark": last.mark, "winner": last.winner, "square": square_name(last.square),
              "bid": None if last.bid is None else live.money(last.bid), "missing": list(last.missing)}
    public = [(None, o.address) for o in observers(game)] + [(None, game.gm_address)]
    to = [*((side, a) for side, a in live.address.items()), *public]
    if live.state.over:
        from judge.methods.pt3.replay import output

        audit.record(session, now, "pt3", game_id=game.id, event="over", winner=live.state.winner,
                     board=live.state.board)
        set_state(session, game, "resolved", now)
        game.resolved_at = now
        _store_record(session, now, game, live)
        result = output(live.state)
        result["view"] = view
        for side, address in to:
            template = "results/pt3/master.txt.j2" if address == game.gm_address else "results/pt3/player.txt.j2"
            _mail(session, config, now, game, [address], template, png=png, kind="result", result=result,
                  you=side, last=season, board=text, bbcode=bbcode)
        return
    for side, address in to:
        _mail(session, config, now, game, [address], "pt3/season.txt.j2", png=png, season=season, view=view,
              you=side, board=text, bbcode=bbcode, deadline=_when(live.state.deadline))


def advice_for(state: State) -> dict[str, Any]:
    """What the solver says of the game as it stands (the balances after
    the last season; this season's sealed bids are not counted)."""
    from fractions import Fraction

    from judge.methods.pt3 import solver as S

    ax, ao = (Fraction(b) for b in state.balances)
    a = S.advise(state.board, ax, ao, step=Fraction(1, 10 ** state.places))
    r = a.bid_range
    out = {"b_text": S.format_fraction(a.b), "b_float": "inf" if a.b is S.INF else f"{float(a.b):.6f}",
           "winner": a.winner, "same": a.b1 == a.bN,
           "range": None if r is None else f"{r.text()} (= {float(r.lo):.4f} .. {float(r.hi):.4f})",
           "bid": None if a.bid is None else S.decimal_text(a.bid, state.places),
           "square": S.square_name(a.x_square if a.winner == "X" else a.o_square),
           "x_square": S.square_name(a.x_square), "o_square": S.square_name(a.o_square)}
    return out


def _advice(session: Session, config: Config, now: datetime, game: Game, live: Live, side: str) -> None:
    from judge.methods.pt3 import render

    a = advice_for(live.state)
    a["your_square"] = a["x_square"] if side == "X" else a["o_square"]
    _mail(session, config, now, game, [live.address[side]], "pt3/advice.txt.j2", a=a, you=side,
          view=render.view(live.state, game.name), places=live.state.places, private=True)


# --------------------------------------------------------------------------
# The log, for `judge resolve`; the record, for `judge verify`
# --------------------------------------------------------------------------

_CHECKED = ("board", "balances", "winner", "line", "seasons")


def _store_record(session: Session, now: datetime, game: Game, live: Live) -> None:
    """The final record in `resolutions`, as every method's: the replay
    file and what `judge resolve` makes of it, which `judge verify` re-runs
    (PT3 draws nothing: no seed). The replay runs here once and is compared
    with the live game: a difference is a bug, logged and kept in the audit
    trail."""
    import logging

    from judge.methods.pt3.replay import output, replay
    from judge.store.models import Resolution

    data = log_file(session, game, live)
    result = replay(data)
    mine = output(live.state)
    differs = [k for k in _CHECKED if result.get(k) != mine.get(k)]
    if differs:
        logging.getLogger(__name__).error("?%s: the replay of the log differs from the game in %s",
                                          game.name, ", ".join(differs))
        audit.record(session, now, "pt3", game_id=game.id, event="record_differs", fields=differs)
    session.add(Resolution(game_id=game.id, method=engine.NAME, seed="", input=data, result=result, reveal=None,
                           created_at=now))

def log_file(session: Session, game: Game, live: Live | None = None) -> dict[str, Any]:
    """The game's replay file (docs/pt3.md): its origin and every command
    the engine took, from the audit trail, up to the engine's clock."""
    from sqlalchemy import select

    from judge.store.models import Event

    audit.write_pending(session)
    live = live or Live(game)
    rows = session.scalars(select(Event).where(Event.game_id == game.id, Event.kind == "pt3")
                           .order_by(Event.id)).all()
    events = [{"at": r.data["engine_at"], "by": r.data["by"], "text": r.data["text"]}
              for r in rows if r.data.get("event") == "command"]
    return {**live.origin, "events": events, "until": live.clock.isoformat()}


# --------------------------------------------------------------------------
# The roster, LIST and the web page
# --------------------------------------------------------------------------

def roster_changed(ctx: Any, game: Game, old: Any, new: Any) -> str:
    """REPLACE in a started game: the replacement plays the old player's
    side from now on (the engine knows sides, not addresses, so the log is
    unchanged). EJECT: the side stays, with nobody to bid for it; its
    missing bids lose each season at the deadline. What the GM's reply adds."""
    if game.method_state is None or old is None:
        return ""  # forming: START reads the players as they are then
    live = Live(game)
    side = live.side_of(old.address)
    if side is None:
        return ""
    audit.record(ctx.session, ctx.now, "pt3", game_id=game.id, event="roster", side=side, old=old.address,
                 new=None if new is None else new.address)
    if new is not None:
        live.address[side] = new.address
        live.save(game)
    return _w("roster_changed", side=side, new=None if new is None else new.address)


def standing_line(game: Game, player: Any) -> str:
    """What SIGNON adds once the game runs: the player's side, balance and
    sealed bid for the open season."""
    if not game.method_state or game.state != "bidding":
        return ""
    live = Live(game)
    side = live.side_of(player.address)
    if side is None:
        return ""
    bid = live.state.bid_of(side)
    return _w("standing", side=side, season=live.state.season, balance=live.money(live.state.balance(side)),
              bid=None if bid is None else live.money(bid.amount),
              square=None if bid is None else square_name(bid.square),
              deadline=_when(live.state.deadline))


def list_view(game: Game) -> dict | None:
    """What LIST adds once the game has started: the board as the season
    mails show it."""
    if not game.method_state:
        return None
    from judge.methods.pt3 import render

    return {"board": render.board_text(render.view(Live(game).state, game.name))}


def public_board(game: Game, names: Mapping[str, str]) -> dict | None:
    """The game's public web page: the board's text and picture, each side
    named by its player's public name (`names`: address -> name)."""
    if not game.method_state:
        return None
    from judge.methods.pt3 import render

    live = Live(game)
    v = render.view(live.state, game.name)
    v["names"] = {side: names.get(a, names.get(a.casefold(), "?")) for side, a in live.address.items()}
    return {"text": render.board_text(v), "png": render.board_png(v)}
