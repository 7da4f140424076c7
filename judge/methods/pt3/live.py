"""Payola Tic-Tac-Toe by mail: the method's hooks, pure functions of the
game (judge.methods.api.GameView) that the game driver (judge/driver/)
calls under the game's lock and whose Outcome it stores.

- The GM's settings before START (`SET BALANCE X 58.04`, `SET X ann`,
  `SET PLACES 3`, `SET SEASON 48`, `SET ADVICE ON`) are games.params.
- `begin` (START): X is the player the GM named with SET X (or SET O's
  other), else the first to sign on; season 1 opens; both players get the
  rules and the board (text and picture), observers the notice.
- `command`: a player's BID and ADVICE, the GM's SET SEASON and SET
  ADVICE, applied to the engine at the time the judge stored the mail; a
  refusal says where, why and what to send. When a season resolves, every
  player, observer and the GM get its results (the board as text, PNG and
  BBCode); the last season's mail is the final results.
- `tick`: the driver fires the season's deadline with its own time.

games.method_state holds the engine's state (persist.py), each side's
address, the game's origin (players, balances, settings, the start: the
head of its replay file), the engine's clock (the latest time applied) and
every command the engine took, with its engine time: `log_file` is the file
`judge resolve` replays to the same state. Every command is in the audit
trail too (kind "pt3", event "command"). Words: templates/pt3/.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Mapping

from judge.methods.api import JUDGE_PARAMS, Actor, GameView, Outcome, PlayerView, Refusal, Seed, done, rejected
from judge.methods.api import format_time, template_words
from judge.methods.pt3 import engine
from judge.methods.pt3.commands import Pt3SyntaxError, claims, parse_line  # noqa: F401 (claims: the driver's)
from judge.methods.pt3.engine import GM, SIDES, State, money, square_name
from judge.methods.pt3.persist import from_json, to_json

log = logging.getLogger(__name__)

_BEFORE_START_ONLY = (engine.SetBalance, engine.SetPlaces, engine.SetSide)


# Its players take seats of their own, not a variant's powers (interface.plays_variant).
PLAYS_VARIANT = False

words, _w = template_words("pt3/words.j2")  # every reply and notice line


class Live:
    """A running game as stored."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.state: State = from_json(data["state"])
        self.address: dict[str, str] = dict(data["addresses"])  # side -> address
        self.origin: dict[str, Any] = dict(data["origin"])
        self.clock = datetime.fromisoformat(data["clock"])
        # Every command the engine took ({at, by, text}): the replay's events.
        self.log: list[dict[str, Any]] = list(data.get("log", []))

    @classmethod
    def of(cls, game: GameView) -> Live:
        return cls(game.method_state)

    def save(self, out: Outcome) -> Outcome:
        """The state and the season's deadline, into the outcome the driver stores."""
        out.method_state = {"state": to_json(self.state), "addresses": self.address, "origin": self.origin,
                            "clock": self.clock.isoformat(), "log": self.log}
        out.next_tick = engine.next_tick(self.state)
        return out

    def side_of(self, address: str) -> str | None:
        key = address.casefold()
        return next((s for s, a in self.address.items() if a.casefold() == key), None)

    def money(self, value: Any) -> str:
        return money(value, self.state.places)


def _when(t: datetime | None) -> str:
    return "-" if t is None else format_time(t)


def _png(game: GameView, png: bytes | None) -> tuple[tuple[str, bytes, str], ...]:
    return ((f"{game.name}-board.png", png, "image/png"),) if png is not None else ()


# --------------------------------------------------------------------------
# The GM's settings, before START
# --------------------------------------------------------------------------

def describe(raw: Mapping[str, Any]) -> str:
    try:
        p = engine.params_from({k: v for k, v in raw.items() if k not in JUDGE_PARAMS}, 2)
    except engine.ParamError as err:
        return f"settings not usable: {err}"
    return _w("describe", p=p, x_player=p.x_player)


def _player(game: GameView, who: str) -> PlayerView | None:
    """A player of the game by address or name (case ignored)."""
    key = who.strip("<>").casefold()
    return next((p for p in game.active if key in (p.address.casefold(), p.name.casefold())), None)


