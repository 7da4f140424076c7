"""Payola by mail: the method's hooks, pure functions of the game
(judge.methods.api.GameView) around the pure phases (game.py) and accounts
(ledger.py), which the game driver (judge/driver/) calls under the game's
lock and whose Outcome it stores.

- `begin` (the GM's START): each player gets a power (the GM's SET POWER,
  the others drawn from the game's committed stream, in sign-on order),
  the diplomacy game and the accounts are opened, the first movement
  phase's deadline set (games.deadline), and every player is mailed their
  power, balance and the map.
- `command`: a line that is Payola's (commands.claims): an offer sheet's
  line (checked at once with payola-core's bribes.check_sheet; the lines a
  mail brings replace the player's sheet when the mail ends, `end_of_mail`:
  the last sheet before the deadline counts), SET ACCEPT, TRANSFER, LEDGER,
  a retreat or adjustment order (the lines of a mail replace the power's
  orders), the GM's settings before START and PROCESS.
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
from typing import Any, Mapping

from judge.methods.api import JUDGE_PARAMS, Actor, GameView, Outcome, PlayerView, Refusal, Seed, done, rejected
from judge.methods.api import render, template_words
from judge.methods.payola import commands as cmd
from judge.methods.payola import game as pg
from judge.methods.payola import ledger as ledgers
from judge.methods.payola.commands import claims  # noqa: F401 (the driver's)
from judge.methods.payola.settings import ParamError, Params, params_from, with_setting


words, _w = template_words("payola/words.j2")  # every reply line


# --------------------------------------------------------------------------
# The stored game
# --------------------------------------------------------------------------

def load(game: GameView) -> tuple[pg.State, dict[str, str]]:
    data = game.method_state
    return pg.from_json(data["game"]), dict(data["players"])


def save(out: Outcome, state: pg.State, players: dict[str, str]) -> Outcome:
    out.method_state = {"game": pg.to_json(state), "players": players}
    return out


def power_of(players: dict[str, str], address: str) -> str | None:
    key = address.casefold()
    return next((p for p, a in players.items() if a.casefold() == key), None)


def _params(game: GameView) -> Params:
    return params_from(game.raw_params, len(game.powers))


def _ledger_audit(out: Outcome, before: ledgers.Ledger, after: ledgers.Ledger) -> None:
    """Every new ledger line in the audit trail too (`judge log GAME`)."""
    for line in after.lines[len(before.lines):]:
        # (the line's kind as "entry": the audit trail's own "kind" is "payola")
        out.event("payola", event="ledger", phase=line.phase, power=line.power, entry=line.kind,
                  amount=line.amount, balance=line.balance, note=line.note)


def phase_seed(seed: Seed, phase: str) -> bytes:
    """A phase's seed: SHA-256 of the game's committed seed (its secret and
    the ENTROPY lines, judge.commitment) and the phase's name. Publishing it
    in the phase's record reveals nothing of the secret."""
    return hashlib.sha256(seed.value + b"payola " + phase.encode()).digest()


# --------------------------------------------------------------------------
# START
# --------------------------------------------------------------------------

