"""Payola by mail: the shell's hooks (judge.methods.interface) around the
pure phases (game.py) and accounts (ledger.py).

- `begin` (the GM's START): each player gets a power (the GM's SET POWER,
  the others drawn from the game's committed stream, in sign-on order),
  the diplomacy game and the accounts are opened, the first movement
  phase's deadline set (games.deadline), and every player is mailed their
  power, balance and the map.
- `mail_line`: a line that is Payola's (commands.claims): an offer sheet's
  line (checked at once with payola-core's bribes.check_sheet; the lines a
  mail brings replace the player's sheet when the mail ends: the last sheet
  before the deadline counts), SET ACCEPT, TRANSFER, LEDGER, a retreat or
  adjustment order (the lines of a mail replace the power's orders), the
  GM's settings before START and PROCESS.
- `at_deadline`: the phase is played (game.movement or game.adjudicate),
  its results mailed (results/payola/), the next phase's deadline set, or
  the game ends.

The state is stored whole in games.method_state: {"game": game.to_json,
"players": power -> address}. Every ledger line and every phase's record
(the `judge resolve` input of a movement phase, with its seed) is also in
the audit trail (kind "payola"), every draw under kind "draw".
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Mapping

from judge import audit
from judge.methods.live_support import may_send, template_words
from judge.methods.payola import commands as cmd
from judge.methods.payola import game as pg
from judge.methods.payola import ledger as ledgers
from judge.methods.payola.settings import ParamError, Params, params_from

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from judge.config import Config
    from judge.store.models import Game


words, _w = template_words("payola/words.j2")  # every reply line


# --------------------------------------------------------------------------
# The stored game
# --------------------------------------------------------------------------

def load(game: Game) -> tuple[pg.State, dict[str, str]]:
    data = game.method_state
    return pg.from_json(data["game"]), dict(data["players"])


def save(game: Game, state: pg.State, players: dict[str, str]) -> None:
    game.method_state = {"game": pg.to_json(state), "players": players}


def power_of(players: dict[str, str], address: str) -> str | None:
    key = address.casefold()
    return next((p for p, a in players.items() if a.casefold() == key), None)


def _params(game: Game) -> Params:
    from judge.games import raw_params

    return params_from(raw_params(game), len(game.powers))


def _ledger_audit(session: Session, now: datetime, game: Game, before: ledgers.Ledger,
                  after: ledgers.Ledger) -> None:
    """Every new ledger line in the audit trail too (`judge log GAME`)."""
    for line in after.lines[len(before.lines):]:
        # (the line's kind as "entry": the audit trail's own "kind" is "payola")
        audit.record(session, now, "payola", game_id=game.id, event="ledger", phase=line.phase, power=line.power,
                     entry=line.kind, amount=line.amount, balance=line.balance, note=line.note)


def phase_seed(session: Session, game: Game, phase: str) -> bytes:
    """A phase's seed: SHA-256 of the game's committed seed (its secret and
    the ENTROPY lines, judge.commitment) and the phase's name. Publishing it
    in the phase's record reveals nothing of the secret."""
    from judge.games import committed_seed
    from judge.rng import new_seed

    base = committed_seed(session, game)[0] if game.secret_seed else new_seed()
    return hashlib.sha256(base + b"payola " + phase.encode()).digest()


# --------------------------------------------------------------------------
# START
# --------------------------------------------------------------------------