def _setting(game: GameView, command: engine.Command) -> Outcome:
    raw = game.raw_params
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
            return rejected(_w("no_such_player", game=game, who=command.who))
        x = player.address
        if command.side == "O":  # SET O ann: the other player is X
            others = [p for p in game.active if p.address != player.address]
            if not others:
                return rejected(_w("no_such_player", game=game, who="X (nobody else has signed on)"))
            x = others[0].address
        raw["x_player"] = x
        what = f"X is {x}"
    try:
        params = engine.params_from(raw, 2)
        warnings = engine.check_params(2, params)
    except engine.ParamError as err:
        return rejected(str(err))
    new = game.with_params(params.as_dict())
    return done(_w("setting_done", what=what, describe=describe(new), warnings=warnings), params=new)


# --------------------------------------------------------------------------
# START
# --------------------------------------------------------------------------

def sides(game: GameView, params: engine.Params) -> dict[str, PlayerView]:
    """side -> player: the GM's SET X, else the sign-on order."""
    players = sorted(game.active, key=lambda p: (p.joined_at, p.id))
    if params.x_player:
        x = [p for p in players if p.address.casefold() == params.x_player.casefold()]
        if x:
            players = x + [p for p in players if p is not x[0]]
    return dict(zip(SIDES, players))


def begin(game: GameView, now: datetime, seed: Seed) -> Outcome:
    params = engine.params_from(game.raw_params, 2)
    by_side = sides(game, params)
    try:
        state = engine.new_game(params, (by_side["X"].name, by_side["O"].name), now)
    except (engine.GameError, KeyError) as err:
        raise Refusal(f"?{game.name} cannot start: Payola Tic-Tac-Toe takes two players") from err
    origin = {"method": engine.NAME, "players": {"X": state.names[0], "O": state.names[1]},
              "balances": {"X": params.balance_x, "O": params.balance_o}, "places": params.places,
              "season_hours": params.season_hours, "advice": params.advice, "start": now.isoformat()}
    live = Live({"state": to_json(state), "addresses": {s: p.address for s, p in by_side.items()},
                 "origin": origin, "clock": now.isoformat(), "log": []})
    # The seasons' deadlines are the engine's (games.next_tick), not the shell's.
    out = live.save(Outcome(state="bidding", deadline=None))
    out.event("pt3", event="started", x=live.address["X"], o=live.address["O"])
    view, text, png, _ = _board(game, live)
    for side, address in live.address.items():
        out.mail([address], "pt3/start.txt.j2", attachments=_png(game, png), side=side, view=view, board=text,
                 places=state.places, hours=state.season_hours, advice=state.advice, deadline=_when(state.deadline))
    out.reply = ("done", _w("started", game=game, x=f"{state.names[0]} <{live.address['X']}>",
                            o=f"{state.names[1]} <{live.address['O']}>", deadline=_when(state.deadline)))
    return out


# --------------------------------------------------------------------------
# A line of a mail
# --------------------------------------------------------------------------

def command(game: GameView, actor: Actor, number: int, line: str, at: datetime,
            scratch: dict[str, Any]) -> Outcome:
    """One of the mail's lines that PT3 claims (commands.claims), sent by
    `actor` and stored by the judge at `at`."""
    gm = actor.master
    if not actor.may_send:
        return rejected(_w("not_a_player", game=game))
    try:
        command_ = parse_line(line, number)
    except Pt3SyntaxError as err:
        return rejected(err.render())
    setting = isinstance(command_, (*_BEFORE_START_ONLY, engine.SetSeason, engine.SetAdvice))
    if setting and not gm:
        return rejected(_w("gm_sets", game=game))
    if game.state == "forming":
        return _setting(game, command_) if setting else rejected(_w("not_started", game=game))
    if game.method_state is None:
        return rejected(_w("not_started", game=game))
    if isinstance(command_, _BEFORE_START_ONLY):
        return rejected(_w("too_late_to_set", game=game))
    live = Live.of(game)
    side = GM if gm else live.side_of(actor.player.address)
    if side is None:
        return rejected(_w("not_a_player", game=game))
    when = max(at, live.clock)  # the engine's time never goes back
    before = live.state
    live.state, events = engine.apply(live.state, side, command_, when)
    live.clock = when
    live.log.append({"at": when.isoformat(), "by": side, "text": line.strip()})
    out = live.save(Outcome())
    refused = next((e for e in events if isinstance(e, engine.Rejected) and e.command is command_), None)
    out.event("pt3", event="command", by=side, text=line.strip(), engine_at=when.isoformat(),
              outcome=refused.reason if refused else "done")
    params = dict(game.params)
    for e in events:  # the GM's settings in the game: games.params too, so LIST says them
        if isinstance(e, engine.SettingChanged):
            params[e.what] = e.value
    if params != dict(game.params):
        out.params = params
    _dispatch(out, game, live, events)
    if refused is not None:
        out.reply = ("rejected", _rejection(game, live, before, refused, line))
    else:
        out.reply = ("done", _reply(game, live, side, command_, events))
    return out


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