def begin(game: GameView, now: datetime, seed: Seed) -> Outcome:
    from judge.rng import DrawStream

    params = _params(game)
    if not pg.playable(game.variant):
        raise Refusal(_w("not_playable", game=game))
    try:
        state = pg.new_game(game.variant, params.start_balance, params.rules, params.dummies)
    except Exception as err:  # a variant the diplomacy package has no map of, a dummy no power of it
        raise Refusal(f"?{game.name} cannot start: no Payola on variant {game.variant} ({err})") from err
    powers = [p for p in pg.powers(state) if p not in state.dummies]
    players = sorted(game.active, key=lambda p: p.id)
    if len(players) > len(powers):
        raise Refusal(_w("too_many_players", game=game, players=len(players), powers=len(powers),
                         dummies=state.dummies))
    chosen = {a.casefold(): p for a, p in params.powers}
    assigned: dict[str, str] = {}
    for p in players:
        if p.address.casefold() in chosen:
            assigned[p.address] = chosen[p.address.casefold()]
    stream = DrawStream(phase_seed(seed, "powers"))
    for p in players:
        if p.address not in assigned:
            left = [x for x in powers if x not in assigned.values()]
            assigned[p.address] = stream.choice(left, what="power", player=p.address)
    # A power nobody claimed is a dummy (DPjudge's civil disorder) from the start.
    for power in powers:
        if power not in assigned.values():
            state = pg.with_dummy(state, power)
    by_power = {power: address for address, power in assigned.items()}
    out = Outcome(state="bidding", deadline=now + timedelta(hours=params.hours("M")), powers=assigned)
    for d in stream.records():
        out.event("draw", **d)
    save(out, state, by_power)
    _ledger_audit(out, ledgers.Ledger(()), state.ledger)
    out.event("payola", event="started", players=by_power, rules=state.rules.as_dict(), dummies=list(state.dummies))
    svg = _picture(state)
    for power, address in by_power.items():
        _mail(out, game, [address], "payola/start.txt.j2", svg=svg, state=state, power=power,
              balance=state.ledger.balance(power), accept=state.accept[power], letters=pg.letters(state),
              phase=pg.phase(state), units=_units_of(state, power), examples=_examples(state, power))
    out.reply = ("done", _w("started", game=game, players=by_power, phase=pg.phase(state), dummies=state.dummies,
                            deadline=out.deadline,
                            rules=state.rules.describe()))
    return out


def _examples(state: pg.State, power: str) -> dict[str, Any]:
    """The start mail's examples in the power's own units and the map's
    powers (an ancmed player was shown A PAR - BUR and England)."""
    orders = state.view().get_all_possible_orders()  # location -> the orders the map allows now
    lines = []
    for k, unit in enumerate(_units_of(state, power)[:3]):
        moves = sorted(o for o in orders.get(unit.split()[1], []) if " - " in o and " S " not in o
                       and " C " not in o and " VIA" not in o)
        if k == 0 and moves:
            lines.append(f"4 : {moves[0]}")
        elif k == 1 and moves:
            lines.append(f"2 : {moves[0]} | {unit} H")
        else:
            lines.append(f"{unit} H")
    letters = pg.letters(state)
    other = next((p for p in letters if p != power), power)
    accept = letters[power] + "".join(letters[p] for p in letters if p != power)[:3] + "?"
    return {"sheet": lines, "accept": accept, "other": other}


def _units_of(state: pg.State, power: str) -> list[str]:
    return [u for u, o in pg.units(state).items() if o == power]


# --------------------------------------------------------------------------
# A line of a mail
# --------------------------------------------------------------------------

def command(game: GameView, actor: Actor, number: int, line: str, at: datetime,
            scratch: dict[str, Any]) -> Outcome:
    """One of the mail's lines that Payola claims (commands.claims), sent
    by `actor` and stored by the judge at `at`."""
    gm = actor.master
    if not actor.may_send:
        return rejected(_w("not_a_player", game=game))
    text = line.strip()
    if game.state == "forming":
        if not gm or cmd.is_unit_line(text):
            return rejected(_w("not_started", game=game))
        try:
            command_ = cmd.parse_line(text, number)
        except cmd.PayolaSyntaxError as err:
            return rejected(err.render())
        return _setting(game, command_)
    if game.method_state is None or game.state != "bidding":
        return rejected(_w("not_running", game=game))
    state, players = load(game)
    if gm:
        if cmd.is_unit_line(text) or text.split()[0].upper() != "PROCESS":
            return rejected(_w("gm_not_a_power", game=game))
        # Played now, as at the deadline: as its own job, under the game's
        # lock but outside the mail's transaction (judge.driver.jobs).
        return done(_w("process_queued", game=game, phase=pg.phase(state)), deadline=at)
    power = power_of(players, actor.player.address)
    if power is None:
        return rejected(_w("not_a_player", game=game))
    if cmd.is_unit_line(text) and game.deadline is not None and at >= game.deadline:
        # Stored after the deadline, read before the phase was played.
        return rejected(_w("too_late", phase=pg.phase(state), deadline=game.deadline), private_reply=True)
    if cmd.is_unit_line(text) and pg.phase_type(state) == "M":
        return _private(_sheet_line(game, state, power, number, text, scratch))
    if cmd.is_unit_line(text) and text[0] in "0123456789!":
        # An offer line in a retreat or adjustment phase: a sheet sent early,
        # kept for the next movement phase (DPjudge's players do this).
        return _private(_early_sheet_line(game, state, power, number, text, scratch))
    try:
        command_ = cmd.parse_line(text, number)
    except cmd.PayolaSyntaxError as err:
        return _private(rejected(err.render()))
    if actor.for_player and isinstance(command_, (cmd.SetAccept, cmd.Transfer)):
        # FOR enters a power's offer sheet and orders, never what moves its
        # money or its settings (issue 26, point 8).
        return rejected(_w("for_enters_only", game=game, line=text.split()[0].upper()
                           + (" ACCEPT" if isinstance(command_, cmd.SetAccept) else "")))
    if isinstance(command_, (cmd.SetAccept, cmd.Transfer)) and game.deadline is not None and at >= game.deadline:
        # As a late sheet (issue 26, point 10): stored after the deadline, it
        # would count in the phase already played; it is refused the same way.
        return rejected(_w("too_late", phase=pg.phase(state), deadline=game.deadline), private_reply=True)
    if isinstance(command_, cmd.SetAccept):
        return _private(_set_accept(game, state, players, power, command_))
    if isinstance(command_, cmd.Transfer):
        return _private(_transfer(game, state, players, power, command_))
    if isinstance(command_, cmd.Ledger):
        return _private(done(_w("ledger", power=power, balance=state.ledger.balance(power),
                                lines=state.ledger.lines_of(power), accept=state.accept[power],
                                sheet=state.sheets.get(power), orders=state.orders.get(power),
                                phase=pg.phase(state))))
    if isinstance(command_, cmd.Order):
        return _private(_order(game, state, power, command_, scratch))
    return _private(rejected(_w("gm_only", game=game)))