def begin(session: Session, config: Config, now: datetime, game: Game) -> str:
    from judge.commands.base import CommandRejected
    from judge.commands.eml_start import tell_observers
    from judge.games import active_players, set_state
    from judge.rng import DrawStream

    params = _params(game)
    if not pg.playable(game.variant):
        raise CommandRejected(_w("not_playable", game=game))
    try:
        state = pg.new_game(game.variant, params.start_balance)
    except Exception as err:  # a variant the diplomacy package has no map of
        raise CommandRejected(f"?{game.name} cannot start: no Payola on variant {game.variant} ({err})") from err
    powers = pg.powers(state)
    players = sorted(active_players(game), key=lambda p: p.id)
    if len(players) != len(powers):
        raise CommandRejected(f"?{game.name} needs {len(powers)} players, one a power; it has {len(players)}")
    chosen = {a.casefold(): p for a, p in params.powers}
    assigned: dict[str, str] = {}
    for p in players:
        if p.address.casefold() in chosen:
            assigned[p.address] = chosen[p.address.casefold()]
    stream = DrawStream(phase_seed(session, game, "powers"))
    for p in players:
        if p.address not in assigned:
            left = [x for x in powers if x not in assigned.values()]
            assigned[p.address] = stream.choice(left, what="power", player=p.address)
    for d in stream.records():
        audit.record(session, now, "draw", game_id=game.id, **d)
    for p in players:
        p.power = assigned[p.address]
    by_power = {power: address for address, power in assigned.items()}
    set_state(session, game, "bidding", now)
    game.started_at = now
    game.deadline = now + timedelta(hours=params.hours("M"))
    save(game, state, by_power)
    _ledger_audit(session, now, game, ledgers.Ledger(()), state.ledger)
    audit.record(session, now, "payola", game_id=game.id, event="started", players=by_power)
    svg = _picture(state)
    for power, address in by_power.items():
        _mail(session, config, now, game, [address], "payola/start.txt.j2", svg=svg, state=state, power=power,
              balance=state.ledger.balance(power), accept=state.accept[power], letters=pg.letters(state),
              phase=pg.phase(state), units=_units_of(state, power))
    tell_observers(session, config, now, game)
    return _w("started", game=game, players=by_power, phase=pg.phase(state))


def _units_of(state: pg.State, power: str) -> list[str]:
    return [u for u, o in pg.units(state).items() if o == power]


# --------------------------------------------------------------------------
# A line of a mail
# --------------------------------------------------------------------------

def mail_line(ctx: Any, number: int, line: str) -> tuple[str, str] | None:
    if not cmd.claims(line):
        return None
    game = ctx.game
    gm = ctx.role == "master"
    if not may_send(ctx):
        return "rejected", _w("not_a_player", game=game)
    text = line.strip()
    if game.state == "forming":
        if not gm or cmd.is_unit_line(text):
            return "rejected", _w("not_started", game=game)
        try:
            command = cmd.parse_line(text, number)
        except cmd.PayolaSyntaxError as err:
            return "rejected", err.render()
        return _setting(ctx, game, command)
    if game.method_state is None or game.state != "bidding":
        return "rejected", _w("not_running", game=game)
    state, players = load(game)
    if gm:
        if cmd.is_unit_line(text) or text.split()[0].upper() != "PROCESS":
            return "rejected", _w("gm_not_a_power", game=game)
        outcome = play_phase(ctx.session, ctx.config, ctx.now, game)
        return "done", outcome
    power = power_of(players, ctx.player.address)
    if power is None:
        return "rejected", _w("not_a_player", game=game)
    ctx.reveal_to = ctx.player.address  # balances and sheets are the player's own (rules 2)
    stored = ctx.inbound.received_at if getattr(ctx, "inbound", None) is not None else ctx.now
    if cmd.is_unit_line(text) and game.deadline is not None and stored >= game.deadline:
        # Stored after the deadline, read before the scheduler played the phase.
        return "rejected", _w("too_late", phase=pg.phase(state), deadline=game.deadline)
    if cmd.is_unit_line(text) and pg.phase_type(state) == "M":
        return _sheet_line(ctx, game, state, power, number, text)
    if cmd.is_unit_line(text) and text[0] in "0123456789!":
        return "rejected", _w("offers_not_now", phase=pg.phase(state), deadline=game.deadline)
    try:
        command = cmd.parse_line(text, number)
    except cmd.PayolaSyntaxError as err:
        return "rejected", err.render()
    if isinstance(command, cmd.SetAccept):
        return _set_accept(game, state, players, power, command)
    if isinstance(command, cmd.Transfer):
        return _transfer(ctx, game, state, players, power, command)
    if isinstance(command, cmd.Ledger):
        return "done", _w("ledger", power=power, balance=state.ledger.balance(power),
                          lines=state.ledger.lines_of(power), accept=state.accept[power],
                          sheet=state.sheets.get(power), orders=state.orders.get(power), phase=pg.phase(state))
    if isinstance(command, cmd.Order):
        return _order(ctx, game, state, power, command)
    return "rejected", _w("gm_only", game=game)