def tick(game: GameView, now: datetime, at: datetime) -> Outcome:
    if game.method_state is None or game.state != "bidding":
        return Outcome()
    live = Live.of(game)
    until = max(now, at, live.clock)
    live.state, events = engine.tick(live.state, until)
    live.clock = until
    out = live.save(Outcome())
    _dispatch(out, game, live, events)
    fired = ", ".join(f"season {e.season.number} at {_when(e.at)}" for e in events
                      if isinstance(e, engine.SeasonResolved))
    out.log = f"{game.name}: {fired or 'nothing due'}"
    return out


def at_deadline(game: GameView, now: datetime, seed: Seed) -> Outcome:
    # Each season's deadline is the engine's (games.next_tick), not the shell's.
    return Outcome(deadline=None, log=f"{game.name}: a Payola Tic-Tac-Toe game has no game deadline once "
                                      "started (each season's deadline runs it)")


# --------------------------------------------------------------------------
# Events -> mails
# --------------------------------------------------------------------------

def _board(game: GameView, live: Live) -> tuple[dict[str, Any], str, bytes, str]:
    from judge.methods.pt3 import render

    v = render.view(live.state, game.name)
    return v, render.board_text(v), render.board_png(v), render.board_bbcode(v)


def _dispatch(out: Outcome, game: GameView, live: Live, events: tuple) -> None:
    """The events into the outcome: the seasons to the audit trail, the
    advice asked for, the season's (or the game's) results to everyone."""
    from judge.methods.pt3.replay import output

    for e in events:
        if isinstance(e, engine.SeasonResolved):
            s = e.season
            out.event("pt3", event="season", number=s.number, mark=s.mark, winner=s.winner,
                      bid=None if s.bid is None else str(s.bid), square=square_name(s.square),
                      by_deadline=s.by_deadline, engine_at=s.at.isoformat(), board=s.board,
                      balances={"X": str(s.balances[0]), "O": str(s.balances[1])})
        elif isinstance(e, engine.AdviceAsked):
            _advice(out, game, live, e.side)
    resolved = [e.season for e in events if isinstance(e, engine.SeasonResolved)]
    if not resolved:
        return
    view, text, png, bbcode = _board(game, live)
    last = resolved[-1]
    season = {"number": last.number, "mark": last.mark, "winner": last.winner, "square": square_name(last.square),
              "bid": None if last.bid is None else live.money(last.bid), "missing": list(last.missing)}
    public = [(None, o.address) for o in game.observers] + [(None, game.gm_address)]
    to = [*((side, a) for side, a in live.address.items()), *public]
    if live.state.over:
        out.event("pt3", event="over", winner=live.state.winner, board=live.state.board)
        out.state = "resolved"
        _store_record(out, game, live)
        result = output(live.state)
        result["view"] = view
        for side, address in to:
            template = "results/pt3/master.txt.j2" if address == game.gm_address else "results/pt3/player.txt.j2"
            out.mail([address], template, kind="result", attachments=_png(game, png), result=result, you=side,
                     last=season, board=text, bbcode=bbcode)
        return
    for side, address in to:
        out.mail([address], "pt3/season.txt.j2", attachments=_png(game, png), season=season, view=view, you=side,
                 board=text, bbcode=bbcode, deadline=_when(live.state.deadline))


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