def _private(out: Outcome) -> Outcome:
    """A power's balances and sheets are its own (rules 2): the reply goes
    to the player's registered address only."""
    out.private_reply = True
    return out


def _pending(scratch: dict[str, Any], kind: str, power: str) -> list[str]:
    """The mail's lines of one kind (sheet, orders) for a power: stored as
    a whole when the mail ends (end_of_mail), replacing what stood (the last
    counts). FOR: the GM may enter several players' lines in one mail."""
    return scratch.setdefault("pending", {}).setdefault((kind, power), [])


def end_of_mail(game: GameView, scratch: dict[str, Any], at: datetime) -> Outcome | None:
    """The mail's lines stored as a whole: its sheet (or early sheet) and
    orders replace what stood, and the reply sums each sheet up in one line
    (its offers against the balance) instead of a line of words each."""
    pending = scratch.get("pending")
    if not pending or game.method_state is None:
        return None
    state, players = load(game)
    out = Outcome()
    said = []
    for (kind, power), lines in pending.items():
        if kind == "sheet":
            state = pg.with_sheet(state, power, "\n".join(lines))
            offered, savings = scratch.get("tally", {}).get(power, (0, 0))
            said.append(_w("sheet_summary", phase=pg.phase(state), lines=len(lines), offered=offered,
                           savings=savings, balance=state.ledger.balance(power)))
        elif kind == "early":
            state = pg.with_early_sheet(state, power, "\n".join(lines))
            said.append(_w("early_summary", lines=len(lines), phase=pg.phase(state)))
        else:
            state = pg.with_orders(state, power, lines)
        out.event("payola", event=kind, power=power, phase=pg.phase(state), lines=lines)
    if said:
        out.reply = ("done", "\n".join(said))
    out.private_reply = True
    return save(out, state, players)


def _sheet_line(game: GameView, state: pg.State, power: str, number: int, text: str,
                scratch: dict[str, Any]) -> Outcome:
    """An offer line of a movement phase, checked at once as payola-core
    checks a sheet (the game's rules, the power's balance for LIMIT_OFFERS,
    the dummies for PAY_DUMMIES), named by its line in the mail."""
    from judge.methods.payola import bribes

    try:
        check = bribes.check_sheet(variant=state.variant, units=pg.units(state), power=power, text=text,
                                   rules=state.rules, balance=state.ledger.balance(power), dummies=state.dummies,
                                   first_line=number)
    except bribes.PayolaInputError as err:  # a position payola-core cannot read: no bug of the sender's
        return rejected(_w("offer_refused", reasons=[str(err)]))
    if check.rejected:
        return rejected(_w("offer_refused", reasons=[r.reason for r in check.rejected]))
    lines = _pending(scratch, "sheet", power)
    lines.append(text)
    _tally(scratch, power, check)
    return done(_w("offer_taken", count=len(lines), phase=pg.phase(state), deadline=game.deadline,
                   savings=check.savings if not check.lines else 0))