def _pending(ctx: Any, game: Game, kind: str, power: str) -> list[str]:
    """The mail's lines of one kind (sheet, orders) for this game: stored
    as a whole when the mail ends, replacing what stood (the last counts)."""
    pending = ctx.__dict__.setdefault("_payola", {})
    key = (game.id, kind, power)  # FOR: the GM may enter several players' lines in one mail
    if key not in pending:
        pending[key] = []

        def store() -> None:
            state, players = load(game)
            lines = pending[key]
            if kind == "sheet":
                state = pg.with_sheet(state, power, "\n".join(lines))
            else:
                state = pg.with_orders(state, power, lines)
            save(game, state, players)
            audit.record(ctx.session, ctx.now, "payola", game_id=game.id, event=kind, power=power,
                         phase=pg.phase(state), lines=lines)

        ctx.after.append(store)
    return pending[key]


def _sheet_line(ctx: Any, game: Game, state: pg.State, power: str, number: int, text: str) -> tuple[str, str]:
    from judge.methods.payola import bribes

    try:
        check = bribes.check_sheet(variant=state.variant, units=pg.units(state), power=power, text=text)
    except bribes.PayolaInputError as err:  # a position payola-core cannot read: no bug of the sender's
        return "rejected", _w("offer_refused", reasons=[str(err)])
    if check.rejected:
        return "rejected", _w("offer_refused", reasons=[r.reason for r in check.rejected])
    lines = _pending(ctx, game, "sheet", power)
    lines.append(text)
    return "done", _w("offer_taken", count=len(lines), phase=pg.phase(state), deadline=game.deadline,
                      savings=check.savings if not check.lines else 0)


def _order(ctx: Any, game: Game, state: pg.State, power: str, command: cmd.Order) -> tuple[str, str]:
    try:
        order = pg.check_order(state, power, command.text)
    except pg.OrderError as err:
        return "rejected", str(err)
    lines = _pending(ctx, game, "orders", power)
    where = order.split()[1][:3] if order != "WAIVE" else None  # one order a province
    if order in lines or (where and any(x != "WAIVE" and x.split()[1][:3] == where for x in lines)):
        return "rejected", _w("order_twice", order=order)
    if len(lines) >= pg.needs_orders(state, power):
        return "rejected", _w("orders_enough", needed=pg.needs_orders(state, power), phase=pg.phase(state))
    lines.append(order)
    return "done", _w("order_taken", order=order, count=len(lines), phase=pg.phase(state), deadline=game.deadline)


def _set_accept(game: Game, state: pg.State, players: dict[str, str], power: str,
                command: cmd.SetAccept) -> tuple[str, str]:
    from judge.methods.payola.bribes import PayolaInputError, check_acceptance

    try:
        # payola-core's reading (DPjudge's checkAccept): initials, each once;
        # "?" appended when the list names fewer than all.
        written = check_acceptance(state.variant, power, command.letters)
    except PayolaInputError as err:
        return "rejected", _w("accept_refused", reason=str(err), letters=pg.letters(state))
    save(game, pg.with_accept(state, power, written), players)
    return "done", _w("accept_set", accept=written)