def _advice(out: Outcome, game: GameView, live: Live, side: str) -> None:
    from judge.methods.pt3 import render

    a = advice_for(live.state)
    a["your_square"] = a["x_square"] if side == "X" else a["o_square"]
    out.mail([live.address[side]], "pt3/advice.txt.j2", private=True, a=a, you=side,
             view=render.view(live.state, game.name), places=live.state.places)


# --------------------------------------------------------------------------
# The log, for `judge resolve`; the record, for `judge verify`
# --------------------------------------------------------------------------

_CHECKED = ("board", "balances", "winner", "line", "seasons")


def _store_record(out: Outcome, game: GameView, live: Live) -> None:
    """The final record, as every method's: the replay file and what `judge
    resolve` makes of it, which `judge verify` re-runs (PT3 draws nothing:
    no seed). The replay runs here once and is compared with the live game:
    a difference is a bug, logged and kept in the audit trail."""
    from judge.methods.pt3.replay import output, replay

    data = log_file(game, live)
    result = replay(data)
    mine = output(live.state)
    differs = [k for k in _CHECKED if result.get(k) != mine.get(k)]
    if differs:
        log.error("?%s: the replay of the log differs from the game in %s", game.name, ", ".join(differs))
        out.event("pt3", event="record_differs", fields=differs)
    out.record = {"seed": "", "input": data, "result": result, "reveal": None}


def log_file(game: GameView, live: Live | None = None) -> dict[str, Any]:
    """The game's replay file (docs/pt3.md): its origin and every command
    the engine took, up to the engine's clock."""
    live = live or Live.of(game)
    return {**live.origin, "events": list(live.log), "until": live.clock.isoformat()}


# --------------------------------------------------------------------------
# The roster, LIST and the web page
# --------------------------------------------------------------------------

def roster_changed(game: GameView, old: PlayerView, new: PlayerView | None, at: datetime) -> Outcome:
    """REPLACE in a started game: the replacement plays the old player's
    side from now on (the engine knows sides, not addresses, so the log is
    unchanged). EJECT: the side stays, with nobody to bid for it; its
    missing bids lose each season at the deadline. The reply is what the
    GM's reply adds."""
    if game.method_state is None:
        return Outcome()  # forming: START reads the players as they are then
    live = Live.of(game)
    side = live.side_of(old.address)
    if side is None:
        return Outcome()
    out = Outcome(reply=("done", _w("roster_changed", side=side, new=None if new is None else new.address)))
    out.event("pt3", event="roster", side=side, old=old.address, new=None if new is None else new.address)
    if new is not None:
        live.address[side] = new.address
        live.save(out)
    return out


def standing_line(game: GameView, player: PlayerView) -> str:
    """What SIGNON adds once the game runs: the player's side, balance and
    sealed bid for the open season."""
    if not game.method_state or game.state != "bidding":
        return ""
    live = Live.of(game)
    side = live.side_of(player.address)
    if side is None:
        return ""
    bid = live.state.bid_of(side)
    return _w("standing", side=side, season=live.state.season, balance=live.money(live.state.balance(side)),
              bid=None if bid is None else live.money(bid.amount),
              square=None if bid is None else square_name(bid.square),
              deadline=_when(live.state.deadline))


def list_view(game: GameView) -> dict | None:
    """What LIST adds once the game has started: the board as the season
    mails show it."""
    if not game.method_state:
        return None
    from judge.methods.pt3 import render

    return {"board": render.board_text(render.view(Live.of(game).state, game.name))}


def public_board(game: GameView, names: Mapping[str, str]) -> dict | None:
    """The game's public web page: the board's text and picture, each side
    named by its player's public name (`names`: address -> name)."""
    if not game.method_state:
        return None
    from judge.methods.pt3 import render

    live = Live.of(game)
    v = render.view(live.state, game.name)
    v["names"] = {side: names.get(a, names.get(a.casefold(), "?")) for side, a in live.address.items()}
    return {"text": render.board_text(v), "png": render.board_png(v)}