def _tally(scratch: dict[str, Any], power: str, check: Any) -> None:
    """What the mail's sheet offers in all, for its one summary line."""
    offered, savings = scratch.setdefault("tally", {}).get(power, (0, 0))
    top = sum(p.repeat * p.amount for line in check.lines for p in line.pieces)  # the most it can cost
    scratch["tally"][power] = (offered + top, savings + check.savings)


def _early_sheet_line(game: GameView, state: pg.State, power: str, number: int, text: str,
                      scratch: dict[str, Any]) -> Outcome:
    """An offer line sent in a retreat or adjustment phase: what can be
    checked now is (its syntax, the rules' forms); the sheet is kept for
    the next movement phase (game.with_early_sheet) and checked against the
    position then, at that phase's deadline, as every sheet is."""
    refused = pg.check_early_sheet(state, power, text)
    if refused:
        return rejected(_w("offer_refused", reasons=[why.replace("line 1", f"line {number}", 1)
                                                     for _, why in refused]))
    lines = _pending(scratch, "early", power)
    lines.append(text)
    return done(_w("early_offer_taken", count=len(lines), phase=pg.phase(state)))


def _order(game: GameView, state: pg.State, power: str, command_: cmd.Order, scratch: dict[str, Any]) -> Outcome:
    try:
        order = pg.check_order(state, power, command_.text)
    except pg.OrderError as err:
        return rejected(str(err))
    lines = _pending(scratch, "orders", power)
    where = order.split()[1][:3] if order != "WAIVE" else None  # one order a province
    if order in lines or (where and any(x != "WAIVE" and x.split()[1][:3] == where for x in lines)):
        return rejected(_w("order_twice", order=order))
    if len(lines) >= pg.needs_orders(state, power):
        return rejected(_w("orders_enough", needed=pg.needs_orders(state, power), phase=pg.phase(state)))
    lines.append(order)
    return done(_w("order_taken", order=order, count=len(lines), phase=pg.phase(state), deadline=game.deadline))


def _set_accept(game: GameView, state: pg.State, players: dict[str, str], power: str,
                command_: cmd.SetAccept) -> Outcome:
    from judge.methods.payola.bribes import PayolaInputError, check_acceptance

    try:
        # payola-core's reading (DPjudge's checkAccept): initials, each once;
        # "?" appended when the list names fewer than all.
        written = check_acceptance(state.variant, power, command_.letters)
    except PayolaInputError as err:
        return rejected(_w("accept_refused", reason=str(err), letters=pg.letters(state)))
    return save(done(_w("accept_set", accept=written)), pg.with_accept(state, power, written), players)


def _transfer(game: GameView, state: pg.State, players: dict[str, str], power: str,
              command_: cmd.Transfer) -> Outcome:
    target = game.power_list.lookup(command_.to)
    if target is None or target.name not in state.ledger.as_dict():
        return rejected(_w("no_such_power", written=command_.to, game=game))
    try:
        new = pg.transfer(state, power, target.name, command_.amount).ledger  # NO_TRANSFER, ONE_TRANSFER...
    except ledgers.LedgerError as err:
        return rejected(_w("transfer_refused", reason=str(err)))
    out = done(_w("transfer_done", amount=command_.amount, to=target.name, balance=new.balance(power)))
    _ledger_audit(out, state.ledger, new)
    save(out, pg.with_ledger(state, new), players)
    if target.name in players:  # a power in civil disorder has an account but nobody to tell
        _mail(out, game, [players[target.name]], "payola/transfer.txt.j2", private=True, power=target.name,
              giver=power, amount=command_.amount, balance=new.balance(target.name))
    return out