def _transfer(ctx: Any, game: Game, state: pg.State, players: dict[str, str], power: str,
              command: cmd.Transfer) -> tuple[str, str]:
    from judge.games import power_list

    target = power_list(game).lookup(command.to)
    if target is None or target.name not in state.ledger.as_dict():
        return "rejected", _w("no_such_power", written=command.to, game=game)
    try:
        new = ledgers.transfer(state.ledger, power, target.name, command.amount, pg.phase(state))
    except ledgers.LedgerError as err:
        return "rejected", _w("transfer_refused", reason=str(err))
    _ledger_audit(ctx.session, ctx.now, game, state.ledger, new)
    save(game, pg.with_ledger(state, new), players)
    if target.name in players:  # a power in civil disorder has an account but nobody to tell
        _mail(ctx.session, ctx.config, ctx.now, game, [players[target.name]], "payola/transfer.txt.j2",
              private=True, power=target.name, giver=power, amount=command.amount,
              balance=new.balance(target.name))
    return "done", _w("transfer_done", amount=command.amount, to=target.name, balance=new.balance(power))


def _setting(ctx: Any, game: Game, command: Any) -> tuple[str, str]:
    """The GM's settings before START: SET BALANCE 60, SET POWER player
    England, SET MOVEMENT|RETREAT|ADJUSTMENT HOURS n."""
    from judge.games import find_player, judge_params, power_list, raw_params

    raw = dict(raw_params(game))
    if isinstance(command, cmd.SetBalance):
        raw["start_balance"] = command.amount
        what = f"every power starts with {command.amount} AgP"
    elif isinstance(command, cmd.SetHours):
        raw[f"{command.kind}_hours"] = command.hours
        what = f"a {command.kind} phase lasts {command.hours:g} h"
    elif isinstance(command, cmd.SetPower):
        player = find_player(game, command.player)
        power = power_list(game).lookup(command.power)
        if player is None or player.status != "active":
            return "rejected", _w("no_such_player", written=command.player, game=game)
        if power is None:
            return "rejected", _w("no_such_power", written=command.power, game=game)
        table = {a: p for a, p in (raw.get("powers") or {}).items() if p != power.name}
        table[player.address] = power.name
        raw["powers"] = table
        what = f"{player.address} plays {power.name}"
    elif isinstance(command, cmd.Process):
        return "rejected", _w("not_running", game=game)
    else:
        return "rejected", _w("not_started", game=game)
    try:
        params = params_from(raw, len(game.powers))
    except ParamError as err:
        return "rejected", str(err)
    game.params = {**judge_params(game), **params.as_dict()}
    return "done", _w("setting_done", what=what, describe=describe(game.params))


def describe(raw: dict[str, Any]) -> str:
    from judge.games import JUDGE_PARAMS

    try:
        p = params_from({k: v for k, v in raw.items() if k not in JUDGE_PARAMS}, 0)
    except ParamError as err:
        return f"settings not usable: {err}"
    return _w("describe", p=p)


# --------------------------------------------------------------------------
# The deadline: one phase played
# --------------------------------------------------------------------------

def play_phase(session: Session, config: Config, now: datetime, game: Game) -> str:
    """The phase that stands is played now (its deadline, or the GM's
    PROCESS); the results are mailed; the next phase's deadline is set."""
    from judge.games import observers, set_state
    from judge.rng import DrawStream

    state, players = load(game)
    played = pg.phase(state)
    if pg.phase_type(state) == "M":
        seed = phase_seed(session, game, played)
        stream = DrawStream(seed)
        new, report = pg.movement(state, stream)
        for d in stream.records():
            audit.record(session, now, "draw", game_id=game.id, phase=played, **d)
        b = report["bribes"]
        audit.record(session, now, "payola", game_id=game.id, event="movement", seed=seed.hex(),
                     input={"method": "payola", "variant": state.variant, "phase": played,
                            "units": report["owners"], "balances": b["balances_before"],
                            "acceptance": b["acceptance"], "sheets": b["sheets"],
                            "random_order": b["random_order"]},
                     orders=report["orders"], spent=b["spent"])
    else:
        new, report = pg.adjudicate(state)
        audit.record(session, now, "payola", game_id=game.id, event="phase", phase=played,
                     orders=report["orders"])
    _ledger_audit(session, now, game, state.ledger, new.ledger)
    save(game, new, players)
    svg = _picture(new)
    params = _params(game)
    reveal = None
    if report["over"]:
        set_state(session, game, "resolved", now)
        game.resolved_at = now
        game.deadline = None
        if game.secret_seed:
            # Commit and reveal (judge.commitment): the secret goes public
            # with the last results, so every phase's seed can be checked.
            from judge.games import committed_seed

            reveal = {"commitment": game.commitment, "secret": game.secret_seed,
                      "entropy": committed_seed(session, game)[1]}
            audit.record(session, now, "payola", game_id=game.id, event="reveal", **reveal)
    else:
        game.deadline = now + timedelta(hours=params.hours(pg.phase_type(new)))
    context = dict(report=report, played=played, next_phase=pg.phase(new), state=new, players=players,
                   deadline=game.deadline, svg_name=_svg_name(game, new), reveal=reveal,
                   winner=_winner(new) if report["over"] else None)
    bbcode = _render("results/payola/forum.bbcode.j2", game=game, **context)
    for power, address in players.items():
        _mail(session, config, now, game, [address], "results/payola/player.txt.j2", svg=svg, kind="result",
              private=True, power=power, lines=[x for x in new.ledger.lines_of(power)
                                                 if x.phase in (played, report["next"])], **context)
    _mail(session, config, now, game, [game.gm_address], "results/payola/master.txt.j2", svg=svg, kind="result",
          private=True, bbcode=bbcode, observer=False, **context)
    for o in observers(game):
        _mail(session, config, now, game, [o.address], "results/payola/master.txt.j2", svg=svg, kind="result",
              bbcode="", observer=True, **context)
    return _w("played", game=game, played=played, next_phase=pg.phase(new), over=report["over"],
              deadline=game.deadline)


def _winner(state: pg.State) -> str | None:
    """The power with the most centres once the engine ends the game."""
    counts = {p: len(c) for p, c in pg.centres(state).items()}
    best = max(counts.values(), default=0)
    leaders = [p for p, n in counts.items() if n == best]
    return leaders[0] if len(leaders) == 1 else None


# --------------------------------------------------------------------------
# Mails
# --------------------------------------------------------------------------

def _picture(state: pg.State) -> bytes:
    from judge.methods.payola.render import board_svg

    return board_svg(state)


def _svg_name(game: Game, state: pg.State) -> str:
    return f"{game.name}-{pg.phase(state)}.svg"


def _render(template: str, **context: Any) -> str:
    from judge.templating import render

    return render(template, **context)


def _mail(session: Session, config: Config, now: datetime, game: Game, to: list[str], template: str, *,
          kind: str = "notice", svg: bytes | None = None, private: bool = False, **context: Any) -> None:
    from judge.outbox import queue_mail
    from judge.templating import render_mail

    subject, body = render_mail(template, game=game, docs_url=config.docs_url, **context)
    attachments = [(context.get("svg_name") or f"{game.name}-board.svg", svg, "image/svg+xml")] if svg else []
    queue_mail(session, config, now, to=to, subject=subject, body=body, kind=kind, game_id=game.id,
               attachments=attachments, private=private)


def roster_changed(ctx: Any, game: Game, old: Any = None, new: Any = None) -> str:
    """REPLACE: the replacement plays the old player's power from now on
    (its account, sheet and orders as they stand). EJECT: the power is
    nobody's (civil disorder): its units get the rules' default (0 : H), an
    unordered retreat disbands, an adjustment is the engine's."""
    if game.method_state is None or old is None:
        return ""
    state, players = load(game)
    power = power_of(players, old.address)
    if power is None:
        return ""
    if new is not None:
        new.power = power
        players[power] = new.address
        told = _w("replaced", power=power, address=new.address)
    else:
        del players[power]
        told = _w("ejected", power=power)
    save(game, state, players)
    audit.record(ctx.session, ctx.now, "payola", game_id=game.id, event="roster", power=power,
                 player=players.get(power))
    return told