def _setting(game: GameView, command_: Any) -> Outcome:
    """The GM's settings before START: SET BALANCE 60, SET POWER player
    England, SET MOVEMENT|RETREAT|ADJUSTMENT HOURS n."""
    raw = game.raw_params
    if isinstance(command_, cmd.SetBalance):
        raw["start_balance"] = command_.amount
        what = f"every power starts with {command_.amount} AgP"
    elif isinstance(command_, cmd.SetHours):
        raw[f"{command_.kind}_hours"] = command_.hours
        what = f"a {command_.kind} phase lasts {command_.hours:g} h"
    elif isinstance(command_, cmd.SetPower):
        player = game.find_player(command_.player)
        power = game.power_list.lookup(command_.power)
        if player is None or player.status != "active":
            return rejected(_w("no_such_player", written=command_.player, game=game))
        if power is None:
            return rejected(_w("no_such_power", written=command_.power, game=game))
        table = {a: p for a, p in (raw.get("powers") or {}).items() if p != power.name}
        table[player.address] = power.name
        raw["powers"] = table
        what = f"{player.address} plays {power.name}"
    elif isinstance(command_, cmd.Process):
        return rejected(_w("not_running", game=game))
    elif isinstance(command_, (cmd.SetRules, cmd.SetTax, cmd.SetCap, cmd.SetDummies)):
        try:
            raw, what = with_setting(raw, command_)
        except ParamError as err:
            return rejected(str(err))
        if isinstance(command_, cmd.SetDummies):
            known = {p["name"].casefold(): p["name"] for p in game.powers}
            unknown = [d for d in command_.powers if d.casefold() not in known]
            if unknown:
                return rejected(_w("no_such_power", written=", ".join(unknown), game=game))
    else:
        return rejected(_w("not_started", game=game))
    try:
        params = params_from(raw, len(game.powers))
    except ParamError as err:
        return rejected(str(err))
    new = game.with_params(params.as_dict())
    return done(_w("setting_done", what=what, describe=describe(new)), params=new)


def describe(raw: Mapping[str, Any]) -> str:
    try:
        p = params_from({k: v for k, v in raw.items() if k not in JUDGE_PARAMS}, 0)
    except ParamError as err:
        return f"settings not usable: {err}"
    return _w("describe", p=p)


# --------------------------------------------------------------------------
# The deadline: one phase played
# --------------------------------------------------------------------------

def at_deadline(game: GameView, now: datetime, seed: Seed) -> Outcome:
    """The phase that stands is played now (its deadline, or the GM's
    PROCESS, which moved the deadline to its mail); the results are mailed;
    the next phase's deadline is set."""
    from judge.rng import DrawStream

    state, players = load(game)
    played = pg.phase(state)
    out = Outcome()
    if pg.phase_type(state) == "M":
        phase_bytes = phase_seed(seed, played)
        stream = DrawStream(phase_bytes)
        new, report = pg.movement(state, stream)
        for d in stream.records():
            out.event("draw", phase=played, **d)
        b = report["bribes"]
        out.event("payola", event="movement", seed=phase_bytes.hex(),
                  input={"method": "payola", "variant": state.variant, "phase": played,
                         "units": report["owners"], "balances": b["balances_before"],
                         "acceptance": b["acceptance"], "sheets": b["sheets"],
                         "random_order": b["random_order"], **state.rules.as_dict(),
                         "dummies": list(state.dummies)},
                  orders=report["orders"], spent=b["spent"])
    else:
        new, report = pg.adjudicate(state)
        out.event("payola", event="phase", phase=played, orders=report["orders"])
    _ledger_audit(out, state.ledger, new.ledger)
    save(out, new, players)
    svg = _picture(new)
    params = _params(game)
    reveal = None
    if report["over"]:
        out.state, out.deadline = "resolved", None
        if game.secret:
            # Commit and reveal (judge.commitment): the secret goes public
            # with the last results, so every phase's seed can be checked.
            reveal = {"commitment": game.commitment, "secret": game.secret,
                      "entropy": [list(e) for e in seed.entropy]}
            out.event("payola", event="reveal", **reveal)
    else:
        out.deadline = now + timedelta(hours=params.hours(pg.phase_type(new)))
    context = dict(report=report, played=played, next_phase=pg.phase(new), state=new, players=players,
                   deadline=out.deadline, svg_name=_svg_name(game, new), reveal=reveal,
                   winner=_winner(new) if report["over"] else None)
    bbcode = render("results/payola/forum.bbcode.j2", game=game, **context)
    for power, address in players.items():
        _mail(out, game, [address], "results/payola/player.txt.j2", svg=svg, kind="result", private=True,
              power=power, lines=[x for x in new.ledger.lines_of(power) if x.phase in (played, report["next"])],
              **context)
    _mail(out, game, [game.gm_address], "results/payola/master.txt.j2", svg=svg, kind="result", private=True,
          bbcode=bbcode, observer=False, **context)
    for o in game.observers:
        _mail(out, game, [o.address], "results/payola/master.txt.j2", svg=svg, kind="result", bbcode="",
              observer=True, **context)
    out.log = _w("played", game=game, played=played, next_phase=pg.phase(new), over=report["over"],
                 deadline=out.deadline)
    return out


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