def not_in_yet(session: Session, game: Game) -> list[tuple[Any, dict]]:
    """The players the phase waits for: in a movement phase those with no
    sheet, else those whose units need orders they have not sent."""
    from judge.games import active_players

    if game.method_state is None:
        return []
    state, players = load(game)
    late = []
    for p in active_players(game):
        power = power_of(players, p.address)
        if power is None:
            continue
        phase = pg.phase(state)
        if pg.phase_type(state) == "M":
            if power not in state.sheets:
                late.append((p, {"phase": phase, "sheet": True}))
        else:
            given, needed = len(state.orders.get(power, [])), pg.needs_orders(state, power)
            if given < needed:
                late.append((p, {"phase": phase, "sheet": False, "given": given, "needed": needed}))
    return late


def list_view(game: Game) -> dict | None:
    """LIST of a running game: the phase, its deadline and the position
    (each power's player, centres and units; balances stay private)."""
    if game.method_state is None:
        return None
    state, players = load(game)
    # Players by their name in the game: addresses are for the GM's eyes (as LIST shows them)
    names = {p.address.casefold(): p.name for p in game.players}
    shown = {power: names.get(address.casefold(), address) for power, address in players.items()}
    return {"board": _render("payola/position.txt.j2", phase=pg.phase(state), centres=pg.centres(state),
                             units=pg.units(state), players=shown, over=pg.is_over(state)).rstrip()}


public_words, _p = template_words("payola/public.j2", "\n")  # the parts of the public web page


def public_board(game: Game, names: Mapping[str, str]) -> dict | None:
    """The game's public web page (Method.public_board): what an observer's
    results mail shows (the phase, the position, the last phase's orders
    with their results, the map), never an offer sheet, a balance or a
    ledger line while the game runs (rules 2: the accounts are private).
    When the game is over every power's ledger is published, as DPjudge
    opens its ledgers to all once a game is COMPLETED (pages/Read), with
    the winner and the revealed secret the last results mailed to all."""
    if game.method_state is None:
        return None  # forming: no board yet
    state, players = load(game)
    shown = {power: names.get(a, names.get(a.casefold(), "?")) for power, a in players.items()}
    over = pg.is_over(state)
    phase = pg.phase(state)
    sections = [{"id": "position", "title": _p("position_title", phase=phase, over=over),
                 "text": _p("position", phase=phase, kind=pg.phase_type(state), over=over,
                            centres=pg.centres(state), units=pg.units(state), players=shown)}]
    if state.reports:
        last = state.reports[-1]
        sections.append({"id": "orders", "title": _p("orders_title", report=last), "text": _p("orders", report=last)})
    if over:
        sections.append({"id": "end", "title": "The end",
                         "text": _p("the_end", winner=_winner(state), centres=pg.centres(state),
                                    secret=game.secret_seed if game.state == "resolved" else None,
                                    commitment=game.commitment)})
        sections.append({"id": "ledgers", "title": "Every power's ledger",
                         "text": _p("ledgers", ledger=state.ledger, players=shown)})
    # The map only when asked: the page polls the texts every few seconds.
    return {"text": None, "sections": sections, "svg": lambda: _picture(state)}


def standing_line(game: Game, player: Any) -> str:
    if game.method_state is None:
        return ""
    state, players = load(game)
    power = power_of(players, player.address)
    if power is None:
        return ""
    return _w("standing", power=power, balance=state.ledger.balance(power), phase=pg.phase(state),
              sheet=power in state.sheets)