def _svg_name(game: GameView, state: pg.State) -> str:
    return f"{game.name}-{pg.phase(state)}.svg"


def _mail(out: Outcome, game: GameView, to: list[str], template: str, *, kind: str = "notice",
          svg: bytes | None = None, private: bool = False, **context: Any) -> None:
    attachments = ((context.get("svg_name") or f"{game.name}-board.svg", svg, "image/svg+xml"),) if svg else ()
    out.mail(to, template, kind=kind, private=private, attachments=attachments, **context)


def roster_changed(game: GameView, old: PlayerView, new: PlayerView | None, at: datetime) -> Outcome:
    """REPLACE: the replacement plays the old player's power from now on
    (its account, sheet and orders as they stand). EJECT: the power is
    nobody's (civil disorder): its units get the rules' default (0 : H), an
    unordered retreat disbands, an adjustment is the engine's."""
    if game.method_state is None:
        return Outcome()
    state, players = load(game)
    power = power_of(players, old.address)
    if power is None:
        return Outcome()
    out = Outcome()
    if new is not None:
        out.powers = {new.address: power}
        players[power] = new.address
        out.reply = ("done", _w("replaced", power=power, address=new.address))
    else:
        del players[power]
        state = pg.with_dummy(state, power)  # its sheet dropped, its acceptance list '?'
        out.reply = ("done", _w("ejected", power=power))
    save(out, state, players)
    out.event("payola", event="roster", power=power, player=players.get(power))
    return out


def not_in_yet(game: GameView) -> list[tuple[int, dict]]:
    """The players the phase waits for: in a movement phase those with no
    sheet, else those whose units need orders they have not sent."""
    if game.method_state is None:
        return []
    state, players = load(game)
    late = []
    for p in game.active:
        power = power_of(players, p.address)
        if power is None:
            continue
        phase = pg.phase(state)
        if pg.phase_type(state) == "M":
            if power not in state.sheets:
                late.append((p.id, {"phase": phase, "sheet": True}))
        else:
            given, needed = len(state.orders.get(power, [])), pg.needs_orders(state, power)
            if given < needed:
                late.append((p.id, {"phase": phase, "sheet": False, "given": given, "needed": needed}))
    return late


def list_view(game: GameView) -> dict | None:
    """LIST of a running game: the phase, its deadline and the position
    (each power's player, centres and units; balances stay private)."""
    if game.method_state is None:
        return None
    state, players = load(game)
    # Players by their name in the game: addresses are for the GM's eyes (as LIST shows them)
    names = {p.address.casefold(): p.name for p in game.players}
    shown = {power: names.get(address.casefold(), address) for power, address in players.items()}
    return {"board": render("payola/position.txt.j2", phase=pg.phase(state), centres=pg.centres(state),
                            units=pg.units(state), players=shown, over=pg.is_over(state)).rstrip()}


public_words, _p = template_words("payola/public.j2", "\n")  # the parts of the public web page


def public_board(game: GameView, names: Mapping[str, str]) -> dict | None:
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
                                    secret=game.secret if game.state == "resolved" else None,
                                    commitment=game.commitment)})
        sections.append({"id": "ledgers", "title": "Every power's ledger",
                         "text": _p("ledgers", ledger=state.ledger, players=shown)})
    # The map only when asked: the page polls the texts every few seconds.
    return {"text": None, "sections": sections, "svg": lambda: _picture(state)}


def standing_line(game: GameView, player: PlayerView) -> str:
    if game.method_state is None:
        return ""
    state, players = load(game)
    power = power_of(players, player.address)
    if power is None:
        return ""
    return _w("standing", power=power, balance=state.ledger.balance(power), phase=pg.phase(state),
              sheet=power in state.sheets)
